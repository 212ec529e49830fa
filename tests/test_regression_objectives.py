"""Poisson, gamma, Tweedie, quantile, L1, MAPE, Fair and cross-entropy: start values, leaf refits,
quantile coverage, LightGBM's metrics, every sampler, labels, parameters and model files.

(Gradients and hessians against finite differences: tests/test_objectives_metrics.py, which
runs over every registered objective.)
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

import smartboost as sb
from smartboost._params import resolve_params
from smartboost.errors import DataError, ParameterError
from smartboost.explain import leaf_numbers
from smartboost.metrics import get_metric
from smartboost.objectives import make_objective
from smartboost.objectives.quantile import weighted_quantile
from smartboost.sampling import SAMPLERS

NEW = ["poisson", "gamma", "tweedie", "quantile", "regression_l1", "mape", "fair", "cross_entropy"]
_IDENTITY_LINK = {"quantile", "regression_l1", "mape", "fair"}


def _problem(name, n=2000, seed=0):
    """Features and labels of the objective's kind (counts, positive amounts, compound, ...)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    mu = np.exp(0.6 * X[:, 0] - 0.4 * X[:, 1] ** 2)
    label = {"poisson": lambda: rng.poisson(mu).astype(float),
             "gamma": lambda: rng.gamma(2.0, mu / 2.0),
             "tweedie": lambda: rng.poisson(mu) * rng.gamma(2.0, 1.0, n),
             "cross_entropy": lambda: 1.0 / (1.0 + np.exp(-X[:, 0] + 0.3 * rng.standard_normal(n))),
             "cross_entropy_lambda": lambda: -np.expm1(-np.log1p(np.exp(X[:, 0] + 0.3 * rng.standard_normal(n))))}.get(
        name, lambda: 10.0 * mu + X[:, 2] + rng.standard_normal(n))()
    return X, label


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("weighted", [False, True])
def test_the_start_value_minimises_the_weighted_loss(name, weighted):
    objective = make_objective(name, {"alpha": 0.3, "tweedie_variance_power": 1.3, "fair_c": 0.5})
    _, y = _problem(name, n=999, seed=1)
    w = np.random.default_rng(2).uniform(0.2, 3.0, y.size) if weighted else None

    def total(c):
        return float(np.dot(np.ones_like(y) if w is None else w, objective.loss(y, np.full_like(y, c))))

    start = objective.init_score(y, w)
    lo, hi = (np.min(y), np.max(y)) if name in _IDENTITY_LINK else (-5.0, 5.0)
    best = minimize_scalar(total, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}).x
    assert total(start) <= total(best) + 1e-10 * abs(total(best))
    if objective.hessian_exact:  # smooth and strictly convex: the minimiser itself
        assert start == pytest.approx(best, abs=1e-6)


@pytest.mark.parametrize("name, level", [("quantile", 0.3), ("regression_l1", 0.5), ("mape", 0.5)])
def test_leaves_are_refitted_to_the_weighted_quantile_of_their_residuals(name, level):
    X, y = _problem(name, n=3000, seed=3)
    w = np.random.default_rng(4).uniform(0.5, 2.0, y.size)
    booster = sb.train({"objective": name, "alpha": 0.3, "num_leaves": 6, "min_data_in_leaf": 30,
                        "learning_rate": 0.5, "verbosity": -1}, sb.Dataset(X, y, weight=w), 1)
    tree = booster.trees[0]
    leaf_of_row = booster.predict(X, pred_leaf=True)[:, 0]
    residual = y - booster.base_score
    scale = np.maximum(1.0, np.abs(y)) if name == "mape" else np.ones_like(y)
    objective = booster.objective
    numbers = leaf_numbers(tree)
    for node in np.flatnonzero(tree.left < 0):
        rows = leaf_of_row == numbers[node]
        value = tree.value[node] / 0.5
        assert value == weighted_quantile(residual[rows], w[rows] / scale[rows], level)
        leaf_loss = [float(np.dot(w[rows], objective.loss(y[rows], booster.base_score + c)))
                     for c in (value - 1e-3, value, value + 1e-3)]
        assert leaf_loss[1] <= min(leaf_loss[0], leaf_loss[2])


def test_weighted_quantile_follows_its_definition():
    values = np.array([3.0, 1.0, 2.0, 4.0])
    assert weighted_quantile(values, np.ones(4), 0.5) == 2.5  # an even count: the midpoint
    assert weighted_quantile(values, np.ones(4), 0.3) == 2.0
    assert weighted_quantile(values, np.array([1.0, 0.0, 0.0, 1.0]), 0.5) == 3.5  # zero weights skipped
    assert weighted_quantile(values, np.array([0.0, 5.0, 1.0, 1.0]), 0.5) == 1.0
    assert weighted_quantile(values, np.zeros(4), 0.5) == 0.0


