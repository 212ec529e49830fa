"""Explanations: SHAP values (``pred_contrib``) and leaf indices (``pred_leaf``).

SHAP values are checked against their definition (a brute-force Shapley computation over every
feature subset under the same path-dependent expectation), against ``shap.TreeExplainer`` on
the same trees, and for local accuracy on every kind of model; leaf indices against the walk
and against LightGBM's numbering of the same tree.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_binary, make_regression

import smartboost as sb
from smartboost.errors import DataError, ParameterError
from smartboost.explain import expected_value, leaf_numbers
from smartboost.tree import Tree

_SMALL = {"num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1}


def _missing(X, rate, seed):
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X


def _models():
    """(name, booster, X) for every kind of model: binary, regression, multiclass, ranking."""
    X, y = make_binary(n=1500, seed=40, missing_rate=0.1)
    Xr, target = make_regression(n=1500, seed=41)
    Xr = _missing(Xr, 0.05, 1)
    classes = np.digitize(np.nan_to_num(X[:, 0]) + np.nan_to_num(X[:, 1]), [-0.5, 0.7]).astype(float)
    grades = np.clip(np.round(np.nan_to_num(X[:, 0]) + 1), 0, 3)
    return [
        ("binary", sb.train({**_SMALL, "objective": "binary", "num_leaves": 15}, sb.Dataset(X, y), 30), X),
        ("regression", sb.train({**_SMALL, "objective": "regression", "sampling": "goss", "sample_rate": 0.5},
                                sb.Dataset(Xr, target), 30), Xr),
        ("multiclass", sb.train({**_SMALL, "objective": "multiclass", "num_class": 3}, sb.Dataset(X, classes), 10),
         X),
        ("ranking", sb.train({**_SMALL, "objective": "lambdarank"}, sb.Dataset(X, grades, group=[50] * 30), 20), X),
    ]


@pytest.fixture(scope="module")
def models():
    return {name: (booster, X) for name, booster, X in _models()}


def _raw_blocks(booster, X, **kwargs):
    raw = booster.predict(X, raw_score=True, **kwargs)
    return raw.reshape(X.shape[0], -1)


@pytest.mark.parametrize("name", ["binary", "regression", "multiclass", "ranking"])
def test_contributions_sum_to_the_raw_score(models, name):
    booster, X = models[name]
    contributions = booster.predict(X, pred_contrib=True)
    K, width = booster.num_model_per_iteration(), X.shape[1] + 1
    assert contributions.shape == (X.shape[0], K * width)
    total = contributions.reshape(X.shape[0], K, width).sum(axis=2)
    np.testing.assert_allclose(total, _raw_blocks(booster, X), rtol=1e-9, atol=1e-12)
    half = booster.current_iteration() // 2
    partial = booster.predict(X, pred_contrib=True, num_iteration=half).reshape(X.shape[0], K, width).sum(axis=2)
    np.testing.assert_allclose(partial, _raw_blocks(booster, X, num_iteration=half), rtol=1e-9, atol=1e-12)


def test_sign_tree_contributions_sum_to_the_raw_score():
    """Sign trees (``weak_learner="sign"``) are explained like any tree: their leaves hold the step."""
    X, y = make_binary(n=800, seed=42)
    booster = sb.train({**_SMALL, "objective": "binary", "boosting": "gradient", "weak_learner": "sign",
                        "step_rule": "line"}, sb.Dataset(X, y), 10)
    contributions = booster.predict(X, pred_contrib=True)
    np.testing.assert_allclose(contributions.sum(axis=1), booster.predict(X, raw_score=True), rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(contributions[:, :-1]) > 0


def test_sparse_input_gives_the_dense_contributions():
    X, y = make_binary(n=2000, seed=42)
    X[np.abs(X) < 0.8] = 0.0  # mostly zeros
    booster = sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(sp.csr_matrix(X), y), 20)
    dense = booster.predict(X, pred_contrib=True)
    np.testing.assert_array_equal(booster.predict(sp.csr_matrix(X), pred_contrib=True), dense)
    np.testing.assert_array_equal(booster.predict(sp.csc_matrix(X), pred_leaf=True), booster.predict(X, pred_leaf=True))
    np.testing.assert_allclose(dense.sum(axis=1), booster.predict(X, raw_score=True), rtol=1e-9)


def _goes_left(tree, x, node, mapper):
    """The decision of ``node`` for row ``x``, computed from the model's fields: a categorical
    split (``mapper`` given) looks the category's bin up by value (an unseen or missing one takes
    the missing-value bin) and sends it left iff the bin is in the node's left bins."""
    f = tree.feature[node]
    if mapper is not None and f in mapper.categories:
        table = mapper.categories[f]
        hit = np.flatnonzero(table.values == x[f])
        b = table.bins[hit[0]] if hit.size else mapper.n_bins[f]
        return b in tree.left_bins(node)
    return tree.missing_left[node] if np.isnan(x[f]) else x[f] <= tree.threshold[node]


