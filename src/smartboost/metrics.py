"""Evaluation metrics and their registry.

A metric is a function ``fn(label, raw, prediction, weight) -> float`` of the labels, the raw
scores and the objective's predictions (``transform(raw)``), with a flag saying which direction
is better. Multiclass metrics take raw scores and probabilities of shape (K, n_rows) (class-major,
as the multiclass objective keeps them); every other metric takes vectors. :meth:`Metric.evaluate`
gives a metric the scores it reads: ``auc``, which depends only on the order of the scores, ranks
the raw scores themselves, for every objective (no ties from probabilities rounding to 1.0, nor
from an objective's clipped probability); the other metrics read the objective's
``metric_score``, the log-odds of ``y = 1`` for the binary objectives. So ``logloss`` and
``error`` never saturate: ``logloss`` is ``log(1 + e^F) - y F`` of the log-odds ``F``,
evaluated stably, and ``error`` counts ``F > 0``, i.e. ``p > 0.5``.
All metrics are weighted means (AUC: weighted pairs) when the data has weights. Labels
outside a metric's domain raise ``DataError`` naming the first such row: ``auc`` and ``error``
take 0/1 (or -1/+1) labels, ``logloss`` and ``cross_entropy`` labels in [0, 1], ``gamma`` and
``gamma_deviance`` labels > 0 (LightGBM refuses those of the last three too; its ``auc``,
``binary_error`` and ``binary_logloss`` read any label > 0 as positive).

The regression metrics of the other losses are LightGBM's, on the predictions ``mu`` (``e^F``
for the log-link objectives): ``poisson`` mean(mu - y log mu), mu at least 1e-10; ``gamma``
mean(y / mu + log mu); ``gamma_deviance`` 2 sum(y / (mu + 1e-9) - log(y / (mu + 1e-9)) - 1), a
weighted *sum* as LightGBM's; ``tweedie`` (power p: ``tweedie_variance_power``) mean(-y mu^(1-p)
/ (1-p) + mu^(2-p) / (2-p)), mu at least 1e-10 (p = 1: the ``poisson`` metric); ``quantile``
(level ``alpha``) mean(alpha r) for r = y - mu >= 0 and mean((alpha - 1) r) below; ``mape``
mean(|y - mu| / max(1, |y|)); ``fair`` (scale c: ``fair_c``) mean(c |r| - c^2 log(1 + |r| / c));
``cross_entropy`` the mean cross-entropy of labels in [0, 1] from the raw score, log(1 + e^F) - y F;
``cross_entropy_lambda`` the cross-entropy of p = 1 - exp(-w lambda), lambda = log(1 + e^F), w the
row's weight (1 without weights), averaged over the rows without weighting them (LightGBM's:
the weight is in the loss).

``multi_logloss`` is -log p_y of the probability the objective predicts for the label:
softmax(F)_y for ``multiclass``, sigmoid(s F_y) for ``multiclassova``, whose classes are
independent binary models (LightGBM's definition; LightGBM also clips p_y at 1e-15).

Ranking metrics read the data's queries and rank each query's documents by decreasing raw
score, ties kept in row order (a stable sort); row weights are not used.

- ``ndcg@k`` (``ndcg`` alone: the whole list) is the mean over queries of DCG@k / ideal DCG@k,
  with gain ``label_gain[rel]`` (default ``2^rel - 1``, :func:`label_gains`) and discount
  ``1 / log2(2 + position)`` (position 0 at the top); a query without any relevant document
  (ideal DCG 0) counts as 1 (LightGBM's convention).
- ``map@k`` (``map`` alone: the whole list) is the mean over queries of AP@k, LightGBM's
  definition: a document is relevant when its label is > 0 (every grade above 0 counts the
  same); AP@k = sum over the positions p < k holding a relevant document of precision@(p + 1),
  divided by min(R, k) with R the query's relevant documents (anywhere in the list); a query
  without any relevant document counts as 1. XGBoost divides by R instead, which is lower when
  R > k.

Custom metrics are the user's functions (LightGBM's ``feval``; :class:`CustomMetric`): they
name their values themselves, and the training loop records them after the built-in metrics
of each evaluation set (docs/howto/custom-metrics.md).
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ._kernels.metrics import mean_average_precision, mean_ndcg, roc_auc
from ._params import param_default
from .errors import DataError, ParameterError, did_you_mean
from .objectives.base import Objective, check_label_range, weighted_sum
from .objectives.binary import check_binary_label, lambda_loss
from .objectives.robust import fair_loss

__all__ = ["Metric", "METRICS", "DEFAULT_LABEL_GAIN", "canonical_metric_name", "check_relevance", "get_metric",
           "label_gains"]

MetricFn = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None], float]


@dataclass(frozen=True)
class Metric:
    """A registered metric.

    Parameters
    ----------
    name : str
        Canonical name, used in logs and histories.
    fn : callable
        ``fn(label, raw, prediction, weight) -> float``.
    higher_is_better : bool
    aliases : tuple of str
    doc : str
    multiclass : bool
        Whether the metric evaluates multiclass scores (shape (K, n_rows)); such metrics go only
        with multiclass objectives, and the others only with single-output objectives.
    ranking : bool
        Whether the metric needs the data's queries (``fn(label, raw, queries)``).
    uses_prediction : bool
        Whether ``fn`` reads ``prediction``; when no metric of a run does, the training loop
        passes None instead of transforming every evaluation set's scores at every iteration.
    label_rule : callable or None
        ``label_rule(label, name, user)`` raises :class:`~smartboost.errors.DataError` naming
        the first row whose label is outside the metric's domain (None: any finite label).
    order_only : bool
        The value depends only on the order of the scores (``auc``, ``ndcg``, ``map``):
        :meth:`evaluate` gives it the raw scores, which every link keeps in order, instead of the
        objective's ``metric_score``, which may tie distinct raw scores (``squared_margin`` clips
        its probability at F = +-1).
    by_objective : tuple of (str, callable) pairs
        Functions that replace ``fn`` in :meth:`evaluate` for the objectives named:
        ``multi_logloss`` of ``multiclassova``, whose class probabilities are the sigmoids of
        their log-odds, not the softmax of the scores.
    """

    name: str
    fn: MetricFn
    higher_is_better: bool
    aliases: tuple[str, ...] = ()
    doc: str = ""
    multiclass: bool = False
    ranking: bool = False
    uses_prediction: bool = False
    label_rule: Callable[[np.ndarray, str, str], object] | None = None
    order_only: bool = False
    by_objective: tuple[tuple[str, MetricFn], ...] = ()

    def check_label(self, label: np.ndarray, label_name: str = "label") -> None:
        """Raise :class:`~smartboost.errors.DataError` naming the first row of ``label`` outside
        the metric's domain (``label_name``: the labels as the error names them)."""
        # outside its domain a metric gives NaN (AUC of a fractional label), inf (gamma deviance
        # of a 0) or a wrong number (error counting a label 2 as negative)
        if self.label_rule is not None:
            self.label_rule(label, label_name, f"metric '{self.name}'")

    def __call__(self, label: np.ndarray, raw: np.ndarray, prediction: np.ndarray | None,
                 weight: np.ndarray | None = None, queries: np.ndarray | None = None,
                 label_name: str = "label", *, label_checked: bool = False) -> float:
        """Evaluate the metric (``queries``: the query starts, for ranking metrics; ``label_name``:
        the labels as an error names them; ``label_checked``: :meth:`check_label` has passed on
        these labels, as the training loop checks each evaluation set's once)."""
        if not label_checked:
            self.check_label(label, label_name)
        if self.ranking:
            if queries is None:
                raise DataError(f"metric '{self.name}' needs queries: build the Dataset with group= or qid=")
            return float(self.fn(label, raw, queries))
        return float(self.fn(label, raw, prediction, weight))

    def evaluate(self, objective: Objective, label: np.ndarray, raw: np.ndarray, prediction: np.ndarray | None,
                 weight: np.ndarray | None = None, queries: np.ndarray | None = None,
                 label_name: str = "label", *, label_checked: bool = False) -> float:
        """The metric of a model's raw scores ``raw`` under its ``objective``: the raw scores for
        an order-only metric, else ``objective.metric_score(raw)``; the other arguments as for
        :meth:`__call__`."""
        score = raw if self.order_only else objective.metric_score(raw)
        fn = dict(self.by_objective).get(objective.name)
        metric = self if fn is None else replace(self, fn=fn, by_objective=())
        return metric(label, score, prediction, weight, queries, label_name, label_checked=label_checked)


