"""Strict model loading and safe model writes (issue 31): every hostile-input case that once
loaded silently, overflowed or raised the wrong exception is pinned here, and so are the file
modes, symlinks and non-finite models of ``save_model``."""

import json
import os

import numpy as np
import pytest
from conftest import make_binary, make_regression

import smartboost as sb
from smartboost import io
from smartboost.errors import ModelFormatError, ParameterError

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes and symlinks")


@pytest.fixture(scope="module")
def model():
    """A small binary model with missing values (so some thresholds are the string 'inf') and
    a best_score, its text and a few rows."""
    X, y = make_binary(n=600, n_features=5, seed=3, missing_rate=0.1)
    X[(y == 1) & (np.arange(600) % 3 > 0), 4] = np.nan  # missing values alone predict: a split with threshold inf
    train = sb.Dataset(X[:400], y[:400])
    booster = sb.train({"objective": "binary", "num_leaves": 6, "verbosity": -1, "early_stopping_round": 5}, train,
                       6, valid_sets=[sb.Dataset(X[400:], y[400:], reference=train)])
    return booster, booster.model_to_string(), X[:50]


def _edit(text, fn):
    document = json.loads(text)
    fn(document)
    return json.dumps(document)


def _refused(text, match):
    with pytest.raises(ModelFormatError, match=match):
        sb.Booster(model_str=text)


# -- a valid model ---------------------------------------------------------------------------

def test_round_trip_is_bit_exact(model, tmp_path):
    booster, text, X = model
    assert '"inf"' in text and booster.best_score  # the fixture covers string thresholds and best_score
    path = tmp_path / "model.json"
    booster.save_model(path)
    assert path.read_text(encoding="utf-8") == text
    loaded = sb.Booster(model_file=path)
    assert loaded.model_to_string() == text
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), booster.predict(X, raw_score=True))


def test_a_byte_order_mark_is_read_as_the_start_of_utf8(model, tmp_path):
    # editors on Windows save UTF-8 with a byte-order mark: json refused such a file as 'not valid JSON'
    booster, text, X = model
    path = tmp_path / "model.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    for loaded in (sb.Booster(model_file=path), sb.Booster(model_str="\ufeff" + text)):
        assert loaded.model_to_string() == text
    _refused(text + "\ufeff", "not valid JSON")  # only at the start


def test_a_binary_objective_reads_its_sigmoid_and_defaults_it_to_one(model):
    # files written before binary read sigmoid have none in 'objective': they were trained with 1
    booster, text, X = model
    assert "sigmoid" not in json.loads(text)["objective"]
    scaled = sb.Booster(model_str=_edit(text, lambda d: d["objective"].update(sigmoid=2.0)))
    raw = booster.predict(X, raw_score=True)
    np.testing.assert_allclose(scaled.predict(X), 1.0 / (1.0 + np.exp(-2.0 * raw)), rtol=1e-14)
    assert sb.Booster(model_str=scaled.model_to_string()).objective.sigmoid == 2.0


def test_brackets_quotes_and_backslashes_inside_strings_do_not_count_as_nesting():
    X, y = make_regression(n=300, n_features=4)
    names = ["[" * 200 + '\\"{', '\\\\' + "]" * 50, '"' * 3 + "{" * 100, "\u00e9\\u005b"]
    booster = sb.train({"verbosity": -1}, sb.Dataset(X, y, feature_name=names), 2)
    loaded = sb.Booster(model_str=booster.model_to_string())
    assert loaded.feature_name() == names and loaded.model_to_string() == booster.model_to_string()


def test_files_written_before_trees_recorded_their_shrinkage_still_load(model):
    booster, text, X = model
    assert [tree["shrinkage"] for tree in json.loads(text)["trees"]] == [0.1] * booster.num_trees()
    old = sb.Booster(model_str=_edit(text, lambda d: [tree.pop("shrinkage") for tree in d["trees"]]))
    assert all(tree.shrinkage is None for tree in old.trees)
    np.testing.assert_array_equal(old.predict(X, raw_score=True), booster.predict(X, raw_score=True))


def test_files_written_before_min_data_in_bin_still_load(model):
    _, text, X = model
    old = sb.Booster(model_str=_edit(text, lambda d: d["bin_mapper"].pop("min_data_in_bin")))
    assert old.bin_mapper.min_data_in_bin == 1


