"""cross_entropy and cross_entropy_lambda (LightGBM's xentropy and xentlambda): trees, start values
and metrics against LightGBM, the weights inside cross_entropy_lambda's loss, and their refusals.

(Metrics of given scores against LightGBM's, model files and labels: tests/test_regression_objectives.py.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import train_beside_lightgbm

import smartboost as sb
from smartboost.errors import DataError, ParameterError
from smartboost.metrics import get_metric
from smartboost.objectives import make_objective
from smartboost.sklearn import SmartBoostRegressor

_BINS = {"max_bin": 63, "min_data_in_bin": 1}
# min_sum_hessian_in_leaf 1: no leaf of a few rows, where float32 gains tie splits LightGBM picks otherwise
_PARAMS = {"num_leaves": 5, "learning_rate": 0.3, "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 1.0,
           "verbose": -1}


def _problem(weighted, n=500, seed=0):
    """Integer features (fewer values than bins: both libraries bin them alike), weights exact in
    float32 (as LightGBM keeps them), and labels in [0, 1], every seventh one rounded to 0 or 1."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 3)).astype(float)
    w = rng.uniform(0.5, 3.0, n).astype(np.float32).astype(np.float64) if weighted else None
    intensity = np.log1p(np.exp(0.2 * X[:, 0] - 0.15 * X[:, 1] - 1.0 + 0.3 * rng.standard_normal(n)))
    y = (1.0 - np.exp(-(1.0 if w is None else w) * intensity)).astype(np.float32).astype(np.float64)
    y[::7] = np.round(y[::7])
    return X, y, w


@pytest.mark.parametrize("objective", ["cross_entropy", "cross_entropy_lambda"])
@pytest.mark.parametrize("weighted", [False, True])
def test_trees_start_and_metric_equal_lightgbm(objective, weighted):
    pytest.importorskip("lightgbm")
    X, y, w = _problem(weighted)
    ours, theirs, history, start = train_beside_lightgbm({**_PARAMS, "objective": objective}, X, y, w, _BINS, 3)
    assert ours.base_score == pytest.approx(start.predict(X[:1], raw_score=True)[0], rel=1e-14)
    # LightGBM keeps gradients in float32: the trees agree to about 1e-8
    np.testing.assert_allclose(ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), rtol=0.0,
                               atol=1e-7)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0.0, atol=1e-7)
    # LightGBM's weighted cross_entropy metric computes in float32 (tests/test_regression_objectives.py)
    tolerance = 1e-6 if weighted and objective == "cross_entropy" else 1e-8
    np.testing.assert_allclose(ours.evals_result["train"][objective], history["train"][objective], rtol=tolerance)


def test_lambda_predicts_the_intensity_and_reads_the_weights():
    X, y, w = _problem(True, seed=1)
    params = {**_PARAMS, "objective": "xentlambda"}
    booster = sb.train(params, sb.Dataset(X, y, weight=w), 4)
    raw = booster.predict(X, raw_score=True)
    np.testing.assert_allclose(booster.predict(X), np.log1p(np.exp(raw)), rtol=1e-14)
    assert booster.base_score == pytest.approx(math.log(math.expm1(np.average(y, weights=w))), rel=1e-14)
    # the weights are in the loss, not factors of it: doubling them is another model (as factors,
    # they would double each leaf's G and H and leave its value -G/H as it was)
    doubled = sb.train({**params, "boost_from_average": False}, sb.Dataset(X, y, weight=2.0 * w), 4)
    plain = sb.train({**params, "boost_from_average": False}, sb.Dataset(X, y, weight=w), 4)
    assert np.abs(doubled.predict(X, raw_score=True) - plain.predict(X, raw_score=True)).max() > 0.01
    # without weights, the trees of cross_entropy: only the start and the prediction differ
    unweighted = sb.train({**params, "boost_from_average": False}, sb.Dataset(X, y), 4)
    xentropy = sb.train({**params, "objective": "cross_entropy", "boost_from_average": False}, sb.Dataset(X, y), 4)
    np.testing.assert_array_equal(unweighted.predict(X, raw_score=True), xentropy.predict(X, raw_score=True))


