"""leaf_value_rows='all': a sampled tree's splits from its sample, its leaf values from every row."""

import json

import numba
import numpy as np
import pytest
from conftest import make_binary, make_regression

import smartboost as sb
from smartboost.errors import ParameterError


def _trees(booster):
    return json.loads(booster.model_to_string())["trees"]


def newton_values_over_every_row(booster, X, y, iteration, lambda_l2, weight=None, objective="binary"):
    """Each leaf's -G/(H + lambda_l2) of tree ``iteration`` over every training row, at the scores
    before it (the logistic or squared loss), and the tree's own leaf values (the step it adds to
    the rows of each leaf), by the leaf index ``pred_leaf`` gives."""
    raw = booster.predict(X, raw_score=True, num_iteration=iteration)  # iteration >= 1
    step = booster.predict(X, raw_score=True, num_iteration=iteration + 1) - raw
    if objective == "binary":
        p = 1.0 / (1.0 + np.exp(-raw))
        g, h = p - y, p * (1.0 - p)
    else:
        g, h = raw - y, np.ones(len(y))
    w = np.ones(len(y)) if weight is None else weight
    leaves = booster.predict(X, pred_leaf=True)[:, iteration]
    G = np.bincount(leaves, weights=w * g)
    H = np.bincount(leaves, weights=w * h)
    value = np.zeros(G.size)
    value[leaves] = step
    return -G / (H + lambda_l2), value


@pytest.mark.parametrize("sampling, objective, weighted", [("bernoulli", "binary", False), ("mvs", "binary", True),
                                                           ("goss", "regression", False)])
def test_the_leaves_of_a_sampled_tree_take_the_newton_values_of_every_row(sampling, objective, weighted):
    """Every leaf's value, over the learning rate, is -G/(H + lambda_l2) of every training row
    in it (its own weight, no sampling weight), to the rounding of the fixed-point sums; with the
    sample's values it is not."""
    X, y = make_binary(n=6000, seed=21) if objective == "binary" else make_regression(n=6000, seed=21)
    weight = np.random.default_rng(5).uniform(0.5, 2.0, len(y)) if weighted else None
    params = {"objective": objective, "sampling": sampling, "sample_rate": 0.2, "num_leaves": 31,
              "lambda_l2": 2.0, "learning_rate": 0.1, "verbosity": -1}
    for name, rows in (("all", True), ("sample", False)):
        booster = sb.train({**params, "leaf_value_rows": name}, sb.Dataset(X, y, weight=weight), 4)
        for iteration in (1, 3):
            expected, got = newton_values_over_every_row(booster, X, y, iteration, 2.0, weight, objective)
            assert booster.iteration_stats["sample_rate"][iteration] < 0.5
            close = np.allclose(got / 0.1, expected, rtol=1e-6, atol=1e-9)
            assert close == rows, (name, iteration)


def test_values_from_every_row_keep_monotone_constraints_and_the_training_scores():
    """Each leaf's value stays within its monotone bounds (the basic method's: the intermediate
    one is refused with values from every row, tests/test_constraints.py), so predictions keep the
    constraint; the training scores are the model's predictions (the placed rows got the values
    the trees hold)."""
    X, y = make_binary(n=6000, seed=22)
    booster = sb.train({"objective": "binary", "sampling": "mvs", "sample_rate": 0.2, "leaf_value_rows": "all",
                        "monotone_constraints": [1, 0, 0, 0, 0, 0], "monotone_constraints_method": "basic",
                        "num_leaves": 31, "verbosity": -1}, sb.Dataset(X, y), 20)
    grid = np.repeat(X[:200], 25, axis=0)
    grid[:, 0] = np.tile(np.linspace(-3, 3, 25), 200)
    scores = booster.predict(grid, raw_score=True).reshape(200, 25)
    assert np.all(np.diff(scores, axis=1) >= -1e-12)
    ev = {}
    train = sb.Dataset(X, y)
    booster = sb.train({"objective": "binary", "sampling": "bernoulli", "sample_rate": 0.3, "leaf_value_rows": "all",
                        "num_leaves": 15, "metric": "binary_logloss", "verbosity": -1}, train, 10,
                       valid_sets=[train], valid_names=["train"], callbacks=[sb.record_evaluation(ev)])
    p = booster.predict(X)
    logloss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))
    assert ev["train"]["logloss"][-1] == pytest.approx(logloss, rel=1e-12)


def test_values_from_every_row_are_deterministic_on_any_thread_count():
    X, y = make_binary(n=8000, seed=23)
    params = {"objective": "binary", "sampling": "mvs", "sample_rate": 0.2, "leaf_value_rows": "all",
              "num_leaves": 31, "verbosity": -1, "seed": 4}
    first = _trees(sb.train(params, sb.Dataset(X, y), 8))
    assert first == _trees(sb.train(params, sb.Dataset(X, y), 8))
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert first == _trees(sb.train({**params, "num_threads": 1}, sb.Dataset(X, y), 8))
        assert first == _trees(sb.train({**params, "num_threads": 2}, sb.Dataset(X, y), 8))


def test_a_multiclass_model_takes_every_output_s_values_from_every_row():
    rng = np.random.default_rng(24)
    X = rng.standard_normal((6000, 5))
    classes = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(6000), [-0.5, 0.5])
    params = {"objective": "multiclass", "num_class": 3, "sampling": "bernoulli", "sample_rate": 0.2,
              "num_leaves": 15, "verbosity": -1}
    every = sb.train({**params, "leaf_value_rows": "all"}, sb.Dataset(X, classes), 10)
    sample = sb.train(params, sb.Dataset(X, classes), 10)
    assert _trees(every) != _trees(sample)
    assert (every.predict(X).argmax(axis=1) == classes).mean() > 0.7


@pytest.mark.parametrize("params, match", [
    ({"objective": "quantile"}, "refits every leaf to a quantile"),
    ({"objective": "regression_l1"}, "refits every leaf to a quantile"),
    ({"step_rule": "leaf_line"}, "leaf_line"),
    ({"boosting": "gradient", "weak_learner": "sign"}, "signs"),
    ({"leaf_value_rows": "some"}, "leaf_value_rows"),
])
def test_leaf_values_from_every_row_refuses_what_sets_the_values_itself(params, match):
    X, y = make_regression(n=500, seed=25)
    full = {"objective": "regression", "sampling": "bernoulli", "sample_rate": 0.5, "leaf_value_rows": "all",
            "verbosity": -1, **params}
    with pytest.raises(ParameterError, match=match) as error:
        sb.train(full, sb.Dataset(X, y), 2)
    assert "leaf_value_rows" in str(error.value)


def test_the_fixed_samplers_keep_the_sample_s_values_by_default():
    X, y = make_binary(n=4000, seed=26)
    params = {"objective": "binary", "sampling": "mvs", "sample_rate": 0.3, "num_leaves": 15, "verbosity": -1}
    default = _trees(sb.train(params, sb.Dataset(X, y), 5))
    assert default == _trees(sb.train({**params, "leaf_value_rows": "sample"}, sb.Dataset(X, y), 5))
    assert default != _trees(sb.train({**params, "leaf_value_rows": "all"}, sb.Dataset(X, y), 5))
    assert "leaf_value_rows" not in sb.train(params, sb.Dataset(X, y), 1).model_to_string()
