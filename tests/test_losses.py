"""The loss family beyond squared/logistic: margin losses, Huber; labels, links, options, files."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from conftest import make_binary, make_regression
from sklearn.metrics import roc_auc_score

import smartboost as sb
from smartboost.errors import ParameterError
from smartboost.metrics import get_metric
from smartboost.objectives import make_objective

MARGIN = ["exponential", "smart_logistic", "logistic_log2", "squared_margin", "regularized_logistic"]


@pytest.mark.parametrize("name", MARGIN)
def test_margin_losses_learn_and_accept_plus_minus_one_labels(name):
    X, y = make_binary(n=3000, seed=11)
    params = {"objective": name, "num_leaves": 7, "verbosity": -1}
    zero_one = sb.train(params, sb.Dataset(X[:2000], y[:2000]), 30)
    plus_minus = sb.train(params, sb.Dataset(X[:2000], 2 * y[:2000] - 1), 30)
    assert zero_one.model_to_string() == plus_minus.model_to_string()
    p = zero_one.predict(X[2000:])
    assert np.all((p >= 0) & (p <= 1))
    assert roc_auc_score(y[2000:], p) > 0.8


def test_squared_margin_auc_during_training_ranks_the_raw_scores():
    # its metric score clips the probability (F + 1) / 2 at F = +-1, and auc read it: scores all
    # above 1 (here from init_score 3) were one tie, an auc of 0.5 whatever the trees
    X, y = make_binary(n=1000, seed=11)
    start = np.full(y.size, 3.0)
    booster = sb.train({"objective": "squared_margin", "num_leaves": 7, "learning_rate": 0.1, "verbosity": -1,
                        "metric": ["auc", "logloss", "error"]}, sb.Dataset(X, y, init_score=start), 3,
                       valid_sets=[sb.Dataset(X, y, init_score=start)], valid_names=["train"])
    raw = start + booster.predict(X, raw_score=True)
    assert raw.min() > 1.0  # every score beyond the clip
    history = booster.evals_result["train"]
    assert history["auc"][-1] == pytest.approx(roc_auc_score(y, raw), rel=1e-12) and history["auc"][-1] > 0.8
    # the other metrics still read the log-odds of the clipped probability
    assert history["logloss"][-1] == get_metric("logloss")(y, booster.objective.metric_score(raw), None)
    assert history["error"][-1] == pytest.approx(np.mean(y == 0))


def test_smart_logistic_is_the_logistic_loss_of_twice_the_score():
    y = np.array([0.0, 1.0, 1.0, 0.0])
    F = np.array([-2.0, -0.5, 0.3, 4.0])
    smart, logistic = make_objective("smart_logistic"), make_objective("binary")
    np.testing.assert_allclose(smart.loss(y, F), logistic.loss(y, 2 * F))
    np.testing.assert_allclose(smart.transform(F), logistic.transform(2 * F))


def test_regularized_logistic_adds_mu_f_to_the_logistic_gradient():
    rng = np.random.default_rng(0)
    y = (rng.random(500) < 0.3).astype(float)
    F = rng.standard_normal(500) * 3
    g0, h0, g, h = (np.empty(500) for _ in range(4))
    make_objective("binary").grad_hess(y, F, g0, h0)
    make_objective("regularized_logistic", {"logistic_mu": 0.5}).grad_hess(y, F, g, h)
    np.testing.assert_allclose(g, g0 + 0.5 * F, atol=1e-12)
    np.testing.assert_allclose(h, h0 + 0.5, atol=1e-12)


_DIFFERENTIABLE = [*MARGIN, "sigmoid_margin", "gaussian_margin"]


@pytest.mark.parametrize("name, options", [(n, {}) for n in _DIFFERENTIABLE]
                         + [("gaussian_margin", {"gaussian_c": 0.3, "gaussian_s": -0.8}),
                            ("regularized_logistic", {"logistic_mu": 0.2})])
def test_margin_gradients_and_hessians_are_the_loss_derivatives(name, options):
    """Central differences of loss() against grad_hess() (and of the gradient against the hessian)."""
    rng = np.random.default_rng(1)
    y = (rng.random(400) < 0.5).astype(float)
    F = rng.standard_normal(400) * 2.0
    objective = make_objective(name, options)
    g, h, g_up, g_down, _ = (np.empty(400) for _ in range(5))
    objective.grad_hess(y, F, g, h)
    step = 1e-5
    numeric_g = (objective.loss(y, F + step) - objective.loss(y, F - step)) / (2 * step)
    np.testing.assert_allclose(g, numeric_g, rtol=1e-6, atol=1e-8)
    objective.grad_hess(y, F + step, g_up, _)
    objective.grad_hess(y, F - step, g_down, _)
    np.testing.assert_allclose(h, (g_up - g_down) / (2 * step), rtol=1e-5, atol=1e-7)


def test_gaussian_margin_loss_peaks_at_minus_half_s_and_gives_up_beyond():
    objective = make_objective("gaussian_margin", {"gaussian_c": 2.0, "gaussian_s": 1.0})
    margin = np.linspace(-3, 3, 601)
    loss = objective.phi(margin)
    assert margin[np.argmax(loss)] == pytest.approx(-0.5)
    g, h = np.empty(601), np.empty(601)
    objective.grad_hess(np.ones(601), margin, g, h)  # y = 1: F is the margin
    assert (g[margin > -0.5] < 0).all() and (g[margin < -0.5] > 0).all()  # below the peak: pushed down
    assert objective.sigma_smooth == pytest.approx(np.abs(h).max(), rel=1e-3)
    with pytest.raises(ParameterError, match="boosting='gradient'"):
        sb.train({"objective": "gaussian_margin", "verbosity": -1}, sb.Dataset(*make_binary(n=200, seed=3)), 1)


def test_objective_options_are_saved_with_the_model(tmp_path):
    X, y = make_binary(n=1000, seed=12)
    booster = sb.train({"objective": "regularized_logistic", "mu": 0.25, "verbosity": -1}, sb.Dataset(X, y), 5)
    assert booster.objective.sigma_smooth == 0.5
    booster.save_model(tmp_path / "m.json")
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    assert loaded.objective.logistic_mu == 0.25
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    with pytest.raises(ParameterError, match="huber_delta"):
        sb.train({"objective": "huber", "huber_delta": 0.0, "verbosity": -1}, sb.Dataset(X, y), 1)


def test_binary_sigmoid_is_kept_by_the_model_and_read_by_logloss(tmp_path):
    # sigmoid was ignored by 'binary'; now the log-odds are sigmoid * F in predictions, metrics and model files
    X, y = make_binary(n=1000, seed=12)
    params = {"objective": "binary", "sigmoid": 2.0, "num_leaves": 7, "verbosity": -1}
    booster = sb.train(params, sb.Dataset(X, y), 5, valid_sets=[sb.Dataset(X, y)], valid_names=["train"])
    p = booster.predict(X)
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(-2.0 * booster.predict(X, raw_score=True))), rtol=1e-14)
    assert booster.evals_result["train"]["logloss"][-1] == pytest.approx(
        -np.mean(y * np.log(p) + (1.0 - y) * np.log1p(-p)), rel=1e-12)
    booster.save_model(tmp_path / "m.json")
    assert json.loads((tmp_path / "m.json").read_text())["objective"] == {"name": "binary", "sigmoid": 2.0}
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(X), p)
    with pytest.raises(ParameterError, match="init_model was trained with objective"):
        sb.train({**params, "sigmoid": 1.0}, sb.Dataset(X, y, reference=loaded), 1, init_model=loaded)
    default = sb.train({**params, "sigmoid": 1.0}, sb.Dataset(X, y), 1)
    assert json.loads(default.model_to_string())["objective"] == {"name": "binary"}  # as before sigmoid was read


def test_binary_sigmoid_equals_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 20, size=(300, 3)).astype(float)  # fewer values than bins: both libraries bin them alike
    y = (0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.standard_normal(300) > 0.5).astype(float)
    params = {"objective": "binary", "sigmoid": 2.0, "num_leaves": 4, "learning_rate": 0.3, "lambda_l2": 0.0,
              "min_data_in_leaf": 1, "min_sum_hessian_in_leaf": 0.0, "max_bin": 63, "metric": "binary_logloss",
              "verbose": -1}
    ours = sb.train(params, sb.Dataset(X, y, params={"max_bin": 63}), 5, valid_sets=[sb.Dataset(X, y)],
                    valid_names=["train"])
    theirs_train = lgb.Dataset(X, y, params={"max_bin": 63, "min_data_in_bin": 1})
    history = {}
    theirs = lgb.train({**params, "num_threads": 1, "deterministic": True}, theirs_train, 5,
                       valid_sets=[theirs_train], valid_names=["train"], callbacks=[lgb.record_evaluation(history)])
    # LightGBM's start (BoostFromScore), alone in a tree that cannot split
    start = lgb.train({**params, "min_gain_to_split": 1e30, "num_threads": 1}, lgb.Dataset(X, y), 1)
    assert ours.base_score == start.predict(X[:1], raw_score=True)[0]
    # LightGBM keeps gradients in float32: the trees agree to about 1e-8
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0.0, atol=5e-8)
    np.testing.assert_allclose(ours.evals_result["train"]["logloss"], history["train"]["binary_logloss"], rtol=1e-8)


@pytest.mark.parametrize("extra", [{"scale_pos_weight": 3.0}, {"is_unbalance": True}])
@pytest.mark.parametrize("positives", [0.15, 0.85])  # is_unbalance weighs the rarer class, either one
def test_class_weights_equal_lightgbm(extra, positives):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(1)
    X = rng.integers(0, 20, size=(400, 3)).astype(float)  # fewer values than bins: both libraries bin them alike
    score = 0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.standard_normal(400)
    y = (score > np.quantile(score, 1.0 - positives)).astype(float)
    params = {"objective": "binary", "num_leaves": 5, "learning_rate": 0.3, "min_data_in_leaf": 1,
              "min_sum_hessian_in_leaf": 0.0, "max_bin": 63, "verbose": -1, **extra}
    ours = sb.train(params, sb.Dataset(X, y, params={"max_bin": 63}), 4)
    theirs = lgb.train({**params, "num_threads": 1, "deterministic": True},
                       lgb.Dataset(X, y, params={"max_bin": 63, "min_data_in_bin": 1}), 4)
    assert np.abs(ours.predict(X, raw_score=True) - theirs.predict(X, raw_score=True)).max() < 5e-7
    unweighted = sb.train({**params, "scale_pos_weight": 1.0, "is_unbalance": False},
                          sb.Dataset(X, y, params={"max_bin": 63}), 4)
    assert np.abs(ours.predict(X) - unweighted.predict(X)).max() > 0.05  # the weights were read
    # the class weight multiplies the positives' gradients and hessians as a row weight does
    if "scale_pos_weight" in extra:
        no_start = {**params, "boost_from_average": False}
        weighted = sb.train({**no_start, "scale_pos_weight": 1.0}, sb.Dataset(X, y, weight=np.where(y > 0, 3.0, 1.0),
                                                                            params={"max_bin": 63}), 4)
        np.testing.assert_array_equal(sb.train(no_start, sb.Dataset(X, y, params={"max_bin": 63}), 4).predict(X),
                                      weighted.predict(X))


def test_class_weights_are_for_binary_alone():
    X, y = make_binary(n=200, seed=3)
    for params, match in [({"objective": "regression", "scale_pos_weight": 2.0}, "'binary', not 'regression'"),
                          ({"objective": "cross_entropy", "is_unbalance": True}, "not 'cross_entropy'"),
                          ({"scale_pos_weight": 2.0, "is_unbalance": True}, "not both"),
                          ({"scale_pos_weight": 0.0}, "scale_pos_weight")]:
        with pytest.raises(ParameterError, match=match):
            sb.train({"objective": "binary", "verbosity": -1, **params}, sb.Dataset(X, y), 1)


def test_huber_resists_outliers():
    X, y = make_regression(n=3000, seed=13)
    noisy = y.copy()
    noisy[::20] += 50.0  # 5% gross outliers in the training labels
    params = {"num_leaves": 15, "verbosity": -1}
    huber = sb.train({**params, "objective": "huber", "alpha": 1.0}, sb.Dataset(X[:2000], noisy[:2000]), 100)
    squared = sb.train({**params, "objective": "regression"}, sb.Dataset(X[:2000], noisy[:2000]), 100)
    mae = [np.mean(np.abs(m.predict(X[2000:]) - y[2000:])) for m in (huber, squared)]
    assert mae[0] < 0.5 * mae[1]


def test_custom_objective_function_equals_the_built_in_loss(tmp_path):
    X, y = make_regression(n=2000, seed=14)

    def squared(label, raw):
        return raw - label, np.ones_like(raw)

    params = {"num_leaves": 15, "verbosity": -1}
    custom = sb.train({**params, "objective": squared}, sb.Dataset(X, y), 20)
    builtin = sb.train({**params, "objective": "regression", "boost_from_average": False}, sb.Dataset(X, y), 20)
    np.testing.assert_array_equal(custom.predict(X), builtin.predict(X))
    assert custom.evals_result == {}  # no default metric for a user function
    custom.save_model(tmp_path / "c.json")
    loaded = sb.Booster(model_file=tmp_path / "c.json")
    assert loaded.objective.name == "custom"
    np.testing.assert_array_equal(loaded.predict(X), custom.predict(X))
    resumed = sb.train({**params, "objective": squared}, sb.Dataset(X, y, reference=loaded), 5, init_model=loaded)
    assert resumed.num_trees() == 25
    with pytest.raises(ParameterError, match="pass the function again"):
        sb.train({**params, "objective": "custom"}, sb.Dataset(X, y, reference=loaded), 1, init_model=loaded)


@pytest.mark.parametrize("bad, match", [
    (lambda label, raw: raw - label, "a \\(grad, hess\\) pair"),
    (lambda label, raw: (raw[:5], np.ones(5)), "grad has shape \\(5,\\)"),
    (lambda label, raw: (np.where(np.arange(raw.size) == 7, np.nan, raw), np.ones_like(raw)), "not finite at row 7"),
    (lambda label, raw: (raw - label, -np.ones_like(raw)), "hess is negative at row 0"),
])
def test_custom_objective_errors_name_the_problem(bad, match):
    X, y = make_regression(n=200, seed=15)
    with pytest.raises(sb.DataError, match=match):
        sb.train({"objective": bad, "verbosity": -1}, sb.Dataset(X, y), 1)


def test_custom_objective_refuses_num_class():
    # a gradient function gives one raw score per row: num_class=3 used to train a one-output model silently
    X, y = make_regression(n=200, seed=15)

    def squared(label, raw):
        return raw - label, np.ones_like(raw)

    with pytest.raises(ParameterError, match="num_class=3 is only for multiclass objectives, not objective 'squared'"):
        sb.train({"objective": squared, "num_class": 3, "verbosity": -1}, sb.Dataset(X, np.floor(y) % 3), 1)
    assert sb.train({"objective": squared, "num_class": 1, "verbosity": -1}, sb.Dataset(X, y), 1).num_trees() == 1


# -- first-order boosting and step rules ------------------------------------------------------

@pytest.mark.parametrize("name", ["hinge", "sigmoid_margin", "gaussian_margin"])
def test_first_order_only_losses_train_with_gradient_boosting(name):
    X, y = make_binary(n=3000, seed=16)
    with pytest.raises(ParameterError, match="boosting='gradient'"):
        sb.train({"objective": name, "verbosity": -1}, sb.Dataset(X, y), 1)
    booster = sb.train({"objective": name, "boosting": "gradient", "num_leaves": 7, "learning_rate": 0.5,
                        "verbosity": -1}, sb.Dataset(X[:2000], y[:2000]), 40)
    # learns (chance is 0.5); the non-convex sigmoid and Gaussian losses give up on badly misclassified rows
    assert roc_auc_score(y[2000:], booster.predict(X[2000:], raw_score=True)) > 0.75


def test_gradient_boosting_leaves_are_mean_negative_gradients():
    X, y = make_regression(n=1000, seed=17)
    booster = sb.train({"objective": "regression", "boosting": "gradient", "max_depth": 1, "learning_rate": 1.0,
                        "boost_from_average": False, "verbosity": -1}, sb.Dataset(X, y), 1)
    tree = booster.trees[0]
    left_rows = X[:, tree.feature[0]] <= tree.threshold[0]
    np.testing.assert_allclose(tree.value[tree.left[0]], y[left_rows].mean(), rtol=1e-6)
    np.testing.assert_allclose(tree.value[tree.right[0]], y[~left_rows].mean(), rtol=1e-6)


def _training_losses(params, X, y, rounds):
    objective = make_objective(params["objective"])
    booster = sb.train({**params, "verbosity": -1}, sb.Dataset(X, y), rounds)
    return [objective.loss(objective.check_label(y), booster.predict(X, raw_score=True, num_iteration=k)).mean()
            for k in range(1, rounds + 1)]


_CONVEX = ["regression", "binary", "exponential", "regularized_logistic", "squared_margin", "huber"]
_STEP_CASES = ([(o, rule, b) for o in _CONVEX for rule in ("line", "leaf_line") for b in ("newton", "gradient")]
               + [(o, "smooth", "gradient") for o in _CONVEX if make_objective(o).sigma_smooth is not None])


@pytest.mark.parametrize("objective, rule, boosting", _STEP_CASES)
def test_line_and_smooth_steps_never_increase_the_training_loss(objective, rule, boosting):
    X, y = (make_regression if objective in ("regression", "huber") else make_binary)(n=1500, seed=18)
    losses = _training_losses({"objective": objective, "step_rule": rule, "boosting": boosting, "num_leaves": 7,
                               "learning_rate": 1.0, "boost_from_average": False}, X, y, 15)
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < losses[0]


def test_line_search_beats_plain_shrinkage_per_iteration():
    X, y = make_binary(n=3000, seed=19)
    base = {"objective": "binary", "boosting": "gradient", "num_leaves": 7, "learning_rate": 1.0}
    line = _training_losses({**base, "step_rule": "leaf_line"}, X, y, 10)
    plain = _training_losses(base, X, y, 10)
    assert line[-1] < plain[-1]


# -- sign trees: AnyBoost's {-1, +1} classifiers, RGBM's normalised stump -------------------------

def _sign_stump(X, y, objective, rule="shrinkage"):
    """One sign stump from F = 0, on a bin per value (every threshold a candidate)."""
    params = {"objective": objective, "boosting": "gradient", "weak_learner": "sign", "max_depth": 1,
              "min_data_in_leaf": 1, "learning_rate": 1.0, "boost_from_average": False, "step_rule": rule,
              "verbosity": -1}
    return sb.train(params, sb.Dataset(X, y, params={"min_data_in_bin": 1}), 1)


def test_sign_stump_maximises_the_correlation_with_the_negative_gradients():
    X, y = make_regression(n=200, seed=21)
    tree = _sign_stump(X, y, "regression").trees[0]
    r = y  # the negative gradients at F = 0
    best = max(abs(r[X[:, f] <= t].sum()) + abs(r[X[:, f] > t].sum())
               for f in range(X.shape[1]) for t in np.unique(X[:, f])[:-1])
    left = X[:, tree.feature[0]] <= tree.threshold[0]
    chosen = abs(r[left].sum()) + abs(r[~left].sum())
    assert chosen == pytest.approx(best, rel=1e-9)
    leaves = tree.value[tree.left < 0]
    np.testing.assert_array_equal(np.sort(leaves), np.sort([np.sign(r[left].sum()), np.sign(r[~left].sum())]))


def test_sign_stump_smooth_step_is_rgbm_constant_step():
    """(1/sigma) <r, b> b with b = f / sqrt(n): each leaf is sign * sum_j |G_j| / (sigma n)."""
    X, y = make_regression(n=200, seed=22)
    tree = _sign_stump(X, y, "regression", "smooth").trees[0]
    left = X[:, tree.feature[0]] <= tree.threshold[0]
    step = (abs(y[left].sum()) + abs(y[~left].sum())) / (1.0 * len(y))
    np.testing.assert_allclose(tree.value[tree.left[0]], np.sign(y[left].sum()) * step, rtol=1e-6)
    np.testing.assert_allclose(tree.value[tree.right[0]], np.sign(y[~left].sum()) * step, rtol=1e-6)


@pytest.mark.parametrize("objective", ["exponential", "binary", "regularized_logistic"])
def test_anyboost_sign_trees_with_line_search_learn_and_never_increase_the_loss(objective):
    X, y = make_binary(n=2500, seed=23)
    params = {"objective": objective, "boosting": "gradient", "weak_learner": "sign", "step_rule": "line",
              "num_leaves": 4, "learning_rate": 1.0, "boost_from_average": False}
    losses = _training_losses(params, X[:1500], y[:1500], 30)
    assert all(b <= a + 1e-12 for a, b in zip(losses, losses[1:])), losses
    booster = sb.train({**params, "verbosity": -1}, sb.Dataset(X[:1500], y[:1500]), 30)
    values = np.concatenate([tree.value[tree.left < 0] / abs(tree.value[tree.left < 0]).max()
                             for tree in booster.trees])
    np.testing.assert_array_equal(np.abs(values), 1.0)  # every leaf +-alpha
    assert roc_auc_score(y[1500:], booster.predict(X[1500:], raw_score=True)) > 0.8


def test_sign_trees_round_trip_and_new_options_stay_out_of_default_model_files(tmp_path):
    X, y = make_binary(n=500, seed=25)
    params = {"objective": "binary", "boosting": "gradient", "step_rule": "line", "verbosity": -1}
    sign = sb.train({**params, "weak_learner": "sign"}, sb.Dataset(X, y), 5)
    sign.save_model(tmp_path / "sign.json")
    loaded = sb.Booster(model_file=tmp_path / "sign.json")
    assert loaded.params["weak_learner"] == "sign"
    np.testing.assert_array_equal(loaded.predict(X), sign.predict(X))
    plain = json.loads(sb.train(params, sb.Dataset(X, y), 1).model_to_string())["params"]
    assert not {"weak_learner", "smart_correction", "gaussian_c", "gaussian_s"} & set(plain)


@pytest.mark.parametrize("params, match", [
    ({"objective": "binary"}, "boosting='gradient'"),
    ({"objective": "binary", "boosting": "gradient", "step_rule": "leaf_line"}, "leaf_line"),
    ({"objective": "binary", "boosting": "gradient", "lambda_l1": 1.0}, "lambda_l1"),
    ({"objective": "regression_l1", "boosting": "gradient"}, "refits every leaf"),
])
def test_sign_trees_misuse_is_reported(params, match):
    X, y = make_binary(n=200, seed=24)
    with pytest.raises(ParameterError, match=match):
        sb.train({**params, "weak_learner": "sign", "verbosity": -1}, sb.Dataset(X, y), 1)


def test_step_rule_misuse_is_reported():
    X, y = make_binary(n=200, seed=20)
    with pytest.raises(ParameterError, match="smoothness constant"):
        sb.train({"objective": "exponential", "step_rule": "smooth", "boosting": "gradient", "verbosity": -1},
                 sb.Dataset(X, y), 1)
    with pytest.raises(ParameterError, match="use it with boosting='gradient'"):
        sb.train({"objective": "binary", "step_rule": "smooth", "verbosity": -1}, sb.Dataset(X, y), 1)
    with pytest.raises(ParameterError, match="single-output built-in objective"):
        sb.train({"objective": "multiclass", "num_class": 2, "step_rule": "line", "verbosity": -1},
                 sb.Dataset(X, y), 1)


@pytest.mark.parametrize("name", ["regression", "binary", "poisson", "gamma"])
def test_weighted_start_values_are_sums_of_numpy_not_of_blas(name):
    """A start value over many weighted rows is numpy's pairwise sum (np.average's), not a BLAS
    dot, which OpenBLAS splits over its own threads: the value would then depend on the
    machine's cores, and the BLAS threads would spin on the training's cores afterwards."""
    rng = np.random.default_rng(5)
    n = 30_000  # OpenBLAS threads a dot of more than 10,000 values
    label = (rng.random(n) < 0.3).astype(float) if name == "binary" else rng.gamma(2.0, 1.5, n)
    weight = rng.random(n) * 3.0
    mean = np.average(label, weights=weight)
    if name == "regression":
        expected = mean
    else:
        expected = math.log(mean / (1.0 - mean)) if name == "binary" else math.log(mean)
    assert make_objective(name, {}).init_score(label, weight) == expected