def test_a_parameter_whose_default_changed_reads_as_the_value_older_files_were_trained_with(model):
    """max_cat_threshold's default went from 32 to 4: files written before record it only when it
    was not 32, so a file without it means 32; new files record 4, and 32 set by hand is left out."""
    _, text, _ = model
    assert json.loads(text)["params"]["max_cat_threshold"] == 4
    assert sb.Booster(model_str=text).params["max_cat_threshold"] == 4
    older = _edit(text, lambda d: d["params"].pop("max_cat_threshold"))
    assert sb.Booster(model_str=older).params["max_cat_threshold"] == 32
    X, y = make_binary(n=200)
    given = sb.train({"max_cat_threshold": 32, "verbosity": -1}, sb.Dataset(X, y), 1)
    assert "max_cat_threshold" not in json.loads(given.model_to_string())["params"]
    assert sb.Booster(model_str=given.model_to_string()).params["max_cat_threshold"] == 32


# -- non-finite numbers ----------------------------------------------------------------------

@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_tokens_are_refused_naming_the_field(model, token):
    _, text, _ = model
    base = json.dumps(json.loads(text)["base_score"])
    _refused(text.replace(f'"base_score":{base}', f'"base_score":{token}', 1), f"'base_score' is {token}")
    _refused(text.replace('"learning_rate":0.1', f'"learning_rate":{token}', 1), "'params.learning_rate'")
    edited = _edit(text, lambda d: d["trees"][2]["value"].__setitem__(1, "TOKEN"))
    _refused(edited.replace('"TOKEN"', token), rf"'trees\[2\]\.value\[1\]' is {token}")


def test_numbers_beyond_float_range_are_refused(model):
    _, text, _ = model
    base = json.dumps(json.loads(text)["base_score"])
    _refused(text.replace(f'"base_score":{base}', '"base_score":1e309', 1), "'base_score' is inf")
    _refused(_edit(text, lambda d: d["bin_mapper"]["edges"][1].__setitem__(0, "X")).replace('"X"', "-1e400"),
             r"'bin_mapper\.edges\[1\]\[0\]' is -inf")
    _refused(_edit(text, lambda d: d["trees"][0]["gain"].__setitem__(0, 10 ** 400)),
             r"'trees\[0\]\.gain\[0\]' is 1000.*too large")


def test_leaf_values_that_overflow_when_added_are_refused(model):
    _, text, _ = model

    def huge_leaves(document):
        for tree in document["trees"]:
            tree["value"] = [1e308] * len(tree["value"])

    _refused(_edit(text, huge_leaves), "'trees' has leaf values that add up to more than a 64-bit float")


def test_leaf_values_whose_shap_values_would_overflow_are_refused(model):
    # leaves of +-1.7e308 predicted finite raw scores, but their SHAP values were inf
    _, text, _ = model

    def near_the_limit(document):
        document["trees"] = document["trees"][:1]
        document["best_iteration"] = 1
        tree = document["trees"][0]
        tree["value"] = [1.7e308 * (-1) ** node for node in range(len(tree["value"]))]

    _refused(_edit(text, near_the_limit), r"'trees' has leaf values that add up to more than .* SHAP values need")


# -- sizes, nesting and integer ranges -------------------------------------------------------

@pytest.mark.parametrize("text", ["[" * 100_000, '{"a":' * 100_000, '{"format":' + "[" * 65 + "]" * 65 + "}",
                                  '"' + "[" * 10 + '"' + "[" * 70])
def test_deep_nesting_is_refused_before_parsing(text):
    _refused(text, "nests lists and objects more than 64 deep")


def test_deep_nesting_inside_a_valid_model_is_refused(model):
    _, text, _ = model
    nested = {"x": 1}
    for _ in range(70):
        nested = [nested]
    _refused(_edit(text, lambda d: d.update(best_score={"a": nested})), "more than 64 deep")


def test_text_and_file_size_are_bounded(model, tmp_path, monkeypatch):
    _, text, _ = model
    monkeypatch.setattr(io, "MAX_MODEL_BYTES", len(text) - 1)
    _refused(text, "more than the")
    path = tmp_path / "model.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFormatError, match="more than the"):
        sb.Booster(model_file=path)


