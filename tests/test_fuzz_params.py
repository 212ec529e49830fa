"""Hostile parameters: every value a user can pass gives a model or a smartboost error.

Property-based (hypothesis): random parameter names of the registry (aliases included) with
values of every kind (huge and negative integers, non-finite and extreme floats, strings,
containers), resolved and then trained with on a tiny set. Any exception that is not a
:class:`smartboost.SmartBoostError` fails. The number of examples is set by
``SMARTBOOST_FUZZ_EXAMPLES`` (default 150); a longer run:
``SMARTBOOST_FUZZ_EXAMPLES=5000 python -m pytest tests/test_fuzz_params.py``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import smartboost as sb
from smartboost._params import _BY_NAME, explicit_params, resolve_params
from smartboost.errors import ParameterError, SmartBoostError

EXAMPLES = int(os.environ.get("SMARTBOOST_FUZZ_EXAMPLES", "150"))

# every name but those of the objective (drawn apart), the metrics and the verbosity
_NAMES = st.sampled_from(sorted(n for n, p in _BY_NAME.items() if p.name not in ("objective", "metric", "verbosity")))
_WILD = st.one_of(
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=8),
    st.lists(st.integers(-3, 3), max_size=3),
)
_WORDS = ["none", "uniform", "bernoulli", "trimming", "goss", "smart1", "smart2", "mvs", "loss", "leafwise",
          "depthwise", "newton", "gradient", "shrinkage", "line", "leaf_line", "smooth", "sample", "all", "tree",
          "node", "row", "query", "adaptive", "auto"]


def _plausible(name: str) -> st.SearchStrategy:
    """Values of the parameter's own kind, edges of its range included."""
    default = _BY_NAME[name].default
    if isinstance(default, bool):
        return st.booleans()
    if isinstance(default, int):
        return st.one_of(st.integers(-2, 300), st.sampled_from([2**31 - 1, 2**31, 2**62]))
    if isinstance(default, float):
        return st.one_of(st.floats(0.0, 1.0), st.floats(0.0, 1e3),
                         st.sampled_from([0.0, 1e-300, 0.999999, 1.0, 1e300, 1e308, -1.0]))
    words = [w for w in _WORDS if _accepts(name, w)]
    return st.one_of(st.sampled_from(words or _WORDS), st.floats(0.0, 1.0), st.integers(0, 3))


def _accepts(name: str, value) -> bool:
    try:
        _BY_NAME[name].check(name, value)
    except ParameterError:
        return False
    return True


# one value in ten of any kind at all, the others of the parameter's own kind
_VALUE_OF = {name: st.integers(0, 9).flatmap(lambda i, name=name: _WILD if i == 0 else _plausible(name))
             for name in _BY_NAME}
_PARAMS = st.lists(_NAMES.flatmap(lambda name: st.tuples(st.just(name), _VALUE_OF[name])), max_size=4).map(dict)

_rng = np.random.default_rng(0)
_X = _rng.standard_normal((80, 3))
_X[_rng.random(_X.shape) < 0.1] = np.nan
_Y = (np.nan_to_num(_X[:, 0]) > 0).astype(np.float64)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(_PARAMS, st.sampled_from(["binary", "regression", "huber", "multiclass", "exponential"]))
# raw scores of +-1e308: the exponential loss's link overflowed doubling them (a RuntimeWarning)
@example({"shrinkage_rate": 1e308}, "exponential")
@example({"shrinkage_rate": 1e308, "sigmoid": 4.0}, "binary")
def test_any_parameters_give_a_model_or_a_smartboost_error(params, objective):
    params = {**params, "objective": objective, "verbosity": -1}
    if objective == "multiclass":
        params.setdefault("num_class", 2)
    try:
        params = explicit_params(params)
    except ParameterError:
        return
    params["num_iterations"] = min(params.get("num_iterations", 3), 3)
    binning = {k: v for k, v in params.items() if k in ("max_bin", "min_data_in_bin", "bin_construct_sample_cnt")}
    try:
        booster = sb.train(params, sb.Dataset(_X, _Y, params=binning))
    except SmartBoostError:
        return
    prediction = booster.predict(_X)
    assert np.isfinite(prediction).all()


@pytest.mark.parametrize("params, match", [
    ({"max_depth": 2**70}, "max_depth"),
    ({"num_leaves": 2**40}, "num_leaves"),
    ({"min_data_in_leaf": 2**63}, "min_data_in_leaf"),
    ({"num_iterations": 10**30}, "num_iterations"),
    ({"learning_rate": float("inf")}, "learning_rate"),
    ({"lambda_l2": float("nan")}, "lambda_l2"),
])
def test_out_of_range_numbers_are_parameter_errors(params, match):
    with pytest.raises(ParameterError, match=match):
        resolve_params(params)
