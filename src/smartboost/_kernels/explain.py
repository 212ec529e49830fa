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

from .predict import find_leaf, goes_left_raw

_ROWS_PER_TASK = 64
"""Rows one parallel task explains with one allocation of scratch."""


@njit(cache=True, nogil=True, parallel=True)
def leaf_indices(X, feature, threshold, missing_left, left, right, leaf_index, roots, missing_value, out,
                 categorical):
    """``out[i, t]``: the leaf index (``leaf_index`` of the leaf node) row ``i`` reaches in tree ``t``.

    Parameters are those of :func:`~smartboost._kernels.predict.predict_trees` (``categorical``
    included: the categorical features' columns then hold the rows' bins); ``leaf_index``
    (int32, one per node of every tree) numbers each tree's leaves, ``out`` is int32 of shape
    (n_rows, n_trees).
    """
    for i in prange(X.shape[0]):
        for t in range(roots.shape[0]):
            out[i, t] = leaf_index[find_leaf(X, i, roots[t], feature, threshold, missing_left, missing_value, left,
                                              right, categorical)]


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
def _scratch(max_depth):
    """One row's scratch for trees of depth ``max_depth`` or less: the unique paths' features and
    their (zero, one, weight) entries, the stack's integer (node, depth, parent slice, feature)
    and float (zero, one, condition fraction) frames, and :func:`_add_leaf`'s arrays."""
    path_size = (max_depth + 2) * (max_depth + 3) // 2
    stack_size = 2 * (max_depth + 2)
    return (np.empty(path_size, np.int64), np.empty((3, path_size)), np.empty((4, stack_size), np.int64),
            np.empty((3, stack_size)), np.empty((5, max_depth + 1)))


@njit(cache=True, nogil=True)
def _tree_shap_row(X, i, root, feature, threshold, missing_left, left, right, categorical, value, cover_share, phi,
                   column, scratch, condition, condition_feature):
    """Add one tree's SHAP values for row ``i`` to ``phi[column + f]`` (see the module docstring
    for the frames), ``scratch`` the row's own (:func:`_scratch`).

    ``condition`` 0: the SHAP values. +1 or -1: those of the game where feature
    ``condition_feature`` is always present (+1) or always absent (-1), which interaction values
    are made of (shap's ``tree_shap_recursive`` conditions the same way): that feature never
    enters a unique path, and a frame carries the fraction of the row's weight that reaches it
    under the condition.
    """
    path_feature, path, frames, fractions, leaf_scratch = scratch
    zero, one, weight = path[0], path[1], path[2]
    stack_node, stack_depth, stack_parent, stack_feature = frames[0], frames[1], frames[2], frames[3]
    stack_zero, stack_one, stack_fraction = fractions[0], fractions[1], fractions[2]
    top = 0
    stack_node[0], stack_depth[0], stack_parent[0], stack_feature[0] = root, 0, 0, -1
    stack_zero[0], stack_one[0], stack_fraction[0] = 1.0, 1.0, 1.0
    while top >= 0:
        node, depth, parent, parent_feature = stack_node[top], stack_depth[top], stack_parent[top], stack_feature[top]
        zero_fraction, one_fraction, fraction = stack_zero[top], stack_one[top], stack_fraction[top]
        top -= 1
        if fraction == 0.0:  # no weight reaches this node under the condition
            continue
        start = parent + depth + 1  # this node's slice, past its parent's
        extend = condition == 0 or parent_feature != condition_feature
        for j in range(depth if extend else depth + 1):
            path_feature[start + j] = path_feature[parent + j]
            zero[start + j] = zero[parent + j]
            one[start + j] = one[parent + j]
            weight[start + j] = weight[parent + j]
        if extend:
            _extend(path_feature, zero, one, weight, start, depth, zero_fraction, one_fraction, parent_feature)
        if left[node] < 0:
            _add_leaf(path_feature, zero, one, weight, start, depth, value[node] * fraction, phi, column,
                      leaf_scratch[0], leaf_scratch[1], leaf_scratch[2], leaf_scratch[3], leaf_scratch[4])
            continue
        split = feature[node]
        x = X[i, split]
        goes_left = goes_left_raw(categorical, node, x, threshold, missing_left, x != x)
        hot, cold = (left[node], right[node]) if goes_left else (right[node], left[node])
        incoming_zero = 1.0
        incoming_one = 1.0
        for k in range(depth + 1):  # a feature met before on the path: undo it, redo it here
            if path_feature[start + k] == split:
                incoming_zero, incoming_one = zero[start + k], one[start + k]
                _unwind(path_feature, zero, one, weight, start, depth, k)
                depth -= 1
                break
        hot_fraction = cold_fraction = fraction
        if condition != 0 and split == condition_feature:  # the children do not extend the path
            depth -= 1
            if condition > 0:
                cold_fraction = 0.0
            else:
                hot_fraction *= cover_share[hot]
                cold_fraction *= cover_share[cold]
        for child, child_one, child_fraction in ((cold, 0.0, cold_fraction), (hot, incoming_one, hot_fraction)):
            top += 1  # hot on top: walked first
            stack_node[top], stack_depth[top], stack_parent[top], stack_feature[top] = child, depth + 1, start, split
            stack_zero[top] = cover_share[child] * incoming_zero
            stack_one[top], stack_fraction[top] = child_one, child_fraction


