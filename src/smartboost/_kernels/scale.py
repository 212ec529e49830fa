"""The importance samplers' scale: ``c`` with ``sum_i min(1, c a_i) = target``, by quickselect.

The kernels that :func:`smartboost.sampling.scale.solve_scale` chooses among: the quickselect
on the threshold ``mu = 1 / c`` (:func:`quickselect_scale`) over a branch-free three-way
partition (:func:`split_around`); the Floyd-Rivest bracket of the answer from a random sample
(:func:`scale_bracket`), one parallel pass that counts and sums the values around a bracket
(:func:`bracket_counts`) and one that collects the values inside it (:func:`collect_bracket`),
which the top-k kernels (:mod:`smartboost._kernels.topk`) share; and the radix buckets of the
solvers over several machines (:func:`radix_buckets`, :mod:`smartboost.sampling.distributed`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .draws import COMPACT_CHUNKS
from .random import uniform


@njit(cache=True, nogil=True)
def radix_buckets(values, prefix, prefix_shift, shift, counts, sums):
    """Count and sum the positive ``values`` by the bits of their float64 pattern.

    For non-negative floats the bit pattern orders like the value, so bucketing by bits is
    bucketing by value ranges. Only values whose pattern shifted right by ``prefix_shift``
    equals ``prefix`` are counted (``prefix_shift >= 64``: all), into bucket
    ``(bits >> shift) & (n_buckets - 1)`` of ``counts`` and ``sums`` (length ``n_buckets``, a
    power of two; added to, not zeroed).
    """
    bits = values.view(np.uint64)
    mask = np.uint64(counts.shape[0] - 1)
    select = prefix_shift < 64
    wanted = np.uint64(prefix)
    p_shift = np.uint64(prefix_shift if select else 0)
    b_shift = np.uint64(shift)
    for i in range(values.shape[0]):
        if values[i] > 0.0 and (not select or (bits[i] >> p_shift) == wanted):
            b = (bits[i] >> b_shift) & mask
            counts[b] += 1
            sums[b] += values[i]


@njit(cache=True, nogil=True)
def split_around(src, lo, hi, pivot, dst):
    """Partition ``src[lo:hi]`` around ``pivot`` into ``dst[lo:hi]``, without branches.

    The values above ``pivot`` go to the front, ``dst[lo:lo + n_gt]``, those below to the back,
    ``dst[hi - n_lt:hi]``: each value is written to both ends and only the matching end
    advances, so a junk write lands past the end it does not advance, never on a kept value.
    The values equal to ``pivot`` are only counted (``hi - lo - n_gt - n_lt`` of them). On
    random values a branching partition mispredicts about every other row. Adding up either
    side inside this loop makes LLVM branch again, hence :func:`ordered_sum`. Returns ``(n_gt, n_lt)``.
    """
    n_gt = 0
    n_lt = 0
    for i in range(lo, hi):
        v = src[i]
        dst[lo + n_gt] = v
        dst[hi - 1 - n_lt] = v
        n_gt += np.int64(v > pivot)
        n_lt += np.int64(v < pivot)
    return n_gt, n_lt


@njit(cache=True, nogil=True)
def ordered_sum(values, lo, hi):
    """``values[lo:hi].sum()``, in order."""
    total = 0.0
    for i in range(lo, hi):
        total += values[i]
    return total


@njit(cache=True, nogil=True)
def quickselect_scale(values, target, sure_above, sum_below, key):
    """Scale ``c`` for candidate ``values`` (all > 0; not modified) given the rows already
    known to be sure (``sure_above``) and the sum of those known to be below; the candidates
    must hold the threshold ``mu = 1 / c`` (or none may be needed)."""
    src = values.copy()  # the partition leaves only one side of each step in its buffers
    dst = np.empty_like(values)
    lo = 0
    hi = values.shape[0]
    draw = 0
    while lo < hi:
        pivot = src[lo + int(uniform(key, draw) * (hi - lo))]
        draw += 1
        n_gt, n_lt = split_around(src, lo, hi, pivot, dst)
        n_eq = hi - lo - n_gt - n_lt
        sum_lt = ordered_sum(dst, hi - n_lt, hi)
        # Candidate mu = pivot: rows >= pivot are sure, rows < pivot contribute a_i / pivot.
        if sure_above + n_gt + n_eq + (sum_below + sum_lt) / pivot > target:
            # mu must be above the pivot: everything <= pivot is below mu.
            sum_below += sum_lt + n_eq * pivot
            hi = lo + n_gt
        else:
            # mu is at most the pivot: everything >= pivot is sure.
            sure_above += n_gt + n_eq
            lo = hi - n_lt  # the rows below the pivot stay candidates
        src, dst = dst, src
    # mu lies between the sure rows and the rest: sure_above + sum_below / mu = target.
    if sum_below <= 0.0:
        return np.inf
    return (target - sure_above) / sum_below


BRACKET_SAMPLE = 16384
"""Values of the random sample that brackets an answer; the solvers bracket beyond four times as
many values."""


@njit(cache=True, nogil=True, parallel=True, fastmath={"reassoc"})
def bracket_counts(values, lo, hi):
    """Where ``values`` fall around the bracket ``[lo, hi)``, per fixed chunk of rows.

    One parallel pass that LLVM vectorises (reassociated sums: the result depends on the
    machine, not on the thread count). Returns ``counts`` (int64, shape (3, chunks)): values
    ``>= hi``, values in ``[lo, hi)`` and values ``> 0``; and ``sums`` (shape (3, chunks)): of
    the values ``< lo``, of those in ``[lo, hi)`` and of those ``>= hi``.
    """
    n = values.shape[0]
    size = (n + COMPACT_CHUNKS - 1) // COMPACT_CHUNKS
    counts = np.zeros((3, COMPACT_CHUNKS), np.int64)
    sums = np.zeros((3, COMPACT_CHUNKS))
    for c in prange(COMPACT_CHUNKS):
        above = 0
        middle = 0
        positive = 0
        below_sum = 0.0
        middle_sum = 0.0
        above_sum = 0.0
        for i in range(c * size, min(n, (c + 1) * size)):
            a = values[i]
            is_above = a >= hi
            is_below = a < lo
            in_middle = not (is_above | is_below)
            above += is_above
            middle += in_middle
            positive += a > 0.0
            below_sum += a if is_below else 0.0
            middle_sum += a if in_middle else 0.0
            above_sum += a if is_above else 0.0
        counts[0, c] = above
        counts[1, c] = middle
        counts[2, c] = positive
        sums[0, c] = below_sum
        sums[1, c] = middle_sum
        sums[2, c] = above_sum
    return counts, sums


@njit(cache=True, nogil=True, parallel=True)
def collect_bracket(values, lo, hi, chunk_counts):
    """The ``values`` in ``[lo, hi)`` in row order, given how many each chunk holds
    (``bracket_counts(values, lo, hi)[0][1]``).

    When few values are inside (under 1/128 of them: the scale solver's brackets), a branch per
    value, which predicts well. Otherwise (the rank bracket of GOSS at sample rate 0.1 holds
    about 1.7% of 1M values) branch-free: every value is written to its chunk's next free
    slot, which only a value inside the bracket takes, each chunk into its own region with one
    spare slot at its end, and a serial pass closes the gaps the spare slots leave. Where the
    two meet, the branch mispredicts about as often as the branch-free form writes in vain."""
    n = values.shape[0]
    size = (n + COMPACT_CHUNKS - 1) // COMPACT_CHUNKS
    offsets = np.zeros(COMPACT_CHUNKS + 1, np.int64)
    for c in range(COMPACT_CHUNKS):
        offsets[c + 1] = offsets[c] + chunk_counts[c]
    total = offsets[COMPACT_CHUNKS]
    if 128 * total < n:
        out = np.empty(total)
        for c in prange(COMPACT_CHUNKS):
            k = offsets[c]
            for i in range(c * size, min(n, (c + 1) * size)):
                a = values[i]
                if a >= lo and a < hi:
                    out[k] = a
                    k += 1
        return out
    out = np.empty(total + COMPACT_CHUNKS)
    for c in prange(COMPACT_CHUNKS):
        k = offsets[c] + c  # chunk c's region: its values, then a spare slot
        for i in range(c * size, min(n, (c + 1) * size)):
            a = values[i]
            out[k] = a
            k += (a >= lo) & (a < hi)
    for c in range(1, COMPACT_CHUNKS):  # each chunk's values move c slots down, in order
        for j in range(offsets[c], offsets[c + 1]):
            out[j] = out[j + c]
    return out[:total]


@njit(cache=True, nogil=True)
def random_sample(values, m, key):
    """``m`` values drawn with replacement (hash-indexed)."""
    n = values.shape[0]
    sample = np.empty(m)
    for j in range(m):
        sample[j] = values[int(uniform(key, j) * n)]
    return sample


@njit(cache=True, nogil=True)
def scale_bracket(importance, target, key):
    """Two thresholds ``(mu_lo, mu_hi)`` that hold :func:`~smartboost.sampling.scale.solve_scale`'s ``1 / c`` with high
    probability: a random sample's own thresholds (by :func:`quickselect_scale`) for a slightly
    larger and a slightly smaller target."""
    n = importance.shape[0]
    m = BRACKET_SAMPLE
    sample = random_sample(importance, m, key + np.uint64(7))
    sample = sample[sample > 0.0]
    t = target * m / n
    margin = 3.0 / np.sqrt(t) + 0.01
    return _sample_threshold(sample, t * (1.0 + margin), key), _sample_threshold(sample, t * (1.0 - margin), key)


@njit(cache=True, nogil=True)
def _sample_threshold(sample, t, key):
    """``mu = 1 / c`` of the positive ``sample`` for the target ``t`` (not modified);
    ``inf`` when no row needs to be kept (``t <= 0``)."""
    c = quickselect_scale(sample, t, np.int64(0), 0.0, key) if t > 0.0 else 0.0
    return 1.0 / c if c > 0.0 else np.inf


@njit(cache=True, nogil=True)
def solve_scale_all(importance, target, key):
    """:func:`~smartboost.sampling.scale.solve_scale` by the quickselect over every positive row."""
    positive = importance[importance > 0.0]
    if positive.shape[0] == 0:
        return 0.0
    if target >= positive.shape[0]:
        return np.inf
    return quickselect_scale(positive, target, np.int64(0), 0.0, key)