def _mse(label, raw, prediction, weight):
    return np.average(np.square(prediction - label), weights=weight)


def _rmse(label, raw, prediction, weight):
    return np.sqrt(_mse(label, raw, prediction, weight))


def _mae(label, raw, prediction, weight):
    return np.average(np.abs(prediction - label), weights=weight)


def _logloss(label, raw, prediction, weight):
    return np.average(np.logaddexp(0.0, raw) - label * raw, weights=weight)


def _error(label, raw, prediction, weight):
    return np.average((raw > 0.0) != (label == 1.0), weights=weight)


def _auc(label, raw, prediction, weight):
    return roc_auc(label, raw, np.ones_like(raw) if weight is None else weight, np.argsort(raw))


# the label rules of the metrics with a domain (Metric.label_rule)

def _binary_labels(label, name, user):
    check_binary_label(label, name, False, user)


def _unit_interval_labels(label, name, user):
    check_label_range(label, name, user, 0.0, 1.0)


def _positive_labels(label, name, user):
    check_label_range(label, name, user, 0.0, low_open=True)


def _cross_entropy_lambda(label, raw, prediction, weight):
    if weight is not None:  # a weight of 0 gives p = 0, an infinite loss for a label above 0
        check_label_range(weight, "weight", "metric 'cross_entropy_lambda'", 0.0, low_open=True)
    return np.mean(lambda_loss(label, raw, weight))


