from pathlib import Path

import pytest

from smartboost._params import PARAMS, parameters_markdown, resolve_params
from smartboost.errors import ParameterError


def test_defaults_follow_lightgbm():
    p = resolve_params(None)
    assert p["num_leaves"] == 31 and p["learning_rate"] == 0.1 and p["max_bin"] == 255
    assert p["min_data_in_leaf"] == 20 and p["min_sum_hessian_in_leaf"] == 1e-3
    assert p["objective"] == "regression" and p["metric"] is None


@pytest.mark.parametrize("alias, canonical, value", [
    ("eta", "learning_rate", 0.3),
    ("reg_lambda", "lambda_l2", 2.0),
    ("reg_alpha", "lambda_l1", 0.5),
    ("n_jobs", "num_threads", 1),
    ("min_child_weight", "min_sum_hessian_in_leaf", 1.0),
    ("min_child_samples", "min_data_in_leaf", 5),
    ("gamma", "min_gain_to_split", 0.1),
    ("max_leaves", "num_leaves", 63),
    ("n_estimators", "num_iterations", 7),
    ("random_state", "seed", 3),
    ("max_bins", "max_bin", 63),
])
def test_aliases(alias, canonical, value):
    assert resolve_params({alias: value})[canonical] == value


@pytest.mark.parametrize("objective, canonical", [
    ("binary:logistic", "binary"), ("binary", "binary"), ("reg:squarederror", "regression"),
    ("L2", "regression"), ("mse", "regression")])
def test_objective_aliases(objective, canonical):
    assert resolve_params({"objective": objective})["objective"] == canonical


def test_unknown_parameter_names_it_and_suggests():
    with pytest.raises(ParameterError, match=r"unknown parameter 'num_leafs'.*'num_leaves'"):
        resolve_params({"num_leafs": 10})


@pytest.mark.parametrize("params, match", [
    ({"learning_rate": 0}, "learning_rate"),
    ({"learning_rate": -0.1}, "learning_rate"),
    ({"learning_rate": float("nan")}, "learning_rate"),
    ({"num_leaves": 1}, "num_leaves"),
    ({"max_bin": 65536}, "max_bin"),
    ({"max_bin": 1}, "max_bin"),
    ({"min_data_in_leaf": -1}, "min_data_in_leaf"),
    ({"lambda_l2": -1.0}, "lambda_l2"),
    ({"num_leaves": 2.5}, "num_leaves"),
    ({"num_leaves": "31"}, "num_leaves"),
    ({"num_leaves": True}, "num_leaves"),
    ({"objective": "binray"}, "binary"),
    ({"metric": "acu"}, "auc"),
    ({"grow_policy": "sideways"}, "grow_policy"),
    ({"boost_from_average": "maybe"}, "boost_from_average"),
])
def test_bad_values_name_the_parameter(params, match):
    with pytest.raises(ParameterError, match=match):
        resolve_params(params)


def test_numpy_booleans_are_booleans():
    # numpy 2 names its bool type 'bool', not 'bool_': np.True_ was refused as "not true or false"
    np = pytest.importorskip("numpy")
    assert resolve_params({"boost_from_average": np.False_})["boost_from_average"] is False
    assert resolve_params({"first_metric_only": np.True_})["first_metric_only"] is True


def test_conflicting_aliases():
    with pytest.raises(ParameterError, match="given twice"):
        resolve_params({"eta": 0.1, "learning_rate": 0.2})
    assert resolve_params({"eta": 0.2, "learning_rate": 0.2})["learning_rate"] == 0.2


def test_metric_lists():
    assert resolve_params({"metric": "auc, binary_logloss"})["metric"] == ("auc", "logloss")
    assert resolve_params({"metric": ["l2", "mae"]})["metric"] == ("mse", "mae")
    assert resolve_params({"metric": "None"})["metric"] == ()


def test_every_name_unique():
    names = [n for p in PARAMS for n in p.names]
    assert len(names) == len(set(names))


def test_parameter_docs_are_generated_from_the_registry():
    doc = Path(__file__).resolve().parents[1] / "docs" / "reference" / "parameters.md"
    assert doc.read_text() == parameters_markdown(), \
        "docs/reference/parameters.md is stale: python -m smartboost._params > docs/reference/parameters.md"
