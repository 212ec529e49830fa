"""The named records the kernels take and return.

Kernel arguments that travel together are grouped into named tuples (numba compiles attribute
access on them to plain loads), and a node of a growing tree is a record of a structured array,
so that no layer hands another a positional tuple. Fields that may be None (RGBM's thresholds,
the cells a histogram writes) are read through a small function taking the field as an argument,
where numba prunes the ``is None`` branch when it compiles.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

__all__ = ["SplitParams", "Units", "NodeSums", "Cells", "Candidates", "Split", "NO_LEFT_SET",
           "ThresholdRule", "HistogramArrays", "PartitionColumns", "LocalRows", "DrawPieces", "NodeDraws",
           "Interactions", "SplitChoices", "GrowthLimits", "GrowthState", "CategoricalNodes", "NODE", "COUNTS",
           "SPLIT_ROW"]

SplitParams = namedtuple("SplitParams", ["lambda_l1", "lambda_l2", "min_gain_to_split", "min_sum_hessian_in_leaf",
                                         "min_data_in_leaf", "max_cat_to_onehot", "max_cat_threshold", "cat_smooth",
                                         "cat_l2", "min_data_per_group", "sign_leaves"],
                         defaults=(4.0, 32.0, 10.0, 10.0, 100.0, 0.0))
SplitParams.__doc__ = """The regularisation and limits a split must satisfy, those of categorical
splits (``_kernels.split.scan_categorical``; LightGBM's parameters and defaults), and the split
criterion; every field a float.

``min_data_in_leaf`` counts rows through the hessian estimate (``_kernels.split``);
``sign_leaves`` (1.0, or 0.0 by default) scores splits for leaves that output signs
(``weak_learner="sign"``). The split kernels take the absolute quantities (``lambda_l1``,
``lambda_l2``, ``min_gain_to_split``, ``min_sum_hessian_in_leaf``, ``cat_l2``) in the scale of
the tree's :class:`Units` (``_kernels.split.in_units``); the counts and ``cat_smooth``, which is
both a count and a hessian, as given."""

Units = namedtuple("Units", ["g", "h", "g_exp", "h_exp"], defaults=(0, 0))
Units.__doc__ = """The scale of a tree's split kernels: a fixed-point gradient sum ``G`` stands for
the value ``G * g * 2**g_exp``, a hessian sum ``H`` for ``H * h * 2**h_exp``
(``_kernels.gradients``), and the kernels compute with ``G * g`` and ``H * h``, every absolute
parameter divided by its power of two (``_kernels.split.in_units``); the gains and leaf values
they report are multiplied back (``_kernels.grow.pack_tree``).

Powers of two scale exactly, so the kernels find what they would find on the values, bit for
bit, as long as those stay within the float range; in this scale they stay there whatever the
weights' magnitude (a split score is of the order of ``G**2 / H``, the cube of a uniform
weight). ``g_exp``, ``h_exp`` (int) are the exponents of the fixed-point units, or more for
hessians where ``lambda_l2`` would be more than ``2**64`` of their scale
(``_kernels.split.tree_units``); ``g``, ``h`` (float) the rest, the weight scale of sampled rows
(``sample_weight_scale``), 1 without. With the default exponents 0 the scale is the values'."""

NodeSums = namedtuple("NodeSums", ["g", "h", "n_rows", "lower", "upper"], defaults=(-np.inf, np.inf))
NodeSums.__doc__ = """A node's fixed-point gradient and hessian sums, its rows, and the bounds its
output and its children's outputs must keep (monotone constraints; -inf and +inf without)."""

Cells = namedtuple("Cells", ["offsets", "n_bins", "categorical", "monotone", "from_top"],
                   defaults=(None, None, None))
Cells.__doc__ = """The features' histogram cells and how they split: feature ``f`` owns cells
``offsets[f] .. offsets[f] + n_bins[f]`` (its value bins, then its missing-value bin);
``categorical`` (bool, one per feature) marks the categorical features, ``monotone`` (int8, one
per feature: -1, 0, +1) the monotone constraints, ``from_top`` (bool, one per feature) the
features whose scan sending missing values right counts its rows from the top as the other
scans do (``binning.missing_right_from_top``). Each is None when no feature has one, and is
then read through a function taking it as an argument, which numba compiles without that code
(``_kernels.split``). They are fields of this record, which the split kernels' parallel loops
take as a whole: numba cannot pass an array nested two records deep into them."""

Candidates = namedtuple("Candidates", ["features", "thresholds"])
Candidates.__doc__ = """What a node may split on: ``features`` (bool mask) and, for RGBM's Type 1, the
only thresholds to try, packed (feature ``f``'s sorted bins are
``thresholds[thresholds[f]:thresholds[f + 1]]``); ``thresholds`` None: every threshold."""

