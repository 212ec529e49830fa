"""Growth of one tree on the rows of one machine, in one compiled call.

``grower.TreeGrower`` grows a tree from a row source through a Python loop: a split is a few
kernel calls (partition, the smaller child's histogram, subtraction and both children's scans)
and some bookkeeping in between. For rows held by one process (``grower.NodeRows``),
:func:`grow_tree` runs the same loop compiled, calling the same kernels, and the trees are the
same (RGBM's per-node draws included: both loops draw each node's candidates from the same
random stream, keyed by iteration and node id). What it saves is the Python between the
kernels and their calls' dispatch: 1M x 28 rows, 255 leaves, MVS at 0.1 (docs/internals.md).

The loop (ALGORITHMS.md 2):

- the root's histogram is built and its best split found, if it may split;
- the open leaf to split next is the one with the largest gain (leaf-wise), or the shallowest,
  then the largest gain (depth-wise); ties go to the lowest node id. That is the order of the
  Python loop's heap; an open leaf is found by a scan of the open leaves (at most a few hundred);
- its rows are partitioned into its children, node ids ``n_nodes`` (left) and ``n_nodes + 1``;
- when a child may still be split (room for more leaves, depth left, and enough hessian on
  one side), the child with fewer rows gets its histogram built into a free slot of the pool,
  the other one inherits the parent's slot and becomes parent minus it, and both are scanned
  (:func:`subtract_and_find_splits`); otherwise the parent's slot is freed;
- a child with a valid split stays open, holding its histogram; the others free theirs.

Histogram slots are rows of ``pool``; a tree holds at most one per leaf at a time.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.extending import overload

from .histogram import node_histogram
from .partition import partition_node
from .selection import draw_key, draw_node_candidates
from .split import find_best_split, subtract_and_find_splits


@njit(cache=True, nogil=True)
def can_split(depth, n_rows, h_fixed, h_unit, max_depth, min_rows_to_split, min_hess_to_split):
    """Whether a node may be split at all: depth left, and enough rows and hessian for two
    children (``min_rows_to_split`` = 2 ``min_data_in_leaf``, ``min_hess_to_split`` = 2
    ``min_sum_hessian_in_leaf``)."""
    return depth < max_depth and n_rows >= min_rows_to_split and h_fixed * h_unit >= min_hess_to_split


@njit(cache=True, nogil=True)
def wants_histogram(room, child_depth, hl_fixed, hr_fixed, h_unit, max_depth, min_hess_to_split):
    """Whether a split should build a child's histogram: unless no child can be split, whatever
    the row counts turn out to be (``room``: whether the tree may grow after this split)."""
    return room and child_depth < max_depth and max(hl_fixed, hr_fixed) * h_unit >= min_hess_to_split


@njit(cache=True, nogil=True)
def _comes_first(a, b, gain, depth, depthwise):
    """Whether open node ``a`` is split before open node ``b``."""
    if depthwise and depth[a] != depth[b]:
        return depth[a] < depth[b]
    if gain[a] != gain[b]:
        return gain[a] > gain[b]
    return a < b


@njit(cache=True, nogil=True)
def _draw(node, row, node_draws, packed_row):
    """Draw the candidates of ``node`` into row ``row`` of ``node_draws``' buffers (Type 1 pairs
    into ``packed_row`` too, unless it is None); return the row of features."""
    stream, iteration, t, pool, n_thresholds, features, _, chosen, rest = node_draws
    draw_node_candidates(draw_key(stream, iteration, node), t, pool, n_thresholds, features[row], packed_row, chosen,
                         rest)
    return features[row]


def _candidates_of(node, row, usable, candidates, node_draws, packed):
    """The features ``node`` may split on and their thresholds (None: all): the tree's
    (``node_draws`` None), or the node's own draw into row ``row`` of ``node_draws``' buffers
    (``packed``: its Type 1 buffer, or None for Types 2 and 3).

    Which of the three applies is decided by the arguments' types, when numba compiles the
    caller (:func:`_candidates_of_types`): a branch on ``packed is None`` would return the
    thresholds as an optional array, which the split kernels' parallel loops misread as None
    (every threshold scanned; seen with numba 0.68)."""


@overload(_candidates_of, jit_options={"cache": True, "nogil": True})
def _candidates_of_types(node, row, usable, candidates, node_draws, packed):
    """The implementation of :func:`_candidates_of` for the argument types."""
    if isinstance(node_draws, types.NoneType):
        return lambda node, row, usable, candidates, node_draws, packed: (usable, candidates)

    if isinstance(packed, types.NoneType):  # Types 2 and 3: features only (``candidates`` is None)
        return lambda node, row, usable, candidates, node_draws, packed: (_draw(node, row, node_draws, None),
                                                                            candidates)
    return lambda node, row, usable, candidates, node_draws, packed: (_draw(node, row, node_draws, packed[row]),
                                                                        packed[row])


@njit(cache=True, nogil=True)
def grow_tree(rows, scratch, gh, thread_hists, layout, column_blocks, columns, offsets, n_bins, built, usable,
              candidates, node_draws, packed, params, scan_scratch, pool, g_unit, h_unit, g_root, h_root, max_leaves,
              max_depth, min_rows_to_split, min_hess_to_split, depthwise):
    """Grow one tree on the row list ``rows`` (partitioned in place, node by node).

    Parameters
    ----------
    rows, scratch, gh, thread_hists, layout, column_blocks, columns
        The tree's rows, as ``grower.NodeRows`` holds them: the row list and the partition's
        scratch, the rows' fixed-point (g, h), the per-thread histograms (one per thread: they
        set the thread count), the histogram layout (:func:`node_histogram`), whether
        histograms go by blocks of columns, and the split features' bins
        (:func:`partition_node`).
    offsets, n_bins, built, usable, candidates, params, scan_scratch
        As :func:`subtract_and_find_splits`: the histogram cells, the features whose
        histograms are built, those the nodes may split on and their thresholds (None: all).
    node_draws, packed : tuple or None, ndarray or None
        Candidates drawn per node (``selection.FeatureSelector.node_draws``), which replace
        ``usable`` and ``candidates``, and its Type 1 buffer (``node_draws[6]``, passed apart:
        its type picks :func:`_candidates_of`'s implementation); None: ``usable`` and
        ``candidates`` hold for every node.
    pool : ndarray of int64, shape (>= leaf bound, n_cells, 2)
        Histogram slots, at least as many as the tree may have leaves.
    g_unit, h_unit : float
        The fixed-point units.
    g_root, h_root : int
        The root's fixed-point sums.
    max_leaves, max_depth, min_rows_to_split, min_hess_to_split : int, int, int, float
        The limits (``TreeGrower``).
    depthwise : bool
        The growth policy.

    Returns
    -------
    tuple
        ``(feature, bin_threshold, missing_left, gain, left, g, h, n_rows, start, end)``, one
        entry per node (node ``k`` is entry ``k``): the split of each inner node (feature -1
        and left -1 at leaves; the right child is ``left + 1``), each node's fixed-point sums
        and rows, and its slice of the row list.
    """
    n_root = rows.shape[0]
    n_threads = thread_hists.shape[0]
    capacity = 2 * pool.shape[0] + 1
    # each node's best split, from when its histogram is scanned (feature -1: none), kept at
    # the nodes that are split, with its left child's sums
    feature, left = np.full((2, capacity), -1, np.int32)
    bin_threshold = np.zeros(capacity, np.int32)
    missing_left = np.zeros(capacity, np.bool_)
    gain = np.zeros(capacity, np.float64)
    # fixed-point sums, rows, slice of the row list and depth of each node
    gl_best, hl_best, g, h, n_rows, start, end, depth = np.zeros((8, capacity), np.int64)
    slot = np.full(capacity, -1, np.int64)
    free = np.arange(pool.shape[0])[::-1].copy()  # free slots, a stack
    n_free = pool.shape[0]
    open_nodes = np.empty(capacity, np.int64)
    n_open = 0

    g[0], h[0], n_rows[0], end[0] = g_root, h_root, n_root, n_root
    n_nodes = 1
    # depth[0], start[0], np.int64(0): no literal zeros, which compile the callee again (split.scan_feature)
    if max_leaves > 1 and can_split(depth[0], n_root, h_root, h_unit, max_depth, min_rows_to_split, min_hess_to_split):
        n_free -= 1
        slot[0] = free[n_free]
        node_histogram(rows, start[0], n_root, layout, gh, g_root, h_root, pool[slot[0]], thread_hists, column_blocks)
        usable_root, candidates_root = _candidates_of(np.int64(0), np.int64(0), usable, candidates, node_draws, packed)
        (feature[0], bin_threshold[0], missing_left[0], gain[0], gl_best[0],
         hl_best[0]) = find_best_split(pool[slot[0]], offsets, n_bins, usable_root, candidates_root, g_root, h_root,
                                       n_root, g_unit, h_unit, params, scan_scratch)
        if feature[0] >= 0:
            open_nodes[0] = 0
            n_open = 1
        else:
            free[n_free] = slot[0]
            n_free += 1
    n_leaves = 1
    while n_open > 0 and n_leaves < max_leaves:
        k_best = 0
        for k in range(1, n_open):
            if _comes_first(open_nodes[k], open_nodes[k_best], gain, depth, depthwise):
                k_best = k
        parent = open_nodes[k_best]
        n_open -= 1
        open_nodes[k_best] = open_nodes[n_open]
        n_leaves += 1

        f = feature[parent]
        gl, hl = gl_best[parent], hl_best[parent]
        gr, hr = g[parent] - gl, h[parent] - hl
        child_depth = depth[parent] + 1
        wanted = wants_histogram(n_leaves < max_leaves, child_depth, hl, hr, h_unit, max_depth, min_hess_to_split)
        new_slot = -1
        if wanted:
            n_free -= 1
            new_slot = free[n_free]
        a, b = n_nodes, n_nodes + 1
        n_nodes += 2
        n_left = partition_node(rows, start[parent], end[parent], columns, f, bin_threshold[parent],
                                missing_left[parent], n_bins[f], scratch, n_threads)
        left[parent] = a
        start[a], end[a], start[b], end[b] = start[parent], start[parent] + n_left, start[parent] + n_left, end[parent]
        n_rows[a], n_rows[b] = n_left, n_rows[parent] - n_left
        g[a], h[a], g[b], h[b] = gl, hl, gr, hr
        depth[a] = depth[b] = child_depth
        if not wanted:
            free[n_free] = slot[parent]
            n_free += 1
            continue
        small, large = (a, b) if n_rows[a] <= n_rows[b] else (b, a)
        node_histogram(rows, start[small], end[small], layout, gh, g[small], h[small], pool[new_slot], thread_hists,
                       column_blocks)
        slot[small], slot[large], slot[parent] = new_slot, slot[parent], -1
        scan_small = can_split(depth[small], n_rows[small], h[small], h_unit, max_depth, min_rows_to_split,
                               min_hess_to_split)
        scan_large = can_split(depth[large], n_rows[large], h[large], h_unit, max_depth, min_rows_to_split,
                               min_hess_to_split)
        usable_small, candidates_small = _candidates_of(small, np.int64(0), usable, candidates, node_draws, packed)
        usable_large, candidates_large = _candidates_of(large, np.int64(1), usable, candidates, node_draws, packed)
        split_small, split_large = subtract_and_find_splits(
            pool[slot[large]], pool[slot[small]], offsets, n_bins, built, usable_small, candidates_small,
            usable_large, candidates_large, g[small], h[small], n_rows[small], scan_small, g[large], h[large],
            n_rows[large], scan_large, g_unit, h_unit, params, scan_scratch)
        if scan_small:
            feature[small], bin_threshold[small], missing_left[small], gain[small], gl_best[small], \
                hl_best[small] = split_small
        if scan_large:
            feature[large], bin_threshold[large], missing_left[large], gain[large], gl_best[large], \
                hl_best[large] = split_large
        for child in (a, b):
            if feature[child] >= 0:
                open_nodes[n_open] = child
                n_open += 1
            else:
                free[n_free] = slot[child]
                n_free += 1
                slot[child] = -1
    leaf = left[:n_nodes] < 0  # scanned but not split: no split to keep
    feature[:n_nodes][leaf] = -1
    bin_threshold[:n_nodes][leaf] = 0
    missing_left[:n_nodes][leaf] = False
    gain[:n_nodes][leaf] = 0.0
    # copies: the tree keeps its arrays, which would otherwise hold on to these blocks of
    # ``capacity`` entries (one per possible node: 8,193 for max_depth 12 without a leaf limit)
    return (feature[:n_nodes].copy(), bin_threshold[:n_nodes].copy(), missing_left[:n_nodes].copy(),
            gain[:n_nodes].copy(), left[:n_nodes].copy(), g[:n_nodes].copy(), h[:n_nodes].copy(),
            n_rows[:n_nodes].copy(), start[:n_nodes].copy(), end[:n_nodes].copy())
