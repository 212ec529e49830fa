"""Explanation kernels: leaf indices and exact path-dependent TreeSHAP, parallel over rows.

TreeSHAP (Lundberg, Erion & Lee 2018, "Consistent individualized feature attribution for tree
ensembles") gives each feature its Shapley value in the game whose value of a feature subset S
is the path-dependent expectation E[f(x) | x_S]: walking the tree, a node splitting on a
feature of S sends the row down its own branch, any other node sends it down both branches,
weighted by the share of the node's cover each child holds.

**SHAP values: the quadrature form.** A leaf of value ``v`` whose path splits on the distinct
features ``D`` (a repeated feature's edges merged: their cover shares multiplied into one zero
fraction ``z_j``, and the row's one fraction ``o_j`` 1 if it follows all of them, else 0)
contributes ``v * prod_{j in S} o_j * prod_{j in D - S} z_j`` to the game's value of ``S``.
Shapley's weights ``|S|! (d - |S| - 1)! / d!`` are the Beta integrals
``int_0^1 t^|S| (1 - t)^(d - |S| - 1) dt``, so the leaf adds to feature ``j``

    ``v (o_j - z_j) int_0^1 prod_{i in D, i != j} (z_i + (o_i - z_i) t) dt``,

a polynomial of degree below ``d`` under the integral, which a Gauss-Legendre rule of
``ceil(depth / 2)`` points integrates exactly (the idea of Yu, Bu & Dong 2022, "Linear
TreeShap"). By linearity the leaves below an edge are summed first, at the points: the walk
carries down the path's product of factors and carries up the sum of its leaves' products, and
an edge adds ``(o - z)`` times the quadrature of that sum over its own factor. Where a feature
repeats, the deeper edge's merged factor replaces the earlier one for the leaves below it, and
the deeper edge takes those leaves back from the earlier edge's sum. A tree costs O(L depth)
per row, where the paper's unique-path algorithm costs O(L depth^2).

**Interaction values** run the paper's Algorithm 2 with its recursion turned into an explicit
stack (numba compiles recursion poorly), conditioned on one feature being always present or
absent: a node's frame holds what the recursive call receives, the children are pushed cold
then hot, so the hot child's subtree is finished before the cold child reuses the same scratch,
exactly as the recursive calls would. Each level's unique path is a slice of one scratch array,
the parent's slice left untouched below the child's (shap's ``tree_shap.h`` lays it out the
same way): ``(D + 2)(D + 3) / 2`` entries for trees of depth ``D``.

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
def leaf_indices(X, words, threshold, leaf_index, roots, out, categorical):
    """``out[i, t]``: the leaf index (``leaf_index`` of the leaf node) row ``i`` reaches in tree ``t``.

    Parameters are those of :func:`~smartboost._kernels.predict.predict_trees` (``categorical``
    included: the categorical features' columns then hold the rows' bins); ``leaf_index``
    (int32, one per node of every tree) numbers each tree's leaves, ``out`` is int32 of shape
    (n_rows, n_trees).
    """
    for i in prange(X.shape[0]):
        for t in range(roots.shape[0]):
            out[i, t] = leaf_index[find_leaf(X, i, roots[t], words, threshold, categorical)]


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
        if goes_left_raw(categorical, node, x, threshold[node], missing_left[node]):
            hot, cold = left[node], right[node]
        else:
            hot, cold = right[node], left[node]
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


@njit(cache=True, nogil=True)
def _quadrature_scratch(max_depth, max_points, n_features):
    """One row's scratch for :func:`_quadrature_tree_shap_row`: per level of the path, the
    product and the leaves' sum at the points, the merged zero and one fractions, and the
    integer frames (node, children entered, edge feature, previous level of that feature, hot
    child); per feature, the deepest level of the path whose edge splits on it (-1: none)."""
    levels = max_depth + 1
    return (np.empty((levels, max_points)), np.empty((levels, max_points)), np.empty(levels), np.empty(levels),
            np.empty((5, levels), np.int64), np.full(n_features, -1, np.int64))


@njit(cache=True, nogil=True)
def _quadrature_tree_shap_row(X, i, root, feature, threshold, missing_left, left, right, categorical, value,
                              cover_share, phi, column, t, w, scratch):
    """Add one tree's SHAP values for row ``i`` to ``phi[column + f]`` by the quadrature form
    (see the module docstring): ``t`` and ``w`` the Gauss-Legendre points and weights on [0, 1]
    of this tree, ``scratch`` the row's own (:func:`_quadrature_scratch`).

    Level ``l`` of the walk is the node at depth ``l`` on the current path, entered by an edge
    on feature ``level_feature[l]`` whose merged fractions (the product over the path's edges
    on that feature, as the paper merges a repeated feature) are ``level_zero[l]`` and
    ``level_one[l]``; ``level_previous[l]`` is the level of the nearest edge above on the same
    feature (-1: none). ``product[l]`` holds the path's product of factors at the points,
    ``below[l]`` the sum of the leaves' terms under the node, complete once both children are
    done.
    """
    product, below, level_zero, level_one, ints, feature_level = scratch
    level_node, level_stage, level_feature, level_previous, level_hot = ints[0], ints[1], ints[2], ints[3], ints[4]
    m = t.shape[0]
    level = 0
    level_node[0], level_stage[0] = root, 0
    product[0, :m] = 1.0
    below[0, :m] = 0.0
    while level >= 0:
        node = level_node[level]
        if level_stage[level] == 0:
            if left[node] < 0:
                leaf_value = value[node]
                for k in range(m):
                    below[level, k] = leaf_value * product[level, k]
                level_stage[level] = 2
            else:
                x = X[i, feature[node]]
                level_hot[level] = left[node] if goes_left_raw(categorical, node, x, threshold[node],
                                                               missing_left[node]) else right[node]
        if level_stage[level] < 2:  # enter the next child
            child = left[node] if level_stage[level] == 0 else right[node]
            level_stage[level] += 1
            split = feature[node]
            edge_one = 1.0 if child == level_hot[level] else 0.0
            previous = feature_level[split]
            down = level + 1
            if previous >= 0:  # the feature again: its merged factor replaces the earlier one
                zero_before, one_before = level_zero[previous], level_one[previous]
                zero, one = zero_before * cover_share[child], one_before * edge_one
                for k in range(m):
                    before = zero_before + (one_before - zero_before) * t[k]
                    # a factor that vanishes inside (0, 1) has zero fractions, and so has the merged one
                    product[down, k] = (product[level, k] / before * (zero + (one - zero) * t[k])
                                        if before != 0.0 else 0.0)
            else:
                zero, one = cover_share[child], edge_one
                for k in range(m):
                    product[down, k] = product[level, k] * (zero + (one - zero) * t[k])
            level_zero[down], level_one[down] = zero, one
            level_feature[down], level_previous[down] = split, previous
            feature_level[split] = down
            level_node[down], level_stage[down] = child, 0
            below[down, :m] = 0.0
            level = down
            continue
        if level > 0:  # the node is done: its edge's share, then its leaves' terms to the parent
            split, previous = level_feature[level], level_previous[level]
            zero, one = level_zero[level], level_one[level]
            share = 0.0
            if one != zero:
                integral = 0.0
                for k in range(m):
                    integral += w[k] * below[level, k] / (zero + (one - zero) * t[k])
                share = (one - zero) * integral
            if previous >= 0:  # these leaves are no longer the earlier edge's: take them back
                zero, one = level_zero[previous], level_one[previous]
                if one != zero:
                    integral = 0.0
                    for k in range(m):
                        integral += w[k] * below[level, k] / (zero + (one - zero) * t[k])
                    share -= (one - zero) * integral
            phi[column + split] += share
            feature_level[split] = previous
            for k in range(m):
                below[level - 1, k] += below[level, k]
        level -= 1


@njit(cache=True, nogil=True, parallel=True)
def tree_shap(X, feature, threshold, missing_left, left, right, categorical, value, cover_share, roots, n_outputs,
              max_depth, points, weights, tree_points, out):
    """Add the path-dependent TreeSHAP values of every row to ``out`` (the quadrature form).

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
    points, weights : ndarray of float64, shape (n_sizes, max_points)
        Gauss-Legendre rules on [0, 1]: row ``m`` holds the ``m``-point rule in its first ``m``
        entries.
    tree_points : ndarray of int64, shape (n_trees,)
        The number of points tree ``t`` integrates with (exact for its depth).
    out : ndarray of float64, shape (n_rows, n_outputs * (n_features + 1))
        Output ``k``'s values of feature ``f`` go to column ``k * (n_features + 1) + f``
        (LightGBM's layout; the last column of each block, the expected value, is not written).
    """
    n_rows, n_features = X.shape
    for task in prange((n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        scratch = _quadrature_scratch(max_depth, points.shape[1], n_features)
        for i in range(task * _ROWS_PER_TASK, min(n_rows, (task + 1) * _ROWS_PER_TASK)):
            for tree in range(roots.shape[0]):
                m = tree_points[tree]
                _quadrature_tree_shap_row(X, i, roots[tree], feature, threshold, missing_left, left, right,
                                          categorical, value, cover_share, out[i], (tree % n_outputs) * (n_features + 1),
                                          points[m, :m], weights[m, :m], scratch)


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
