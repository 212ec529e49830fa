"""Golden models: a fixed set of training runs must give the same model files, byte for byte.

Every objective family, sampler, candidate-selection type and scope, grow policy, step rule,
first-order boosting, multiclass and ranking, missing values, sparse input, weights, init
scores, categorical features and constraints are covered by one small run each;
``golden_models.json`` holds the sha256 of each model file (without the ``smartboost_version``
field) and of its predictions. A refactoring must leave every hash as it is. A change that means
to change models regenerates the file with ``SMARTBOOST_REGEN_GOLDEN=1 python -m pytest
tests/test_golden_models.py`` and says why in its commit message.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

import smartboost as sb

_GOLDEN = Path(__file__).with_name("golden_models.json")
_REGENERATE = os.environ.get("SMARTBOOST_REGEN_GOLDEN") == "1"


def _data(n: int = 800, n_features: int = 6, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    X[:, 3] = np.round(X[:, 3])  # few distinct values
    X[rng.random(X.shape) < 0.05] = np.nan
    Z = np.nan_to_num(X)
    logit = 1.5 * Z[:, 0] - Z[:, 1] ** 2 + np.sin(2 * Z[:, 2]) + 0.5 * Z[:, 3] * Z[:, 4]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    target = Z[:, 0] * 2 + np.abs(Z[:, 1]) - Z[:, 2] * Z[:, 3] + 0.1 * rng.standard_normal(n)
    grades = np.clip(np.round(logit + rng.standard_normal(n)), 0, 3)
    classes = np.digitize(logit, [-1.0, 0.5])
    return X, y, target, grades, classes


_BASE = {"num_leaves": 7, "learning_rate": 0.2, "min_data_in_leaf": 5, "seed": 3, "verbosity": -1}

# name -> (params, label kind, extras)
RUNS: dict[str, tuple[dict, str, dict]] = {
    "regression": ({"objective": "regression"}, "target", {}),
    "huber": ({"objective": "huber", "huber_delta": 0.5}, "target", {}),
    "binary": ({"objective": "binary"}, "y", {}),
    "binary-weights-init": ({"objective": "binary"}, "y", {"weight": True, "init_score": True}),
    "binary-sparse": ({"objective": "binary"}, "y", {"sparse": True}),
    "binary-depthwise": ({"objective": "binary", "grow_policy": "depthwise", "max_depth": 3}, "y", {}),
    "binary-l1-l2-gain": ({"objective": "binary", "lambda_l1": 0.5, "lambda_l2": 2.0, "min_gain_to_split": 0.1,
                           "min_sum_hessian_in_leaf": 1.0}, "y", {}),
    "binary-max-bin-15": ({"objective": "binary", "max_bin": 15, "min_data_in_bin": 1}, "y", {}),
    "multiclass": ({"objective": "multiclass", "num_class": 3}, "classes", {}),
    "multiclass-mvs": ({"objective": "multiclass", "num_class": 3, "sampling": "mvs", "sample_rate": 0.4},
                       "classes", {}),
    "lambdarank": ({"objective": "lambdarank"}, "grades", {"queries": True}),
    "lambdarank-queries-sampled": ({"objective": "lambdarank", "sampling": "uniform", "sample_rate": 0.5,
                                    "sampling_unit": "query"}, "grades", {"queries": True}),
    "rank-pairwise-goss": ({"objective": "rank_pairwise", "sampling": "goss", "sample_rate": 0.5},
                           "grades", {"queries": True}),
    "exponential": ({"objective": "exponential"}, "y", {}),
    "smart-logistic": ({"objective": "smart_logistic"}, "y", {}),
    "logistic-log2": ({"objective": "logistic_log2"}, "y", {}),
    "squared-margin": ({"objective": "squared_margin"}, "y", {}),
    "regularized-logistic": ({"objective": "regularized_logistic", "logistic_mu": 0.01}, "y", {}),
    "hinge-gradient": ({"objective": "hinge", "boosting": "gradient"}, "y", {}),
    "sigmoid-margin-gradient": ({"objective": "sigmoid_margin", "boosting": "gradient"}, "y", {}),
    "gradient-smooth": ({"objective": "binary", "boosting": "gradient", "step_rule": "smooth"}, "y", {}),
    "line": ({"objective": "binary", "step_rule": "line"}, "y", {}),
    "leaf-line": ({"objective": "regression", "step_rule": "leaf_line"}, "target", {}),
    "line-all-rows": ({"objective": "binary", "step_rule": "line", "line_search_rows": "all",
                       "sampling": "bernoulli", "sample_rate": 0.5}, "y", {}),
    **{f"sampling-{name}": ({"objective": "binary", "sampling": name, "sample_rate": 0.3}, "y", {})
       for name in ("uniform", "bernoulli", "goss", "smart1", "smart2", "mvs", "loss")},
    "sampling-trimming": ({"objective": "binary", "sampling": "trimming", "trimming_alpha": 0.1}, "y", {}),
    "sampling-smart-rho": ({"objective": "binary", "sampling": "smart1", "smart_rho": 2.0}, "y", {}),
    "sampling-mvs-lambda-freq": ({"objective": "regression", "sampling": "mvs", "sample_rate": 0.3, "mvs_lambda": 1.0,
                                  "sampling_freq": 2}, "target", {}),
    "sampling-goss-rates": ({"objective": "binary", "sampling": "goss", "goss_top_rate": 0.1,
                             "goss_other_rate": 0.2}, "y", {}),
    **{f"selection-{t}-{scope}": ({"objective": "binary", "selection_type": t, "selection_t": 3,
                                   "selection_scope": scope}, "y", {})
       for t in (1, 2, 3) for scope in ("tree", "node")},
    "colsample-bytree": ({"objective": "binary", "colsample_bytree": 0.5}, "y", {}),
    "colsample-bynode": ({"objective": "binary", "colsample_bynode": 0.7}, "y", {}),
    "categorical": ({"objective": "binary", "min_data_per_group": 10, "cat_smooth": 1.0}, "y", {"categorical": True}),
    "categorical-multiclass-onehot": ({"objective": "multiclass", "num_class": 3, "max_cat_to_onehot": 32}, "classes",
                                      {"categorical": True}),
    "monotone": ({"objective": "regression", "monotone_constraints": [1, -1, 0, 0, 0, 0]}, "target", {}),
    "interaction": ({"objective": "binary", "interaction_constraints": [[0, 1], [2, 3, 4, 5]]}, "y", {}),
}


def _run(name: str) -> tuple[str, str]:
    params, kind, extras = RUNS[name]
    X, y, target, grades, classes = _data()
    label = {"y": y, "target": target, "grades": grades, "classes": classes}[kind]
    if name == "selection-2-tree" or name == "selection-2-node":
        params = {k: v for k, v in params.items() if k != "selection_t"}
    data = sp.csr_matrix(np.nan_to_num(X) * (np.abs(np.nan_to_num(X)) > 1)) if extras.get("sparse") else X
    if extras.get("categorical"):  # the two strongest columns as integer codes, 24 categories each (NaN: missing)
        data = X.copy()
        data[:, :2] = np.floor(np.clip(X[:, :2] + 3, 0, 5.99) * 4)
    rng = np.random.default_rng(1)
    dataset = sb.Dataset(data, label, weight=rng.uniform(0.5, 2.0, len(label)) if extras.get("weight") else None,
                         init_score=rng.normal(0, 0.3, len(label)) if extras.get("init_score") else None,
                         group=[40] * 20 if extras.get("queries") else None, params=params,
                         categorical_feature=[0, 1] if extras.get("categorical") else "auto")
    booster = sb.train({**_BASE, **params}, dataset, 8)
    document = json.loads(booster.model_to_string())
    document.pop("smartboost_version")
    model = json.dumps(document, sort_keys=True).encode()
    prediction = np.ascontiguousarray(booster.predict(data, raw_score=True), np.float64).tobytes()
    return hashlib.sha256(model).hexdigest(), hashlib.sha256(prediction).hexdigest()


def _golden() -> dict:
    return json.loads(_GOLDEN.read_text()) if _GOLDEN.exists() else {}


@pytest.mark.parametrize("name", list(RUNS))
def test_the_same_runs_give_the_same_models(name):
    model, prediction = _run(name)
    if _REGENERATE:
        golden = _golden()
        golden[name] = {"model": model, "prediction": prediction}
        _GOLDEN.write_text(json.dumps(dict(sorted(golden.items())), indent=1) + "\n")
        return
    expected = _golden().get(name)
    assert expected is not None, f"no golden hashes for {name}: regenerate (see the module docstring)"
    assert (model, prediction) == (expected["model"], expected["prediction"]), f"{name} trains a different model"


def test_every_golden_run_still_exists():
    assert set(_golden()) == set(RUNS)
