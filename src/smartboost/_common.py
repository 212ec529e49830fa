"""Data types and tuning constants shared by the kernels and the Python layer.

Every array that crosses into a kernel has its dtype declared here, once.
"""

from __future__ import annotations

import numpy as np

X_BINNED_DTYPE = np.uint8
"""Binned feature values. Value bins are 0 .. n_bins[f]-1; the missing-value bin is n_bins[f]."""

X_BINNED_WIDE_DTYPE = np.uint16
"""Binned feature values of data with a feature of more than 255 bins (``max_bin`` above 255,
up to 65535: exact split search). The kernels take either width; numba compiles the 16-bit
versions when first used."""

ROW_FIXED_DTYPE = np.int32
"""Per-row fixed-point (g, h) pairs, interleaved in an (n_rows, 2) array (``_kernels.gradients``)."""

CELL_DTYPE = np.uint32
"""Histogram cell indices: each feature's first cell, and the cells a sparse row lists
(``binning.HistogramLayout``). Unsigned, as row indices are."""

FIXED_DTYPE = np.int64
"""Histogram cells: exact sums of the per-row fixed-point gradients and hessians."""

INDEX_DTYPE = np.uint32
"""Row indices (a tree's row list, partition scratch). Unsigned: numba then skips the
negative-index wraparound in gathered loops."""

HIST_PARALLEL_MIN_ROWS = 1000
"""Nodes with at least this many rows build their histogram on all threads (docs/internals.md)."""

HIST_COLUMNS_PER_THREAD = 32
"""From this many dense columns per thread (all features dense and given), node histograms
split the columns between threads instead of the rows (``_kernels.histogram.
build_histogram_columns``), whatever the node's rows: with no private histograms to zero and
merge, each thread zeroes and fills its own columns' cells only, which pays on wide data even
for small nodes. Below it, row chunks win (docs/internals.md, "Histograms")."""

SCAN_PARALLEL_MIN_CELLS = 4096
"""A node's (or a pair of children's) split scans run on all threads from this much work: the
histogram cells of the features scanned, each feature counted ``SCAN_FEATURE_CELLS`` more
(``_kernels.split.scans_in_parallel``). Below it a parallel loop costs more to start and to
balance than it saves (docs/internals.md, "Splits")."""

SCAN_BUILD_ROWS = HIST_PARALLEL_MIN_ROWS
"""A smaller child of fewer rows (one that would build its histogram on one thread) has it built
inside the parallel loop that scans it, each thread the cells of the features it then scans,
when every feature is dense and the scans run in parallel (``grower.NodeRows``;
docs/internals.md, "Splits")."""

SCAN_FEATURE_CELLS = 32
"""The fixed cost of one feature's scan (calls, its missing cell, its best threshold), in
cells of the scan loop."""

HIST_SMALL_DATA_COLUMNS_PER_THREAD = 12
"""From this many dense columns per thread (all features dense and given), a tree whose rows'
bins and fixed-point gradients fit in ``HIST_SMALL_DATA_BYTES`` builds its histograms over
column blocks too: its rows stay in cache while every thread reads them, and the blocks skip
zeroing and merging a private histogram per thread, and run on every thread where row chunks
would leave a small node to one. On larger data the threads would each read every row from
memory, where row chunks read it once. 7,000 x 28, 2 threads: 0.90-0.95x the training time;
800,000 x 28 with column blocks for every node 1.09-1.16x, for nodes of under 29,000 rows
1.05x."""

HIST_SMALL_DATA_BYTES = 2 << 20
"""The bytes of a tree's rows (dense bins and fixed-point g, h) under which it counts as small
for ``HIST_SMALL_DATA_COLUMNS_PER_THREAD``: about a core's share of the last cache levels."""

PARTITION_PARALLEL_MIN_ROWS = 5000
"""Nodes with at least this many rows are partitioned on all threads (docs/internals.md)."""

COMPACT_ROWS_FRACTION = 0.2
"""A tree grown on at most this fraction of the training rows (a sample) copies their bins into
a compact array first (``grower.NodeRows``): the copy keeps a small sample's histograms and
partitions in cache, but it grows with the rows, and large nodes partition faster on the
column-major bins; the two break even near this fraction."""

WIDE_ROW_BYTES = 64
"""Row-major rows of at least this many bytes (a cache line) are wide: reading one bin of a row
costs a cache line of its own, and a walk reads a line or two of the row at random per level.

- A compact tree's partitions read a split feature's bins as a strided column of its compact
  copy while its rows are narrow (a few rows per cache line), and from this width the feature's
  column-major bins gathered once per tree at the tree's row ids (docs/internals.md).
- Tree walks on wide rows prefetch the rows ``WALK_PREFETCH_ROWS`` ahead
  (``_kernels.predict.add_tree_to_rows``)."""

WALK_PREFETCH_ROWS = 16
"""Rows ahead that tree walks on wide rows prefetch (``_kernels.predict.add_tree_to_rows``)."""

WALK_STEP_COST = 16
"""What a level costs a row that walks alone, in levels of a group of 8 rows walking together
(``_kernels.predict.add_tree_to_rows``): the group overlaps 8 rows' dependent loads, a row alone
waits for each and mispredicts its exit. A group takes every row as many levels as leave at most
``1 / WALK_STEP_COST`` of the rows deeper (``Tree.add_to_binned_rows``); on 255-leaf trees
anything from 1/8 to 1/32 measured the same."""

PREFETCH_DISTANCE = 8
"""Rows ahead that gathered loops prefetch (docs/internals.md, "Histograms"): far enough for the
line to arrive, near enough to stay in cache."""
