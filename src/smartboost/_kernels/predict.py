"""Tree evaluation and raw-score updates.

Two walks share one rule, a node sending a row left when its value is ``<= threshold`` and a
missing value following the node's learned direction: the raw walk (:func:`predict_trees`) on
float features, where "missing" is NaN, and the binned walk (:func:`add_tree_to_rows`) on the
training bins, where the threshold is a bin and "missing" is the feature's missing-value bin.
Because the thresholds are the bin edges, both give the same leaf for every row (tested). Both
walk several rows at once through a tree whose nodes are packed into one word each.

Categorical splits send the bins of a set left (the rest, missing values and unseen categories
among them, right). The raw prediction reads a categorical feature's bins, which the caller puts
in its column (``Booster.predict``), and tests them against the nodes' sets; the binned walk of a
tree with categorical splits tests every node's set of left bins, numeric nodes' included
(``Tree.left_bin_sets``). Both compile without that code for models without categorical features
(the argument is None).

Each row's score is updated tree after tree (``out[i] += value_t``), the order the boosting
loop uses, so predicting the training rows reproduces the training scores bit for bit.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch, prefetch_span


@njit(cache=True, nogil=True, inline="always")
def in_set(sets, node, b):
    """Whether bin ``b`` is in the set of node ``node`` (rows of four uint64 words)."""
    return ((sets[node, np.uint64(b) >> np.uint64(6)] >> (np.uint64(b) & np.uint64(63))) & np.uint64(1)) != 0


@njit(cache=True, nogil=True)
def goes_left_raw(categorical, node, x, threshold, missing_left):
    """The raw-data decision at ``node`` for the value ``x``: ``x <= threshold``, a NaN going
    left when ``missing_left``; a categorical node (``categorical``, see :func:`predict_trees`)
    sends the bins of its set left."""
    if categorical is not None:
        if categorical.is_categorical[node]:
            return in_set(categorical.left_sets, node, np.int64(x))
    # NaN fails both comparisons, so it goes left exactly where missing values do; a value
    # passes one of them, and the two agree (no branch on the row's data)
    return (x <= threshold) | (missing_left & (not (x > threshold)))


LEAF_WORD = np.uint64(0xFFFFFFFF)
"""The raw walk's node words (:func:`predict_trees`): bits 0-31 the left child, this value at a
leaf (the right child is ``left + 1``), bits 32-62 the feature, bit 63 whether missing values
go left. One load gives the walk everything but the threshold."""


@njit(cache=True, nogil=True)
def _raw_step(X, row, words, threshold, categorical, node):
    """``(child, leaf)``: the node row ``row`` of ``X`` goes to from ``node``; ``leaf`` when
    ``node`` is a leaf."""
    word = words[node]
    child = np.int64(word & LEAF_WORD)
    if child == 0xFFFFFFFF:
        return node, True
    x = X[row, np.int64((word >> np.uint64(32)) & np.uint64(0x7FFFFFFF))]
    missing_left = (word >> np.uint64(63)) != 0
    return child + 1 - np.int64(goes_left_raw(categorical, node, x, threshold[node], missing_left)), False


@njit(cache=True, nogil=True)
def find_leaf(X, row, node, words, threshold, categorical):
    """Global index of the leaf that row ``row`` of ``X`` reaches from ``node`` (the arguments
    are those of :func:`predict_trees`)."""
    leaf = False
    while not leaf:
        node, leaf = _raw_step(X, row, words, threshold, categorical, node)
    return node


@njit(cache=True, nogil=True, inline="always")
def _raw_lane(X, words, threshold, categorical, value, out, root, node, row, next_row):
    """One level of one lane of :func:`predict_trees`: its row moves down a level, or, at its
    leaf, is scored and the lane takes row ``next_row`` from the tree's root. Returns the
    lane's new ``(node, row, next_row)``."""
    node, leaf = _raw_step(X, row, words, threshold, categorical, node)
    if leaf:
        out[row] += value[node]
        return root, next_row, next_row + 1
    return node, row, next_row


