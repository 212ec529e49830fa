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
    (b"1,2\n", "data is a bytes, not a feature matrix: give the data in memory"),
])
def test_bad_feature_matrices(X, match):
    with pytest.raises(DataError, match=match):
        sb.Dataset(X, np.zeros(len(X) if X is not None and np.ndim(X) else 1))


def test_dataframe_with_text_column_not_declared_categorical():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": [1.0, 2.0], "city": ["x", "y"]})
    with pytest.raises(DataError, match="column 'city' holds text but is not a categorical feature"):
        sb.Dataset(df, [0, 1], categorical_feature=[])


def test_a_feature_name_given_twice_is_named():
    X = np.zeros((4, 3))
    with pytest.raises(DataError, match="feature names must be unique: 'a' names features 0 and 2"):
        sb.Dataset(X, np.zeros(4), feature_name=["a", "b", "a"])


def test_a_complex_column_of_a_frame_is_refused_as_a_complex_array_is():
    # a frame's complex column became a text category per value
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"x": np.arange(10.0), "z": np.arange(10) + 1j})
    with pytest.raises(DataError, match=r"column 'z' is complex \(dtype complex128\); only real numbers"):
        sb.Dataset(frame, np.zeros(10))
    booster = sb.train({"verbosity": -1, "min_data_in_leaf": 1}, sb.Dataset(frame.assign(z=1.0), np.arange(10.0)), 1)
    with pytest.raises(DataError, match="column 'z' is complex"):
        booster.predict(frame)


def test_dates_and_durations_are_refused_naming_the_column():
    pd = pytest.importorskip("pandas")
    days = np.arange("2020-01-01", "2020-01-11", dtype="datetime64[D]")
    frame = pd.DataFrame({"x": np.ones(10), "when": days})
    # the arrays became counts of days silently, the frame's column a text category per date
    for data in (days.reshape(-1, 1), (days - days[0]).reshape(-1, 1)):
        with pytest.raises(DataError, match="data holds dates or durations .*in every column; convert them"):
            sb.Dataset(data, np.zeros(10))
    booster = sb.train({"verbosity": -1, "min_data_in_leaf": 1}, sb.Dataset(frame.assign(when=1.0), np.arange(10.0)),
                       1)
    for column in (days, days - days[0], pd.period_range("2020-01", periods=10, freq="M")):
        with pytest.raises(DataError, match="column 'when' holds dates or durations"):
            sb.Dataset(frame.assign(when=column), np.zeros(10))
        with pytest.raises(DataError, match="column 'when' holds dates or durations"):
            booster.predict(frame.assign(when=column))


def test_dates_and_durations_in_object_arrays_and_columns_are_refused_naming_the_column():
    import datetime

    pd = pytest.importorskip("pandas")
    booster = sb.train({"verbosity": -1, "min_data_in_leaf": 1},
                       sb.Dataset(pd.DataFrame({"x": np.arange(4.0), "when": 1.0}), np.arange(4.0)), 1)
    uses = (lambda data: sb.Dataset(data, np.zeros(4)), booster.predict)  # training and prediction
    for value in (np.datetime64("2020-01-02"), np.timedelta64(3, "D"), datetime.datetime(2020, 1, 2),
                  datetime.date(2020, 1, 2), datetime.timedelta(days=3), pd.Timestamp("2020-01-02"),
                  pd.Timedelta(days=3), pd.Period("2020-01", freq="M")):
        kind = type(value).__name__
        # numpy's became counts of their unit (astype), the others the frame's text categories
        array = np.array([[0.0, 1.0], [1.0, 1.0], [2.0, value], [3.0, 1.0]], dtype=object)
        for use in uses:
            with pytest.raises(DataError, match=f"column 1 of data holds dates or durations \\({kind} at row 2\\)"):
                use(array)
        frame = pd.DataFrame({"x": np.arange(4.0), "when": pd.Series([value, None, value, value], dtype=object)})
        for use in uses:
            with pytest.raises(DataError, match=f"column 'when' holds dates or durations \\({kind} values"):
                use(frame)
    # object data without dates is read as before: numbers, and text categories
    np.testing.assert_array_equal(booster.predict(np.ones((2, 2), dtype=object)), booster.predict(np.ones((2, 2))))
    assert uses[0](pd.DataFrame({"x": np.arange(4.0), "city": ["a", "b", None, "a"]})).num_feature() == 2


