"""Data types and tuning constants shared by the kernels and the Python layer.

Every array that crosses into a kernel has its dtype declared here, once.
"""

from __future__ import annotations

import numpy as np

X_BINNED_DTYPE = np.uint8
"""Binned feature values. Value bins are 0 .. n_bins[f]-1; the missing-value bin is n_bins[f]."""

ROW_FIXED_DTYPE = np.int32
"""Per-row fixed-point (g, h) pairs, interleaved in an (n_rows, 2) array (``_kernels.gradients``)."""

FIXED_DTYPE = np.int64
"""Histogram cells: exact sums of the per-row fixed-point gradients and hessians."""

INDEX_DTYPE = np.uint32
"""Row indices (a tree's row list, partition scratch). Unsigned: numba then skips the
negative-index wraparound in gathered loops (measured 5% faster histograms than int32)."""

HIST_PARALLEL_MIN_ROWS = 1000
"""Nodes with at least this many rows build their histogram on all threads (PERFORMANCE.md 3)."""

HIST_COLUMNS_PER_THREAD = 32
"""From this many dense columns per thread (all features dense and given), node histograms
split the columns between threads instead of the rows (``_kernels.histogram.
build_histogram_columns``: on 2 threads equal at 56 features, 16-25% faster from 84), whatever
the node's rows: with no private histograms to zero and merge, each thread zeroes and fills its
columns' cells only, which takes a third to a half off a small node's cost against one thread
(136 features, cold histograms: 40 rows 80 -> 44 us, 130 rows 78-98 -> 59-62 us; MVS 0.15
ranking histograms per iteration 91.7-101.6 -> 85.6-97.4 ms in three alternating pairs
against column blocks from 250 rows only)."""

PARTITION_PARALLEL_MIN_ROWS = 5000
"""Nodes with at least this many rows are partitioned on all threads (PERFORMANCE.md 3)."""

COMPACT_ROWS_FRACTION = 0.2
"""A tree grown on at most this fraction of the training rows (a sample) copies their bins into
a compact array first (``grower.NodeRows``). Measured on 1M x 28 rows, 255 leaves, Bernoulli
samples, ms per iteration with / without the copy: rate 0.05: 42.8 / 45.5, 0.1: 49.7 / 52.9,
0.2: 64.1 / 65.9, 0.25: 72.0 / 71.8, 0.3: 77.3 / 75.4, 0.5: 108 / 94 (the copy grows with the
rows, and large nodes partition faster on the column-major bins)."""

WIDE_ROW_BYTES = 64
"""Row-major rows of at least this many bytes (a cache line) are wide: reading one bin of a row
costs a cache line of its own, and a walk reads a line or two of the row at random per level.

- A compact tree's partitions read a split feature's bins as a strided column of its compact
  copy while its rows are narrow, and from this width the feature's column-major bins gathered
  once per tree at the tree's row ids. Wall ms of partitions per iteration, 255 leaves, MVS:
  1.1M x 136 ranking rows sampled at 0.15: 21-33 strided against 7-9 gathered; 1M x 28 rows
  sampled at 0.1: 7-12 strided against 12-14 gathered (docs/internals.md).
- Tree walks on wide rows prefetch the rows ``WALK_PREFETCH_ROWS`` ahead
  (``_kernels.predict.add_tree_to_rows``)."""

WALK_PREFETCH_ROWS = 16
"""Rows ahead that tree walks on wide rows prefetch (``_kernels.predict.add_tree_to_rows``)."""

PREFETCH_DISTANCE = 8
"""Rows ahead that gathered loops prefetch (PERFORMANCE.md 2: 4-12 equally good)."""
