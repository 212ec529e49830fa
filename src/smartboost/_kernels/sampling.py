"""Row-sampling kernels: counter-based random numbers, row draws, the scale solver, top-k.

Random numbers are a hash of (stream key, row): ``uniform(key, i)`` is splitmix64 of
``key + i * golden_ratio``, so a row's draw does not depend on which thread computes it nor on
how many other draws happened before (PERFORMANCE.md 7: 1.2 ms for 800k rows, branchless).

Every draw writes the sampled row ids in increasing order into ``rows`` and the others into
``rest`` (both branch-free, in the same pass) and returns the number sampled, ``n``: the tree
grows on ``rows[:n]`` and the new tree is then added to ``rest[:n_rows - n]`` by traversal.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, nogil=True)
def splitmix64(x):
    """The splitmix64 finaliser: a bijective 64-bit hash."""
    x = (x ^ (x >> np.uint64(30))) * _MIX1
    x = (x ^ (x >> np.uint64(27))) * _MIX2
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def hash_pair(a, b):
    """A 64-bit key mixing two integers: splitmix64 of ``a``, combined with ``b``, mixed again."""
    return splitmix64(splitmix64(np.uint64(a)) ^ np.uint64(b))


@njit(cache=True, nogil=True)
def uniform(key, i):
    """A uniform number in [0, 1) for row ``i`` of the stream ``key`` (uint64)."""
    return np.float64(splitmix64(key + np.uint64(i) * _GOLDEN) >> np.uint64(11)) * _TO_UNIT


@njit(cache=True, nogil=True, parallel=True)
def fill_row_ids(rows):
    """``rows[i] = i``: the row list of every row, written in place (1M rows: 0.05-0.08 ms,
    against 0.32-0.50 ms for copying a fresh ``np.arange``)."""
    for i in prange(rows.shape[0]):
        rows[i] = i


_COMPACT_CHUNKS = 64


@njit(cache=True, nogil=True, inline="always")
def _place(rows, rest, k, i, kept, last_chunk):
    """Put row ``i`` into ``rows[k]`` (``kept``) or ``rest[i - k]``; returns the new ``k``.

    :func:`draw_top_and_rest` writes its chunks in parallel. In the last chunk (on small data
    the only one) the row is written to both lists and only the matching end advances: no
    branch to mispredict when about half the rows are kept (7,000 rows at 0.5: 92 -> 70 us for
    the draw in training). Elsewhere a branch: the write past a chunk's last kept row would
    land on the next chunk's first slot while that chunk fills it. ``last_chunk`` does not
    change within a chunk's loop, which LLVM then compiles twice."""
    if last_chunk:
        rows[k] = i
        rest[i - k] = i
        return k + kept
    if kept:
        rows[k] = i
        return k + 1
    rest[i - k] = i
    return k


@njit(cache=True, nogil=True, parallel=True)
def compact(keep, rows, rest):
    """Split ``range(n)`` by the 0/1 array ``keep`` into ``rows`` (kept) and ``rest``, in order.

    Parallel over fixed chunks (a count pass, then a write pass at the chunks' offsets): the
    result does not depend on the thread count. Returns the number kept.
    """
    n = keep.shape[0]
    size = (n + _COMPACT_CHUNKS - 1) // _COMPACT_CHUNKS
    counts = np.zeros(_COMPACT_CHUNKS + 1, np.int64)
    for c in prange(_COMPACT_CHUNKS):
        total = 0
        for i in range(c * size, min(n, (c + 1) * size)):
            total += keep[i]
        counts[c + 1] = total
    for c in range(_COMPACT_CHUNKS):
        counts[c + 1] += counts[c]
    for c in prange(_COMPACT_CHUNKS):
        k = counts[c]
        for i in range(c * size, min(n, (c + 1) * size)):
            # A branch, not the branch-free double write: a chunk's write past its last kept
            # row would land on the next chunk's first slot while that chunk fills it.
            if keep[i]:
                rows[k] = i
                k += 1
            else:
                rest[i - k] = i
    return counts[_COMPACT_CHUNKS]