@njit(cache=True, nogil=True, parallel=True)
def predict_trees(X, words, threshold, value, roots, out, block, categorical):
    """Add the trees' outputs to ``out``.

    Blocks of rows run in parallel; a block is walked through one tree at a time, 8 rows at
    once, one level per row per step, a lane taking the block's next row as soon as its row
    reaches a leaf: independent rows hide each other's load latency and mispredicted branches.
    (The binned walk, :func:`add_tree_to_rows`, takes fixed levels instead; a raw step, a float
    threshold and two comparisons, costs enough that walking rows past their leaves made
    prediction slower.)

    Parameters
    ----------
    X : ndarray, shape (n_rows, n_features)
        Raw features (float32/float64), C order; NaN is a missing value.
    words : ndarray of uint64, shape (n_nodes,)
        :data:`LEAF_WORD`'s words of all trees' nodes, concatenated (child indices global).
    threshold : ndarray of float64, shape (n_nodes,)
    value : ndarray of float64, shape (n_nodes,)
        Leaf values (shrinkage included).
    roots : ndarray of int64, shape (n_trees,)
        Root node of each tree.
    out : ndarray of float64, shape (n_rows,)
        Scores to add to, in place; each row's trees are added in order.
    block : int
        Rows walked through one tree at a time (see ``Booster`` for the choice).
    categorical : CategoricalNodes or None
        The nodes' categorical splits, when some feature is categorical; its columns of ``X``
        then hold the rows' bins (as floats). None: every feature is numeric.
    """
    n_rows = X.shape[0]
    for b in prange((n_rows + block - 1) // block):
        start = b * block
        stop = min(n_rows, start + block)
        for t in range(roots.shape[0]):
            root = np.int64(roots[t])
            next_row = start
            if stop - start >= 16:
                n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = root
                r0, r1, r2, r3 = np.int64(start), np.int64(start + 1), np.int64(start + 2), np.int64(start + 3)
                r4, r5, r6, r7 = np.int64(start + 4), np.int64(start + 5), np.int64(start + 6), np.int64(start + 7)
                next_row = np.int64(start + 8)
                while next_row + 8 <= stop:  # a row for every lane that may finish in this round
                    n0, r0, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n0, r0, next_row)
                    n1, r1, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n1, r1, next_row)
                    n2, r2, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n2, r2, next_row)
                    n3, r3, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n3, r3, next_row)
                    n4, r4, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n4, r4, next_row)
                    n5, r5, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n5, r5, next_row)
                    n6, r6, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n6, r6, next_row)
                    n7, r7, next_row = _raw_lane(X, words, threshold, categorical, value, out, root, n7, r7, next_row)
                for node, row in ((n0, r0), (n1, r1), (n2, r2), (n3, r3), (n4, r4), (n5, r5), (n6, r6), (n7, r7)):
                    out[row] += value[find_leaf(X, row, node, words, threshold, categorical)]
            for i in range(next_row, stop):
                out[i] += value[find_leaf(X, i, root, words, threshold, categorical)]


_LEAF_ROWS_PREFETCH = 32
"""Rows ahead that :func:`add_leaf_values` prefetches."""


@njit(cache=True, nogil=True, parallel=True)
def add_leaf_values(raw, rows, ids, leaf_start, leaf_end, leaf_value, leaves_out):
    """Add each leaf's value to the scores of the rows it holds (leaf segments of ``rows``),
    and write each row's leaf position ``k`` to ``leaves_out[row]`` when that is an array
    (None: compiled without; ``raw`` None: the leaves only). ``rows`` holds row ids, or with
    ``ids`` given, positions in ``ids`` (a compact tree's row list: no gathered copy of the ids).

    The training-score update with no tree traversal (docs/internals.md, "Partitions and score
    updates"): the partitions already placed every row in its leaf. Each row is in exactly one
    segment, so leaves run in parallel. A leaf's rows are spread over the whole score array, one
    cache line each, so the score ``_LEAF_ROWS_PREFETCH`` rows ahead is prefetched.
    """
    for k in prange(leaf_value.shape[0]):
        v = leaf_value[k]
        first = leaf_start[k]
        n = leaf_end[k] - first
        for i in range(n):
            if raw is not None and i + _LEAF_ROWS_PREFETCH < n:
                ahead = rows[np.uint64(first + i + _LEAF_ROWS_PREFETCH)]
                prefetch(raw, ahead if ids is None else ids[np.uint64(ahead)])
            row = rows[np.uint64(first + i)]
            if ids is not None:
                row = ids[np.uint64(row)]
            if raw is not None:
                raw[row] += v
            if leaves_out is not None:
                leaves_out[row] = k