def _path_expectation(tree, x, node, subset, mapper=None):
    """E[f(x) | x_S] as TreeSHAP defines it: features of ``subset`` follow x, the others average
    the children by cover."""
    if tree.left[node] < 0:
        return tree.value[node]
    f = tree.feature[node]
    left, right = tree.left[node], tree.right[node]
    if f in subset:
        return _path_expectation(tree, x, left if _goes_left(tree, x, node, mapper) else right, subset, mapper)
    return (tree.count[left] * _path_expectation(tree, x, left, subset, mapper)
            + tree.count[right] * _path_expectation(tree, x, right, subset, mapper)) / tree.count[node]


def _brute_force_shapley(tree, x, n_features, mapper=None):
    phi = np.zeros(n_features)
    for i in range(n_features):
        others = [f for f in range(n_features) if f != i]
        for size in range(n_features):
            weight = math.factorial(size) * math.factorial(n_features - size - 1) / math.factorial(n_features)
            for subset in itertools.combinations(others, size):
                phi[i] += weight * (_path_expectation(tree, x, 0, {*subset, i}, mapper)
                                    - _path_expectation(tree, x, 0, set(subset), mapper))
    return phi


def test_contributions_are_the_shapley_values_of_the_path_dependent_expectation():
    X, y = make_binary(n=1500, n_features=5, seed=43, missing_rate=0.1)
    booster = sb.train({**_SMALL, "objective": "binary", "num_leaves": 12, "min_data_in_leaf": 3},
                       sb.Dataset(X, y), 4)
    rows = X[:25]
    contributions = booster.predict(rows, pred_contrib=True)
    expected = np.zeros((rows.shape[0], 5))
    for tree in booster.trees:
        assert tree.depth() >= 3  # deep enough for features to repeat along a path
        expected += [_brute_force_shapley(tree, x, 5) for x in rows]
    np.testing.assert_allclose(contributions[:, :5], expected, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(contributions[:, 5],
                               booster.base_score + sum(expected_value(t) for t in booster.trees), rtol=1e-12)


def test_deep_trees_with_many_features_on_a_path_get_the_shapley_values():
    # The quadrature's point count follows the distinct features a tree's paths can hold, and
    # a feature met several times on a path merges its edges: deep trees over eight features
    # (paths of up to eight distinct ones, many repeated) exercise both.
    rng = np.random.default_rng(7)
    X = rng.random((4000, 8))
    y = np.sin(12 * X[:, 0]) + X[:, 1:] @ np.linspace(1.0, 0.3, 7) + (X[:, 2] > 0.5) * X[:, 3]
    booster = sb.train({**_SMALL, "objective": "regression", "num_leaves": 60, "min_data_in_leaf": 1,
                        "min_sum_hessian_in_leaf": 0.0}, sb.Dataset(X, y), 2)
    depths = [tree.depth() for tree in booster.trees]
    assert max(depths) >= 8
    rows = X[:8]
    contributions = booster.predict(rows, pred_contrib=True)
    expected = sum(np.array([_brute_force_shapley(tree, x, 8) for x in rows]) for tree in booster.trees)
    np.testing.assert_allclose(contributions[:, :8], expected, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(contributions.sum(axis=1), booster.predict(rows, raw_score=True), rtol=1e-12)


def test_a_feature_no_tree_uses_gets_exactly_zero():
    X, y = make_binary(n=2000, seed=44)
    X = np.column_stack([X, np.full(2000, 3.0), np.random.default_rng(0).standard_normal(2000)])
    booster = sb.train({**_SMALL, "objective": "binary", "colsample_bytree": 0.5}, sb.Dataset(X, y), 15)
    used = np.zeros(X.shape[1], bool)
    for tree in booster.trees:
        used[tree.feature[tree.left >= 0]] = True
    assert not used.all()
    contributions = booster.predict(X, pred_contrib=True)
    assert np.all(contributions[:, :-1][:, ~used] == 0.0)
    assert np.all(np.any(contributions[:, :-1][:, used] != 0.0, axis=0))


def _shap_tree(tree):
    """The tree in ``shap``'s custom-tree format. ``shap`` sends a row left at ``x <= threshold``
    (``tree_shap.h``), smartboost's rule, so thresholds go over unchanged."""
    leaf = tree.left < 0
    return {"children_left": np.where(leaf, -1, tree.left).astype(np.int32),
            "children_right": np.where(leaf, -1, tree.right).astype(np.int32),
            "children_default": np.where(leaf, -1, np.where(tree.missing_left, tree.left, tree.right)).astype(np.int32),
            "features": np.where(leaf, -2, tree.feature).astype(np.int32),
            "thresholds": np.where(leaf, 0.0, tree.threshold),
            "values": tree.value.reshape(-1, 1).copy(),
            "node_sample_weight": tree.count.astype(np.float64)}


def _rows_on_thresholds(booster, X, n, seed):
    """Rows of ``X`` with values set exactly to split thresholds of the model (and some NaN)."""
    rng = np.random.default_rng(seed)
    rows = X[rng.integers(0, X.shape[0], n)].copy()
    splits = [(f, t) for tree in booster.trees for f, t in zip(tree.feature[tree.left >= 0],
                                                                tree.threshold[tree.left >= 0]) if np.isfinite(t)]
    for i in range(n):
        for f, t in (splits[j] for j in rng.integers(0, len(splits), 3)):
            rows[i, f] = t
    rows[rng.random(rows.shape) < 0.05] = np.nan
    return rows, splits


@pytest.mark.parametrize("name", ["binary", "regression", "multiclass"])
def test_contributions_equal_shap_tree_explainer(models, name):
    shap = pytest.importorskip("shap")
    booster, X = models[name]
    rows, splits = _rows_on_thresholds(booster, X, 300, seed=5)
    on_threshold = np.zeros(rows.shape[0], bool)
    for f, t in splits:
        on_threshold |= rows[:, f] == t
    assert on_threshold.mean() > 0.9
    ours = booster.predict(rows, pred_contrib=True)
    K, width = booster.num_model_per_iteration(), X.shape[1] + 1
    base = np.asarray(booster.base_score, np.float64).reshape(-1)
    for k in range(K):
        model = {"trees": [_shap_tree(t) for t in booster.trees[k::K]], "base_offset": base[k]}
        explainer = shap.TreeExplainer(model)
        np.testing.assert_allclose(ours[:, k * width:(k + 1) * width - 1], explainer.shap_values(rows),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(ours[:, (k + 1) * width - 1], np.ravel(explainer.expected_value)[0], rtol=1e-12)


def test_contributions_do_not_depend_on_the_thread_count(models):
    booster, X = models["binary"]
    results = []
    for n in (1, 2):
        booster.params["num_threads"] = n
        results.append((booster.predict(X, pred_contrib=True), booster.predict(X, pred_leaf=True)))
    booster.params["num_threads"] = 0
    assert results[0][0].tobytes() == results[1][0].tobytes()
    np.testing.assert_array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("name", ["binary", "multiclass"])
def test_leaf_indices_give_each_tree_its_output(models, name):
    booster, X = models[name]
    leaves = booster.predict(X, pred_leaf=True)
    assert leaves.shape == (X.shape[0], booster.num_trees()) and leaves.dtype == np.int32
    K = booster.num_model_per_iteration()
    raw = _raw_blocks(booster, X) - np.asarray(booster.base_score).reshape(-1)
    total = np.zeros_like(raw)
    for t, tree in enumerate(booster.trees):
        numbers = leaf_numbers(tree)
        assert sorted(numbers[numbers >= 0]) == list(range(tree.n_leaves))
        node_of = np.empty(tree.n_leaves, np.int64)
        node_of[numbers[numbers >= 0]] = np.flatnonzero(numbers >= 0)
        total[:, t % K] += tree.value[node_of[leaves[:, t]]]
    np.testing.assert_allclose(total, raw, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(booster.predict(X, pred_leaf=True, num_iteration=3), leaves[:, :3 * K])


def _from_lightgbm(structure, n_leaves):
    """A LightGBM tree as a smartboost Tree whose node ids are allocated the way smartboost's
    grower allocates them: each split, in LightGBM's split order, makes the next two ids."""
    splits = {}

    def collect(node):
        if "split_index" in node:
            splits[node["split_index"]] = node
            collect(node["left_child"])
            collect(node["right_child"])

    collect(structure)
    n = 2 * n_leaves - 1
    arrays = {"feature": np.full(n, -1, np.int32), "threshold": np.zeros(n), "bin_threshold": np.zeros(n, np.int32),
              "missing_left": np.zeros(n, bool), "left": np.full(n, -1, np.int32), "right": np.full(n, -1, np.int32),
              "value": np.zeros(n), "gain": np.zeros(n), "hessian": np.zeros(n), "count": np.ones(n, np.int64)}
    node_id = {id(structure): 0}
    for s in range(len(splits)):
        node = splits[s]
        me = node_id[id(node)]
        arrays["feature"][me] = node["split_feature"]
        arrays["threshold"][me] = node["threshold"]
        arrays["missing_left"][me] = node["default_left"]
        arrays["left"][me], arrays["right"][me] = 2 * s + 1, 2 * s + 2
        node_id[id(node["left_child"])], node_id[id(node["right_child"])] = 2 * s + 1, 2 * s + 2
    expected_numbers = {}
    for node in _leaves(structure):
        arrays["value"][node_id[id(node)]] = node["leaf_value"]
        expected_numbers[node_id[id(node)]] = node["leaf_index"]
    return Tree(**arrays), expected_numbers


def _leaves(node):
    if "leaf_index" in node:
        return [node]
    return _leaves(node["left_child"]) + _leaves(node["right_child"])


def test_leaf_indices_follow_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = make_regression(n=3000, seed=45)
    X = _missing(X, 0.05, 2)
    model = lgb.train({"num_leaves": 13, "min_data_in_leaf": 5, "verbose": -1}, lgb.Dataset(X, y), 5)
    dump = model.dump_model()["tree_info"]
    trees = []
    for info in dump:
        tree, expected = _from_lightgbm(info["tree_structure"], info["num_leaves"])
        numbers = leaf_numbers(tree)
        assert {node: numbers[node] for node in expected} == expected
        trees.append(tree)
    booster = sb.train({**_SMALL, "objective": "regression"}, sb.Dataset(X, y), 1)  # for its bins
    booster.trees, booster.best_iteration = trees, len(trees)
    booster.__dict__.pop("_packed", None)
    np.testing.assert_array_equal(booster.predict(X, pred_leaf=True), model.predict(X, pred_leaf=True))
    # trees_to_dataframe names, links and describes the nodes as LightGBM's does
    ours, theirs = (table.sort_values(["tree_index", "node_index"], ignore_index=True)
                    for table in (booster.trees_to_dataframe(), model.trees_to_dataframe()))
    columns = ["tree_index", "node_depth", "node_index", "left_child", "right_child", "parent_index",
               "split_feature", "decision_type", "missing_direction"]
    assert ours[columns].fillna("-").equals(theirs[columns].fillna("-"))
    leaves = ours["left_child"].isna()
    np.testing.assert_array_equal(ours["threshold"][~leaves], theirs["threshold"][~leaves])
    np.testing.assert_array_equal(ours["value"][leaves], theirs["value"][leaves])


def test_trees_to_dataframe_walks_every_row_to_its_raw_score():
    pd = pytest.importorskip("pandas")
    X, y = make_binary(n=2000, seed=47)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["city"] = pd.Categorical(np.random.default_rng(0).choice(["a", "b", "c", "d"], len(frame)))
    y = y + (frame["city"].isin(["b", "d"]).to_numpy() & (y == 0))
    booster = sb.train({**_SMALL, "objective": "binary", "min_data_per_group": 5, "cat_smooth": 1.0},
                       sb.Dataset(frame, y), 4)
    table = booster.trees_to_dataframe()
    assert len(table) == sum(tree.n_nodes for tree in booster.trees)
    splits = table[table["left_child"].notna()]
    categorical = splits[splits["decision_type"] == "=="]
    assert not categorical.empty and set(categorical["split_feature"]) == {"city"}
    assert all(set(t.split("||")) <= {"a", "b", "c", "d"} for t in categorical["threshold"])
    # a split's rows are its children's, and its children name it their parent
    by_index = table.set_index("node_index")
    for _, split in splits.iterrows():
        children = by_index.loc[[split["left_child"], split["right_child"]]]
        assert children["count"].sum() == split["count"]
        assert (children["parent_index"] == split["node_index"]).all()
        assert (children["node_depth"] == split["node_depth"] + 1).all()
    # each row's leaves, named as pred_leaf numbers them, add up to its raw score
    leaves = booster.predict(frame, pred_leaf=True)
    value = by_index["value"]
    raw = booster.base_score + sum(value.loc[[f"{t}-L{leaf}" for leaf in leaves[:, t]]].to_numpy()
                                   for t in range(leaves.shape[1]))
    np.testing.assert_allclose(raw, booster.predict(frame, raw_score=True), rtol=1e-12, atol=1e-12)


def test_a_model_without_trees_and_bad_requests():
    X, y = make_binary(n=500, seed=46)
    booster = sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(X, y), 3)
    empty = sb.Booster._new(objective=booster.objective, bin_mapper=booster.bin_mapper, base_score=0.25,
                            feature_names=booster.feature_names, params=booster.params)
    assert empty.predict(X, pred_leaf=True).shape == (500, 0)
    contributions = empty.predict(X, pred_contrib=True)
    assert np.all(contributions[:, :-1] == 0.0) and np.all(contributions[:, -1] == 0.25)
    with pytest.raises(ParameterError, match="at most one of pred_leaf, pred_contrib and pred_interactions"):
        booster.predict(X, pred_leaf=True, pred_contrib=True)
    # a text is truthy: "false" silently returned SHAP values (or raw scores)
    with pytest.raises(ParameterError, match="'pred_contrib' must be true or false"):
        booster.predict(X, pred_contrib="no")
    with pytest.raises(ParameterError, match="'raw_score' must be true or false"):
        booster.predict(X, raw_score=[])
    np.testing.assert_array_equal(booster.predict(X, raw_score="false"), booster.predict(X))
    for flag in ("pred_contrib", "pred_leaf", None):  # LightGBM's users pass a validation Dataset
        with pytest.raises(DataError, match="predict takes the features .* not a Dataset"):
            booster.predict(sb.Dataset(X, y), **({flag: True} if flag else {}))
    np.testing.assert_array_equal(booster.predict(X[:5], pred_contrib=np.True_),
                                  booster.predict(X[:5], pred_contrib=True))


def test_a_tree_grown_on_an_empty_sample_adds_its_value_to_the_expected_value():
    # A sampler may draw no row (SMART at a tiny sample_rate): the tree is one leaf of count 0,
    # whose 0 / 0 expectation made every SHAP and interaction value of the model NaN.
    X, y = make_binary(n=300, seed=47)
    booster = sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(X, y), 2)
    document = json.loads(booster.model_to_string())
    empty = {name: [0] if name != "threshold" else [0.0] for name, v in document["trees"][0].items()
             if isinstance(v, list)}
    document["trees"].insert(1, {**empty, "left": [-1], "right": [-1], "missing_left": [False], "value": [0.25]})
    document["best_iteration"] = 3
    model = sb.Booster(model_str=json.dumps(document))
    contributions = model.predict(X[:20], pred_contrib=True)
    np.testing.assert_allclose(contributions[:, :-1], booster.predict(X[:20], pred_contrib=True)[:, :-1], atol=1e-15)
    np.testing.assert_allclose(contributions.sum(axis=1), model.predict(X[:20], raw_score=True), rtol=1e-13)
    assert contributions[0, -1] == pytest.approx(booster.predict(X[:1], pred_contrib=True)[0, -1] + 0.25, abs=1e-15)
    assert np.isfinite(model.predict(X[:3], pred_interactions=True)).all()


def _brute_force_interactions(tree, x, n_features):
    """Shapley interaction indices (Lundberg, Erion & Lee 2018, eq. 8) of the path-dependent game."""
    out = np.zeros((n_features, n_features))
    v = lambda subset: _path_expectation(tree, x, 0, set(subset))  # noqa: E731
    for i, j in itertools.permutations(range(n_features), 2):
        others = [f for f in range(n_features) if f not in (i, j)]
        for size in range(n_features - 1):
            weight = (math.factorial(size) * math.factorial(n_features - size - 2)
                      / (2 * math.factorial(n_features - 1)))
            for s in itertools.combinations(others, size):
                out[i, j] += weight * (v((*s, i, j)) - v((*s, i)) - v((*s, j)) + v(s))
    return out


def test_interaction_values_are_shapley_interaction_indices():
    X, y = make_binary(n=1500, n_features=5, seed=47, missing_rate=0.1)
    X, y = X[:, :4], (np.nan_to_num(X[:, 0]) * np.nan_to_num(X[:, 1]) + np.nan_to_num(X[:, 2]) > 0).astype(float)
    booster = sb.train({**_SMALL, "objective": "binary", "num_leaves": 10, "min_data_in_leaf": 3},
                       sb.Dataset(X, y), 3)
    rows = X[:12]
    interactions = booster.predict(rows, pred_interactions=True)
    assert interactions.shape == (12, 5, 5)
    expected = sum(np.array([_brute_force_interactions(tree, x, 4) for x in rows]) for tree in booster.trees)
    off_diagonal = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose(interactions[:, :4, :4][:, off_diagonal], expected[:, off_diagonal], rtol=1e-10,
                               atol=1e-13)
    contributions = booster.predict(rows, pred_contrib=True)
    np.testing.assert_allclose(interactions.sum(axis=2), contributions, rtol=1e-10, atol=1e-13)
    assert np.all(interactions[:, 4, :4] == 0.0) and np.all(interactions[:, :4, 4] == 0.0)



def test_interaction_values_too_large_for_memory_are_refused_naming_their_size(monkeypatch):
    X, y = make_binary(n=300, n_features=8, seed=5)
    booster = sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(X, y), 2)
    # 10^12 rows of no entries: 648,000 GB of output, which died in numpy as a MemoryError
    many = sp.csc_matrix((10**12, 8))
    message = (r"pred_interactions=True on 1,000,000,000,000 rows needs 648,000.0 GB for its output "
               r"\(\(features \+ 1\)\^2 = 9\^2 float64 per row\), more than the [\d,.]+ GB of memory available "
               r"\(about [\d,]+ rows fit\); predict fewer rows per call")
    with pytest.raises(DataError, match=message):
        booster.predict(many, pred_interactions=True)
    monkeypatch.setattr("smartboost.explain._available_memory", lambda: None)  # unknown: numpy's error is converted
    with pytest.raises(DataError, match=r"needs 648,000.0 GB .*, which could not be allocated; predict fewer"):
        booster.predict(many, pred_interactions=True)
    monkeypatch.setattr("smartboost.explain._available_memory", lambda: 10 * 9 * 9 * 8)  # 10 rows fit
    assert booster.predict(X[:10], pred_interactions=True).shape == (10, 9, 9)
    with pytest.raises(DataError, match=r"more than the 0.0 GB of memory available \(about 10 rows fit\)"):
        booster.predict(X[:11], pred_interactions=True)


def test_shap_values_too_large_for_memory_are_refused_naming_their_size(monkeypatch):
    """The SHAP values of wide sparse data are dense: (features + 1) float64 a row."""
    X, y = make_binary(n=300, n_features=8, seed=5)
    booster = sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(X, y), 2)
    message = (r"pred_contrib=True on 1,000,000,000,000 rows needs 72,000.0 GB for its output \(\(features \+ 1\) = "
               r"9 float64 per row\), more than the [\d,.]+ GB of memory available")
    with pytest.raises(DataError, match=message):
        booster.predict(sp.csc_matrix((10**12, 8)), pred_contrib=True)
    monkeypatch.setattr("smartboost.explain._available_memory", lambda: 10 * 9 * 8)  # 10 rows fit
    assert booster.predict(X[:10], pred_contrib=True).shape == (10, 9)
    with pytest.raises(DataError, match=r"\(about 10 rows fit\)"):
        booster.predict(X[:11], pred_contrib=True)