@pytest.mark.parametrize("alpha", [0.1, 0.25, 0.5, 0.75, 0.9, 0.37, 0.999])
def test_unit_weights_select_the_value_the_sorted_scan_stops_at(alpha):
    # unit weights take a selection path; weights of 2 (the same quantile, exact sums) the sorted scan.
    # Sizes past the selection's sorted base case, in orders and with ties that stress its pivots.
    rng = np.random.default_rng(7)
    for n in [*range(1, 60), 61, 64, 200, 1001, 4096]:
        normal = rng.normal(size=n)
        for values in (rng.integers(0, 4, n).astype(float), normal, np.sort(normal), np.sort(normal)[::-1].copy(),
                       np.full(n, 1.5), np.repeat(rng.normal(size=n // 7 + 1), 7)[:n].copy()):
            given = values.copy()
            assert weighted_quantile(values, np.ones(n), alpha) == weighted_quantile(values, np.full(n, 2.0), alpha)
            np.testing.assert_array_equal(values, given)


def _heteroscedastic(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 5))
    return X, 2 * X[:, 0] + np.sin(2 * X[:, 1]) + (0.3 + np.abs(X[:, 2])) * rng.standard_normal(n)


@pytest.mark.parametrize("alpha", [0.1, 0.9])
def test_quantile_models_cover_alpha_of_new_data(alpha):
    X, y = _heteroscedastic(50_000, 5)
    X_test, y_test = _heteroscedastic(50_000, 6)
    booster = sb.train({"objective": "quantile", "alpha": alpha, "num_leaves": 7, "min_data_in_leaf": 200,
                        "verbosity": -1}, sb.Dataset(X, y), 100)
    assert abs(np.mean(y_test <= booster.predict(X_test)) - alpha) < 0.01


_LIGHTGBM_CASES = [  # metric, LightGBM objective (its link), parameters
    ("poisson", "poisson", {}), ("gamma", "gamma", {}), ("gamma_deviance", "gamma", {}),
    ("tweedie", "tweedie", {"tweedie_variance_power": 1.3}), ("quantile", "quantile", {"alpha": 0.25}),
    ("mae", "regression_l1", {}), ("mape", "mape", {}), ("fair", "fair", {"fair_c": 0.5}),
    ("cross_entropy", "cross_entropy", {}), ("cross_entropy_lambda", "cross_entropy_lambda", {})]


@pytest.mark.parametrize("metric, objective, extra", _LIGHTGBM_CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_equal_lightgbm(metric, objective, extra, weighted):
    lgb = pytest.importorskip("lightgbm")
    X, y = _problem(objective, n=2000, seed=7)
    rng = np.random.default_rng(8)
    # LightGBM keeps labels, weights and init scores in float32: give it values that are exact there
    exact = lambda a: a.astype(np.float32).astype(np.float64)  # noqa: E731
    raw, y = exact(0.7 * rng.standard_normal(y.size) + (0.0 if objective != "mape" else 10.0)), exact(y)
    w = exact(rng.uniform(0.5, 2.0, y.size)) if weighted else None
    data = lgb.Dataset(X, y, weight=w, init_score=raw, free_raw_data=False)
    model = lgb.Booster({"objective": objective, "metric": metric, "verbose": -1, **extra}, data)
    model.add_valid(lgb.Dataset(X, y, weight=w, init_score=raw, reference=data), "valid")
    theirs = model.eval_valid()[0][2]  # no tree yet: the metric of the init scores
    ours_objective = make_objective(objective, extra)
    ours = get_metric(metric, **extra)(y, ours_objective.metric_score(raw), ours_objective.transform(raw), w)
    # LightGBM's gamma takes the log of the label in float32, its weighted cross-entropy differs
    # by 7e-7 (float32 arithmetic in the metric), and its cross_entropy_lambda by 1e-10 (it takes
    # log(1 + e^F) and 1 - e^(-w lambda) as written, where log1p and expm1 keep those bits); the
    # others agree to the last bits
    tolerance = {"gamma": 1e-8, "cross_entropy": 1e-6 if weighted else 1e-9, "cross_entropy_lambda": 1e-9}.get(
        metric, 1e-13)
    assert ours == pytest.approx(theirs, rel=tolerance)


@pytest.mark.parametrize("name", NEW)
def test_every_sampler_trains_them(name):
    X, y = _problem(name, n=600, seed=9)
    for sampler in SAMPLERS:
        params = {"objective": name, "num_leaves": 5, "min_data_in_leaf": 5, "sampling": sampler, "verbosity": -1}
        if sampler not in ("none", "auto"):
            params["sample_rate"] = 0.5 if sampler != "trimming" else 0.6
        booster = sb.train(params, sb.Dataset(X, y), 4)
        assert booster.num_trees() == 4 and np.isfinite(booster.predict(X)).all(), sampler


@pytest.mark.parametrize("name, params", [
    ("poisson", {"poisson_max_delta_step": 0.3}), ("tweedie", {"tweedie_variance_power": 1.2}),
    ("quantile", {"quantile_alpha": 0.2}), ("gamma", {}), ("regression_l1", {}), ("mape", {}),
    ("fair", {"fair_c": 0.4}), ("cross_entropy", {}), ("cross_entropy_lambda", {})])
def test_models_save_and_load(tmp_path, name, params):
    X, y = _problem(name, n=1000, seed=10)
    booster = sb.train({"objective": name, "num_leaves": 7, "verbosity": -1, **params}, sb.Dataset(X, y), 10,
                       valid_sets=[sb.Dataset(X, y)])
    booster.save_model(tmp_path / "model.json")
    loaded = sb.Booster(model_file=tmp_path / "model.json")
    assert loaded.objective.to_dict() == booster.objective.to_dict()
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert loaded.model_to_string() == booster.model_to_string()
    resumed = sb.train({"objective": name, "num_leaves": 7, "verbosity": -1, **params},
                       sb.Dataset(X, y, reference=loaded), 2, init_model=loaded)
    assert resumed.num_trees() == 12


def test_fair_trees_equal_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(16)
    X = rng.standard_normal((2000, 4))
    y = 2.0 * X[:, 0] + rng.standard_t(2, 2000)  # heavy tails: the loss's linear part matters
    params = {"objective": "fair", "fair_c": 0.5, "num_leaves": 7, "min_data_in_leaf": 20, "learning_rate": 0.3,
              "boost_from_average": False, "verbosity": -1}
    ours = sb.train(params, sb.Dataset(X, y), 3).predict(X)
    theirs = lgb.train(params, lgb.Dataset(X, y), 3).predict(X)
    # same splits and leaf values, up to LightGBM's float32 gradients
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    with pytest.raises(ParameterError, match="fair_c"):
        sb.train({"objective": "fair", "fair_c": 0.0, "verbosity": -1}, sb.Dataset(X, y), 1)


def test_new_parameters_are_recorded_only_when_set():
    X, y = _problem("regression", n=500, seed=11)
    plain = json.loads(sb.train({"verbosity": -1}, sb.Dataset(X, y), 2).model_to_string())["params"]
    assert not {"alpha", "tweedie_variance_power", "poisson_max_delta_step"} & set(plain)
    quantile = json.loads(sb.train({"objective": "quantile", "alpha": 0.2, "verbosity": -1}, sb.Dataset(X, y),
                                   2).model_to_string())
    assert quantile["params"]["alpha"] == 0.2 and quantile["objective"] == {"name": "quantile", "alpha": 0.2}


def test_alpha_is_shared_by_huber_and_quantile():
    assert resolve_params({"alpha": 0.3})["huber_delta"] == 0.3  # LightGBM's name for the Huber delta
    assert resolve_params({"alpha": 0.3, "huber_delta": 2.0})["huber_delta"] == 2.0  # the explicit one wins
    assert resolve_params({"quantile_alpha": 0.2})["alpha"] == 0.2
    assert resolve_params(None)["alpha"] == 0.9 and resolve_params(None)["huber_delta"] == 1.0
    X, y = _problem("regression", n=500, seed=12)
    huber = sb.train({"objective": "huber", "alpha": 0.4, "verbosity": -1}, sb.Dataset(X, y), 1)
    assert huber.objective.huber_delta == 0.4
    with pytest.raises(ParameterError, match=r"alpha in \(0, 1\)"):
        sb.train({"objective": "quantile", "alpha": 1.5, "verbosity": -1}, sb.Dataset(X, y), 1)
    with pytest.raises(ParameterError, match="tweedie_variance_power"):
        resolve_params({"tweedie_variance_power": 2.0})


@pytest.mark.parametrize("name, bad, match", [
    ("poisson", -1.0, "must be >= 0 for objective 'poisson'; row 3 has -1"),
    ("tweedie", -0.5, "must be >= 0 for objective 'tweedie'; row 3 has -0.5"),
    ("gamma", 0.0, "must be > 0 for objective 'gamma'; row 3 has 0"),
    ("cross_entropy", 1.5, r"must be in \[0, 1\] for objective 'cross_entropy'; row 3 has 1.5"),
    ("cross_entropy_lambda", -0.1, r"must be in \[0, 1\] for objective 'cross_entropy_lambda'; row 3 has -0.1"),
])
def test_labels_outside_the_domain_name_the_row(name, bad, match):
    X, y = _problem(name, n=100, seed=13)
    y[3] = bad
    with pytest.raises(DataError, match=match):
        sb.train({"objective": name, "verbosity": -1}, sb.Dataset(X, y), 1)
    good_X, good_y = _problem(name, n=100, seed=14)
    train_set = sb.Dataset(good_X, good_y)
    with pytest.raises(DataError, match="valid set 'valid_0'.*row 3"):
        sb.train({"objective": name, "verbosity": -1}, train_set, 1, valid_sets=[sb.Dataset(X, y, reference=train_set)])
    with pytest.raises(DataError, match="positive"):
        make_objective("poisson").init_score(np.zeros(5), None)


@pytest.mark.parametrize("alias, name", [("count:poisson", "poisson"), ("reg:gamma", "gamma"),
                                         ("reg:tweedie", "tweedie"), ("reg:quantileerror", "quantile"),
                                         ("reg:absoluteerror", "regression_l1"), ("mae", "regression_l1"),
                                         ("mean_absolute_error", "regression_l1"), ("xentropy", "cross_entropy"),
                                         ("xentlambda", "cross_entropy_lambda"),
                                         ("mean_absolute_percentage_error", "mape")])
def test_xgboost_and_lightgbm_names(alias, name):
    assert resolve_params({"objective": alias})["objective"] == name


def test_parametric_metrics_take_the_training_parameters():
    X, y = _problem("quantile", n=800, seed=15)
    booster = sb.train({"objective": "regression", "metric": ["quantile", "tweedie", "fair"], "alpha": 0.2,
                        "tweedie_variance_power": 1.7, "fair_c": 0.3, "verbosity": -1}, sb.Dataset(X, y), 3,
                       valid_sets=[sb.Dataset(X, y)])
    raw = booster.predict(X, raw_score=True)
    history = booster.evals_result["valid_0"]
    assert history["quantile"][-1] == get_metric("quantile", alpha=0.2)(y, raw, raw)
    assert history["tweedie"][-1] == get_metric("tweedie", tweedie_variance_power=1.7)(y, raw, raw)
    assert history["fair"][-1] == get_metric("fair", fair_c=0.3)(y, raw, raw) != get_metric("fair")(y, raw, raw)
    assert get_metric("tweedie", tweedie_variance_power=1.0)(y, raw, raw) == get_metric("poisson")(y, raw, raw)


def test_insurance_like_claims_are_fitted_by_their_objectives():
    from sklearn.metrics import mean_gamma_deviance, mean_poisson_deviance, mean_tweedie_deviance

    from smartboost.datasets import make_insurance_like

    X, exposure, count, amount = make_insurance_like(60_000, seed=1)
    again = make_insurance_like(60_000, seed=1)
    assert all(np.array_equal(a, b) for a, b in zip((X, exposure, count, amount), again))
    assert 0.05 <= exposure.min() and exposure.max() <= 1.0 and np.all(amount[count == 0] == 0)
    assert np.all(amount[count > 0] > 0) and 0.03 < np.mean(count > 0) < 0.1
    train, test = np.arange(60_000) < 40_000, np.arange(60_000) >= 40_000
    claims = count > 0
    cases = [("poisson", count / exposure, exposure, np.ones(60_000, bool), mean_poisson_deviance),
             ("gamma", np.divide(amount, count, out=np.zeros_like(amount), where=claims), count, claims,
              mean_gamma_deviance),
             ("tweedie", amount / exposure, exposure, np.ones(60_000, bool),
              lambda y, mu, sample_weight: mean_tweedie_deviance(y, mu, sample_weight=sample_weight, power=1.5))]
    for objective, y, w, rows, deviance in cases:
        fit, held_out = rows & train, rows & test
        booster = sb.train({"objective": objective, "num_leaves": 4, "min_data_in_leaf": 300, "verbosity": -1},
                           sb.Dataset(X[fit], y[fit], weight=w[fit]), 50)
        model = deviance(y[held_out], booster.predict(X[held_out]), sample_weight=w[held_out])
        constant = deviance(y[held_out], np.full(held_out.sum(), np.average(y[fit], weights=w[fit])),
                            sample_weight=w[held_out])
        assert model < constant, objective
