"""The same seed gives the same model, bit for bit, whatever the thread count."""

import json

import numba
import pytest
from conftest import make_binary

import smartboost as sb


@pytest.fixture(scope="module")
def data():
    X, y = make_binary(n=20000, n_features=8, seed=3, missing_rate=0.05)
    return X, y


def _model(data, **params):
    X, y = data
    return sb.train({"objective": "binary", "num_leaves": 63, "verbosity": -1, **params},
                    sb.Dataset(X, y, params={"bin_construct_sample_cnt": 5000, "seed": params.get("seed", 0)}),
                    15).model_to_string()


def test_same_seed_same_model(data):
    assert _model(data) == _model(data)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
def test_thread_count_does_not_change_the_model(data):
    one, two = (json.loads(_model(data, num_threads=n)) for n in (1, 2))
    assert one.pop("params")["num_threads"] == 1 and two.pop("params")["num_threads"] == 2
    assert one == two


def test_seed_changes_the_binning_sample(data):
    assert _model(data, seed=1) != _model(data, seed=2)


@pytest.mark.parametrize("n_rows", [1, 3, 100, 5000])
def test_predictions_of_a_batch_do_not_depend_on_threads_or_on_the_other_rows(data, n_rows):
    X, y = data
    booster = sb.train({"objective": "binary", "num_leaves": 63, "verbosity": -1}, sb.Dataset(X, y), 15)
    full = booster.predict(X, raw_score=True)
    for threads in (1, 2):
        booster.params["num_threads"] = threads
        part = booster.predict(X[7:7 + n_rows], raw_score=True)
        assert part.tobytes() == full[7:7 + n_rows].tobytes()
