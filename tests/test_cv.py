"""Cross-validation (``smartboost.cv``) and ``Dataset.subset``."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_binary, make_regression

import smartboost as sb
import smartboost.datasets
from smartboost.errors import DataError, ParameterError

_PARAMS = {"objective": "binary", "num_leaves": 15, "min_data_in_leaf": 10, "metric": ["auc", "logloss"],
           "verbosity": -1}


@pytest.fixture(scope="module")
def a9a_like():
    """The first 12,000 rows of a9a when the shared data folder has it, else a generated set."""
    if (Path(os.environ.get("SMARTBOOST_DATA", "")) / "a9a" / "a9a.gz").exists():
        X, y, _, _ = sb.datasets.load("a9a", download=False)
        return np.asarray(X[:12_000].todense() if sp.issparse(X) else X[:12_000]), y[:12_000]
    return make_binary(n=12_000, n_features=20, seed=50)


def _by_hand(params, X, y, folds, rounds, **data):
    """Each fold trained by ``train`` on its own Dataset, binned with the full data's edges."""
    full = sb.Dataset(X, y, **data)
    histories = []
    for train_rows, test_rows in folds:
        pick = lambda rows: {k: (v[rows] if v is not None else None) for k, v in data.items()}  # noqa: E731
        train_set = sb.Dataset(X[train_rows], y[train_rows], reference=full, **pick(train_rows))
        valid_set = sb.Dataset(X[test_rows], y[test_rows], reference=full, **pick(test_rows))
        booster = sb.train(params, train_set, rounds, valid_sets=[train_set, valid_set], valid_names=["train", "valid"])
        histories.append(booster.evals_result)
    return histories


def test_cv_gives_the_mean_curves_of_the_folds_trained_by_hand(a9a_like):
    X, y = a9a_like
    folds = [(np.flatnonzero(np.arange(y.size) % 3 != k), np.flatnonzero(np.arange(y.size) % 3 == k)) for k in range(3)]
    result = sb.cv(_PARAMS, sb.Dataset(X, y), 6, folds=folds, eval_train_metric=True)
    histories = _by_hand(_PARAMS, X, y, folds, 6)
    assert set(result) == {f"{d} {m}-{s}" for d in ("train", "valid") for m in ("auc", "logloss")
                           for s in ("mean", "stdv")}
    for data in ("train", "valid"):
        for metric in ("auc", "logloss"):
            values = np.array([h[data][metric] for h in histories]).T  # (iterations, folds)
            assert result[f"{data} {metric}-mean"] == [np.mean(v) for v in values]
            assert result[f"{data} {metric}-stdv"] == [np.std(v) for v in values]


def test_cv_builds_stratified_folds_and_is_deterministic():
    X, y = make_binary(n=3000, seed=51)
    y[:2400] = 0.0  # unbalanced: 10% positives at most
    dataset = sb.Dataset(X, y)
    first = sb.cv(_PARAMS, dataset, 3, nfold=4, return_cvbooster=True, seed=7)
    again = sb.cv(_PARAMS, dataset, 3, nfold=4, seed=7)
    other = sb.cv(_PARAMS, dataset, 3, nfold=4, seed=8)
    assert {k: v for k, v in first.items() if k != "cvbooster"} == again
    assert again != other
    boosters = first["cvbooster"].boosters
    assert len(boosters) == 4 and all(b.current_iteration() == 3 for b in boosters)
    from smartboost.crossval import _folds
    folds = _folds(dataset, boosters[0].objective, 4, True, True, None, 7)
    assert sorted(np.concatenate([test for _, test in folds]).tolist()) == list(range(3000))
    share = [y[test].mean() for _, test in folds]
    assert max(share) - min(share) < 2 / 750  # each fold holds the positives in proportion
    predictions = first["cvbooster"].predict(X[:5])
    assert len(predictions) == 4 and all(p.shape == (5,) for p in predictions)