_LIGHTGBM_EPSILON = float(np.float32(1e-10))
"""The floor LightGBM puts under a predicted mean before its log (``1e-10f``, a float)."""


def _poisson(label, raw, prediction, weight):
    mu = np.maximum(prediction, _LIGHTGBM_EPSILON)
    return np.average(mu - label * np.log(mu), weights=weight)


def _gamma(label, raw, prediction, weight):
    return np.average(label / prediction + np.log(prediction), weights=weight)


def _gamma_deviance(label, raw, prediction, weight):
    ratio = label / (prediction + 1e-9)
    loss = ratio - np.log(ratio) - 1.0
    return 2.0 * weighted_sum(loss, weight)


def _mape(label, raw, prediction, weight):
    return np.average(np.abs(label - prediction) / np.maximum(1.0, np.abs(label)), weights=weight)


def _tweedie(power: float) -> Metric:
    """The ``tweedie`` metric of variance power ``power``."""
    if power == 1.0:
        return replace(_BY_NAME["poisson"], name="tweedie", aliases=())

    def tweedie(label, raw, prediction, weight):
        mu = np.maximum(prediction, _LIGHTGBM_EPSILON)
        a, b = 1.0 - power, 2.0 - power
        return np.average(-label * mu ** a / a + mu ** b / b, weights=weight)

    return Metric("tweedie", tweedie, False, doc="Tweedie negative log-likelihood of the predicted mean",
                  uses_prediction=True)


def _quantile(alpha: float) -> Metric:
    """The ``quantile`` metric of level ``alpha``."""
    def quantile(label, raw, prediction, weight):
        r = label - prediction
        return np.average(np.where(r >= 0.0, alpha * r, (alpha - 1.0) * r), weights=weight)

    return Metric("quantile", quantile, False, doc="pinball loss of level alpha", uses_prediction=True)