@pytest.mark.parametrize("field, value, match", [
    ("left", 2 ** 40, r"'trees\[1\]\.left\[0\]' is 1099511627776, outside \[-1, "),
    ("right", -2, r"'trees\[1\]\.right\[0\]' is -2, outside \[-1, "),
    ("count", 2 ** 70, r"'trees\[1\]\.count\[0\]' is 1180591620717411303424, outside \[0, 9223372036854775807\]"),
    ("feature", 2 ** 31, r"'trees\[1\]\.feature\[0\]' is 2147483648, outside \[-1, 4\]"),
    ("bin_threshold", 70_000, r"'trees\[1\]\.bin_threshold\[0\]' is 70000, outside \[0, 65534\]"),
])
def test_integers_are_range_checked_before_numpy(model, field, value, match):
    _, text, _ = model
    _refused(_edit(text, lambda d: d["trees"][1][field].__setitem__(0, value)), match)


def test_integers_with_too_many_digits_are_not_json(model):
    _, text, _ = model
    _refused(text.replace('"best_iteration":', '"best_iteration":' + "9" * 5000 + ',"x":', 1), "not valid JSON")


@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(best_iteration=-1), r"'best_iteration' is -1, outside \[0, "),
    (lambda d: d.update(version=0), r"'version' is 0, outside \[1, "),
    (lambda d: d["bin_mapper"].update(seed=-1), r"'bin_mapper\.seed' is -1, outside \[0, "),
    (lambda d: d["bin_mapper"].update(sample_cnt=0), r"'bin_mapper\.sample_cnt' is 0, outside \[1, "),
    (lambda d: d["bin_mapper"].update(min_data_in_bin=2 ** 63), r"'bin_mapper\.min_data_in_bin' is 92233"),
    (lambda d: d["bin_mapper"].update(max_bin=1), r"'bin_mapper\.max_bin' is 1, outside \[2, 65535\]"),
])
def test_scalar_integers_are_range_checked(model, edit, match):
    _refused(_edit(model[1], edit), match)


# -- the bin mapper --------------------------------------------------------------------------

def test_max_bin_beyond_the_bins_is_refused(model):
    """More edges than max_bin allows, or max_bin beyond the two-byte bins, are refused: binning
    data with them would overflow the bins."""
    _, text, _ = model

    def many_bins(document, max_bin):
        document["bin_mapper"].update(max_bin=max_bin)
        document["bin_mapper"]["edges"][0] = [float(i) for i in range(400)]

    _refused(_edit(text, lambda d: many_bins(d, 65536)), r"'bin_mapper\.max_bin' is 65536, outside \[2, 65535\]")
    _refused(_edit(text, lambda d: many_bins(d, 255)),
             r"'bin_mapper\.edges\[0\]' has 400 edges; max_bin 255 allows at most 254")


@pytest.mark.parametrize("edges, match", [
    ([1.0, 1.0], r"'bin_mapper\.edges\[2\]\[1\]' is 1\.0, not above the edge before it"),
    ([2.0, 1.0], r"'bin_mapper\.edges\[2\]\[1\]' is 1\.0, not above"),
    ([1.0, "2"], r"'bin_mapper\.edges\[2\]\[1\]' must be a number, not str"),
    ([1.0, [2.0]], r"'bin_mapper\.edges\[2\]\[1\]' must be a number, not list"),
    ([True], r"'bin_mapper\.edges\[2\]\[0\]' must be a number, not bool"),
    ({"0": 1.0}, r"'bin_mapper\.edges\[2\]' must be a list, not dict"),
])
def test_bad_edges_are_refused(model, edges, match):
    _refused(_edit(model[1], lambda d: d["bin_mapper"]["edges"].__setitem__(2, edges)), match)


def test_nan_edge_is_refused(model):
    text = _edit(model[1], lambda d: d["bin_mapper"]["edges"][0].__setitem__(0, "X")).replace('"X"', "NaN")
    _refused(text, r"'bin_mapper\.edges\[0\]\[0\]' is NaN")


# -- types -----------------------------------------------------------------------------------

