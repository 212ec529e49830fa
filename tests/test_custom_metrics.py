"""Custom metrics: ``feval`` of train and cv, ``eval_metric`` of the scikit-learn estimators
(LightGBM's contracts), recorded, logged and watched by early stopping like the built-in ones."""

from __future__ import annotations

import numpy as np
import pytest

import smartboost as sb
from smartboost.errors import DataError, ParameterError
from smartboost.sklearn import SmartBoostClassifier, SmartBoostRanker, SmartBoostRegressor

from conftest import make_binary, make_regression

_PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 20, "learning_rate": 0.3, "verbosity": -1}


def _split(X, y, n_train):
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _binary_sets(n=1200, n_train=900, seed=0):
    X, y = make_binary(n=n, seed=seed)
    X_train, y_train, X_valid, y_valid = _split(X, y, n_train)
    train = sb.Dataset(X_train, y_train)
    return train, sb.Dataset(X_valid, y_valid, reference=train), X_valid


def _logloss(preds, eval_data):
    """The built-in binary logloss, from the probabilities a feval is given."""
    y = eval_data.get_label()
    return "my_logloss", float(np.average(-y * np.log(preds) - (1 - y) * np.log1p(-preds),
                                          weights=eval_data.get_weight())), False


def _scripted(values, higher_is_better, name="scripted"):
    """A feval returning ``values`` one after the other (one evaluation set: one call per iteration)."""
    calls = iter(values)
    return lambda preds, eval_data: (name, float(next(calls)), higher_is_better)


def _multi_logloss(preds, eval_data):
    y = eval_data.get_label().astype(int)
    return "my_multi_logloss", float(np.mean(-np.log(preds[np.arange(y.size), y]))), False


def _weighted_l1(preds, eval_data):
    return "my_l1", float(np.average(np.abs(preds - eval_data.get_label()), weights=eval_data.get_weight())), False


@pytest.mark.parametrize("objective, feval, name", [("regression", _weighted_l1, "my_l1"),
                                                    ("binary", _logloss, "my_logloss")])
def test_feval_values_equal_lightgbm(objective, feval, name):
    """The same feval records the same values under LightGBM on the same data and parameters
    (their trees agree up to LightGBM's float32 gradients): preds are what LightGBM hands it
    (probabilities for binary), eval_data answers get_label/get_weight."""
    lgb = pytest.importorskip("lightgbm")
    X, y = make_regression(n=2000) if objective == "regression" else make_binary(n=2000)
    X_train, y_train, X_valid, y_valid = _split(X, y, 1500)
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y_valid.size).astype(np.float32).astype(np.float64)
    params = {**_PARAMS, "objective": objective, "metric": "None"}
    recorded = {}
    for lib in (sb, lgb):
        train = lib.Dataset(X_train, y_train)
        valid = lib.Dataset(X_valid, y_valid, weight=weight, reference=train)
        result = recorded[lib.__name__] = {}
        lib.train(params, train, 10, valid_sets=[valid], valid_names=["valid"], feval=feval,
                  callbacks=[lib.record_evaluation(result)])
    ours, theirs = recorded["smartboost"]["valid"], recorded["lightgbm"]["valid"]
    assert list(ours) == list(theirs) == [name]
    np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6)


def test_multiclass_preds_are_shaped_as_lightgbm_gives_them():
    """A multiclass feval gets one row per data row and a column per class, each library its
    model's predict at that iteration (their multiclass trees differ, so the values are compared
    with each library's own predictions)."""
    lgb = pytest.importorskip("lightgbm")
    X, _ = make_binary(n=900)
    y = np.digitize(X[:, 0] + X[:, 1], [-0.5, 0.5]).astype(np.float64)
    X_train, y_train, X_valid, y_valid = _split(X, y, 600)
    params = {**_PARAMS, "objective": "multiclass", "num_class": 3, "metric": "None"}
    for lib in (sb, lgb):
        seen = []

        def keep(preds, eval_data):
            seen.append(preds.copy())
            return "my_multi_logloss", _multi_logloss(preds, eval_data)[1], False

        train = lib.Dataset(X_train, y_train)
        booster = lib.train(params, train, 3, valid_sets=[lib.Dataset(X_valid, y_valid, reference=train)], feval=keep)
        assert [preds.shape for preds in seen] == [(300, 3)] * 3
        for i, preds in enumerate(seen):
            np.testing.assert_allclose(preds, booster.predict(X_valid, num_iteration=i + 1), rtol=1e-12)