def test_feature_name_given_as_text_is_not_split_into_letters():
    X = np.ones((10, 4))
    with pytest.raises(DataError, match="feature_name must be a list of names .* got the text 'abcd'"):
        sb.Dataset(X, np.zeros(10), feature_name="abcd")
    assert sb.Dataset(X, np.zeros(10), feature_name="auto").feature_name == [f"Column_{i}" for i in range(4)]


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
    sb.train({"objective": "binary", "max_bin": 15, "verbosity": -1}, train, 1)  # bins the Dataset
    with pytest.raises(ParameterError, match="'max_bin'=31 differs from the Dataset's \\(15\\), which is binned"):
        sb.train({"max_bin": 31}, train)
    with pytest.raises(ParameterError, match="train_set must be a smartboost.Dataset"):
        sb.train({}, X)


def test_valid_set_binned_differently_or_unlabelled():
    X, y = make_binary(n=200)
    train = sb.Dataset(X, y)
    other_bins = sb.Dataset(X[:50] * 2, y[:50], reference=sb.Dataset(X * 2, y))
    with pytest.raises(DataError, match="reference=train_set"):
        sb.train({"objective": "binary"}, train, 2, valid_sets=[other_bins])
    with pytest.raises(DataError, match="valid set 'valid_0': data has 5 features but the reference has 6"):
        sb.train({"objective": "binary"}, train, 2, valid_sets=[sb.Dataset(X[:50, :5], y[:50])])
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


def test_default_named_model_refuses_its_own_names_in_another_order():
    # a model trained on an array is named Column_i and takes frames of any names, but a frame of
    # those very names in another order was read by position: a silently wrong prediction
    pd = pytest.importorskip("pandas")
    X, y = make_binary(n=200)
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 3)
    df = pd.DataFrame(X, columns=booster.feature_name())
    np.testing.assert_array_equal(booster.predict(df.set_axis([f"f{i}" for i in range(6)], axis=1)),
                                  booster.predict(X))
    with pytest.raises(DataError, match="differ from the model's feature names"):
        booster.predict(df[df.columns[::-1]], pred_contrib=True)


def test_a_reference_refuses_a_frame_of_its_names_in_another_order():
    # a validation frame whose columns came in another order was binned by position: each column
    # read as another feature, and its metric (and early stopping) silently wrong
    pd = pytest.importorskip("pandas")
    X, y = make_binary(n=200)
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    train_set = sb.Dataset(df, y)
    booster = sb.train({"objective": "binary", "verbosity": -1}, train_set, 2)
    for reference, owner in ((train_set, "reference's"), (booster, "reference's")):
        with pytest.raises(DataError, match=f"differ from the {owner} feature names"):
            sb.Dataset(df[df.columns[::-1]], y, reference=reference)
        with pytest.raises(DataError, match=f"differ from the {owner} feature names"):
            sb.Dataset(df.rename(columns={"f0": "other"}), y, reference=reference)
    assert sb.Dataset(df, y, reference=train_set).feature_name == list(df.columns)
    unnamed = sb.Dataset(X, y)  # features named Column_i take a frame of any other names
    assert sb.Dataset(df, y, reference=unnamed).feature_name == list(df.columns)


@pytest.mark.parametrize("chunk_bytes", [1 << 24, 64])
def test_wide_sparse_rows_predict_from_the_used_columns_only(chunk_bytes, monkeypatch):
    import tracemalloc

    from smartboost import booster as booster_module

    rng = np.random.default_rng(3)
    n, width = 400, 200_000
    dense_part = rng.normal(size=(n, 4))
    cols = np.concatenate([np.arange(4), [width - 1]])  # the last column holds a stray value
    values = np.column_stack([dense_part, np.where(np.arange(n) == 7, 5.0, 0.0)])
    X = sp.csr_matrix((values.ravel(), (np.repeat(np.arange(n), 5), np.tile(cols, n))), shape=(n, width))
    y = (dense_part[:, 0] + dense_part[:, 1] > 0).astype(float)
    booster = sb.train({"objective": "binary", "verbosity": -1, "min_data_in_leaf": 5}, sb.Dataset(X, y), 5)
    assert booster._packed.used_features.size < 10
    expected = booster.predict(X[:50].toarray())  # C-ordered dense: read as it is
    monkeypatch.setattr(booster_module, "_PREDICT_CHUNK_BYTES", chunk_bytes)
    tracemalloc.start()
    got = booster.predict(X[:50])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    np.testing.assert_array_equal(got, expected)
    assert peak < 4 << 20  # 50 dense rows of every column would take 80 MB
    np.testing.assert_array_equal(booster.predict(X[:50].tocsc()), expected)
    np.testing.assert_array_equal(booster.predict(np.asfortranarray(X[:50].toarray())), expected)


