"""RGBM's random-then-greedy candidates: which splits each tree or node may choose."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost._params import training_params
from smartboost.errors import ParameterError
from smartboost.grower import NodeRows, TreeGrower
from smartboost.selection import FeatureSelector

N_FEATURES = 12


@pytest.fixture(scope="module")
def data():
    return make_binary(n=3000, n_features=N_FEATURES, seed=21)


def _split_features(tree):
    return set(tree.feature[tree.left >= 0].tolist())


def _selector(params):
    return FeatureSelector(training_params({"verbosity": -1, **params}), np.ones(N_FEATURES, np.bool_))


def _drawn(selector, grower, k, node=-1):
    """The features of a draw as a set (the draw itself as a bool mask)."""
    features, _ = selector.draw(k, node, grower.n_thresholds if grower is not None else None)
    return set(np.flatnonzero(features).tolist())


def _pairs(selector, grower, k, node=-1):
    """The (feature, threshold) pairs of a Type 1 draw."""
    features, packed = selector.draw(k, node, grower.n_thresholds)
    return {(f, int(b)) for f in np.flatnonzero(features) for b in packed[packed[f]:packed[f + 1]]}


def _grow(X, y, params, n_trees=6, n_threads=2):
    """Trees grown by the grower itself on every row (gradients y - 0.5 plus noise, new noise
    every tree), with the selector of ``params``; returns the grower, the selector, the trees."""
    binned = sb.Dataset(X, y).binned
    resolved = training_params({"verbosity": -1, "num_leaves": 15, "min_data_in_leaf": 5, **params})
    grower = TreeGrower.for_data(binned, resolved)
    selector = FeatureSelector(resolved, binned.usable_features)
    source = NodeRows(binned, n_threads)
    rng = np.random.default_rng(5)
    trees = []
    for k in range(n_trees):
        grad = y - 0.5 + 0.3 * rng.standard_normal(y.size)
        source.set_rows(np.arange(y.size, dtype=np.uint32), grad, np.ones(y.size), np.ones(y.size))
        trees.append(grower.grow(source, selector, k).tree)
    return grower, selector, trees


def _splits(tree):
    return [(int(tree.feature[n]), int(tree.bin_threshold[n])) for n in np.flatnonzero(tree.left >= 0)]


@pytest.mark.parametrize("params, t", [({"selection_type": 3, "selection_t": 3}, 3),
                                       ({"selection_type": 2}, 1),
                                       ({"colsample_bytree": 0.5}, 6)])
def test_per_tree_draws_bound_every_split_of_the_tree(data, params, t):
    X, y = data
    booster = sb.train({"objective": "binary", "num_leaves": 15, "verbosity": -1, "seed": 3, **params},
                       sb.Dataset(X, y), 12)
    selector = _selector({"seed": 3, **params})
    drawn = []
    for k, tree in enumerate(booster.trees):
        allowed = _drawn(selector, None, k)
        assert len(allowed) == t and _split_features(tree) <= allowed
        drawn.append(frozenset(allowed))
    assert len(set(drawn)) > 1  # a new draw every tree


def test_per_node_draws_bound_each_split(data):
    X, y = data
    params = {"selection_type": 3, "selection_t": 2, "selection_scope": "node", "seed": 4}
    booster = sb.train({"objective": "binary", "num_leaves": 15, "verbosity": -1, **params}, sb.Dataset(X, y), 5)
    selector = _selector(params)
    for k, tree in enumerate(booster.trees):
        for node in np.flatnonzero(tree.left >= 0):
            assert tree.feature[node] in _drawn(selector, None, k, int(node))
        assert len(_split_features(tree)) > 2  # the tree as a whole uses more than one draw


def test_selection_is_seeded_and_type_0_is_plain_boosting(data):
    X, y = data
    base = {"objective": "binary", "num_leaves": 7, "verbosity": -1}
    runs = [sb.train({**base, "colsample_bynode": 0.3, "seed": s}, sb.Dataset(X, y), 5).model_to_string()
            for s in (1, 1, 2)]
    assert runs[0] == runs[1] != runs[2]
    plain = sb.train(base, sb.Dataset(X, y), 5)
    full = sb.train({**base, "selection_type": 3, "selection_t": N_FEATURES}, sb.Dataset(X, y), 5)
    assert [t.to_dict() for t in plain.trees] == [t.to_dict() for t in full.trees]


@pytest.mark.parametrize("params, match", [
    ({"colsample_bytree": 0.5, "colsample_bynode": 0.5}, "not both"),
    ({"colsample_bytree": 0.5, "selection_type": 3, "selection_t": 2}, "drop selection_type"),
    ({"selection_type": 1}, "needs selection_t"),
    ({"selection_type": 3}, "needs selection_t"),
    ({"selection_type": 3, "selection_t": 13}, "exceeds the 12 features"),
])
def test_selection_parameter_errors(data, params, match):
    X, y = data
    with pytest.raises(ParameterError, match=match):
        sb.train({"objective": "binary", "verbosity": -1, **params}, sb.Dataset(X, y), 1)


@pytest.mark.parametrize("missing_rate", [0.0, 0.1])
def test_type_1_splits_lie_on_drawn_pairs(missing_rate):
    """Per tree: every split of the tree is one of its t drawn (feature, threshold) pairs."""
    X, y = make_binary(n=3000, n_features=N_FEATURES, seed=21, missing_rate=missing_rate)
    grower, selector, trees = _grow(X, y, {"selection_type": 1, "selection_t": 60, "seed": 8})
    has_missing = sb.Dataset(X, y).binned.missing_count > 0
    np.testing.assert_array_equal(grower.n_thresholds, grower.n_bins - 1 + has_missing)
    for k, tree in enumerate(trees):
        pairs = _pairs(selector, grower, k)
        assert len(pairs) == 60 and set(_splits(tree)) <= pairs and len(_splits(tree)) >= 7


def test_type_1_per_node_splits_lie_on_each_node_draw():
    X, y = make_binary(n=3000, n_features=N_FEATURES, seed=22, missing_rate=0.05)
    grower, selector, trees = _grow(X, y, {"selection_type": 1, "selection_t": 30, "selection_scope": "node",
                                           "seed": 9})
    for k, tree in enumerate(trees):
        nodes = np.flatnonzero(tree.left >= 0)
        assert nodes.size >= 7
        for node in nodes:
            assert (int(tree.feature[node]), int(tree.bin_threshold[node])) in _pairs(selector, grower, k, int(node))


@pytest.mark.parametrize("scope", ["tree", "node"])
def test_type_1_with_every_pair_is_plain_boosting(scope):
    X, y = make_binary(n=3000, n_features=N_FEATURES, seed=23, missing_rate=0.05)
    grower, _, plain = _grow(X, y, {})
    total = int(grower.n_thresholds.sum())
    _, _, every = _grow(X, y, {"selection_type": 1, "selection_t": total, "selection_scope": scope})
    assert [t.to_dict() for t in plain] == [t.to_dict() for t in every]
    with pytest.raises(ParameterError, match=f"exceeds the {total} .feature, threshold. pairs"):
        _grow(X, y, {"selection_type": 1, "selection_t": total + 1, "selection_scope": scope})


def test_type_1_is_seeded_and_thread_count_independent(data):
    X, y = data
    base = {"objective": "binary", "num_leaves": 15, "verbosity": -1, "selection_type": 1, "selection_t": 40}
    runs = [[t.to_dict() for t in sb.train({**base, "seed": s, "num_threads": n}, sb.Dataset(X, y), 5).trees]
            for s, n in ((1, 2), (1, 1), (2, 2))]
    assert runs[0] == runs[1] != runs[2]