@njit(cache=True, nogil=True, parallel=True)
def draw_bernoulli(key, rate, rows, rest, keep, row_ids):
    """Keep each row independently with probability ``rate``; returns the count kept.

    ``keep`` (uint8, one per row) is scratch. Row ``i`` draws the number ``row_ids[i]`` of the
    stream (its id among every machine's rows), or ``i`` when ``row_ids`` is None.
    """
    for i in prange(keep.shape[0]):
        keep[i] = uniform(key, i if row_ids is None else row_ids[i]) < rate
    return compact(keep, rows, rest)


@njit(cache=True, nogil=True)
def draw_exact(key, k, rows, rest):
    """Knuth's selection sampling: exactly ``k`` rows without replacement, in one ordered pass.

    Each row is kept with probability (still needed) / (still left), which draws exactly ``k``
    rows with every subset equally likely. Returns ``k``.
    """
    n_rows = rows.shape[0]
    needed = k
    n = 0
    for i in range(n_rows):
        keep = uniform(key, i) * (n_rows - i) < needed
        rows[n] = i
        rest[i - n] = i
        n += keep
        needed -= keep
    return n


_DRAW_CHUNK_ROWS = 4096
"""Rows per chunk of the exact-count draws below 64 chunks (:func:`draw_chunks`)."""


