"""Exact sums of floats: the partials of Shewchuk's algorithm (the first pass of Python's
``math.fsum``), over fixed chunks of the values in parallel.

The partials of a set of values are non-overlapping floats whose exact sum is the exact sum of
the values, whatever their order or grouping: the partials of several machines' values,
concatenated, are partials of all of them, and ``math.fsum`` of them rounds that exact sum once.
So a sum over rows spread over machines equals the sum on one machine, bit for bit
(:func:`smartboost.steps.exact_sum`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_CHUNKS = 64
"""Fixed chunks of the values, summed in parallel."""

_CAPACITY = 2100
"""Partials one chunk can hold: non-overlapping floats span at most the 2,098 bits of the
float64 exponent range and mantissa, so there are never more."""


@njit(cache=True, nogil=True, parallel=True)
def exact_partials(values):
    """Non-overlapping partials whose exact sum is that of the finite ``values``, then the IEEE
    sum of the others (inf, -inf, nan) when there are any (a partial that overflows counts
    among them, as its infinity)."""
    n = values.shape[0]
    chunks = max(1, min(_CHUNKS, n // 4096))
    size = (n + chunks - 1) // chunks
    partials = np.empty((chunks, _CAPACITY))
    counts = np.zeros(chunks, np.int64)
    special = np.zeros(chunks)
    has_special = np.zeros(chunks, np.bool_)
    for c in prange(chunks):
        m = 0
        for i in range(c * size, min(n, (c + 1) * size)):
            x = values[i]
            if not np.isfinite(x):
                special[c] += x
                has_special[c] = True
                continue
            j = 0
            for q in range(m):
                y = partials[c, q]
                if abs(x) < abs(y):
                    x, y = y, x
                hi = x + y
                if not np.isfinite(hi):  # the sum overflows: it is that infinity
                    special[c] += hi
                    has_special[c] = True
                    hi = 0.0
                    y = 0.0
                    x = 0.0
                lo = y - (hi - x)
                if lo != 0.0:
                    partials[c, j] = lo
                    j += 1
                x = hi
            if np.isfinite(x):
                partials[c, j] = x
                m = j + 1
            else:
                special[c] += x
                has_special[c] = True
                m = j
        counts[c] = m
    total = 0
    for c in range(chunks):
        total += counts[c]
    out = np.empty(total + 1)
    at = 0
    any_special = False
    extra = 0.0
    for c in range(chunks):
        out[at:at + counts[c]] = partials[c, :counts[c]]
        at += counts[c]
        if has_special[c]:
            any_special = True
            extra += special[c]
    if any_special:
        out[at] = extra
        return out
    return out[:at]