@pytest.mark.parametrize("name", ["binary", "multiclass"])
def test_interaction_values_equal_shap_tree_explainer(models, name):
    shap = pytest.importorskip("shap")
    booster, X = models[name]
    rows, _ = _rows_on_thresholds(booster, X, 40, seed=6)
    ours = booster.predict(rows, pred_interactions=True, num_iteration=5)
    K, F = booster.num_model_per_iteration(), X.shape[1]
    ours = ours.reshape(rows.shape[0], K, F + 1, F + 1)
    for k in range(K):
        model = {"trees": [_shap_tree(t) for t in booster.trees[:5 * K][k::K]],
                 "base_offset": np.asarray(booster.base_score, np.float64).reshape(-1)[k]}
        np.testing.assert_allclose(ours[:, k, :F, :F], shap.TreeExplainer(model).shap_interaction_values(rows),
                                   rtol=1e-9, atol=1e-12)
    total = ours.sum(axis=(2, 3))
    np.testing.assert_allclose(total, _raw_blocks(booster, rows, num_iteration=5), rtol=1e-9, atol=1e-12)


def _chain_model(n_features, seed):
    """A model of one tree on 0/1 features that splits feature ``j`` at depth ``j``: a chain whose
    deepest leaves have every feature on their path."""
    rng = np.random.default_rng(seed)
    X = (rng.random((200, n_features)) < 0.5).astype(float)
    document = json.loads(sb.train({"verbosity": -1, "num_leaves": 2}, sb.Dataset(X, X[:, 0]), 1).model_to_string())
    n = 2 * n_features + 1
    tree = {"feature": [-1] * n, "threshold": [0.0] * n, "bin_threshold": [0] * n, "missing_left": [False] * n,
            "left": [-1] * n, "right": [-1] * n, "value": rng.normal(size=n).tolist(), "gain": [0.0] * n,
            "hessian": [0.0] * n, "count": [0] * n}
    cover = 10 ** 6
    for j in range(n_features):  # node 2j splits feature j; its left child is a leaf, its right the next split
        node = 2 * j
        tree["feature"][node], tree["threshold"][node] = j, document["bin_mapper"]["edges"][j][0]
        tree["left"][node], tree["right"][node], tree["count"][node] = node + 1, node + 2, cover
        tree["count"][node + 1] = cover * (1 + j % 4) // 30
        cover -= tree["count"][node + 1]
    tree["count"][-1] = cover
    document.update(trees=[tree], best_iteration=1)
    return sb.Booster(model_str=json.dumps(document)), rng