def _fair(c: float) -> Metric:
    """The ``fair`` metric of residual scale ``c``."""
    def fair(label, raw, prediction, weight):
        return np.average(fair_loss(label, prediction, c), weights=weight)

    return Metric("fair", fair, False, doc="Fair loss c |r| - c^2 log(1 + |r| / c) of scale fair_c",
                  uses_prediction=True)


def _multi_logloss(label, raw, prediction, weight):
    top = raw.max(axis=0)
    log_norm = top + np.log(np.exp(raw - top).sum(axis=0))
    return np.average(log_norm - raw[label.astype(np.intp), np.arange(label.shape[0])], weights=weight)


def _ova_logloss(label, raw, prediction, weight):
    # -log sigmoid(F_y) of the label's log-odds, without the probability's rounding to 0 or 1
    own = raw[label.astype(np.intp), np.arange(label.shape[0])]
    return np.average(np.logaddexp(0.0, -own), weights=weight)


def _multi_error(label, raw, prediction, weight):
    return np.average(np.argmax(raw, axis=0) != label, weights=weight)


METRICS: tuple[Metric, ...] = (
    Metric("rmse", _rmse, False, ("root_mean_squared_error", "l2_root"), "root mean squared error",
           uses_prediction=True),
    Metric("mse", _mse, False, ("l2", "mean_squared_error"), "mean squared error", uses_prediction=True),
    Metric("mae", _mae, False, ("l1", "mean_absolute_error", "regression_l1"), "mean absolute error",
           uses_prediction=True),
    Metric("mape", _mape, False, ("mean_absolute_percentage_error",),
           "mean absolute percentage error, |y - mu| / max(1, |y|)", uses_prediction=True),
    Metric("poisson", _poisson, False, ("poisson-nloglik",), "Poisson negative log-likelihood of the predicted mean",
           uses_prediction=True),
    Metric("gamma", _gamma, False, ("gamma-nloglik",), "gamma negative log-likelihood of the predicted mean",
           uses_prediction=True, label_rule=_positive_labels),
    Metric("gamma_deviance", _gamma_deviance, False, (), "gamma deviance, summed over the rows",
           uses_prediction=True, label_rule=_positive_labels),
    Metric("logloss", _logloss, False, ("binary_logloss", "log_loss", "binary_log_loss"),
           "binary cross-entropy of 0/1 labels, from raw scores", label_rule=_unit_interval_labels),
    Metric("cross_entropy", _logloss, False, ("xentropy",), "cross-entropy of labels in [0, 1], from raw scores",
           label_rule=_unit_interval_labels),
    Metric("cross_entropy_lambda", _cross_entropy_lambda, False, ("xentlambda",),
           "cross-entropy of labels in [0, 1] and p = 1 - exp(-w log(1 + e^F)), w the row's weight; the plain "
           "mean over the rows", label_rule=_unit_interval_labels),
    Metric("error", _error, False, ("binary_error", "classification_error"),
           "fraction of rows with (F > 0) != (y == 1)", label_rule=_binary_labels),
    Metric("auc", _auc, True, ("roc_auc",), "area under the ROC curve of the raw scores, ties count one half",
           label_rule=_binary_labels, order_only=True),
    Metric("multi_logloss", _multi_logloss, False, ("mlogloss", "multiclass_logloss"),
           "multiclass cross-entropy -log p_y, from raw scores: p = softmax(F), or sigmoid(F) with multiclassova",
           multiclass=True, by_objective=(("multiclassova", _ova_logloss),)),
    Metric("multi_error", _multi_error, False, ("merror", "multiclass_error"),
           "fraction of rows whose highest-scoring class is not the label", multiclass=True),
)

_BY_NAME = {n: m for m in METRICS for n in (m.name, *m.aliases)}

_OF_PARAMETER = {"quantile": ("alpha", _quantile), "tweedie": ("tweedie_variance_power", _tweedie),
                 "fair": ("fair_c", _fair)}
"""Metrics built for the value of a training parameter: name -> (parameter, builder)."""


