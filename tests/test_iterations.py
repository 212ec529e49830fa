"""Iteration ranges of predictions (``start_iteration``, ``num_iteration``) and parameters changed
between iterations (``reset_parameter``), against LightGBM where the trees are the same."""

from __future__ import annotations

import json

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


def _both(params, rounds, callbacks=lambda lib: []):
    """The smartboost and LightGBM models of ``params`` on :func:`_integer_problem`."""
    lgb = pytest.importorskip("lightgbm")
    X, y = _integer_problem()
    ours = sb.train(params, sb.Dataset(X, y, params={"max_bin": 63}), rounds, callbacks=callbacks(sb))
    theirs = lgb.train({**params, "num_threads": 1, "deterministic": True},
                       lgb.Dataset(X, y, params={"max_bin": 63, "min_data_in_bin": 1}), rounds,
                       callbacks=callbacks(lgb))
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


# -- reset_parameter ----------------------------------------------------------------------------


def test_learning_rate_schedule_equals_lightgbm():
    rates = [0.3, 0.2, 0.1, 0.05, 0.5, 0.25]

    def callbacks(lib):
        return [lib.reset_parameter(learning_rate=rates, lambda_l2=lambda i: 0.5 * i,
                                    min_gain_to_split=lambda i: 0.0 if i < 3 else 0.01)]

    ours, theirs, X = _both(_SAME_AS_LIGHTGBM, 6, callbacks)
    np.testing.assert_allclose(ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), rtol=0, atol=2e-7)
    for k in range(6):  # tree by tree: each took its iteration's values
        np.testing.assert_allclose(ours.predict(X, raw_score=True, start_iteration=k, num_iteration=1),
                                   theirs.predict(X, raw_score=True, start_iteration=k, num_iteration=1), atol=2e-7)
    plain = _both(_SAME_AS_LIGHTGBM, 6)[0]
    assert np.abs(ours.predict(X, raw_score=True) - plain.predict(X, raw_score=True)).max() > 0.1
    # the model records the last values (LightGBM saves the final parameters)
    saved = json.loads(ours.model_to_string())["params"]
    assert (saved["learning_rate"], saved["lambda_l2"], saved["min_gain_to_split"]) == (0.25, 2.5, 0.01)


def test_reset_parameter_is_deterministic_and_takes_aliases():
    X, y = make_binary(n=1000, seed=53)
    params = {**_SMALL, "objective": "binary", "sampling": "goss", "sample_rate": 0.5}

    def model(threads, **schedule):
        saved = json.loads(sb.train({**params, "num_threads": threads}, sb.Dataset(X, y), 8,
                                    callbacks=[sb.reset_parameter(**schedule)]).model_to_string())
        del saved["params"]["num_threads"]
        return saved

    decay = {"eta": lambda i: 0.2 * 0.8 ** i, "reg_alpha": [0.0, 0.5] * 4}
    assert model(1, **decay) == model(2, **decay) == model(2, **decay)
    same = {"learning_rate": [0.1] * 8}  # the default: the same model as without the callback
    plain = json.loads(sb.train({**params, "num_threads": 1}, sb.Dataset(X, y), 8).model_to_string())
    del plain["params"]["num_threads"]
    assert model(1, **same) == plain
    assert model(1, **decay)["trees"] != plain["trees"]


def test_reset_parameter_in_cv_changes_every_fold():
    X, y = make_binary(n=900, seed=54)
    params = {**_SMALL, "objective": "binary"}
    slow = sb.cv(params, sb.Dataset(X, y), 5, nfold=3, return_cvbooster=True,
                 callbacks=[sb.reset_parameter(learning_rate=[0.01] * 5)])
    plain = sb.cv({**params, "learning_rate": 0.01}, sb.Dataset(X, y), 5, nfold=3, return_cvbooster=True)
    assert slow["valid logloss-mean"] == plain["valid logloss-mean"]
    for a, b in zip(slow["cvbooster"].boosters, plain["cvbooster"].boosters):
        np.testing.assert_array_equal(a.predict(X), b.predict(X))


class _ChangesNumLeaves(sb.TrainingCallback):
    def before_iteration(self, env):
        env.params["num_leaves"] = 4


@pytest.mark.parametrize("callback, match", [
    (lambda: sb.reset_parameter(num_leaves=[4] * 3), "'num_leaves' cannot change during training"),
    (lambda: sb.reset_parameter(feature_fraction=[0.5] * 3), "'feature_fraction' cannot change"),
    (lambda: sb.reset_parameter(learning_rat=[0.1] * 3), "unknown parameter 'learning_rat'"),
    (lambda: sb.reset_parameter(learning_rate=0.1), "'learning_rate' must be a list"),
    (lambda: sb.reset_parameter(learning_rate=[0.1] * 2), "'learning_rate' has 2 values for the 3 iterations"),
    (lambda: sb.reset_parameter(learning_rate=[0.1] * 4), "'learning_rate' has 4 values for the 3 iterations"),
    (lambda: sb.reset_parameter(learning_rate=lambda i: [0.1, -0.1, 0.1][i]), "'learning_rate' must be a finite"),
    (lambda: sb.reset_parameter(lambda_l2=lambda i: "x"), "'lambda_l2' must be a number"),
    (lambda: _ChangesNumLeaves(), "'num_leaves' cannot change during training"),
])
def test_reset_parameter_refusals(callback, match):
    X, y = make_binary(n=300, seed=55)
    with pytest.raises(ParameterError, match=match):
        sb.train({**_SMALL, "objective": "binary"}, sb.Dataset(X, y), 3, callbacks=[callback()])


def test_reset_parameter_checks_the_values_with_the_other_parameters():
    X, y = make_binary(n=300, seed=56)
    params = {**_SMALL, "objective": "binary", "boosting": "gradient", "weak_learner": "sign"}
    with pytest.raises(ParameterError, match="lambda_l1 must be 0"):
        sb.train(params, sb.Dataset(X, y), 3, callbacks=[sb.reset_parameter(lambda_l1=[0.0, 1.0, 0.0])])