def test_interaction_values_of_paths_of_many_features_are_exact():
    # The paper's Algorithm 2 (shap's too) unwinds its path by dividing by the fractions and lost
    # digits on paths of dozens of features: entry [a, b] (walked conditioned on a) and [b, a]
    # (on b) differed by 1.5e-10 here, and by 1e-5 on a trained tree of depth 46.
    booster, rng = _chain_model(40, seed=5)
    rows = (rng.random((20, 40)) < 0.7).astype(float)
    interactions = booster.predict(rows, pred_interactions=True)
    np.testing.assert_allclose(interactions, interactions.transpose(0, 2, 1), rtol=0, atol=1e-14)
    np.testing.assert_allclose(interactions.sum(axis=2), booster.predict(rows, pred_contrib=True), rtol=0, atol=1e-14)


def _categorical_model():
    """A binary model on two integer-coded categorical features (12 and 3 categories, missing
    values in the first) and two numbers, with rows holding unseen categories appended."""
    rng = np.random.default_rng(45)
    n = 3000
    city, kind = rng.integers(0, 12, n), rng.integers(0, 3, n)
    X = np.column_stack([city.astype(float), rng.standard_normal(n), kind.astype(float), rng.standard_normal(n)])
    X[rng.random(n) < 0.05, 0] = np.nan
    y = (rng.standard_normal(12)[city] * 2 + X[:, 1] + (kind == 1) + rng.standard_normal(n) > 0).astype(float)
    params = {**_SMALL, "objective": "binary", "num_leaves": 12, "min_data_in_leaf": 3, "min_data_per_group": 5,
              "cat_smooth": 1.0, "max_cat_to_onehot": 2}
    booster = sb.train(params, sb.Dataset(X, y, categorical_feature=[0, 2]), 4)
    rows = np.vstack([X[:30], [[99.0, 0.3, 7.0, -1.0], [np.nan, -0.2, 1.0, 0.5]]])
    return booster, rows


def test_contributions_with_categorical_splits_are_the_shapley_values():
    booster, rows = _categorical_model()
    assert all(tree.categorical_nodes.any() for tree in booster.trees)
    contributions = booster.predict(rows, pred_contrib=True)
    expected = np.zeros((rows.shape[0], 4))
    for tree in booster.trees:
        expected += [_brute_force_shapley(tree, x, 4, booster.bin_mapper) for x in rows]
    np.testing.assert_allclose(contributions[:, :4], expected, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(contributions.sum(axis=1), booster.predict(rows, raw_score=True), rtol=1e-9)
    interactions = booster.predict(rows, pred_interactions=True)
    np.testing.assert_allclose(interactions.sum(axis=2), contributions, rtol=1e-9, atol=1e-12)


def test_leaf_indices_with_categorical_splits_follow_the_decisions():
    booster, rows = _categorical_model()
    leaves = booster.predict(rows, pred_leaf=True)
    for t, tree in enumerate(booster.trees):
        numbers = leaf_numbers(tree)
        for i, x in enumerate(rows):
            node = 0
            while tree.left[node] >= 0:
                node = tree.left[node] if _goes_left(tree, x, node, booster.bin_mapper) else tree.right[node]
            assert leaves[i, t] == numbers[node]