@pytest.mark.parametrize("edit, match", [
    (lambda d: d.update(best_iteration=True), "'best_iteration' must be an integer, not bool"),
    (lambda d: d.update(version=True), "'version' must be an integer, not bool"),
    (lambda d: d["bin_mapper"].update(max_bin=True), r"'bin_mapper\.max_bin' must be an integer, not bool"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, True), r"'trees\[0\]\.left\[0\]' must be an integer, not bool"),
    (lambda d: d["trees"][0]["missing_left"].__setitem__(0, 1), r"'trees\[0\]\.missing_left\[0\]' must be true or"),
    (lambda d: d["trees"][0]["left"].__setitem__(0, 1.0), r"'trees\[0\]\.left\[0\]' must be an integer, not float"),
    (lambda d: d.update(base_score="0.5"), "'base_score' must be a number, not str"),
    (lambda d: d.update(base_score=None), "'base_score' must be a number, not NoneType"),
    (lambda d: d["trees"][0]["value"].__setitem__(0, "1.5"), r"'trees\[0\]\.value\[0\]' must be a number, not str"),
    (lambda d: d["trees"][0]["value"].__setitem__(0, None), r"'trees\[0\]\.value\[0\]' must be a number, not None"),
    (lambda d: d["trees"][0]["value"].__setitem__(0, {}), r"'trees\[0\]\.value\[0\]' must be a number, not dict"),
    (lambda d: d["trees"][0].update(value="1.5"), r"'trees\[0\]\.value' must be a list, not str"),
    (lambda d: d["trees"][0]["threshold"].__setitem__(0, "nan"), r"'trees\[0\]\.threshold\[0\]' is 'nan', neither"),
    (lambda d: d["trees"].__setitem__(0, []), r"'trees\[0\]' must be an object, not list"),
    (lambda d: d.update(trees={}), "'trees' must be a list, not dict"),
    (lambda d: d.update(feature_names="abc"), "'feature_names' must be a list, not str"),
    (lambda d: d["feature_names"].__setitem__(1, 7), r"'feature_names\[1\]' must be a string, not int"),
    (lambda d: d["feature_names"].__setitem__(1, d["feature_names"][0]), r"'feature_names\[1\]' repeats"),
    (lambda d: d.update(best_score={"valid_0": 3}), r"'best_score\.valid_0' must be an object, not int"),
    (lambda d: d.update(best_score={"valid_0": {"auc": "x"}}), r"'best_score\.valid_0\.auc' must be a number"),
    (lambda d: d.update(smartboost_version=1), "'smartboost_version' must be a string, not int"),
    (lambda d: d["objective"].update(name=3), r"'objective\.name' must be a string, not int"),
    (lambda d: d["objective"].update(num_class=3), "'objective' is invalid: num_class=3 is only for multiclass"),
    (lambda d: d["objective"].update(colour=3), r"'objective\.colour' is invalid: unknown parameter"),
    (lambda d: d["objective"].update(sigmoid=0), r"'objective\.sigmoid' is invalid: parameter 'sigmoid' must be"),
    # options whose loss overflows a float raised OverflowError out of the objective's constructor
    (lambda d: d["objective"].update(sigmoid=1e300), r"'objective' is invalid: sigmoid=1e\+300 is too large"),
    (lambda d: d.update(objective={"name": "gaussian_margin", "gaussian_c": 1e3, "gaussian_s": 1e3}),
     r"'objective' is invalid: gaussian_c=1000\.0 and gaussian_s=1000\.0 are too large"),
    (lambda d: d["params"].update(num_leaves="many"), r"'params\.num_leaves' is invalid: parameter 'num_leaves'"),
    (lambda d: d["params"].update(max_leaves=7), "'params' is invalid: parameter 'num_leaves' given twice"),
    (lambda d: d["trees"][0].update(shrinkage="0.1"), r"'trees\[0\]\.shrinkage' must be a number, not str"),
    (lambda d: d["trees"][0].update(shrinkage=True), r"'trees\[0\]\.shrinkage' must be a number, not bool"),
    (lambda d: d["trees"][0].update(shrinkage=0), r"'trees\[0\]\.shrinkage' is 0: a learning rate is positive"),
    (lambda d: d["trees"][0].update(shrinkage=-0.1), r"'trees\[0\]\.shrinkage' is -0\.1: a learning rate is"),
    (lambda d: d.update(extra=1), "'extra' is not a field of this format"),
    (lambda d: d["trees"][0].update(extra=[]), r"'trees\[0\]\.extra' is not a field of this format"),
])
def test_wrong_types_are_refused_naming_the_field(model, edit, match):
    _refused(_edit(model[1], edit), match)


# -- tree structure --------------------------------------------------------------------------