DEFAULT_LABEL_GAIN = 2.0 ** np.arange(32) - 1.0
"""The gain of relevance grade ``i`` when ``label_gain`` is not given: ``2^i - 1``, grades 0-31."""


def label_gains(label_gain: Sequence[float] | str | None = None, name: str = "label_gain") -> np.ndarray:
    """The gain table of NDCG (metric and ``lambdarank``): entry ``i`` is the gain of grade ``i``.

    Parameters
    ----------
    label_gain : sequence of float or None
        The user's table (LightGBM's ``label_gain``), or None for :data:`DEFAULT_LABEL_GAIN`.
        Its length bounds the relevance grades the data may hold.
    name : str
        Parameter name for the error message.

    Returns
    -------
    ndarray of float64

    Raises
    ------
    ParameterError
        An empty table, or a gain that is negative, not finite, or smaller than the one before
        (a higher grade must not gain less: the pairwise objectives order documents by grade).
    """
    if label_gain is None:
        return DEFAULT_LABEL_GAIN
    if isinstance(label_gain, str):
        label_gain = [v for v in label_gain.split(",") if v.strip()]
    try:
        gains = np.array(label_gain, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"parameter '{name}' must be a list of numbers, got {label_gain!r}") from None
    if gains.ndim != 1 or gains.size == 0:
        raise ParameterError(f"parameter '{name}' must be a non-empty list of numbers, got {label_gain!r}")
    bad = ~np.isfinite(gains) | (gains < 0.0)
    if bad.any():
        i = int(np.argmax(bad))
        raise ParameterError(f"parameter '{name}' must hold finite gains >= 0; entry {i} is {gains[i]}")
    down = np.flatnonzero(np.diff(gains) < 0.0)
    if down.size:
        i = int(down[0]) + 1
        raise ParameterError(f"parameter '{name}' must not decrease (a higher grade gains at least as much); "
                             f"entry {i} is {gains[i]} after {gains[i - 1]}")
    return gains


def check_relevance(label: np.ndarray, gains: np.ndarray, name: str = "label") -> np.ndarray:
    """Check that ``label`` holds integer relevance grades within the gain table; return it.

    Raises
    ------
    DataError
        Naming the first row whose label is negative, fractional or beyond the table.
    """
    bad = (label != np.floor(label)) | (label < 0) | (label >= gains.size)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"{name} must be an integer relevance grade in [0, {gains.size - 1}] (label_gain has "
                        f"{gains.size} entries); row {row} has {label[row]:g}")
    return label


def _ranking_metric(name: str, label_gain: Sequence[float] | str | None = None) -> Metric | None:
    """``ndcg``/``map`` or ``ndcg@k``/``map@k`` (``k >= 1``), else None."""
    base, at, cut = name.lower().partition("@")
    base = {"lambdarank": "ndcg", "mean_average_precision": "map"}.get(base, base)
    # isdecimal, not isdigit: int() refuses digits such as '²' that isdigit accepts
    if base not in ("ndcg", "map") or (at and not (cut.isdecimal() and int(cut) > 0)):
        return None
    # a cut-off beyond int64 (the kernels' k) is the whole list, as is any beyond the longest query
    k = min(int(cut), np.iinfo(np.int64).max) if cut else np.iinfo(np.int64).max
    canonical = f"{base}@{int(cut)}" if cut else base
    if base == "map":
        return Metric(canonical, lambda label, raw, queries: mean_average_precision(label, raw, queries, k), True,
                      doc="mean average precision of the top k of each query (label > 0 relevant)", ranking=True,
                      order_only=True)
    gains = label_gains(label_gain)
    return Metric(canonical, lambda label, raw, queries: mean_ndcg(label, raw, queries, k, gains), True,
                  doc="normalised discounted cumulative gain of the top k of each query", ranking=True,
                  label_rule=lambda label, name, user: check_relevance(label, gains, name), order_only=True)


