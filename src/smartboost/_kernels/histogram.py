"""Per-node gradient histograms.

A histogram holds, for every (feature, bin) cell, the sums of the fixed-point gradients and
hessians of the node's rows: an int64 array of shape ``(n_cells, 2)``, where feature ``f`` owns
cells ``offsets[f] .. offsets[f] + n_bins[f]`` (the last one is its missing-value bin). Integer
sums are exact and associative, so the histogram does not depend on how rows are split between
threads, and subtraction (``larger child = parent - smaller child``) is exact.

Rows are gathered through the node's slice of the tree's row list; the row-major bins keep one
row's features on one cache line (or a few, for wide data), and the row ``_PREFETCH_ROWS``
ahead is prefetched, every line of it: a wide row spans several lines, and fetching only the
first leaves the others to stall the loop.

When a tree may split on a few features only (RGBM's per-tree draws), :func:`gather_columns`
first copies their bins into a compact row-major array (``n_rows x t``), which the same kernels
then read as their dense bins: a gathered row touches ``t`` bytes instead of a full row, and the
copy stays in cache (docs/internals.md, "Histograms"). The kernels then zero and
merge only those features' cells (``cells``), and leave the others as they are.

Sparse features (one "default" bin holds most rows, e.g. one-hot columns) are not read per row:
each row lists its non-default cells, and a sparse feature's default cell is the node's totals
minus its other cells, exact in integers (see ``binning.HistogramLayout``).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._common import HIST_PARALLEL_MIN_ROWS
from ._intrinsics import add_to_cell, prefetch, prefetch_span

_PREFETCH_ROWS = 12
"""Rows ahead the histogram loop prefetches: far enough for a fetch to arrive before its row is
read on compact rows (few columns, little work per row), near enough that the prefetched lines
are still in cache on full rows."""

_PREFETCH_GAP_BYTES = 64
"""Rows are prefetched only when the average distance between a node's consecutive rows, in
bytes of the bins or of ``gh`` (the wider), exceeds this (:func:`rows_far_apart`): rows close
together are already streamed by the hardware prefetcher, and a software prefetch then only
adds instructions; rows far apart miss the cache without it."""


@njit(cache=True, nogil=True)
def rows_far_apart(rows, start, end, row_bytes):
    """Whether the rows ``rows[start:end]`` (sorted) lie so far apart that consecutive ones
    rarely share a 64-byte line of an array of ``row_bytes`` bytes per row: the hardware
    prefetcher follows denser rows by itself, and prefetching them by hand only costs."""
    if end - start < 2:
        return False
    return (np.int64(rows[end - 1]) - np.int64(rows[start])) * row_bytes > _PREFETCH_GAP_BYTES * (end - start)


@njit(cache=True, nogil=True)
def _accumulate(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, gh, hist):
    """Add rows ``rows[start:end]`` into ``hist`` (no zeroing; sparse defaults left out).
    ``dense_bins`` may be a block of a row-major array's columns."""
    n_dense = dense_bins.shape[1]
    has_sparse = sparse_indptr.shape[0] > 1
    prefetching = rows_far_apart(rows, start, end, max(dense_bins.strides[0], gh.strides[0]))
    # unsigned indices: numba's negative-index wrap (a compare and a select per access) made the
    # loop 1.1-1.4x slower
    last = np.uint64(end)
    for i in range(np.uint64(start), last):
        if prefetching and i + np.uint64(_PREFETCH_ROWS) < last:
            ahead = rows[i + np.uint64(_PREFETCH_ROWS)]
            prefetch_span(dense_bins[ahead], 0, n_dense)
            prefetch(gh, ahead * 2)
            if has_sparse:
                prefetch(sparse_cells, sparse_indptr[ahead])
        row = rows[i]
        g = np.int64(gh[row, 0])
        h = np.int64(gh[row, 1])
        for k in range(np.uint64(n_dense)):
            add_to_cell(hist, dense_offsets[k] + dense_bins[row, k], g, h)
        if has_sparse:
            for j in range(np.uint64(sparse_indptr[row]), np.uint64(sparse_indptr[row + np.uint32(1)])):
                add_to_cell(hist, sparse_cells[j], g, h)