Split = namedtuple("Split", ["feature", "bin", "missing_left", "gain", "gl", "hl", "left_set"])
Split.__doc__ = """A node's best split: rows with bin <= ``bin`` of ``feature`` (and missing values
when ``missing_left``) go left; ``gl``, ``hl`` are the left child's fixed-point sums.
``feature`` is -1 when no valid split exists. A split on a categorical feature sends the bins
of ``left_set`` left (a 256-bit set, four uint64 words: bin ``b`` is bit ``b % 64`` of word
``b // 64``), and the rest, missing values among them, right (``bin`` 0, ``missing_left``
False); a numeric split's ``left_set`` is empty."""

NO_LEFT_SET = (np.uint64(0), np.uint64(0), np.uint64(0), np.uint64(0))
"""The ``left_set`` of a numeric split."""

ThresholdRule = namedtuple("ThresholdRule", ["threshold", "missing_left", "missing_bin"])
ThresholdRule.__doc__ = """A numeric split as partitions apply it to bins: value bins ``<= threshold``
go left, and the ``missing_bin`` too when ``missing_left`` (``_kernels.partition``; a categorical
split is applied as its set of left bins, a uint64 array of four words)."""

HistogramArrays = namedtuple("HistogramArrays", ["dense_bins", "dense_offsets", "sparse_indptr", "sparse_cells",
                                                 "sparse_first", "sparse_last", "default_cells", "cells"])
HistogramArrays.__doc__ = """How a tree's histograms read its rows (``binning.HistogramLayout``): the
dense features' row-major bins and first cells, the sparse features' non-default cells per row
(CSR) with each sparse feature's cell range and default cell, and ``cells``, the cells the
histograms write (None: all of them)."""

PartitionColumns = namedtuple("PartitionColumns", ["column_major", "compact_bins", "compact_column", "ids",
                                                   "gathered", "is_gathered"])
PartitionColumns.__doc__ = """Where partitions read a split feature's bins (``_kernels.partition.partition_node``):
the column-major bins by row id, or for a tree grown on a compact copy of its rows, a column of
``compact_bins`` (``compact_column[f]``; -1: none) or the feature's bins gathered at the tree's
row ``ids`` into ``gathered[f]`` on first use (``is_gathered[f]``)."""

LocalRows = namedtuple("LocalRows", ["rows", "scratch", "gh", "thread_hists", "histogram", "column_blocks",
                                     "columns", "scan_build_rows"])
LocalRows.__doc__ = """A tree's rows held by this process (``grower.NodeRows``): the row list (partitioned
in place, node by node) and the partition's scratch, the rows' fixed-point (g, h), one histogram
per thread (their number sets the kernels' thread count), the :class:`HistogramArrays`, whether
histograms go by blocks of columns, the :class:`PartitionColumns`, and below how many rows a
smaller child has its histogram built inside the parallel loop that scans it
(``_kernels.split.subtract_and_find_splits``) rather than before it (0: none)."""

DrawPieces = namedtuple("DrawPieces", ["start", "first", "length", "offset", "needed", "left", "ties"])
DrawPieces.__doc__ = """Where an exact-count draw (uniform's selection sampling, GOSS's top rows and
uniform rest: ``_kernels.draws``) runs over one machine's rows, in pieces, and its state at
each piece's start; every field an int64 array, one entry per piece, the pieces in row order.

A piece is a run of the machine's rows inside one of the draw's fixed chunks
(``sampling.chunks``): rows ``start .. start + length`` here, whose ids among every machine's
rows begin at ``first``; ``offset`` sampled rows of this machine come before it. The draw's
state when it reaches the piece: ``needed`` rows still to draw in the chunk out of ``left``
candidates, and ``ties`` rows equal to GOSS's threshold still to take as top rows (0 for
uniform). The draw kernels leave the state at the piece's end in place. On one machine the
pieces are the chunks."""

NodeDraws = namedtuple("NodeDraws", ["stream", "iteration", "t", "pool", "n_thresholds", "features", "packed",
                                     "chosen", "rest"])
NodeDraws.__doc__ = """RGBM's per-node candidate draws of one tree (``selection.FeatureSelector.node_draws``):
the random stream and iteration keying them, ``t`` and the ``pool`` of features drawn from, each
feature's threshold count, and buffers for two nodes' draws (rows of ``features``, and of
``packed`` for Type 1, None for Types 2 and 3; ``chosen`` and ``rest`` are scratch)."""

Interactions = namedtuple("Interactions", ["feature_groups", "features"])
Interactions.__doc__ = """Interaction constraints (``_kernels.grow``): ``feature_groups`` (uint64,
shape (n_features, n_words)) holds the bit set of the groups each feature belongs to, and
``features`` (bool, shape (2, n_features)) is the buffer of two nodes' allowed candidates. A node
may split on a feature sharing a group with every feature of its path: the groups of the path
are the node's row of ``GrowthState.groups``."""

