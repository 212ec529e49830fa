"""Tree evaluation and raw-score updates.

One traversal kernel serves raw features and binned data alike: a node sends a row left when
its value is ``<= split_value``, and a missing value follows the node's learned direction.
On raw data ``split_value`` is the float64 threshold and "missing" is NaN; on binned data it is
the bin threshold and "missing" is the feature's missing-value bin. Because the thresholds are
the bin edges, both give the same leaf for every row (tested).

Each row's score is updated tree after tree (``out[i] += value_t``), the order the boosting
loop uses, so predicting the training rows reproduces the training scores bit for bit.
"""

from __future__ import annotations

from numba import njit, prange


@njit(cache=True, nogil=True)
def find_leaf(X, i, node, feature, split_value, missing_left, missing_value, left, right):
    """Global index of the leaf that row ``i`` of ``X`` reaches from ``node``."""
    while left[node] >= 0:
        f = feature[node]
        x = X[i, f]
        if x != x or x == missing_value[f]:
            go_left = missing_left[node]
        else:
            go_left = x <= split_value[node]
        node = left[node] if go_left else right[node]
    return node


@njit(cache=True, nogil=True, parallel=True)
def predict_trees(X, feature, split_value, missing_left, missing_value, left, right, value, roots, out, block):
    """Add the trees' outputs to ``out``.

    Parameters
    ----------
    X : ndarray, shape (n_rows, n_features)
        Raw features (float32/float64) or binned data (uint8), C order.
    feature, left, right : ndarray of int32, shape (n_nodes,)
        Nodes of all trees, concatenated; ``left < 0`` marks a leaf; child indices are global.
    split_value : ndarray of float64, shape (n_nodes,)
        Float thresholds (raw data) or bin thresholds (binned data).
    missing_left : ndarray of bool, shape (n_nodes,)
    missing_value : ndarray of float64, shape (n_features,)
        Per-feature value that means "missing" besides NaN: NaN for raw data (so nothing
        else), the missing-value bin for binned data.
    value : ndarray of float64, shape (n_nodes,)
        Leaf values (shrinkage included).
    roots : ndarray of int64, shape (n_trees,)
        Root node of each tree.
    out : ndarray of float64, shape (n_rows,)
        Scores to add to, in place; each row's trees are added in order.
    block : int
        Rows walked through one tree at a time (see ``Booster`` for the choice).
    """
    n_rows = X.shape[0]
    for b in prange((n_rows + block - 1) // block):
        start = b * block
        stop = min(n_rows, start + block)
        for t in range(roots.shape[0]):
            root = roots[t]
            for i in range(start, stop):
                out[i] += value[find_leaf(X, i, root, feature, split_value, missing_left, missing_value, left, right)]


@njit(cache=True, nogil=True, parallel=True)
def add_leaf_values(raw, rows, leaf_start, leaf_end, leaf_value):
    """Add each leaf's value to the scores of the rows it holds (leaf segments of ``rows``).

    The training-score update with no tree traversal (PERFORMANCE.md 5: 20-26x faster than
    traversing the tree per row). Each row is in exactly one segment, so leaves run in parallel.
    """
    for k in prange(leaf_value.shape[0]):
        v = leaf_value[k]
        for i in range(leaf_start[k], leaf_end[k]):
            raw[rows[i]] += v


@njit(cache=True, nogil=True, parallel=True)
def add_tree_to_rows(bins, rows, feature, split_value, missing_left, missing_value, left, right, value,
                     leaf_of_node, scores, leaves_out):
    """Add one tree's output to ``scores[rows]`` by traversing it on binned rows.

    The training loop's update of the rows a tree was not grown on (out-of-sample rows).
    Parameters are those of :func:`predict_trees` for one tree (root 0), plus ``leaf_of_node``
    (int32: leaf position of every leaf node) and ``leaves_out`` (int32, indexed by row id;
    written when not empty: each row's leaf position).
    """
    record = leaves_out.shape[0] > 0
    for k in prange(rows.shape[0]):
        r = rows[k]
        node = find_leaf(bins, r, 0, feature, split_value, missing_left, missing_value, left, right)
        scores[r] += value[node]
        if record:
            leaves_out[r] = leaf_of_node[node]


@njit(cache=True, nogil=True)
def assign_leaves(rows, leaf_start, leaf_end, leaves_out):
    """``leaves_out[row] = k`` for every row of leaf segment ``k`` of ``rows``."""
    for k in range(leaf_start.shape[0]):
        for i in range(leaf_start[k], leaf_end[k]):
            leaves_out[rows[i]] = k
