"""Explaining predictions: leaf indices and SHAP values (``Booster.predict(pred_leaf=True)``,
``Booster.predict(pred_contrib=True)``).

**Leaf indices** follow LightGBM: a tree's leaves are numbered ``0 .. n_leaves - 1`` in the
order its splits made them. The root is leaf 0; a split keeps its leaf's number for the left
child and gives the right child the next number. A smartboost tree allocates a split's children
as the next two node ids, so its splits in the order they were made are its internal nodes in
the order of their left children (:func:`leaf_numbers`), and a tree LightGBM grows the same way
numbers its leaves the same.

**SHAP values** are exact path-dependent TreeSHAP (``_kernels.explain``): feature ``f``'s value
for a row is its Shapley value in the game ``v(S) = E[f(x) | x_S]`` where the expectation over
the features outside ``S`` follows the tree: a node splitting on such a feature averages its
children weighted by their *cover*. The cover is the node's ``count``, the rows of the tree's
sample that reached it (LightGBM's and ``shap.TreeExplainer``'s choice for LightGBM models). A
tree grown on an importance sample (GOSS, MVS, SMART) over-represents its large-gradient rows
in these counts, and the inverse-probability-weighted counts would estimate the full data's
better; they are not stored in model files (adding them would change every saved model), so
the counts are used and the explanations of a model are the same trained or loaded. The
values of a row sum, with the expected value ``base_score + sum over trees of
sum(cover_leaf * value_leaf) / cover_root``, to the row's raw score (local accuracy; of a range
of iterations that starts after the first, without ``base_score``, as its raw score); a
feature no tree splits on gets exactly 0. They are in raw-score space (log-odds for
``binary``), as LightGBM's.

**SHAP interaction values** (``pred_interactions``, XGBoost's layout) split each SHAP value
further: the interaction of features ``a`` and ``b`` is half the change of ``b``'s value
between the games where ``a`` is always and never known (the same path-dependent expectation),
and ``a``'s main effect is what remains of its SHAP value. They are computed in the
quadrature form of the SHAP values, exact to rounding however many features a path holds (the
paper's Algorithm 2, and ``shap``'s, lose digits on paths of dozens of features). A tree costs
one walk per feature it splits on, so they cost that many times the SHAP values.

Their outputs are dense: ``n_features + 1`` float64 per row and output for the SHAP values
(1.6 GB for 200 rows of a million sparse features), ``(n_features + 1)^2`` for the
interactions (8 GB for 10,000 rows of 315 features). A request larger than the memory
available (Linux's MemAvailable, or a container's memory limit less its usage, where known) is
refused before anything is allocated, as is one whose allocation fails, with a DataError giving
its size (and how many rows fit, where the memory available is known).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ._kernels.explain import leaf_indices, tree_shap, tree_shap_interactions
from .errors import DataError
from .tree import Tree

if TYPE_CHECKING:
    from .booster import Booster

__all__ = ["expected_value", "explain_contributions", "explain_interactions", "explain_leaves", "leaf_numbers",
           "tree_table"]


def leaf_numbers(tree: Tree) -> np.ndarray:
    """LightGBM's index of every leaf of ``tree`` (int32 per node, -1 for internal nodes).

    Splits are taken in the order they were made (by their left child's node id); each keeps
    its leaf's number for the left child and gives the right child the next one.
    """
    number = np.full(tree.n_nodes, -1, np.int32)
    number[0] = 0
    internal = np.flatnonzero(tree.left >= 0)
    for count, node in enumerate(internal[np.argsort(tree.left[internal])], start=1):
        number[tree.left[node]] = number[node]
        number[tree.right[node]] = count
    number[internal] = -1
    return number


def expected_value(tree: Tree) -> float:
    """The tree's mean output over its training cover: ``sum(count * value) / count[root]`` over
    the leaves.

    A tree grown on an empty sample (a sampler drew no row) is a single leaf of cover 0: its
    expectation is its value. The leaves are weighted by their share of the cover, so that
    counts times values near the float limit cannot overflow.
    """
    if tree.count[0] == 0:
        return float(tree.value[0])
    leaves = tree.left < 0
    return float(np.dot(tree.count[leaves] / tree.count[0], tree.value[leaves]))


def _cover_share(tree: Tree) -> np.ndarray:
    """Each node's cover (``count``) over its parent's; 1 for the root."""
    share = np.ones(tree.n_nodes)
    internal = tree.left >= 0
    parent_cover = tree.count[internal].astype(np.float64)
    share[tree.left[internal]] = tree.count[tree.left[internal]] / parent_cover
    share[tree.right[internal]] = tree.count[tree.right[internal]] / parent_cover
    return share


def _quadrature_points(tree: Tree, depth: int) -> int:
    """Gauss-Legendre points for the tree of this depth: the integrands of the quadrature form
    are polynomials of degree below the number of distinct features on a path, at most the
    depth and at most the number of features the tree splits on, and ``m`` points integrate
    degree ``2m - 1`` exactly."""
    distinct = min(depth, np.unique(tree.feature[tree.left >= 0]).size)
    return max(1, (distinct + 1) // 2)


def _gauss_legendre(max_points: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``m``-point Gauss-Legendre rules on [0, 1] for ``m`` up to ``max_points``: row ``m``
    of the two arrays holds the rule's points and weights in its first ``m`` entries."""
    points = np.zeros((max_points + 1, max_points))
    weights = np.zeros((max_points + 1, max_points))
    for m in range(1, max_points + 1):
        x, w = np.polynomial.legendre.leggauss(m)
        points[m, :m] = (x + 1.0) / 2.0
        weights[m, :m] = w / 2.0
    return points, weights


def _node_names(tree: Tree, index: int) -> list[str]:
    """LightGBM's name of every node of tree ``index``: ``<index>-S<k>`` for its ``k``-th split
    (in the order the splits were made), ``<index>-L<leaf>`` for a leaf (:func:`leaf_numbers`)."""
    names = [f"{index}-L{leaf}" for leaf in leaf_numbers(tree)]
    internal = np.flatnonzero(tree.left >= 0)
    for k, node in enumerate(internal[np.argsort(tree.left[internal])]):
        names[node] = f"{index}-S{k}"
    return names


def tree_table(booster: Booster) -> dict[str, list]:
    """The columns of ``Booster.trees_to_dataframe``: one row per node of every tree, LightGBM's
    columns (see that method)."""
    table: dict[str, list] = {name: [] for name in (
        "tree_index", "node_depth", "node_index", "left_child", "right_child", "parent_index", "split_feature",
        "split_gain", "threshold", "decision_type", "missing_direction", "missing_type", "value", "weight", "count")}
    feature_names = booster.feature_name()
    for index, tree in enumerate(booster.trees):
        names = _node_names(tree, index)
        parent: list[str | None] = [None] * tree.n_nodes
        for node in np.flatnonzero(tree.left >= 0):
            parent[tree.left[node]] = parent[tree.right[node]] = names[node]
        categorical = tree.categorical_nodes
        for node, depth in enumerate(tree._node_depths()):
            split = bool(tree.left[node] >= 0)
            feature = int(tree.feature[node])
            if not split:
                threshold, decision = np.nan, None
            elif categorical[node]:  # LightGBM's form: the categories going left, '||'-separated
                threshold = "||".join(map(str, booster.bin_mapper.categories_in(feature, tree.left_bins(node))))
                decision = "=="
            else:
                threshold, decision = float(tree.threshold[node]), "<="
            table["tree_index"].append(index)
            table["node_depth"].append(int(depth) + 1)
            table["node_index"].append(names[node])
            table["left_child"].append(names[tree.left[node]] if split else None)
            table["right_child"].append(names[tree.right[node]] if split else None)
            table["parent_index"].append(parent[node])
            table["split_feature"].append(feature_names[feature] if split else None)
            table["split_gain"].append(float(tree.gain[node]) if split else np.nan)
            table["threshold"].append(threshold)
            table["decision_type"].append(decision)
            table["missing_direction"].append(("left" if tree.missing_left[node] else "right") if split else None)
            table["missing_type"].append("NaN" if split else None)
            table["value"].append(float(tree.value[node]))
            table["weight"].append(float(tree.hessian[node]))
            table["count"].append(int(tree.count[node]))
    return table


def explain_leaves(booster: Booster, X: object, trees: slice,
                   chunks: Iterable[tuple[int, np.ndarray]]) -> np.ndarray:
    """``predict(pred_leaf=True)``: int32 of shape (n_rows, n_trees), the leaf index
    (:func:`leaf_numbers`) each row reaches in each of the model's ``trees``."""
    packed = booster._packed
    numbers = np.concatenate([leaf_numbers(t) for t in booster.trees]) if booster.trees else np.zeros(0, np.int32)
    roots = packed.roots[trees]
    out = np.empty((X.shape[0], roots.shape[0]), np.int32)
    for start, rows in chunks:
        leaf_indices(rows, packed.words, packed.threshold, numbers, roots, out[start:start + rows.shape[0]],
                     packed.categorical)
    return out


def explain_contributions(booster: Booster, X: object, used: slice,
                          chunks: Iterable[tuple[int, np.ndarray]]) -> np.ndarray:
    """``predict(pred_contrib=True)``: float64 of shape (n_rows, K (n_features + 1)), block ``k``
    holding output ``k``'s SHAP values of the model's trees ``used`` (whose start is a whole
    iteration) then its expected value (see the module docstring)."""
    packed = booster._packed
    trees = booster.trees[used]
    n_outputs = booster.num_model_per_iteration()
    width = booster.num_feature() + 1
    out = _output_zeros((X.shape[0], n_outputs * width), "pred_contrib",
                        f"{'' if n_outputs == 1 else f'{n_outputs} outputs x '}(features + 1) = {width}")
    out[:, width - 1::width] = _expected_values(booster, used)
    if not trees:
        return out
    cover_share = _cover_shares(booster, used)
    depths = [t.depth() for t in trees]
    tree_points = np.array([_quadrature_points(t, d) for t, d in zip(trees, depths)], np.int64)
    points, weights = _gauss_legendre(int(tree_points.max()))
    for start, rows in chunks:
        tree_shap(rows, packed.feature, packed.threshold, packed.missing_left, packed.left, packed.right,
                  packed.categorical, packed.value, cover_share, packed.roots[used], n_outputs, max(depths),
                  points, weights, tree_points, out[start:start + rows.shape[0]])
    return out


def explain_interactions(booster: Booster, X: object, used: slice,
                         chunks: Iterable[tuple[int, np.ndarray]]) -> np.ndarray:
    """``predict(pred_interactions=True)``: float64 of shape (n_rows, n_features + 1,
    n_features + 1), or (n_rows, K, n_features + 1, n_features + 1) for K > 1 outputs
    (XGBoost's layout): the SHAP interaction values, main effects on the diagonal, the expected
    value at ``[n_features, n_features]``; row ``a`` sums to feature ``a``'s SHAP value; of the
    model's trees ``used``, as :func:`explain_contributions`."""
    packed = booster._packed
    trees = booster.trees[used]
    n_outputs = booster.num_model_per_iteration()
    width = booster.num_feature() + 1
    out = _output_zeros((X.shape[0], n_outputs, width, width), "pred_interactions",
                        f"{'' if n_outputs == 1 else f'{n_outputs} outputs x '}(features + 1)^2 = {width}^2")
    out[:, :, -1, -1] = _expected_values(booster, used)
    if trees:
        cover_share = _cover_shares(booster, used)
        split_on = [np.unique(t.feature[t.left >= 0]).astype(np.int64) for t in trees]
        starts = np.concatenate([[0], np.cumsum([f.size for f in split_on])]).astype(np.int64)
        depths = [t.depth() for t in trees]
        tree_points = np.array([_quadrature_points(t, d) for t, d in zip(trees, depths)], np.int64)
        points, weights = _gauss_legendre(int(tree_points.max()))
        for start, rows in chunks:
            tree_shap_interactions(rows, packed.feature, packed.threshold, packed.missing_left, packed.left,
                                   packed.right, packed.categorical, packed.value, cover_share, packed.roots[used],
                                   n_outputs, max(depths), points, weights, tree_points, np.concatenate(split_on),
                                   starts, out[start:start + rows.shape[0]])
    return out[:, 0] if n_outputs == 1 else out


def _available_memory() -> int | None:
    """Bytes a new allocation may take without swapping: Linux's MemAvailable, less where a
    cgroup (a container) limits the memory; elsewhere the free physical memory where ``os.sysconf``
    tells it; None when unknown."""
    available = []
    try:
        with open("/proc/meminfo", "rb") as f:
            available += [int(line.split()[1]) * 1024 for line in f if line.startswith(b"MemAvailable:")]
    except (OSError, ValueError, IndexError):
        pass
    if not available:
        try:
            available.append(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, ValueError, OSError):
            pass
    # cgroup v2, then v1: the limit less the usage, of which the inactive file cache can be
    # reclaimed (as a container's working set is counted); a host's own shows no limit (v2: no
    # file; v1: a huge one)
    for folder, limit, usage, cache in (("", "max", "current", b"inactive_file "),
                                        ("memory", "limit_in_bytes", "usage_in_bytes", b"total_inactive_file ")):
        files = Path("/sys/fs/cgroup", folder)
        try:
            reclaimable = sum(int(line.split()[1]) for line in (files / "memory.stat").read_bytes().splitlines()
                              if line.startswith(cache))
            available.append(int((files / f"memory.{limit}").read_text()) - int((files / f"memory.{usage}").read_text())
                             + reclaimable)
        except (OSError, ValueError, IndexError):  # absent, or "max": no limit
            pass
    return max(0, min(available)) if available else None


def _output_zeros(shape: tuple[int, ...], option: str, per_row: str) -> np.ndarray:
    """A float64 output of zeros for ``predict(option=True)``, whose rows hold ``per_row`` values.

    Raises
    ------
    DataError
        It is larger than the memory available (:func:`_available_memory`), or its allocation
        fails: numpy's MemoryError, or a swapping machine, would say nothing of the rows.
    """
    n_bytes = math.prod(shape) * 8
    available = _available_memory()
    if available is None or n_bytes <= available:
        try:
            return np.zeros(shape)
        except (MemoryError, ValueError):  # numpy's ValueError: larger than any array may be
            pass
    row_bytes = n_bytes // max(1, shape[0])
    limit = "which could not be allocated" if available is None or n_bytes <= available else (
        f"more than the {available / 1e9:,.1f} GB of memory available (about {available // row_bytes:,} rows fit)")
    raise DataError(f"{option}=True on {shape[0]:,} rows needs {n_bytes / 1e9:,.1f} GB for its output ({per_row} "
                    f"float64 per row), {limit}; predict fewer rows per call")


def _cover_shares(booster: Booster, used: slice) -> np.ndarray:
    """:func:`_cover_share` of the nodes of the model's trees up to the last one ``used``, by
    node id (the kernels read them at the packed trees' node ids)."""
    return np.concatenate([_cover_share(t) for t in booster.trees[:used.stop]])


def _expected_values(booster: Booster, used: slice) -> np.ndarray:
    """Each output's expected raw score over the model's trees ``used`` (whose start is a whole
    iteration): their :func:`expected_value`, plus the base score when they start at the first
    tree (as the raw scores of ``Booster.predict`` do)."""
    n_outputs = booster.num_model_per_iteration()
    base = np.asarray(booster.base_score, np.float64).reshape(-1)
    expected = base.copy() if used.start == 0 else np.zeros(n_outputs)
    for t, tree in enumerate(booster.trees[used]):
        expected[t % n_outputs] += expected_value(tree)
    return expected