def canonical_metric_name(name: str) -> str:
    """Canonical name of a metric or alias; raises ParameterError for unknown names."""
    ranking = _ranking_metric(name)
    if ranking is not None:
        return ranking.name
    if name.lower() in _OF_PARAMETER:
        return name.lower()
    metric = _BY_NAME.get(name.lower())
    if metric is None:
        hint = did_you_mean(name.lower(), [*_BY_NAME, *_OF_PARAMETER, "ndcg@10", "map@10"])
        known = [m.name for m in METRICS] + list(_OF_PARAMETER)
        raise ParameterError(f"unknown metric {name!r}{hint} (known: {known}, ndcg@k, map@k)")
    return metric.name


def metric_of_params(name: str, params: Mapping[str, Any]) -> Metric:
    """The metric ``name`` with the training parameters that shape it (``label_gain``, ``alpha``,
    ``tweedie_variance_power``, ``fair_c``) read from ``params``, a run's or a model's (absent:
    their defaults): one list of them for training and for evaluating a saved model."""
    return get_metric(name, params.get("label_gain"), alpha=params.get("alpha"),
                      tweedie_variance_power=params.get("tweedie_variance_power"), fair_c=params.get("fair_c"))


def get_metric(name: str, label_gain: Sequence[float] | str | None = None, *, alpha: float | None = None,
               tweedie_variance_power: float | None = None, fair_c: float | None = None) -> Metric:
    """The metric registered under ``name`` (canonical or alias; ``ndcg@k`` and ``map@k`` for any k).

    Parameters
    ----------
    name : str
    label_gain : sequence of float, optional
        The gain table of ``ndcg`` (the ``label_gain`` training parameter, also what the
        ``lambdarank`` objective uses); default ``2^rel - 1``.
    alpha : float, optional
        The level of the ``quantile`` metric (the ``alpha`` training parameter; default its default).
    tweedie_variance_power : float, optional
        The power of the ``tweedie`` metric (the training parameter; default its default).
    fair_c : float, optional
        The scale of the ``fair`` metric (the training parameter; default its default).
    """
    canonical = canonical_metric_name(name)
    if canonical in _OF_PARAMETER:
        parameter, build = _OF_PARAMETER[canonical]
        value = {"alpha": alpha, "tweedie_variance_power": tweedie_variance_power, "fair_c": fair_c}[parameter]
        return build(param_default(parameter) if value is None else value)
    return _ranking_metric(name, label_gain) or _BY_NAME[canonical]


# -- custom metrics: the user's evaluation functions (``feval``) -------------------------------

Feval = Callable[[np.ndarray, Any], Any]
"""LightGBM's evaluation function: ``feval(preds, eval_data) -> (eval_name, eval_result,
is_higher_better)`` or a list of such triples."""


@dataclass(frozen=True)
class MetricValue:
    """One value a custom metric returned."""

    name: str
    value: float
    higher_is_better: bool


def function_name(function: Callable) -> str:
    """How an error names a user's function: its qualified name, else its type's."""
    return getattr(function, "__qualname__", None) or getattr(function, "__name__", None) or type(function).__name__


