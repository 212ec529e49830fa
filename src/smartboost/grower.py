"""Tree growth: the decisions of a tree, and the rows it is grown on.

Growth is split in two, so that the rows of a tree may live on one machine or on many:

- :class:`TreeGrower` makes every decision, through one compiled loop (``_kernels.grow``): which
  leaf to split next, the best split of a node from its histogram, the leaf values. It owns the
  histograms of the open leaves.
- A *row source* owns the rows: the tree's fixed-point gradients, the partition of its row list
  into nodes, and the histograms built from them (the protocol :class:`RowSource`).
  :class:`NodeRows` holds the rows of one machine and hands them to the loop, which then splits
  them itself; :mod:`smartboost.dask` runs one grower per worker on that worker's rows, and the
  loop stops for the workers to split their rows and sum their histograms among themselves,
  which is exact (integer cells). Each worker receives the sums of its share of the features
  only, scans them, and the loop stops again for the workers to agree on each node's best split
  over all shares, so every worker grows the trees of one machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ._common import (CELL_DTYPE, COMPACT_ROWS_FRACTION, FIXED_DTYPE, HIST_COLUMNS_PER_THREAD,
                      HIST_SMALL_DATA_BYTES, HIST_SMALL_DATA_COLUMNS_PER_THREAD, INDEX_DTYPE, ROW_FIXED_DTYPE,
                      SCAN_BUILD_ROWS, WIDE_ROW_BYTES)
from ._dispatch import BoundKernel
from ._kernels.gradients import NOT_FINITE, fixed_point_extents, to_fixed_point, unit_exponents
from ._kernels.grow import DONE, NEED_AGREEMENT, NEED_ROOT, NEED_SPACE, grow_tree, pack_tree, start_tree
from ._kernels.histogram import gather_columns, gather_rows, gather_sparse_rows, node_histogram
from ._kernels.partition import partition_node
from ._kernels.random import fill_row_ids
from ._kernels.records import (COUNTS, NODE, SPLIT_ROW, Candidates, Cells, GrowthLimits, GrowthState,
                               Interactions, LocalRows, PartitionColumns, SplitChoices, SplitParams, ThresholdRule,
                               Units)
from ._kernels.split import in_scale, in_units, leaf_values, scans_in_parallel, split_scratch, tree_units
from ._params import TrainingParams
from .binning import BinMapper, BinnedData, histogram_cells
from .constraints import interaction_groups, monotone_directions
from .errors import DataError, ParameterError
from .selection import FeatureSelector
from .tree import Tree

__all__ = ["GrownTree", "NodeRows", "RowSource", "TreeGrower"]

_MAX_POOL_BYTES = 1 << 32
"""The most virtual memory a tree's histogram slots take up front (one per leaf the tree may
have; pages are touched only by the slots in use). A tree that could need more (no leaf or depth
limit) starts with this many and is given more when it runs out."""


@dataclass
class GrownTree:
    """A tree and the node ids of its leaves (as grown, its values are Newton values; the
    boosting loop scales them into the model's step).

    Attributes
    ----------
    tree : Tree
    leaf_nodes : ndarray of int64
        Node id of each leaf, in the order of the row source's leaf segments.
    """

    tree: Tree
    leaf_nodes: np.ndarray
    bounds: np.ndarray | None = None
    """Each node's output bounds ``(lower, upper)`` under monotone constraints (None without)."""

    @property
    def leaf_values(self) -> np.ndarray:
        """Output value of each leaf, in ``leaf_nodes`` order."""
        return self.tree.value[self.leaf_nodes]


class RowSource(Protocol):
    """The rows a tree is grown on, as :class:`TreeGrower` sees them.

    Every source answers :meth:`begin_tree` and says, by :meth:`local_rows`, what it can do:
    hand its rows to the compiled loop (rows of this process), after which the loop's row
    segments come back through ``set_segments(start, end)``; or split them itself, elsewhere
    (None), answering :meth:`root_histogram` and :meth:`split_many` when the loop asks.
    """

    def begin_tree(self, features: np.ndarray | None) -> tuple[int, int, int, int, int]:
        """Start a tree whose histograms need only the ``features`` (bool mask; None: all).

        Returns ``(g_exp, h_exp, g_root, h_root, n_root)``: the exponents of the fixed-point
        units (``_kernels.gradients.unit_exponents``) and the root's fixed-point sums and row
        count.
        """

    def local_rows(self) -> LocalRows | None:
        """The tree's rows for the compiled loop, or None when they are held elsewhere."""

    def root_histogram(self, g: int, h: int, out: np.ndarray) -> None:
        """Write the root's histogram (its sums are ``g``, ``h``) into ``out``."""

    def split_many(self, state: GrowthState) -> None:
        """Do the loop's pending splits, of nodes none a child of another (one, or a depth-wise
        level): split ``j`` is row ``j`` of ``state.splits`` (``_kernels.records.SPLIT_ROW``: the
        node, its left child ``left`` (the right one is ``left + 1``) and its split) and of
        ``state.pending``, whose column 1 is the histogram slot of the loop's pool the left
        child's histogram is wanted in (-1: none). Write the left child's row count into
        ``pending[j, 2]`` and, with a slot, the histogram into ``state.pool[slot]`` and ``left``
        into ``pending[j, 3]`` (else -1)."""

    def feature_share(self, built: np.ndarray) -> np.ndarray | None:
        """Asked once a tree, after :meth:`begin_tree`, by a grower that can scan a share of
        the features: the features of ``built`` (bool mask) whose summed histograms this source
        will write, when it writes only a share of them (then :meth:`root_histogram` and
        :meth:`split_many` fill only those features' cells, and :meth:`agree` is asked after
        every scan); None: every feature, as when it is not asked."""

    def agree(self, splits: np.ndarray) -> np.ndarray:
        """The best splits over every source's share of the features, given this source's
        best splits of the nodes just scanned (int64 rows of ``_kernels.records.SPLIT_ROW``,
        nodes in the same order on every source)."""


class NodeRows:
    """The rows of the tree being grown on one machine: a row list partitioned node by node.

    The tree's rows are given by :meth:`set_rows`; the growth loop (or :meth:`partition`)
    partitions a node's segment of the row list in place (stable), so that every leaf ends up
    owning a contiguous segment (:meth:`segments`, the rows' ids by :meth:`row_ids`), through
    which the caller updates the training scores. Buffers (fixed-point gradients, partition scratch, per-thread histograms)
    are allocated once.

    A tree grown on a sample of the rows (at most ``COMPACT_ROWS_FRACTION`` of them) first
    copies its rows' bins, in order, into a compact row-major array, and its row list then holds
    positions in that array instead of row ids: histograms and partitions read a few megabytes
    that stay in cache instead of gathering from all over the data (docs/internals.md). Trees
    on more rows read the data's own bins; when they need a
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
        self._hist_arrays = self.layout.arrays  # how this tree's histograms read its rows
        # where the partitions read the split features' bins: the column-major bins by row id,
        # or for a compact tree (_compact_columns) its own
        self.bin_dtype = data.mapper.bin_dtype
        self._by_row_id = PartitionColumns(data.column_major, np.empty((0, 0), self.bin_dtype), np.empty(0, np.int64),
                                           np.empty(0, INDEX_DTYPE), np.empty((0, 0), self.bin_dtype),
                                           np.empty(0, np.bool_))
        self._columns = self._by_row_id
        self._gathered = np.empty(0, self.bin_dtype)  # buffer of a compact tree's gathered columns
        self._compact = np.empty(0, self.bin_dtype)   # buffer of the compact bins
        self._positions = np.empty(0, INDEX_DTYPE)   # buffer of a compact tree's row list
        self._compact_cells = np.empty(0, CELL_DTYPE)  # buffer of a compact tree's sparse cells
        self._sparse = np.ones(self.n_bins.size, np.bool_)
        self._sparse[self.layout.dense_features] = False
        self._column_blocks = False  # histograms over blocks of columns, one per thread (use_features)
        # small nodes' histograms built by the threads that scan them (LocalRows.scan_build_rows),
        # where every feature is dense and a node's scans run in parallel
        self._scan_build_rows = 0
        self._scans_parallel = bool(scans_in_parallel(self.n_bins, np.arange(self.n_bins.size), 2))
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
        self._column_blocks = self._histograms_by_columns(dense_offsets.size, columns is None)
        fused = self.n_threads > 1 and not self._column_blocks and columns is None and not self._sparse.any()
        self._scan_build_rows = SCAN_BUILD_ROWS if fused and self._scans_parallel else 0
        if self.is_compact:
            bins, indptr, sparse_cells = self._gather_compact(columns)
            self._hist_arrays = self.layout.arrays._replace(dense_bins=bins, dense_offsets=dense_offsets,
                                                            sparse_indptr=indptr, sparse_cells=sparse_cells, cells=cells)
            self._compact_columns(bins, columns)
            return
        self._columns = self._by_row_id
        if columns is None:
            self._hist_arrays = self.layout.arrays
            return
        n = self.data.n_rows
        compact = self._buffer(n * columns.size).reshape(n, columns.size)
        gather_columns(self.rows, self.data.column_major, self.layout.dense_features[columns], compact)
        self._hist_arrays = self.layout.arrays._replace(dense_bins=compact, dense_offsets=dense_offsets, cells=cells)

    def _histograms_by_columns(self, n_dense: int, every_feature: bool) -> bool:
        """Whether this tree builds its histograms over blocks of columns, one per thread: with
        every feature dense and built, on wide data (``HIST_COLUMNS_PER_THREAD`` columns per
        thread), or from ``HIST_SMALL_DATA_COLUMNS_PER_THREAD`` when the tree's rows' bins and
        fixed-point gradients fit in ``HIST_SMALL_DATA_BYTES``."""
        if self.n_threads < 2 or not every_feature or self._sparse.any():
            return False
        if n_dense >= HIST_COLUMNS_PER_THREAD * self.n_threads:
            return True
        row_bytes = n_dense * np.dtype(self.bin_dtype).itemsize + self.gh.strides[0]
        return (n_dense >= HIST_SMALL_DATA_COLUMNS_PER_THREAD * self.n_threads
                and self.ids.shape[0] * row_bytes <= HIST_SMALL_DATA_BYTES)

    def _buffer(self, size: int) -> np.ndarray:
        """``size`` bins of the compact bins' buffer."""
        if self._compact.size < size:
            self._compact = np.empty(size, self.bin_dtype)
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
                self._compact_cells = np.empty(compact_indptr[-1], CELL_DTYPE)
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
        if bins.shape[1] * bins.itemsize < WIDE_ROW_BYTES:
            dense = self.layout.dense_features if columns is None else self.layout.dense_features[columns]
            compact_column[dense] = np.arange(dense.size)
        if self._gathered.size < n_features * m:
            self._gathered = np.empty(n_features * m, self.bin_dtype)
        gathered = self._gathered[:n_features * m].reshape(n_features, m)
        self._columns = PartitionColumns(self.data.column_major, bins, compact_column, self.ids, gathered,
                                         np.zeros(n_features, np.bool_))

    def extents(self) -> tuple[float, float]:
        """The largest weighted gradient and hessian of these rows in magnitude
        (``_kernels.gradients.fixed_point_extents``): the fixed-point units of rows spread over
        machines are ``unit_exponents`` of the largest over the machines."""
        return fixed_point_extents(self.ids, self.grad, self.hess, self.weight, self.grad_by_position)

    def to_fixed_point(self, g_exp: int, h_exp: int) -> tuple[int, int, int]:
        """Convert the rows' weighted gradients to fixed point in units ``2**g_exp``, ``2**h_exp``;
        return the root's ``(g, h, n)``."""
        g, h = to_fixed_point(self.ids, self.grad, self.hess, self.weight, self.grad_by_position, g_exp, h_exp,
                              self.gh, self.is_compact)
        return g, h, self.ids.shape[0]

    def histogram(self, node: int, g: int, h: int, out: np.ndarray) -> None:
        """Write the histogram of ``node`` (fixed-point sums ``g``, ``h``) into ``out``."""
        node_histogram(self.rows, self._start[node], self._end[node], self._hist_arrays, self.gh, g, h, out,
                       self.thread_hists, self._column_blocks)

    def partition(self, node: int, left: int, right: int, feature: int, bin_threshold: int,
                  missing_left: bool, left_set: np.ndarray | None = None) -> tuple[int, int]:
        """Send the rows of ``node`` to ``left`` (bins <= ``bin_threshold``, or missing when
        ``missing_left``; or, a categorical split, the bins of ``left_set``) and ``right``;
        return their row counts."""
        start, end = int(self._start[node]), int(self._end[node])
        rule = ThresholdRule(bin_threshold, missing_left, int(self.n_bins[feature])) if left_set is None else left_set
        n_left = partition_node(self.rows, start, end, self._columns, feature, rule, self.scratch, self.n_threads)
        if max(left, right) >= self._start.size:
            self._start = np.resize(self._start, 2 * max(left, right) + 2)
            self._end = np.resize(self._end, self._start.size)
        self._start[left], self._end[left] = start, start + n_left
        self._start[right], self._end[right] = start + n_left, end
        return n_left, end - start - n_left

    def local_rows(self) -> LocalRows:
        """These rows as the compiled growth loop takes them (after :meth:`begin_tree`)."""
        return LocalRows(self.rows, self.scratch, self.gh, self.thread_hists, self._hist_arrays, self._column_blocks,
                         self._columns, self._scan_build_rows)

    def set_segments(self, start: np.ndarray, end: np.ndarray) -> None:
        """Each node's slice of the row list, after ``grow_tree`` partitioned it."""
        self._start, self._end = start, end

    @property
    def segment_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The arrays of each node's slice of the row list (start, end; int64, by node id),
        themselves: a row source that partitions the rows node by node writes into them."""
        return self._start, self._end

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

    def begin_tree(self, features: np.ndarray | None) -> tuple[int, int, int, int, int]:
        """See :class:`RowSource`."""
        self.use_features(features)
        g_exp, h_exp = unit_exponents(*self.extents())
        return (g_exp, h_exp, *self.to_fixed_point(g_exp, h_exp))

    def feature_share(self, built: np.ndarray) -> None:
        """See :class:`RowSource`: one machine holds every feature's histogram."""
        return None


class TreeGrower:
    """Grows trees from the histograms of a row source, by the compiled loop of
    ``_kernels.grow``.

    Parameters
    ----------
    mapper : BinMapper
        The training data's bin edges.
    usable : ndarray of bool, shape (n_features,)
        Features a split may use at all.
    params : TrainingParams
        The run's parameters (``num_leaves``, ``max_depth``, ``grow_policy``, ``min_data_in_leaf``,
        ``min_sum_hessian_in_leaf``, ``lambda_l1``, ``lambda_l2``, ``min_gain_to_split``, the
        categorical split parameters and the constraints).
    missing : ndarray of bool, shape (n_features,), optional
        Features with missing values in the training rows. It sets the thresholds RGBM's Type 1
        draws from: "all values left, missing right" is one only where there are missing values.
        None: counted for every feature (a superset, so that no split is left out).
    feature_names : list of str, optional
        The features' names, which the constraints may use (default ``Column_<i>``).
    from_top : ndarray of bool, shape (n_features,), optional
        :func:`~smartboost.binning.missing_right_from_top` of the training rows (None: none).

    Raises
    ------
    ParameterError
        A constraint naming an unknown feature, or a monotone constraint on a categorical one.
    """

    def __init__(self, mapper: BinMapper, usable: np.ndarray, params: TrainingParams,
                 missing: np.ndarray | None = None, feature_names: list[str] | None = None,
                 from_top: np.ndarray | None = None) -> None:
        self.n_bins = mapper.n_bins
        offsets, self.n_cells = histogram_cells(self.n_bins)
        names = feature_names or [f"Column_{i}" for i in range(self.n_bins.size)]
        categorical = mapper.categorical
        if params.weak_learner == "sign" and categorical.any():
            raise ParameterError("weak_learner='sign' splits numeric features only; the data has categorical "
                                 f"features ({', '.join(names[f] for f in np.flatnonzero(categorical))})")
        groups = interaction_groups(params.interaction_constraints, names)
        # features in no interaction group are never candidates: their histograms are not built
        self.usable = usable if groups is None else usable & groups.any(axis=1)
        self.interactions = None if groups is None else Interactions(groups, np.empty((2, self.n_bins.size), np.bool_))
        self.n_groups = 0 if groups is None else groups.shape[1]
        extra = 1 if missing is None else missing.astype(np.int64)
        # a categorical feature is one (feature, threshold) pair of RGBM's Type 1
        self.n_thresholds = np.where(self.usable, np.where(categorical, 1, self.n_bins - 1 + extra), 0)
        self.thresholds, self.threshold_offsets = mapper.threshold_table
        self.monotone = monotone_directions(params.monotone_constraints, names, categorical)
        self.cells = Cells(offsets, self.n_bins, categorical if categorical.any() else None, self.monotone,
                           from_top if from_top is not None and from_top.any() else None)
        self.reset_split_params(params)
        self.scan_scratch = split_scratch(self.n_bins)
        depth, leaves = params.max_depth, params.num_leaves
        self.limits = GrowthLimits(leaves if leaves > 0 else np.iinfo(np.int64).max,
                                   depth if depth > 0 else np.iinfo(np.int64).max,
                                   max(2, 2 * params.min_data_in_leaf), 2.0 * params.min_sum_hessian_in_leaf,
                                   params.grow_policy == "depthwise",
                                   params.monotone_constraints_method == "intermediate")
        self._state: GrowthState | None = None  # kept from tree to tree

    def reset_split_params(self, params: TrainingParams) -> None:
        """Take the regularisation and split limits of ``params`` for the next trees (set at the
        start of a run, and again when a callback changes them: ``smartboost.reset_parameter``)."""
        self.split_params = SplitParams(*(float(getattr(params, name)) for name in SplitParams._fields[:-1]),
                                        float(params.weak_learner == "sign"))

    @classmethod
    def for_data(cls, data: BinnedData, params: TrainingParams, feature_names: list[str] | None = None) -> TreeGrower:
        """The grower of a binned training set."""
        return cls(data.mapper, data.usable_features, params, data.missing_count > 0, feature_names)

    def grow(self, source: RowSource, selector: FeatureSelector | None = None, iteration: int = 0,
             weight_scale: float = 1.0) -> GrownTree:
        """Grow one tree on the rows of ``source``; its node values are the Newton values (the
        step rule and the learning rate are the boosting loop's).

        Parameters
        ----------
        source : RowSource
            The rows (a :class:`NodeRows` after ``set_rows``, or a smartboost.dask worker's share of them).
        selector : FeatureSelector, optional
            Draws the candidate splits (RGBM); None or an inactive one allows every split.
        iteration : int
            The iteration, keying the selector's draws.
        weight_scale : float
            Factor of the rows' weights in every sum the tree reads (``sample_weight_scale``):
            the fixed-point sums are read with it (``Units.g``, ``Units.h``), so that the regularisation
            (``lambda_l1``, ``lambda_l2``, ``min_sum_hessian_in_leaf``, ``min_gain_to_split``)
            weighs against the scaled sums at no cost per row.

        Returns
        -------
        GrownTree
        """
        choices = self._split_choices(selector, iteration)
        tree_features = None if choices.built is self.usable else choices.built
        g_exp, h_exp, g_root, h_root, n_root = source.begin_tree(tree_features)
        check_units(g_exp, h_exp, iteration)
        units = tree_units(g_exp, h_exp, weight_scale, self.split_params.lambda_l2)
        params = in_units(self.split_params, units)
        limits = self.limits._replace(min_hess_to_split=in_scale(self.limits.min_hess_to_split, units.h_exp))
        # the intermediate method scans again the leaves whose bounds narrow, a scan the loop
        # has no stop to agree on: those trees are grown on every feature's histogram
        if self.monotone is None or not self.limits.intermediate:
            share = source.feature_share(choices.built)
            if share is not None:
                choices = choices._replace(built=share, partial=True)
        state = self._state_for(n_root)
        start_tree(state, g_root, h_root, n_root)
        rows = source.local_rows()
        # a loop on rows held elsewhere comes back here at every split: skip the dispatch there
        grow = grow_tree if rows is not None else BoundKernel(grow_tree)
        while (status := grow(state, rows, self.cells, choices, limits, params, units, self.scan_scratch)) != DONE:
            if status == NEED_SPACE:
                state = self._state = _enlarged(state)
            elif status == NEED_ROOT:
                root = state.nodes[0]
                source.root_histogram(int(root["g"]), int(root["h"]), state.pool[root["slot"]])
            elif status == NEED_AGREEMENT:
                _agree_elsewhere(source, state)
            else:
                source.split_many(state)
        n_nodes = state.counts[0]["n_nodes"]
        nodes = state.nodes[:n_nodes]
        if rows is not None:
            source.set_segments(nodes["start"].copy(), nodes["end"].copy())
        return self._pack(state, n_nodes, units, params)

    def _split_choices(self, selector: FeatureSelector | None, iteration: int) -> SplitChoices:
        """What the tree's nodes may split on: every usable feature and threshold, RGBM's draw
        for the tree (whose features are then the only histograms built), or its draws node by
        node."""
        if selector is None or not selector.active:
            return SplitChoices(self.usable, Candidates(self.usable, None), None, self.interactions)
        if selector.per_node:
            return SplitChoices(self.usable, Candidates(self.usable, None),
                                selector.node_draws(iteration, self.n_thresholds), self.interactions)
        features, thresholds = selector.draw(iteration, -1, self.n_thresholds)
        features = self.usable if features is None else features
        return SplitChoices(features, Candidates(features, thresholds), None, self.interactions)

    def _state_for(self, n_root: int) -> GrowthState:
        """A growth state with one histogram slot for every leaf a tree on ``n_root`` rows may
        have (as many as ``_MAX_POOL_BYTES`` allows; more are added when a tree needs them)."""
        leaves = min(self.limits.max_leaves, 2 ** min(self.limits.max_depth, 62), max(1, n_root))
        leaves = max(1, min(leaves, _MAX_POOL_BYTES // (self.n_cells * 2 * np.dtype(FIXED_DTYPE).itemsize)))
        if self._state is None or self._state.pool.shape[0] < leaves:
            # pages are touched only by the slots a tree uses
            self._state = _new_state(leaves, np.empty((leaves, self.n_cells, 2), FIXED_DTYPE), self.n_groups)
        return self._state

    def _pack(self, state: GrowthState, n_nodes: int, units: Units, params: SplitParams) -> GrownTree:
        """The grown tree from the state's first ``n_nodes`` nodes (grown in the scale of ``units``
        with ``params``)."""
        (feature, threshold, bin_threshold, missing_left, left, right, value, gain, hessian, count,
         leaves) = pack_tree(state.nodes[:n_nodes], self.thresholds, self.threshold_offsets, units, params)
        bounds = None
        if self.monotone is not None:  # every output within its node's bounds (LightGBM's basic method)
            bounds = np.ldexp(state.bounds[:n_nodes], units.g_exp - units.h_exp)  # values, as the outputs
            np.clip(value, bounds[:, 0], bounds[:, 1], out=value)
        tree = Tree(feature=feature, threshold=threshold, bin_threshold=bin_threshold, missing_left=missing_left,
                    left=left, right=right, value=value, gain=gain, hessian=hessian, count=count,
                    left_sets=state.left_sets[:n_nodes].copy() if self.cells.categorical is not None else None)
        return GrownTree(tree, leaves, bounds)

    def set_leaf_values(self, grown: GrownTree, sums: np.ndarray, g_exp: int, h_exp: int) -> None:
        """Set the leaves of ``grown`` to the Newton values of the weighted gradient and hessian
        sums ``sums`` (int64 in units ``2**g_exp``, ``2**h_exp``, shape ``(n_leaves, 2)`` in
        ``leaf_nodes`` order), within each leaf's monotone bounds: the values :meth:`_pack` gives a
        tree's nodes (:func:`~smartboost._kernels.split.leaf_values`)."""
        value = np.empty(sums.shape[0])
        units = tree_units(g_exp, h_exp, 1.0, self.split_params.lambda_l2)
        params = in_units(self.split_params, units)
        leaf_values(np.ascontiguousarray(sums[:, 0]), np.ascontiguousarray(sums[:, 1]), units,
                    params.lambda_l1, params.lambda_l2, value)
        if grown.bounds is not None:
            np.clip(value, grown.bounds[grown.leaf_nodes, 0], grown.bounds[grown.leaf_nodes, 1], out=value)
        grown.tree.value[grown.leaf_nodes] = value


def check_units(g_exp: int, h_exp: int, iteration: int) -> None:
    """Raise ``DataError`` when the fixed-point units of iteration ``iteration`` are not finite
    (:func:`~smartboost._kernels.gradients.unit_exponents` of a gradient or hessian that is not)."""
    if NOT_FINITE in (g_exp, h_exp):
        raise DataError(f"the gradients or hessians of iteration {iteration} are not finite: the loss overflows "
                        "(labels, weights or init_score too large in magnitude, or parameters such as sigmoid "
                        "too large)")


def _new_state(slots: int, pool: np.ndarray, n_groups: int) -> GrowthState:
    """A growth state for trees of at most ``slots`` leaves, with the histogram slots ``pool``
    and room for ``n_groups`` words of interaction groups per node."""
    capacity = 2 * slots + 1
    return GrowthState(np.zeros(capacity, NODE), np.zeros(capacity, np.int64), np.zeros(slots, np.int64), pool,
                       np.zeros((slots, 4), np.int64), np.zeros(1, COUNTS), np.zeros((capacity, 4), np.uint64),
                       np.zeros((capacity, 2)), np.zeros((capacity, n_groups), np.uint64),
                       np.zeros((capacity, len(SPLIT_ROW)), np.int64))


def _enlarged(state: GrowthState) -> GrowthState:
    """``state`` with the histogram slots and node records it asked for (at least twice as many),
    its tree and open histograms kept."""
    counts = state.counts[0]
    old = state.pool.shape[0]
    slots = max(int(counts["need_slots"]), (int(counts["need_nodes"]) + 1) // 2, 2 * old)
    pool = np.empty((slots, *state.pool.shape[1:]), state.pool.dtype)
    pool[:old] = state.pool
    bigger = _new_state(slots, pool, state.groups.shape[1])
    n_nodes, n_open, n_free = int(counts["n_nodes"]), int(counts["n_open"]), int(counts["n_free"])
    for name in ("nodes", "left_sets", "bounds", "groups"):
        getattr(bigger, name)[:n_nodes] = getattr(state, name)[:n_nodes]
    bigger.open[:n_open] = state.open[:n_open]
    bigger.free[:n_free] = state.free[:n_free]
    bigger.free[n_free:n_free + slots - old] = np.arange(old, slots)
    bigger.counts[0] = state.counts[0]
    bigger.counts[0]["n_free"] = n_free + slots - old
    return bigger


def _agree_elsewhere(source: RowSource, state: GrowthState) -> None:
    """Have ``source`` agree on the best splits of the nodes just scanned (the loop's rows of
    ``state.splits``), replacing them in place."""
    splits = state.splits[:state.counts[0]["n_splits"]]
    if splits.shape[0]:  # none when no child could be split (every worker knows it)
        splits[:] = source.agree(splits)