def test_early_stopping_stops_on_the_mean_and_cuts_at_the_best_iteration():
    X, y = make_regression(n=1500, seed=52)
    y = y + 3.0 * np.random.default_rng(0).standard_normal(y.size)  # noisy: overfits soon
    params = {"objective": "regression", "num_leaves": 31, "min_data_in_leaf": 2, "learning_rate": 0.5,
              "verbosity": -1}
    full = sb.cv(params, sb.Dataset(X, y), 60, nfold=3)
    best = int(np.argmin(full["valid rmse-mean"])) + 1
    assert best < 50
    for stopping in ({"params": {**params, "early_stopping_round": 5}},
                     {"params": params, "callbacks": [sb.early_stopping(5, verbose=False)]}):
        result = sb.cv(stopping["params"], sb.Dataset(X, y), 60, nfold=3, callbacks=stopping.get("callbacks"),
                       return_cvbooster=True)
        assert len(result["valid rmse-mean"]) == best == result["cvbooster"].best_iteration
        assert result["valid rmse-mean"] == full["valid rmse-mean"][:best]
        assert all(b.best_iteration == best for b in result["cvbooster"].boosters)
        assert result["cvbooster"].boosters[0].current_iteration() < 60
    # continuing a model: best_iteration counts its iterations, the lists hold the new ones (they
    # were cut at best_iteration entries, as many more as the model had)
    start = sb.train(params, sb.Dataset(X, y), 2)
    full = sb.cv(params, sb.Dataset(X, y), 60, nfold=3, init_model=start)
    best = int(np.argmin(full["valid rmse-mean"])) + 1
    result = sb.cv({**params, "early_stopping_round": 5}, sb.Dataset(X, y), 60, nfold=3, init_model=start,
                   return_cvbooster=True)
    assert result["valid rmse-mean"] == full["valid rmse-mean"][:best]
    assert result["cvbooster"].best_iteration == 2 + best


def test_ranking_folds_keep_queries_whole():
    X, y, qid = sb.datasets.make_ranking_like(24, seed=3)
    X = X[:, :10]
    dataset = sb.Dataset(X, y, qid=qid)
    params = {"objective": "lambdarank", "num_leaves": 7, "metric": "ndcg@5", "verbosity": -1}
    result = sb.cv(params, dataset, 3, nfold=4, return_cvbooster=True)
    assert len(result["valid ndcg@5-mean"]) == 3
    from smartboost.crossval import _folds
    folds = _folds(dataset, result["cvbooster"].boosters[0].objective, 4, True, True, None, 0)
    for train_rows, test_rows in folds:
        assert not set(qid[train_rows]) & set(qid[test_rows])
    sizes = [test.size for _, test in folds]
    assert max(sizes) - min(sizes) <= np.bincount(qid).max()
    group_kfold = pytest.importorskip("sklearn.model_selection").GroupKFold(3)
    by_splitter = sb.cv(params, dataset, 3, folds=group_kfold)
    splits = list(group_kfold.split(X, y, qid))
    histories = _by_hand(params, X, y, splits, 3, qid=qid)
    assert by_splitter["valid ndcg@5-mean"] == [np.mean(v) for v in np.array([h["valid"]["ndcg@5"]
                                                                                for h in histories]).T]


def test_metrics_argument_replaces_the_params_metric():
    X, y = make_binary(n=1000, seed=53)
    result = sb.cv({**_PARAMS, "eval_metric": "auc"}, sb.Dataset(X, y), 2, nfold=3, metrics="error")
    assert set(result) == {"valid error-mean", "valid error-stdv"}
    with pytest.raises(ParameterError, match="nfold"):
        sb.cv(_PARAMS, sb.Dataset(X, y), 2, nfold=1)


def test_cv_trains_sign_trees_and_refuses_them_with_newton_steps():
    X, y = make_binary(n=1200, seed=51)
    params = {**_PARAMS, "boosting": "gradient", "weak_learner": "sign", "step_rule": "line"}
    folds = [(np.flatnonzero(np.arange(y.size) % 3 != k), np.flatnonzero(np.arange(y.size) % 3 == k)) for k in range(3)]
    result = sb.cv(params, sb.Dataset(X, y), 5, folds=folds)
    auc = np.array([h["valid"]["auc"] for h in _by_hand(params, X, y, folds, 5)]).T
    assert result["valid auc-mean"] == [np.mean(v) for v in auc]
    assert result["valid auc-mean"][-1] > 0.7
    with pytest.raises(ParameterError, match="boosting='gradient'"):
        sb.cv({**_PARAMS, "weak_learner": "sign"}, sb.Dataset(X, y), num_boost_round=5, nfold=3)


