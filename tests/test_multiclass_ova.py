"""multiclassova (LightGBM's one-vs-all): trees, start, metrics and predictions against LightGBM,
class weights per class, model files, labels and the scikit-learn classifier."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import train_beside_lightgbm

import smartboost as sb
from smartboost._params import resolve_params
from smartboost.errors import DataError, ParameterError
from smartboost.metrics import get_metric
from smartboost.objectives import make_objective
from smartboost.sklearn import SmartBoostClassifier

K = 4


def _problem(n=500, seed=0):
    """Four classes of unequal sizes (20%, 30%, 40%, 10%) cut from a noisy score of integer features:
    fewer values than bins, which both libraries bin alike."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 20, size=(n, 3)).astype(float)
    score = 0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.standard_normal(n)
    return X, np.digitize(score, np.quantile(score, [0.2, 0.5, 0.9])).astype(float)


# min_sum_hessian_in_leaf 1: no leaf of a few rows, where float32 gains tie splits LightGBM picks otherwise.
# min_data_in_leaf 1: LightGBM rounds its count estimate H * rows / node_H, smartboost does not, so a child
# of that estimate below 1 (a few rows of small hessians) is refused by smartboost alone
_BINS = {"max_bin": 63, "min_data_in_bin": 1}
_PARAMS = {"objective": "multiclassova", "num_class": K, "num_leaves": 5, "learning_rate": 0.3, "min_data_in_leaf": 1,
           "min_sum_hessian_in_leaf": 1.0, "metric": ["multi_logloss", "multi_error"], "verbose": -1}


@pytest.mark.parametrize("extra", [{}, {"sigmoid": 1.7}, {"is_unbalance": True}, {"scale_pos_weight": 2.5}])
@pytest.mark.parametrize("weighted", [False, True])
def test_trees_start_and_metrics_equal_lightgbm(extra, weighted):
    pytest.importorskip("lightgbm")
    X, y = _problem(seed=2)
    # weights exact in float32, as LightGBM keeps them
    w = np.random.default_rng(3).uniform(0.5, 2.0, y.size).astype(np.float32).astype(np.float64) if weighted else None
    # start: each class's BoostFromScore
    ours, theirs, history, start = train_beside_lightgbm({**_PARAMS, **extra}, X, y, w, _BINS, 3)
    np.testing.assert_allclose(ours.base_score, start.predict(X[:1], raw_score=True)[0], rtol=0.0, atol=1e-12)
    # LightGBM keeps gradients in float32: the trees agree to about 1e-7
    np.testing.assert_allclose(ours.predict(X, raw_score=True), theirs.predict(X, raw_score=True), rtol=0.0,
                               atol=5e-7)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0.0, atol=1e-7)
    np.testing.assert_allclose(ours.evals_result["train"]["multi_logloss"], history["train"]["multi_logloss"],
                               rtol=1e-7)
    assert ours.evals_result["train"]["multi_error"] == history["train"]["multi_error"]
    if extra:  # the option was read (sigmoid scales the raw scores: Newton steps nearly keep the probabilities)
        plain = sb.train({**_PARAMS, "metric": []}, sb.Dataset(X, y, weight=w, params=_BINS), 3)
        assert np.abs(plain.predict(X, raw_score=True) - ours.predict(X, raw_score=True)).max() > 0.01


@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_of_the_same_scores_equal_lightgbm(weighted):
    lgb = pytest.importorskip("lightgbm")
    X, y = _problem(n=2000, seed=5)
    rng = np.random.default_rng(6)
    # LightGBM keeps weights and init scores in float32: give it values that are exact there
    raw = (2.0 * rng.standard_normal((K, y.size))).astype(np.float32).astype(np.float64)
    # probabilities near 1 and 0 (LightGBM's multi_logloss clips p at 1e-15, which smartboost does not)
    raw[:, :5] = [[20.0], [-20.0], [0.0], [3.0]]
    w = rng.uniform(0.5, 2.0, y.size).astype(np.float32).astype(np.float64) if weighted else None
    params = {"objective": "multiclassova", "num_class": K, "metric": ["multi_logloss", "multi_error"],
              "sigmoid": 1.5, "verbose": -1}
    data = lgb.Dataset(X, y, weight=w, init_score=raw.T, free_raw_data=False)
    model = lgb.Booster(params, data)
    model.add_valid(lgb.Dataset(X, y, weight=w, init_score=raw.T, reference=data), "valid")
    theirs = {name: value for _, name, value, _ in model.eval_valid()}  # no tree yet: the metrics of the init scores
    objective = make_objective("multiclassova", params)
    for name in ("multi_logloss", "multi_error"):
        ours = get_metric(name).evaluate(objective, y, raw, objective.transform(raw), w)
        assert ours == pytest.approx(theirs[name], rel=1e-12), name
    # softmax's multi_logloss of the same scores is another number: the metric follows the objective
    assert get_metric("multi_logloss").evaluate(make_objective("multiclass", params), y, raw, None, w) != \
        pytest.approx(theirs["multi_logloss"], rel=1e-3)


