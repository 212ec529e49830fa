"""Explanation kernels: leaf indices and exact path-dependent TreeSHAP, parallel over rows.

TreeSHAP (Lundberg, Erion & Lee 2018, "Consistent individualized feature attribution for tree
ensembles", Algorithm 2) gives each feature its Shapley value in the game whose value of a
feature subset S is the path-dependent expectation E[f(x) | x_S]: walking the tree, a node
splitting on a feature of S sends the row down its own branch, any other node sends it down
both branches, weighted by the share of the node's cover each child holds. The algorithm
follows every root-to-leaf path once, keeping for the features met on the path the weights of
all subset sizes at once ("the unique path"), so a tree costs O(L D^2) per row instead of the
O(2^F) subsets, L leaves and D the depth.

The recursion of the paper is run with an explicit stack (numba compiles recursion poorly):
a node's frame holds what the recursive call receives, the children are pushed cold then hot,
so the hot child's subtree is finished before the cold child reuses the same scratch, exactly
as the recursive calls would. Each level's unique path is a slice of one scratch array, the
parent's slice left untouched below the child's (shap's ``tree_shap.h`` lays it out the same
way): ``(D + 2)(D + 3) / 2`` entries for trees of depth ``D``.

Every row is explained on its own, with its own scratch, trees in model order: the result of a
row does not depend on the thread count or on the other rows.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .predict import find_leaf

_ROWS_PER_TASK = 64
"""Rows one parallel task explains with one allocation of scratch."""


@njit(cache=True, nogil=True, parallel=True)
def leaf_indices(X, feature, threshold, missing_left, left, right, leaf_index, roots, missing_value, out):
    """``out[i, t]``: the leaf index (``leaf_index`` of the leaf node) row ``i`` reaches in tree ``t``.

    Parameters are those of :func:`~smartboost._kernels.predict.predict_trees`; ``leaf_index``
    (int32, one per node of every tree) numbers each tree's leaves, ``out`` is int32 of shape
    (n_rows, n_trees).
    """
    for i in prange(X.shape[0]):
        for t in range(roots.shape[0]):
            out[i, t] = leaf_index[find_leaf(X, i, roots[t], feature, threshold, missing_left, missing_value, left,
                                              right)]


@njit(cache=True, nogil=True)
def _extend(path_feature, zero, one, weight, start, depth, zero_fraction, one_fraction, feature):
    """Append a feature to the unique path ``start .. start + depth - 1`` and update the
    weights of every subset size (the paper's EXTEND)."""
    path_feature[start + depth] = feature
    zero[start + depth] = zero_fraction
    one[start + depth] = one_fraction
    weight[start + depth] = 1.0 if depth == 0 else 0.0
    one_share = one_fraction / (depth + 1.0)  # divisions out of the loop: they dominated a node's work
    zero_share = zero_fraction / (depth + 1.0)
    for i in range(depth - 1, -1, -1):
        w = weight[start + i]
        weight[start + i + 1] += one_share * w * (i + 1)
        weight[start + i] = zero_share * w * (depth - i)


@njit(cache=True, nogil=True)
def _unwind(path_feature, zero, one, weight, start, depth, index):
    """Remove entry ``index`` from the unique path of ``depth + 1`` entries, undoing its
    :func:`_extend` (the paper's UNWIND)."""
    one_fraction = one[start + index]
    zero_fraction = zero[start + index]
    next_one = weight[start + depth]
    for i in range(depth - 1, -1, -1):
        if one_fraction != 0.0:
            kept = weight[start + i]
            weight[start + i] = next_one * (depth + 1.0) / ((i + 1.0) * one_fraction)
            next_one = kept - weight[start + i] * zero_fraction * (depth - i) / (depth + 1.0)
        else:
            weight[start + i] = weight[start + i] * (depth + 1.0) / (zero_fraction * (depth - i))
    for i in range(index, depth):
        path_feature[start + i] = path_feature[start + i + 1]
        zero[start + i] = zero[start + i + 1]
        one[start + i] = one[start + i + 1]


@njit(cache=True, nogil=True)
def _add_leaf(path_feature, zero, one, weight, start, depth, leaf_value, phi, column, total, next_one, inverse_one,
              inverse_zero, zero_fraction):
    """Add a leaf's share to the SHAP value of every feature on its unique path: the path's
    total weight with that feature's entry unwound (the paper's UNWOUND-SUM), times the
    difference of its one and zero fractions, times the leaf value.

    The unwound sums of the ``depth`` entries are computed together, positions outer and
    entries inner: each entry's sum is a chain of dependent multiply-adds, and interleaving the
    independent chains keeps the processor busy where one chain alone waits on each step. The
    reciprocals of the fractions are taken once, out of the chains, and both of the paper's
    cases are computed and one selected (an entry's one fraction is 0 on a cold branch, about
    half the entries: a branch there is mispredicted). ``total``, ``next_one``,
    ``inverse_one``, ``inverse_zero`` and ``zero_fraction`` are scratch of ``depth + 1`` entries.
    """
    for j in range(1, depth + 1):
        total[j] = 0.0
        next_one[j] = weight[start + depth]
        zero_fraction[j] = zero[start + j]
        inverse_one[j] = 1.0 / one[start + j] if one[start + j] != 0.0 else 0.0
        inverse_zero[j] = 1.0 / zero[start + j] if zero[start + j] != 0.0 else 0.0
    for i in range(depth - 1, -1, -1):
        w = weight[start + i]
        up = (depth + 1.0) / (i + 1.0)
        down = (depth - i) / (depth + 1.0)
        cold_scale = w / down
        for j in range(1, depth + 1):
            part = next_one[j] * up * inverse_one[j]
            # a cold entry (one fraction 0): the weights undo its zero fraction alone
            total[j] += part if inverse_one[j] != 0.0 else cold_scale * inverse_zero[j]
            next_one[j] = w - part * zero_fraction[j] * down
    for j in range(1, depth + 1):
        phi[column + path_feature[start + j]] += total[j] * (one[start + j] - zero[start + j]) * leaf_value


@njit(cache=True, nogil=True)
def _tree_shap_row(X, i, root, feature, threshold, missing_left, left, right, value, cover_share, phi, column,
                   path_feature, zero, one, weight, stack_node, stack_depth, stack_parent, stack_zero, stack_one,
                   stack_feature, leaf_scratch):
    """Add one tree's SHAP values for row ``i`` to ``phi[column + f]`` (the scratch arrays are
    the row's own; see the module docstring for the frames)."""
    top = 0
    stack_node[0], stack_depth[0], stack_parent[0] = root, 0, 0
    stack_zero[0], stack_one[0], stack_feature[0] = 1.0, 1.0, -1
    while top >= 0:
        node, depth, parent = stack_node[top], stack_depth[top], stack_parent[top]
        zero_fraction, one_fraction, parent_feature = stack_zero[top], stack_one[top], stack_feature[top]
        top -= 1
        start = parent + depth + 1  # this node's slice, past its parent's
        for j in range(depth):
            path_feature[start + j] = path_feature[parent + j]
            zero[start + j] = zero[parent + j]
            one[start + j] = one[parent + j]
            weight[start + j] = weight[parent + j]
        _extend(path_feature, zero, one, weight, start, depth, zero_fraction, one_fraction, parent_feature)
        if left[node] < 0:
            _add_leaf(path_feature, zero, one, weight, start, depth, value[node], phi, column, leaf_scratch[0],
                      leaf_scratch[1], leaf_scratch[2], leaf_scratch[3], leaf_scratch[4])
            continue
        split = feature[node]
        x = X[i, split]
        goes_left = missing_left[node] if x != x else x <= threshold[node]
        hot, cold = (left[node], right[node]) if goes_left else (right[node], left[node])
        incoming_zero = 1.0
        incoming_one = 1.0
        for k in range(depth + 1):  # a feature met before on the path: undo it, redo it here
            if path_feature[start + k] == split:
                incoming_zero, incoming_one = zero[start + k], one[start + k]
                _unwind(path_feature, zero, one, weight, start, depth, k)
                depth -= 1
                break
        for child, child_one in ((cold, 0.0), (hot, incoming_one)):  # hot on top: walked first
            top += 1
            stack_node[top], stack_depth[top], stack_parent[top] = child, depth + 1, start
            stack_zero[top] = cover_share[child] * incoming_zero
            stack_one[top], stack_feature[top] = child_one, split


@njit(cache=True, nogil=True, parallel=True)
def tree_shap(X, feature, threshold, missing_left, left, right, value, cover_share, roots, n_outputs, max_depth, out):
    """Add the path-dependent TreeSHAP values of every row to ``out``.

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n_rows, n_features)
        Raw features, C order; NaN is missing (a row goes left at ``x <= threshold``).
    feature, threshold, missing_left, left, right, value : ndarray, shape (n_nodes,)
        Nodes of all trees concatenated, as :class:`~smartboost.tree.PackedTrees` holds them.
    cover_share : ndarray of float64, shape (n_nodes,)
        Each node's cover over its parent's (what the expectation weighs the children by;
        taken once here rather than divided at every visit).
    roots : ndarray of int64, shape (n_trees,)
        Root of each tree; tree ``t`` adds to output ``t % n_outputs``.
    n_outputs : int
    max_depth : int
        Depth of the deepest tree (sizes the scratch).
    out : ndarray of float64, shape (n_rows, n_outputs * (n_features + 1))
        Output ``k``'s values of feature ``f`` go to column ``k * (n_features + 1) + f``
        (LightGBM's layout; the last column of each block, the expected value, is not written).
    """
    n_rows, n_features = X.shape
    path_size = (max_depth + 2) * (max_depth + 3) // 2
    stack_size = 2 * (max_depth + 2)
    for task in prange((n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        path_feature = np.empty(path_size, np.int64)
        zero = np.empty(path_size)
        one = np.empty(path_size)
        weight = np.empty(path_size)
        stack_node = np.empty(stack_size, np.int64)
        stack_depth = np.empty(stack_size, np.int64)
        stack_parent = np.empty(stack_size, np.int64)
        stack_zero = np.empty(stack_size)
        stack_one = np.empty(stack_size)
        stack_feature = np.empty(stack_size, np.int64)
        leaf_scratch = np.empty((5, max_depth + 1))
        for i in range(task * _ROWS_PER_TASK, min(n_rows, (task + 1) * _ROWS_PER_TASK)):
            phi = out[i]
            for t in range(roots.shape[0]):
                _tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right, value, cover_share, phi,
                               (t % n_outputs) * (n_features + 1), path_feature, zero, one, weight, stack_node,
                               stack_depth, stack_parent, stack_zero, stack_one, stack_feature, leaf_scratch)
