"""Model files: exact round trips, pickling, and clear errors for bad files."""

import json
import pickle

import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost.errors import ModelFormatError


@pytest.fixture(scope="module")
def model_and_data():
    X, y = make_binary(n=2000, seed=1, missing_rate=0.1)
    X[::7, 2] = np.inf
    X[::11, 3] = -np.inf
    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 20)
    return booster, X


def test_save_load_round_trip_is_bit_exact(model_and_data, tmp_path):
    booster, X = model_and_data
    path = tmp_path / "model.json"
    booster.save_model(path)
    loaded = sb.Booster(model_file=path)
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), booster.predict(X, raw_score=True))
    assert loaded.model_to_string() == booster.model_to_string()
    assert loaded.best_iteration == booster.best_iteration and loaded.feature_name() == booster.feature_name()
    json.loads(path.read_text())  # strict JSON: no NaN/Infinity tokens


def test_infinite_thresholds_survive(model_and_data):
    booster, X = model_and_data
    X2 = X.copy()
    X2[:, :] = np.nan  # every row takes the missing direction everywhere
    loaded = sb.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X2), booster.predict(X2))


def test_pickle_goes_through_the_model_text(model_and_data):
    booster, X = model_and_data
    restored = pickle.loads(pickle.dumps(booster))
    np.testing.assert_array_equal(restored.predict(X), booster.predict(X))
    assert restored.model_to_string() == booster.model_to_string()


def test_save_first_iterations(model_and_data):
    booster, X = model_and_data
    five = sb.Booster(model_str=booster.model_to_string(num_iteration=5))
    assert five.num_trees() == 5
    np.testing.assert_array_equal(five.predict(X), booster.predict(X, num_iteration=5))


def _mutate(text, fn):
    doc = json.loads(text)
    fn(doc)
    return json.dumps(doc)


@pytest.mark.parametrize("corrupt, match", [
    (lambda t: t[: len(t) // 2], "not valid JSON"),
    (lambda t: "", "not valid JSON"),
    (lambda t: "[1, 2]", "not a smartboost model"),
    (lambda t: _mutate(t, lambda d: d.update(version=99)), "newer smartboost"),
    (lambda t: _mutate(t, lambda d: d.pop("trees")), "'trees'"),
    (lambda t: _mutate(t, lambda d: d.update(base_score="x")), "'base_score'"),
    (lambda t: _mutate(t, lambda d: d["trees"][0].pop("left")), r"'trees\[0\]\.left' is missing"),
    (lambda t: _mutate(t, lambda d: d["trees"][1]["left"].__setitem__(0, 0)), r"'trees\[1\]\.left\[0\]' is 0: a child must come after its parent"),
    (lambda t: _mutate(t, lambda d: d["trees"][0]["feature"].__setitem__(0, 999)), r"'trees\[0\]\.feature\[0\]' is 999, outside \[-1, 5\]"),
    (lambda t: _mutate(t, lambda d: d["trees"][0]["value"].pop()), r"'trees\[0\]\.value' has \d+ entries, not \d+"),
    (lambda t: _mutate(t, lambda d: d["bin_mapper"]["edges"][0].reverse()), r"'bin_mapper\.edges\[0\]\[1\]' is .*, not above the edge before it"),
    (lambda t: _mutate(t, lambda d: d["params"].update(num_leafs=3)), r"'params\.num_leafs' is invalid: unknown parameter"),
    (lambda t: _mutate(t, lambda d: d["objective"].update(name="nope")), r"'objective' is invalid: unknown objective"),
    (lambda t: _mutate(t, lambda d: d.update(best_iteration=999)), r"'best_iteration' is 999, outside \[0, 20\]"),
])
def test_corrupt_models_raise_clear_errors(model_and_data, corrupt, match):
    booster, _ = model_and_data
    with pytest.raises(ModelFormatError, match=match):
        sb.Booster(model_str=corrupt(booster.model_to_string()))


def test_binary_garbage_file(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(b"\x80\x04\x95pickle\xff\xfe")
    with pytest.raises(ModelFormatError, match="not UTF-8"):
        sb.Booster(model_file=path)


def test_booster_needs_a_source():
    with pytest.raises(sb.ParameterError):
        sb.Booster()


def test_data_format_is_optional_and_round_trips(model_and_data, tmp_path):
    booster, X = model_and_data
    text = booster.model_to_string()
    assert booster.data_format is None and '"data_format"' not in text  # absent unless set: files as before
    copy = sb.Booster(model_str=text)
    copy.data_format = {"svmlight_zero_based": False}
    copy.save_model(tmp_path / "m.json")
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    assert loaded.data_format == {"svmlight_zero_based": False}
    assert json.loads(loaded.model_to_string())["data_format"] == {"svmlight_zero_based": False}
    assert pickle.loads(pickle.dumps(loaded)).data_format == {"svmlight_zero_based": False}
    loaded.data_format = None
    assert loaded.model_to_string() == text


@pytest.mark.parametrize("value", [{"svmlight_zero_based": 1}, {}, {"svmlight_zero_based": True, "other": 1}, [True]])
def test_invalid_data_format(model_and_data, value):
    booster, _ = model_and_data
    with pytest.raises(ModelFormatError, match="data_format"):
        sb.Booster(model_str=_mutate(booster.model_to_string(), lambda d: d.update(data_format=value)))