def test_categorical_rows_predict_from_the_used_columns_only(monkeypatch):
    pd = pytest.importorskip("pandas")
    from smartboost import booster as booster_module

    rng = np.random.default_rng(4)
    n = 600
    df = pd.DataFrame({"unused": rng.normal(size=n), "cat": pd.Categorical(rng.choice(list("pqrstu"), n)),
                       "cat_unused": pd.Categorical(rng.choice(list("xy"), n)), "a": rng.normal(size=n)})
    y = (df["a"] + df["cat"].isin(["p", "r"]) > 0.5).astype(float)
    train_set = sb.Dataset(df, y)
    booster = sb.train({"objective": "binary", "verbosity": -1, "min_data_in_leaf": 5,
                        "interaction_constraints": [[1, 3]]}, train_set, 5)
    assert set(booster._packed.used_features) == {1, 3}
    expected = booster._start_scores(n)[0]
    booster.predict_binned(train_set.binned, expected)  # the walk on the training bins, every column
    for chunk_bytes in (100, 1 << 24):
        monkeypatch.setattr(booster_module, "_PREDICT_CHUNK_BYTES", chunk_bytes)
        np.testing.assert_array_equal(booster.predict(df, raw_score=True), expected)


# -- numeric range at the boundary ---------------------------------------------------------

def test_prediction_of_zero_rows_is_empty():
    pd = pytest.importorskip("pandas")
    X, y = make_binary(n=300)
    binary = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 3)
    multi = sb.train({"objective": "multiclass", "num_class": 3, "verbosity": -1},
                     sb.Dataset(X, np.arange(300) % 3), 3)
    assert binary.predict(np.zeros((0, X.shape[1]))).shape == (0,)
    assert binary.predict(sp.csr_matrix((0, X.shape[1])), raw_score=True).shape == (0,)
    assert multi.predict(pd.DataFrame(np.zeros((0, X.shape[1])))).shape == (0, 3)
    with pytest.raises(DataError, match="features"):
        binary.predict(np.zeros((0, X.shape[1] + 1)))


def test_early_stopping_without_a_validation_set_is_an_error():
    X, y = make_binary(n=300)
    train_set = sb.Dataset(X, y)
    with pytest.raises(ParameterError, match="early stopping needs a validation set"):
        sb.train({"objective": "binary", "verbosity": -1, "early_stopping_round": 3}, train_set, 10)
    with pytest.raises(ParameterError, match="early stopping needs a validation set"):
        sb.train({"objective": "binary", "verbosity": -1}, train_set, 10, valid_sets=[train_set],
                 callbacks=[sb.early_stopping(3)])


def test_no_leaf_limit_needs_a_depth_limit():
    X, y = make_binary(n=300)
    with pytest.raises(ParameterError, match="num_leaves=0 .* max_depth"):
        sb.train({"objective": "binary", "num_leaves": 0, "verbosity": -1}, sb.Dataset(X, y), 2)
    booster = sb.train({"objective": "binary", "num_leaves": 0, "max_depth": 3, "verbosity": -1}, sb.Dataset(X, y), 2)
    assert max(tree.depth() for tree in booster.trees) <= 3


@pytest.mark.parametrize("objective, label, weight, init_score, match", [
    ("regression", 1e308, None, None, "start score overflows"),
    ("regression", 1e200, None, None, r"regression loss overflows .*row \d+: label \S+e\+(199|200)"),
    ("huber", 1e308, None, None, "overflows"),
    ("regression", 1.0, 1e306, None, "weight sums to more than the largest float"),
    ("binary", None, None, 1e308, "overflow"),
])
def test_labels_weights_and_init_scores_that_overflow_the_loss_are_data_errors(objective, label, weight, init_score,
                                                                                match):
    X, y = make_binary(n=300)
    if label is not None:
        y = label * np.linspace(0.5, 1.0, 300)
    with pytest.raises(DataError, match=match):
        sb.train({"objective": objective, "verbosity": -1},
                 sb.Dataset(X, y, weight=None if weight is None else np.full(300, weight),
                            init_score=None if init_score is None else np.full(300, init_score)), 3)


@pytest.mark.parametrize("params, match", [
    ({"objective": "binary", "learning_rate": 1e308}, "diverged at iteration 0.*learning_rate"),
    ({"objective": "binary", "learning_rate": 1e308, "step_rule": "line"}, "diverged at iteration 0"),
    ({"objective": "regression", "learning_rate": 1e306}, "diverged"),
    ({"objective": "exponential", "learning_rate": 1e3}, "not finite"),  # e^-M overflows in the gradients
])
def test_training_that_overflows_stops_with_the_reason_and_keeps_no_infinity(params, match):
    X, y = make_binary(n=300)
    with pytest.raises(DataError, match=match):
        sb.train({**params, "verbosity": -1}, sb.Dataset(X, y), 20)


