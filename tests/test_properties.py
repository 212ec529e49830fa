"""Property-based checks (hypothesis) of the kernels against direct references."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.metrics import roc_auc_score

import smartboost as sb
from smartboost.binning import BinMapper
from smartboost.metrics import get_metric

_values = st.one_of(st.floats(-1e6, 1e6), st.just(np.nan), st.just(np.inf), st.just(-np.inf), st.just(0.0))


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 60), st.integers(1, 4)), elements=_values),
       st.integers(2, 20))
def test_binning_is_monotone_and_matches_thresholds(X, max_bin):
    mapper = BinMapper(max_bin=max_bin).fit(X)
    bins = mapper.transform(X).row_major
    for f in range(X.shape[1]):
        column, b = X[:, f], bins[:, f].astype(int)
        missing = np.isnan(column)
        assert np.all(b[missing] == mapper.n_bins[f])
        assert np.all(b[~missing] < mapper.n_bins[f]) and mapper.n_bins[f] <= max_bin
        order = np.argsort(column[~missing], kind="stable")
        assert np.all(np.diff(b[~missing][order]) >= 0)  # larger values never get smaller bins
        t = mapper.thresholds(f)
        for k in range(mapper.n_bins[f]):
            np.testing.assert_array_equal(b[~missing] <= k, column[~missing] <= t[k])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 200), st.integers(0, 2**31), st.booleans())
def test_auc_equals_sklearn(n, seed, weighted):
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(float)
    y[0], y[1] = 0.0, 1.0
    score = np.round(rng.standard_normal(n), int(rng.integers(0, 3)))
    w = rng.random(n) + 1e-3 if weighted else None
    assert abs(get_metric("auc")(y, score, score, w) - roc_auc_score(y, score, sample_weight=w)) < 1e-12


@settings(max_examples=25, deadline=None)
@given(st.integers(20, 300), st.integers(1, 5), st.integers(0, 2**31), st.floats(0.0, 0.5))
def test_raw_and_binned_prediction_agree(n, n_features, seed, missing_rate):
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((n, n_features)), 1)
    X[rng.random(X.shape) < missing_rate] = np.nan
    y = rng.standard_normal(n)
    train = sb.Dataset(X, y)
    booster = sb.train({"num_leaves": 7, "min_data_in_leaf": 1, "verbosity": -1}, train, 3)
    binned = np.full(n, booster.base_score)
    booster.predict_binned(train.binned, binned)
    np.testing.assert_array_equal(booster.predict(X, raw_score=True), binned)
