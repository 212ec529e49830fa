"""Tree growth: the Python orchestration of the histogram, split and partition kernels.

Growth is split in two, so that the rows of a tree may live on one machine or on many:

- :class:`TreeGrower` makes every decision: which leaf to split next, the best split of a node
  from its histogram, the leaf values. It owns the histograms of the open leaves and never reads
  a row.
- A *row source* owns the rows: the tree's fixed-point gradients, the partition of its row list
  into nodes, and the histograms built from them. :class:`NodeRows` is the source of one
  machine; :mod:`smartboost.dask` drives one per worker and sums their histograms, which is
  exact (integer cells), so both grow the same trees.

A row source answers three calls (the protocol :class:`RowSource`):

- ``begin_tree(features)``: fix the tree's fixed-point units, return them and the root's sums;
- ``root_histogram(g, h, out)``: the root's histogram;
- ``split(node, left, right, feature, bin, missing_left, left_sums, right_sums, out)``: send the
  node's rows to its children and, when ``out`` is given, write one child's histogram into it;
  return both children's row counts and which child that was. The grower derives the other child
  as parent minus it (ALGORITHMS.md 2), fused with both children's split scans.
- ``split_many(requests)``: ``split`` of every node of a depth-wise level at once (one round
  trip for a distributed source).

Growth policies share one loop over a priority queue of splittable leaves:

- ``leafwise`` (LightGBM): the leaf with the largest gain is split next;
- ``depthwise`` (XGBoost): shallower leaves first, by gain within a level.

Both stop at ``num_leaves`` leaves (0: no limit) and never split below ``max_depth``.

For rows held by this process (:class:`NodeRows`) the same loop runs compiled
(``_kernels.grow.grow_tree``) on the same kernels, and grows the same trees (tested equal); the
Python loop here serves rows spread over machines.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ._common import (COMPACT_ROWS_FRACTION, FIXED_DTYPE, HIST_COLUMNS_PER_THREAD, INDEX_DTYPE, ROW_FIXED_DTYPE,
                      WIDE_ROW_BYTES)
from ._kernels.gradients import fixed_point_units, to_fixed_point
from ._kernels.grow import can_split, grow_tree, wants_histogram
from ._kernels.histogram import gather_columns, gather_rows, gather_sparse_rows, node_histogram
from ._kernels.partition import partition_node
from ._kernels.random import fill_row_ids
from ._kernels.split import SPLIT_PARAMS_ORDER, find_best_split, leaf_values, split_scratch, subtract_and_find_splits
from .binning import BinMapper, BinnedData, histogram_cells
from .errors import DataError
from .selection import FeatureSelector
from .tree import Tree

__all__ = ["GrownTree", "NodeRows", "RowSource", "TreeGrower"]

_MAX_POOL_BYTES = 1 << 32
"""The most virtual memory the compiled loop's histogram slots may take (one per leaf the tree
may have); trees that could need more (no leaf or depth limit) are grown by the Python loop."""


@dataclass
class GrownTree:
    """A tree and the node ids of its leaves.

    Attributes
    ----------
    tree : Tree
    leaf_nodes : ndarray of int64
        Node id of each leaf, in the order of the row source's leaf segments.
    """

    tree: Tree
    leaf_nodes: np.ndarray

    @property
    def leaf_values(self) -> np.ndarray:
        """Output value of each leaf, in ``leaf_nodes`` order."""
        return self.tree.value[self.leaf_nodes]


class RowSource(Protocol):
    """The rows a tree is grown on, as :class:`TreeGrower` sees them (see the module docstring)."""

    def begin_tree(self, features: np.ndarray | None) -> tuple[float, float, int, int, int]:
        """Start a tree whose histograms need only the ``features`` (bool mask; None: all).

        Returns ``(g_unit, h_unit, g_root, h_root, n_root)``: the fixed-point units and the
        root's fixed-point sums and row count.
        """

    def root_histogram(self, g: int, h: int, out: np.ndarray) -> None:
        """Write the root's histogram (its sums are ``g``, ``h``) into ``out``."""

    def split(self, node: int, left: int, right: int, feature: int, bin_threshold: int, missing_left: bool,
              left_sums: tuple[int, int], right_sums: tuple[int, int],
              out: np.ndarray | None) -> tuple[int, int, int]:
        """Split ``node`` into ``left`` and ``right``; returns ``(n_left, n_right, built)``, where
        ``built`` is the child whose histogram was written into ``out`` (-1 when ``out`` is None)."""

    def split_many(self, requests: list[tuple]) -> list[tuple[int, int, int]]:
        """:meth:`split` of several nodes, none a child of another (a depth-wise level), in order;
        each request is the tuple of :meth:`split`'s arguments."""