@dataclass(frozen=True)
class CustomMetric:
    """A user's evaluation function, LightGBM's ``feval``.

    Parameters
    ----------
    function : callable
        ``function(preds, eval_data)`` returning ``(eval_name, eval_result, is_higher_better)``
        or a list of such triples: ``preds`` the predictions of the evaluation set (as
        :meth:`Booster.predict` gives them: probabilities of a binary objective, shape
        (n_rows, n_classes) for a multiclass one; raw scores for a custom objective),
        ``eval_data`` its :class:`~smartboost.Dataset`.
    """

    function: Feval

    @property
    def name(self) -> str:
        """The function's name, as errors give it."""
        return function_name(self.function)

    def __call__(self, preds: np.ndarray, eval_data: Any) -> list[MetricValue]:
        """The function's values on ``preds`` (handed over as a copy: the function may change its
        argument) and ``eval_data``; an exception the function raises goes on unchanged.

        Raises
        ------
        DataError
            A return that is not a triple or a non-empty list of them, a name that is not a
            non-empty text, a value that is not a finite real number, or a direction that is not
            a bool; the message names the function.
        """
        result = self.function(preds.copy(), eval_data)
        items = result if isinstance(result, list) else [result]
        if not items:
            raise DataError(f"custom metric {self.name!r} returned an empty list; return (eval_name, eval_result, "
                            "is_higher_better) or a list of such tuples")
        return [self._value(item) for item in items]

    def _value(self, item: Any) -> MetricValue:
        """One returned triple, checked."""
        if not isinstance(item, tuple) or len(item) != 3:
            got = f"a tuple of {len(item)}" if isinstance(item, tuple) else type(item).__name__
            raise DataError(f"custom metric {self.name!r} must return (eval_name, eval_result, is_higher_better) or "
                            f"a list of such tuples, got {got}")
        name, value, higher_is_better = item
        if not isinstance(name, str) or not name:
            raise DataError(f"custom metric {self.name!r} returned eval_name {name!r}; it must be a non-empty str")
        # a NaN would never improve nor stall early stopping, and a mean over cv's folds would hide it
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise DataError(f"custom metric {self.name!r} returned eval_result {value!r} for {name!r}; it must be a "
                            "finite real number")
        if not isinstance(higher_is_better, (bool, np.bool_)):
            raise DataError(f"custom metric {self.name!r} returned is_higher_better {higher_is_better!r} for "
                            f"{name!r}; it must be a bool")
        return MetricValue(name, float(value), bool(higher_is_better))


def custom_metrics(feval: Feval | Sequence[Feval] | None) -> list[CustomMetric]:
    """The ``feval`` argument of :func:`~smartboost.train` and :func:`~smartboost.cv` as custom
    metrics: None is none, a function a list of one.

    Raises
    ------
    ParameterError
        An entry that is not callable, or a function that cannot be called as
        ``function(preds, eval_data)``.
    """
    if feval is None:
        return []
    functions = [feval] if callable(feval) else feval
    if isinstance(functions, (str, bytes)) or not isinstance(functions, Sequence):
        raise ParameterError(f"feval must be a function or a list of functions, got {type(feval).__name__}")
    out = []
    for i, function in enumerate(functions):
        if not callable(function):
            raise ParameterError(f"feval[{i}] must be a function feval(preds, eval_data), got "
                                 f"{type(function).__name__}")
        try:
            inspect.signature(function).bind(None, None)
        except TypeError as exc:
            raise ParameterError(f"feval {function_name(function)!r} must take two arguments (preds, eval_data): "
                                 f"{exc}") from None
        except ValueError:  # no signature to read (some built-in functions): the call will tell
            pass
        out.append(CustomMetric(function))
    return out


def evaluate_custom(metrics: Sequence[CustomMetric], preds: np.ndarray, eval_data: Any,
                    builtin: Sequence[Metric]) -> list[MetricValue]:
    """Every custom metric's values on one evaluation set, in order.

    Raises
    ------
    ParameterError
        A name given twice, or the name (or an alias) of a metric of the run, ``builtin``: the
        records and early stopping key values by name.
    """
    builtin_names = {name: metric.name for metric in builtin for name in (metric.name, *metric.aliases)}
    returned_by: dict[str, str] = {}
    out = []
    for metric in metrics:
        for value in metric(preds, eval_data):
            clash = builtin_names.get(value.name.lower())  # built-in names are case-insensitive
            if clash is not None:
                raise ParameterError(f"custom metric {metric.name!r} returned eval_name {value.name!r}, a name of the "
                                     f"run's metric {clash!r}; give it another name")
            if value.name in returned_by:
                raise ParameterError(f"custom metric {metric.name!r} returned eval_name {value.name!r}, which custom "
                                     f"metric {returned_by[value.name]!r} returned already; give it another name")
            returned_by[value.name] = metric.name
            out.append(value)
    return out