@njit(cache=True, nogil=True, parallel=True)
def tree_shap(X, feature, threshold, missing_left, left, right, categorical, value, cover_share, roots, n_outputs,
              max_depth, out):
    """Add the path-dependent TreeSHAP values of every row to ``out``.

    Parameters
    ----------
    X : ndarray of float32 or float64, shape (n_rows, n_features)
        Raw features, C order; NaN is missing (a row goes left at ``x <= threshold``). A
        categorical feature's column holds the rows' bins (``Booster.predict``).
    feature, threshold, missing_left, left, right, value : ndarray, shape (n_nodes,)
        Nodes of all trees concatenated, as :class:`~smartboost.tree.PackedTrees` holds them.
    categorical : CategoricalNodes or None
        The nodes' categorical splits (a row goes left when its bin is in the node's set), as
        for :func:`~smartboost._kernels.predict.predict_trees`; None: every feature is numeric.
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
    for task in prange((n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        scratch = _scratch(max_depth)
        for i in range(task * _ROWS_PER_TASK, min(n_rows, (task + 1) * _ROWS_PER_TASK)):
            for t in range(roots.shape[0]):
                _tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right, categorical, value,
                               cover_share, out[i], (t % n_outputs) * (n_features + 1), scratch, 0, -1)


@njit(cache=True, nogil=True, parallel=True)
def tree_shap_interactions(X, feature, threshold, missing_left, left, right, categorical, value, cover_share, roots,
                           n_outputs, max_depth, tree_features, tree_features_start, out):
    """Add the path-dependent SHAP interaction values of every row to ``out``.

    The interaction of features ``a`` and ``b`` (a != b) is half the change of ``b``'s SHAP
    value between the games with ``a`` always present and always absent (Lundberg, Erion & Lee
    2018, section 4; shap's ``tree_shap.h``): two conditioned walks of a tree per feature it
    splits on (the others' interactions with ``a`` are 0). The main effect ``(a, a)`` is ``a``'s
    SHAP value minus its interactions, so each row of a matrix sums to that feature's SHAP
    value.

    Parameters
    ----------
    X, feature, threshold, missing_left, left, right, categorical, value, cover_share, roots, n_outputs, max_depth
        As :func:`tree_shap`.
    tree_features, tree_features_start : ndarray of int64
        The features tree ``t`` splits on: ``tree_features[tree_features_start[t]:tree_features_start[t + 1]]``.
    out : ndarray of float64, shape (n_rows, n_outputs, n_features + 1, n_features + 1)
        Zeros, filled (the last row and column, the expected value's, are left alone).
    """
    n_rows, n_features = X.shape
    width = n_features + 1
    for task in prange((n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        scratch = _scratch(max_depth)
        phi = np.empty(n_outputs * width)
        present = np.empty(width)
        absent = np.empty(width)
        for i in range(task * _ROWS_PER_TASK, min(n_rows, (task + 1) * _ROWS_PER_TASK)):
            phi[:] = 0.0
            for t in range(roots.shape[0]):
                k = t % n_outputs
                _tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right, categorical, value,
                               cover_share, phi, k * width, scratch, 0, -1)
                for a in tree_features[tree_features_start[t]:tree_features_start[t + 1]]:
                    present[:] = 0.0
                    absent[:] = 0.0
                    _tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right, categorical, value,
                                   cover_share, present, 0, scratch, 1, a)
                    _tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right, categorical, value,
                                   cover_share, absent, 0, scratch, -1, a)
                    for b in range(n_features):
                        if b != a:
                            out[i, k, a, b] += 0.5 * (present[b] - absent[b])
            for k in range(n_outputs):
                for a in range(n_features):
                    main = phi[k * width + a]
                    for b in range(n_features):
                        if b != a:
                            main -= out[i, k, a, b]
                    out[i, k, a, a] += main
