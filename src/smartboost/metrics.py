"""Evaluation metrics and their registry.

A metric is a function ``fn(label, raw, prediction, weight) -> float`` of the labels, the raw
scores and the objective's predictions (``transform(raw)``), with a flag saying which direction
is better. Multiclass metrics take raw scores and probabilities of shape (K, n_rows) (class-major,
as the multiclass objective keeps them); every other metric takes vectors. Binary metrics read
the raw score as a logit, so they never saturate: ``logloss`` is ``log(1 + e^F) - y F``
evaluated stably, ``auc`` ranks raw scores (no ties from probabilities
rounding to 1.0), ``error`` counts ``F > 0``, i.e. ``p > 0.5``.
All metrics are weighted means (AUC: weighted pairs) when the data has weights.

Ranking metrics read the data's queries: ``ndcg@k`` (``ndcg`` alone: the whole list) is the
mean over queries of DCG@k / ideal DCG@k, with gain ``2^rel - 1``, discount
``1 / log2(2 + position)``, documents ranked by decreasing raw score and ties kept in row
order; a query without any relevant document (ideal DCG 0) counts as 1 (LightGBM's
convention). Row weights are not used by ranking metrics.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._kernels.metrics import mean_ndcg, roc_auc
from .errors import DataError, ParameterError

__all__ = ["Metric", "METRICS", "canonical_metric_name", "get_metric"]

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
    """

    name: str
    fn: MetricFn
    higher_is_better: bool
    aliases: tuple[str, ...] = ()
    doc: str = ""
    multiclass: bool = False
    ranking: bool = False

    def __call__(self, label: np.ndarray, raw: np.ndarray, prediction: np.ndarray,
                 weight: np.ndarray | None = None, queries: np.ndarray | None = None) -> float:
        """Evaluate the metric (``queries``: the query starts, for ranking metrics)."""
        if self.ranking:
            if queries is None:
                raise DataError(f"metric '{self.name}' needs queries: build the Dataset with group= or qid=")
            return float(self.fn(label, raw, queries))
        return float(self.fn(label, raw, prediction, weight))


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
    return roc_auc(label, raw, np.ones_like(raw) if weight is None else weight)


def _multi_logloss(label, raw, prediction, weight):
    top = raw.max(axis=0)
    log_norm = top + np.log(np.exp(raw - top).sum(axis=0))
    return np.average(log_norm - raw[label.astype(np.intp), np.arange(label.shape[0])], weights=weight)


def _multi_error(label, raw, prediction, weight):
    return np.average(np.argmax(raw, axis=0) != label, weights=weight)


METRICS: tuple[Metric, ...] = (
    Metric("rmse", _rmse, False, ("root_mean_squared_error", "l2_root"), "root mean squared error"),
    Metric("mse", _mse, False, ("l2", "mean_squared_error"), "mean squared error"),
    Metric("mae", _mae, False, ("l1", "mean_absolute_error"), "mean absolute error"),
    Metric("logloss", _logloss, False, ("binary_logloss", "log_loss", "binary_log_loss"),
           "binary cross-entropy of 0/1 labels, from raw scores"),
    Metric("error", _error, False, ("binary_error", "classification_error"),
           "fraction of rows with (F > 0) != (y == 1)"),
    Metric("auc", _auc, True, ("roc_auc",), "area under the ROC curve, ties count one half"),
    Metric("multi_logloss", _multi_logloss, False, ("mlogloss", "multiclass_logloss", "cross_entropy"),
           "multiclass cross-entropy -log softmax(F)[y], from raw scores", multiclass=True),
    Metric("multi_error", _multi_error, False, ("merror", "multiclass_error"),
           "fraction of rows whose highest-scoring class is not the label", multiclass=True),
)

_BY_NAME = {n: m for m in METRICS for n in (m.name, *m.aliases)}


_DEFAULT_GAINS = 2.0 ** np.arange(32) - 1.0


def _ndcg_metric(name: str) -> Metric | None:
    """``ndcg`` or ``ndcg@k`` (``k >= 1``), else None."""
    base, _, cut = name.lower().partition("@")
    if base not in ("ndcg", "lambdarank") or (cut and not cut.isdigit()) or cut == "0":
        return None
    k = int(cut) if cut else np.iinfo(np.int64).max
    return Metric(f"ndcg@{cut}" if cut else "ndcg",
                  lambda label, raw, queries: mean_ndcg(label, raw, queries, k, _DEFAULT_GAINS), True,
                  doc="normalised discounted cumulative gain of the top k of each query", ranking=True)


def canonical_metric_name(name: str) -> str:
    """Canonical name of a metric or alias; raises ParameterError for unknown names."""
    ranking = _ndcg_metric(name)
    if ranking is not None:
        return ranking.name
    metric = _BY_NAME.get(name.lower())
    if metric is None:
        close = difflib.get_close_matches(name.lower(), list(_BY_NAME), n=3)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise ParameterError(f"unknown metric {name!r}{hint} (known: {[m.name for m in METRICS]})")
    return metric.name


def get_metric(name: str) -> Metric:
    """The metric registered under ``name`` (canonical or alias; ``ndcg@k`` for any k)."""
    return _ndcg_metric(name) or _BY_NAME[canonical_metric_name(name)]