@pytest.mark.parametrize("edit, match", [
    (lambda t: t["right"].__setitem__(0, t["right"][0] + 1), r"'trees\[0\]\.right\[0\]' is \d+: a split's right"),
    (lambda t: t["left"].__setitem__(0, 0), r"'trees\[0\]\.left\[0\]' is 0: a child must come after its parent"),
    (lambda t: t["feature"].__setitem__(0, -1), r"'trees\[0\]\.feature\[0\]' is -1: a split node needs a feature"),
    (lambda t: t["threshold"].__setitem__(0, 0.123), r"'trees\[0\]\.threshold\[0\]' is 0\.123: not the threshold"),
    (lambda t: t["value"].pop(), r"'trees\[0\]\.value' has \d+ entries, not \d+"),
    (lambda t: [t[name].clear() for name in t if isinstance(t[name], list)], r"'trees\[0\]\.left' has 0 nodes"),
    # the counts weigh the children in TreeSHAP: a zero root count made its values NaN, others wrong
    (lambda t: t["count"].__setitem__(0, 0), r"'trees\[0\]\.count\[0\]' is 0: a split node covers at least one"),
    (lambda t: t["count"].__setitem__(0, t["count"][0] + 1), r"'trees\[0\]\.count\[0\]' is \d+, not the sum of its"),
    (lambda t: t["count"].__setitem__(t["left"][0], 2 ** 62), r"'trees\[0\]\.count\[0\]' is \d+, not the sum of"),
    (lambda t: t.update(count=[2 ** 62] * len(t["count"])), r"'trees\[0\]\.count\[0\]' is 4611686018427387904, not"),
])
def test_inconsistent_trees_are_refused(model, edit, match):
    _refused(_edit(model[1], lambda d: edit(d["trees"][0])), match)


def test_bin_threshold_beyond_its_features_bins_is_refused(model):
    booster, text, _ = model
    tree = booster.trees[0]
    n_bins = int(booster.bin_mapper.n_bins[tree.feature[0]])
    _refused(_edit(text, lambda d: d["trees"][0]["bin_threshold"].__setitem__(0, n_bins)),
             rf"'trees\[0\]\.bin_threshold\[0\]' is {n_bins}: outside its feature's value bins")


# -- truncated and broken files --------------------------------------------------------------

def test_every_truncation_is_a_model_format_error(model):
    _, text, _ = model
    cuts = sorted({*range(0, len(text), max(1, len(text) // 300)), *range(len(text) - 40, len(text))})
    for cut in cuts:
        with pytest.raises(ModelFormatError):
            sb.Booster(model_str=text[:cut])


@pytest.mark.parametrize("text", ["", "null", "[]", '"model"', "1e999", "{}", '{"format": "smartboost-model"}',
                                  "\ufeff{}", "{\"format\": NaN}"])
def test_documents_that_are_not_models(text):
    with pytest.raises(ModelFormatError):
        sb.Booster(model_str=text)


def test_a_key_twice_in_one_object_is_refused(model):
    booster, text, X = model
    # json keeps the last value: the first 'trees' (or best_iteration, or a tree's 'value') was dropped silently
    _refused(text[:-1] + ',"trees":[]}', "model field 'trees' appears twice in one object")
    _refused(text.replace('"value":', '"value":[0],"value":', 1), "model field 'value' appears twice")


def test_a_model_string_must_be_text():
    with pytest.raises(ModelFormatError, match="must be str"):
        sb.Booster(model_str=b"{}")


def test_a_model_file_must_be_a_path_not_a_file_descriptor(model, tmp_path):
    booster = model[0]
    X = np.zeros((20, booster.num_feature()))
    y = np.arange(20) % 2
    with pytest.raises(ParameterError, match="model_file must be a path .* got int"):
        sb.Booster(model_file=0)  # os.stat(0) is the stdin descriptor's
    with pytest.raises(ParameterError, match="model_file must be a path"):
        sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y, reference=booster), 1, init_model=1)
    with pytest.raises(ParameterError, match="filename must be a path .* got int"):
        booster.save_model(1)
    with pytest.raises(ParameterError, match="filename must be a path .* got bytes"):
        booster.save_model(str(tmp_path / "m.json").encode())


# -- writing ---------------------------------------------------------------------------------

@pytest.fixture
def umask():
    """Set the process umask for a test, restoring it afterwards."""
    previous = os.umask(0o022)
    yield os.umask
    os.umask(previous)


@posix_only
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_open_would_give(model, tmp_path, umask, mask, mode):
    umask(mask)
    model[0].save_model(tmp_path / "new.json")
    with open(tmp_path / "plain.json", "w"):
        pass
    assert os.stat(tmp_path / "new.json").st_mode & 0o777 == mode == os.stat(tmp_path / "plain.json").st_mode & 0o777


@posix_only
@pytest.mark.parametrize("mask", [0o022, 0o077])
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o666])
def test_an_existing_file_keeps_its_mode(model, tmp_path, umask, mask, mode):
    umask(mask)
    path = tmp_path / "model.json"
    path.write_text("old")
    path.chmod(mode)
    model[0].save_model(path)
    assert path.stat().st_mode & 0o777 == mode
    assert path.read_text(encoding="utf-8") == model[1]


