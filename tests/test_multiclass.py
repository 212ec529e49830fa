"""Multiclass softmax: one tree per class and iteration, through training, prediction and files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import accuracy_score, log_loss

import smartboost as sb
from smartboost.errors import DataError, ParameterError
from smartboost.metrics import get_metric

K = 3


def make_multiclass(n=3000, n_features=6, seed=0):
    """Three classes from a noisy argmax of linear scores."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    scores = X[:, :K] @ rng.standard_normal((K, K)) + 0.8 * rng.standard_normal((n, K))
    return X, np.argmax(scores, axis=1).astype(float)


PARAMS = {"objective": "multiclass", "num_class": K, "num_leaves": 15, "verbosity": -1}


@pytest.fixture(scope="module")
def data():
    X, y = make_multiclass(4000, seed=1)
    return X[:3000], y[:3000], X[3000:], y[3000:]


def test_learns_and_reports_multiclass_metrics(data):
    X, y, Xt, yt = data
    train = sb.Dataset(X, y)
    booster = sb.train({**PARAMS, "metric": ["multi_logloss", "multi_error"]}, train, 40,
                       valid_sets=[sb.Dataset(Xt, yt, reference=train)], valid_names=["test"])
    assert booster.num_trees() == 40 * K and booster.current_iteration() == 40
    assert booster.num_model_per_iteration() == K
    proba = booster.predict(Xt)
    assert proba.shape == (len(yt), K)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    history = booster.evals_result["test"]
    assert history["multi_logloss"][-1] == pytest.approx(log_loss(yt, proba), rel=1e-10)
    assert history["multi_error"][-1] == pytest.approx(1 - accuracy_score(yt, proba.argmax(axis=1)))
    assert history["multi_logloss"][-1] < 0.5 * history["multi_logloss"][0]
    raw = booster.predict(Xt, raw_score=True)
    assert raw.shape == (len(yt), K)
    np.testing.assert_allclose(np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True), proba)


def test_class_k_owns_every_kth_tree(data):
    # raw-feature prediction against the training path (binned rows, class k's trees k::K)
    X, y, Xt, _ = data
    booster = sb.train(PARAMS, sb.Dataset(X, y), 5)
    raw = booster.predict(Xt, raw_score=True)
    binned = sb.Dataset(Xt, reference=booster).binned
    for k in range(K):
        out = np.full(len(Xt), booster.base_score[k])
        booster.predict_binned(binned, out, k, None, K)
        np.testing.assert_allclose(out, raw[:, k], rtol=0, atol=1e-12)


def test_start_score_is_the_log_class_shares():
    y = np.array([0, 0, 0, 1, 2, 2], float)
    booster = sb.train({**PARAMS, "min_data_in_leaf": 100}, sb.Dataset(np.zeros((6, 1)), y), 1)
    np.testing.assert_allclose(booster.predict(np.zeros((1, 1)))[0], [0.5, 1 / 6, 2 / 6])


def test_save_load_and_num_iteration(data, tmp_path):
    X, y, Xt, yt = data
    train = sb.Dataset(X, y)
    booster = sb.train({**PARAMS, "metric": "multi_logloss", "early_stopping_round": 3, "learning_rate": 0.5},
                       train, 200, valid_sets=[sb.Dataset(Xt, yt, reference=train)])
    assert booster.best_iteration < booster.current_iteration() < 200
    booster.save_model(tmp_path / "m.json")
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    np.testing.assert_array_equal(loaded.predict(Xt), booster.predict(Xt))
    assert loaded.best_iteration == booster.best_iteration
    first = booster.predict(Xt, raw_score=True, num_iteration=2)
    short = sb.Booster(model_str=booster.model_to_string(num_iteration=2))
    assert short.num_trees() == 2 * K
    np.testing.assert_array_equal(short.predict(Xt, raw_score=True, num_iteration=0), first)


def test_continued_training_matches_one_run(data):
    X, y, _, _ = data
    train = sb.Dataset(X, y)
    whole = sb.train(PARAMS, train, 8)
    half = sb.train(PARAMS, train, 4)
    resumed = sb.train(PARAMS, sb.Dataset(X, y, reference=half), 4, init_model=half)
    assert _trees(resumed) == _trees(whole)


def _trees(booster):
    """The model file without the training parameters (num_iterations differs between runs)."""
    document = json.loads(booster.model_to_string())
    return {key: value for key, value in document.items() if key != "params"}


@pytest.mark.parametrize("sampling", ["uniform", "bernoulli", "goss", "mvs", "smart1", "trimming", "loss"])
def test_samplers_draw_one_sample_per_iteration(data, sampling):
    X, y, Xt, yt = data
    booster = sb.train({**PARAMS, "sampling": sampling, "sample_rate": 0.3}, sb.Dataset(X, y), 15)
    sizes = booster.iteration_stats["sample_size"]
    assert len(sizes) == 15 and np.mean(sizes) < 0.5 * len(y)
    assert accuracy_score(yt, booster.predict(Xt).argmax(axis=1)) > 0.6


