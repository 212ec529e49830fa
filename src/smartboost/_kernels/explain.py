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

**Interaction values** take the same form. The interaction of features ``a`` and ``b`` is half
``b``'s Shapley value in the game ``v(S + a) - v(S)`` of the other features (Lundberg, Erion &
Lee 2018, section 4, who take it as the change between the games of ``a`` always present and
always absent). A leaf adds ``v (o_a - z_a)`` to that game where ``v`` stood (``a``'s factor a
constant, and nothing where its path has no edge on ``a``), so one quadrature walk per feature a
tree splits on gives a row of the matrix. The paper's Algorithm 2, whose unwinding divides by
the fractions, loses digits on paths of many features (1e-5 of the values at forty); the
quadrature stays within rounding.

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
def _quadrature_scratch(max_depth, max_points, n_features):
    """One row's scratch for :func:`_quadrature_tree_shap_row`: per level of the path, the
    product and the leaves' sum at the points, the merged zero and one fractions, the factor of
    the conditioned feature, and the integer frames (node, children entered, edge feature,
    previous level of that feature, hot child); per feature, the deepest level of the path whose
    edge splits on it (-1: none)."""
    levels = max_depth + 1
    return (np.empty((levels, max_points)), np.empty((levels, max_points)), np.empty(levels), np.empty(levels),
            np.empty(levels), np.empty((5, levels), np.int64), np.full(n_features, -1, np.int64))


@njit(cache=True, nogil=True)
def _quadrature_tree_shap_row(X, i, root, feature, threshold, missing_left, left, right, categorical, value,
                              cover_share, phi, column, t, w, scratch, condition):
    """Add one tree's SHAP values for row ``i`` to ``phi[column + f]`` by the quadrature form
    (see the module docstring): ``t`` and ``w`` the Gauss-Legendre points and weights on [0, 1]
    of this tree, ``scratch`` the row's own (:func:`_quadrature_scratch`).

    ``condition`` -1: the SHAP values. A feature ``a``: the values of the game ``v(S + a) -
    v(S)`` (twice the interactions with ``a``): ``a`` is no player, its merged edges multiply a
    leaf by ``o_a - z_a`` (``level_condition``, 0 above its first edge) instead of a factor.

    Level ``l`` of the walk is the node at depth ``l`` on the current path, entered by an edge
    on feature ``level_feature[l]`` whose merged fractions (the product over the path's edges
    on that feature, as the paper merges a repeated feature) are ``level_zero[l]`` and
    ``level_one[l]``; ``level_previous[l]`` is the level of the nearest edge above on the same
    feature (-1: none). ``product[l]`` holds the path's product of factors at the points,
    ``below[l]`` the sum of the leaves' terms under the node, complete once both children are
    done.
    """
    product, below, level_zero, level_one, level_condition, ints, feature_level = scratch
    level_node, level_stage, level_feature, level_previous, level_hot = ints[0], ints[1], ints[2], ints[3], ints[4]
    m = t.shape[0]
    level = 0
    level_node[0], level_stage[0] = root, 0
    level_condition[0] = 1.0 if condition < 0 else 0.0
    product[0, :m] = 1.0
    below[0, :m] = 0.0
    while level >= 0:
        node = level_node[level]
        if level_stage[level] == 0:
            if left[node] < 0:
                leaf_value = value[node] * level_condition[level]
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
            if previous >= 0:  # the feature again: its merged fractions replace the earlier ones
                zero_before, one_before = level_zero[previous], level_one[previous]
                zero, one = zero_before * cover_share[child], one_before * edge_one
            else:
                zero_before = one_before = 1.0
                zero, one = cover_share[child], edge_one
            level_condition[down] = level_condition[level]
            if split == condition:  # a constant, not a factor of the points
                level_condition[down] = one - zero
                product[down, :m] = product[level, :m]
            elif previous >= 0:
                for k in range(m):
                    before = zero_before + (one_before - zero_before) * t[k]
                    # a factor that vanishes inside (0, 1) has zero fractions, and so has the merged one
                    product[down, k] = (product[level, k] / before * (zero + (one - zero) * t[k])
                                        if before != 0.0 else 0.0)
            else:
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
            if split != condition:
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
                                          points[m, :m], weights[m, :m], scratch, -1)


@njit(cache=True, nogil=True, parallel=True)
def tree_shap_interactions(X, feature, threshold, missing_left, left, right, categorical, value, cover_share, roots,
                           n_outputs, max_depth, points, weights, tree_points, tree_features, tree_features_start, out):
    """Add the path-dependent SHAP interaction values of every row to ``out``.

    The interaction of features ``a`` and ``b`` (a != b) is half ``b``'s Shapley value in the
    game ``v(S + a) - v(S)`` (Lundberg, Erion & Lee 2018, section 4: the change of ``b``'s SHAP
    value between the games with ``a`` always present and always absent), by the quadrature
    form: one walk of a tree per feature ``a`` it splits on (the others' interactions with
    ``a`` are 0). The main effect ``(a, a)`` is ``a``'s SHAP value minus its interactions, so
    each row of a matrix sums to that feature's SHAP value.

    Parameters
    ----------
    X, feature, threshold, missing_left, left, right, categorical, value, cover_share, roots, n_outputs, max_depth
        As :func:`tree_shap`.
    points, weights, tree_points
        As :func:`tree_shap`.
    tree_features, tree_features_start : ndarray of int64
        The features tree ``t`` splits on: ``tree_features[tree_features_start[t]:tree_features_start[t + 1]]``.
    out : ndarray of float64, shape (n_rows, n_outputs, n_features + 1, n_features + 1)
        Zeros, filled (the last row and column, the expected value's, are left alone).
    """
    n_rows, n_features = X.shape
    width = n_features + 1
    for task in prange((n_rows + _ROWS_PER_TASK - 1) // _ROWS_PER_TASK):
        scratch = _quadrature_scratch(max_depth, points.shape[1], n_features)
        phi = np.empty(n_outputs * width)
        conditioned = np.zeros(width)
        for i in range(task * _ROWS_PER_TASK, min(n_rows, (task + 1) * _ROWS_PER_TASK)):
            phi[:] = 0.0
            for t in range(roots.shape[0]):
                k = t % n_outputs
                m = tree_points[t]
                _quadrature_tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right, categorical,
                                          value, cover_share, phi, k * width, points[m, :m], weights[m, :m], scratch,
                                          -1)
                used = tree_features[tree_features_start[t]:tree_features_start[t + 1]]
                for a in used:
                    _quadrature_tree_shap_row(X, i, roots[t], feature, threshold, missing_left, left, right,
                                              categorical, value, cover_share, conditioned, 0, points[m, :m],
                                              weights[m, :m], scratch, a)
                    for b in used:  # only the tree's features have values; cleared for the next walk
                        if b != a:
                            out[i, k, a, b] += 0.5 * conditioned[b]
                        conditioned[b] = 0.0
            for k in range(n_outputs):
                for a in range(n_features):
                    main = phi[k * width + a]
                    for b in range(n_features):
                        if b != a:
                            main -= out[i, k, a, b]
                    out[i, k, a, a] += main
