"""Reference implementations that only the tests use: plain numpy, slow and obviously right,
against which the fast solvers are checked."""

from __future__ import annotations

import numpy as np


def solve_scale_sorted(importance, target):
    """Reference for :func:`smartboost.sampling.scale.solve_scale`: sort once, then try every
    number of sure rows (plain numpy, O(N log N))."""
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
