"""A ``smartboost.dask`` worker's part of the splits of a tree grown together, on its own rows.

Every worker runs the growth loop (``_kernels.grow``) on the histograms of every worker's rows
summed; where the loop stops for its pending splits, each worker partitions its own rows of the
nodes and builds its own histograms of the children (:func:`split_own_rows`), whose cells of each
worker's share of the features are then sent to that worker (:func:`take_shares`) and summed
there (``dask._peers.Peers.reduce_scatter``), into the loop's histogram slots
(:func:`put_share`). A worker keeps its own histogram of every node the loop may split (its
*own slots*), so that it derives one child's from its parent's by subtraction, as one machine
does with the summed ones.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .grow import partition_by_split
from .histogram import node_histogram
from .partition import goes_left
from .split import split_sums


@njit(cache=True, nogil=True)
def _left_sums(hist, first, n_bins, feature, bin_threshold, missing_left, left_set, categorical):
    """The fixed-point sums of the left child of a split, from its parent's histogram ``hist``
    (``first``: the feature's first cell; a categorical feature's left bins are ``left_set``;
    a numeric one's as the split scan adds them up, :func:`~smartboost._kernels.split.split_sums`)."""
    if categorical is not None:
        if categorical[feature]:
            g = h = np.int64(0)
            for b in range(n_bins + 1):
                if goes_left(b, left_set):
                    g += hist[first + b, 0]
                    h += hist[first + b, 1]
            return g, h
    _, g, h = split_sums(hist, first, n_bins, bin_threshold, missing_left, np.int64(0))
    return g, h


@njit(cache=True, nogil=True)
def split_own_rows(splits, pending, rows, n_bins, offsets, categorical, own, slot_of, sums, free, seg_start, seg_end,
                   counts, lefts):
    """Do the loop's pending splits on this worker's rows.

    For split ``j`` (row ``j`` of ``splits``, ``records.SPLIT_ROW``, and of ``pending``, the
    loop's ``GrowthState.pending``): partition the rows of its node, write its children's row
    counts into ``counts[j]``, their slices of the row list into ``seg_start`` and ``seg_end``,
    and their fixed-point sums into ``sums``; when the loop wants the children's histograms (a
    slot in ``pending[j, 1]``), build the histogram of the child with fewer of these rows into a
    free own slot and turn the parent's into the other child's by subtraction, and list the own
    slot of the left child's in ``lefts``; else free the parent's. Returns how many are listed.

    Parameters
    ----------
    splits, pending : ndarray of int64
    rows : LocalRows
        This worker's rows of the tree (``grower.NodeRows.local_rows``).
    n_bins, offsets : ndarray of int64
        Bins and first histogram cell of every feature.
    categorical : ndarray of bool or None
        The features whose splits send a set of bins left (None: no categorical feature).
    own : ndarray of int64, shape (slots, n_cells, 2)
        This worker's histograms of the open nodes.
    slot_of : ndarray of int64, shape (nodes,)
        The own slot of each node.
    sums : ndarray of int64, shape (nodes, 2)
        This worker's fixed-point sums of each node.
    free : ndarray of int64
        A stack of the free own slots: ``free[0]`` its size, ``free[1:]`` its slots.
    seg_start, seg_end : ndarray of int64, shape (nodes,)
        Each node's slice of the row list.
    counts : ndarray of int64, shape (k, 2)
    lefts : ndarray of int64, shape (k,)
        Outputs.
    """
    left_set = np.empty(4, np.uint64)
    n_lefts = 0
    for j in range(splits.shape[0]):
        node, left, feature, bin_threshold = splits[j, 0], splits[j, 1], splits[j, 2], splits[j, 3]
        missing_left = splits[j, 4] != 0
        for w in range(4):
            left_set[w] = np.uint64(splits[j, 10 + w])
        right = left + 1
        parent = own[slot_of[node]]
        gl, hl = _left_sums(parent, offsets[feature], n_bins[feature], feature, bin_threshold, missing_left, left_set,
                            categorical)
        sums[left, 0], sums[left, 1] = gl, hl
        sums[right, 0], sums[right, 1] = sums[node, 0] - gl, sums[node, 1] - hl
        start, end = seg_start[node], seg_end[node]
        n_left = partition_by_split(rows, start, end, feature, bin_threshold, missing_left, left_set, n_bins,
                                    categorical)
        seg_start[left], seg_end[left] = start, start + n_left
        seg_start[right], seg_end[right] = start + n_left, end
        counts[j, 0], counts[j, 1] = n_left, end - start - n_left
        if pending[j, 1] < 0:
            free[0] += 1
            free[free[0]] = slot_of[node]
            continue
        small = left if n_left <= end - start - n_left else right
        slot = free[free[0]]
        free[0] -= 1
        hist = own[slot]
        node_histogram(rows.rows, seg_start[small], seg_end[small], rows.histogram, rows.gh, sums[small, 0],
                       sums[small, 1], hist, rows.thread_hists, rows.column_blocks)
        for cell in range(parent.shape[0]):
            parent[cell, 0] -= hist[cell, 0]
            parent[cell, 1] -= hist[cell, 1]
        slot_of[small], slot_of[left + right - small] = slot, slot_of[node]
        lefts[n_lefts] = slot_of[left]
        n_lefts += 1
    return n_lefts


@njit(cache=True, nogil=True)
def take_shares(own, slots, runs, counts, out):
    """The message to each worker: ``counts`` (flattened), then for each of ``slots`` (own
    slots, in order) the cells of that worker's share.

    ``runs`` (int64, shape (n_runs, 3)) lists each worker's cell runs as rows ``(worker, first
    cell, end cell)``, by worker; ``out[w]`` receives worker ``w``'s message (its first
    ``len(counts) + 2 * len(slots) * cells of w`` entries)."""
    flat_counts = counts.reshape(-1)
    for w in range(out.shape[0]):
        message = out[w]
        for i in range(flat_counts.shape[0]):
            message[i] = flat_counts[i]
        at = flat_counts.shape[0]
        for s in range(slots.shape[0]):
            cells = own[slots[s]].reshape(-1)
            for r in range(runs.shape[0]):
                if runs[r, 0] == w:
                    first, n = 2 * runs[r, 1], 2 * (runs[r, 2] - runs[r, 1])
                    for i in range(n):  # a plain copy, which LLVM vectorises
                        message[at + i] = cells[first + i]
                    at += n


@njit(cache=True, nogil=True)
def put_share(flat, at, runs, worker, hist):
    """Write worker ``worker``'s share of a histogram from ``flat[at:]`` (laid out as
    :func:`take_shares` does) into the cells of ``hist``; returns where the next one starts."""
    cells = hist.reshape(-1)
    for r in range(runs.shape[0]):
        if runs[r, 0] == worker:
            first, n = 2 * runs[r, 1], 2 * (runs[r, 2] - runs[r, 1])
            for i in range(n):
                cells[first + i] = flat[at + i]
            at += n
    return at


@njit(cache=True, nogil=True)
def put_shares(flat, runs, worker, pool, pending, splits):
    """The loop's answers to its pending splits from the summed message ``flat`` (laid out as
    :func:`take_shares` does: the children's row counts, then the share of each left child's
    histogram that is wanted): each left child's rows into ``pending[j, 2]``, its share into
    the loop's histogram slot ``pool[pending[j, 1]]`` and its id into ``pending[j, 3]`` (-1 when
    no histogram is wanted)."""
    at = 2 * pending.shape[0]
    for j in range(pending.shape[0]):
        pending[j, 2] = flat[2 * j]
        if pending[j, 1] < 0:
            pending[j, 3] = -1
            continue
        at = put_share(flat, at, runs, worker, pool[pending[j, 1]])
        pending[j, 3] = splits[j, 1]


@njit(cache=True, nogil=True)
def best_of_workers(every, splits):
    """Write into ``splits`` (n, len(SPLIT_ROW)) each node's best split over the workers' rows
    ``every`` (workers, n, len(SPLIT_ROW)): the valid one (feature >= 0) of the largest gain,
    ties to the lowest worker, whose share has the lower features (one machine's scan gives
    ties to the lowest feature); the first worker's when none is valid."""
    for j in range(splits.shape[0]):
        best, best_gain = 0, -np.inf
        for w in range(every.shape[0]):
            if every[w, j, 2] >= 0:
                gain = every[w, j][5:6].view(np.float64)[0]
                if gain > best_gain:
                    best, best_gain = w, gain
        for c in range(splits.shape[1]):
            splits[j, c] = every[best, j, c]
