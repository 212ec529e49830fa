"""Shared fixtures: the shared data folder, small synthetic problems."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pytest

_SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def pytest_configure(config):
    # Tests read public datasets from the workspace's shared folder through the project's loader.
    if "SMARTBOOST_DATA" not in os.environ and _SHARED_DATA.is_dir():
        os.environ["SMARTBOOST_DATA"] = str(_SHARED_DATA)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The dataset cache folder holding the public sets; skips when it is absent."""
    path = Path(os.environ.get("SMARTBOOST_DATA", _SHARED_DATA))
    if not (path / "a9a" / "a9a.gz").exists():
        pytest.skip(f"public datasets not found in {path} (set SMARTBOOST_DATA)")
    return path


def make_binary(n=3000, n_features=6, seed=0, missing_rate=0.0):
    """A small nonlinear binary problem (float64 features, 0/1 labels)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    logit = 1.5 * X[:, 0] - X[:, 1] ** 2 + np.sin(2 * X[:, 2]) + 0.5 * X[:, 3] * X[:, 4]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    if missing_rate:
        X[rng.random(X.shape) < missing_rate] = np.nan
    return X, y


def make_regression(n=3000, n_features=5, seed=0):
    """A small nonlinear regression problem."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    y = X[:, 0] * 2 + np.abs(X[:, 1]) - X[:, 2] * X[:, 3] + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.fixture
def binary_data():
    return make_binary()


@pytest.fixture
def regression_data():
    return make_regression()


class SideBySide(NamedTuple):
    """smartboost's and LightGBM's models of one run, with what LightGBM recorded and its start."""

    ours: Any
    theirs: Any
    history: dict
    start: Any


def train_beside_lightgbm(params, X, y, weight, bins, rounds) -> SideBySide:
    """The same run in both libraries on ``X, y`` (``bins``: the Dataset parameters of both), each
    evaluating its training data as "train"; ``start`` is LightGBM's start (BoostFromScore) alone,
    in trees that cannot split."""
    import lightgbm as lgb

    import smartboost as sb

    ours = sb.train(params, sb.Dataset(X, y, weight=weight, params=bins), rounds,
                    valid_sets=[sb.Dataset(X, y, weight=weight)], valid_names=["train"])
    theirs_train, history = lgb.Dataset(X, y, weight=weight, params=bins), {}
    theirs = lgb.train({**params, "num_threads": 1, "deterministic": True}, theirs_train, rounds,
                       valid_sets=[theirs_train], valid_names=["train"], callbacks=[lgb.record_evaluation(history)])
    start = lgb.train({**params, "min_gain_to_split": 1e30, "num_threads": 1}, lgb.Dataset(X, y, weight=weight), 1)
    return SideBySide(ours, theirs, history, start)
