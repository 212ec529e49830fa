"""The scikit-learn estimators: scikit-learn's own estimator checks, and use inside its tools."""

from __future__ import annotations

import warnings

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
from smartboost.errors import DataError, ParameterError, RawScoreWarning
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


@pytest.mark.parametrize("estimator, objective, match", [
    (SmartBoostClassifier, {"objective": "regression"},
     r"needs a classification objective.*'regression', a regression objective \(use SmartBoostRegressor\)"),
    (SmartBoostClassifier, {"loss": "huber"}, "needs a classification objective"),  # by an alias
    (SmartBoostClassifier, {"objective": "lambdarank"}, r"a ranking objective \(use SmartBoostRanker\)"),
    (SmartBoostRegressor, {"objective": "multiclass", "num_class": 2},
     "SmartBoostRegressor predicts one value per row, but objective 'multiclass'"),
])
def test_estimators_refuse_an_objective_of_another_task(estimator, objective, match):
    X, y = make_binary(n=200)
    # the classifier's predict_proba read a regression's predictions as probabilities
    with pytest.raises(ParameterError, match=match):
        estimator(n_estimators=2, **objective).fit(X, y)


def test_estimators_take_the_objective_by_an_alias_and_classify_with_binary_losses():
    X, y = make_binary(n=200)
    # the estimator's default objective stood beside the alias: 'given twice with different values'
    assert SmartBoostRegressor(n_estimators=2, loss="huber").fit(X, y).booster_.objective.name == "huber"
    for objective in ("cross_entropy", "exponential"):
        proba = SmartBoostClassifier(n_estimators=2, objective=objective).fit(X, y).predict_proba(X)
        assert proba.shape == (200, 2) and np.allclose(proba.sum(axis=1), 1.0)
    with pytest.raises(ParameterError, match="objective 'binary' classifies two classes, but y has 3"):
        SmartBoostClassifier(n_estimators=2, objective="binary").fit(X, np.arange(200) % 3)



def test_object_arrays_of_dates_are_refused_as_by_dataset():
    import datetime

    X, y = make_regression(n=100)
    model = SmartBoostRegressor(n_estimators=2).fit(X, y)
    for value in (np.datetime64("2020-01-02"), np.timedelta64(3, "D"), datetime.datetime(2020, 1, 2)):
        dated = X.astype(object)
        dated[5, 1] = value
        kind = type(value).__name__
        # scikit-learn's validation read numpy's as counts of days (a datetime: its own TypeError)
        for use in (lambda data: SmartBoostRegressor(n_estimators=2).fit(data, y), model.predict):
            with pytest.raises(DataError, match=f"column 1 of X holds dates or durations \\({kind} at row 5\\)"):
                use(dated)
            # a list of rows too (numpy's trained as counts of days, a datetime was a TypeError)
            with pytest.raises(DataError, match=f"column 1 of X holds dates or durations \\({kind} at row 5\\)"):
                use(dated.tolist())
        whole = np.full((100, 2), np.datetime64("2020-01-02"))
        for data in (whole, whole.tolist()):
            with pytest.raises(DataError, match=r"X holds dates or durations \((dtype datetime64\[D\]|date at row 0)"):
                SmartBoostRegressor(n_estimators=2).fit(data, y)


def test_scikit_learn_validation_errors_are_data_errors():
    # scikit-learn's messages, as smartboost's type (still a ValueError for scikit-learn's checks)
    X, y = make_regression(n=60)
    fit = SmartBoostRegressor(n_estimators=2).fit
    infinite = np.r_[[np.full(X.shape[1], np.inf)], X[1:]]
    for args, match in [((X, y[:30]), "inconsistent numbers of samples"), ((X, np.r_[np.nan, y[1:]]), "y contains NaN"),
                        ((X[:, 0], y), "Expected 2D array"), ((infinite, y), "infinity"),
                        (([[1.0, 2.0], [3.0]], y[:2]), "inhomogeneous")]:
        with pytest.raises(DataError, match=match):
            fit(*args)
    with pytest.raises(DataError, match="Unknown label type"):
        SmartBoostClassifier(n_estimators=2).fit(X, y)
    model = fit(X, y)
    with pytest.raises(DataError, match=f"X has 2 features, but SmartBoostRegressor is expecting {X.shape[1]}"):
        model.predict(X[:, :2])


def _logloss(label, raw):
    p = 1.0 / (1.0 + np.exp(-raw))
    return p - label, p * (1.0 - p)


