"""The importance samplers' scale over one machine's rows (:func:`solve_scale`; over several
machines: :mod:`smartboost.sampling.distributed`)."""

from __future__ import annotations

import numpy as np

from .._kernels.scale import (
    BRACKET_SAMPLE,
    solve_scale_all,
    bracket_counts,
    collect_bracket,
    quickselect_scale,
    scale_bracket,
)


def solve_scale(importance, target, key):
    """The scale ``c`` with ``sum_i min(1, c * a_i) = target`` (expected O(N)).

    The MVS paper's quickselect-style search on the threshold ``mu = 1 / c``: rows with
    ``a_i >= mu`` are kept surely, the others with probability ``a_i / mu``, so the expected
    count is ``#{a_i >= mu} + sum_{a_i < mu} a_i / mu``, decreasing in ``mu``. A pivot splits the
    candidates (three-way, so ties cost nothing); the side known to hold ``mu`` is searched
    next, carrying the count of the sure rows above and the sum of the rows below
    (:func:`~smartboost._kernels.scale.quickselect_scale`).

    As in Floyd and Rivest's selection, beyond 65,536 rows the first step takes two pivots from
    a random sample of 16,384 values (:func:`~smartboost._kernels.scale.scale_bracket`). One
    parallel, vectorised pass over all rows (:func:`~smartboost._kernels.scale.bracket_counts`)
    counts the rows above that bracket, sums those below it and those inside; when the answer is
    inside, the few rows there are collected and the quickselect finishes on them, otherwise it
    runs on every row. The bracket's pass is parallel and vectorised, where a quickselect over
    every row is serial; inside the bracket the partition is branch-free
    (:func:`~smartboost._kernels.scale.split_around`), while over all rows the in-place
    branching partition moves less memory.

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
    if importance.shape[0] > 4 * BRACKET_SAMPLE:
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
    return solve_scale_all(importance, target, key)