@njit(cache=True, nogil=True)
def _complete_sparse_features(hist, sparse_first, sparse_last, default_cells, g_total, h_total):
    """Set each sparse feature's default cell to the node's totals minus its other cells.

    ``sparse_first[k]:sparse_last[k]`` are the feature's cells (its default cell included).
    """
    for k in range(default_cells.shape[0]):
        g = g_total
        h = h_total
        for cell in range(sparse_first[k], sparse_last[k]):
            g -= hist[cell, 0]
            h -= hist[cell, 1]
        hist[default_cells[k], 0] = g  # it was 0: default bins are never accumulated
        hist[default_cells[k], 1] = h


@njit(cache=True, nogil=True)
def _zero(hist, cells):
    """Zero the ``cells`` of ``hist`` (None: all of them)."""
    if cells is None:
        hist[:] = 0
    else:
        for j in range(cells.shape[0]):
            hist[cells[j], 0] = 0
            hist[cells[j], 1] = 0


@njit(cache=True, nogil=True)
def build_histogram(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, sparse_first,
                    sparse_last, default_cells, cells, gh, g_total, h_total, hist):
    """Histogram of rows ``rows[start:end]`` on the calling thread.

    Parameters
    ----------
    rows : ndarray of uint32
        The tree's row list; the node owns ``rows[start:end]``.
    start, end : int
        The node's slice.
    dense_bins : ndarray of uint8 or uint16, shape (n_rows, n_dense), C order
        Row-major bins of the dense features (or of some of them: :func:`gather_columns`).
    dense_offsets : ndarray of uint32, shape (n_dense,)
        First cell of each of those features (unsigned: no negative-index handling in the
        loop).
    sparse_indptr, sparse_cells : ndarray of int64 and uint32
        The sparse features' non-default cells of row ``r``:
        ``sparse_cells[sparse_indptr[r]:sparse_indptr[r + 1]]`` (``sparse_indptr`` has one
        entry when there is no sparse feature).
    sparse_first, sparse_last, default_cells : ndarray of int64, shape (n_sparse,)
        Cell range and default cell of each sparse feature.
    cells : ndarray of int64 or None
        The cells of the features given (dense ones in ``dense_offsets``, and the sparse ones),
        or None when every feature is given. Only they are written.
    gh : ndarray of int32, shape (n_rows, 2)
        Fixed-point (gradient, hessian) of each row, indexed by row id.
    g_total, h_total : int
        The node's sums (to complete the sparse features' default cells).
    hist : ndarray of int64, shape (n_cells, 2)
        Output: its ``cells`` are overwritten.
    """
    _zero(hist, cells)
    _accumulate(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, gh, hist)
    _complete_sparse_features(hist, sparse_first, sparse_last, default_cells, g_total, h_total)


@njit(cache=True, nogil=True)
def _merge(thread_hists, cell, hist):
    """``hist[cell]`` = the sum of the per-chunk histograms' ``cell``."""
    g = 0
    h = 0
    for k in range(thread_hists.shape[0]):
        g += thread_hists[k, cell, 0]
        h += thread_hists[k, cell, 1]
    hist[cell, 0] = g
    hist[cell, 1] = h