def test_weighted_lambda_gradients_match_numerical_derivatives():
    rng = np.random.default_rng(2)
    n = 300
    y = np.where(rng.random(n) < 0.2, np.round(rng.random(n)), rng.random(n))
    F = 3.0 * rng.standard_normal(n)
    objective = make_objective("cross_entropy_lambda")
    objective.bind_weight(rng.uniform(0.1, 5.0, n))
    g, h = np.empty(n), np.empty(n)
    objective.grad_hess(y, F, g, h)
    eps = 1e-5
    loss = objective.loss
    np.testing.assert_allclose(g, (loss(y, F + eps) - loss(y, F - eps)) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(h, (loss(y, F + eps) - 2 * loss(y, F) + loss(y, F - eps)) / eps**2, rtol=1e-3,
                               atol=1e-4)
    assert np.all(h > 0)


def test_lambda_metric_is_the_plain_mean_of_the_weighted_loss():
    y = np.array([0.0, 0.3, 1.0, 0.8])
    F = np.array([-1.0, 0.2, 2.0, 0.0])
    w = np.array([0.5, 1.0, 2.0, 4.0])
    p = 1.0 - np.exp(-w * np.log1p(np.exp(F)))
    expected = np.mean(-(1.0 - y) * np.log(1.0 - p) - y * np.log(p))  # divided by the rows, not the weights
    assert get_metric("xentlambda")(y, F, None, w) == pytest.approx(expected, rel=1e-14)
    assert get_metric("cross_entropy_lambda")(y, F, None) == pytest.approx(get_metric("cross_entropy")(y, F, None),
                                                                          rel=1e-14)
    with pytest.raises(DataError, match="weight must be > 0 for metric 'cross_entropy_lambda'; row 1 has 0"):
        get_metric("cross_entropy_lambda")(y, F, None, np.array([1.0, 0.0, 1.0, 1.0]))


def test_lambda_refuses_weights_labels_and_step_rules_it_cannot_take():
    X, y, w = _problem(True, n=100, seed=3)
    w[4] = 0.0
    with pytest.raises(DataError, match="weight must be > 0 for objective 'cross_entropy_lambda'; row 4 has 0"):
        sb.train({"objective": "xentlambda", "verbosity": -1}, sb.Dataset(X, y, weight=w), 1)
    with pytest.raises(DataError, match="every label is 0"):
        sb.train({"objective": "xentlambda", "verbosity": -1}, sb.Dataset(X, np.zeros_like(y)), 1)
    for rule in ("line", "leaf_line"):
        with pytest.raises(ParameterError, match=f"step_rule='{rule}'.*reads every training row's weight"):
            sb.train({"objective": "xentlambda", "step_rule": rule, "verbosity": -1}, sb.Dataset(X, y), 1)
    with pytest.raises(ParameterError, match="smooth"):
        sb.train({"objective": "xentlambda", "step_rule": "smooth", "boosting": "gradient", "verbosity": -1},
                 sb.Dataset(X, y), 1)


def test_lambda_with_a_sampler_and_the_sklearn_regressor():
    X, y, w = _problem(True, n=400, seed=4)
    params = {**_PARAMS, "objective": "cross_entropy_lambda", "sampling": "goss", "sample_rate": 0.5}
    booster = sb.train(params, sb.Dataset(X, y, weight=w), 5)
    assert np.isfinite(booster.predict(X)).all() and booster.num_trees() == 5
    model = SmartBoostRegressor(objective="xentlambda", n_estimators=5, num_leaves=5, learning_rate=0.3,
                                min_child_samples=1, min_child_weight=1.0, verbose=-1).fit(X, y, sample_weight=w)
    native = sb.train({**_PARAMS, "objective": "cross_entropy_lambda"}, sb.Dataset(X, y, weight=w), 5)
    np.testing.assert_array_equal(model.predict(X), native.predict(X))
