"""The command line on hostile data files: one-line errors naming file, line and column, never a
silent NaN, shift or column swap (issue 31). Runs ``smartboost.cli.main`` in-process."""

import gzip
import json

import numpy as np
import pytest
from conftest import make_binary
from sklearn.datasets import dump_svmlight_file

import smartboost as sb
from smartboost.cli import main

TRAIN = ["--objective", "binary", "--num_iterations", "8", "--num_leaves", "7", "--min_data_in_leaf", "5",
         "--verbosity", "-1"]


def _fails(capsys, *argv) -> str:
    """Run a command that must fail: exit 1 and one ``smartboost: error:`` line, no traceback."""
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("smartboost: error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def _ok(capsys, *argv) -> str:
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def _csv(path, columns: dict, header=True, missing=""):
    """Write ``{name: values}`` as CSV, NaN as ``missing``."""
    lines = [",".join(columns)] if header else []
    lines += [",".join(missing if np.isnan(v) else repr(float(v)) for v in row) for row in zip(*columns.values())]
    path.write_text("\n".join(lines) + "\n")
    return path


def _columns(X, y=None, names="abcdefghij"):
    return {**({} if y is None else {"y": y}), **{name: X[:, j] for j, name in enumerate(names[:X.shape[1]])}}


@pytest.fixture(scope="module")
def csv_model(tmp_path_factory):
    """A model trained on a headed CSV (label 'y' first, features a..e), its data and folder."""
    folder = tmp_path_factory.mktemp("csv")
    X, y = make_binary(n=400, n_features=5, seed=7, missing_rate=0.05)
    _csv(folder / "train.csv", _columns(X, y))
    assert main(["train", str(folder / "train.csv"), "-o", str(folder / "model.json"), *TRAIN]) == 0
    return folder, X, y


@pytest.mark.parametrize("cell, token", [("0.5x", "'0.5x'"), ("?", "'?'"), ("paris", "'paris'")])
def test_a_field_that_is_not_a_number_is_an_error_naming_line_column_and_token(tmp_path, capsys, cell, token):
    X, y = make_binary(n=50, n_features=5, seed=1)
    lines = _csv(tmp_path / "d.csv", _columns(X, y)).read_text().splitlines()
    fields = lines[5].split(",")
    fields[2] = cell  # line 6, column 3 ('b')
    lines[5] = ",".join(fields)
    if cell == "paris":  # a whole column of words
        lines[1:] = [",".join(f[:2] + ["paris"] + f[3:]) for f in (line.split(",") for line in lines[1:])]
    (tmp_path / "d.csv").write_text("\n".join(lines) + "\n")
    err = _fails(capsys, "train", tmp_path / "d.csv", "-o", tmp_path / "m.json", *TRAIN)
    line = 2 if cell == "paris" else 6
    assert f"d.csv: line {line}, column 3 ('b'): {token} is not a number" in err
    assert not (tmp_path / "m.json").exists()


def test_na_values_declares_missing_tokens(tmp_path, capsys):
    X, y = make_binary(n=200, n_features=5, seed=2, missing_rate=0.1)
    for name, token in [("empty", ""), ("question", "?"), ("na", "NA")]:
        _csv(tmp_path / f"{name}.csv", _columns(X, y), missing=token)
    row, column = np.argwhere(np.isnan(X))[0]  # the first missing value, after the header and the label column
    err = _fails(capsys, "train", tmp_path / "question.csv")
    assert f"line {row + 2}, column {column + 2} ('{'abcde'[column]}'): '?' is not a number" in err
    for name, options in [("empty", []), ("question", ["--na_values", "?"]), ("na", [])]:
        _ok(capsys, "train", tmp_path / f"{name}.csv", *options, "-o", tmp_path / f"{name}.json", *TRAIN)
    # every spelling of a missing value trains the same model
    assert (tmp_path / "question.json").read_text() == (tmp_path / "empty.json").read_text()
    assert (tmp_path / "na.json").read_text() == (tmp_path / "empty.json").read_text()
    # the option replaces the default tokens: NA is then an error, the empty field stays missing
    assert "'NA' is not a number" in _fails(capsys, "train", tmp_path / "na.csv", "--na_values", "?")
    _ok(capsys, "train", tmp_path / "empty.csv", "--na-values", "?", "-o", tmp_path / "e.json", *TRAIN)


def test_ragged_rows_and_header_options(tmp_path, capsys):
    (tmp_path / "r.csv").write_text("y,a,b\n1,2,3\n0,1\n")
    assert "r.csv: line 3 has 2 fields, but line 1 (the header) has 3" in _fails(capsys, "train", tmp_path / "r.csv")
    (tmp_path / "h.csv").write_text("y,a,b\n1,2,3\n0,1,2\n")
    assert "h.csv: line 1, column 1: 'y' is not a number" in _fails(capsys, "train", tmp_path / "h.csv",
                                                                   "--header", "false")


@pytest.mark.parametrize("text, message", [
    # the csv module and numpy glue these into 23: a silent wrong number
    ('y,a\n1,"2"3\n', "line 2, column 2 ('a'): a field with text after its closing quote ('3')"),
    ('y,a\n1,"2\n3"\n0,4\n', "line 2, column 2 ('a'): a field with a quote not closed on this line"),
    ('1,"2\n3"\n0,4\n', "line 1, column 2: a field with a quote not closed on this line"),
    ('y\ta\n"1"\t"2"x\n', "line 2, column 2 ('a'): a field with text after its closing quote ('x')"),
])
def test_quotes_that_would_glue_text_or_lines_into_a_number_are_errors(tmp_path, capsys, text, message):
    path = tmp_path / ("q.tsv" if "\t" in text else "q.csv")
    path.write_text(text)
    assert f"{path.name}: {message}" in _fails(capsys, "train", path, "-o", tmp_path / "m.json")


def test_well_formed_quotes_are_read(tmp_path, capsys):
    from smartboost.datafile import read_data

    (tmp_path / "q.csv").write_text('"y","a b","c"\n"1","2" ,"2""x"\n0,"3",""\n')
    with pytest.raises(sb.errors.DataError, match="column 3 \\('c'\\): '2\"x' is not a number"):
        read_data(tmp_path / "q.csv")
    (tmp_path / "q.csv").write_text('"y","a b","c"\n"1","2" ,"4"\n0,"3",""\n')
    data = read_data(tmp_path / "q.csv")
    assert data.feature_names == ["a b", "c"]
    np.testing.assert_array_equal(data.X, [[2, 4], [3, np.nan]])


def test_predict_and_evaluate_match_columns_by_name(csv_model, tmp_path, capsys):
    folder, X, y = csv_model
    model = folder / "model.json"
    base = _ok(capsys, "predict", model, folder / "train.csv")
    columns = _columns(X, y)
    reordered = _csv(tmp_path / "reordered.csv", {name: columns[name] for name in "caeydb"})
    assert _ok(capsys, "predict", model, reordered) == base
    features_only = _csv(tmp_path / "features.csv", {name: columns[name] for name in "edcba"})
    assert _ok(capsys, "predict", model, features_only) == base
    np.testing.assert_array_equal(np.loadtxt(base.splitlines()), sb.Booster(model_file=model).predict(X))
    table = _ok(capsys, "evaluate", model, folder / "train.csv", "--metric", "auc", "--metric", "logloss")
    reordered_table = _ok(capsys, "evaluate", model, reordered, "--metric", "auc", "--metric", "logloss")
    assert reordered_table.splitlines()[2:] == table.splitlines()[2:]
    assert "features.csv has no label column" in _fails(capsys, "evaluate", model, features_only)


def test_missing_and_extra_columns_are_named(csv_model, tmp_path, capsys):
    folder, X, y = csv_model
    model = folder / "model.json"
    columns = _columns(X, y)
    lacking = _csv(tmp_path / "lacking.csv", {name: columns[name] for name in "yabde"})
    assert "lacking.csv: the model's features 'c' are not in the file" in _fails(capsys, "predict", model, lacking)
    extra = _csv(tmp_path / "extra.csv", {**columns, "id": np.arange(len(y))})
    err = _fails(capsys, "evaluate", model, extra)
    assert "extra.csv: columns 'y', 'id' are neither features of the model nor its label" in err
    err = _fails(capsys, "predict", model, extra, "--label-column", "name:y")
    assert "columns 'id' are neither features" in err
    assert _fails(capsys, "predict", model, extra, "--label-column", "y") == err  # a bare name as 'name:y'
    err = _fails(capsys, "evaluate", model, folder / "train.csv", "--label-column", "target")
    assert "label column 'target' is not in the file's header" in err


def test_parquet_columns_by_name_and_text_columns(csv_model, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    folder, X, y = csv_model
    model = folder / "model.json"
    columns = _columns(X, y)
    pd.DataFrame({name: columns[name] for name in "ebdyca"}).to_parquet(tmp_path / "r.parquet")
    assert _ok(capsys, "predict", model, tmp_path / "r.parquet") == _ok(capsys, "predict", model, folder / "train.csv")
    pd.DataFrame({**columns, "b": ["x"] * len(y)}).to_parquet(tmp_path / "text.parquet")
    err = _fails(capsys, "predict", model, tmp_path / "text.parquet")
    assert "text.parquet: column 3 ('b', " in err and "is not numeric" in err and "'x'" in err
    (tmp_path / "fake.parquet").write_text("a,b\n1,2\n")
    assert "fake.parquet: cannot read it as parquet" in _fails(capsys, "predict", model, tmp_path / "fake.parquet")


def test_files_without_header_match_by_position(tmp_path, capsys):
    X, y = make_binary(n=300, n_features=5, seed=4)
    _csv(tmp_path / "train.csv", _columns(X, y), header=False)
    _ok(capsys, "train", tmp_path / "train.csv", "-o", tmp_path / "m.json", *TRAIN)
    assert sb.Booster(model_file=tmp_path / "m.json").feature_name() == [f"Column_{i}" for i in range(5)]
    with_label = _ok(capsys, "predict", tmp_path / "m.json", tmp_path / "train.csv")
    features_only = _csv(tmp_path / "x.csv", _columns(X), header=False)
    assert _ok(capsys, "predict", tmp_path / "m.json", features_only) == with_label
    wide = _csv(tmp_path / "wide.csv", _columns(np.c_[X, X], y), header=False)
    err = _fails(capsys, "predict", tmp_path / "m.json", wide, "--label-column", "0")
    assert "wide.csv: the file has 10 columns besides its label, but the model has 5 features" in err


def _zero_based_files(tmp_path):
    """A training file with an index 0 and a test file (rows of the training file) without one."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((400, 5))
    X[40:, 0] = 0.0  # only the first 40 rows have feature 0: "0:" is absent from rows 40..
    y = (X[:, 1] + X[:, 2] > 0).astype(float)
    dump_svmlight_file(X, y, str(tmp_path / "train.svm"), zero_based=True)
    dump_svmlight_file(X[40:], y[40:], str(tmp_path / "test.svm"), zero_based=True)
    return X, y


def test_svmlight_index_base_is_the_training_files(tmp_path, capsys):
    X, y = _zero_based_files(tmp_path)
    model = tmp_path / "m.json"
    _ok(capsys, "train", tmp_path / "train.svm", "--valid", tmp_path / "test.svm", "-o", model, *TRAIN)
    assert json.loads(model.read_text())["data_format"] == {"svmlight_zero_based": True}
    booster = sb.Booster(model_file=model)
    assert booster.data_format == {"svmlight_zero_based": True}
    assert " 0:" not in (tmp_path / "test.svm").read_text() and " 0:" in (tmp_path / "train.svm").read_text()
    train_predictions = np.loadtxt(_ok(capsys, "predict", model, tmp_path / "train.svm").splitlines())
    test_predictions = np.loadtxt(_ok(capsys, "predict", model, tmp_path / "test.svm").splitlines())
    np.testing.assert_array_equal(test_predictions, train_predictions[40:])
    np.testing.assert_array_equal(test_predictions, booster.predict(X[40:]))
    # the evaluation reads it the same way, and so did the validation file during training
    auc = _ok(capsys, "evaluate", model, tmp_path / "test.svm", "--metric", "auc")
    expected = sb.metrics.get_metric("auc")(y[40:], booster.predict(X[40:], raw_score=True), None)
    assert abs(float(auc.splitlines()[2].split("|")[2]) - expected) < 1e-5
    assert "contradicts the model" in _fails(capsys, "predict", model, tmp_path / "test.svm", "--zero_based", "false")


def test_svmlight_files_contradicting_the_model_are_errors(tmp_path, capsys):
    X, y = _zero_based_files(tmp_path)
    dump_svmlight_file(X[40:, 1:], y[40:], str(tmp_path / "one.svm"), zero_based=False)  # no feature 0: no "0:"
    model = tmp_path / "m.json"
    _ok(capsys, "train", tmp_path / "one.svm", "-o", model, *TRAIN)
    assert sb.Booster(model_file=model).data_format == {"svmlight_zero_based": False}
    (tmp_path / "zero.svm").write_text("1 1:0.5 2:1\n0 0:3 2:1\n")
    err = _fails(capsys, "predict", model, tmp_path / "zero.svm")
    assert "zero.svm: line 2: index 0, but this data's indices are one-based" in err
    (tmp_path / "wide.svm").write_text("1 1:0.5 2:1\n\n# comment\n0 3:1 5:2\n")
    assert "wide.svm: line 4: index 5 is beyond the 4 features expected (one-based indices 1..4)" in _fails(
        capsys, "predict", model, tmp_path / "wide.svm")


def test_models_from_the_python_api_have_no_data_format(tmp_path):
    X, y = make_binary(n=300, seed=5)
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 3)
    assert booster.data_format is None and "data_format" not in booster.model_to_string()


@pytest.mark.parametrize("damage, message", [
    (lambda data: data[: len(data) // 2], "truncated or corrupt compressed data"),
    (lambda data: b"this is not gzip at all\n", "truncated or corrupt compressed data (Not a gzipped file"),
    (lambda data: data[:20] + bytes(len(data) - 20), "truncated or corrupt compressed data"),
])
def test_damaged_gzip_files_are_one_line_errors(tmp_path, capsys, damage, message):
    X, y = make_binary(n=300, seed=6)
    dump_svmlight_file(X, y, str(tmp_path / "d.svm"))
    (tmp_path / "d.svm.gz").write_bytes(damage(gzip.compress((tmp_path / "d.svm").read_bytes())))
    err = _fails(capsys, "train", tmp_path / "d.svm.gz", *TRAIN)
    assert f"d.svm.gz: {message}" in err


def test_text_that_is_not_utf8_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "latin.csv").write_bytes("y,a\n1,2\n0,caf\xe9\n".encode("latin-1"))
    assert "latin.csv: line 3: not UTF-8 text (byte 0xe9)" in _fails(capsys, "train", tmp_path / "latin.csv")


def test_a_file_of_no_rows_predicts_nothing_and_cannot_be_evaluated(tmp_path, capsys):
    X, y = make_binary(n=300, seed=8)
    model = tmp_path / "m.json"
    sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 2).save_model(model)
    (tmp_path / "empty.svm").write_text("# no rows\n")
    assert _ok(capsys, "predict", model, tmp_path / "empty.svm") == ""
    assert "empty.svm has no rows; evaluation needs labelled rows" in _fails(capsys, "evaluate", model,
                                                                             tmp_path / "empty.svm")


@pytest.mark.parametrize("content, message", [
    (b"num_leaves = 7\n\xff\xfe\n", "bad.toml: line 2: not UTF-8 text (byte 0xff)"),  # was a UnicodeDecodeError
    (b"num_leaves = \n", "bad.toml: not a TOML file: Invalid value (at line 1, column 14)"),
])
def test_a_config_file_that_is_not_toml_is_a_one_line_error_naming_it(tmp_path, capsys, content, message):
    (tmp_path / "bad.toml").write_bytes(content)
    (tmp_path / "d.csv").write_text("y,a\n1,2\n0,3\n")
    assert message in _fails(capsys, "train", tmp_path / "d.csv", "-o", tmp_path / "m.json", "--config",
                                   tmp_path / "bad.toml")


def test_running_out_of_memory_is_a_one_line_error(tmp_path, capsys, monkeypatch):
    import smartboost.datafile

    def huge(*args, **kwargs):  # numpy's error for a one-row svmlight file with index 2000000000
        raise MemoryError("Unable to allocate 7.45 GiB for an array with shape (2000000001,) and data type int32")

    monkeypatch.setattr(smartboost.datafile, "read_training", huge)
    (tmp_path / "huge.svm").write_text("1 2000000000:1\n")
    assert "out of memory: Unable to allocate 7.45 GiB" in _fails(capsys, "train", tmp_path / "huge.svm")


def test_an_output_that_cannot_be_written_is_refused_before_training(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("y,a\n1,2\n0,3\n")
    (tmp_path / "folder").mkdir()
    for command in (["train", tmp_path / "d.csv"], ["predict", tmp_path / "no-model.json", tmp_path / "d.csv"]):
        assert "--output is empty" in _fails(capsys, *command, "-o", "")  # predict wrote to stdout
        assert f"--output {tmp_path / 'folder'} is a directory" in _fails(capsys, *command, "-o",
                                                                           tmp_path / "folder")
        assert "the folder" in _fails(capsys, *command, "-o", tmp_path / "missing" / "out")


def test_a_parameter_given_twice_with_different_values_is_an_error(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("y,a\n1,2\n0,3\n")
    # the first value was dropped silently (aliases given twice were already refused)
    assert "parameter 'metric' given twice with different values: 'auc' and 'logloss' (several metrics" in _fails(
        capsys, "train", tmp_path / "d.csv", "-o", tmp_path / "m.json", "--metric", "auc", "--metric", "logloss")
    assert "parameter 'num_leaves' given twice with different values: 5 and 7" in _fails(
        capsys, "train", tmp_path / "d.csv", "-o", tmp_path / "m.json", "--num_leaves", "5", "--num-leaves=7")


def test_an_unknown_metric_leaves_no_half_table(csv_model, tmp_path, capsys):
    folder, X, y = csv_model
    capsys.readouterr()
    assert main(["evaluate", str(folder / "model.json"), str(folder / "train.csv"), "--metric", "auc",
                 "--metric", "nonsense"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "unknown metric 'nonsense'" in err  # the table's header and auc row were printed


def test_bad_labels_name_the_file_they_are_in(csv_model, tmp_path, capsys):
    folder, X, y = csv_model
    (tmp_path / "nan.csv").write_text("y,a,b,c,d,e\n1,1,2,3,4,5\nnan,1,2,3,4,5\n")
    (tmp_path / "five.csv").write_text("y,a,b,c,d,e\n1,1,2,3,4,5\n5,1,2,3,4,5\n")
    # which of the training and validation files held it was not said
    assert "nan.csv: label contains nan at row 1" in _fails(
        capsys, "train", folder / "train.csv", "--valid", tmp_path / "nan.csv", "-o", tmp_path / "m.json", *TRAIN)
    assert "five.csv: label must be 0 or 1" in _fails(capsys, "evaluate", folder / "model.json", tmp_path / "five.csv")
    # the training file's own, checked in train(), did not name it
    assert "five.csv: label must be 0 or 1" in _fails(capsys, "train", tmp_path / "five.csv", "-o",
                                                      tmp_path / "m.json", *TRAIN)


def test_a_directory_given_as_a_data_file_is_called_one(tmp_path, capsys):
    (tmp_path / "d.csv").mkdir()
    assert f"{tmp_path / 'd.csv'} is a directory, not a data file" in _fails(capsys, "train", tmp_path / "d.csv")


def test_an_option_without_its_value_says_so(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("y,a\n1,2\n0,3\n")
    # it was "parameter 'num_iterations' must be an integer, got True"
    for argv in (["--num_iterations"], ["--learning-rate", "--num_leaves", "5"]):
        err = _fails(capsys, "train", tmp_path / "d.csv", "-o", tmp_path / "m.json", *argv)
        assert f"{argv[0]} needs a value" in err
    assert "unknown parameter 'nonsense'" in _fails(capsys, "train", tmp_path / "d.csv", "--nonsense")


def test_debug_may_follow_the_command(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("y,a\n2,2\n0,3\n")
    # it was read as a training parameter: "unknown parameter 'debug'"
    with pytest.raises(sb.errors.DataError, match="label must be 0 or 1"):
        main(["train", str(tmp_path / "d.csv"), "-o", str(tmp_path / "m.json"), "--debug", "--objective", "binary"])
    assert "label must be 0 or 1" in _fails(capsys, "train", tmp_path / "d.csv", "-o", tmp_path / "m.json",
                                            "--objective", "binary")  # without it, still one line



def test_an_unexpected_error_is_one_line_too_and_a_traceback_with_debug(tmp_path, capsys, monkeypatch):
    (tmp_path / "d.csv").write_text("y,a\n1,2\n0,3\n")

    def bug(self):
        raise ZeroDivisionError("division by zero")
    monkeypatch.setattr(sb.engine.Trainer, "boost_one_iteration", bug)
    argv = ["train", tmp_path / "d.csv", "-o", tmp_path / "m.json", "--objective", "binary", "--verbosity", "-1"]
    # it escaped main() as a traceback
    assert "unexpected ZeroDivisionError: division by zero (a bug in smartboost" in _fails(capsys, *argv)
    with pytest.raises(ZeroDivisionError):
        main([str(a) for a in argv] + ["--debug"])

def test_an_option_of_another_data_format_is_refused(tmp_path, capsys):
    (tmp_path / "d.svm").write_text("1 1:2 2:3\n0 1:3 2:1\n")
    (tmp_path / "d.csv").write_text("y,a\n1,2\n0,3\n")
    # each was silently ignored: the svmlight label stayed the first field of every line
    for option, value in (("--label-column", "2"), ("--header", "true"), ("--na-values", "?")):
        assert f"{option} applies only to csv/tsv" in _fails(capsys, "train", tmp_path / "d.svm", "-o",
                                                             tmp_path / "m.json", option, value)
    assert "--zero-based applies only to svmlight files, and " in _fails(
        capsys, "evaluate", tmp_path / "m.json", tmp_path / "d.csv", "--zero-based", "true")


def test_an_empty_column_name_in_a_header_is_an_error(tmp_path, capsys):
    # a feature named '' of missing values was trained on
    (tmp_path / "t.csv").write_text("y,a,\n1,2,\n0,3,\n")
    assert "t.csv: line 1 (the header), column 3: an empty column name (the line ends with a delimiter)" in _fails(
        capsys, "train", tmp_path / "t.csv", "-o", tmp_path / "m.json")
    (tmp_path / "m.tsv").write_text('y\t""\ta\n1\t2\t3\n')
    assert "m.tsv: line 1 (the header), column 2: an empty column name; every" in _fails(
        capsys, "train", tmp_path / "m.tsv", "-o", tmp_path / "m.json")


def test_predict_writes_leaves_contributions_and_iteration_ranges(tmp_path, capsys):
    X, y = make_binary(n=300, n_features=5)
    X = np.round(X, 6)  # written exactly by the CSV
    booster = sb.train({"objective": "binary", "num_leaves": 5, "verbosity": -1}, sb.Dataset(X, y), 4)
    booster.save_model(tmp_path / "m.json")
    np.savetxt(tmp_path / "d.csv", np.column_stack([y, X]), delimiter=",", fmt="%.6f")
    cases = [(["--pred-leaf"], booster.predict(X, pred_leaf=True)),
             (["--pred_contrib"], booster.predict(X, pred_contrib=True)),
             (["--num-iteration", "2", "--start-iteration", "1", "--raw-score"],
              booster.predict(X, raw_score=True, start_iteration=1, num_iteration=2)),
             (["--start_iteration", "3"], booster.predict(X, start_iteration=3))]
    for options, expected in cases:
        assert main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "-o", str(tmp_path / "p.txt"),
                     *options]) == 0
        written = np.loadtxt(tmp_path / "p.txt", ndmin=2)
        np.testing.assert_array_equal(written.reshape(expected.shape), expected)
    assert "start_iteration" in _fails(capsys, "predict", tmp_path / "m.json", tmp_path / "d.csv",
                                       "--start-iteration", "9")
    with pytest.raises(SystemExit):  # argparse: one output at a time
        main(["predict", str(tmp_path / "m.json"), str(tmp_path / "d.csv"), "--pred-leaf", "--raw-score"])


def test_evaluate_defaults_to_the_metrics_the_model_was_trained_with(tmp_path, capsys):
    X, y = make_binary(n=300, n_features=5)
    X = np.round(X, 6)
    np.savetxt(tmp_path / "d.csv", np.column_stack([y, X]), delimiter=",", fmt="%.6f")
    for params, shown in (({"metric": ["auc", "binary_error"]}, ["auc", "error"]), ({}, ["logloss"])):
        booster = sb.train({"objective": "binary", "verbosity": -1, **params}, sb.Dataset(X, y), 3)
        booster.save_model(tmp_path / "m.json")
        capsys.readouterr()
        assert main(["evaluate", str(tmp_path / "m.json"), str(tmp_path / "d.csv")]) == 0
        rows = [line.split("|")[1].strip() for line in capsys.readouterr().out.splitlines()[2:]]
        assert rows == shown
        assert [name for _, name, _, _ in booster.eval(sb.Dataset(X, y, reference=booster), "d")] == shown