@njit(cache=True, nogil=True, parallel=True)
def build_histogram_parallel(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells,
                             sparse_first, sparse_last, default_cells, cells, gh, g_total, h_total, hist,
                             thread_hists):
    """Histogram of ``rows[start:end]`` over row chunks, one private histogram per chunk.

    Same parameters as :func:`build_histogram`, plus ``thread_hists`` (int64, shape
    ``(n_chunks, n_cells, 2)``): scratch, one histogram per chunk, merged by a parallel loop
    over cells (only ``cells``, when given: the per-chunk zeroing and the merge are the fixed
    cost of a parallel node). The result equals :func:`build_histogram` exactly for any chunk
    count.
    """
    n_chunks = thread_hists.shape[0]
    size = (end - start + n_chunks - 1) // n_chunks
    for k in prange(n_chunks):
        local = thread_hists[k]
        _zero(local, cells)
        chunk_start = start + k * size
        _accumulate(rows, chunk_start, min(end, chunk_start + size), dense_bins, dense_offsets, sparse_indptr,
                    sparse_cells, gh, local)
    if cells is None:
        for cell in prange(hist.shape[0]):
            _merge(thread_hists, np.uint64(cell), hist)
    else:
        for j in prange(cells.shape[0]):
            _merge(thread_hists, np.uint64(cells[j]), hist)
    _complete_sparse_features(hist, sparse_first, sparse_last, default_cells, g_total, h_total)


@njit(cache=True, nogil=True, parallel=True)
def build_histogram_columns(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, gh, hist,
                            n_blocks):
    """Histogram of ``rows[start:end]`` over blocks of columns: block ``b`` of ``n_blocks``
    zeroes and accumulates its columns' cells, for every row. For layouts of dense features
    only, all of them given (each feature's cells run up to the next one's first cell; the
    sparse arrays are the layout's empty ones). Equal to :func:`build_histogram` exactly.

    No private histograms to zero and merge, and each block's cells stay in its core's cache,
    while every block reads every row's g and h: wide data favours it (from about 56 features;
    narrower data favours :func:`build_histogram_parallel`).
    """
    n_dense = dense_bins.shape[1]
    per_block = (n_dense + n_blocks - 1) // n_blocks
    for b in prange(n_blocks):
        first = min(n_dense, b * per_block)
        build_column_block(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, gh, hist, first,
                           min(n_dense, first + per_block))


@njit(cache=True, nogil=True)
def build_column_block(rows, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, gh, hist, first,
                       stop):
    """Zero the cells of dense columns ``first .. stop - 1`` and add rows ``rows[start:end]``
    into them, on the calling thread: one block of :func:`build_histogram_columns`, for layouts
    of dense features only (each column's cells run up to the next one's first cell, the last
    column's to the end of ``hist``). The other cells are neither read nor written."""
    n_dense = dense_bins.shape[1]
    last_cell = dense_offsets[stop] if stop < n_dense else hist.shape[0]
    for cell in range(dense_offsets[first] if first < n_dense else last_cell, last_cell):
        hist[cell, 0] = 0
        hist[cell, 1] = 0
    _accumulate(rows, start, end, dense_bins[:, first:stop], dense_offsets[first:stop], sparse_indptr, sparse_cells,
                gh, hist)


@njit(cache=True, nogil=True)
def node_histogram(rows, start, end, layout, gh, g_total, h_total, hist, thread_hists, column_blocks):
    """Histogram of a node, ``rows[start:end]``, by the kernel that suits it: blocks of columns
    (``column_blocks``: :func:`build_histogram_columns`, one block per thread), row chunks on
    every thread from ``HIST_PARALLEL_MIN_ROWS`` rows, else one thread.

    ``layout`` is a :class:`~smartboost._kernels.records.HistogramArrays`; ``thread_hists``
    (one histogram per thread) sets the thread count.
    """
    n_threads = thread_hists.shape[0]
    if column_blocks:
        build_histogram_columns(rows, start, end, layout.dense_bins, layout.dense_offsets, layout.sparse_indptr,
                                layout.sparse_cells, gh, hist, n_threads)
    elif end - start >= HIST_PARALLEL_MIN_ROWS and n_threads > 1:
        build_histogram_parallel(rows, start, end, layout.dense_bins, layout.dense_offsets, layout.sparse_indptr,
                                 layout.sparse_cells, layout.sparse_first, layout.sparse_last, layout.default_cells,
                                 layout.cells, gh, g_total, h_total, hist, thread_hists)
    else:
        build_histogram(rows, start, end, layout.dense_bins, layout.dense_offsets, layout.sparse_indptr,
                        layout.sparse_cells, layout.sparse_first, layout.sparse_last, layout.default_cells,
                        layout.cells, gh, g_total, h_total, hist)


