"""Monotone and interaction constraints: predictions monotone along constrained features, no
root-to-leaf path mixing features of different groups, on random data and random models; and
the parameters' forms and errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import smartboost as sb
from smartboost.errors import ParameterError

_SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _data(seed, n, n_features, missing=0.05):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[:, 0] = np.round(X[:, 0] * 2)  # a few distinct values
    Z = np.nan_to_num(X)
    y = np.sin(2 * Z[:, 0]) + Z[:, 1] * Z[:, -1] + Z[:, 1] + 0.3 * rng.normal(size=n)
    X[rng.random(X.shape) < missing] = np.nan
    return X, y


_MODEL = st.fixed_dictionaries({
    "num_leaves": st.integers(2, 20),
    "grow_policy": st.sampled_from(["leafwise", "depthwise"]),
    "min_data_in_leaf": st.integers(1, 10),
    "lambda_l1": st.sampled_from([0.0, 0.5]),
    "lambda_l2": st.sampled_from([0.0, 1.0]),
    "learning_rate": st.sampled_from([0.1, 0.5, 1.0]),
    "objective": st.sampled_from(["regression", "binary", "multiclass"]),
    "boosting": st.sampled_from(["newton", "gradient"]),
    "sampling": st.sampled_from(["none", "mvs", "bernoulli"]),
    "step_rule": st.sampled_from(["shrinkage", "line"]),
    "monotone_constraints_method": st.sampled_from(["basic", "intermediate"]),
})


def _fit(X, y, model, constraint, rounds=5):
    params = {**model, "verbosity": -1, "max_depth": 4 if model["grow_policy"] == "depthwise" else -1, **constraint}
    if params["objective"] != "regression":
        y = np.digitize(y, [-0.3, 0.4] if params["objective"] == "multiclass" else [0.0]).astype(np.float64)
        if params["objective"] == "multiclass":
            params["num_class"] = 3
            params["step_rule"] = "shrinkage"
    if params["sampling"] != "none":
        params["sample_rate"] = 0.5
    return sb.train(params, sb.Dataset(X, y), rounds)


@_SETTINGS
@given(seed=st.integers(0, 2**16), n_features=st.integers(2, 5), model=_MODEL,
       directions=st.lists(st.sampled_from([-1, 0, 1]), min_size=5, max_size=5))
def test_predictions_are_monotone_along_constrained_features(seed, n_features, model, directions):
    directions = directions[:n_features]
    X, y = _data(seed, 300, n_features)
    booster = _fit(X, y, model, {"monotone_constraints": directions})
    rng = np.random.default_rng(seed)
    base = np.nan_to_num(X[rng.choice(len(X), 15)])
    for f, direction in enumerate(directions):
        if direction == 0:
            continue
        grid = np.unique(np.r_[np.nanquantile(X[:, f], np.linspace(0, 1, 41)), -1e9, 1e9, booster.bin_mapper.edges[f]])
        rows = np.repeat(base, grid.size, axis=0)
        rows[:, f] = np.tile(grid, len(base))
        raw = booster.predict(rows, raw_score=True).reshape(len(base), grid.size, -1)
        assert (direction * np.diff(raw, axis=1) >= 0).all(), f"feature {f} is not monotone ({direction})"


def _paths(tree):
    """The set of features on each root-to-leaf path."""
    out = []
    stack = [(0, frozenset())]
    while stack:
        node, used = stack.pop()
        if tree.left[node] < 0:
            out.append(used)
            continue
        used = used | {int(tree.feature[node])}
        stack += [(int(tree.left[node]), used), (int(tree.right[node]), used)]
    return out


@_SETTINGS
@given(seed=st.integers(0, 2**16), model=_MODEL,
       groups=st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=3, unique=True), min_size=1, max_size=3))
def test_no_path_uses_features_of_two_groups(seed, model, groups):
    X, y = _data(seed, 300, 6)
    booster = _fit(X, y, {**model, "num_leaves": max(model["num_leaves"], 8)}, {"interaction_constraints": groups})
    allowed = [set(group) for group in groups]
    for tree in booster.trees:
        for used in _paths(tree):
            assert any(used <= group for group in allowed), f"path {sorted(used)} outside every group {groups}"


def test_constraints_with_categories_and_per_node_draws():
    pd = pytest.importorskip("pandas")
    X, y = _data(3, 600, 4)
    frame = pd.DataFrame(X, columns=list("abcd")).assign(city=pd.Categorical(np.array(list("pqrstu"))[
        np.random.default_rng(0).integers(0, 6, 600)]))
    params = {"verbosity": -1, "num_leaves": 15, "min_data_per_group": 5, "colsample_bynode": 0.6,
              "monotone_constraints": {"b": 1}, "interaction_constraints": [["a", "b", "city"], ["c", "d"]]}
    booster = sb.train(params, sb.Dataset(frame, y), 5)
    for tree in booster.trees:
        assert all(used <= {0, 1, 4} or used <= {2, 3} for used in _paths(tree))
    grid = frame.iloc[np.repeat(np.arange(10), 30)].copy()
    grid["b"] = np.tile(np.linspace(-3, 3, 30), 10)
    raw = booster.predict(grid).reshape(10, 30)
    assert (np.diff(raw, axis=1) >= 0).all()


def test_monotone_constraints_change_the_model_only_where_they_bind():
    X, y = _data(0, 500, 3)
    plain = sb.train({"verbosity": -1}, sb.Dataset(X, y), 5)
    free = sb.train({"verbosity": -1, "monotone_constraints": [0, 0, 0]}, sb.Dataset(X, y), 5)
    np.testing.assert_array_equal(free.predict(X), plain.predict(X))
    bound = sb.train({"verbosity": -1, "monotone_constraints": [1, 0, -1]}, sb.Dataset(X, y), 5)
    assert not np.array_equal(bound.predict(X), plain.predict(X))


@pytest.mark.parametrize("params, match", [
    ({"monotone_constraints": [1, 0]}, "has 2 entries, but the data has 3 features"),
    ({"monotone_constraints": {"nope": 1}}, "names feature 'nope', which is not a feature"),
    ({"monotone_constraints": {0: 1, "Column_0": -1}}, r"names feature 'Column_0' twice \(as 0 and 'Column_0'\)"),
    ({"monotone_constraints": [1, 2, 0]}, "must be -1, 0 or 1"),
    ({"monotone_constraints": [1, 0, 0], "step_rule": "leaf_line"}, "leaf_line"),
    ({"monotone_constraints": [1, 0, 0], "objective": "quantile"}, "refits every leaf"),
    ({"monotone_constraints": [1, 0, 0], "monotone_constraints_method": "advanced"}, "must be one of"),
    ({"interaction_constraints": [[0, 5]]}, "names feature 5, but the data has 3 features"),
    ({"interaction_constraints": [[]]}, "non-empty feature groups"),
    ({"interaction_constraints": "[[0, 1"}, "could not be read as a list"),
])
def test_bad_constraints_are_named(params, match):
    X, y = _data(0, 100, 3)
    with pytest.raises(ParameterError, match=match):
        sb.train({"verbosity": -1, **params}, sb.Dataset(X, y), 1)


def test_leaf_values_from_every_row_keep_the_monotone_order():
    """The intermediate method bounds a leaf by its neighbours' sampled values, which values
    from every row crossed (15 violations on this grid): refused, and sampling='auto' keeps the
    sample's values; the basic method's nested midpoint bounds keep the order."""
    from smartboost._params import leaf_value_rows_mode, training_params
    from smartboost.objectives.base import make_objective
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 - 2 * X[:, 2] * X[:, 3] + 0.3 * rng.normal(size=400)
    params = {"verbosity": -1, "monotone_constraints": [1, -1, 1, 0], "num_leaves": 15, "min_data_in_leaf": 3,
              "sampling": "mvs", "sample_rate": 0.3, "leaf_value_rows": "all"}
    with pytest.raises(ParameterError, match="monotone_constraints_method='intermediate'"):
        sb.train(params, sb.Dataset(X, y), 1)
    auto = training_params({"monotone_constraints": [1, -1, 1, 0], "sampling": "auto"})
    assert leaf_value_rows_mode(auto, make_objective("regression")) == "sample"
    booster = sb.train({**params, "monotone_constraints_method": "basic"}, sb.Dataset(X, y), 30)
    base = rng.normal(size=(50, 4))
    for f, direction in enumerate([1, -1, 1]):
        rows = np.repeat(base, 61, axis=0)
        rows[:, f] = np.tile(np.linspace(-3, 3, 61), 50)
        assert (direction * np.diff(booster.predict(rows).reshape(50, 61), axis=1) >= 0).all()


def test_the_intermediate_method_fits_better_than_the_basic_one():
    """Both keep the predictions monotone; the intermediate method's bounds are looser (each
    leaf is bounded by its neighbours' outputs, not by midpoints), so it fits a monotone target
    more closely (here by about 9%)."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(4000, 3))
    y = np.tanh(2 * X[:, 0]) + X[:, 1] ** 3 + 0.5 * np.sin(3 * X[:, 2]) + 0.1 * rng.normal(size=4000)
    losses = {}
    for method in ("basic", "intermediate"):
        params = {"verbosity": -1, "num_leaves": 31, "monotone_constraints": [1, 1, 0],
                  "monotone_constraints_method": method}
        booster = sb.train(params, sb.Dataset(X, y), 30)
        losses[method] = np.mean((booster.predict(X) - y) ** 2)
        grid = np.repeat(X[:20], 50, axis=0)
        for f in (0, 1):
            rows = grid.copy()
            rows[:, f] = np.tile(np.linspace(-2, 2, 50), 20)
            assert (np.diff(booster.predict(rows).reshape(20, 50), axis=1) >= 0).all()
    assert losses["intermediate"] < 0.95 * losses["basic"]