class NodeRows:
    """The rows of the tree being grown on one machine: a row list partitioned node by node.

    The tree's rows are given by :meth:`set_rows`; :meth:`split` partitions a node's segment of
    the row list in place (stable), so that every leaf ends up owning a contiguous segment
    (:meth:`segments`, the rows' ids by :meth:`row_ids`), through which the caller updates the
    training scores. Buffers (fixed-point gradients, partition scratch, per-thread histograms)
    are allocated once.

    A tree grown on a sample of the rows (at most ``COMPACT_ROWS_FRACTION`` of them) first
    copies its rows' bins, in order, into a compact row-major array, and its row list then holds
    positions in that array instead of row ids: histograms and partitions read a few megabytes
    that stay in cache instead of gathering from all over the data (1M x 28 rows sampled at
    0.1: see docs/sampling.md). Trees on more rows read the data's own bins; when they need a
    few features only (:meth:`use_features`), those features' bins are first copied for the
    tree's rows (indexed by row id) into a compact row-major array, which the histograms then
    read (see ``_kernels.histogram``).

    Parameters
    ----------
    data : BinnedData
        The training data.
    n_threads : int
        Threads of the parallel kernels (results do not depend on it).
    """

    def __init__(self, data: BinnedData, n_threads: int) -> None:
        self.data = data
        self.n_bins = data.mapper.n_bins
        self.layout = data.histogram_layout
        self.n_threads = n_threads
        n = data.n_rows
        self.gh = np.zeros((n, 2), ROW_FIXED_DTYPE)
        self.scratch = np.empty(n, INDEX_DTYPE)
        self.thread_hists = np.empty((n_threads, self.layout.n_cells, 2), FIXED_DTYPE)
        self._hist_arrays = (*self.layout.arrays, None)  # the histogram kernels' layout arguments in this tree
        # where the partitions read the split features' bins (partition_node's ``columns``): the
        # column-major bins by row id, or for a compact tree (_compact_columns) its own
        self._by_row_id = (data.column_major, np.empty((0, 0), np.uint8), np.empty(0, np.int64),
                           np.empty(0, INDEX_DTYPE), np.empty((0, 0), np.uint8), np.empty(0, np.bool_))
        self._columns = self._by_row_id
        self._gathered = np.empty(0, np.uint8)  # buffer of a compact tree's gathered columns
        self._compact = np.empty(0, np.uint8)   # buffer of the compact bins
        self._positions = np.empty(0, INDEX_DTYPE)   # buffer of a compact tree's row list
        self._compact_cells = np.empty(0, np.uint32)  # buffer of a compact tree's sparse cells
        self._sparse = np.ones(self.n_bins.size, np.bool_)
        self._sparse[self.layout.dense_features] = False
        self._column_blocks = False  # histograms over blocks of columns, one per thread (use_features)
        self._start = np.zeros(1, np.int64)  # each node's slice of the row list
        self._end = np.zeros(1, np.int64)
        self.is_compact = False

    def set_rows(self, rows: np.ndarray, grad: np.ndarray, hess: np.ndarray, weight: np.ndarray | None,
                 grad_by_position: bool = False) -> None:
        """The next tree's rows and their values.

        Parameters
        ----------
        rows : ndarray of uint32
            Ids of the rows (sorted). Partitioned in place, node by node, unless the tree is
            compact (:meth:`row_ids` gives them in row-list order either way).
        grad, hess, weight : ndarray of float64, shape (n_rows_total,)
            Per-row gradients, hessians and weights, indexed by row id (``weight`` None: all 1).
        grad_by_position : bool
            ``grad`` holds the rows' gradients in the order of ``rows`` instead (shape
            (len(rows),); smart2's corrected gradients).
        """
        self.ids, self.grad, self.hess, self.weight = rows, grad, hess, weight
        self.grad_by_position = grad_by_position
        m = rows.shape[0]
        self.is_compact = m <= COMPACT_ROWS_FRACTION * self.data.n_rows
        if self.is_compact:
            if self._positions.size < m:
                self._positions = np.empty(m, INDEX_DTYPE)
            self.rows = self._positions[:m]
            fill_row_ids(self.rows)
        else:
            self.rows = rows
        self._start[0], self._end[0] = 0, m

    # -- the steps a row source is made of (also called one by one by smartboost.dask) ------

    def use_features(self, features: np.ndarray | None) -> None:
        """Build histograms of the ``features`` only (bool mask; None: all) in this tree (after
        :meth:`set_rows`); the other features' cells are not written. Makes the tree's compact
        copy of its rows' bins (of those features) when the tree is compact."""
        columns = None if features is None else self.layout.dense_columns(features)
        cells = None
        if columns is not None:
            written = self._sparse.copy()  # the histograms' features: the sparse ones and the chosen dense ones
            written[self.layout.dense_features[columns]] = True
            sizes = self.n_bins[written] + 1
            first = self.layout.offsets[written].astype(np.int64)
            cells = np.repeat(first - (np.cumsum(sizes) - sizes), sizes) + np.arange(sizes.sum())
        dense_offsets = self.layout.dense_offsets if columns is None else self.layout.dense_offsets[columns]
        self._column_blocks = (self.n_threads > 1 and columns is None and not self._sparse.any()
                               and dense_offsets.size >= HIST_COLUMNS_PER_THREAD * self.n_threads)
        if self.is_compact:
            bins, indptr, sparse_cells = self._gather_compact(columns)
            self._hist_arrays = (bins, dense_offsets, indptr, sparse_cells, *self.layout.arrays[4:], cells)
            self._compact_columns(bins, columns)
            return
        self._columns = self._by_row_id
        if columns is None:
            self._hist_arrays = (*self.layout.arrays, None)
            return
        n = self.data.n_rows
        compact = self._buffer(n * columns.size).reshape(n, columns.size)
        gather_columns(self.rows, self.data.column_major, self.layout.dense_features[columns], compact)
        self._hist_arrays = (compact, dense_offsets, *self.layout.arrays[2:], cells)

    def _buffer(self, size: int) -> np.ndarray:
        """``size`` bytes of the compact bins' buffer."""
        if self._compact.size < size:
            self._compact = np.empty(size, np.uint8)
        return self._compact[:size]

    def _gather_compact(self, columns: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Copy the bins of the tree's rows (dense ``columns``, None: all, and the sparse cells) in
        row-list order: the compact tree's histogram arrays ``(bins, sparse_indptr, sparse_cells)``."""
        m = self.ids.shape[0]
        width = self.layout.dense_features.size if columns is None else columns.size
        bins = self._buffer(m * width).reshape(m, width)
        gather_rows(self.ids, self.layout.dense_bins, columns, bins)
        indptr, cells = self.layout.sparse_indptr, self.layout.sparse_cells
        if indptr.shape[0] > 1:
            lengths = indptr[self.ids.astype(np.int64) + 1] - indptr[self.ids]
            compact_indptr = np.zeros(m + 1, np.int64)
            np.cumsum(lengths, out=compact_indptr[1:])
            if self._compact_cells.size < compact_indptr[-1]:
                self._compact_cells = np.empty(compact_indptr[-1], np.uint32)
            compact_cells = self._compact_cells[:compact_indptr[-1]]
            gather_sparse_rows(self.ids, indptr, cells, compact_indptr, compact_cells)
            indptr, cells = compact_indptr, compact_cells
        return bins, indptr, cells

    def _compact_columns(self, bins: np.ndarray, columns: np.ndarray | None) -> None:
        """Where a compact tree's partitions read each feature's bins: a column of its compact
        ``bins`` (of the dense ``columns``, None: all) while rows are narrow, else (and for
        sparse features) the column-major bins gathered at the tree's rows on first use."""
        n_features, m = self.n_bins.size, self.ids.shape[0]
        compact_column = np.full(n_features, -1, np.int64)
        if bins.shape[1] < WIDE_ROW_BYTES:
            dense = self.layout.dense_features if columns is None else self.layout.dense_features[columns]
            compact_column[dense] = np.arange(dense.size)
        if self._gathered.size < n_features * m:
            self._gathered = np.empty(n_features * m, np.uint8)
        gathered = self._gathered[:n_features * m].reshape(n_features, m)
        self._columns = (self.data.column_major, bins, compact_column, self.ids, gathered,
                         np.zeros(n_features, np.bool_))

    def units(self) -> tuple[float, float]:
        """The fixed-point units these rows need on their own (see ``_kernels.gradients``).

        Units are powers of two increasing with the largest value, so the units of several
        machines' rows together are the largest of their own units.
        """
        return fixed_point_units(self.ids, self.grad, self.hess, self.weight, self.grad_by_position)

    def to_fixed_point(self, g_unit: float, h_unit: float) -> tuple[int, int, int]:
        """Convert the rows' weighted gradients to fixed point; return the root's ``(g, h, n)``."""
        g, h = to_fixed_point(self.ids, self.grad, self.hess, self.weight, self.grad_by_position, g_unit, h_unit,
                              self.gh, self.is_compact)
        return g, h, self.ids.shape[0]

    def histogram(self, node: int, g: int, h: int, out: np.ndarray) -> None:
        """Write the histogram of ``node`` (fixed-point sums ``g``, ``h``) into ``out``."""
        node_histogram(self.rows, self._start[node], self._end[node], self._hist_arrays, self.gh, g, h, out,
                       self.thread_hists, self._column_blocks)

    def partition(self, node: int, left: int, right: int, feature: int, bin_threshold: int,
                  missing_left: bool) -> tuple[int, int]:
        """Send the rows of ``node`` to ``left`` (bins <= ``bin_threshold``, or missing when
        ``missing_left``) and ``right``; return their row counts."""
        start, end = int(self._start[node]), int(self._end[node])
        n_left = partition_node(self.rows, start, end, self._columns, feature, bin_threshold, missing_left,
                                int(self.n_bins[feature]), self.scratch, self.n_threads)
        if max(left, right) >= self._start.size:
            self._start = np.resize(self._start, 2 * max(left, right) + 2)
            self._end = np.resize(self._end, self._start.size)
        self._start[left], self._end[left] = start, start + n_left
        self._start[right], self._end[right] = start + n_left, end
        return n_left, end - start - n_left

    def kernel_rows(self) -> tuple:
        """These rows as ``_kernels.grow.grow_tree`` takes them (after :meth:`begin_tree`): the
        row list, the partition scratch, the fixed-point (g, h), the per-thread histograms, the
        histogram layout, whether histograms go by column blocks, and the partitions' bins."""
        return (self.rows, self.scratch, self.gh, self.thread_hists, self._hist_arrays, self._column_blocks,
                self._columns)

    def set_segments(self, start: np.ndarray, end: np.ndarray) -> None:
        """Each node's slice of the row list, after ``grow_tree`` partitioned it."""
        self._start, self._end = start, end

    def row_list(self) -> tuple[np.ndarray, np.ndarray | None]:
        """The row list and what its values index: ``(rows, None)`` when they are row ids,
        ``(positions, ids)`` for a compact tree (the ids are ``ids[positions]``)."""
        return (self.rows, self.ids) if self.is_compact else (self.rows, None)

    def row_ids(self) -> np.ndarray:
        """Ids of the tree's rows in row-list order: node ``k``'s rows are
        ``row_ids()[start:end]`` with its :meth:`segments`."""
        return self.ids[self.rows] if self.is_compact else self.rows

    def segments(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Start and end (in the row list) of each of ``nodes``, as int64 arrays."""
        return self._start[nodes], self._end[nodes]

    # -- RowSource ----------------------------------------------------------------------------

    def begin_tree(self, features: np.ndarray | None) -> tuple[float, float, int, int, int]:
        """See :class:`RowSource`."""
        self.use_features(features)
        g_unit, h_unit = self.units()
        return (g_unit, h_unit, *self.to_fixed_point(g_unit, h_unit))

    def root_histogram(self, g: int, h: int, out: np.ndarray) -> None:
        """See :class:`RowSource`."""
        self.histogram(0, g, h, out)

    def split(self, node, left, right, feature, bin_threshold, missing_left, left_sums, right_sums, out):
        """See :class:`RowSource`; builds the child with fewer rows."""
        n_left, n_right = self.partition(node, left, right, feature, bin_threshold, missing_left)
        if out is None:
            return n_left, n_right, -1
        built, sums = (left, left_sums) if n_left <= n_right else (right, right_sums)
        self.histogram(built, *sums, out)
        return n_left, n_right, built

    def split_many(self, requests: list[tuple]) -> list[tuple[int, int, int]]:
        """See :class:`RowSource`."""
        return [self.split(*request) for request in requests]


class _Node:
    """Growth state of one node (Python side only)."""

    __slots__ = ("id", "n_rows", "depth", "g", "h", "slot", "split")

    def __init__(self, node_id: int, n_rows: int, depth: int, g: int, h: int) -> None:
        self.id = node_id
        self.n_rows = n_rows
        self.depth = depth
        self.g = g
        self.h = h
        self.slot = -1
        self.split: tuple | None = None


class TreeGrower:
    """Grows trees from the histograms of a row source.

    Parameters
    ----------
    mapper : BinMapper
        The training data's bin edges.
    usable : ndarray of bool, shape (n_features,)
        Features a split may use at all.
    params : dict
        Resolved parameters (``num_leaves``, ``max_depth``, ``grow_policy``, ``min_data_in_leaf``,
        ``min_sum_hessian_in_leaf``, ``lambda_l1``, ``lambda_l2``, ``min_gain_to_split``).
    missing : ndarray of bool, shape (n_features,), optional
        Features with missing values in the training rows. It sets the thresholds RGBM's Type 1
        draws from: "all values left, missing right" is one only where there are missing values.
        None: counted for every feature (a superset, so that no split is left out).
    """

    def __init__(self, mapper: BinMapper, usable: np.ndarray, params: dict, missing: np.ndarray | None = None) -> None:
        self.n_bins = mapper.n_bins
        self.offsets, self.n_cells = histogram_cells(self.n_bins)
        self.usable = usable
        extra = 1 if missing is None else missing.astype(np.int64)
        self.n_thresholds = np.where(usable, self.n_bins - 1 + extra, 0)
        thresholds = [mapper.thresholds(f) for f in range(mapper.n_features)]
        self.thresholds = np.concatenate(thresholds)  # feature f's bin b: thresholds[threshold_offsets[f] + b]
        self.threshold_offsets = np.cumsum([0] + [t.size for t in thresholds[:-1]])
        self.split_params = np.array([params[name] for name in SPLIT_PARAMS_ORDER], np.float64)
        self.scan_scratch = split_scratch(self.n_bins)
        self.lambda_l1 = params["lambda_l1"]
        self.lambda_l2 = params["lambda_l2"]
        self.min_rows_to_split = max(2, 2 * params["min_data_in_leaf"])
        self.min_hess_to_split = 2.0 * params["min_sum_hessian_in_leaf"]
        depth = params["max_depth"]
        self.max_depth = depth if depth > 0 else np.iinfo(np.int64).max
        leaves = params["num_leaves"]
        self.max_leaves = leaves if leaves > 0 else np.iinfo(np.int64).max
        self.depthwise = params["grow_policy"] == "depthwise"
        self._slots: list[np.ndarray] = []  # the Python loop's histogram slots
        self._pool_slots = np.empty((0, self.n_cells, 2), FIXED_DTYPE)  # the compiled loop's
        self._free_slots: list[int] = []
        self.selector: FeatureSelector | None = None  # the current tree's candidate draws (RGBM)
        self.iteration = 0
        self.tree_usable = usable      # features the tree's nodes may split on (per-tree draws)
        self.tree_thresholds = None    # and their thresholds (Type 1; None: all)
        self.tree_built = usable       # features whose histograms the tree builds
        self._per_node = False         # whether each node draws its own candidates

    @classmethod
    def for_data(cls, data: BinnedData, params: dict) -> TreeGrower:
        """The grower of a binned training set."""
        return cls(data.mapper, data.usable_features, params, data.missing_count > 0)

    # -- histogram slots -------------------------------------------------------------------

    def _new_slot(self) -> int:
        if self._free_slots:
            return self._free_slots.pop()
        self._slots.append(np.empty((self.n_cells, 2), FIXED_DTYPE))
        return len(self._slots) - 1

    def _release(self, node: _Node) -> None:
        if node.slot >= 0:
            self._free_slots.append(node.slot)
            node.slot = -1

    def _candidates(self, node: _Node) -> tuple[np.ndarray, np.ndarray | None]:
        """The features ``node`` may split on and their thresholds (None: all), from RGBM's
        per-node draw or the tree's."""
        if self._per_node:
            features, thresholds = self.selector.draw(self.iteration, node.id, self.n_thresholds)
            return (self.usable if features is None else features), thresholds
        return self.tree_usable, self.tree_thresholds

    def _can_split(self, node: _Node) -> bool:
        return can_split(node.depth, node.n_rows, node.h, self.h_unit, self.max_depth, self.min_rows_to_split,
                         self.min_hess_to_split)

    # -- growth ----------------------------------------------------------------------------

    def grow(self, source: RowSource, learning_rate: float, selector: FeatureSelector | None = None,
             iteration: int = 0) -> GrownTree:
        """Grow one tree on the rows of ``source``.

        Parameters
        ----------
        source : RowSource
            The rows (a :class:`NodeRows` after ``set_rows``, or smartboost.dask's workers).
        learning_rate : float
            Shrinkage applied to the node values.
        selector : FeatureSelector, optional
            Draws the candidate splits (RGBM); None or an inactive one allows every split.
        iteration : int
            The iteration, keying the selector's draws.

        Returns
        -------
        GrownTree
        """
        self.selector = selector if selector is not None and selector.active else None
        self.iteration = iteration
        self._per_node = self.selector is not None and self.selector.per_node
        histogram_features, self.tree_thresholds = None, None
        if self.selector is not None and not self._per_node:
            histogram_features, self.tree_thresholds = self.selector.draw(iteration, -1, self.n_thresholds)
        self.tree_usable = self.tree_built = self.usable if histogram_features is None else histogram_features
        self.g_unit, self.h_unit, g_root, h_root, n_root = source.begin_tree(histogram_features)
        if not (np.isfinite(self.g_unit) and np.isfinite(self.h_unit)):
            raise DataError(f"the gradients or hessians of iteration {iteration} are not finite: the loss overflows "
                            "(labels, weights or init_score too large in magnitude, or parameters such as sigmoid "
                            "too large)")
        pool = self._pool(source, n_root)
        if pool is not None:
            node_draws = self.selector.node_draws(iteration, self.n_thresholds) if self._per_node else None
            packed = None if node_draws is None else node_draws[6]
            *tree, start, end = grow_tree(
                *source.kernel_rows(), self.offsets, self.n_bins, self.tree_built, self.tree_usable,
                self.tree_thresholds, node_draws, packed, self.split_params, self.scan_scratch, pool, self.g_unit,
                self.h_unit, g_root, h_root, self.max_leaves, self.max_depth, self.min_rows_to_split,
                self.min_hess_to_split, self.depthwise)
            source.set_segments(start, end)
            return self._pack(*tree, learning_rate)
        nodes = [_Node(0, n_root, 0, g_root, h_root)]
        splits: list[tuple] = []   # (node id, feature, bin, missing_left, gain, left id) of each split
        heap: list[tuple] = []
        root = nodes[0]
        if self._can_split(root) and self.max_leaves > 1:
            root.slot = self._new_slot()
            hist = self._slots[root.slot]
            source.root_histogram(root.g, root.h, hist)
            root.split = find_best_split(hist, self.offsets, self.n_bins, *self._candidates(root), root.g, root.h,
                                         root.n_rows, self.g_unit, self.h_unit, self.split_params,
                                         self.scan_scratch)
            self._push_or_release(heap, root)
        n_leaves, max_leaves = 1, self.max_leaves
        while heap and n_leaves < max_leaves:
            # leaf-wise: the best leaf; depth-wise: every leaf of the shallowest level (in the
            # order a one-at-a-time loop would take them), split in one call to the source
            parent = heapq.heappop(heap)[-1]
            n_leaves += 1
            batch = [self._split_request(parent, len(nodes), n_leaves < max_leaves)]
            while self.depthwise and heap and n_leaves < max_leaves and heap[0][0] == parent.depth:
                n_leaves += 1
                batch.append(self._split_request(heapq.heappop(heap)[-1], len(nodes) + 2 * len(batch),
                                                 n_leaves < max_leaves))
            answers = ([source.split(*batch[0][2])] if len(batch) == 1
                       else source.split_many([request for _, _, request in batch]))
            for (parent, slot, request), answer in zip(batch, answers):
                left, right = self._split_finish(parent, request[1], slot, answer)
                nodes += (left, right)
                splits.append((parent.id, *parent.split[:4], left.id))
                self._push_or_release(heap, left)
                self._push_or_release(heap, right)
        for entry in heap:
            self._release(entry[-1])
        return self._pack(*self._node_arrays(nodes, splits), learning_rate)

    def _pool(self, source: RowSource, n_root: int) -> np.ndarray | None:
        """The histogram slots of a tree grown by the compiled loop (``_kernels.grow``), one per
        leaf the tree may have; None when the Python loop grows it: rows not held by this
        process, or a tree whose leaves are bounded only by its rows and would need more than
        ``_MAX_POOL_BYTES`` of slots."""
        if not isinstance(source, NodeRows):
            return None
        leaves = min(self.max_leaves, 2 ** min(self.max_depth, 62), max(1, n_root))
        if leaves * self.n_cells * 2 * np.dtype(FIXED_DTYPE).itemsize > _MAX_POOL_BYTES:
            return None
        if self._pool_slots.shape[0] < leaves:
            # pages are touched only by the slots a tree uses
            self._pool_slots = np.empty((leaves, self.n_cells, 2), FIXED_DTYPE)
        return self._pool_slots[:leaves]

    def _push_or_release(self, heap: list, node: _Node) -> None:
        """Queue a node that has a valid split; free the histogram of one that has none."""
        if node.split is None or node.split[0] < 0:
            self._release(node)
            return
        gain = node.split[3]
        key = (node.depth, -gain, node.id) if self.depthwise else (-gain, node.id)
        heapq.heappush(heap, (*key, node))

    def _split_request(self, parent: _Node, left_id: int, room: bool) -> tuple[_Node, int, tuple]:
        """The source's arguments to split ``parent`` into nodes ``left_id`` and ``left_id + 1``,
        with a histogram slot for one child unless no child can be split (``room``: whether the
        tree may still grow after this split). Returns ``(parent, slot, request)``."""
        feature, bin_threshold, missing_left, _, gl, hl = parent.split
        gr, hr = parent.g - gl, parent.h - hl
        wanted = wants_histogram(room, parent.depth + 1, hl, hr, self.h_unit, self.max_depth, self.min_hess_to_split)
        slot = self._new_slot() if wanted else -1
        return parent, slot, (parent.id, left_id, left_id + 1, feature, bin_threshold, missing_left, (gl, hl),
                              (gr, hr), self._slots[slot] if wanted else None)

    def _split_finish(self, parent: _Node, left_id: int, slot: int,
                      answer: tuple[int, int, int]) -> tuple[_Node, _Node]:
        """The two children of ``parent`` from the source's answer, with their best splits: the
        source built one child's histogram, the other is the parent's minus it, in the parent's
        slot."""
        n_left, n_right, built = answer
        gl, hl = parent.split[4:6]
        left = _Node(left_id, n_left, parent.depth + 1, gl, hl)
        right = _Node(left_id + 1, n_right, parent.depth + 1, parent.g - gl, parent.h - hl)
        if slot < 0:
            self._release(parent)
            return left, right
        small, large = (left, right) if built == left.id else (right, left)
        small.slot, large.slot, parent.slot = slot, parent.slot, -1
        scan_small = self._can_split(small)
        scan_large = self._can_split(large)
        small.split, large.split = subtract_and_find_splits(
            self._slots[large.slot], self._slots[small.slot], self.offsets, self.n_bins, self.tree_built,
            *self._candidates(small), *self._candidates(large), small.g, small.h, small.n_rows, scan_small, large.g,
            large.h, large.n_rows, scan_large, self.g_unit, self.h_unit, self.split_params, self.scan_scratch)
        if not scan_small:
            small.split = None
        if not scan_large:
            large.split = None
        return left, right

    @staticmethod
    def _node_arrays(nodes: list[_Node], splits: list[tuple]) -> tuple[np.ndarray, ...]:
        """The Python loop's nodes (node ``k`` is ``nodes[k]``) and ``splits`` as the arrays of
        ``_kernels.grow.grow_tree``: ``(feature, bin_threshold, missing_left, gain, left, g, h,
        n_rows)``."""
        n = len(nodes)
        feature = np.full(n, -1, np.int32)
        bin_threshold = np.zeros(n, np.int32)
        missing_left = np.zeros(n, np.bool_)
        gain = np.zeros(n, np.float64)
        left = np.full(n, -1, np.int32)
        if splits:
            ids, f, b, ml, g, left_id = (np.array(column) for column in zip(*splits))
            feature[ids], bin_threshold[ids], missing_left[ids], gain[ids], left[ids] = f, b, ml, g, left_id
        g_sum = np.array([node.g for node in nodes], np.int64)
        h_sum = np.array([node.h for node in nodes], np.int64)
        return (feature, bin_threshold, missing_left, gain, left, g_sum, h_sum,
                np.array([node.n_rows for node in nodes], np.int64))

    def _pack(self, feature: np.ndarray, bin_threshold: np.ndarray, missing_left: np.ndarray, gain: np.ndarray,
              left: np.ndarray, g_sum: np.ndarray, h_sum: np.ndarray, count: np.ndarray,
              learning_rate: float) -> GrownTree:
        """The grown tree from its node arrays (as :meth:`_node_arrays`)."""
        inner = left >= 0
        threshold = np.zeros(feature.size, np.float64)
        threshold[inner] = self.thresholds[self.threshold_offsets[feature[inner]] + bin_threshold[inner]]
        right = np.where(inner, left + 1, -1).astype(np.int32)
        value = np.empty(feature.size, np.float64)
        leaf_values(g_sum, h_sum, self.g_unit, self.h_unit, self.lambda_l1, self.lambda_l2, value)
        with np.errstate(over="ignore"):  # an overflow stops training in the engine, with its reason
            value *= learning_rate
        tree = Tree(feature=feature, threshold=threshold, bin_threshold=bin_threshold,
                    missing_left=missing_left, left=left, right=right, value=value, gain=gain,
                    hessian=h_sum * self.h_unit, count=count)
        return GrownTree(tree, np.flatnonzero(~inner))