def test_predictions_are_each_class_sigmoid_not_normalised():
    X, y = _problem(n=600, seed=7)
    booster = sb.train({**_PARAMS, "sigmoid": 2.0, "metric": []}, sb.Dataset(X, y), 5)
    raw = booster.predict(X, raw_score=True)
    p = booster.predict(X)
    assert p.shape == raw.shape == (600, K)
    np.testing.assert_allclose(p, 1.0 / (1.0 + np.exp(-2.0 * raw)), rtol=1e-14)
    assert np.abs(p.sum(axis=1) - 1.0).max() > 0.05
    assert booster.num_trees() == 5 * K


def test_the_start_is_each_class_log_odds_and_an_absent_class_starts_low():
    y = np.array([0.0, 0.0, 1.0, 2.0, 2.0, 2.0])
    w = np.array([1.0, 3.0, 2.0, 1.0, 1.0, 2.0])
    objective = make_objective("ova", {"num_class": 4, "sigmoid": 2.0})
    share = np.array([4.0, 2.0, 4.0, 0.0]) / 10.0
    share[3] = 1e-15  # LightGBM's floor: a class without rows starts at a finite score
    np.testing.assert_allclose(objective.init_score(y, w), np.log(share / (1.0 - share)) / 2.0, rtol=1e-14)
    with pytest.raises(DataError, match="weight sums to zero"):
        objective.init_score(y, np.zeros(6))


def test_models_save_load_and_continue(tmp_path):
    X, y = _problem(n=600, seed=8)
    params = {**_PARAMS, "sigmoid": 1.5, "is_unbalance": True}
    booster = sb.train(params, sb.Dataset(X, y), 4, valid_sets=[sb.Dataset(X, y)])
    booster.save_model(tmp_path / "model.json")
    assert json.loads((tmp_path / "model.json").read_text())["objective"] == {
        "name": "multiclassova", "num_class": K, "sigmoid": 1.5, "is_unbalance": True}
    loaded = sb.Booster(model_file=tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert loaded.model_to_string() == booster.model_to_string()
    resumed = sb.train(params, sb.Dataset(X, y, reference=loaded), 2, init_model=loaded)
    np.testing.assert_array_equal(resumed.predict(X), sb.train(params, sb.Dataset(X, y), 6).predict(X))
    with pytest.raises(ParameterError, match="init_model was trained with objective"):
        sb.train({**params, "sigmoid": 1.0}, sb.Dataset(X, y, reference=loaded), 1, init_model=loaded)
    default = sb.train({**_PARAMS, "metric": []}, sb.Dataset(X, y), 1)
    assert json.loads(default.model_to_string())["objective"] == {"name": "multiclassova", "num_class": K}


@pytest.mark.parametrize("bad, match", [(4.0, r"integer class in \[0, 4\).*row 3 has 4.0"),
                                        (1.5, "row 3 has 1.5"), (-1.0, "row 3 has -1.0")])
def test_labels_that_are_not_classes_name_the_row(bad, match):
    X, y = _problem(n=100, seed=9)
    y[3] = bad
    with pytest.raises(DataError, match=match):
        sb.train(_PARAMS, sb.Dataset(X, y), 1)
    good = sb.Dataset(*_problem(n=100, seed=10))
    with pytest.raises(DataError, match="row 3"):
        sb.train(_PARAMS, good, 1, valid_sets=[sb.Dataset(X, y, reference=good)])


def test_names_and_parameters():
    for alias in ("multiclassova", "multiclass_ova", "ova", "ovr", "OVR"):
        assert resolve_params({"objective": alias, "num_class": 3})["objective"] == "multiclassova"
    X, y = _problem(n=100, seed=11)
    with pytest.raises(ParameterError, match="'multiclassova' needs num_class >= 2"):
        sb.train({"objective": "ova", "verbosity": -1}, sb.Dataset(X, y), 1)
    with pytest.raises(ParameterError, match="not both"):
        sb.train({**_PARAMS, "is_unbalance": True, "scale_pos_weight": 2.0}, sb.Dataset(X, y), 1)
    with pytest.raises(ParameterError, match="'logloss' is a single-output metric"):
        sb.train({**_PARAMS, "metric": "logloss"}, sb.Dataset(X, y), 1)


def test_sklearn_classifier_equals_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = _problem(seed=12)
    labels = np.array(["a", "b", "c", "d"])[y.astype(int)]
    params = {"objective": "ova", "n_estimators": 3, "num_leaves": 5, "learning_rate": 0.3, "min_child_samples": 1,
              "min_child_weight": 1.0, "max_bin": 63, "min_data_in_bin": 1, "verbose": -1}
    ours = SmartBoostClassifier(**params).fit(X, labels)
    theirs = lgb.LGBMClassifier(**params, n_jobs=1, deterministic=True).fit(X, labels)
    assert ours.booster_.objective.name == "multiclassova" and ours.booster_.objective.num_class == K
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0.0, atol=1e-7)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    np.testing.assert_array_equal(ours.predict(X), ours.classes_[np.argmax(ours.predict_proba(X), axis=1)])
