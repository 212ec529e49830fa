"""Row importances and smart2's gradient correction, in parallel passes over the rows.

``w |g|`` and MVS's regularised gradient norm, which the samplers draw by; the per-leaf sums of
the previous gradients and the corrected gradients of the sampled rows (SMART's improved
diagonal approximation).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True, parallel=True)
def weighted_abs(values, weight, out):
    """``out = weight * |values|`` (``weight`` None: ones, not read)."""
    for i in prange(values.shape[0]):
        out[i] = abs(values[i]) if weight is None else weight[i] * abs(values[i])


@njit(cache=True, nogil=True, parallel=True)
def mvs_importance(grad, hess, weight, lam, out):
    """``out = weight * sqrt(g^2 + lambda h^2)``: MVS's regularised gradient norm (``weight``
    None: ones, not read)."""
    for i in prange(grad.shape[0]):
        norm = np.sqrt(grad[i] * grad[i] + lam * hess[i] * hess[i])
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
