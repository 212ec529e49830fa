"""Every kind of bad input gets a clear error naming the problem."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_binary

import smartboost as sb
from smartboost.errors import DataError, ParameterError


@pytest.mark.parametrize("bad, match", [
    (np.nan, "label contains nan at row 3"),
    (np.inf, "label contains inf at row 3"),
])
def test_non_finite_labels(bad, match):
    y = np.zeros(10)
    y[3] = bad
    with pytest.raises(DataError, match=match):
        sb.Dataset(np.ones((10, 2)), y)


@pytest.mark.parametrize("X, match", [
    (np.ones(10), "2-dimensional.*reshape"),
    (np.ones((2, 3, 4)), "2-dimensional"),
    (np.ones((0, 3)), "no rows"),
    (np.ones((5, 0)), "no features"),
    (np.array([["a", "b"], ["c", "d"]]), "non-numeric"),
    (np.ones((3, 2)) * 1j, "complex"),
    (None, "None"),
])
def test_bad_feature_matrices(X, match):
    with pytest.raises(DataError, match=match):
        sb.Dataset(X, np.zeros(len(X) if X is not None and np.ndim(X) else 1))


def test_dataframe_with_text_column():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0], "city": ["x", "y"]})
    with pytest.raises(DataError, match="non-numeric columns: 'city'"):
        sb.Dataset(df, [0, 1])


def test_label_and_weight_shapes():
    X = np.ones((10, 2))
    with pytest.raises(DataError, match="label has 9 entries but the data has 10 rows"):
        sb.Dataset(X, np.zeros(9))
    with pytest.raises(DataError, match="label must be 1-dimensional"):
        sb.Dataset(X, np.zeros((10, 2)))
    with pytest.raises(DataError, match="negative value"):
        sb.Dataset(X, np.zeros(10), weight=-np.ones(10))
    with pytest.raises(DataError, match="weight sums to zero"):
        sb.Dataset(X, np.zeros(10), weight=np.zeros(10))


def test_binary_objective_label_errors():
    X = np.random.default_rng(0).standard_normal((20, 2))
    with pytest.raises(DataError, match="single class"):
        sb.train({"objective": "binary"}, sb.Dataset(X, np.ones(20)))
    with pytest.raises(DataError, match="single class"):
        sb.train({"objective": "binary"}, sb.Dataset(X, -np.ones(20)))  # -1/+1 labels are read as 0/1
    with pytest.raises(DataError, match=r"must be 0 or 1 \(or -1 and \+1\).*row 2 has -1"):
        sb.train({"objective": "binary"}, sb.Dataset(X, np.r_[0.0, 1.0, -np.ones(18)]))
    with pytest.raises(DataError, match="has no label"):
        sb.train({"objective": "binary"}, sb.Dataset(X))


def test_unknown_and_bad_parameters_in_train():
    X, y = make_binary(n=100)
    train = sb.Dataset(X, y)
    with pytest.raises(ParameterError, match="unknown parameter 'learnig_rate'"):
        sb.train({"learnig_rate": 0.1}, train)
    with pytest.raises(ParameterError, match="num_leaves"):
        sb.train({"num_leaves": -3}, train)
    with pytest.raises(ParameterError, match="max_bin.*Dataset"):
        sb.train({"max_bin": 15}, train)
    with pytest.raises(ParameterError, match="train_set must be a smartboost.Dataset"):
        sb.train({}, X)


def test_valid_set_binned_differently_or_unlabelled():
    X, y = make_binary(n=200)
    train = sb.Dataset(X, y)
    with pytest.raises(DataError, match="reference=train_set"):
        sb.train({"objective": "binary"}, train, 2, valid_sets=[sb.Dataset(X[:50] * 2, y[:50])])
    with pytest.raises(DataError, match="has no label"):
        sb.train({"objective": "binary"}, train, 2, valid_sets=[sb.Dataset(X[:50], reference=train)])
    with pytest.raises(DataError, match="data has 5 features but the reference has 6"):
        sb.Dataset(X[:, :5], y, reference=train)


def test_predict_with_wrong_feature_count():
    X, y = make_binary(n=200)
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 2)
    with pytest.raises(DataError, match="data has 5 features but the model was trained on 6"):
        booster.predict(X[:, :5])


def test_nan_and_inf_features_are_missing_values_not_errors():
    X, y = make_binary(n=500)
    X[::3, 0] = np.nan
    X[::5, 1] = np.inf
    X[::7, 2] = -np.inf
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 5)
    p = booster.predict(np.full((4, 6), np.nan))
    assert np.all(np.isfinite(p))
    p = booster.predict(np.where(np.isfinite(X), X, 1e308))
    assert np.all(np.isfinite(p))


def test_sparse_and_dataframe_inputs_predict_like_dense():
    pd = pytest.importorskip("pandas")
    X, y = make_binary(n=500)
    X[np.abs(X) < 0.5] = 0.0
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 5)
    expected = booster.predict(X)
    np.testing.assert_array_equal(booster.predict(sp.csr_matrix(X)), expected)
    np.testing.assert_array_equal(booster.predict(np.asfortranarray(X)), expected)
    np.testing.assert_array_equal(booster.predict(X.astype(np.float32)),
                                  booster.predict(X.astype(np.float32).astype(np.float64)))
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    named = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(df, y), 5)
    assert named.feature_name() == [f"f{i}" for i in range(6)]
    np.testing.assert_array_equal(named.predict(df), expected)
    with pytest.raises(DataError, match="differ from the model's feature names"):
        named.predict(df.rename(columns={"f0": "other"}))