def test_subset_keeps_bins_labels_weights_scores_and_queries():
    rng = np.random.default_rng(54)
    X = rng.standard_normal((300, 4))
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, 3] = 1.0  # constant in the subset's rows too
    y, w, s = rng.integers(0, 3, 300).astype(float), rng.uniform(0.5, 2, 300), rng.standard_normal(300)
    group = [30] * 10
    full = sb.Dataset(X, y, weight=w, init_score=s, group=group, feature_name=list("abcd"))
    rows = np.flatnonzero(np.repeat(np.arange(10), 30) % 3 != 1)
    subset = full.subset(rows)
    rebinned = sb.Dataset(X[rows], y[rows], weight=w[rows], init_score=s[rows], group=[30] * subset.num_queries(),
                          reference=full)
    np.testing.assert_array_equal(subset.binned.row_major, rebinned.binned.row_major)
    np.testing.assert_array_equal(subset.binned.missing_count, rebinned.binned.missing_count)
    np.testing.assert_array_equal(subset.binned.usable_features, rebinned.binned.usable_features)
    for name in ("label", "weight", "init_score", "query_starts"):
        np.testing.assert_array_equal(getattr(subset, name), getattr(rebinned, name))
    assert subset.feature_name == list("abcd") and subset.bin_mapper is full.bin_mapper
    np.testing.assert_array_equal(full.subset(np.isin(np.arange(300), rows)).label, y[rows])
    with pytest.raises(DataError, match="query"):
        full.subset(np.array([40, 41, 5]))
    with pytest.raises(DataError, match="outside"):
        full.subset([0, 300])
    with pytest.raises(DataError, match="weight sums to zero"):
        sb.Dataset(X, y, weight=np.r_[np.zeros(150), np.ones(150)]).subset(np.arange(150))


def test_cv_with_categorical_features_equals_the_folds_trained_by_hand():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(55)
    n = 3000
    city = rng.integers(0, 30, n)
    frame = pd.DataFrame({"x": rng.standard_normal(n),
                          "city": pd.Categorical(np.array([f"c{i}" for i in range(30)], dtype=object)[city])})
    y = (rng.standard_normal(30)[city] + frame["x"].to_numpy() + rng.standard_normal(n) > 0).astype(float)
    params = {**_PARAMS, "min_data_per_group": 10, "cat_smooth": 1.0}
    folds = [(np.flatnonzero(np.arange(n) % 3 != k), np.flatnonzero(np.arange(n) % 3 == k)) for k in range(3)]
    full = sb.Dataset(frame, y)
    assert full.bin_mapper.categorical.tolist() == [False, True]
    subset = full.subset(folds[0][0])
    rebinned = sb.Dataset(frame.iloc[folds[0][0]], y[folds[0][0]], reference=full)
    np.testing.assert_array_equal(subset.binned.row_major, rebinned.binned.row_major)
    result = sb.cv(params, full, 5, folds=folds, return_cvbooster=True)
    assert all(any(t.categorical_nodes.any() for t in b.trees) for b in result["cvbooster"].boosters)
    histories = []
    for train_rows, test_rows in folds:
        train_set = sb.Dataset(frame.iloc[train_rows], y[train_rows], reference=full)
        valid_set = sb.Dataset(frame.iloc[test_rows], y[test_rows], reference=full)
        histories.append(sb.train(params, train_set, 5, valid_sets=[valid_set], valid_names=["valid"]).evals_result)
    for metric in ("auc", "logloss"):
        values = np.array([h["valid"][metric] for h in histories]).T
        assert result[f"valid {metric}-mean"] == [np.mean(v) for v in values]


