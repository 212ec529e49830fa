"""The scale of the importance samplers when the rows are spread over machines.

A proportional sampler keeps row ``i`` with ``p_i = min(1, c a_i)``, where ``c`` solves
``sum_i min(1, c a_i) = s N`` over *every* row (ALGORITHMS.md 3). On one machine
:func:`~smartboost._kernels.sampling.solve_scale` finds ``c`` by quickselect. Over several
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
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .._kernels.sampling import quickselect_scale

__all__ = ["RADIX_LEVELS", "solve_scale_by_radix"]

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
        every machine: :func:`~smartboost._kernels.sampling.radix_buckets` of each machine's
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
        are none (as :func:`~smartboost._kernels.sampling.solve_scale`).
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
