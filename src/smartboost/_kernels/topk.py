"""The largest values: the ``k``-th largest, the fewest largest that reach a sum, and ties.

The kernels of :mod:`smartboost.sampling.topk` (trimming and GOSS keep the rows of the largest
values): the quickselects of the ``k``-th largest (:func:`quickselect_kth`) and on sums
(:func:`count_top`), their Floyd-Rivest brackets (:func:`rank_bracket`, :func:`sum_bracket`)
on the partition and samples of :mod:`smartboost._kernels.scale`, and the counts of the values
above and equal to a threshold, per row segment (:func:`count_ties`) or run of rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .random import uniform
from .scale import BRACKET_SAMPLE, ordered_sum, random_sample, split_around


@njit(cache=True, nogil=True)
def quickselect_kth(values, k, key):
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
        n_gt, n_lt = split_around(src, lo, hi, pivot, dst)
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
    m = BRACKET_SAMPLE
    sample = random_sample(values, m, key + np.uint64(11))
    share = min(1.0, k / n)
    position = m - share * m  # the answer's expected index in the ascending sample
    spread = 4.0 * np.sqrt(m * share * (1.0 - share)) + 10.0  # 4 binomial standard deviations
    lo_index = max(0, int(position - spread))
    hi_index = int(position + spread)
    # ascending index i is rank m - i from the top
    lo = quickselect_kth(sample, m - lo_index, key)[0]
    hi = quickselect_kth(sample, m - hi_index, key)[0] if hi_index < m else np.inf
    return lo, hi


@njit(cache=True, nogil=True)
def count_ties(values, threshold, segment_ends):
    """Rows equal to ``threshold`` in each row segment (see :func:`~smartboost._kernels.draws.select_above`)."""
    out = np.zeros(segment_ends.shape[0], np.int64)
    start = 0
    for s in range(segment_ends.shape[0]):
        for i in range(start, segment_ends[s]):
            out[s] += values[i] == threshold
        start = segment_ends[s]
    return out


@njit(cache=True, nogil=True, parallel=True)
def piece_top_counts(values, threshold, start, length):
    """Values above ``threshold`` and equal to it in each run of rows ``start[p] ..
    start[p] + length[p]`` (the pieces of GOSS's draw, ``records.DrawPieces``), shape
    (2, n_pieces)."""
    n_pieces = start.shape[0]
    out = np.zeros((2, n_pieces), np.int64)
    for p in prange(n_pieces):
        above = 0
        equal = 0
        for i in range(start[p], start[p] + length[p]):
            above += values[i] > threshold
            equal += values[i] == threshold
        out[0, p] = above
        out[1, p] = equal
    return out


@njit(cache=True, nogil=True)
def sum_bracket(values, share, key):
    """Two values ``(lo, hi)`` that hold, with high probability, the least of the fewest largest
    ``values`` whose sum reaches ``share`` of their total: a random sample's own count for its
    total (:func:`count_top`), widened to the sample's order statistics around it."""
    m = BRACKET_SAMPLE
    sample = random_sample(values, m, key + np.uint64(13))
    r = count_top(sample, share * sample.sum(), key)
    spread = int(4.0 * np.sqrt(m) + 10.0)
    lo = quickselect_kth(sample, min(m, r + spread), key)[0]
    hi = quickselect_kth(sample, r - spread, key)[0] if r > spread else np.inf
    return lo, hi


@njit(cache=True, nogil=True)
def count_top(values, target_sum, key):
    """:func:`~smartboost.sampling.topk.count_top_for_sum` by the quickselect on sums over every value."""
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
        n_gt, n_lt = split_around(src, lo, hi, pivot, dst)
        n_eq = hi - lo - n_gt - n_lt
        sum_gt = ordered_sum(dst, lo, lo + n_gt)
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
