import math

import numpy as np
import pytest
from sklearn.metrics import log_loss, mean_absolute_error, mean_squared_error, roc_auc_score

from smartboost.errors import DataError, ParameterError
from smartboost.metrics import get_metric
from smartboost.objectives import make_objective
from smartboost.objectives.base import _REGISTRY


def _objectives():
    """Every built-in objective with a per-row loss ("custom" wraps a user function:
    tests/test_losses.py; ranking losses couple a query's rows: tests/test_ranking.py)."""
    return sorted({cls.name for cls in _REGISTRY.values() if cls.task != "ranking"} - {"custom"})


def _make(name):
    return make_objective(name, {"num_class": 3} if "num_class" in _REGISTRY[name].options else None)


def _with_options():
    """The objectives of :func:`_objectives` built with their default options, and ``binary``
    with a ``sigmoid`` other than 1, which scales the score in every part of the loss."""
    return ([pytest.param(lambda name=name: _make(name), id=name) for name in _objectives()]
            + [pytest.param(lambda: make_objective("binary", {"sigmoid": 2.5}), id="binary-sigmoid-2.5")])


_LABELS = {  # objectives whose labels are not any real number
    "poisson": lambda rng, n: rng.poisson(2.0, n).astype(float),
    "gamma": lambda rng, n: rng.gamma(2.0, 1.5, n),
    "tweedie": lambda rng, n: rng.poisson(1.0, n) * rng.gamma(2.0, 1.0, n),
    "cross_entropy": lambda rng, n: rng.random(n),
    "cross_entropy_lambda": lambda rng, n: rng.random(n),
}


def _labels(objective, n, rng):
    if objective.task == "multiclass":
        return rng.integers(0, objective.num_outputs, n).astype(float)
    if objective.name in _LABELS:
        return _LABELS[objective.name](rng, n)
    return (rng.random(n) < 0.4).astype(float) if objective.task == "binary" else rng.standard_normal(n) * 3


def _scores(objective, n, rng):
    return rng.standard_normal((objective.num_outputs, n) if objective.num_outputs > 1 else n) * 2


def _unit(objective, k, n):
    """Direction of output ``k`` in score space."""
    if objective.num_outputs == 1:
        return np.ones(n)
    e = np.zeros((objective.num_outputs, n))
    e[k] = 1.0
    return e


@pytest.mark.parametrize("make", _with_options())
def test_gradient_and_hessian_match_numerical_derivatives(make):
    objective = make()
    rng = np.random.default_rng(0)
    y = _labels(objective, 200, rng)
    F = _scores(objective, 200, rng)
    g, h = np.empty_like(F), np.empty_like(F)
    objective.grad_hess(y, F, g, h)
    K = objective.num_outputs
    # softmax: the hessian is the diagonal scaled by K / (K - 1), as in LightGBM (multiclassova's is not)
    scale = K / (K - 1) if objective.name == "multiclass" else 1.0
    eps = 1e-5
    for k in range(K):
        d = eps * _unit(objective, k, 200)
        num_g = (objective.loss(y, F + d) - objective.loss(y, F - d)) / (2 * eps)
        num_h = (objective.loss(y, F + d) - 2 * objective.loss(y, F) + objective.loss(y, F - d)) / eps**2
        np.testing.assert_allclose(g[k] if K > 1 else g, num_g, rtol=1e-6, atol=1e-8)
        if objective.hessian_exact:
            np.testing.assert_allclose(h[k] if K > 1 else h, scale * num_h, rtol=1e-3, atol=1e-4)
        else:  # a floored surrogate: positive, and at least the true curvature
            assert np.all(h > 0) and np.all(h >= scale * num_h - 1e-4)


# bounded losses start from 0; cross_entropy_lambda from LightGBM's log(e^m - 1) of the mean label m
@pytest.mark.parametrize("make", [case for case in _with_options()
                                  if case.id not in ("sigmoid_margin", "gaussian_margin", "cross_entropy_lambda")])
