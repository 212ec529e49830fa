"""Iteration ranges of predictions (``start_iteration``, ``num_iteration``), against LightGBM where
the trees are the same."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost.errors import ParameterError
from smartboost.sklearn import SmartBoostClassifier, SmartBoostRanker, SmartBoostRegressor

_SMALL = {"num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1}

# integer features with fewer values than bins: both libraries bin them alike and grow the same trees
# (LightGBM keeps gradients in float32: the scores agree to about 1e-7)
_SAME_AS_LIGHTGBM = {"objective": "binary", "num_leaves": 5, "learning_rate": 0.3, "min_data_in_leaf": 1,
                     "min_sum_hessian_in_leaf": 0.0, "max_bin": 63, "verbose": -1}


def _integer_problem(seed=1, n=400):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 3)).astype(float)
    y = (0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.standard_normal(n) > 0.5).astype(float)
    return X, y


def _both(params, rounds):
    """The smartboost and LightGBM models of ``params`` on :func:`_integer_problem`."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _integer_problem()
    ours = sb.train(params, sb.Dataset(X, y, params={"max_bin": 63}), rounds)
    theirs = lgb.train({**params, "num_threads": 1, "deterministic": True},
                       lgb.Dataset(X, y, params={"max_bin": 63, "min_data_in_bin": 1}), rounds)
    return ours, theirs, X


@pytest.fixture(scope="module")
def binary():
    X, y = make_binary(n=800, seed=50, missing_rate=0.05)
    return sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(X, y), 12), X


@pytest.fixture(scope="module")
def multiclass():
    X, y = make_binary(n=900, seed=51)
    classes = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.7]).astype(float)
    return sb.train({**_SMALL, "objective": "multiclass", "num_class": 3}, sb.Dataset(X, classes), 8), X


# -- start_iteration, num_iteration ------------------------------------------------------------


@pytest.mark.parametrize("name", ["binary", "multiclass"])
def test_raw_scores_of_two_iteration_ranges_add_up_to_the_model(request, name):
    """The base score belongs to the first iteration (LightGBM's first tree holds it)."""
    booster, X = request.getfixturevalue(name)
    full = booster.predict(X, raw_score=True)
    for k in (1, 5, booster.current_iteration()):
        head = booster.predict(X, raw_score=True, num_iteration=k)
        tail = booster.predict(X, raw_score=True, start_iteration=k)
        np.testing.assert_allclose(head + tail, full, rtol=1e-12, atol=1e-12)
    middle = booster.predict(X, raw_score=True, start_iteration=3, num_iteration=2)
    np.testing.assert_allclose(booster.predict(X, raw_score=True, num_iteration=5)
                               - booster.predict(X, raw_score=True, num_iteration=3), middle, atol=1e-12)
    # past the last iteration: cut there, as LightGBM does
    np.testing.assert_array_equal(booster.predict(X, raw_score=True, start_iteration=3, num_iteration=1000),
                                  booster.predict(X, raw_score=True, start_iteration=3))
    np.testing.assert_array_equal(booster.predict(X, raw_score=True, start_iteration=booster.current_iteration()),
                                  np.zeros_like(full))
    # the transformed predictions are those of the range's raw scores
    np.testing.assert_allclose(booster.predict(X, start_iteration=3, num_iteration=2),
                               booster.objective.transform(middle.T).T, rtol=1e-12)


@pytest.mark.parametrize("name", ["binary", "multiclass"])
def test_leaves_and_contributions_of_an_iteration_range(request, name):
    booster, X = request.getfixturevalue(name)
    K, width = booster.num_model_per_iteration(), X.shape[1] + 1
    leaves = booster.predict(X, pred_leaf=True)
    part = booster.predict(X, pred_leaf=True, start_iteration=2, num_iteration=3)
    np.testing.assert_array_equal(part, leaves[:, 2 * K:5 * K])
    raw = booster.predict(X, raw_score=True, start_iteration=2, num_iteration=3).reshape(X.shape[0], K)
    contributions = booster.predict(X, pred_contrib=True, start_iteration=2, num_iteration=3)
    np.testing.assert_allclose(contributions.reshape(X.shape[0], K, width).sum(axis=2), raw, rtol=1e-9, atol=1e-12)
    # SHAP values and expected values add up over consecutive ranges
    head = booster.predict(X, pred_contrib=True, num_iteration=2)
    tail = booster.predict(X, pred_contrib=True, start_iteration=2)
    np.testing.assert_allclose(head + tail, booster.predict(X, pred_contrib=True), rtol=1e-9, atol=1e-12)
    interactions = booster.predict(X[:50], pred_interactions=True, start_iteration=2, num_iteration=3)
    np.testing.assert_allclose(interactions.reshape(50, K, width, width).sum(axis=(2, 3)), raw[:50], rtol=1e-9,
                               atol=1e-12)


