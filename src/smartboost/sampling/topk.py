"""The largest values of one machine's rows: the ``k``-th largest, the ``k`` largest with their
ties, and the fewest largest that reach a sum (trimming, GOSS; over several machines:
:mod:`smartboost.sampling.distributed`)."""

from __future__ import annotations

import numpy as np

from .._kernels.scale import BRACKET_SAMPLE, bracket_counts, collect_bracket
from .._kernels.topk import count_top, quickselect_kth, rank_bracket, sum_bracket


def kth_largest(values, k, key):
    """The ``k``-th largest entry of ``values`` (1-based; expected O(N)) and how many exceed it.

    Floyd-Rivest style, beyond 65,536 values: a random sample brackets the answer
    (:func:`~smartboost._kernels.topk.rank_bracket`); one parallel pass counts the values above
    the bracket and inside it, and a quickselect finishes on those inside (on every value if the
    bracket misses).
    """
    if values.shape[0] > 4 * BRACKET_SAMPLE:
        lo, hi = rank_bracket(values, k, key)
        counts, _ = bracket_counts(values, lo, hi)
        above, n_mid = int(counts[0].sum()), int(counts[1].sum())
        if above < k <= above + n_mid:
            value, greater = quickselect_kth(collect_bracket(values, lo, hi, counts[1]), k - above, key)
            return value, above + greater
    return quickselect_kth(values, k, key)


def top_threshold(values, k, key):
    """``(threshold, ties)``: the ``k`` largest ``values`` are those above ``threshold`` and
    ``ties`` of those equal to it (``(inf, 0)`` for ``k <= 0``)."""
    if k <= 0:
        return np.inf, 0
    threshold, greater = kth_largest(values, k, key)
    return threshold, k - greater


def count_top_for_sum(values, target_sum, key):
    """Fewest of the largest ``values`` (non-negative) whose sum reaches ``target_sum``.

    Beyond 65,536 values, as :func:`kth_largest`: a random sample brackets the least value taken
    (:func:`~smartboost._kernels.topk.sum_bracket`); one parallel pass counts and sums the values above the bracket and
    inside it, and the quickselect on sums finishes on those inside when the sum above falls
    short of the target and the sum inside makes it up (on every value otherwise).
    """
    if values.shape[0] > 4 * BRACKET_SAMPLE and target_sum > 0.0:
        total = values.sum()
        if total > 0.0:
            lo, hi = sum_bracket(values, min(1.0, target_sum / total), key)
            counts, sums = bracket_counts(values, lo, hi)
            above, sum_mid, sum_above = int(counts[0].sum()), float(sums[1].sum()), float(sums[2].sum())
            if sum_above < target_sum <= sum_above + sum_mid:
                return above + count_top(collect_bracket(values, lo, hi, counts[1]), target_sum - sum_above, key)
    return count_top(values, target_sum, key)
