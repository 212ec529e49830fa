"""Fixed-point gradients: the per-row (g, h) that the tree of one iteration is grown on.

Each tree sees ``w_i g_i`` and ``w_i h_i`` of its rows (``w`` the row weights) rounded to
integer multiples of a power-of-two unit: ``unit = 2**(e - 30)`` where ``max|w g| < 2**e``, so
every row's value fits in an int32 with 2**-30 of the largest value as resolution. Units are
passed as their exponents ``e - 30``, which may lie below the float range (weights near 1e-300):
no unit is ever a float, so none is subnormal or has an infinite reciprocal. A row's pair
is stored interleaved, ``gh[row] = (g, h)``: one cache line per gathered row, 8 bytes like
float32 gradients. Histograms sum them into int64 cells (exact below 2**33 rows). Integer sums
do not depend on the order of additions (so not on the thread count), subtraction of a child
from its parent loses nothing, and the absolute error of a sum of n rows is at most
``n * 2**-31 * max|w g|``, below that of float32 gradients (``n * 2**-25 * max|w g|``).

Integer cells cost what float64 cells cost; the row layout of the fixed-point values is
described in docs/internals.md ("Fixed point").
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_ROW_BITS = 30

NOT_FINITE = 1 << 30
"""The unit exponent of values that are not all finite (:func:`unit_exponents`), far outside
the exponents of finite values (-1104 .. 994); the caller reports it."""


@njit(cache=True, nogil=True)
def _unit_exponent(max_abs):
    """Exponent of the power-of-two unit that maps values of magnitude <= ``max_abs`` below
    2**30; :data:`NOT_FINITE` when ``max_abs`` is not finite."""
    if not max_abs < np.inf:
        return NOT_FINITE
    if not max_abs > 0.0:
        return 0
    _, exponent = math.frexp(max_abs)
    return exponent - _ROW_BITS


@njit(cache=True, nogil=True)
def _reciprocal(unit_exponent):
    """``2**-unit_exponent`` as two finite float factors, ``(2**-e, 1)`` for a unit that is a
    normal float: values are multiplied by both, which is exact (a scaling by a power of two
    that stays below 2**31), where the reciprocal of a unit below the float range is infinite."""
    first = min(-unit_exponent, 1023)
    return math.ldexp(1.0, first), math.ldexp(1.0, -unit_exponent - first)


@njit(cache=True, nogil=True, inline="always")
def _weight(weight, row):
    """The weight of ``row``: 1 when ``weight`` is None (compiled without reading it)."""
    return 1.0 if weight is None else weight[row]


@njit(cache=True, nogil=True)
def unit_exponents(g_extent, h_extent):
    """Exponents ``(g_exp, h_exp)`` of the units ``2**g_exp``, ``2**h_exp`` for weighted
    gradients and hessians of magnitude at most ``g_extent``, ``h_extent``
    (:func:`fixed_point_extents`); :data:`NOT_FINITE` for an extent that is not finite."""
    return _unit_exponent(g_extent), _unit_exponent(h_extent)


@njit(cache=True, nogil=True, parallel=True)
def fixed_point_extents(rows, grad, hess, weight, grad_by_position):
    """The largest ``|w g|`` and ``|w h|`` of ``rows`` (0 without rows), each inf when a weighted
    value is not finite (``0 * value`` is NaN exactly for inf and NaN): the units of the tree
    grown on them are :func:`unit_exponents` of these. Machines that hold parts of the rows take
    the largest of their extents, which gives one machine's units (a machine's own unit would
    not do: rows all zero, or none, need a unit of 1 alone and none among others).

    ``rows`` None: every row, in order. ``weight`` is indexed by row id, or None when every
    weight is 1 (one array less to read). ``grad`` is indexed by row id, or with
    ``grad_by_position`` by position in ``rows`` (the sampled rows' corrected gradients of
    smart2, written in sample order: see ``_kernels.importance.correct_sampled``); ``hess``
    always by row id."""
    n = hess.shape[0] if rows is None else rows.shape[0]
    n_chunks = 64
    size = (n + n_chunks - 1) // n_chunks
    g_max = np.zeros(n_chunks)
    h_max = np.zeros(n_chunks)
    for k in prange(n_chunks):
        gm = 0.0
        hm = 0.0
        g_nan = 0.0
        h_nan = 0.0
        for i in range(np.uint64(k * size), np.uint64(min(n, (k + 1) * size))):  # unsigned: no index wrap
            r = i if rows is None else rows[i]
            w = _weight(weight, r)
            g = grad[i if grad_by_position else r] * w
            h = hess[r] * w
            gm = max(gm, abs(g))
            hm = max(hm, abs(h))
            g_nan += 0.0 * g
            h_nan += 0.0 * h
        g_max[k] = gm if g_nan == 0.0 else np.inf
        h_max[k] = hm if h_nan == 0.0 else np.inf
    g_top = 0.0  # a loop, not g_max.max(): numpy's max compiles a generic reduction
    h_top = 0.0
    for k in range(n_chunks):
        g_top = max(g_top, g_max[k])
        h_top = max(h_top, h_max[k])
    return g_top, h_top


@njit(cache=True, nogil=True, parallel=True)
def to_fixed_point(rows, grad, hess, weight, grad_by_position, g_exp, h_exp, gh, by_position):
    """Write ``(round(w g / 2**g_exp), round(w h / 2**h_exp))`` of ``rows``; return their int64
    sums (``weight`` and ``grad_by_position`` as in :func:`fixed_point_extents`).

    ``gh`` (int32, shape (n_rows_total, 2)) is written for ``rows`` only, at each row's id, or
    with ``by_position`` at its position in ``rows`` (the compact rows of ``grower.NodeRows``).
    """
    g_scale, g_rest = _reciprocal(g_exp)
    h_scale, h_rest = _reciprocal(h_exp)
    g_sum = 0
    h_sum = 0
    for i in prange(rows.shape[0]):
        r = rows[i]
        w = _weight(weight, r)
        gq = np.int64(np.rint(grad[i if grad_by_position else r] * w * g_scale * g_rest))
        hq = np.int64(np.rint(hess[r] * w * h_scale * h_rest))
        at = i if by_position else r
        gh[at, 0] = gq
        gh[at, 1] = hq
        g_sum += gq
        h_sum += hq
    return g_sum, h_sum


@njit(cache=True, nogil=True, parallel=True)
def gather_pair(rows, a, b, out_a, out_b):
    """``out_a[i], out_b[i] = a[rows[i]], b[rows[i]]``: the labels and scores of a sample's rows
    (numpy's fancy indexing took 3x longer for 100,000 of 1M rows)."""
    for i in prange(rows.shape[0]):
        r = rows[i]
        out_a[i] = a[r]
        out_b[i] = b[r]


@njit(cache=True, nogil=True, parallel=True)
def scatter_pair(rows, a, b, out_a, out_b):
    """``out_a[rows[i]], out_b[rows[i]] = a[i], b[i]``: a sample's gradients and hessians back
    to their rows."""
    for i in prange(rows.shape[0]):
        r = rows[i]
        out_a[r] = a[i]
        out_b[r] = b[i]


_LEAF_SUM_CHUNKS = 16
"""Row chunks of :func:`leaf_fixed_sums`, each adding into its own sums (integer sums: the
result does not depend on the chunks or the threads)."""


@njit(cache=True, nogil=True, parallel=True)
def leaf_fixed_sums(leaf, grad, hess, weight, g_exp, h_exp, n_leaves):
    """Each leaf's sums of ``round(w g / 2**g_exp)`` and ``round(w h / 2**h_exp)`` over every row
    (``leaf[i]``: row ``i``'s leaf, ``0 .. n_leaves - 1``), as int64, shape ``(n_leaves, 2)``:
    the rows' values rounded as :func:`to_fixed_point` rounds a tree's (units ``2**g_exp``,
    ``2**h_exp``), so the sums are exact,
    the same in any order and over any split of the rows among machines. A sampled tree's
    leaf values from every row (``leaf_value_rows='all'``, docs/concepts/sampling.md)."""
    n = leaf.shape[0]
    chunks = _LEAF_SUM_CHUNKS
    size = (n + chunks - 1) // chunks
    parts = np.zeros((chunks, n_leaves, 2), np.int64)
    g_scale, g_rest = _reciprocal(g_exp)
    h_scale, h_rest = _reciprocal(h_exp)
    for c in prange(chunks):
        part = parts[c]
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):
            w = _weight(weight, i)
            j = leaf[i]
            part[j, 0] += np.int64(np.rint(grad[i] * w * g_scale * g_rest))
            part[j, 1] += np.int64(np.rint(hess[i] * w * h_scale * h_rest))
    out = np.zeros((n_leaves, 2), np.int64)
    for c in range(chunks):
        for j in range(n_leaves):
            out[j, 0] += parts[c, j, 0]
            out[j, 1] += parts[c, j, 1]
    return out
