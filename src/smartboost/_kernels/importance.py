"""Row importances, smart2's gradient correction and the holdout check of a sampled tree, in parallel passes over
the rows.

``w |g|``, MVS's regularised gradient norm and the per-class gradients' norms of multiclass
objectives, which the samplers draw by; the per-leaf sums of
the previous gradients and the corrected gradients of the sampled rows (SMART's improved
diagonal approximation); a sampled tree's loss decrease estimated from its sample and from the
other rows (``sampling='auto'``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange


_SUM_CHUNKS = 16
"""Fixed row chunks of :func:`abs_fixed_sum` and the holdout check (:func:`holdout_extent`,
:func:`holdout_sums`), added up in chunk order: the results do not depend on the thread count."""


@njit(cache=True, nogil=True, parallel=True)
def weighted_abs(values, weight, out):
    """``out = weight * |values|`` (``weight`` None: ones, not read)."""
    for i in prange(values.shape[0]):
        out[i] = abs(values[i]) if weight is None else weight[i] * abs(values[i])


@njit(cache=True, nogil=True, parallel=True)
def abs_fixed_sum(values, unit):
    """``sum_i round(|values[i]| / unit)`` as an int64, over fixed chunks in parallel: an
    integer sum, the same in any order and over any split of the values among machines."""
    n = values.shape[0]
    chunks = _SUM_CHUNKS
    size = (n + chunks - 1) // chunks
    parts = np.zeros(chunks, np.int64)
    for c in prange(chunks):
        total = 0
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):  # unsigned, as the holdout sums'
            total += np.int64(np.rint(abs(values[i]) / unit))
        parts[c] = total
    out = 0
    for c in range(chunks):
        out += parts[c]
    return out


_NORM_BLOCK = 1024
"""Rows per block of :func:`class_norms`: a block's sums of squares stay in L1 while each class's
row of the block is added to them in one vectorised loop."""


@njit(cache=True, nogil=True, parallel=True)
def class_norms(values, out):
    """``out[i] = sqrt(sum_k values[k, i]^2)``: the L2 norm of each row's per-class gradients (or
    hessians), what the samplers draw by for a multiclass objective (``values`` class-major,
    shape (n_classes, n_rows)). The squares are added in class order, as numpy's
    ``einsum("ki,ki->i")`` adds them."""
    n_classes, n = values.shape
    for block in prange((n + _NORM_BLOCK - 1) // _NORM_BLOCK):
        start = block * _NORM_BLOCK
        end = min(n, start + _NORM_BLOCK)
        total = out[start:end]
        row = values[0, start:end]
        for i in range(end - start):
            total[i] = row[i] * row[i]
        for k in range(1, n_classes):
            row = values[k, start:end]
            for i in range(end - start):
                total[i] += row[i] * row[i]
        for i in range(end - start):
            total[i] = np.sqrt(total[i])


_NORM_CHUNKS = 64
"""Row chunks of :func:`mvs_importance`: each is computed in one vectorised loop, then, only if
a norm overflowed there, again with ``hypot`` (a call in the loop kept it scalar, at twice the
time)."""


@njit(cache=True, nogil=True, parallel=True)
def mvs_importance(grad, hess, weight, lam, root, out):
    """``out = weight * sqrt(g^2 + lambda h^2)``: MVS's regularised gradient norm (``weight``
    None: ones, not read). ``root`` is sqrt(lambda): where a square overflows (gradients beyond
    1e154, or lambda itself infinite), the norm is ``hypot(g, root h)``, finite as the gradients are."""
    n = grad.shape[0]
    size = (n + _NORM_CHUNKS - 1) // _NORM_CHUNKS
    for c in prange(_NORM_CHUNKS):
        lo, hi = np.uint64(c * size), np.uint64(min(n, (c + 1) * size))
        overflow = False
        for i in range(lo, hi):
            norm = np.sqrt(grad[i] * grad[i] + lam * hess[i] * hess[i])
            overflow |= norm == np.inf
            out[i] = norm if weight is None else weight[i] * norm
        if overflow:
            for i in range(lo, hi):
                if np.sqrt(grad[i] * grad[i] + lam * hess[i] * hess[i]) == np.inf:
                    norm = math.hypot(grad[i], root * hess[i])
                    out[i] = norm if weight is None else weight[i] * norm


_LEAF_SUM_CHUNKS = 16
"""Fixed row chunks of :func:`leaf_sums`, added up in chunk order: the sums do not depend on
the thread count."""


@njit(cache=True, nogil=True, parallel=True)
def leaf_sums(leaf, values, n_leaves):
    """Sums of ``values`` and row counts over the rows of each leaf (``leaf[i]`` in
    ``0 .. n_leaves - 1``), as an array of shape (2, n_leaves).

    Each of :data:`_LEAF_SUM_CHUNKS` fixed row chunks adds into its own (sum, count) pairs,
    in parallel; the chunks' pairs are then added in order, so the result does not depend on
    the thread count."""
    n = leaf.shape[0]
    chunks = _LEAF_SUM_CHUNKS
    size = (n + chunks - 1) // chunks
    parts = np.zeros((chunks, n_leaves, 2))
    for c in prange(chunks):
        part = parts[c]
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):
            j = np.uint64(leaf[i])
            part[j, 0] += values[i]
            part[j, 1] += 1.0
    out = np.zeros((2, n_leaves))
    for c in range(chunks):
        for j in range(n_leaves):
            out[0, j] += parts[c, j, 0]
            out[1, j] += parts[c, j, 1]
    return out


@njit(cache=True, nogil=True, parallel=True)
def correct_sampled(rows, grad, old_grad, leaf, leaf_mean, eta, out):
    """SMART's improved diagonal approximation of the sampled ``rows``' gradients
    (docs/concepts/sampling.md): ``out[k] = g_i + eta * (mean over i's previous-tree leaf of l'(y~) -
    l'(y~_i))`` for ``i = rows[k]``, ``l'(y~)`` being ``old_grad``: written in sample order,
    ``out[:len(rows)]``, which the fixed-point kernels then read in order
    (``_kernels.gradients``, ``grad_by_position``): indexed by row id, each sampled row's slot
    would touch a cache line of its own."""
    for k in prange(rows.shape[0]):
        i = rows[k]
        out[k] = grad[i] + eta * (leaf_mean[leaf[i]] - old_grad[i])



@njit(cache=True, nogil=True, inline="always")
def _holdout_term(i, leaf, step, grad, hess, weight, sample_weight, in_sample):
    """Row ``i``'s term of :func:`holdout_extent`'s estimates: ``(term, which)``, ``which`` 0
    (drawn), 1 (not drawn) or -1 (a row drawn surely or never, in neither)."""
    w = 1.0 if weight is None else weight[i]
    p = w / sample_weight[i]
    if not 0.0 < p < 1.0:
        return 0.0, -1
    d = step[np.uint64(leaf[i])]
    change = -w * d * (grad[i] + 0.5 * hess[i] * d)
    if in_sample[i]:
        return change / p, 0
    return change / (1.0 - p), 1


@njit(cache=True, nogil=True, parallel=True)
def holdout_extent(leaf, step, grad, hess, weight, sample_weight, in_sample):
    """The largest ``|term|`` of each of a sampled tree's two estimates of its loss decrease over
    every row (``sampling='auto'``; inf when a term is not finite), which sets the fixed-point
    unit of :func:`holdout_sums`.

    Row ``i`` moves by ``step[leaf[i]]``, which lowers its loss by about
    ``c_i = -w_i (g_i d + h_i d^2 / 2)``. It was drawn with probability ``p_i = w_i / v_i``
    (``v = sample_weight``, the inverse-probability weights of every row, drawn or not; ``weight``
    None: ones, not read); ``in_sample[i]`` says whether it was. Over the rows with
    ``0 < p_i < 1``, ``sum_{drawn} c_i / p_i`` and ``sum_{not drawn} c_i / (1 - p_i)`` both
    estimate ``sum_i c_i`` without bias for a tree that does not depend on the draw; the first
    also holds what the tree learnt of the sample's noise, the second does not."""
    n = leaf.shape[0]
    chunks = _SUM_CHUNKS
    size = (n + chunks - 1) // chunks
    parts = np.zeros((chunks, 2))
    for c in prange(chunks):
        part = parts[c]
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):
            term, which = _holdout_term(i, leaf, step, grad, hess, weight, sample_weight, in_sample)
            if which >= 0:
                size_of = abs(term)
                part[which] = max(part[which], size_of) if size_of == size_of else np.inf
    out = np.zeros(2)
    for c in range(chunks):
        out[0] = max(out[0], parts[c, 0])
        out[1] = max(out[1], parts[c, 1])
    return out


@njit(cache=True, nogil=True, parallel=True)
def holdout_sums(leaf, step, grad, hess, weight, sample_weight, in_sample, units):
    """The two estimates of :func:`holdout_extent` as int64 sums of the terms rounded to
    multiples of ``units`` (one power of two per estimate, ``sampling.base.fixed_point_sums``):
    integer sums are the same in any order, so rows spread over machines give one machine's sums."""
    n = leaf.shape[0]
    chunks = _SUM_CHUNKS
    size = (n + chunks - 1) // chunks
    parts = np.zeros((chunks, 2), np.int64)
    for c in prange(chunks):
        part = parts[c]
        for i in range(np.uint64(c * size), np.uint64(min(n, (c + 1) * size))):
            term, which = _holdout_term(i, leaf, step, grad, hess, weight, sample_weight, in_sample)
            if which >= 0:
                part[which] += np.int64(np.rint(term / units[which]))
    out = np.zeros(2, np.int64)
    for c in range(chunks):
        out[0] += parts[c, 0]
        out[1] += parts[c, 1]
    return out