@posix_only
def test_a_symlink_is_written_through_and_stays_a_link(model, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    target = folder / "v1.json"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "current.json"
    link.symlink_to(os.path.relpath(target, tmp_path))
    chain = tmp_path / "latest.json"
    chain.symlink_to(link)
    model[0].save_model(chain)
    assert chain.is_symlink() and link.is_symlink() and os.readlink(chain) == str(link)
    assert target.read_text(encoding="utf-8") == model[1] and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in folder.iterdir()) == ["v1.json"]  # no temporary file left


@posix_only
def test_a_dangling_symlink_creates_its_target(model, tmp_path, umask):
    umask(0o022)
    link = tmp_path / "model.json"
    link.symlink_to(tmp_path / "target.json")
    model[0].save_model(link)
    assert link.is_symlink() and (tmp_path / "target.json").read_text(encoding="utf-8") == model[1]
    assert (tmp_path / "target.json").stat().st_mode & 0o777 == 0o644


def test_a_failed_write_leaves_no_temporary_file(model, tmp_path):
    (tmp_path / "model.json").mkdir()  # os.replace cannot put a file over a folder
    with pytest.raises(OSError) as error:
        model[0].save_model(tmp_path / "model.json")
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]
    # the error names the file asked for, not the hidden temporary file
    assert str(error.value) == f"[Errno 21] Is a directory: '{tmp_path / 'model.json'}'"
    with pytest.raises(FileNotFoundError, match=r"No such file or directory: '.*missing/model\.json'$"):
        model[0].save_model(tmp_path / "missing" / "model.json")


def test_a_model_with_an_infinite_leaf_is_not_saved_and_the_old_file_is_kept(tmp_path):
    """Training stops before a tree overflows (test_bad_input); a model edited into one is still
    refused on save, where a bare ValueError once escaped, and the file there is left alone."""
    X, y = make_regression(n=300)
    booster = sb.train({"verbosity": -1}, sb.Dataset(X, y), 2)
    booster.trees[0].value[booster.trees[0].left < 0] = np.inf
    path = tmp_path / "model.json"
    path.write_text("the previous model")
    with pytest.raises(ModelFormatError, match=r"cannot save the model: trees\[0\]\.value\[\d+\] is -?inf.*"
                                               "lower learning_rate"):
        booster.save_model(path)
    assert path.read_text() == "the previous model"
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]


@pytest.mark.parametrize("edit, match", [
    (lambda b: setattr(b, "base_score", np.inf), "base_score is inf"),
    (lambda b: b.trees[1].threshold.__setitem__(0, np.nan), r"trees\[1\]\.threshold\[0\] is nan"),
    (lambda b: b.trees[2].gain.__setitem__(0, np.nan), r"trees\[2\]\.gain\[0\] is nan"),
    (lambda b: b.trees[0].hessian.__setitem__(1, -np.inf), r"trees\[0\]\.hessian\[1\] is -inf"),
    (lambda b: b.best_score.update(valid_0={"auc": np.nan}), r"best_score\.valid_0\.auc is nan"),
])
def test_non_finite_numbers_are_refused_on_save(model, edit, match):
    booster = sb.Booster(model_str=model[1])
    edit(booster)
    with pytest.raises(ModelFormatError, match=match):
        booster.model_to_string()


@pytest.mark.parametrize("text", ["tree\nversion=v4\nnum_class=1\n", "tree\r\nversion=v3\r\n"])
def test_a_lightgbm_text_model_is_named_as_one(text, tmp_path):
    # it was "model is not valid JSON (corrupt or truncated file?)", as if the file were damaged
    path = tmp_path / "lightgbm.txt"
    path.write_text(text)
    with pytest.raises(ModelFormatError, match="LightGBM text model"):
        sb.Booster(model_file=path)


def test_a_model_file_that_does_not_load_is_named(tmp_path):
    """A run may read several model files (a model, init_model, the CLI's): the error names the one."""
    path = tmp_path / "cut.json"
    path.write_text('{"format": "smartboost", "trees": [')
    with pytest.raises(ModelFormatError, match=r"cut\.json: model is not valid JSON"):
        sb.Booster(model_file=path)
    with pytest.raises(ModelFormatError, match="^model is not valid JSON"):
        sb.Booster(model_str=path.read_text())
