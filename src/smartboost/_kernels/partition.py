"""Row partitioning: split a node's slice of the tree's row list into (left, right), in place.

The partition is stable (rows keep their order on each side), so a node's rows stay sorted by
row id and the result is the same for any thread count. Decisions read the column-major bins
(one feature's bins contiguous: docs/internals.md, "Bin layouts"), or a column of a sampled
tree's compact row-major bins (a strided view, which numba compiles separately; see
``grower.NodeRows``), and the writes are branchless (docs/internals.md, "Partitions and score
updates"). The two layouts stay two compiled variants: one kernel over (flat array, base,
stride) would lose the contiguous column's vectorised loads.

Every index of the row loops is unsigned. numba wraps negative indices, and LLVM cannot tell
that a signed index is not negative, so each load and store would carry that check.

Serial (small nodes): left rows are compacted forward in place, right rows go to the scratch
buffer and are copied back after the left ones.

Parallel: the slice is cut into chunks; inside its own region of the scratch buffer each chunk
writes its left rows forward from the region's start and its right rows backward from the
region's end, one store per row to the slot its side selects, so no chunk ever writes outside
its region. A second pass copies the chunks back: left rows in
chunk order, then right rows in chunk order (each chunk's right rows reversed back).

::

    scratch, chunk k:  [ L L L L . . . R R R ]   (R stored last-first)
    rows after:        [ L(chunk 0) L(chunk 1) ... | R(chunk 0) R(chunk 1) ... ]

A split's ``rule`` is a :class:`~smartboost._kernels.records.ThresholdRule` (numeric) or the set
of left bins of a categorical split (uint64, four words); :func:`goes_left` is compiled for the
type it is given, so the numeric partitions run the code they ran before categorical splits.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange, types
from numba.extending import overload

from .._common import PARTITION_PARALLEL_MIN_ROWS, PREFETCH_DISTANCE
from ._intrinsics import prefetch


def goes_left(bin_value, rule):
    """Decision of a split on binned data: value bins ``<= threshold`` and, optionally, missing
    (a :class:`~smartboost._kernels.records.ThresholdRule`), or the bins of a categorical
    split's left set (uint64 words: bin ``b`` is bit ``b % 64`` of word ``b // 64``)."""


@overload(goes_left, jit_options={"cache": True, "nogil": True})
def _goes_left_types(bin_value, rule):
    """The implementation of :func:`goes_left` for the rule's type."""
    if isinstance(rule, types.Array):
        return lambda bin_value, rule: ((rule[np.uint64(bin_value >> 6)] >> np.uint64(bin_value & 63))
                                        & np.uint64(1)) != 0
    return lambda bin_value, rule: (bin_value <= rule.threshold) | (rule.missing_left &
                                                                     (bin_value == rule.missing_bin))


@njit(cache=True, nogil=True)
def partition(rows, start, end, column, rule, scratch):
    """Partition ``rows[start:end]`` on one thread.

    The bin of the row ``PREFETCH_DISTANCE`` ahead is prefetched: small nodes of a sampled tree
    gather their bins from all over the column. Large nodes (parallel path) read nearly
    consecutive rows, which the hardware prefetcher already streams, so they do without.

    Parameters
    ----------
    rows : ndarray of uint32
        The tree's row list, modified in place.
    start, end : int
        The node's slice.
    column : ndarray of uint8 or uint16, shape (n_rows,)
        The split feature's bins (a row of the column-major bins, or a column of compact
        row-major bins).
    rule : ThresholdRule or ndarray of uint64
        The split (see :func:`goes_left`).
    scratch : ndarray of uint32
        Buffer of at least ``end - start`` entries.

    Returns
    -------
    int
        Number of rows sent left; they now occupy ``rows[start:start + n_left]``.
    """
    left = np.uint64(start)
    right = np.uint64(0)
    for k in range(end - start):
        i = np.uint64(start + k)
        if k + PREFETCH_DISTANCE < end - start:
            prefetch(column, rows[i + np.uint64(PREFETCH_DISTANCE)])
        row = rows[i]
        go = np.uint64(goes_left(column[np.uint64(row)], rule))
        rows[left] = row
        scratch[right] = row
        left += go
        right += np.uint64(1) - go
    # a loop, not ``rows[left:end] = scratch[:right]``: the slice assignment compiles numba's
    # shape-mismatch check with its error message, most of this kernel's compile time
    for k in range(right):
        rows[left + k] = scratch[k]
    return np.int64(left) - start


