"""RGBM's random-then-greedy candidate features: which features each tree or node may split on."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost._params import resolve_params
from smartboost.errors import ParameterError
from smartboost.selection import FeatureSelector

N_FEATURES = 12


@pytest.fixture(scope="module")
def data():
    return make_binary(n=3000, n_features=N_FEATURES, seed=21)


def _split_features(tree):
    return set(tree.feature[tree.left >= 0].tolist())


def _selector(params):
    return FeatureSelector(resolve_params({"verbosity": -1, **params}), np.ones(N_FEATURES, np.bool_))


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
        allowed = set(np.flatnonzero(selector.draw(k)).tolist())
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
            assert selector.draw(k, int(node))[tree.feature[node]]
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
    ({"selection_type": 1}, "not implemented yet"),
    ({"selection_type": 3}, "needs selection_t"),
    ({"selection_type": 3, "selection_t": 13}, "exceeds the 12 features"),
])
def test_selection_parameter_errors(data, params, match):
    X, y = data
    with pytest.raises(ParameterError, match=match):
        sb.train({"objective": "binary", "verbosity": -1, **params}, sb.Dataset(X, y), 1)