def test_iteration_ranges_equal_lightgbm():
    ours, theirs, X = _both(_SAME_AS_LIGHTGBM, 8)
    for start, num in [(0, None), (0, 3), (3, None), (3, 2), (7, 10), (8, None), (2, -1)]:
        kwargs = {"start_iteration": start, "num_iteration": num}
        np.testing.assert_allclose(ours.predict(X, raw_score=True, **kwargs),
                                   theirs.predict(X, raw_score=True, **kwargs), rtol=0, atol=2e-7)
        np.testing.assert_allclose(ours.predict(X, **kwargs), theirs.predict(X, **kwargs), rtol=0, atol=2e-7)
        np.testing.assert_array_equal(ours.predict(X, pred_leaf=True, **kwargs),
                                      theirs.predict(X, pred_leaf=True, **kwargs))
        np.testing.assert_allclose(ours.predict(X, pred_contrib=True, **kwargs),
                                   theirs.predict(X, pred_contrib=True, **kwargs), rtol=0, atol=2e-7)


def test_num_iteration_none_is_the_best_iteration_from_the_first_iteration_only():
    """LightGBM's rule: from a later start, None predicts to the last iteration."""
    X, y = make_binary(n=1200, seed=52)
    train = sb.Dataset(X[:800], y[:800])
    valid = sb.Dataset(X[800:], y[800:], reference=train)
    booster = sb.train({**_SMALL, "objective": "binary", "learning_rate": 0.5}, train, 200, valid_sets=[valid],
                       callbacks=[sb.early_stopping(3, verbose=False)])
    best = booster.best_iteration
    assert 0 < best < booster.current_iteration()
    np.testing.assert_array_equal(booster.predict(X, raw_score=True),
                                  booster.predict(X, raw_score=True, num_iteration=best))
    np.testing.assert_array_equal(booster.predict(X, raw_score=True, start_iteration=1),
                                  booster.predict(X, raw_score=True, start_iteration=1, num_iteration=0))


@pytest.mark.parametrize("kwargs, match", [
    ({"start_iteration": -1}, r"start_iteration must be in \[0, 12\]"),
    ({"start_iteration": 13}, r"start_iteration must be in \[0, 12\]"),
    ({"start_iteration": 1.5}, "start_iteration must be an integer"),
    ({"start_iteration": None}, "start_iteration must be an integer"),
    ({"start_iteration": True}, "start_iteration must be an integer"),
    ({"start_iteration": 2, "num_iteration": float("nan")}, "num_iteration must be an integer"),
])
def test_iteration_range_out_of_the_model_is_a_parameter_error(binary, kwargs, match):
    booster, X = binary
    for output in ({}, {"pred_leaf": True}, {"pred_contrib": True}):
        with pytest.raises(ParameterError, match=match):
            booster.predict(X, **kwargs, **output)
    np.testing.assert_array_equal(booster.predict(X, start_iteration=2.0), booster.predict(X, start_iteration=2))


def test_sklearn_estimators_take_lightgbm_prediction_arguments():
    lgb = pytest.importorskip("lightgbm")
    X, y = _integer_problem()
    params = {"n_estimators": 6, "num_leaves": 5, "learning_rate": 0.3, "min_child_samples": 1,
              "min_child_weight": 0.0, "max_bin": 63, "verbose": -1}
    ours = SmartBoostClassifier(**params).fit(X, y)
    theirs = lgb.LGBMClassifier(**params, min_data_in_bin=1, deterministic=True, n_jobs=1).fit(X, y)
    for kwargs in ({}, {"start_iteration": 2}, {"num_iteration": 3}, {"raw_score": True, "start_iteration": 1},
                   {"pred_leaf": True, "start_iteration": 4}, {"pred_contrib": True, "num_iteration": 2}):
        for method in ("predict", "predict_proba"):
            mine, lights = getattr(ours, method)(X, **kwargs), getattr(theirs, method)(X, **kwargs)
            assert mine.shape == lights.shape, (method, kwargs)
            np.testing.assert_allclose(mine, lights, rtol=0, atol=2e-7, err_msg=f"{method} {kwargs}")
    booster = ours.booster_
    Xr, target = X, X[:, 0] + X[:, 1]
    regressor = SmartBoostRegressor(n_estimators=5, verbose=-1).fit(Xr, target)
    np.testing.assert_array_equal(regressor.predict(Xr, start_iteration=2, num_iteration=2),
                                  regressor.booster_.predict(Xr, start_iteration=2, num_iteration=2))
    np.testing.assert_array_equal(ours.predict(X, raw_score=True, start_iteration=3),
                                  booster.predict(X, raw_score=True, start_iteration=3))
    ranker = SmartBoostRanker(n_estimators=4, verbose=-1).fit(X, np.round(y), group=[40] * 10)
    np.testing.assert_array_equal(ranker.predict(X, start_iteration=1),
                                  ranker.booster_.predict(X, raw_score=True, start_iteration=1))
    with pytest.raises(ParameterError, match="start_iteration"):
        ours.predict_proba(X, start_iteration=7)
    with pytest.raises(ParameterError, match="raw_score"):
        ranker.predict(X, raw_score="yes")