@pytest.mark.parametrize("kwargs, match", [
    ({"nfold": 10}, "nfold=10 is more than the 6 rows of train_set"),
    ({"nfold": 2, "seed": -1}, r"'seed' must be in \[0, "),
    ({"nfold": 2, "seed": "a"}, "'seed' must be an integer"),
    ({"folds": 3}, "folds must be a scikit-learn splitter or a list"),
    ({"folds": [(np.arange(3), np.arange(3, 6)), "x"]}, r"folds\[1\] must be a \(train_idx, test_idx\) pair"),
    # the fold's indices were checked by Dataset.subset, whose errors named 'used_indices'
    ({"folds": [(np.arange(3), np.arange(3, 7))]}, r"folds\[0\]'s test_idx holds 6, outside the rows \[0, 6\)"),
    ({"folds": [(np.arange(-1, 3), np.arange(3, 6))]}, r"folds\[0\]'s train_idx holds -1"),
    ({"folds": [(np.arange(6), [])]}, r"folds\[0\]'s test_idx is empty"),
    ({"folds": [(np.arange(3.0), np.arange(3, 6))]}, r"folds\[0\]'s train_idx must be a 1-dimensional array of row"),
    # a splitter's own error (GroupKFold without groups: train_set has no queries) was a raw ValueError
    ({"folds": "GroupKFold"}, r"folds.split\(X, y, groups\) failed: .*groups.*pass folds=list\(splitter.split"),
])
def test_bad_folds_nfold_and_seed_are_parameter_errors(kwargs, match):
    X, y = make_regression(n=6, seed=1)
    if kwargs.get("folds") == "GroupKFold":
        kwargs = {"folds": pytest.importorskip("sklearn.model_selection").GroupKFold(2)}
    with pytest.raises(ParameterError, match=match):
        sb.cv({"verbosity": -1}, sb.Dataset(X, y), 2, **kwargs)


def test_given_folds_keep_queries_whole_and_errors_name_the_fold():
    """Folds cutting a query trained on part of it and scored the rest (LightGBM refuses them);
    an error of a fold's rows did not say which fold."""
    X, y, qid = sb.datasets.make_ranking_like(6, seed=3)
    dataset = sb.Dataset(X[:, :5], y, qid=qid)
    params = {"objective": "lambdarank", "num_leaves": 7, "verbosity": -1}
    n, first = y.size, np.flatnonzero(qid == qid[0])
    match = rf"folds\[0\]'s train_idx takes {first.size - 1} of the {first.size} rows of query 0"
    with pytest.raises(ParameterError, match=match):
        sb.cv(params, dataset, 2, folds=[(np.arange(1, n), np.arange(1))])
    with pytest.raises(ParameterError, match="needs the queries of train_set"):
        sb.cv(params, sb.Dataset(X[:, :5], y), 2, nfold=2)
    X, y = make_binary(n=90, seed=5)
    y[:] = 0.0
    y[[3, 4]] = 1.0
    with pytest.raises(DataError, match=r"fold 1 of cv \(88 training rows, 2 held out\): label holds a single class"):
        sb.cv(_PARAMS, sb.Dataset(X, y), 2, folds=[(np.arange(2, 90), np.arange(2)), (np.r_[0:3, 5:90], [3, 4])])
    with pytest.raises(DataError, match="^train_set has no label$"):  # folds were stratified by None
        sb.cv(_PARAMS, sb.Dataset(X), 2, nfold=3)


def test_record_and_log_evaluation_give_the_means_and_deviations_over_the_folds(caplog):
    """As LightGBM's: record_evaluation recorded the means alone under the metric's name, and
    log_evaluation logged them without the deviations."""
    X, y = make_binary(n=300, seed=5)
    recorded = {}
    with caplog.at_level("INFO", logger="smartboost"):
        result = sb.cv({**_PARAMS, "verbosity": 1, "progress_bar": False}, sb.Dataset(X, y), 3, nfold=3,
                       return_cvbooster=True,
                       callbacks=[sb.record_evaluation(recorded), sb.log_evaluation(3)])
    expected = {"valid": {f"{m}-{s}": result[f"valid {m}-{s}"] for m in ("auc", "logloss") for s in ("mean", "stdv")}}
    assert recorded == result["cvbooster"].evals_result == expected
    stdv = result["valid auc-stdv"][-1]
    assert f"[3]\tvalid's auc: {result['valid auc-mean'][-1]:.6g} + {stdv:.6g}" in caplog.text


def test_a_checkpoint_callback_is_refused(tmp_path):
    """It failed at its first save with an AttributeError ('CVBooster' has no save_model)."""
    X, y = make_regression(n=60, seed=1)
    with pytest.raises(ParameterError, match="checkpoint callback saves one model, and cv trains one per fold"):
        sb.cv({"verbosity": -1}, sb.Dataset(X, y), 2, nfold=3, callbacks=[sb.checkpoint(tmp_path / "m.json", 1)])


def test_nfold_may_be_a_numpy_integer():
    X, y = make_regression(n=60, seed=1)
    result = sb.cv({"verbosity": -1}, sb.Dataset(X, y), 2, nfold=np.int64(3), return_cvbooster=True)
    assert len(result["cvbooster"].boosters) == 3