@njit(cache=True, nogil=True, parallel=True)
def add_values_by_leaf(scores, leaf, leaf_value):
    """``scores[i] += leaf_value[leaf[i]]`` for every row: a tree whose rows were placed
    before its values were known (``leaf_value_rows='all'``)."""
    for i in prange(scores.shape[0]):
        scores[i] += leaf_value[leaf[i]]


_CHILD = np.uint64(0xFFFFFF)


@njit(cache=True, nogil=True)
def pack_bin_decisions(feature, bin_threshold, missing_left, missing_bin, left, widths):
    """One uint64 per node for :func:`add_tree_to_rows`: the binned decision as a range test.

    A row goes right when ``(bin - lo) mod 2^k < width`` for ``k``-bit bins: ``lo = threshold +
    1`` and ``width`` reaches the missing-value bin (the largest code) only when missing values
    go right. Bits 0-23: left child (the right child is ``left + 1``), 24-47: feature. One-byte
    bins (``widths`` None): bits 48-55 ``lo``, 56-63 ``width``, one load per node. Two-byte bins:
    bits 48-63 ``lo``, and ``width`` in ``widths`` (uint16, one per node), as the word has no
    room left. A leaf is its own left child, with width 0: a row at a leaf stays there, so a
    step needs no test of whether the row has arrived. Needs fewer than 2**24 nodes and features.
    """
    code_max = 255 if widths is None else 65535
    out = np.empty(feature.shape[0], np.uint64)
    for i in range(feature.shape[0]):
        if left[i] < 0:
            out[i] = np.uint64(i)
            if widths is not None:
                widths[i] = 0
            continue
        f = feature[i]
        t = bin_threshold[i]
        width = missing_bin[f] - t - 1 if missing_left[i] else code_max - t
        out[i] = np.uint64(left[i]) | (np.uint64(f) << np.uint64(24)) | (np.uint64(t + 1) << np.uint64(48))
        if widths is None:
            out[i] |= np.uint64(width) << np.uint64(56)
        else:
            widths[i] = width
    return out


@njit(cache=True, nogil=True, inline="always")
def _descend(bins, decisions, widths, left_sets, node, row):
    """The node row ``row`` goes to from ``node`` (``node`` itself at a leaf). With
    ``left_sets`` (a tree with categorical splits) on one-byte bins every node's set of left
    bins decides (a leaf's holds every bin); on two-byte bins only the categorical nodes' sets
    do (a numeric node's set is empty there: its bins do not fit 256 bits). None: the range test
    of the decision word."""
    word = decisions[node]
    child = np.int64(word & _CHILD)
    b = bins[row, np.int64((word >> np.uint64(24)) & _CHILD)]
    if widths is None:
        if left_sets is not None:
            return child + 1 - np.int64(in_set(left_sets, node, b))
        lo = np.uint8((word >> np.uint64(48)) & np.uint64(255))
        return child + (np.uint8(b - lo) < np.uint8(word >> np.uint64(56)))
    if left_sets is not None and (left_sets[node, 0] | left_sets[node, 1] | left_sets[node, 2]
                                  | left_sets[node, 3]) != 0:
        return child + 1 - np.int64(in_set(left_sets, node, b))
    lo = np.uint16(word >> np.uint64(48))
    return child + (np.uint16(b - lo) < widths[node])


@njit(cache=True, nogil=True)
def _finish_row(bins, decisions, widths, left_sets, value, leaf_of_node, scores, leaves_out, node, row):
    """The rest of one row's walk, from ``node`` to its leaf (the node that is its own left
    child), then the leaf's value added to ``scores[row]`` and its position written to
    ``leaves_out[row]``, each when that is an array (None: compiled without)."""
    while np.int64(decisions[node] & _CHILD) != node:
        node = _descend(bins, decisions, widths, left_sets, node, row)
    if scores is not None:
        scores[row] += value[node]
    if leaves_out is not None:
        leaves_out[row] = leaf_of_node[node]


