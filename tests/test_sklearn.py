"""The scikit-learn estimators: scikit-learn's own estimator checks, and use inside its tools."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import make_binary, make_regression
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import smartboost as sb
from smartboost.errors import ParameterError
from smartboost.sklearn import SmartBoostClassifier, SmartBoostRegressor


_WEIGHT_EQUIVALENCE = ("bins are learned from every row, zero-weight ones included, and min_data_in_leaf counts "
                       "rows, so weights are not equivalent to removing or repeating rows (as in LightGBM and "
                       "scikit-learn's HistGradientBoosting)")


def _expected_failures(estimator) -> dict[str, str]:
    return {"check_sample_weight_equivalence_on_dense_data": _WEIGHT_EQUIVALENCE,
            "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_EQUIVALENCE}


@parametrize_with_checks([SmartBoostRegressor(n_estimators=10, min_child_samples=1),
                          SmartBoostClassifier(n_estimators=10, min_child_samples=1)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_regressor_is_the_native_model():
    X, y = make_regression(n=2000, seed=1)
    model = SmartBoostRegressor(n_estimators=20, num_leaves=15, random_state=3).fit(X, y)
    booster = sb.train({"objective": "regression", "num_leaves": 15, "seed": 3, "verbosity": -1},
                       sb.Dataset(X, y), 20)
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))
    assert model.n_iter_ == 20 and model.n_features_in_ == X.shape[1]


def test_classifier_string_labels_and_probabilities():
    X, y = make_binary(n=3000, seed=2)
    labels = np.where(y > 0, "spam", "ham")
    model = SmartBoostClassifier(n_estimators=30).fit(X, labels)
    assert model.classes_.tolist() == ["ham", "spam"]
    proba = model.predict_proba(X)
    assert proba.shape == (3000, 2) and np.allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), np.where(proba[:, 1] > 0.5, "spam", "ham"))
    assert model.score(X, labels) > 0.8


def test_classifier_one_class_and_multiclass():
    X, y = make_binary(n=600, seed=0)
    with pytest.raises(ValueError, match="one class"):
        SmartBoostClassifier().fit(X, np.zeros(600))
    labels = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    model = SmartBoostClassifier(n_estimators=20).fit(X, labels)
    assert model.classes_.tolist() == ["a", "b", "c"] and model.n_classes_ == 3
    assert model.booster_.num_trees() == 60
    proba = model.predict_proba(X)
    assert proba.shape == (600, 3) and np.allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    assert model.score(X, labels) > 0.9


def test_extra_parameters_survive_clone_and_reach_training():
    model = SmartBoostClassifier(n_estimators=5, sampling="smart2", sample_rate=0.5, smart_eta=0.25)
    params = clone(model).get_params()
    assert params["smart_eta"] == 0.25 and params["sampling"] == "smart2"
    X, y = make_binary(n=2000, seed=4)
    fitted = model.fit(X, y)
    assert fitted.booster_.params["smart_eta"] == 0.25
    assert np.mean(fitted.booster_.iteration_stats["sample_rate"]) < 0.7
    with pytest.raises(ParameterError, match="unknown parameter 'smart_etta'"):
        SmartBoostClassifier(smart_etta=0.3).fit(X, y)


def test_eval_set_early_stopping_and_importances():
    X, y = make_binary(n=4000, seed=5)
    model = SmartBoostClassifier(n_estimators=500, learning_rate=0.3, early_stopping_rounds=5)
    model.fit(X[:3000], y[:3000], eval_set=[(X[3000:], y[3000:])], eval_names=["holdout"])
    assert model.best_iteration_ < model.n_iter_ < 500
    assert len(model.evals_result_["holdout"]["logloss"]) == model.n_iter_
    split = model.feature_importances_
    model.set_params(importance_type="gain")
    gain = model.feature_importances_
    # recounted from the trees predict uses (one per iteration up to the best one)
    nodes = [(t.feature[t.left >= 0], t.gain[t.left >= 0]) for t in model.booster_.trees[:model.best_iteration_]]
    features, gains = (np.concatenate(column) for column in zip(*nodes))
    np.testing.assert_array_equal(split, np.bincount(features, minlength=X.shape[1]))
    np.testing.assert_allclose(gain, np.bincount(features, weights=gains, minlength=X.shape[1]), rtol=1e-12)
    assert not np.array_equal(split, gain)


def test_dataframe_feature_names_and_pipeline_grid_search():
    X, y = make_binary(n=1500, seed=6)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    model = SmartBoostClassifier(n_estimators=10).fit(frame, y)
    assert model.feature_names_in_.tolist() == list(frame.columns)
    assert model.booster_.feature_name() == list(frame.columns)
    search = GridSearchCV(make_pipeline(StandardScaler(), SmartBoostClassifier(n_estimators=10)),
                          {"smartboostclassifier__num_leaves": [4, 15],
                           "smartboostclassifier__lambda_l2": [0.0, 1.0]}, cv=3, scoring="roc_auc")
    search.fit(frame, y)
    assert search.best_score_ > 0.8
    assert set(search.best_params_) == {"smartboostclassifier__num_leaves", "smartboostclassifier__lambda_l2"}
    scores = cross_val_score(SmartBoostRegressor(n_estimators=10), X, y, cv=3)
    assert scores.shape == (3,)


def test_same_random_state_same_model():
    X, y = make_binary(n=3000, seed=7)
    a = SmartBoostClassifier(n_estimators=15, sampling="mvs", sample_rate=0.3, random_state=11).fit(X, y)
    b = SmartBoostClassifier(n_estimators=15, sampling="mvs", sample_rate=0.3, random_state=11).fit(X, y)
    c = SmartBoostClassifier(n_estimators=15, sampling="mvs", sample_rate=0.3, random_state=12).fit(X, y)
    assert a.booster_.model_to_string() == b.booster_.model_to_string()
    assert a.booster_.model_to_string() != c.booster_.model_to_string()


def test_ranker_with_qid_in_group_aware_cross_validation():
    from sklearn.model_selection import GroupKFold

    from smartboost.metrics import get_metric
    from smartboost.sklearn import SmartBoostRanker
    from test_ranking import make_ranking

    X, y, sizes = make_ranking(60, seed=4)
    qid = np.repeat(np.arange(60), sizes)
    scores = []
    for train, test in GroupKFold(n_splits=3).split(X, y, qid):
        model = SmartBoostRanker(n_estimators=20, num_leaves=7).fit(X[train], y[train], qid=qid[train])
        starts = np.flatnonzero(np.r_[True, qid[test][1:] != qid[test][:-1], True])
        scores.append(get_metric("ndcg@10")(y[test], model.predict(X[test]), None, None, starts))
    assert min(scores) > 0.7
    with pytest.raises(ValueError, match="needs the queries"):
        SmartBoostRanker().fit(X, y)
    model = SmartBoostRanker(n_estimators=5, metric="ndcg@5").fit(
        X, y, group=sizes, eval_set=[(X, y)], eval_group=[sizes], eval_names=["train"])
    assert len(model.evals_result_["train"]["ndcg@5"]) == 5