_GATHER_BLOCK = 1024
"""Rows per block of :func:`gather_columns`: a block's output stays in L1 while it is written
column by column, instead of a row's columns scattered over the output."""


@njit(cache=True, nogil=True, parallel=True)
def gather_columns(rows, column_major, features, out):
    """Copy the bins of ``features`` for ``rows`` into the compact row-major ``out``.

    Parameters
    ----------
    rows : ndarray of uint32
        Rows to copy (the tree's row list); the other rows of ``out`` are left as they are.
    column_major : ndarray of uint8 or uint16, shape (n_features, n_rows)
        Column-major bins.
    features : ndarray of int64, shape (t,)
        Features to copy, in the order of ``out``'s columns.
    out : ndarray of the bins' dtype, shape (n_rows, t), C order
        ``out[r, j]`` = bin of row ``r`` in ``features[j]``.
    """
    n = rows.shape[0]
    for block in prange((n + _GATHER_BLOCK - 1) // _GATHER_BLOCK):
        first = block * _GATHER_BLOCK
        last = min(n, first + _GATHER_BLOCK)
        for j in range(features.shape[0]):
            column = column_major[features[j]]
            for i in range(first, last):
                row = rows[i]
                out[row, j] = column[row]


@njit(cache=True, nogil=True, parallel=True)
def gather_rows(ids, dense_bins, columns, out):
    """Copy the bins of ``columns`` for rows ``ids`` into the compact ``out``, one row per id.

    A sampled tree's rows are scattered over the data; copied in order, they fill a small
    array that stays in cache (see ``grower.NodeRows``). The row ``_PREFETCH_ROWS`` ids ahead
    is prefetched: every cache line of it when the whole row is copied, else its first.

    Whole rows (``columns`` None) are copied by a loop over consecutive columns, compiled
    separately, which LLVM vectorises.

    Parameters
    ----------
    ids : ndarray of uint32
        Rows to copy.
    dense_bins : ndarray of uint8 or uint16, shape (n_rows, n_dense), C order
        Row-major bins.
    columns : ndarray of uint32, shape (t,), or None
        Columns of ``dense_bins`` to copy, in the order of ``out``'s columns; None: all of
        them (``t = n_dense``).
    out : ndarray of the bins' dtype, shape (ids.size, t), C order
        ``out[i, j]`` = ``dense_bins[ids[i], columns[j]]``.
    """
    n = ids.shape[0]
    n_dense = dense_bins.shape[1]
    prefetched = n_dense if columns is None else 1
    for block in prange((n + _GATHER_BLOCK - 1) // _GATHER_BLOCK):
        last = min(n, (block + 1) * _GATHER_BLOCK)
        for i in range(block * _GATHER_BLOCK, last):
            if i + _PREFETCH_ROWS < last:
                prefetch_span(dense_bins, ids[i + _PREFETCH_ROWS] * n_dense, prefetched)
            row = ids[i]
            if columns is None:
                for j in range(n_dense):
                    out[i, j] = dense_bins[row, j]
            else:
                for j in range(columns.shape[0]):
                    out[i, j] = dense_bins[row, columns[j]]


@njit(cache=True, nogil=True, parallel=True)
def gather_sparse_rows(ids, indptr, cells, out_indptr, out_cells):
    """Copy the sparse cells of rows ``ids`` (``cells[indptr[r]:indptr[r + 1]]`` for row ``r``)
    to ``out_cells[out_indptr[i]:out_indptr[i + 1]]`` (``out_indptr`` given)."""
    for i in prange(ids.shape[0]):
        first = indptr[ids[i]]
        j = out_indptr[i]
        for k in range(out_indptr[i + 1] - j):
            out_cells[j + k] = cells[first + k]


_COUNT_TABLES_MIN_ROWS_PER_CELL = 16
"""Rows per cell from which :func:`bin_counts` counts a feature in four tables."""

_LAYOUT_BLOCK_ROWS = 4096
"""Rows of a block of :func:`sparse_row_lengths` and :func:`fill_sparse_rows`: the block's
counters stay in cache while every sparse feature's column is read over the block."""


@njit(cache=True, nogil=True, parallel=True)
def sparse_row_lengths(column_major, sparse_features, default_bins, out):
    """Number of non-default sparse-feature bins of every row, added to ``out[r + 1]`` (zeroed
    by the caller). Reads the column-major bins, in blocks of rows (one thread a block)."""
    n_rows = column_major.shape[1]
    for block in prange((n_rows + _LAYOUT_BLOCK_ROWS - 1) // _LAYOUT_BLOCK_ROWS):
        first = block * _LAYOUT_BLOCK_ROWS
        last = min(n_rows, first + _LAYOUT_BLOCK_ROWS)
        for k in range(sparse_features.shape[0]):
            column = column_major[sparse_features[k]]
            default = default_bins[k]
            # unsigned: numba's negative-index wrap would keep the loop scalar (8x slower)
            for r in range(np.uint64(first), np.uint64(last)):
                out[r + np.uint64(1)] += column[r] != default


@njit(cache=True, nogil=True, parallel=True)
def fill_sparse_rows(column_major, sparse_features, default_bins, sparse_offsets, indptr, cells):
    """Write every row's non-default sparse cells (``offset + bin``, in feature order) at
    ``cells[indptr[r]:indptr[r + 1]]``; blocks of rows as :func:`sparse_row_lengths`."""
    n_rows = column_major.shape[1]
    for block in prange((n_rows + _LAYOUT_BLOCK_ROWS - 1) // _LAYOUT_BLOCK_ROWS):
        first = block * _LAYOUT_BLOCK_ROWS
        last = min(n_rows, first + _LAYOUT_BLOCK_ROWS)
        cursor = indptr[first:last].copy()
        for k in range(sparse_features.shape[0]):
            column = column_major[sparse_features[k]]
            default = default_bins[k]
            offset = sparse_offsets[k]
            for i in range(np.uint64(last - first)):  # unsigned, as in sparse_row_lengths
                b = column[i + np.uint64(first)]
                if b != default:
                    cells[np.uint64(cursor[i])] = offset + b
                    cursor[i] += 1


@njit(cache=True, nogil=True, parallel=True)
def bin_counts(column_major, offsets, out):
    """Rows in every histogram cell: ``out[offsets[f] + b]`` += the rows whose bin of feature
    ``f`` is ``b`` (its missing-value bin included). Features in parallel: each owns its cells.

    Consecutive rows counted in one cell would chain each increment on the store before it (a
    one-hot column's rows are nearly all in one bin): four tables, one for each row modulo 4,
    break the chain (3.4x faster on a9a's 123 binary columns). A feature with few rows for its
    cells (wide sparse data) is counted in place, as the tables would cost more to clear.
    """
    n_rows = column_major.shape[1]
    for f in prange(column_major.shape[0]):
        column = column_major[f]
        first = np.int64(offsets[f])
        n_cells = (np.int64(offsets[f + 1]) if f + 1 < offsets.shape[0] else out.shape[0]) - first
        if n_rows < _COUNT_TABLES_MIN_ROWS_PER_CELL * n_cells:
            for r in range(n_rows):
                out[first + column[r]] += 1
            continue
        tables = np.zeros((4, n_cells), np.int64)
        r = 0
        while r + 4 <= n_rows:
            tables[0, column[r]] += 1
            tables[1, column[r + 1]] += 1
            tables[2, column[r + 2]] += 1
            tables[3, column[r + 3]] += 1
            r += 4
        for k in range(r, n_rows):
            tables[0, column[k]] += 1
        for c in range(n_cells):
            out[first + c] += tables[0, c] + tables[1, c] + tables[2, c] + tables[3, c]
