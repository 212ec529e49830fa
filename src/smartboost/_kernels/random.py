"""Counter-based random numbers: every random draw of the samplers and the feature selection.

Random numbers are a hash of (stream key, row): ``uniform(key, i)`` is splitmix64 of
``key + i * golden_ratio``, so a row's draw does not depend on which thread computes it nor on
how many other draws happened before (docs/internals.md, "A sampled iteration"), and the
draw of a row is branchless.
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
    """``rows[i] = i``: the row list of every row, written in place and in parallel (no fresh
    ``np.arange`` to allocate and copy)."""
    for i in prange(rows.shape[0]):
        rows[i] = i