def test_init_score_minimises_the_weighted_loss(make):
    objective = make()
    rng = np.random.default_rng(1)
    y = _labels(objective, 500, rng)
    w = rng.random(500) + 0.5
    c = objective.init_score(y, w)

    def total(v):
        start = np.repeat(np.reshape(v, (-1, 1)), 500, axis=1)
        return np.dot(w, objective.loss(y, start if objective.num_outputs > 1 else start[0]))

    for k in range(objective.num_outputs):
        step = 1e-3 * np.eye(objective.num_outputs)[k] if objective.num_outputs > 1 else 1e-3
        assert total(c) <= total(c + step) and total(c) <= total(c - step)


def test_logistic_is_stable_at_extreme_scores():
    objective = make_objective("binary")
    F = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    g, h = np.empty(5), np.empty(5)
    objective.grad_hess(y, F, g, h)
    assert np.all(np.isfinite(g)) and np.all(np.isfinite(h)) and np.all(h >= 0)
    assert np.all(np.isfinite(objective.loss(y, F)))
    np.testing.assert_allclose(objective.transform(F), [0.0, 4.248354255291589e-18, 0.5, 1.0, 1.0])


def test_binary_sigmoid_scales_the_log_odds():
    # LightGBM's sigmoid s: p = 1 / (1 + e^(-s F)), start log-odds / s; it was ignored
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    F = np.array([-1.5, -0.2, 0.0, 0.7, 3.0])
    objective, unit = make_objective("binary", {"sigmoid": 2.0}), make_objective("binary")
    p = 1.0 / (1.0 + np.exp(-2.0 * F))
    np.testing.assert_allclose(objective.transform(F), p, rtol=1e-15)
    np.testing.assert_array_equal(objective.metric_score(F), 2.0 * F)
    np.testing.assert_allclose(objective.loss(y, F), unit.loss(y, 2.0 * F), rtol=1e-15)
    assert objective.init_score(y, None) == pytest.approx(math.log(1.5) / 2.0, rel=1e-15)
    g, h = np.empty(5), np.empty(5)
    objective.grad_hess(y, F, g, h)
    np.testing.assert_allclose(g, 2.0 * (p - y), rtol=1e-14)
    np.testing.assert_allclose(h, 4.0 * p * (1.0 - p), rtol=1e-14)
    assert objective.sigma_smooth == 1.0 and objective.to_dict() == {"name": "binary", "sigmoid": 2.0}
    assert unit.to_dict() == {"name": "binary"}  # default files keep their bytes
    assert get_metric("logloss")(y, objective.metric_score(F), None) == pytest.approx(log_loss(y, p), rel=1e-12)
    with pytest.raises(ParameterError, match="sigmoid must be a finite number > 0"):
        make_objective("binary", {"sigmoid": 0.0})
    assert make_objective("cross_entropy", {"sigmoid": 2.0}).to_dict() == {"name": "cross_entropy"}  # as LightGBM