def test_a_categorical_feature_cannot_be_monotone():
    X, y = _data(0, 100, 3)
    X[:, 0] = np.abs(np.nan_to_num(X[:, 0]))
    with pytest.raises(ParameterError, match="constrains the categorical feature 'Column_0'"):
        sb.train({"verbosity": -1, "monotone_constraints": [1, 0, 0]}, sb.Dataset(X, y, categorical_feature=[0]), 1)


def test_the_text_forms_of_xgboost_and_the_names():
    from smartboost._params import resolve_params
    resolved = resolve_params({"monotone_constraints": "(1,0,-1)", "interaction_constraints": "[[0,1],[2,3]]"})
    assert resolved["monotone_constraints"] == (1, 0, -1)
    assert resolved["interaction_constraints"] == ((0, 1), (2, 3))
    assert resolve_params({"monotonic_cst": [1, -1]})["monotone_constraints"] == (1, -1)
    X, y = _data(1, 300, 3)
    by_name = sb.train({"verbosity": -1, "monotone_constraints": {"x1": -1}, "interaction_constraints": [["x0", "x1"]]},
                       sb.Dataset(X, y, feature_name=["x0", "x1", "x2"]), 3)
    by_index = sb.train({"verbosity": -1, "monotone_constraints": [0, -1, 0], "interaction_constraints": [[0, 1]]},
                        sb.Dataset(X, y), 3)
    for a, b in zip(by_name.trees, by_index.trees):
        np.testing.assert_array_equal(a.value, b.value)
    assert not any((tree.feature[tree.left >= 0] == 2).any() for tree in by_index.trees)  # in no group: unused
