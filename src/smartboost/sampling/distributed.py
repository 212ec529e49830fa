"""Sampler decisions over rows spread over machines: the importance samplers' scale, and the
largest values (trimming).

A proportional sampler keeps row ``i`` with ``p_i = min(1, c a_i)``, where ``c`` solves
``sum_i min(1, c a_i) = s N`` over *every* row (docs/concepts/sampling.md). On one machine
:func:`~smartboost.sampling.scale.solve_scale` finds ``c`` by quickselect. Over several
machines, :func:`solve_scale_by_radix` finds the same ``c`` from sums that each machine computes
on its own rows, in three rounds of O(N) work and small messages:

1. each machine counts and sums its positive ``a_i`` by their float64 exponent (2,048
   buckets; for non-negative floats the bit pattern orders like the value). The threshold
   ``mu = 1/c`` lies in the highest bucket ``b`` whose lower bound ``L`` still gives an expected
   count ``#{a >= L} + sum_{a < L} a / L`` of at least ``s N``: rows in higher buckets are kept
   surely, rows in lower ones only add to the sum below;
2. the same inside bucket ``b``, by the next 12 bits of the pattern (4,096 buckets of relative
   width 2^-12);
3. the machines send the values of the chosen bucket (distinct values with their counts), and
   the quickselect of the one-machine solver finishes on them with the sure count and the sum
   below carried over.

The result equals the one-machine solution up to the rounding of sums taken in another order.

Trimming keeps the ``k`` largest values (``k`` given, or the fewest whose sum reaches a target):
:func:`kth_largest_by_radix` and :func:`count_top_for_sum_by_radix` walk the same buckets from
the largest values down, counting or summing, and finish with the one-machine kernels on the
values of the bucket where the walk stops.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._kernels.scale import quickselect_scale
from .topk import count_top_for_sum, kth_largest

__all__ = ["RADIX_LEVELS", "count_top_for_sum_by_radix", "kth_largest_by_radix", "solve_scale_by_radix",
           "total_by_radix"]

RADIX_LEVELS = ((52, 11), (40, 12))
"""``(shift, bits)`` of the two bucketing rounds: the exponent (11 bits above the 52-bit
mantissa), then the mantissa's top 12 bits."""

BucketSums = Callable[[int, int, int, int], tuple[np.ndarray, np.ndarray]]
Members = Callable[[int, int], np.ndarray]


def solve_scale_by_radix(bucket_sums: BucketSums, members: Members, target: float, key: np.uint64) -> float:
    """The scale ``c`` with ``sum_i min(1, c a_i) = target`` over rows held by many machines.

    Parameters
    ----------
    bucket_sums : callable
        ``bucket_sums(prefix, prefix_shift, shift, n_buckets)`` returns ``(counts, sums)`` over
        every machine: :func:`~smartboost._kernels.scale.radix_buckets` of each machine's
        importances, added up.
    members : callable
        ``members(prefix, prefix_shift)`` returns every machine's positive importances whose bit
        pattern shifted right by ``prefix_shift`` equals ``prefix``, concatenated.
    target : float
        Expected sample size ``s N``.
    key : uint64
        Random stream of the final quickselect's pivots.

    Returns
    -------
    float
        ``c``; ``inf`` when ``target`` reaches the number of positive importances, 0 when there
        are none (as :func:`~smartboost.sampling.scale.solve_scale`).
    """
    sure, below = 0, 0.0
    prefix, prefix_shift = 0, 64
    for level, (shift, bits) in enumerate(RADIX_LEVELS):
        n_buckets = 1 << bits
        counts, sums = bucket_sums(prefix, prefix_shift, shift, n_buckets)
        if level == 0:
            n_positive = int(counts.sum())
            if n_positive == 0:
                return 0.0
            if target >= n_positive:
                return np.inf
        base = np.uint64(prefix) << np.uint64(prefix_shift) if prefix_shift < 64 else np.uint64(0)
        lower = (base | (np.arange(n_buckets, dtype=np.uint64) << np.uint64(shift))).view(np.float64)
        at_or_above = sure + np.cumsum(counts[::-1])[::-1]
        sum_below = below + np.concatenate([[0.0], np.cumsum(sums)[:-1]])
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = np.where(lower > 0.0, at_or_above + sum_below / lower, np.inf)
        b = int(np.flatnonzero(expected >= target)[-1])
        sure = int(at_or_above[b] - counts[b])
        below = float(sum_below[b])
        prefix, prefix_shift = (prefix << bits) | b, shift
    values = np.ascontiguousarray(members(prefix, prefix_shift), dtype=np.float64)
    return float(quickselect_scale(values, target, sure, below, key))


def total_by_radix(bucket_sums: BucketSums) -> tuple[int, float]:
    """Count and sum of every machine's positive values."""
    shift, bits = RADIX_LEVELS[0]
    counts, sums = bucket_sums(0, 64, shift, 1 << bits)
    return int(counts.sum()), float(sums.sum())


def _descend(bucket_sums: BucketSums, wanted: float, by_sum: bool) -> tuple[tuple[int, int] | None, int, float]:
    """Walk the buckets from the largest values down to the one where the running count (or
    sum) of the values reaches ``wanted``.

    Returns ``(bucket, count_above, sum_above)``: the bucket's ``(prefix, prefix_shift)`` and
    the count and sum of the values in higher buckets; ``bucket`` is None when every positive
    value together falls short (then the totals are those of every positive value).
    """
    count_above, sum_above = 0, 0.0
    prefix, prefix_shift = 0, 64
    for level, (shift, bits) in enumerate(RADIX_LEVELS):
        counts, sums = bucket_sums(prefix, prefix_shift, shift, 1 << bits)
        column = sums if by_sum else counts
        through = (sum_above if by_sum else count_above) + np.cumsum(column[::-1])[::-1]
        if level == 0 and not through[0] >= wanted:
            return None, int(counts.sum()), float(sums.sum())
        hits = np.flatnonzero(through >= wanted)
        b = int(hits[-1]) if hits.size else 0  # rounding of a sum can leave none at the second level
        count_above += int(counts[b + 1:].sum())
        sum_above += float(sums[b + 1:].sum())
        prefix, prefix_shift = (prefix << bits) | b, shift
    return (prefix, prefix_shift), count_above, sum_above


def kth_largest_by_radix(bucket_sums: BucketSums, members: Members, k: int, key: np.uint64) -> tuple[float, int]:
    """The ``k``-th largest of every machine's non-negative values, and how many exceed it (as
    :func:`~smartboost.sampling.topk.kth_largest`); ``k >= 1``."""
    bucket, count_above, _ = _descend(bucket_sums, k, by_sum=False)
    if bucket is None:  # the k-th largest is a zero
        return 0.0, count_above
    values = np.ascontiguousarray(members(*bucket), dtype=np.float64)
    threshold, greater = kth_largest(values, k - count_above, key)
    return float(threshold), count_above + int(greater)


def count_top_for_sum_by_radix(bucket_sums: BucketSums, members: Members, target_sum: float,
                               key: np.uint64) -> int:
    """Fewest of the largest values of every machine whose sum reaches ``target_sum`` (as
    :func:`~smartboost.sampling.topk.count_top_for_sum`)."""
    bucket, count_above, sum_above = _descend(bucket_sums, target_sum, by_sum=True)
    if bucket is None:
        return count_above
    values = np.ascontiguousarray(members(*bucket), dtype=np.float64)
    return count_above + int(count_top_for_sum(values, target_sum - sum_above, key))