def test_binary_labels_are_checked():
    objective = make_objective("binary")
    with pytest.raises(DataError, match="row 2 has 2.0"):
        objective.check_label(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(DataError, match="single class"):
        objective.check_label(np.zeros(5))
    objective.check_label(np.zeros(5), training=False)  # an evaluation set may hold one class


@pytest.mark.parametrize("name", sorted({cls.name for cls in _REGISTRY.values() if cls.task == "binary"}))
def test_binary_start_refuses_weights_that_leave_one_class(name):
    # both classes in the labels, but every positive row has weight 0: the minimiser of the
    # logistic or exponential loss of a constant is then -inf (a Brent search stopped at -640)
    y = np.array([0.0, 1.0, 0.0, 1.0, 0.0])
    with pytest.raises(DataError, match=r"positive weight hold a single class \(mean label 0\)"):
        make_objective(name).init_score(y, np.array([1.0, 0.0, 2.0, 0.0, 1.0]))


@pytest.mark.parametrize("weighted", [False, True])
def test_auc_equals_sklearn_with_ties(weighted):
    rng = np.random.default_rng(2)
    y = (rng.random(3000) < 0.3).astype(float)
    score = np.round(rng.standard_normal(3000) + y, 1)  # many ties
    w = rng.random(3000) if weighted else None
    ours = get_metric("auc")(y, score, score, w)
    assert ours == pytest.approx(roc_auc_score(y, score, sample_weight=w), rel=1e-12)


@pytest.mark.parametrize("name, label, match", [
    ("auc", [0.0, 0.3, 1.0], r"0 or 1 \(or -1 and \+1\) for metric 'auc'; row 1 has 0.3"),  # was NaN
    ("error", [1.0, 0.0, 2.0], r"for metric 'error'; row 2 has 2"),  # counted 2 as a negative
    ("logloss", [0.0, 1.0, 2.0], r"in \[0, 1\] for metric 'logloss'; row 2 has 2"),
    ("cross_entropy", [-0.5, 1.0, 0.0], r"in \[0, 1\] for metric 'cross_entropy'; row 0 has -0.5"),
    ("gamma_deviance", [1.0, 0.0, 2.0], r"> 0 for metric 'gamma_deviance'; row 1 has 0"),  # was inf
    ("gamma", [1.0, -1.0, 2.0], r"> 0 for metric 'gamma'; row 1 has -1"),
])
def test_metrics_refuse_labels_outside_their_domain(name, label, match):
    raw = np.array([0.1, -0.2, 0.3])
    with pytest.raises(DataError, match=match):
        get_metric(name)(np.array(label), raw, np.exp(raw))


def test_binary_metrics_take_minus_one_plus_one_labels():
    raw = np.array([0.1, -0.2, 0.3, 0.5])
    for name in ("auc", "error"):
        assert get_metric(name)(np.array([-1.0, -1.0, 1.0, 1.0]), raw, raw) == \
            get_metric(name)(np.array([0.0, 0.0, 1.0, 1.0]), raw, raw)


@pytest.mark.parametrize("name", sorted({cls.name for cls in _REGISTRY.values() if cls.task != "multiclass"}))
def test_order_metrics_rank_the_raw_score_for_every_objective(name):
    # squared_margin's metric_score clips at F = +-1, which tied 1.5 with 2.0: its auc was 0.625,
    # and ndcg/map ranked the tie in row order
    y = np.array([1.0, 0.0, 1.0, 0.0])
    F = np.array([1.5, 2.0, 0.2, -0.3])
    objective = make_objective(name, {"num_class": 3} if "num_class" in _REGISTRY[name].options else None)
    assert get_metric("auc").evaluate(objective, y, F, objective.transform(F)) == roc_auc_score(y, F) == 0.5
    one_query = np.array([0, 4])
    assert get_metric("ndcg").evaluate(objective, y, F, None, None, one_query) == pytest.approx(
        (1 / np.log2(3) + 1 / np.log2(4)) / (1 + 1 / np.log2(3)), rel=1e-12)
    assert get_metric("map").evaluate(objective, y, F, None, None, one_query) == pytest.approx((1 / 2 + 2 / 3) / 2,
                                                                                                rel=1e-12)
    # the other metrics still read the objective's metric_score (logloss: the clipped probability)
    assert get_metric("logloss").evaluate(objective, y, F, None) == get_metric("logloss")(y, objective.metric_score(F),
                                                                                             None)


def test_auc_is_nan_for_one_class():
    assert np.isnan(get_metric("auc")(np.zeros(4), np.arange(4.0), np.arange(4.0)))


def test_pointwise_metrics_equal_sklearn():
    rng = np.random.default_rng(3)
    y = (rng.random(1000) < 0.5).astype(float)
    raw = rng.standard_normal(1000) * 3
    p = 1 / (1 + np.exp(-raw))
    w = rng.random(1000)
    assert get_metric("logloss")(y, raw, p, w) == pytest.approx(log_loss(y, p, sample_weight=w), rel=1e-10)
    assert get_metric("error")(y, raw, p, w) == pytest.approx(np.average((p > 0.5) != y, weights=w))
    assert get_metric("rmse")(y, raw, raw, w) == pytest.approx(np.sqrt(mean_squared_error(y, raw, sample_weight=w)))
    assert get_metric("l2")(y, raw, raw, w) == pytest.approx(mean_squared_error(y, raw, sample_weight=w))
    assert get_metric("mae")(y, raw, raw, w) == pytest.approx(mean_absolute_error(y, raw, sample_weight=w))