@njit(cache=True, nogil=True, parallel=True)
def partition_parallel(rows, start, end, column, rule, scratch, n_chunks):
    """Partition ``rows[start:end]`` in ``n_chunks`` parallel chunks; same result as :func:`partition`.

    ``scratch`` must hold at least ``end`` entries (chunk regions use the node's own slice).
    """
    size = (end - start + n_chunks - 1) // n_chunks
    n_left = np.empty(n_chunks, np.int64)  # np.zeros would be a parallel region of its own
    for k in prange(n_chunks):
        chunk_start = start + k * size
        chunk_end = min(end, chunk_start + size)
        lo = np.uint64(chunk_start)
        hi = np.uint64(chunk_end - 1)
        for i in range(chunk_end - chunk_start):
            row = rows[np.uint64(chunk_start + i)]
            go = np.uint64(goes_left(column[np.uint64(row)], rule))
            scratch[lo if go else hi] = row
            lo += go
            hi -= np.uint64(1) - go
        n_left[k] = np.int64(lo) - chunk_start
    left_before = np.empty(n_chunks, np.int64)
    left_before[0] = 0
    for k in range(1, n_chunks):
        left_before[k] = left_before[k - 1] + n_left[k - 1]
    total_left = left_before[n_chunks - 1] + n_left[n_chunks - 1]
    for k in prange(n_chunks):
        chunk_start = start + k * size
        chunk_end = min(end, chunk_start + size)
        n_chunk_left = n_left[k]
        dest = start + left_before[k]
        # unsigned indices: numba wraps negative ones, and LLVM cannot tell these are not, which
        # would keep the copies scalar
        for i in range(n_chunk_left):
            rows[np.uint64(dest + i)] = scratch[np.uint64(chunk_start + i)]
        # right rows of earlier chunks: (chunk_start - start) - left_before[k]
        dest = start + total_left + (chunk_start - start) - left_before[k]
        n_chunk_right = chunk_end - chunk_start - n_chunk_left
        for i in range(n_chunk_right):
            rows[np.uint64(dest + i)] = scratch[np.uint64(chunk_end - 1 - i)]
    return total_left


@njit(cache=True, nogil=True)
def _partition_rows(rows, start, end, column, rule, scratch, n_threads):
    """:func:`partition_parallel` from ``PARTITION_PARALLEL_MIN_ROWS`` rows, else :func:`partition`."""
    if end - start >= PARTITION_PARALLEL_MIN_ROWS and n_threads > 1:
        return partition_parallel(rows, start, end, column, rule, scratch, n_threads)
    return partition(rows, start, end, column, rule, scratch)


@njit(cache=True, nogil=True, parallel=True)
def gather_column(ids, column, out):
    """``out[i] = column[ids[i]]``: one feature's bins of a compact tree's rows, in order
    (parallel, where ``np.take`` is serial)."""
    for i in prange(ids.shape[0]):
        out[i] = column[ids[i]]


@njit(cache=True, nogil=True)
def partition_node(rows, start, end, columns, feature, rule, scratch, n_threads):
    """Partition a node, ``rows[start:end]``, by the split ``rule`` of ``feature`` (see
    :func:`partition`), reading the feature's bins where the tree keeps them.

    ``columns`` is a :class:`~smartboost._kernels.records.PartitionColumns` (see
    ``grower.NodeRows``). When its ``compact_column`` is empty the row list holds row ids and the
    column-major bins are read. Otherwise (a compact tree) it holds positions: feature ``f`` is
    column ``compact_column[f]`` of the compact row-major bins, a strided view, or where that is
    -1 (a sparse feature, or wide rows), the feature's column-major bins gathered at the tree's
    row ``ids`` into row ``f`` of ``gathered`` on the first split on it in the tree
    (``is_gathered[f]`` records it).
    """
    column_major, compact_bins, compact_column = columns.column_major, columns.compact_bins, columns.compact_column
    ids, gathered, is_gathered = columns.ids, columns.gathered, columns.is_gathered
    if compact_column.shape[0] == 0:
        return _partition_rows(rows, start, end, column_major[feature], rule, scratch, n_threads)
    j = compact_column[feature]
    if j >= 0:
        return _partition_rows(rows, start, end, compact_bins[:, j], rule, scratch, n_threads)
    if not is_gathered[feature]:
        gather_column(ids, column_major[feature], gathered[feature])
        is_gathered[feature] = True
    return _partition_rows(rows, start, end, gathered[feature], rule, scratch, n_threads)