def test_classifier_of_a_custom_objective_warns_and_gives_raw_scores_as_lightgbm():
    X, y = make_binary(n=300)
    labels = np.where(y > 0, "yes", "no")
    model = SmartBoostClassifier(n_estimators=5, objective=_logloss).fit(X, labels)
    raw = model.decision_function(X)
    # predict_proba read the raw scores as probabilities of 'yes' (1 - raw beside them)
    with pytest.warns(RawScoreWarning, match=r"predict_proba: .*custom objective.*returns the raw scores"):
        np.testing.assert_array_equal(model.predict_proba(X), raw)
    with pytest.warns(RawScoreWarning, match=r"predict: .*custom objective.*as if they were log-odds"):
        np.testing.assert_array_equal(model.predict(X), np.where(raw > 0, "yes", "no"))
    with warnings.catch_warnings():  # a built-in objective's probabilities: no warning
        warnings.simplefilter("error", RawScoreWarning)
        SmartBoostClassifier(n_estimators=5).fit(X, labels).predict_proba(X)
    # more than two classes: the gradient function trained one score per row, predict_proba gave two columns
    with pytest.raises(ParameterError, match="objective '_logloss' is a gradient function, .* the 3 classes of y"):
        SmartBoostClassifier(n_estimators=5, objective=_logloss).fit(X, np.arange(300) % 3)

def test_multiclass_objective_on_two_classes_gets_num_class_from_them():
    X, y = make_binary(n=300)
    model = SmartBoostClassifier(n_estimators=5, objective="multiclass").fit(X, y)  # was 'needs num_class >= 2'
    assert model.booster_.num_model_per_iteration() == 2 and model.decision_function(X).shape == (300, 2)
    proba = model.predict_proba(X)
    assert proba.shape == (300, 2) and np.allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    with pytest.raises(ParameterError, match="num_class=3 disagrees with the 2 classes of y"):  # 3 columns of proba
        SmartBoostClassifier(n_estimators=2, objective="multiclass", num_class=3).fit(X, y)
    assert SmartBoostClassifier(n_estimators=2, num_class=3).fit(X, np.arange(300) % 3).n_classes_ == 3


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


def test_estimators_explain_their_predictions():
    from smartboost.sklearn import SmartBoostRanker

    X, y = make_binary(n=1500, seed=8)
    labels = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)]
    qid = np.repeat(np.arange(30), 50)
    for model, target, kwargs in ((SmartBoostRegressor(n_estimators=8), X[:, 0] + y, {}),
                                  (SmartBoostClassifier(n_estimators=8), y, {}),
                                  (SmartBoostClassifier(n_estimators=8), labels, {}),
                                  (SmartBoostRanker(n_estimators=8), np.round(y * 2), {"qid": qid})):
        model.fit(X, target, **kwargs)
        booster = model.booster_
        contributions = model.predict(X, pred_contrib=True)
        np.testing.assert_array_equal(contributions, booster.predict(X, pred_contrib=True))
        assert contributions.shape == (1500, booster.num_model_per_iteration() * (X.shape[1] + 1))
        np.testing.assert_array_equal(model.predict(X, pred_leaf=True), booster.predict(X, pred_leaf=True))
    np.testing.assert_allclose(contributions.sum(axis=1), model.predict(X), rtol=1e-9)


def _ranking_frame(n_queries=45, seed=9):
    from test_ranking import make_ranking

    X, y, sizes = make_ranking(n_queries, seed=seed)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame.insert(0, "qid", np.repeat(np.arange(n_queries), sizes))
    return frame, y


def test_ranker_scores_ndcg_and_grid_search_needs_no_scorer():
    from sklearn.model_selection import GroupKFold

    from smartboost.metrics import get_metric
    from smartboost.sklearn import SmartBoostRanker

    frame, y = _ranking_frame()
    qid = frame["qid"].to_numpy()
    X = frame.drop(columns="qid").to_numpy()
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])
    model = SmartBoostRanker(n_estimators=10, num_leaves=7).fit(frame, y)  # queries from the qid column
    assert model.feature_names_in_.tolist() == [c for c in frame.columns if c != "qid"]
    features = frame.drop(columns="qid")
    np.testing.assert_array_equal(model.predict(frame), model.predict(features))
    assert model.score(frame, y) == get_metric("ndcg@10")(y, model.predict(features), None, None, starts)
    assert model.score(features, y, qid=qid) == model.score(frame, y)
    five = SmartBoostRanker(n_estimators=10, num_leaves=7, metric="ndcg@5").fit(X, y, qid=qid)
    assert five.score(X, y, qid=qid) == get_metric("ndcg@5")(y, five.predict(X), None, None, starts)
    with pytest.raises(ValueError, match="needs the queries"):
        model.score(features, y)
    with pytest.raises(ValueError, match="given twice"):
        model.score(frame, y, qid=qid)

    # scikit-learn's default settings: the qid column carries the queries to fit and score
    grid = {"num_leaves": [3, 7], "learning_rate": [0.1, 0.3]}
    search = GridSearchCV(SmartBoostRanker(n_estimators=10), grid, cv=GroupKFold(3)).fit(frame, y,
                                                                                         groups=frame["qid"])
    assert search.best_score_ > 0.6 and set(search.best_params_) == set(grid)
    # by hand: the same folds, fitted and scored with the qid column
    best = search.best_params_
    by_hand = [SmartBoostRanker(n_estimators=10, **best).fit(frame.iloc[tr], y[tr]).score(frame.iloc[te], y[te])
               for tr, te in GroupKFold(3).split(frame, y, frame["qid"])]
    assert search.best_score_ == pytest.approx(np.mean(by_hand), rel=1e-12)