def draw_chunks(n):
    """Fixed row chunks of the exact-count draws (:func:`draw_exact_parallel`,
    :func:`draw_top_and_rest`): 64, or one per ``_DRAW_CHUNK_ROWS`` rows on fewer rows, so that
    small data draws in one pass without the hypergeometric split (7,000 rows: uniform's sample
    177 -> 99 us per iteration in training). Depends on ``n`` only, not on the thread count.
    Returns ``(n_chunks, rows per chunk)``."""
    chunks = max(1, min(_COMPACT_CHUNKS, n // _DRAW_CHUNK_ROWS))
    return chunks, (n + chunks - 1) // chunks


def _chunk_sizes(n):
    """Rows of each of :func:`draw_chunks`' chunks."""
    chunks, size = draw_chunks(n)
    first = np.arange(chunks, dtype=np.int64) * size
    return np.minimum(first + size, n) - first


def _split_count(key, sizes, k):
    """How many of ``k`` rows drawn uniformly without replacement from chunks of ``sizes`` rows
    fall in each: one multivariate hypergeometric draw (numpy, seeded by ``key``), so that every
    ``k``-subset stays equally likely (no draw for a single chunk)."""
    if sizes.shape[0] == 1:
        return np.array([k], np.int64)
    return np.random.Generator(np.random.PCG64(int(key))).multivariate_hypergeometric(sizes, k)


def exact_chunk_counts(key, n, k):
    """How many of ``k`` rows drawn uniformly without replacement from ``range(n)`` fall in each
    of :func:`draw_chunks`' chunks."""
    return _split_count(key, _chunk_sizes(n), k)


@njit(cache=True, nogil=True, parallel=True)
def draw_exact_parallel(key, counts, rows, rest):
    """:func:`draw_exact` of ``counts.sum()`` rows over every row, in parallel: selection
    sampling of ``counts[c]`` rows inside each fixed chunk ``c`` (:func:`exact_chunk_counts`),
    the chunks at their offsets. 1M rows at rate 0.1: 4.2 ms for the serial pass. Returns the
    count drawn."""
    n = rows.shape[0]
    chunks = counts.shape[0]
    size = (n + chunks - 1) // chunks
    offsets = np.zeros(chunks + 1, np.int64)
    for c in range(chunks):
        offsets[c + 1] = offsets[c] + counts[c]
    for c in prange(chunks):
        stop = min(n, (c + 1) * size)
        needed = counts[c]
        k = offsets[c]
        for i in range(c * size, stop):
            # branches, not draw_exact's double writes: those would spill into the next chunk
            # (and the branch takes the count still needed out of the next row's comparison:
            # branch-free, 1M rows at 0.1 took 3.1 against 2.0 ms)
            if uniform(key, i) * (stop - i) < needed:
                rows[k] = i
                k += 1
                needed -= 1
            else:
                rest[i - k] = i
    return offsets[chunks]


@njit(cache=True, nogil=True, parallel=True)
def draw_proportional(key, importance, scale, weight, rows, rest, sample_weight, keep, row_ids):
    """Keep row ``i`` with probability ``p_i = min(1, scale * importance[i])``.

    Writes ``sample_weight[i] = weight[i] / p_i`` (inverse-probability weights; read only for
    kept rows; ``weight`` None: ones, not read). Rows of zero importance are never kept.
    ``keep`` (uint8) is scratch; row ``i`` draws the number ``row_ids[i]`` of the stream (``i``
    when None). Returns the count kept.
    """
    for i in prange(importance.shape[0]):
        p = min(1.0, scale * importance[i]) if importance[i] > 0.0 else 0.0
        keep[i] = uniform(key, i if row_ids is None else row_ids[i]) < p
        sample_weight[i] = (1.0 if weight is None else weight[i]) / p
    return compact(keep, rows, rest)


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
def _split_around(src, lo, hi, pivot, dst):
    """Partition ``src[lo:hi]`` around ``pivot`` into ``dst[lo:hi]``, without branches.

    The values above ``pivot`` go to the front, ``dst[lo:lo + n_gt]``, those below to the back,
    ``dst[hi - n_lt:hi]``: each value is written to both ends and only the matching end
    advances, so a junk write lands past the end it does not advance, never on a kept value.
    The values equal to ``pivot`` are only counted (``hi - lo - n_gt - n_lt`` of them). On
    random values a branching partition mispredicts about every other row (searches took 7-21
    ns per row); this loop takes 2.2 ns per row and step. Adding up either side inside it made
    LLVM branch again (7-9 ns), hence :func:`_sum`. Returns ``(n_gt, n_lt)``.
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
def _sum(values, lo, hi):
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
        n_gt, n_lt = _split_around(src, lo, hi, pivot, dst)
        n_eq = hi - lo - n_gt - n_lt
        sum_lt = _sum(dst, hi - n_lt, hi)
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


_BRACKET_SAMPLE = 16384


@njit(cache=True, nogil=True, parallel=True, fastmath={"reassoc"})
def bracket_counts(values, lo, hi):
    """Where ``values`` fall around the bracket ``[lo, hi)``, per fixed chunk of rows.

    One parallel pass that LLVM vectorises (reassociated sums: the result depends on the
    machine, not on the thread count). Returns ``counts`` (int64, shape (3, chunks)): values
    ``>= hi``, values in ``[lo, hi)`` and values ``> 0``; and ``sums`` (shape (3, chunks)): of
    the values ``< lo``, of those in ``[lo, hi)`` and of those ``>= hi``.
    """
    n = values.shape[0]
    size = (n + _COMPACT_CHUNKS - 1) // _COMPACT_CHUNKS
    counts = np.zeros((3, _COMPACT_CHUNKS), np.int64)
    sums = np.zeros((3, _COMPACT_CHUNKS))
    for c in prange(_COMPACT_CHUNKS):
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
    spare slot at its end, and a serial pass closes the gaps the spare slots leave. 1M values,
    2 threads, medians of 30 calls: 16,700 inside, 0.50 against 0.83 ms with the branch;
    2,100 inside, 0.35 ms with the branch against 0.50 ms without."""
    n = values.shape[0]
    size = (n + _COMPACT_CHUNKS - 1) // _COMPACT_CHUNKS
    offsets = np.zeros(_COMPACT_CHUNKS + 1, np.int64)
    for c in range(_COMPACT_CHUNKS):
        offsets[c + 1] = offsets[c] + chunk_counts[c]
    total = offsets[_COMPACT_CHUNKS]
    if 128 * total < n:
        out = np.empty(total)
        for c in prange(_COMPACT_CHUNKS):
            k = offsets[c]
            for i in range(c * size, min(n, (c + 1) * size)):
                a = values[i]
                if a >= lo and a < hi:
                    out[k] = a
                    k += 1
        return out
    out = np.empty(total + _COMPACT_CHUNKS)
    for c in prange(_COMPACT_CHUNKS):
        k = offsets[c] + c  # chunk c's region: its values, then a spare slot
        for i in range(c * size, min(n, (c + 1) * size)):
            a = values[i]
            out[k] = a
            k += (a >= lo) & (a < hi)
    for c in range(1, _COMPACT_CHUNKS):  # each chunk's values move c slots down, in order
        for j in range(offsets[c], offsets[c + 1]):
            out[j] = out[j + c]
    return out[:total]


@njit(cache=True, nogil=True)
def _random_sample(values, m, key):
    """``m`` values drawn with replacement (hash-indexed)."""
    n = values.shape[0]
    sample = np.empty(m)
    for j in range(m):
        sample[j] = values[int(uniform(key, j) * n)]
    return sample


@njit(cache=True, nogil=True)
def scale_bracket(importance, target, key):
    """Two thresholds ``(mu_lo, mu_hi)`` that hold :func:`solve_scale`'s ``1 / c`` with high
    probability: a random sample's own thresholds (by :func:`quickselect_scale`) for a slightly
    larger and a slightly smaller target."""
    n = importance.shape[0]
    m = _BRACKET_SAMPLE
    sample = _random_sample(importance, m, key + np.uint64(7))
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
def _solve_scale_all(importance, target, key):
    """:func:`solve_scale` by the quickselect over every positive row."""
    positive = importance[importance > 0.0]
    if positive.shape[0] == 0:
        return 0.0
    if target >= positive.shape[0]:
        return np.inf
    return quickselect_scale(positive, target, np.int64(0), 0.0, key)


def solve_scale(importance, target, key):
    """The scale ``c`` with ``sum_i min(1, c * a_i) = target`` (expected O(N)).

    The MVS paper's quickselect-style search on the threshold ``mu = 1 / c``: rows with
    ``a_i >= mu`` are kept surely, the others with probability ``a_i / mu``, so the expected
    count is ``#{a_i >= mu} + sum_{a_i < mu} a_i / mu``, decreasing in ``mu``. A pivot splits the
    candidates (three-way, so ties cost nothing); the side known to hold ``mu`` is searched
    next, carrying the count of the sure rows above and the sum of the rows below
    (:func:`quickselect_scale`).

    As in Floyd and Rivest's selection, beyond 65,536 rows the first step takes two pivots from
    a random sample of 16,384 values (:func:`scale_bracket`). One parallel, vectorised pass
    over all rows (:func:`bracket_counts`) counts the rows above that bracket, sums those below
    it and those inside; when the answer is inside, the few rows there are collected and the
    quickselect finishes on them, otherwise it runs on every row. On 1,000,000 MVS importances
    (2 threads, alternating in one process on a slowed machine): 1.27 ms, against 4.01 ms for
    a serial pass after sorting the sample (2.9 ms on a quiet one); the quickselect alone took
    25.8 ms. With the branch-free partition (:func:`_split_around`): 0.60-0.78 against
    0.69-0.71 ms, and the quickselect alone 16.5-17.6 against 12.9 ms (over 8 MB of values the
    in-place branching partition moves less memory; the bracket keeps every draw but a missed
    bracket off that path).

    Parameters
    ----------
    importance : ndarray of float64
        ``a_i >= 0`` (not modified).
    target : float
        Expected sample size, ``0 < target``.
    key : uint64
        Random stream for the sample and the pivots.

    Returns
    -------
    float
        ``c``; ``inf`` when ``target`` is at least the number of rows with ``a_i > 0``
        (every such row is kept), 0 when every ``a_i`` is 0.
    """
    if importance.shape[0] > 4 * _BRACKET_SAMPLE:
        mu_lo, mu_hi = scale_bracket(importance, target, key)
        if 0.0 < mu_lo < mu_hi:
            counts, sums = bracket_counts(importance, mu_lo, mu_hi)
            sure, n_mid, n_positive = (int(x) for x in counts.sum(axis=1))
            sum_lo, sum_mid, _ = sums.sum(axis=1)
            if n_positive == 0:
                return 0.0
            if target >= n_positive:
                return np.inf
            # the answer lies in [mu_lo, mu_hi) when the expected counts there straddle the target
            if sure + (sum_lo + sum_mid) / mu_hi <= target <= sure + n_mid + sum_lo / mu_lo:
                middle = collect_bracket(importance, mu_lo, mu_hi, counts[1]) if n_mid else np.empty(0)
                return quickselect_scale(middle, target, sure, sum_lo, key)
    return _solve_scale_all(importance, target, key)


def solve_scale_sorted(importance, target):
    """Reference for :func:`solve_scale`: sort once, then try every number of sure rows.

    Plain numpy, O(N log N); used by the tests.
    """
    a = np.sort(np.asarray(importance, dtype=np.float64))[::-1]
    a = a[a > 0]
    if a.size == 0:
        return 0.0
    if target >= a.size:
        return np.inf
    tail = np.cumsum(a[::-1])[::-1]  # tail[k] = sum of a[k:]
    for k in range(a.size):
        c = (target - k) / tail[k]
        if c * a[k] < 1.0 and (k == 0 or c * a[k - 1] >= 1.0):
            return c
    raise AssertionError("no consistent scale")


@njit(cache=True, nogil=True)
def _quickselect_kth(values, k, key):
    """The ``k``-th largest of ``values`` (1-based) and how many entries exceed it (``values``
    not modified)."""
    src = values.copy()  # the partition leaves only one side of each step in its buffers
    dst = np.empty_like(values)
    lo = 0
    hi = values.shape[0]
    draw = 0
    while True:
        pivot = src[lo + int(uniform(key, draw) * (hi - lo))]
        draw += 1
        n_gt, n_lt = _split_around(src, lo, hi, pivot, dst)
        gt = lo + n_gt  # the values above the pivot rank 1 .. gt, those equal up to hi - n_lt
        if k <= gt:
            hi = gt
        elif k <= hi - n_lt:
            return pivot, gt
        else:
            lo = hi - n_lt
        src, dst = dst, src


@njit(cache=True, nogil=True)
def rank_bracket(values, k, key):
    """Two values ``(lo, hi)`` that hold the ``k``-th largest of ``values`` with high
    probability: order statistics of a random sample (by quickselect) around its rank."""
    n = values.shape[0]
    m = _BRACKET_SAMPLE
    sample = _random_sample(values, m, key + np.uint64(11))
    share = min(1.0, k / n)
    position = m - share * m  # the answer's expected index in the ascending sample
    spread = 4.0 * np.sqrt(m * share * (1.0 - share)) + 10.0  # 4 binomial standard deviations
    lo_index = max(0, int(position - spread))
    hi_index = int(position + spread)
    # ascending index i is rank m - i from the top
    lo = _quickselect_kth(sample, m - lo_index, key)[0]
    hi = _quickselect_kth(sample, m - hi_index, key)[0] if hi_index < m else np.inf
    return lo, hi


def kth_largest(values, k, key):
    """The ``k``-th largest entry of ``values`` (1-based; expected O(N)) and how many exceed it.

    Floyd-Rivest style, beyond 65,536 values: a random sample brackets the answer
    (:func:`rank_bracket`); one parallel pass counts the values above the bracket and inside it,
    and a quickselect finishes on those inside (on every value if the bracket misses).
    """
    if values.shape[0] > 4 * _BRACKET_SAMPLE:
        lo, hi = rank_bracket(values, k, key)
        counts, _ = bracket_counts(values, lo, hi)
        above, n_mid = int(counts[0].sum()), int(counts[1].sum())
        if above < k <= above + n_mid:
            value, greater = _quickselect_kth(collect_bracket(values, lo, hi, counts[1]), k - above, key)
            return value, above + greater
    return _quickselect_kth(values, k, key)


def top_threshold(values, k, key):
    """``(threshold, ties)``: the ``k`` largest ``values`` are those above ``threshold`` and
    ``ties`` of those equal to it (``(inf, 0)`` for ``k <= 0``)."""
    if k <= 0:
        return np.inf, 0
    threshold, greater = kth_largest(values, k, key)
    return threshold, k - greater


@njit(cache=True, nogil=True)
def select_above(values, threshold, segment_ends, segment_ties, rows, rest):
    """Ids of the ``values`` above ``threshold`` and, in each row segment, its first
    ``segment_ties[s]`` rows equal to it (segment ``s`` ends before row ``segment_ends[s]``),
    in increasing order. Returns their count; ``rows[:count]`` holds them.
    """
    n = 0
    start = 0
    for s in range(segment_ends.shape[0]):
        ties = segment_ties[s]
        for i in range(start, segment_ends[s]):
            tie = values[i] == threshold
            take = (values[i] > threshold) | (tie & (ties > 0))
            ties -= take & tie
            rows[n] = i
            rest[i - n] = i
            n += take
        start = segment_ends[s]
    return n


@njit(cache=True, nogil=True)
def count_ties(values, threshold, segment_ends):
    """Rows equal to ``threshold`` in each row segment (see :func:`select_above`)."""
    out = np.zeros(segment_ends.shape[0], np.int64)
    start = 0
    for s in range(segment_ends.shape[0]):
        for i in range(start, segment_ends[s]):
            out[s] += values[i] == threshold
        start = segment_ends[s]
    return out


@njit(cache=True, nogil=True, parallel=True)
def _chunk_top_counts(values, threshold, chunks):
    """Values above ``threshold`` and equal to it in each of ``chunks`` fixed row chunks,
    shape (2, chunks)."""
    n = values.shape[0]
    size = (n + chunks - 1) // chunks
    out = np.zeros((2, chunks), np.int64)
    for c in prange(chunks):
        above = 0
        equal = 0
        for i in range(c * size, min(n, (c + 1) * size)):
            above += values[i] > threshold
            equal += values[i] == threshold
        out[0, c] = above
        out[1, c] = equal
    return out


def top_and_rest_counts(values, threshold, ties, k_top, k_rest, key):
    """Per chunk of :func:`draw_chunks`: the ties taken as top rows (the first ``ties`` rows
    equal to ``threshold``, in row order), the top rows (``k_top`` in all), and how many of a
    uniform draw of ``k_rest`` of the other rows fall there (:func:`_split_count` over the
    chunks' other rows). Returns the three int64 arrays of :func:`draw_top_and_rest`."""
    chunks = draw_chunks(values.shape[0])[0]
    if chunks == 1:
        return np.array([ties], np.int64), np.array([k_top], np.int64), np.array([k_rest], np.int64)
    counts = _chunk_top_counts(values, threshold, chunks)
    equal_before = np.cumsum(counts[1]) - counts[1]
    chunk_ties = np.clip(ties - equal_before, 0, counts[1])
    chunk_top = counts[0] + chunk_ties
    chunk_rest = _split_count(key + np.uint64(1), _chunk_sizes(values.shape[0]) - chunk_top, k_rest)
    return chunk_ties, chunk_top, chunk_rest


@njit(cache=True, nogil=True, parallel=True)
def draw_top_and_rest(values, threshold, chunk_ties, chunk_top, chunk_rest, key, weight, rest_weight, rows, rest,
                      sample_weight):
    """GOSS's draw: the largest ``values`` surely, a uniform draw of the others, in parallel.

    The top rows are those above ``threshold`` and the first rows equal to it (ties go to the
    lowest row ids); in each fixed chunk ``c`` of :func:`draw_chunks`, ``chunk_ties[c]`` of its
    equal rows are top, ``chunk_top[c]`` rows in all, and ``chunk_rest[c]`` of its other rows
    are drawn by selection sampling (:func:`top_and_rest_counts`). ``sample_weight[i]``
    receives ``weight[i]`` (top) or ``weight[i] * rest_weight`` (the others; ``weight`` None:
    ones, not read). 1M rows at 0.1, in training: 6.2 ms serially, 3.3 ms in 64 chunks on 2
    threads. Returns the sample size.
    """
    n = values.shape[0]
    chunks = chunk_top.shape[0]
    size = (n + chunks - 1) // chunks
    offsets = np.zeros(chunks + 1, np.int64)
    for c in range(chunks):
        offsets[c + 1] = offsets[c] + chunk_top[c] + chunk_rest[c]
    for c in prange(chunks):
        start = c * size
        stop = min(n, start + size)
        ties = chunk_ties[c]
        needed = chunk_rest[c]
        left = stop - start - chunk_top[c]
        k = offsets[c]
        last = c == chunks - 1
        for i in range(start, stop):
            tie = values[i] == threshold
            top = (values[i] > threshold) | (tie & (ties > 0))
            ties -= top & tie
            drawn = (not top) & (uniform(key + np.uint64(1), i) * left < needed)
            needed -= drawn
            left -= not top
            w = 1.0 if weight is None else weight[i]
            sample_weight[i] = w if top else w * rest_weight
            k = _place(rows, rest, k, i, top | drawn, last)
    return offsets[chunks]


@njit(cache=True, nogil=True)
def sum_bracket(values, share, key):
    """Two values ``(lo, hi)`` that hold, with high probability, the least of the fewest largest
    ``values`` whose sum reaches ``share`` of their total: a random sample's own count for its
    total (:func:`_count_top`), widened to the sample's order statistics around it."""
    m = _BRACKET_SAMPLE
    sample = _random_sample(values, m, key + np.uint64(13))
    r = _count_top(sample, share * sample.sum(), key)
    spread = int(4.0 * np.sqrt(m) + 10.0)
    lo = _quickselect_kth(sample, min(m, r + spread), key)[0]
    hi = _quickselect_kth(sample, r - spread, key)[0] if r > spread else np.inf
    return lo, hi


def count_top_for_sum(values, target_sum, key):
    """Fewest of the largest ``values`` (non-negative) whose sum reaches ``target_sum``.

    Beyond 65,536 values, as :func:`kth_largest`: a random sample brackets the least value taken
    (:func:`sum_bracket`); one parallel pass counts and sums the values above the bracket and
    inside it, and the quickselect on sums finishes on those inside when the sum above falls
    short of the target and the sum inside makes it up (on every value otherwise).
    """
    if values.shape[0] > 4 * _BRACKET_SAMPLE and target_sum > 0.0:
        total = values.sum()
        if total > 0.0:
            lo, hi = sum_bracket(values, min(1.0, target_sum / total), key)
            counts, sums = bracket_counts(values, lo, hi)
            above, sum_mid, sum_above = int(counts[0].sum()), float(sums[1].sum()), float(sums[2].sum())
            if sum_above < target_sum <= sum_above + sum_mid:
                return above + _count_top(collect_bracket(values, lo, hi, counts[1]), target_sum - sum_above, key)
    return _count_top(values, target_sum, key)


@njit(cache=True, nogil=True)
def _count_top(values, target_sum, key):
    """:func:`count_top_for_sum` by the quickselect on sums over every value."""
    src = values.copy()  # the partition leaves only one side of each step in its buffers
    dst = np.empty_like(src)
    lo = 0
    hi = src.shape[0]
    taken = 0        # rows known to be in the set (ranks above lo)
    taken_sum = 0.0
    draw = 0
    while lo < hi:
        pivot = src[lo + int(uniform(key, draw) * (hi - lo))]
        draw += 1
        n_gt, n_lt = _split_around(src, lo, hi, pivot, dst)
        n_eq = hi - lo - n_gt - n_lt
        sum_gt = _sum(dst, lo, lo + n_gt)
        if taken_sum + sum_gt >= target_sum:
            hi = lo + n_gt  # the rows above the pivot suffice: the answer is among them
        elif taken_sum + sum_gt + pivot * n_eq >= target_sum:
            needed = int(np.ceil((target_sum - taken_sum - sum_gt) / pivot)) if pivot > 0 else n_eq
            return taken + n_gt + min(max(needed, 1), n_eq)
        else:
            taken += n_gt + n_eq
            taken_sum += sum_gt + pivot * n_eq
            lo = hi - n_lt
        src, dst = dst, src
    return taken


@njit(cache=True, nogil=True, parallel=True)
def weighted_abs(values, weight, out):
    """``out = weight * |values|`` (``weight`` None: ones, not read)."""
    for i in prange(values.shape[0]):
        out[i] = abs(values[i]) if weight is None else weight[i] * abs(values[i])


@njit(cache=True, nogil=True, parallel=True)
def mvs_importance(grad, hess, weight, lam, out):
    """``out = weight * sqrt(g^2 + lambda h^2)``: MVS's regularised gradient norm (``weight``
    None: ones, not read)."""
    for i in prange(grad.shape[0]):
        norm = np.sqrt(grad[i] * grad[i] + lam * hess[i] * hess[i])
        out[i] = norm if weight is None else weight[i] * norm


_LEAF_SUM_CHUNKS = 16
"""Fixed row chunks of :func:`leaf_sums`, added up in chunk order: the sums do not depend on
the thread count."""


@njit(cache=True, nogil=True, parallel=True)
def leaf_sums(leaf, values, n_leaves):
    """Sums of ``values`` and row counts over the rows of each leaf (``leaf[i]`` in
    ``0 .. n_leaves - 1``), as an array of shape (2, n_leaves).

    Each of :data:`_LEAF_SUM_CHUNKS` fixed row chunks adds into its own (sum, count) pairs,
    in parallel; the chunks' pairs are then added in order. 1M rows, 255 leaves: 1.06 ms
    against 1.78 ms for one serial pass into a (2, n_leaves) array (median of 30 alternating
    calls, caches flushed)."""
    n = leaf.shape[0]
    chunks = _LEAF_SUM_CHUNKS
    size = (n + chunks - 1) // chunks
    parts = np.zeros((chunks, n_leaves, 2))
    for c in prange(chunks):
        part = parts[c]
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):
            j = np.uint64(leaf[i])
            part[j, 0] += values[i]
            part[j, 1] += 1.0
    out = np.zeros((2, n_leaves))
    for c in range(chunks):
        for j in range(n_leaves):
            out[0, j] += parts[c, j, 0]
            out[1, j] += parts[c, j, 1]
    return out


@njit(cache=True, nogil=True, parallel=True)
def correct_sampled(rows, grad, old_grad, leaf, leaf_mean, eta, out):
    """SMART's improved diagonal approximation of the sampled ``rows``' gradients
    (docs/concepts/sampling.md): ``out[k] = g_i + eta * (mean over i's previous-tree leaf of l'(y~) -
    l'(y~_i))`` for ``i = rows[k]``, ``l'(y~)`` being ``old_grad``: written in sample order,
    ``out[:len(rows)]``, which the fixed-point kernels then read in order
    (``_kernels.gradients``, ``grad_by_position``). At 1M rows sampled at 0.1, the correction and
    both fixed-point passes took 5.4 ms against 6.8 ms with ``out`` indexed by row id (caches
    flushed, median of 40 alternating calls): a row id's slot touches a cache line of its own."""
    for k in prange(rows.shape[0]):
        i = rows[k]
        out[k] = grad[i] + eta * (leaf_mean[leaf[i]] - old_grad[i])