def test_preds_are_the_predictions_and_a_copy():
    """preds are Booster.predict's of the set at that iteration (raw scores for a custom objective);
    a feval writing into them changes neither the training nor the built-in metrics."""
    train, valid, X_valid = _binary_sets()
    seen = []

    def spoil(preds, eval_data):
        seen.append(preds.copy())
        preds[:] = 0.5
        return "spoil", 0.0, False

    recorded = {}
    booster = sb.train(_PARAMS, train, 5, valid_sets=[valid], feval=spoil, callbacks=[sb.record_evaluation(recorded)])
    plain = sb.train(_PARAMS, train, 5, valid_sets=[valid])
    assert booster.model_to_string() == plain.model_to_string()  # determinism: the model is the same
    assert recorded["valid_0"]["logloss"] == plain.evals_result["valid_0"]["logloss"]
    for i, preds in enumerate(seen):
        np.testing.assert_array_equal(preds, booster.predict(X_valid, num_iteration=i + 1))

    def squared(label, raw):
        return raw - label, np.ones_like(raw)

    seen.clear()
    custom = sb.train({**_PARAMS, "objective": squared}, train, 3, valid_sets=[valid], feval=spoil)
    np.testing.assert_array_equal(seen[-1], custom.predict(X_valid, raw_score=True))


def test_feval_equal_to_a_builtin_records_and_stops_as_it():
    """A feval computing logloss records the built-in's values and early stopping stops at the same
    iteration with the same best score, also as the only metric (metric='None')."""
    train, valid, _ = _binary_sets(seed=3)
    params = {**_PARAMS, "learning_rate": 0.8, "early_stopping_round": 3}
    builtin = sb.train(params, train, 200, valid_sets=[valid])
    both = sb.train(params, train, 200, valid_sets=[valid], feval=_logloss)
    alone = sb.train({**params, "metric": "None"}, train, 200, valid_sets=[valid], feval=_logloss)
    assert builtin.current_iteration() < 200  # it stopped early
    values = builtin.evals_result["valid_0"]["logloss"]
    assert list(both.evals_result["valid_0"]) == ["logloss", "my_logloss"]  # LightGBM's order: built-in first
    assert list(alone.evals_result["valid_0"]) == ["my_logloss"]
    for model in (both, alone):
        np.testing.assert_allclose(model.evals_result["valid_0"]["my_logloss"], values, rtol=1e-12)
        assert model.best_iteration == builtin.best_iteration
        assert model.current_iteration() == builtin.current_iteration()
        assert model.best_score["valid_0"]["my_logloss"] == pytest.approx(
            builtin.best_score["valid_0"]["logloss"], rel=1e-12)


@pytest.mark.parametrize("higher_is_better, best, best_value, stopped", [(True, 5, 5.0, 8), (False, 1, 1.0, 4)])
def test_early_stopping_follows_the_direction_the_feval_returns(higher_is_better, best, best_value, stopped):
    train, valid, _ = _binary_sets()
    feval = _scripted([1, 2, 3, 4, 5, 4, 3, 2, 1, 0, -1], higher_is_better)
    booster = sb.train({**_PARAMS, "metric": "None"}, train, 11, valid_sets=[valid], feval=feval,
                       callbacks=[sb.early_stopping(3, verbose=False)])
    assert (booster.best_iteration, booster.current_iteration()) == (best, stopped)
    assert booster.best_score == {"valid_0": {"scripted": best_value}}


def test_lists_of_values_and_of_functions_and_first_metric_only():
    """A feval may return a list of tuples and feval may be a list of functions; their values follow
    the built-in metrics in order, and first_metric_only watches the first (LightGBM's rule)."""
    train, valid, _ = _binary_sets()
    rising = iter(range(100))
    stalling = iter([1.0] * 100)

    def two(preds, eval_data):
        return [("rising", float(next(rising)), True), ("stalling", next(stalling), True)]

    def third(preds, eval_data):
        return ("third", 0.0, False)

    params = {**_PARAMS, "metric": "None", "early_stopping_round": 2}
    stopped = sb.train(params, train, 10, valid_sets=[valid], feval=[two, third])
    assert list(stopped.evals_result["valid_0"]) == ["rising", "stalling", "third"]
    assert stopped.current_iteration() == 3  # 'stalling' stalled
    rising, stalling = iter(range(100)), iter([1.0] * 100)
    first = sb.train({**params, "first_metric_only": True}, train, 10, valid_sets=[valid], feval=[two, third])
    assert first.current_iteration() == 10 and first.evals_result["valid_0"]["rising"] == list(range(10))
    with_builtin = sb.train({**_PARAMS, "metric": "auc"}, train, 2, valid_sets=[valid], feval=[third])
    assert list(with_builtin.evals_result["valid_0"]) == ["auc", "third"]