@pytest.mark.parametrize("num_iteration", [float("nan"), "3", 2.5, True])
def test_num_iteration_that_is_not_a_whole_number_is_a_parameter_error(num_iteration):
    X, y = make_binary(n=200)
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 3)
    with pytest.raises(ParameterError, match="num_iteration must be an integer"):
        booster.predict(X, num_iteration=num_iteration)
    with pytest.raises(ParameterError, match="num_iteration must be an integer"):
        booster.model_to_string(num_iteration)
    with pytest.raises(ParameterError, match="iteration must be an integer"):
        booster.feature_importance(iteration=num_iteration)
    assert booster.predict(X, num_iteration=2.0).shape == (200,)  # a whole float is accepted
    np.testing.assert_array_equal(booster.predict(X, num_iteration=np.int64(2)), booster.predict(X, num_iteration=2))


def test_callbacks_that_are_not_training_callbacks_are_parameter_errors():
    X, y = make_binary(n=200)
    train_set = sb.Dataset(X, y)
    params = {"objective": "binary", "verbosity": -1}
    with pytest.raises(ParameterError, match=r"callbacks\[1\] must be a smartboost.TrainingCallback, got function"):
        sb.train(params, train_set, 2, callbacks=[sb.log_evaluation(1), lambda env: None])
    with pytest.raises(ParameterError, match=r"callbacks\[0\] .* got int"):
        sb.cv(params, train_set, 2, nfold=2, callbacks=[3])
    with pytest.raises(ParameterError, match="callbacks must be a list"):
        sb.train(params, train_set, 2, callbacks=3)
    result = {}
    sb.train(params, train_set, 2, valid_sets=train_set, callbacks=sb.record_evaluation(result))  # one of each
    assert len(result["training"]["logloss"]) == 2
    with pytest.raises(ParameterError, match="valid_sets must be a list of smartboost.Dataset, got int"):
        sb.train(params, train_set, 2, valid_sets=3)


@pytest.mark.parametrize("make, match", [
    (lambda: sb.early_stopping(float("nan")), "stopping_rounds' must be an integer, got nan"),
    (lambda: sb.early_stopping("3"), "stopping_rounds' must be an integer, got '3'"),
    (lambda: sb.early_stopping(0), r"stopping_rounds' must be in \[1, "),
    (lambda: sb.early_stopping(3, min_delta=float("nan")), "min_delta' must be a finite number"),
    (lambda: sb.early_stopping(3, min_delta=-1.0), "min_delta"),
    (lambda: sb.log_evaluation(float("nan")), "log_evaluation period' must be an integer"),
    (lambda: sb.checkpoint("m.json", "10"), "checkpoint period' must be an integer"),
])
def test_callback_arguments_are_checked_when_made(make, match):
    with pytest.raises(ParameterError, match=match):
        make()


@pytest.mark.parametrize("sampling", ["none", "goss"])
def test_weights_near_the_smallest_float_train_or_are_a_data_error(sampling):
    X, y = make_binary(n=200)
    params = {"objective": "binary", "verbosity": -1, "min_sum_hessian_in_leaf": 0, "sampling": sampling,
              "sample_rate": 0.5 if sampling == "goss" else 1.0}
    # |w g| near 1e-308: fixed-point units below the float range (a unit as a float underflowed to 0,
    # ZeroDivisionError, or to a subnormal whose reciprocal is infinite); the trees of weights 1
    booster = sb.train(params, sb.Dataset(X, y, weight=np.full(200, 2.3e-308)), 3)
    assert np.isfinite(booster.predict(X)).all()
    unit = sb.train(params, sb.Dataset(X, y), 3)
    for tree, expected in zip(booster.trees, unit.trees, strict=True):
        np.testing.assert_array_equal(tree.feature, expected.feature)
    # subnormal weights have fewer bits than a tree's units resolve (1e-310 grew other trees):
    # refused rather than a different model
    for weight in (5e-324, 1e-310):
        with pytest.raises(DataError, match="weight: the largest weight is .* below the least normal float"):
            sb.Dataset(X, y, weight=np.full(200, weight))


def test_a_metric_refuses_labels_outside_its_domain_naming_the_valid_set():
    X, y = make_binary(n=200)
    train = sb.Dataset(X, y + 0.5)  # regression labels 0.5 and 1.5: the AUC of them was NaN
    with pytest.raises(DataError, match=r"label of valid set 'holdout' must be 0 or 1 .* for metric 'auc'; row 0"):
        sb.train({"metric": "auc", "verbosity": -1}, train, 1, valid_sets=[sb.Dataset(X, y + 0.5, reference=train)],
                 valid_names=["holdout"])