def test_ranker_grid_search_with_metadata_routing():
    import sklearn
    from sklearn.model_selection import GroupKFold

    from smartboost.sklearn import SmartBoostRanker

    frame, y = _ranking_frame(seed=10)
    qid = frame["qid"].to_numpy()
    X = frame.drop(columns="qid").to_numpy()
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = SmartBoostRanker(n_estimators=10).set_fit_request(qid=True).set_score_request(qid=True)
        search = GridSearchCV(ranker, {"num_leaves": [3, 7]}, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
    default = GridSearchCV(SmartBoostRanker(n_estimators=10), {"num_leaves": [3, 7]}, cv=GroupKFold(3)).fit(
        frame, y, groups=qid)
    np.testing.assert_array_equal(search.cv_results_["mean_test_score"], default.cv_results_["mean_test_score"])


def test_eval_sets_weights_and_labels_are_checked_at_fit():
    from smartboost.errors import DataError

    X, y = make_binary(n=200)
    model = SmartBoostClassifier(n_estimators=2)
    assert list(model.fit(X, y, eval_set=(X, y)).evals_result_) == ["valid_0"]  # one pair, as LightGBM takes it
    with pytest.raises(ParameterError, match=r"eval_set\[0\] must be an \(X, y\) pair, got tuple of length 3"):
        model.fit(X, y, eval_set=[(X, y, y)])
    with pytest.raises(ParameterError, match="eval_sample_weight has 1 entries for 2 eval sets"):
        model.fit(X, y, eval_set=[(X, y), (X, y)], eval_sample_weight=[None])
    with pytest.raises(DataError, match=r"labels not in classes_ \[0, 1\]: \['a'\]"):  # not orderable with ints
        model.fit(X, y.astype(int), eval_set=[(X, np.array([1, "a"] * 100, dtype=object))])
    with pytest.raises(DataError, match="one class"):
        model.fit(X, np.ones(200))


def test_ranker_score_checks_the_labels():
    from smartboost.errors import DataError
    from smartboost.sklearn import SmartBoostRanker

    X, y = make_binary(n=200)
    model = SmartBoostRanker(n_estimators=2).fit(X, y, group=[100, 100])
    with pytest.raises(DataError, match="y has 100 entries but the data has 200 rows"):  # was read past its end
        model.score(X, y[:100], group=[100, 100])
    with pytest.raises(DataError, match="y must be numeric"):
        model.score(X, ["a"] * 200, group=[100, 100])


def test_init_score_and_eval_init_score_start_boosting_as_in_the_native_api():
    """An offset (log exposure of a Poisson model) given to fit trains the model the native API
    trains from Dataset(init_score=...), and each eval set is evaluated from its own offsets."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((1200, 4))
    exposure = rng.uniform(0.5, 3.0, 1200)
    y = rng.poisson(exposure * np.exp(0.4 * X[:, 0]))
    offset = np.log(exposure)
    params = {"objective": "poisson", "n_estimators": 15, "num_leaves": 7, "verbosity": -1}
    model = SmartBoostRegressor(**params).fit(X[:900], y[:900], init_score=offset[:900],
                                              eval_set=[(X[900:], y[900:])], eval_init_score=[offset[900:]])
    train = sb.Dataset(X[:900], y[:900], init_score=offset[:900])
    native = sb.train({"objective": "poisson", "num_leaves": 7, "verbosity": -1}, train, 15,
                      valid_sets=[sb.Dataset(X[900:], y[900:], init_score=offset[900:], reference=train)])
    np.testing.assert_array_equal(model.predict(X[900:]), native.predict(X[900:]))
    assert model.evals_result_["valid_0"]["poisson"] == native.evals_result["valid_0"]["poisson"]
    without = SmartBoostRegressor(**params).fit(X[:900], y[:900], init_score=offset[:900],
                                                eval_set=[(X[900:], y[900:])])
    assert without.evals_result_["valid_0"]["poisson"] != model.evals_result_["valid_0"]["poisson"]
    with pytest.raises(ParameterError, match="eval_init_score has 2 entries for 1 eval sets"):
        SmartBoostRegressor(**params).fit(X, y, eval_set=[(X, y)], eval_init_score=[offset, offset])


def test_classifier_takes_an_init_score_per_class():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((900, 4))
    y = np.array(["a", "b", "c"])[np.argmax(X[:, :3] + rng.standard_normal((900, 3)), axis=1)]
    first = SmartBoostClassifier(n_estimators=4, verbosity=-1).fit(X, y)
    rest = SmartBoostClassifier(n_estimators=3, verbosity=-1).fit(X, y, init_score=first.decision_function(X))
    whole = SmartBoostClassifier(n_estimators=7, verbosity=-1).fit(X, y)
    np.testing.assert_allclose(first.decision_function(X) + rest.decision_function(X), whole.decision_function(X),
                               rtol=0, atol=1e-12)
    with pytest.raises(DataError, match="give shape"):
        SmartBoostClassifier(n_estimators=2, verbosity=-1).fit(X, y, init_score=np.zeros(900))


@pytest.mark.parametrize("class_weight", ["balanced", {"hi": 5.0, "lo": 0.5}])
def test_class_weight_equals_lightgbm(class_weight):
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 20, size=(600, 3)).astype(float)  # fewer values than bins: both libraries bin them alike
    score = 0.3 * X[:, 0] - 0.2 * X[:, 1] + rng.standard_normal(600)
    labels = np.array(["lo", "mid", "hi"])[np.digitize(score, np.quantile(score, [0.6, 0.9]))]
    params = dict(n_estimators=5, num_leaves=5, min_child_samples=1, min_child_weight=0, max_bin=63, learning_rate=0.3)
    ours = SmartBoostClassifier(class_weight=class_weight, **params).fit(X, labels)
    theirs = lgb.LGBMClassifier(class_weight=class_weight, verbose=-1, n_jobs=1, deterministic=True, min_data_in_bin=1,
                                **params).fit(X, labels)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-7)
    plain = SmartBoostClassifier(**params).fit(X, labels)
    assert np.abs(ours.predict_proba(X) - plain.predict_proba(X)).max() > 0.05  # the weights were read
    # they multiply the sample weights
    weight = rng.uniform(0.5, 2.0, 600)
    both = SmartBoostClassifier(class_weight=class_weight, **params).fit(X, labels, sample_weight=weight)
    classes, counts = np.unique(labels, return_counts=True)
    per_class = (dict(zip(classes, 600 / (3 * counts))) if class_weight == "balanced"
                 else {**dict.fromkeys(classes, 1.0), **class_weight})
    row_weight = weight * np.array([per_class[c] for c in labels])
    rows = SmartBoostClassifier(**params).fit(X, labels, sample_weight=row_weight)
    np.testing.assert_array_equal(both.predict_proba(X), rows.predict_proba(X))


@pytest.mark.parametrize("estimator, class_weight, match", [
    (SmartBoostClassifier, "bal", "class_weight must be a dict of class weights, 'balanced' or None"),
    (SmartBoostClassifier, {"nope": 1.0}, "class_weight names class 'nope', which y does not have"),
    (SmartBoostClassifier, {"hi": -1.0}, "class_weight of class 'hi' must be a finite number >= 0"),
    (SmartBoostClassifier, {"hi": np.nan}, "class_weight of class 'hi' must be a finite number >= 0"),
    (SmartBoostRegressor, "balanced", "class_weight is for SmartBoostClassifier, not SmartBoostRegressor"),
])
def test_bad_class_weights(estimator, class_weight, match):
    X, y = make_binary(n=100)
    y = np.where(y > 0, "hi", "lo") if estimator is SmartBoostClassifier else y
    with pytest.raises(ParameterError, match=match):
        estimator(class_weight=class_weight, n_estimators=2).fit(X, y)


def test_fit_takes_callbacks_as_lightgbm_after_the_constructors():
    X, y = make_binary(n=600)
    seen = []

    class Seen(sb.TrainingCallback):
        def __init__(self, tag):
            self.tag = tag

        def after_iteration(self, env):
            seen.append((self.tag, env.iteration))
            return False

    model = SmartBoostClassifier(n_estimators=3, callbacks=[Seen("init")])
    model.fit(X, y, eval_set=[(X, y)], callbacks=[Seen("fit"), sb.early_stopping(1)])
    assert seen[:2] == [("init", 0), ("fit", 0)] and len(seen) == 6
    seen.clear()
    SmartBoostRegressor(n_estimators=2).fit(X, y, callbacks=Seen("only"))
    assert seen == [("only", 0), ("only", 1)]
    with pytest.raises(ParameterError, match="must be a smartboost.TrainingCallback"):
        SmartBoostRegressor(n_estimators=2, callbacks=[Seen("a")]).fit(X, y, callbacks=[print])