def test_feval_sees_every_set_and_is_logged(caplog):
    train, valid, _ = _binary_sets()
    names = []

    def named(preds, eval_data):
        names.append(eval_data is train)
        return "rows", float(eval_data.num_data()), True

    with caplog.at_level("INFO", logger="smartboost"):
        booster = sb.train({**_PARAMS, "verbosity": 1, "progress_bar": False}, train, 2,
                           valid_sets=[train, valid], valid_names=["train", "valid"], feval=named,
                           callbacks=[sb.log_evaluation(1)])
    assert names == [True, False, True, False]
    assert booster.evals_result["valid"]["rows"] == [300.0, 300.0]
    assert "[2]\ttrain's logloss: " in caplog.text and "valid's rows: 300" in caplog.text


def test_cv_records_the_feval_means_and_stops_with_it():
    X, y = make_binary(n=900, seed=4)
    data = sb.Dataset(X, y)
    params = {**_PARAMS, "learning_rate": 0.8}
    builtin = sb.cv({**params, "early_stopping_round": 3}, data, 100, nfold=3, return_cvbooster=True)
    custom = sb.cv({**params, "metric": "None", "early_stopping_round": 3}, data, 100, nfold=3, feval=_logloss,
                   eval_train_metric=True)
    assert set(custom) == {f"{s} my_logloss-{k}" for s in ("train", "valid") for k in ("mean", "stdv")}
    assert len(custom["valid my_logloss-mean"]) == builtin["cvbooster"].best_iteration
    for kind in ("mean", "stdv"):
        np.testing.assert_allclose(custom[f"valid my_logloss-{kind}"], builtin[f"valid logloss-{kind}"], rtol=1e-9)


def test_cv_folds_must_return_the_same_names():
    X, y = make_binary(n=300, seed=4)
    calls = iter(range(100))
    with pytest.raises(DataError, match="fold 1 of cv"):
        sb.cv({**_PARAMS, "metric": "None"}, sb.Dataset(X, y), 2, nfold=3,
              feval=lambda preds, data: (f"name{next(calls)}", 0.0, False))


def _returning(value):
    def bad_metric(preds, eval_data):
        return value
    return bad_metric


@pytest.mark.parametrize("returned, error, match", [
    ("auc", DataError, "got str"),
    (("a", 1.0), DataError, "got a tuple of 2"),
    ([], DataError, "empty list"),
    ([("a", 1.0, True), 3.0], DataError, "got float"),
    (("", 1.0, True), DataError, "non-empty str"),
    ((1, 1.0, True), DataError, "non-empty str"),
    (("a", float("nan"), True), DataError, "finite real number"),
    (("a", np.inf, True), DataError, "finite real number"),
    (("a", "0.5", True), DataError, "finite real number"),
    (("a", np.array([0.5, 0.6]), True), DataError, "finite real number"),
    (("a", True, True), DataError, "finite real number"),
    (("a", 1.0, "yes"), DataError, "is_higher_better 'yes'"),
    (("logloss", 1.0, False), ParameterError, "run's metric 'logloss'"),
    (("Binary_LogLoss", 1.0, False), ParameterError, "run's metric 'logloss'"),
    ([("a", 1.0, True), ("a", 2.0, True)], ParameterError, "returned already"),
])
def test_bad_returns_name_the_function(returned, error, match):
    train, valid, _ = _binary_sets(n=400, n_train=300)
    with pytest.raises(error, match=match) as info:
        sb.train(_PARAMS, train, 2, valid_sets=[valid], feval=_returning(returned))
    assert "custom metric '_returning.<locals>.bad_metric'" in str(info.value)


def test_bad_feval_arguments_and_changing_names():
    train, valid, _ = _binary_sets(n=400, n_train=300)
    with pytest.raises(ParameterError, match="feval '.*one_argument' must take two arguments"):
        def one_argument(preds):
            return "a", 1.0, True
        sb.train(_PARAMS, train, 2, valid_sets=[valid], feval=one_argument)
    with pytest.raises(ParameterError, match=r"feval\[1\] must be a function"):
        sb.train(_PARAMS, train, 2, valid_sets=[valid], feval=[_logloss, "auc"])
    with pytest.raises(ParameterError, match="feval must be a function or a list"):
        sb.train(_PARAMS, train, 2, valid_sets=[valid], feval="auc")
    with pytest.raises(DataError, match="other names or another order at iteration 2 "):
        calls = iter(range(100))
        sb.train(_PARAMS, train, 3, valid_sets=[valid], feval=lambda preds, data: (f"n{next(calls)}", 0.0, False))


