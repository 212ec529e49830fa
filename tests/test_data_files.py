"""Dataset(path): a data file read as the command line reads it, equal to the same data in memory."""

import numpy as np
import pandas as pd
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost.errors import DataError

_PARAMS = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1}


def _frame(n=600, seed=0):
    X, y = make_binary(n=n, n_features=5, seed=seed)
    frame = pd.DataFrame(np.round(X[:, :3], 6), columns=["a", "b", "c"])  # rounded: the CSV holds them exactly
    frame["city"] = np.random.default_rng(seed).choice(["paris", "oslo", "rome"], n)
    return frame, y + (frame["city"] == "oslo").to_numpy() * (y == 0)


def test_a_csv_file_trains_the_model_of_its_frame(tmp_path):
    frame, y = _frame()
    frame.assign(label=y)[["label", "a", "b", "c", "city"]].to_csv(tmp_path / "train.csv", index=False)
    for path in (tmp_path / "train.csv", str(tmp_path / "train.csv")):
        from_file = sb.Dataset(path, categorical_feature=["city"])
        assert from_file.feature_name == ["a", "b", "c", "city"]
        auto = sb.Dataset(path, feature_name="auto", categorical_feature=["city"])
        assert auto.feature_name == from_file.feature_name
        np.testing.assert_array_equal(from_file.get_label(), y)
        booster = sb.train(_PARAMS, from_file, 5)
        in_memory = sb.train(_PARAMS, sb.Dataset(frame, y, categorical_feature=["city"]), 5)
        np.testing.assert_array_equal(booster.predict(frame), in_memory.predict(frame))
    # a validation file whose columns come in another order is matched to the features by name
    frame.assign(label=y)[["city", "c", "label", "b", "a"]].to_csv(tmp_path / "valid.csv", index=False)
    train_set = sb.Dataset(tmp_path / "train.csv", categorical_feature=["city"])
    history = {}
    sb.train({**_PARAMS, "metric": "auc"}, train_set, 5, valid_sets=[
        sb.Dataset(tmp_path / "valid.csv", reference=train_set), sb.Dataset(frame, y, reference=train_set)],
        valid_names=["file", "frame"], callbacks=[sb.record_evaluation(history)])
    assert history["file"]["auc"] == history["frame"]["auc"]


def test_an_svmlight_file_brings_its_queries_and_index_base(tmp_path):
    rng = np.random.default_rng(3)
    X = np.round(rng.random((60, 4)), 3)
    X[X < 0.3] = 0.0
    label = rng.integers(0, 3, 60)
    qid = np.repeat(np.arange(6), 10)
    lines = [" ".join([f"{label[i]}", f"qid:{qid[i]}", *(f"{j}:{X[i, j]}" for j in range(4) if X[i, j])])
             for i in range(60)]
    (tmp_path / "rank.svm").write_text("\n".join(lines) + "\n")  # zero-based: feature 0 is index 0
    train_set = sb.Dataset(tmp_path / "rank.svm")
    assert train_set.num_queries() == 6 and train_set.num_feature() == 4
    assert train_set.data_format == {"svmlight_zero_based": True}
    np.testing.assert_array_equal(train_set.get_label(), label)
    booster = sb.train({"objective": "lambdarank", "min_data_in_leaf": 2, "verbosity": -1}, train_set, 3)
    expected = sb.train({"objective": "lambdarank", "min_data_in_leaf": 2, "verbosity": -1},
                        sb.Dataset(X, label, qid=qid), 3)
    np.testing.assert_array_equal(booster.predict(X), expected.predict(X))
    # a validation file without index 0 is still read zero-based, as its reference
    (tmp_path / "valid.svm").write_text("\n".join(line for line in lines if " 0:" not in line) + "\n")
    valid = sb.Dataset(tmp_path / "valid.svm", reference=train_set)
    kept = [" 0:" not in line for line in lines]
    np.testing.assert_array_equal(valid.binned.row_major, sb.Dataset(X[kept], label[kept],
                                                                      reference=train_set).binned.row_major)


def test_a_label_given_beside_a_file_replaces_the_files(tmp_path):
    frame, y = _frame(n=100)
    frame[["a", "b"]].assign(label=y)[["label", "a", "b"]].to_csv(tmp_path / "t.csv", index=False)
    assert (sb.Dataset(tmp_path / "t.csv", label=1 - y).get_label() == 1 - y).all()


def test_bad_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such data file"):
        sb.Dataset(tmp_path / "missing.csv")
    (tmp_path / "bad.csv").write_text("y,a\n1,2\n0,x\n")
    with pytest.raises(DataError, match="bad.csv: line 3, column 2 \\('a'\\): 'x' is not a number"):
        sb.Dataset(tmp_path / "bad.csv")
    with pytest.raises(DataError, match="categorical_feature names 'nope'"):
        sb.Dataset(tmp_path / "bad.csv", categorical_feature=["nope"])
