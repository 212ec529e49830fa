"""Tree growth: the Python orchestration of the histogram, split and partition kernels.

One :class:`TreeGrower` serves a whole training run: it owns the buffers (histogram slots,
per-thread histograms, partition scratch, fixed-point gradients), allocated when first needed
and reused by every tree. Each call to :meth:`TreeGrower.grow` builds one tree on a list of row
ids, which it partitions in place so that every leaf ends up owning a contiguous segment; the
caller updates training scores through those segments.

Growth policies share one loop over a priority queue of splittable leaves:

- ``leafwise`` (LightGBM): the leaf with the largest gain is split next;
- ``depthwise`` (XGBoost): shallower leaves first, by gain within a level.

Both stop at ``num_leaves`` leaves (0: no limit) and never split below ``max_depth``.
For each split the smaller child's histogram is built from its rows and the larger child's is
the parent's minus it (ALGORITHMS.md 2), in place in the parent's slot.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from ._common import FIXED_DTYPE, HIST_PARALLEL_MIN_ROWS, INDEX_DTYPE, PARTITION_PARALLEL_MIN_ROWS, ROW_FIXED_DTYPE
from ._kernels.gradients import fixed_point_units, to_fixed_point
from ._kernels.histogram import build_histogram, build_histogram_parallel
from ._kernels.partition import partition, partition_parallel
from ._kernels.split import SPLIT_PARAMS_ORDER, find_best_split, leaf_values, subtract_and_find_splits
from .binning import BinnedData
from .selection import FeatureSelector
from .tree import Tree

__all__ = ["TreeGrower", "GrownTree"]


@dataclass
class GrownTree:
    """A tree and where its leaves' rows sit in the row list it was grown on.

    Attributes
    ----------
    tree : Tree
    leaf_start, leaf_end : ndarray of int64
        Segment of the row list held by each leaf (in ``leaf_nodes`` order).
    leaf_nodes : ndarray of int64
        Node id of each leaf.
    """

    tree: Tree
    leaf_start: np.ndarray
    leaf_end: np.ndarray
    leaf_nodes: np.ndarray

    @property
    def leaf_values(self) -> np.ndarray:
        """Output value of each leaf, in segment order."""
        return self.tree.value[self.leaf_nodes]


class _Node:
    """Growth state of one node (Python side only)."""

    __slots__ = ("id", "start", "end", "n_rows", "depth", "g", "h", "slot", "split")

    def __init__(self, node_id: int, start: int, end: int, depth: int, g: int, h: int) -> None:
        self.id = node_id
        self.start = start
        self.end = end
        self.n_rows = end - start
        self.depth = depth
        self.g = g
        self.h = h
        self.slot = -1
        self.split: tuple | None = None


class TreeGrower:
    """Grows trees on one binned training set.

    Parameters
    ----------
    data : BinnedData
        The training data.
    params : dict
        Resolved parameters (``num_leaves``, ``max_depth``, ``grow_policy``, ``min_data_in_leaf``,
        ``min_sum_hessian_in_leaf``, ``lambda_l1``, ``lambda_l2``, ``min_gain_to_split``).
    n_threads : int
        Threads of the parallel kernels (results do not depend on it).
    """

    def __init__(self, data: BinnedData, params: dict, n_threads: int) -> None:
        self.data = data
        mapper = data.mapper
        self.n_bins = mapper.n_bins
        self.layout = data.histogram_layout
        self.offsets = self.layout.offsets
        self.n_cells = self.layout.n_cells
        self.usable = data.usable_features
        self.thresholds = [mapper.thresholds(f) for f in range(mapper.n_features)]
        self.split_params = np.array([params[name] for name in SPLIT_PARAMS_ORDER], np.float64)
        self.lambda_l1 = params["lambda_l1"]
        self.lambda_l2 = params["lambda_l2"]
        self.min_rows_to_split = max(2, 2 * params["min_data_in_leaf"])
        self.min_hess_to_split = 2.0 * params["min_sum_hessian_in_leaf"]
        depth = params["max_depth"]
        self.max_depth = depth if depth > 0 else np.iinfo(np.int64).max
        leaves = params["num_leaves"]
        self.max_leaves = leaves if leaves > 0 else np.iinfo(np.int64).max
        self.depthwise = params["grow_policy"] == "depthwise"
        self.n_threads = n_threads
        n = data.n_rows
        self.gh = np.zeros((n, 2), ROW_FIXED_DTYPE)
        self.scratch = np.empty(n, INDEX_DTYPE)
        self.thread_hists = np.empty((n_threads, self.n_cells, 2), FIXED_DTYPE)
        self._slots: list[np.ndarray] = []
        self._free_slots: list[int] = []
        self.selector: FeatureSelector | None = None  # the current tree's candidate draws (RGBM)
        self.iteration = 0
        self.tree_usable, self.columns = self.usable, None

    # -- histogram slots -------------------------------------------------------------------

    def _take_slot(self) -> int:
        if self._free_slots:
            return self._free_slots.pop()
        self._slots.append(np.empty((self.n_cells, 2), FIXED_DTYPE))
        return len(self._slots) - 1

    def _release(self, node: _Node) -> None:
        if node.slot >= 0:
            self._free_slots.append(node.slot)
            node.slot = -1

    # -- kernels ---------------------------------------------------------------------------

    def _build_histogram(self, rows: np.ndarray, node: _Node) -> np.ndarray:
        node.slot = self._take_slot()
        hist = self._slots[node.slot]
        if node.n_rows >= HIST_PARALLEL_MIN_ROWS and self.n_threads > 1:
            build_histogram_parallel(rows, node.start, node.end, self.columns, *self.layout.arrays, self.gh, node.g,
                                     node.h, hist, self.thread_hists)
        else:
            build_histogram(rows, node.start, node.end, self.columns, *self.layout.arrays, self.gh, node.g, node.h,
                            hist)
        return hist

    def _features(self, node: _Node) -> np.ndarray:
        """The features ``node`` may split on (RGBM's per-node draw, or the tree's set)."""
        if self.selector is not None and self.selector.per_node:
            return self.selector.draw(self.iteration, node.id)
        return self.tree_usable

    def _partition(self, rows: np.ndarray, node: _Node) -> int:
        feature, bin_threshold, missing_left = node.split[0], node.split[1], node.split[2]
        column = self.data.column_major[feature]
        missing_bin = self.n_bins[feature]
        if node.n_rows >= PARTITION_PARALLEL_MIN_ROWS and self.n_threads > 1:
            return partition_parallel(rows, node.start, node.end, column, bin_threshold, missing_left,
                                      missing_bin, self.scratch, self.n_threads)
        return partition(rows, node.start, node.end, column, bin_threshold, missing_left, missing_bin,
                         self.scratch)

    def _can_split(self, node: _Node) -> bool:
        return (node.depth < self.max_depth and node.n_rows >= self.min_rows_to_split
                and node.h * self.h_unit >= self.min_hess_to_split)

    # -- growth ----------------------------------------------------------------------------

    def grow(self, rows: np.ndarray, grad: np.ndarray, hess: np.ndarray, weight: np.ndarray,
             learning_rate: float, selector: FeatureSelector | None = None, iteration: int = 0) -> GrownTree:
        """Grow one tree.

        Parameters
        ----------
        rows : ndarray of uint32
            Ids of the rows to grow on (sorted); partitioned in place, leaf by leaf.
        grad, hess : ndarray of float64, shape (n_rows_total,)
            Per-row gradients and hessians, indexed by row id.
        weight : ndarray of float64, shape (n_rows_total,)
            Per-row weights, indexed by row id.
        learning_rate : float
            Shrinkage applied to the node values.
        selector : FeatureSelector, optional
            Draws the candidate features (RGBM); None or an inactive one allows every feature.
        iteration : int
            The iteration, keying the selector's draws.

        Returns
        -------
        GrownTree
        """
        self.selector = selector if selector is not None and selector.active else None
        self.iteration = iteration
        self.tree_usable, self.columns = self.usable, None
        if self.selector is not None and not self.selector.per_node:
            self.tree_usable = self.selector.draw(iteration)
            self.columns = self.layout.dense_columns(self.tree_usable)
        self.g_unit, self.h_unit = fixed_point_units(rows, grad, hess, weight)
        g_root, h_root = to_fixed_point(rows, grad, hess, weight, self.g_unit, self.h_unit, self.gh)
        nodes = [_Node(0, 0, rows.shape[0], 0, g_root, h_root)]
        split_of: dict[int, tuple] = {}   # node id -> (feature, bin, missing_left, gain, left id)
        heap: list[tuple] = []
        root = nodes[0]
        if self._can_split(root) and self.max_leaves > 1:
            hist = self._build_histogram(rows, root)
            root.split = find_best_split(hist, self.offsets, self.n_bins, self._features(root), root.g, root.h,
                                         root.n_rows, self.g_unit, self.h_unit, self.split_params)
            self._push_or_release(heap, root)
        n_leaves = 1
        while heap and n_leaves < self.max_leaves:
            node = heapq.heappop(heap)[-1]
            feature, bin_threshold, missing_left, gain, gl, hl = node.split
            n_left = self._partition(rows, node)
            left = _Node(len(nodes), node.start, node.start + n_left, node.depth + 1, gl, hl)
            right = _Node(len(nodes) + 1, node.start + n_left, node.end, node.depth + 1,
                          node.g - gl, node.h - hl)
            nodes += [left, right]
            split_of[node.id] = (feature, bin_threshold, missing_left, gain, left.id)
            n_leaves += 1
            self._find_children_splits(rows, node, left, right, room=n_leaves < self.max_leaves)
            self._push_or_release(heap, left)
            self._push_or_release(heap, right)
        for entry in heap:
            self._release(entry[-1])
        return self._pack(nodes, split_of, learning_rate)

    def _push_or_release(self, heap: list, node: _Node) -> None:
        """Queue a node that has a valid split; free the histogram of one that has none."""
        if node.split is None or node.split[0] < 0:
            self._release(node)
            return
        gain = node.split[3]
        key = (node.depth, -gain, node.id) if self.depthwise else (-gain, node.id)
        heapq.heappush(heap, (*key, node))

    def _find_children_splits(self, rows: np.ndarray, parent: _Node, left: _Node, right: _Node,
                              room: bool) -> None:
        """Histograms (build smaller, subtract for larger) and best splits of the two children."""
        small, large = (left, right) if left.n_rows <= right.n_rows else (right, left)
        scan_small = room and self._can_split(small)
        scan_large = room and self._can_split(large)
        if not (scan_small or scan_large):
            self._release(parent)
            return
        small_hist = self._build_histogram(rows, small)
        large.slot, parent.slot = parent.slot, -1
        small.split, large.split = subtract_and_find_splits(
            self._slots[large.slot], small_hist, self.offsets, self.n_bins, self._features(small),
            self._features(large), small.g, small.h, small.n_rows, scan_small, large.g, large.h, large.n_rows,
            scan_large, self.g_unit, self.h_unit, self.split_params)
        if not scan_small:
            small.split = None
        if not scan_large:
            large.split = None

    def _pack(self, nodes: list[_Node], split_of: dict[int, tuple], learning_rate: float) -> GrownTree:
        n = len(nodes)
        feature = np.full(n, -1, np.int32)
        bin_threshold = np.zeros(n, np.int32)
        threshold = np.zeros(n, np.float64)
        missing_left = np.zeros(n, np.bool_)
        left = np.full(n, -1, np.int32)
        right = np.full(n, -1, np.int32)
        gain = np.zeros(n, np.float64)
        for node_id, (f, b, ml, g, left_id) in split_of.items():
            feature[node_id], bin_threshold[node_id], missing_left[node_id], gain[node_id] = f, b, ml, g
            threshold[node_id] = self.thresholds[f][b]
            left[node_id], right[node_id] = left_id, left_id + 1
        g_sum = np.array([node.g for node in nodes], np.int64)
        h_sum = np.array([node.h for node in nodes], np.int64)
        value = np.empty(n, np.float64)
        leaf_values(g_sum, h_sum, self.g_unit, self.h_unit, self.lambda_l1, self.lambda_l2, value)
        value *= learning_rate
        tree = Tree(feature=feature, threshold=threshold, bin_threshold=bin_threshold,
                    missing_left=missing_left, left=left, right=right, value=value, gain=gain,
                    hessian=h_sum * self.h_unit, count=np.array([node.n_rows for node in nodes], np.int64))
        leaves = [node for node in nodes if node.id not in split_of]
        return GrownTree(tree, np.array([node.start for node in leaves], np.int64),
                         np.array([node.end for node in leaves], np.int64),
                         np.array([node.id for node in leaves], np.int64))