def test_an_exception_of_the_feval_goes_on_unchanged():
    train, valid, _ = _binary_sets(n=400, n_train=300)
    raised = KeyError("the user's own")

    def failing(preds, eval_data):
        raise raised

    with pytest.raises(KeyError) as info:
        sb.train(_PARAMS, train, 2, valid_sets=[valid], feval=failing)
    assert info.value is raised
    with pytest.raises(KeyError):
        sb.cv(_PARAMS, train, 2, nfold=2, feval=failing)


def test_dataset_gives_weights_groups_and_init_scores():
    X, y = make_regression(n=10)
    data = sb.Dataset(X, y, weight=np.arange(1.0, 11.0), group=[3, 7], init_score=np.ones(10))
    np.testing.assert_array_equal(data.get_weight(), np.arange(1.0, 11.0))
    np.testing.assert_array_equal(data.get_group(), [3, 7])
    np.testing.assert_array_equal(data.get_init_score(), np.ones(10))
    np.testing.assert_array_equal(data.subset(np.arange(3, 10)).get_group(), [7])
    assert sb.Dataset(X, y).get_group() is None and sb.Dataset(X, y).get_weight() is None


# -- scikit-learn: fit(..., eval_metric=...) -------------------------------------------------


def test_sklearn_eval_metric_arities_and_names():
    """Functions of 2, 3 or 4 parameters get the labels, predictions, weights and query sizes
    (LightGBM's wrapper); names go first, then the objective's metric."""
    X, y = make_binary(n=800, seed=2)
    X_train, y_train, X_valid, y_valid = _split(X, y, 600)
    weight = np.linspace(0.5, 2.0, y_valid.size)
    seen = {}

    def two(y_true, y_pred):
        seen["two"] = (y_true, y_pred)
        return "two", float(np.mean(y_pred)), True

    def three(y_true, y_pred, weight):
        seen["three"] = weight
        return [("three", 1.0, True), ("three_b", 2.0, False)]

    def four(y_true, y_pred, weight, group):
        seen["four"] = group
        return "four", 0.0, True

    model = SmartBoostClassifier(n_estimators=4, num_leaves=7).fit(
        X_train, np.where(y_train == 1, "yes", "no"), eval_set=[(X_valid, np.where(y_valid == 1, "yes", "no"))],
        eval_sample_weight=[weight], eval_metric=["auc", two, three, four])
    assert list(model.evals_result_["valid_0"]) == ["auc", "logloss", "two", "three", "three_b", "four"]
    np.testing.assert_array_equal(seen["two"][0], y_valid)  # the classes' indices
    np.testing.assert_array_equal(seen["two"][1], model.predict_proba(X_valid)[:, 1])
    np.testing.assert_array_equal(seen["three"], weight)
    assert seen["four"] is None

    ranker_seen = {}

    def ranked(y_true, y_pred, weight, group):
        ranker_seen["group"] = group
        return "ranked", 0.0, True

    ranker = SmartBoostRanker(n_estimators=2, min_child_samples=5).fit(
        X_train, y_train, group=[300, 300], eval_set=[(X_valid, y_valid)], eval_group=[[120, 80]],
        eval_metric=[ranked, "map@3"])
    np.testing.assert_array_equal(ranker_seen["group"], [120, 80])
    assert list(ranker.evals_result_["valid_0"]) == ["map@3", "ndcg@10", "ranked"]


