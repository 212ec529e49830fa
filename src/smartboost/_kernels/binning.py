"""Bin edges and binning: raw feature values to uint8 bins.

A feature with edges ``e[0] < ... < e[k-1]`` has ``k + 1`` value bins: bin ``b`` holds the values
in ``(e[b-1], e[b]]``, so ``bin(x)`` is the number of edges below ``x``. ``-inf`` falls in bin 0,
``+inf`` in bin ``k`` (the outer bins), NaN in the missing-value bin ``k + 1``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def bin_of(x, edges, n_edges):
    """Bin of value ``x`` given the first ``n_edges`` entries of ``edges`` (NaN: ``n_edges + 1``)."""
    if x != x:
        return n_edges + 1
    lo = 0
    hi = n_edges
    while lo < hi:
        mid = (lo + hi) >> 1
        if edges[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _distinct_counts(values, n_zeros):
    """Distinct values of sorted ``values`` with their counts, plus ``n_zeros`` implicit zeros."""
    n = values.shape[0]
    distinct = np.empty(n + 1, np.float64)
    counts = np.empty(n + 1, np.int64)
    d = 0
    zeros_pending = n_zeros > 0
    for i in range(n + 1):
        if zeros_pending and (i == n or values[i] >= 0.0):
            if d > 0 and distinct[d - 1] == 0.0:
                counts[d - 1] += n_zeros
            else:
                distinct[d] = 0.0
                counts[d] = n_zeros
                d += 1
            zeros_pending = False
        if i == n:
            break
        if d > 0 and values[i] == distinct[d - 1]:
            counts[d - 1] += 1
        else:
            distinct[d] = values[i]
            counts[d] = 1
            d += 1
    return distinct[:d], counts[:d]


@njit(cache=True, nogil=True)
def _greedy_edges(distinct, counts, max_bin, out):
    """Edges separating ``distinct`` values into at most ``max_bin`` bins; returns their number.

    With at most ``max_bin`` distinct values each gets its own bin. Otherwise bins are cut
    greedily so that each holds about an equal share of the rows still to place, so a value
    that alone holds many rows gets its own bin without starving the others. Each edge is the
    midpoint of the two distinct values it separates (the lower value when the midpoint rounds
    up onto the upper one).
    """
    d = distinct.shape[0]
    n_left_to_place = counts.sum()
    n_edges = 0
    in_bin = 0
    for i in range(d - 1):
        in_bin += counts[i]
        bins_left = max_bin - n_edges
        if d <= max_bin or in_bin * bins_left >= n_left_to_place or d - 1 - i < bins_left:
            a = distinct[i]
            b = distinct[i + 1]
            mid = a + (b - a) * 0.5
            out[n_edges] = mid if mid < b else a
            n_edges += 1
            n_left_to_place -= in_bin
            in_bin = 0
            if n_edges == max_bin - 1:
                break
    return n_edges


@njit(cache=True, nogil=True, parallel=True)
def find_edges(sample, max_bin, edges, n_edges):
    """Bin edges of every feature from a dense row sample.

    Parameters
    ----------
    sample : ndarray of float64, shape (n_features, n_sample_rows)
        Sample values, one feature per row; NaN and +-inf are ignored.
    max_bin : int
        Maximum number of value bins.
    edges : ndarray of float64, shape (n_features, max_bin - 1)
        Output edges (first ``n_edges[f]`` entries of row ``f``).
    n_edges : ndarray of int64, shape (n_features,)
        Output edge counts.
    """
    for f in prange(sample.shape[0]):
        column = sample[f]
        distinct, counts = _distinct_counts(np.sort(column[np.isfinite(column)]), 0)
        n_edges[f] = _greedy_edges(distinct, counts, max_bin, edges[f])


@njit(cache=True, nogil=True, parallel=True)
def find_edges_csc(indptr, data, n_sample_rows, max_bin, edges, n_edges):
    """Bin edges of every feature from a CSC row sample (implicit entries are zeros).

    Same outputs as :func:`find_edges`.
    """
    for f in prange(indptr.shape[0] - 1):
        column = data[indptr[f]:indptr[f + 1]]
        n_zeros = n_sample_rows - column.shape[0]
        distinct, counts = _distinct_counts(np.sort(column[np.isfinite(column)]), n_zeros)
        n_edges[f] = _greedy_edges(distinct, counts, max_bin, edges[f])


@njit(cache=True, nogil=True, parallel=True)
def bin_dense(X, edges, n_edges, out, missing_count):
    """Bin a dense matrix into row-major ``out`` (uint8, shape (n_rows, n_features)).

    ``missing_count`` (int64, shape (n_blocks, n_features), zeroed by the caller, ``n_blocks``
    row blocks) receives per-block NaN counts, summed by the caller.
    """
    n_rows, n_features = X.shape
    n_blocks = missing_count.shape[0]
    size = (n_rows + n_blocks - 1) // n_blocks
    for k in prange(n_blocks):
        for i in range(k * size, min(n_rows, (k + 1) * size)):
            for f in range(n_features):
                x = X[i, f]
                out[i, f] = bin_of(x, edges[f], n_edges[f])
                missing_count[k, f] += x != x


@njit(cache=True, nogil=True, parallel=True)
def bin_csc(indptr, indices, data, edges, n_edges, out, missing_count):
    """Bin a CSC matrix into column-major ``out`` (uint8, shape (n_features, n_rows)).

    Implicit entries are 0.0. ``missing_count`` (int64, shape (n_features,)) receives NaN counts.
    """
    for f in prange(out.shape[0]):
        out[f, :] = bin_of(0.0, edges[f], n_edges[f])
        count = 0
        for k in range(indptr[f], indptr[f + 1]):
            x = data[k]
            out[f, indices[k]] = bin_of(x, edges[f], n_edges[f])
            count += x != x
        missing_count[f] = count


@njit(cache=True, nogil=True, parallel=True)
def transpose_bins(src, dst):
    """``dst = src.T`` for uint8 matrices, in row blocks (faster than numpy's copy here)."""
    n_rows, n_cols = src.shape
    block = 4096
    for k in prange((n_rows + block - 1) // block):
        for j in range(n_cols):
            for i in range(k * block, min(n_rows, (k + 1) * block)):
                dst[j, i] = src[i, j]
