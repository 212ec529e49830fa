"""scikit-learn estimators on Dask: ``DaskSmartBoostClassifier``, ``DaskSmartBoostRegressor``
and ``DaskSmartBoostRanker`` fit with :func:`~smartboost.dask.train` and predict dask
collections, as LightGBM's ``DaskLGBM*`` do.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np
import pandas as pd

from ..booster import Booster
from ..callback import TrainingCallback
from .._params import _bool
from ..errors import DataError, ParameterError
from ..sklearn import (SmartBoostClassifier, SmartBoostRanker, SmartBoostRegressor, _eval_pairs, _SmartBoostModel,
                       _with_eval_metric)
from ._predict import predict
from ._train import train


class _DaskModel:
    """Dask variants of the scikit-learn estimators: ``fit`` trains with :func:`train` on dask
    collections, ``predict`` returns dask collections (as LightGBM's ``DaskLGBM*``).

    Extra parameters: ``client`` (None: Dask's default client when fitting) and ``timeout``
    (seconds per distributed step). Every other parameter is that of the scikit-learn estimator.
    """

    _NOT_TRAINING_PARAMS = _SmartBoostModel._NOT_TRAINING_PARAMS | {"client", "timeout"}

    def __init__(self, *, client: distributed.Client | None = None, timeout: float = 300.0, **kwargs: Any) -> None:
        self.client = client
        self.timeout = timeout
        super().__init__(**kwargs)

    @classmethod
    def _named_params(cls) -> list[str]:
        return _SmartBoostModel._named_params() + ["client", "timeout"]

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return sorted(cls._named_params())

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["client"] = None  # a client does not travel; fitted models do
        return state

    def _dask_target(self, y: Any) -> Any:
        """The training labels as :func:`train` takes them (classifiers: learn ``classes_``)."""
        return y

    def _fit_dask(self, X: Any, y: Any, sample_weight: Any, eval_set: list[tuple[Any, Any]] | None,
                  eval_names: list[str] | None, eval_sample_weight: list[Any] | None, init_model: Any,
                  qid: Any = None, eval_qid: list[Any] | None = None, init_score: Any = None,
                  callbacks: list[TrainingCallback] | None = None, eval_metric: Any = None) -> _DaskModel:
        y = self._dask_target(y)
        params, feval = _with_eval_metric(self._train_params(), eval_metric)
        per_class = self._class_weights(lambda: _class_counts(y, self.n_classes_))
        if per_class is not None:  # each row's class weight, partitioned like y
            rows = (y.map_partitions(_class_rows, per_class, meta=(y.name, np.float64)) if isinstance(y, dd.Series)
                    else y.map_blocks(_class_rows, per_class, dtype=np.float64))
            sample_weight = rows if sample_weight is None else sample_weight * rows
        eval_set = [(X_valid, self._dask_eval_target(y_valid)) for X_valid, y_valid in _eval_pairs(eval_set)]
        self._Booster = train(self.client, params, X, y, sample_weight=sample_weight, qid=qid,
                              init_score=init_score, num_boost_round=self.n_estimators, eval_set=eval_set or None,
                              eval_names=eval_names, eval_sample_weight=eval_sample_weight, eval_qid=eval_qid,
                              callbacks=self._callbacks(callbacks), init_model=init_model, timeout=self.timeout,
                              feval=feval)
        self.n_features_in_ = X.shape[1]
        if isinstance(X, dd.DataFrame):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        return self

    def _dask_eval_target(self, y: Any) -> Any:
        return y

    def fit(self, X: Any, y: Any, sample_weight: Any = None, *, init_score: Any = None,
            eval_set: list[tuple[Any, Any]] | None = None, eval_names: list[str] | None = None,
            eval_sample_weight: list[Any] | None = None, eval_metric: Any = None,
            init_model: Booster | str | None = None, callbacks: list[TrainingCallback] | None = None) -> _DaskModel:
        """Train on the dask collections ``X, y`` (partitioned alike; ``init_score`` too, a column
        per class for a multiclass model); see :func:`train`. ``eval_metric`` as the local
        estimator's ``fit`` takes it (metric names, functions ``f(y_true, y_pred)``, computed on
        the driver). ``callbacks`` run after the constructor's."""
        return self._fit_dask(X, y, sample_weight, eval_set, eval_names, eval_sample_weight, init_model,
                              init_score=init_score, callbacks=callbacks, eval_metric=eval_metric)

    def _raw_predict(self, X: Any, raw_score: bool, start_iteration: int = 0, num_iteration: int | None = None,
                     pred_leaf: bool = False, pred_contrib: bool = False) -> Any:
        return predict(self.booster_, X, raw_score=raw_score, num_iteration=num_iteration,
                       start_iteration=start_iteration, pred_leaf=pred_leaf, pred_contrib=pred_contrib)

    def to_local(self) -> _SmartBoostModel:
        """The same fitted model as the plain scikit-learn estimator (numpy in, numpy out)."""
        local = self._local_class()(**{k: v for k, v in self.get_params().items() if k not in ("client", "timeout")})
        local.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_") or k == "_Booster"})
        return local


class DaskSmartBoostRegressor(_DaskModel, SmartBoostRegressor):
    """:class:`~smartboost.sklearn.SmartBoostRegressor` on Dask; see :class:`_DaskModel`."""

    @staticmethod
    def _local_class() -> type:
        return SmartBoostRegressor

    def predict(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False) -> Any:
        """Predicted values, a dask collection partitioned like ``X``; the other outputs and the
        iterations as :meth:`SmartBoostRegressor.predict <smartboost.sklearn.SmartBoostRegressor.predict>`."""
        return self._raw_predict(X, raw_score, start_iteration, num_iteration, pred_leaf, pred_contrib)


class DaskSmartBoostClassifier(_DaskModel, SmartBoostClassifier):
    """:class:`~smartboost.sklearn.SmartBoostClassifier` on Dask; see :class:`_DaskModel`."""

    @staticmethod
    def _local_class() -> type:
        return SmartBoostClassifier

    def _dask_target(self, y: Any) -> Any:
        if isinstance(y, dd.DataFrame):  # a column vector, as scikit-learn takes it
            if len(y.columns) != 1:
                raise DataError(f"y must be one column, got a DataFrame of {len(y.columns)} columns")
            y = y[y.columns[0]]
        distinct = np.asarray(y.unique().compute() if isinstance(y, dd.Series) else da.unique(y).compute())
        if pd.isna(distinct).any():  # else NaN became a class of its own, refused later as "not in classes_"
            raise DataError("y contains a missing label (NaN or None); every row needs a class")
        try:
            classes = np.unique(distinct)
        except TypeError:
            raise DataError(f"y mixes labels that do not compare: {distinct[:5].tolist()}") from None
        if classes.size < 2:
            raise DataError(f"y has one class ({classes[0]!r}); a classifier needs two" if classes.size else "y is empty")
        self.classes_, self.n_classes_ = classes, classes.size
        return self._dask_eval_target(y)

    def _dask_eval_target(self, y: Any) -> Any:
        if isinstance(y, dd.DataFrame) and len(y.columns) == 1:
            y = y[y.columns[0]]
        if isinstance(y, dd.Series):
            return y.map_partitions(self._encode_target, meta=(y.name, np.float64))
        if isinstance(y, da.Array):
            return y.map_blocks(self._encode_target, dtype=np.float64)
        return self._encode_target(y)

    def predict_proba(self, X: Any, raw_score: bool = False, start_iteration: int = 0,
                      num_iteration: int | None = None, pred_leaf: bool = False, pred_contrib: bool = False) -> Any:
        """Class probabilities, a dask collection with one column per class of ``classes_``; the
        raw scores, with a warning, for a model of a custom objective; the other outputs and the
        iterations as :meth:`SmartBoostClassifier.predict_proba
        <smartboost.sklearn.SmartBoostClassifier.predict_proba>`."""
        if raw_score or pred_leaf or pred_contrib:
            return self._raw_predict(X, raw_score, start_iteration, num_iteration, pred_leaf, pred_contrib)
        if self._unknown_link("predict_proba"):
            return self._raw_predict(X, True, start_iteration, num_iteration)
        p = self._raw_predict(X, False, start_iteration, num_iteration)
        if self.n_classes_ > 2:
            return p
        if isinstance(p, da.Array):
            return da.stack([1.0 - p, p], axis=1)
        return p.map_partitions(_two_class_frame, meta={0: np.float64, 1: np.float64})

    def predict(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False) -> Any:
        """Predicted class labels, a dask collection partitioned like ``X`` (a model of a custom
        objective: from the raw scores' signs, with a warning); the other outputs and the
        iterations as :meth:`SmartBoostClassifier.predict <smartboost.sklearn.SmartBoostClassifier.predict>`."""
        if raw_score or pred_leaf or pred_contrib:
            return self._raw_predict(X, raw_score, start_iteration, num_iteration, pred_leaf, pred_contrib)
        self._unknown_link("predict")
        raw = self._raw_predict(X, True, start_iteration, num_iteration)
        if isinstance(raw, da.Array):
            return raw.map_blocks(_class_labels, self.classes_, drop_axis=1 if raw.ndim == 2 else None,
                                  dtype=self.classes_.dtype)
        return raw.map_partitions(_class_label_series, self.classes_, meta=(None, self.classes_.dtype))


def _class_counts(y: Any, n_classes: int) -> np.ndarray:
    """The rows of each class of the class indices ``y`` (a dask Series or array), counted in
    each partition where it lives."""
    import dask

    count = dask.delayed(lambda part: np.bincount(np.asarray(part, dtype=np.int64), minlength=n_classes))
    return np.sum(dask.compute(*[count(part) for part in np.ravel(y.to_delayed())]), axis=0).astype(np.float64)


def _class_rows(y: Any, per_class: np.ndarray) -> Any:
    """Each row's class weight, for a block or partition of class indices."""
    rows = per_class[np.asarray(y, dtype=np.int64)]
    return pd.Series(rows, index=y.index) if isinstance(y, pd.Series) else rows


def _class_labels(raw: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Labels from raw scores: log-odds of ``classes[1]`` (1-D), or one column per class."""
    return classes[(raw > 0).astype(np.intp) if raw.ndim == 1 else np.argmax(raw, axis=1)]


def _class_label_series(raw: Any, classes: np.ndarray) -> Any:
    import pandas as pd
    return pd.Series(_class_labels(raw.to_numpy(), classes), index=raw.index)


def _two_class_frame(p: Any) -> Any:
    import pandas as pd
    return pd.DataFrame({0: 1.0 - p, 1: p}, index=p.index)


class DaskSmartBoostRanker(_DaskModel, SmartBoostRanker):
    """:class:`~smartboost.sklearn.SmartBoostRanker` on Dask; queries are given per row as
    ``qid`` (every query inside one partition). See :class:`_DaskModel`."""

    @staticmethod
    def _local_class() -> type:
        return SmartBoostRanker

    def fit(self, X: Any, y: Any, *, qid: Any = None, sample_weight: Any = None, init_score: Any = None,
            eval_set: list[tuple[Any, Any]] | None = None, eval_qid: list[Any] | None = None,
            eval_names: list[str] | None = None, eval_metric: Any = None, init_model: Booster | str | None = None,
            callbacks: list[TrainingCallback] | None = None) -> DaskSmartBoostRanker:
        """Train on ``X, y`` (relevance grades) with the query id of every row, ``qid``;
        ``eval_metric`` as for the other estimators (a function may take the query sizes:
        ``f(y_true, y_pred, weight, group)``)."""
        if qid is None:
            raise DataError("DaskSmartBoostRanker.fit needs qid= (a query id per row, partitioned like X)")
        if eval_set and (eval_qid is None or len(eval_qid) != len(eval_set)):
            raise ParameterError("give the eval sets' queries as eval_qid (one entry per eval set)")
        return self._fit_dask(X, y, sample_weight, eval_set, eval_names, None, init_model, qid, eval_qid, init_score,
                              callbacks, eval_metric)

    def predict(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False) -> Any:
        """Relevance scores (higher ranks first), a dask collection partitioned like ``X``; the
        other outputs and the iterations as :meth:`SmartBoostRanker.predict
        <smartboost.sklearn.SmartBoostRanker.predict>`."""
        _bool("raw_score", raw_score)
        return self._raw_predict(X, True, start_iteration, num_iteration, pred_leaf, pred_contrib)