SplitChoices = namedtuple("SplitChoices", ["built", "tree", "per_node", "interactions", "partial"],
                          defaults=(None, False))
SplitChoices.__doc__ = """The splits a tree may make: ``built``, the features whose histograms it builds;
``tree``, the :class:`Candidates` of every node; ``per_node``, the :class:`NodeDraws` that replace
them node by node (None: ``tree`` holds for every node); ``interactions``, the
:class:`Interactions` that narrow every node's candidates (None: no constraint); ``partial``,
True when ``built`` is the share of the features whose summed histograms a ``smartboost.dask``
worker holds, the only ones it scans (the growth loop then stops after each scan for the
workers' best splits to be agreed)."""

GrowthLimits = namedtuple("GrowthLimits", ["max_leaves", "max_depth", "min_rows_to_split", "min_hess_to_split",
                                           "depthwise", "intermediate"], defaults=(True,))
GrowthLimits.__doc__ = """How a tree grows: leaves and depth, the rows and hessian sum a node needs to be
split (twice ``min_data_in_leaf`` and ``min_sum_hessian_in_leaf``; the growth loop takes the
latter in the tree's scale, :class:`Units`), the growth policy, and
whether monotone constraints bound the leaves by LightGBM's "intermediate" method (else its
"basic" one; ``_kernels.grow``)."""

NODE = np.dtype([
    ("feature", np.int32), ("bin", np.int32), ("missing_left", np.bool_), ("gain", np.float64), ("left", np.int32),
    ("gl", np.int64), ("hl", np.int64), ("g", np.int64), ("h", np.int64), ("n_rows", np.int64), ("start", np.int64),
    ("end", np.int64), ("depth", np.int64), ("slot", np.int64), ("parent", np.int64),
])
"""A node of a growing tree: its best split (``feature`` -1: none) and that split's left sums,
its own fixed-point sums and rows, its slice of the row list, its depth, the histogram slot it
holds (-1: none) and its parent (-1 for the root). Internal nodes have ``left`` >= 0 (the right
child is ``left + 1``)."""

COUNTS = np.dtype([
    ("n_nodes", np.int64), ("n_leaves", np.int64), ("n_open", np.int64), ("n_free", np.int64),
    ("n_pending", np.int64), ("phase", np.int64), ("need_nodes", np.int64), ("need_slots", np.int64),
    ("n_splits", np.int64),
])
"""The scalars of a growing tree: nodes and leaves so far, open leaves, free histogram slots,
splits waiting for their rows, the loop's phase, the sizes it asked for when it ran out, and the
rows of ``GrowthState.splits`` in use."""

SPLIT_ROW = ("node", "left", "feature", "bin", "missing_left", "gain", "gl", "hl", "g", "h", "left_set_0",
             "left_set_1", "left_set_2", "left_set_3")
"""The columns of a row of ``GrowthState.splits``: a node's id, its left child, its split
(``gain`` as the bits of its float64), its own sums, and the four words of its left set."""

GrowthState = namedtuple("GrowthState", ["nodes", "open", "free", "pool", "pending", "counts", "left_sets",
                                         "bounds", "groups", "splits"])
GrowthState.__doc__ = """A tree being grown by ``_kernels.grow.grow_tree``: ``nodes`` (:data:`NODE`
records), the ids of the ``open`` leaves (those with a valid split), a stack of ``free``
histogram slots of ``pool`` (int64, shape (slots, n_cells, 2)), the ``pending`` splits (int64
rows ``(parent, slot, n_left, built)``: the slot for one child's histogram, -1 when none is
wanted, and once the rows are split, the left child's rows and the child whose histogram was
built), and ``counts`` (one :data:`COUNTS` record). Per node besides its record: the left bins of
its categorical split (``left_sets``, uint64, shape (n, 4); see :class:`Split`), the bounds of
its output (``bounds``, float64, shape (n, 2): lower, upper, in the tree's scale like the
nodes' gains; monotone constraints) and the bit
set of the interaction groups its path allows (``groups``, uint64, shape (n, n_words); no
column without interaction constraints). ``splits`` (int64, shape (n, :data:`SPLIT_ROW` columns))
holds the nodes' splits where the loop stops for a row source elsewhere: the splits it asks for
(``NEED_SPLITS``), or the splits it found in the nodes it just scanned, to be replaced by the
ones the workers agree on (``NEED_AGREEMENT``)."""

CategoricalNodes = namedtuple("CategoricalNodes", ["is_categorical", "left_sets"])
CategoricalNodes.__doc__ = """The categorical splits of trees as the raw prediction reads them
(``_kernels.predict.predict_trees``): per node, whether it splits a categorical feature, and its
set of left bins (uint64, shape (n_nodes, 4)); the feature's raw values are its bins there."""