def test_multiclass_misuse_is_reported(data):
    X, y, _, _ = data
    train = sb.Dataset(X, y)
    with pytest.raises(ParameterError, match="needs num_class >= 2"):
        sb.train({"objective": "multiclass", "verbosity": -1}, train, 1)
    with pytest.raises(ParameterError, match="num_class=3 is only for multiclass"):
        sb.train({"objective": "binary", "num_class": 3, "verbosity": -1}, train, 1)
    with pytest.raises(DataError, match=r"integer class in \[0, 2\).*row \d+ has 2.0"):
        sb.train({**PARAMS, "num_class": 2}, train, 1)
    with pytest.raises(ParameterError, match="metric 'auc' is a single-output metric"):
        sb.train({**PARAMS, "metric": "auc"}, train, 1, valid_sets=[train])
    with pytest.raises(ParameterError, match="does not support multiclass"):
        sb.train({**PARAMS, "sampling": "smart2", "sample_rate": 0.5}, train, 1)
    with pytest.raises(ParameterError, match="mvs_eta > 0 .* multiclass"):
        sb.train({**PARAMS, "sampling": "mvs", "sample_rate": 0.5, "mvs_eta": 0.5}, train, 1)
    with pytest.raises(ParameterError, match="metric 'multi_error' is a multiclass metric"):
        sb.train({"objective": "binary", "metric": "multi_error", "verbosity": -1},
                 sb.Dataset(X, (y > 0).astype(float)), 1)


def test_multi_logloss_is_stable_for_large_scores():
    raw = np.array([[800.0, -800.0], [0.0, 0.0], [-800.0, 800.0]])
    value = get_metric("multi_logloss")(np.array([0.0, 2.0]), raw, raw)
    assert value == pytest.approx(0.0)


def test_init_score_per_class_continues_training_as_one_run(data):
    """A multiclass init_score holds a column per class (the raw scores of ``predict``): boosting
    on from a model's raw scores gives the trees of one longer run."""
    X, y, Xt, yt = data
    train = sb.Dataset(X, y)
    full = sb.train(PARAMS, train, 8)
    first = sb.train(PARAMS, train, 5)
    raw, raw_t = first.predict(X, raw_score=True), first.predict(Xt, raw_score=True)
    on_train = sb.Dataset(X, y, init_score=raw, reference=train)
    rest = sb.train(PARAMS, on_train, 3, valid_sets=[sb.Dataset(Xt, yt, init_score=raw_t, reference=train)],
                    valid_names=["test"])
    np.testing.assert_array_equal(rest.base_score, np.zeros(K))  # no average on top of the init scores
    np.testing.assert_allclose(raw_t + rest.predict(Xt, raw_score=True), full.predict(Xt, raw_score=True),
                               rtol=0, atol=1e-12)
    # the valid set's metric is evaluated from its own init scores
    ours = get_metric("multi_logloss")(yt, (raw_t + rest.predict(Xt, raw_score=True)).T, None)
    assert rest.evals_result["test"]["multi_logloss"][-1] == pytest.approx(ours, rel=1e-12)
    # a subset keeps each row's scores
    part = on_train.subset(np.arange(0, 3000, 2))
    np.testing.assert_array_equal(part.init_score, raw[::2])


@pytest.mark.parametrize("shape, objective, match", [
    ((3000,), "multiclass", r"init_score has shape \(3000,\) but objective 'multiclass' has 3 outputs per row; "
                            r"give shape \(3000, 3\)"),
    ((3000, 2), "multiclass", r"shape \(3000, 2\) but objective 'multiclass' has 3 outputs"),
    ((3000, 3), "binary", r"shape \(3000, 3\) but objective 'binary' has 1 output per row; give one score per row"),
])
def test_init_score_of_the_wrong_shape_is_a_data_error(data, shape, objective, match):
    X, y, _, _ = data
    params = PARAMS if objective == "multiclass" else {"objective": "binary", "verbosity": -1}
    label = y if objective == "multiclass" else (y > 0).astype(float)
    with pytest.raises(DataError, match=match):
        sb.train(params, sb.Dataset(X, label, init_score=np.zeros(shape)), 1)


def test_init_score_entries_must_be_finite_and_named_by_row_and_column(data):
    X, y, _, _ = data
    scores = np.zeros((3000, K))
    scores[7, 2] = np.inf
    with pytest.raises(DataError, match="init_score contains inf at row 7, column 2"):
        sb.Dataset(X, y, init_score=scores)
    with pytest.raises(DataError, match=r"init_score must be 1-dimensional or \(rows, outputs\)"):
        sb.Dataset(X, y, init_score=np.zeros((3000, K, 1)))