@njit(cache=True, nogil=True, parallel=True)
def add_tree_to_rows(bins, rows, decisions, widths, left_sets, value, leaf_of_node, scores, leaves_out, steps,
                     ahead):
    """Add one tree's output to ``scores[rows]`` by walking it on the rows' bins.

    The training loop's update of the rows a tree was not grown on, and of evaluation sets
    (both through ``Tree.add_to_binned_rows``). Each thread walks its rows 8 at a time: the 8
    take ``steps`` levels together with no test of whether a row has reached its leaf (a leaf
    keeps its rows, :func:`pack_bin_decisions`), then each finishes alone, which for a row no
    deeper than ``steps`` is one test. A walk that stops every row at its leaf mispredicts that
    exit once a row; on 255-leaf trees it took 1.5x the time of this one, which walks most rows
    levels past their leaves (docs/internals.md, "Partitions and score updates"). Independent rows
    hide each other's load latency; the 8 lanes are scalars (the step inlined 8 times), which
    stay in registers, where arrays would stay in memory.

    Rows of 64 bytes or more (``WIDE_ROW_BYTES``) span several cache lines, and a lane reads
    one or two of them at random per level: there each group of 8 rows prefetches the rows
    ``ahead`` entries further. Narrower rows fit one line, which the walk's own load fetches:
    there the prefetch is not compiled in.

    Parameters
    ----------
    bins : ndarray of uint8 or uint16, shape (n_rows, n_features)
        Row-major bins.
    rows : ndarray of uint32
        Rows to update.
    decisions : ndarray of uint64
        :func:`pack_bin_decisions` of the tree (root 0, right child = left child + 1).
    widths : ndarray of uint16 or None
        The range widths of two-byte bins (:func:`pack_bin_decisions`); None for one-byte bins.
    left_sets : ndarray of uint64, shape (n_nodes, 4), or None
        A tree with categorical splits: on one-byte bins every node's set of left bins
        (``Tree.left_bin_sets``; a leaf's holds every bin), which then decide instead of the
        words' range tests; on two-byte bins the categorical nodes' sets, the other nodes'
        empty. None: no categorical split.
    value : ndarray of float64
        Node values (leaf values are added).
    leaf_of_node : ndarray of int32
        Leaf position of every leaf node.
    scores : ndarray of float64, shape (n_rows_total,), or None
        Updated in place; None: only ``leaves_out`` is written.
    leaves_out : ndarray of int32 or None
        When given, receives each row's leaf position (indexed by row id).
    steps : int
        Levels a group of 8 rows takes together (``Tree.add_to_binned_rows`` chooses them from
        the depths of the tree's leaves).
    ahead : int or None
        How many entries of ``rows`` ahead of the rows being walked to prefetch; None: no
        prefetch (compiled without it).
    """
    n = rows.shape[0]
    n_groups = n // 8
    n_chunks = max(1, min(n_groups // 512, 64))
    size = (n_groups + n_chunks - 1) // n_chunks
    for c in prange(n_chunks):
        for g in range(c * size, min(n_groups, c * size + size)):
            first = g * 8
            if ahead is not None:
                for i in range(first + ahead, min(first + ahead + 8, n)):
                    prefetch_span(bins, np.int64(rows[i]) * bins.shape[1], bins.shape[1])
            r0, r1, r2, r3 = np.int64(rows[first]), np.int64(rows[first + 1]), np.int64(rows[first + 2]), \
                np.int64(rows[first + 3])
            r4, r5, r6, r7 = np.int64(rows[first + 4]), np.int64(rows[first + 5]), np.int64(rows[first + 6]), \
                np.int64(rows[first + 7])
            n0 = n1 = n2 = n3 = n4 = n5 = n6 = n7 = np.int64(0)
            for _ in range(steps):
                n0 = _descend(bins, decisions, widths, left_sets, n0, r0)
                n1 = _descend(bins, decisions, widths, left_sets, n1, r1)
                n2 = _descend(bins, decisions, widths, left_sets, n2, r2)
                n3 = _descend(bins, decisions, widths, left_sets, n3, r3)
                n4 = _descend(bins, decisions, widths, left_sets, n4, r4)
                n5 = _descend(bins, decisions, widths, left_sets, n5, r5)
                n6 = _descend(bins, decisions, widths, left_sets, n6, r6)
                n7 = _descend(bins, decisions, widths, left_sets, n7, r7)
            for node, row in ((n0, r0), (n1, r1), (n2, r2), (n3, r3), (n4, r4), (n5, r5), (n6, r6), (n7, r7)):
                _finish_row(bins, decisions, widths, left_sets, value, leaf_of_node, scores, leaves_out, node, row)
    for i in range(n_groups * 8, n):
        _finish_row(bins, decisions, widths, left_sets, value, leaf_of_node, scores, leaves_out, np.int64(0),
                    np.int64(rows[i]))