def test_sklearn_eval_metric_with_a_metric_parameter_and_early_stopping():
    X, y = make_regression(n=1200, seed=6)
    X_train, y_train, X_valid, y_valid = _split(X, y, 900)

    def l1(y_true, y_pred):
        return "my_l1", float(np.mean(np.abs(y_pred - y_true))), False

    kwargs = {"n_estimators": 300, "learning_rate": 0.5, "early_stopping_rounds": 3}
    builtin = SmartBoostRegressor(metric="l1", **kwargs).fit(X_train, y_train, eval_set=[(X_valid, y_valid)])
    custom = SmartBoostRegressor(metric="None", **kwargs).fit(X_train, y_train, eval_set=[(X_valid, y_valid)],
                                                             eval_metric=l1)
    assert builtin.n_iter_ < 300
    assert (custom.best_iteration_, custom.n_iter_) == (builtin.best_iteration_, builtin.n_iter_)
    np.testing.assert_allclose(custom.evals_result_["valid_0"]["my_l1"], builtin.evals_result_["valid_0"]["mae"],
                               rtol=1e-12)
    both = SmartBoostRegressor(metric="mae", n_estimators=2).fit(X_train, y_train, eval_set=[(X_valid, y_valid)],
                                                                eval_metric=["l2", "l1"])
    assert list(both.evals_result_["valid_0"]) == ["mse", "mae"]
    assert "eval_metric" not in both.get_params()  # fit's argument is not a parameter of the estimator


@pytest.mark.parametrize("eval_metric, match", [
    (3, "eval_metric must be a metric name, a function or a list"),
    (["l2", 3], r"eval_metric\[1\] must be a metric name or a function"),
    ("no_such_metric", "unknown metric 'no_such_metric'"),
    (lambda y_true: ("a", 1.0, True), "takes 1 positional parameters"),
    (lambda a, b, c, d, e: ("a", 1.0, True), "takes 5 positional parameters"),
])
def test_sklearn_bad_eval_metric(eval_metric, match):
    X, y = make_regression(n=200)
    with pytest.raises(ParameterError, match=match):
        SmartBoostRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)], eval_metric=eval_metric)


def test_sklearn_bad_return_names_the_users_function():
    X, y = make_regression(n=200)

    def my_metric(y_true, y_pred):
        return "a", float("nan"), False

    with pytest.raises(DataError, match="custom metric 'test_sklearn_bad_return_names_the_users_function.<locals>."
                                        "my_metric' returned eval_result nan"):
        SmartBoostRegressor(n_estimators=2).fit(X, y, eval_set=[(X, y)], eval_metric=my_metric)


# -- Booster.eval ------------------------------------------------------------------------------

def test_booster_eval_gives_the_last_recorded_values(tmp_path):
    train, valid, X_valid = _binary_sets()
    history = {}
    booster = sb.train({**_PARAMS, "metric": ["auc", "binary_logloss"]}, train, 8, valid_sets=[valid],
                       valid_names=["v"], feval=_logloss, callbacks=[sb.record_evaluation(history)])
    assert list(history["v"]) == ["auc", "logloss", "my_logloss"]
    expected = [("v", metric, values[-1], metric == "auc") for metric, values in history["v"].items()]
    assert booster.eval(valid, "v", feval=_logloss) == expected
    # a loaded model, and data binned with it as the reference: its metric parameter comes with it
    booster.save_model(tmp_path / "m.json")
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    assert loaded.eval(sb.Dataset(X_valid, valid.get_label(), reference=loaded), "v") == expected[:2]
    # a Dataset not binned yet, without a reference, is binned with the model's edges
    assert loaded.eval(sb.Dataset(X_valid, valid.get_label()), "v") == expected[:2]
    other_bins = sb.Dataset(X_valid, valid.get_label(), params={"max_bin": 15}).construct()
    with pytest.raises(DataError, match="binned differently from the model's training data"):
        booster.eval(other_bins, "v")
    with pytest.raises(DataError, match="data 'v' has no label"):
        booster.eval(sb.Dataset(X_valid, reference=train), "v")
    with pytest.raises(ParameterError, match="data must be a smartboost.Dataset"):
        booster.eval(X_valid, "v")


def test_booster_eval_of_a_ranker_needs_queries_and_uses_its_label_gain():
    X, y = make_regression(n=400, seed=5)
    grade = np.digitize(y, np.quantile(y, [0.5, 0.8, 0.95]))
    params = {"objective": "lambdarank", "metric": "ndcg@5", "label_gain": [0, 1, 7, 20], "min_data_in_leaf": 5,
              "verbosity": -1}
    train = sb.Dataset(X, grade, group=[20] * 20)
    history = {}
    booster = sb.train(params, train, 3, valid_sets=[train], valid_names=["t"],
                       callbacks=[sb.record_evaluation(history)])
    assert booster.eval(train, "t") == [("t", "ndcg@5", history["t"]["ndcg@5"][-1], True)]
    with pytest.raises(DataError, match="'t' has no queries, which metric 'ndcg@5' needs"):
        booster.eval(sb.Dataset(X, grade, reference=train), "t")
