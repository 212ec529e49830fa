"""scikit-learn estimators, thin over :func:`smartboost.train`.

:class:`SmartBoostRegressor` and :class:`SmartBoostClassifier` follow LightGBM's scikit-learn
API: the usual hyperparameters are named in ``__init__``, any other parameter of the registry
(``docs/reference/parameters.md``, under its own name or any alias) can be passed as a keyword and is
kept by ``get_params``/``set_params``, so ``clone``, ``GridSearchCV`` and ``Pipeline`` see it.
Parameters are validated when ``fit`` calls :func:`~smartboost.train`, not in ``__init__``
(scikit-learn's convention).

Input is checked with scikit-learn's own ``validate_data`` (feature counts and names between
``fit`` and ``predict``, the error messages scikit-learn users know, raised as smartboost's
DataError, still a ValueError); NaN stays a missing value.
A DataFrame with category, string or object columns is passed on as it is, so that its
categories are read by value (``categorical_features``, as in scikit-learn's
HistGradientBoosting). Needs the ``sklearn`` extra (``pip install smartboost[sklearn]``).
"""

from __future__ import annotations

import inspect
import math
import numbers
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.utils.multiclass import check_classification_targets
    from sklearn.utils.validation import _check_sample_weight, _check_y, check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(f"smartboost.sklearn needs scikit-learn >= 1.6 ({exc}): pip install 'smartboost[sklearn]'",
                      name=exc.name) from exc

from ._data import refuse_text, to_query_starts, to_vector
from ._params import _bool, canonical_param_name, explicit_params, is_list_like
from .booster import Booster
from .callback import TrainingCallback, callback_list
from .dataset import Dataset
from .engine import train
from .errors import DataError, ParameterError, RawScoreWarning, SmartBoostError
from .metrics import Feval, canonical_metric_name, function_name, get_metric
from .objectives import Objective, objective_class

__all__ = ["SmartBoostRegressor", "SmartBoostClassifier", "SmartBoostRanker"]

_BINARY_PROBABILITY_OBJECTIVES = frozenset({"cross_entropy"})
"""Objectives of the regression task that classify two classes all the same: their labels are
probabilities of class 1, the 0/1 classes among them, and they predict that probability."""

_CHECK_X = {"accept_sparse": ["csr", "csc"], "dtype": [np.float64, np.float32], "ensure_all_finite": "allow-nan"}


@contextmanager
def _input_errors() -> Iterator[None]:
    """scikit-learn's validation errors of the input (ValueError) as DataError, message kept:
    bad input raises smartboost's one type, which scikit-learn's own checks still catch."""
    try:
        yield
    except SmartBoostError:
        raise
    except ValueError as exc:
        raise DataError(str(exc)) from None


class _SmartBoostModel(BaseEstimator):
    """Shared fit/predict plumbing of the estimators (see the subclasses for the parameters)."""

    def __init__(self, *, objective: str | None = None, n_estimators: int = 100, learning_rate: float = 0.1,
                 num_leaves: int = 31, max_depth: int = -1, grow_policy: str = "leafwise",
                 min_child_samples: int = 20, min_child_weight: float = 1e-3, min_split_gain: float = 0.0,
                 reg_alpha: float = 0.0, reg_lambda: float = 0.0, max_bin: int = 255,
                 sampling: str | None = None, sample_rate: float = 1.0, sampling_freq: int = 1,
                 early_stopping_rounds: int | None = None, callbacks: list[TrainingCallback] | None = None,
                 importance_type: str = "split", random_state: int | np.random.RandomState | None = None,
                 n_jobs: int | None = None, verbosity: int = -1, categorical_features: Any = "from_dtype",
                 class_weight: dict[Any, float] | str | None = None, **kwargs: Any) -> None:
        self.objective = objective
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.grow_policy = grow_policy
        self.min_child_samples = min_child_samples
        self.min_child_weight = min_child_weight
        self.min_split_gain = min_split_gain
        self.reg_alpha = reg_alpha
        self.reg_lambda = reg_lambda
        self.max_bin = max_bin
        self.sampling = sampling
        self.sample_rate = sample_rate
        self.sampling_freq = sampling_freq
        self.early_stopping_rounds = early_stopping_rounds
        self.callbacks = callbacks
        self.importance_type = importance_type
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbosity = verbosity
        self.categorical_features = categorical_features
        self.class_weight = class_weight
        self._other_params: dict[str, Any] = {}
        self.set_params(**kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    # -- parameters ------------------------------------------------------------------------

    _NOT_TRAINING_PARAMS = frozenset({"n_estimators", "callbacks", "importance_type", "random_state", "n_jobs",
                                      "early_stopping_rounds", "categorical_features", "class_weight"})
    """Named parameters that are not entries of :func:`train`'s ``params``."""

    @classmethod
    def _named_params(cls) -> list[str]:
        return [name for name, p in inspect.signature(_SmartBoostModel.__init__).parameters.items()
                if p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Parameters of this estimator, the extra keyword parameters included."""
        params = super().get_params(deep)
        params.update(self._other_params)
        return params

    def set_params(self, **params: Any) -> _SmartBoostModel:
        """Set parameters; names outside the signature are kept as extra training parameters."""
        named = set(self._named_params())
        for key, value in params.items():
            setattr(self, key, value)
            if key not in named:
                self._other_params[key] = value
        return self

    def _train_params(self) -> dict[str, Any]:
        """The ``params`` dict for :func:`train` (validated there).

        A named parameter left at its default gives way to an extra keyword naming the same
        training parameter (``lambda_l2=1`` beats the default ``reg_lambda=0``); set both
        explicitly to different values and :func:`train` reports the conflict.
        """
        skip = self._NOT_TRAINING_PARAMS
        defaults = {name: p.default for name, p in inspect.signature(_SmartBoostModel.__init__).parameters.items()}
        params = {name: getattr(self, name) for name in self._named_params() if name not in skip}
        params.update(self._objective_params())
        params["num_threads"] = 0 if self.n_jobs is None else self.n_jobs
        params["seed"] = _seed(self.random_state)
        if self.early_stopping_rounds:
            params["early_stopping_round"] = self.early_stopping_rounds
        # sampling parameters at their defaults are not given, so that train's default follows the
        # data as it does for train's users ('auto' on large data)
        for name in ("sampling", "sample_rate", "sampling_freq"):
            if params[name] == defaults[name]:
                del params[name]
        overridden = {canonical_param_name(key) for key in self._other_params}
        for name in list(params):
            if canonical_param_name(name) in overridden and params[name] == defaults.get(name):
                del params[name]
        params.update(self._other_params)
        return params

    # -- fitting ---------------------------------------------------------------------------

    def _fit_target(self, y: np.ndarray) -> np.ndarray:
        """The training labels as :func:`train` takes them (classifiers: learn ``classes_``)."""
        return y

    def _class_weights(self, counts: Callable[[], np.ndarray]) -> np.ndarray | None:
        """Each class's weight of ``class_weight`` (None: not set), ``counts()`` giving the rows of
        each class when 'balanced' needs them (classifiers only).

        Raises
        ------
        ParameterError
            ``class_weight`` set on an estimator that does not classify.
        """
        if self.class_weight is not None:
            raise ParameterError(f"class_weight is for SmartBoostClassifier, not {type(self).__name__}")
        return None

    def _class_weighted(self, y: np.ndarray, weight: np.ndarray | None) -> np.ndarray | None:
        """The row weights times their class's weight (``y``: class indices; :meth:`_class_weights`)."""
        per_class = self._class_weights(lambda: np.bincount(y.astype(np.int64), minlength=self.n_classes_))
        if per_class is None:
            return weight
        rows = per_class[y.astype(np.int64)]
        return rows if weight is None else weight * rows

    _default_objective = "regression"

    def _extra_param(self, name: str) -> Any:
        """The extra keyword naming training parameter ``name`` under any alias (``loss=`` for
        ``objective``), None when there is none."""
        given = [value for key, value in self._other_params.items() if canonical_param_name(key) == name]
        return given[-1] if given else None

    def _given_objective(self) -> Any:
        """The objective the user chose (``objective``, or an alias among the extra keywords),
        else this estimator's default: the default must not stand beside an alias as a second,
        different objective."""
        given = self.objective if self.objective is not None else self._extra_param("objective")
        return self._default_objective if given is None else given

    def _objective_params(self) -> dict[str, Any]:
        """``objective`` (and ``num_class``) for the labels seen by ``fit``.

        Raises
        ------
        ParameterError
            A multiclass objective: it predicts a probability per class, not one value per row.
        """
        objective = self._given_objective()
        cls = _objective_class(objective)
        if cls is not None and cls.task == "multiclass":
            raise ParameterError(f"{type(self).__name__} predicts one value per row, but objective {objective!r} "
                                 "predicts a probability per class; use SmartBoostClassifier")
        return {"objective": objective}

    def _encode_target(self, y: Any) -> np.ndarray:
        """Labels of an eval set, encoded as the training labels were."""
        return np.asarray(y, np.float64)

    def fit(self, X: Any, y: Any, sample_weight: Any = None, *, init_score: Any = None,
            eval_set: list[tuple[Any, Any]] | None = None, eval_names: list[str] | None = None,
            eval_sample_weight: list[Any] | None = None, eval_init_score: list[Any] | None = None,
            eval_metric: Any = None, init_model: Booster | str | None = None,
            callbacks: list[TrainingCallback] | None = None) -> _SmartBoostModel:
        """Train on ``X, y``.

        Parameters
        ----------
        X : array-like, DataFrame or scipy sparse matrix, shape (n_samples, n_features)
            NaN marks a missing value.
        y : array-like, shape (n_samples,)
        sample_weight : array-like, shape (n_samples,), optional
        init_score : array-like, shape (n_samples,) or (n_samples, n_classes), optional
            Raw scores that boosting starts from (an offset, such as the log of an exposure for
            a Poisson objective); not part of the model's predictions (:class:`~smartboost.Dataset`).
        eval_set : list of (X, y) pairs, optional
            Evaluated after every iteration (``evals_result_``); early stopping watches them.
        eval_names : list of str, optional
            Names of the eval sets (default ``valid_<i>``).
        eval_sample_weight : list of array-like, optional
            Weights of each eval set.
        eval_init_score : list of array-like, optional
            Init scores of each eval set (None for none), as ``init_score``.
        eval_metric : str, callable or list of them, optional
            Metrics of the eval sets besides the objective's (or ``metric``'s), as LightGBM's
            ``fit`` takes them: built-in metric names (evaluated first), and functions
            ``f(y_true, y_pred)``, ``f(y_true, y_pred, weight)`` or ``f(y_true, y_pred, weight,
            group)`` (by their number of parameters) returning ``(name, value,
            is_higher_better)`` or a list of such tuples. ``y_pred`` is what :meth:`predict`
            gives for a regressor, the probabilities of class 1 (two classes) or of every class,
            shape (n_samples, n_classes), for a classifier, raw scores for a custom objective;
            ``y_true`` the labels (a classifier's as indices of ``classes_``); ``group`` the rows
            per query. See docs/howto/custom-metrics.md.
        init_model : Booster or path, optional
            Continue training this model.
        callbacks : list of TrainingCallback, optional
            Run after the constructor's ``callbacks`` (LightGBM takes them here, XGBoost in the
            constructor; either works).

        Returns
        -------
        self
        """
        return self._fit(X, y, sample_weight, init_score, eval_set, eval_names, eval_sample_weight, eval_init_score,
                         init_model, eval_metric=eval_metric, callbacks=callbacks)

    def _fit(self, X: Any, y: Any, sample_weight: Any, init_score: Any, eval_set: list[tuple[Any, Any]] | None,
             eval_names: list[str] | None, eval_sample_weight: list[Any] | None, eval_init_score: list[Any] | None,
             init_model: Booster | str | None, queries: dict[str, Any] | None = None,
             eval_queries: list[dict[str, Any]] | None = None, eval_metric: Any = None,
             callbacks: list[TrainingCallback] | None = None) -> _SmartBoostModel:
        """:meth:`fit`, with the rankers' queries (``{"group": ..., "qid": ...}``) of the data and eval sets."""
        y_numeric = not isinstance(self, ClassifierMixin)
        with _input_errors():
            if _has_categories(X):
                X = validate_data(self, X, skip_check_array=True)
                y = _check_y(y, y_numeric=y_numeric)
            else:
                # before scikit-learn reads numpy's dates as numbers or fails on text (a frame's are checked later)
                refuse_text(X, "X")
                X, y = validate_data(self, X, y, **_CHECK_X, y_numeric=y_numeric)
            y = self._fit_target(y)
            weight = None if sample_weight is None else _check_sample_weight(sample_weight, X)
        weight = self._class_weighted(y, weight)
        params, feval = _with_eval_metric(self._train_params(), eval_metric)
        names = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        train_set = Dataset(X, y, weight=weight, init_score=init_score, feature_name=names, params=params,
                            reference=init_model, categorical_feature=self._categorical_feature(X),
                            **(queries or {}))
        valid_sets = []
        eval_set = _eval_pairs(eval_set)
        for name, given in (("eval_sample_weight", eval_sample_weight), ("eval_init_score", eval_init_score)):
            if given is not None and len(given) != len(eval_set):
                raise ParameterError(f"{name} has {len(given)} entries for {len(eval_set)} eval sets (give one per "
                                     "eval set, None where it has none)")
        for i, (X_valid, y_valid) in enumerate(eval_set):
            X_valid = self._check_X(X_valid)
            w = None if eval_sample_weight is None else eval_sample_weight[i]
            score = None if eval_init_score is None else eval_init_score[i]
            valid_sets.append(Dataset(X_valid, self._encode_target(y_valid), weight=w, init_score=score,
                                      reference=train_set, **(eval_queries[i] if eval_queries else {})))
        self._Booster = train(params, train_set, self.n_estimators, valid_sets=valid_sets or None,
                              valid_names=eval_names, callbacks=self._callbacks(callbacks), init_model=init_model,
                              feval=feval)
        return self

    def _callbacks(self, given: Any) -> Any:
        """The constructor's ``callbacks``, then ``fit``'s ``given`` ones."""
        if given is None or self.callbacks is None:
            return self.callbacks if given is None else given
        return [*callback_list(self.callbacks), *callback_list(given)]

    def _categorical_feature(self, X: Any) -> Any:
        """``categorical_features`` as the Dataset's ``categorical_feature``: 'from_dtype' is its
        'auto', a boolean mask its indices, None no categorical feature."""
        value = self.categorical_features
        if value is None:
            return []
        if isinstance(value, str):
            if value != "from_dtype":
                raise ParameterError("categorical_features must be 'from_dtype', None, indices, names or a boolean "
                                     f"mask, got {value!r}")
            return "auto"
        value = np.asarray(value)
        if value.dtype == bool:
            if value.shape != (np.shape(X)[1],):
                raise ParameterError(f"categorical_features as a boolean mask needs one entry per feature "
                                 f"({np.shape(X)[1]}), got shape {value.shape}")
            return np.flatnonzero(value).tolist()
        return value.tolist()

    def _check_X(self, X: Any) -> Any:
        """Prediction or evaluation data checked against the fitted features (a DataFrame with
        categories is passed on as it is)."""
        with _input_errors():
            if _has_categories(X):
                return validate_data(self, X, reset=False, skip_check_array=True)
            refuse_text(X, "X")
            return validate_data(self, X, reset=False, **_CHECK_X)

    # -- fitted attributes -----------------------------------------------------------------

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "_Booster")

    @property
    def booster_(self) -> Booster:
        """The trained :class:`~smartboost.Booster`."""
        check_is_fitted(self)
        return self._Booster

    @property
    def best_iteration_(self) -> int:
        """Number of trees used by ``predict`` (the best iteration under early stopping)."""
        return self.booster_.best_iteration

    @property
    def n_iter_(self) -> int:
        """Number of boosting iterations run."""
        return self.booster_.current_iteration()

    @property
    def evals_result_(self) -> dict[str, dict[str, list[float]]]:
        """``{eval_name: {metric: [value per iteration]}}``."""
        return self.booster_.evals_result

    @property
    def feature_importances_(self) -> np.ndarray:
        """Split counts or total gains per feature (``importance_type``)."""
        return self.booster_.feature_importance(self.importance_type)

    def _raw_predict(self, X: Any, raw_score: bool, start_iteration: int = 0, num_iteration: int | None = None,
                     pred_leaf: bool = False, pred_contrib: bool = False) -> np.ndarray:
        check_is_fitted(self)
        return self._Booster.predict(self._check_X(X), raw_score=raw_score, start_iteration=start_iteration,
                                     num_iteration=num_iteration, pred_leaf=pred_leaf, pred_contrib=pred_contrib)


class SmartBoostRegressor(RegressorMixin, _SmartBoostModel):
    """Gradient-boosted trees for regression (scikit-learn API).

    Parameters
    ----------
    objective : str, optional
        Loss (default ``"regression"``, squared error); not a multiclass one, which predicts a
        probability per class (:class:`SmartBoostClassifier`).
    n_estimators : int
        Boosting iterations.
    learning_rate : float
        Shrinkage of every tree.
    num_leaves : int
        Leaves per tree (leaf-wise growth).
    max_depth : int
        Depth limit; -1 for none.
    grow_policy : {'leafwise', 'depthwise'}
    min_child_samples : int
        Minimum rows per leaf.
    min_child_weight : float
        Minimum hessian sum per leaf.
    min_split_gain : float
        Minimum gain of a split (XGBoost's gamma).
    reg_alpha, reg_lambda : float
        L1 and L2 regularisation of the leaf values.
    max_bin : int
        Histogram bins per feature (2 to 65535; above 255 a feature may have a bin per distinct value).
    sampling : str, optional
        Row sampler (``"auto"``, ``"mvs"``, ``"goss"``, ``"uniform"``, ``"none"``, ...; see
        ``docs/concepts/sampling.md``). Default: ``"auto"`` on training data of at least 100,000 rows
        and 20 features (the ``sampling`` parameter of :func:`smartboost.train`), else none.
    sample_rate : float
        Target fraction of rows per tree; below 1 without ``sampling`` means uniform sampling.
    sampling_freq : int
        Draw a new sample every this many iterations.
    early_stopping_rounds : int, optional
        Stop when no eval set's metric improved for this many iterations.
    callbacks : list of TrainingCallback, optional
    importance_type : {'split', 'gain'}
        What ``feature_importances_`` counts.
    random_state : int, RandomState or None
        Seed of every random choice (None: seed 0, like LightGBM).
    n_jobs : int, optional
        Threads; None, 0 or -1 for all.
    verbosity : int
        -1 silent, 0 warnings, 1 info.
    categorical_features : 'from_dtype', array-like or None
        The categorical features, as in scikit-learn's HistGradientBoosting: 'from_dtype' (a
        DataFrame's category, string and object columns), indices, names, a boolean mask, or
        None (none). See docs/howto/categorical.md.
    class_weight : dict, 'balanced' or None
        :class:`SmartBoostClassifier` only: weights of the classes (``{label: weight}``, classes
        left out weigh 1), or 'balanced' (``n_samples / (n_classes * rows of the class)``), as in
        scikit-learn and LightGBM; they multiply ``sample_weight``. For two classes,
        ``scale_pos_weight`` and ``is_unbalance`` weigh the positive class likewise.
    **kwargs
        Any other training parameter of ``docs/reference/parameters.md`` (e.g. ``smart_eta=0.5``).

    Attributes
    ----------
    booster_ : Booster
    best_iteration_, n_iter_ : int
    evals_result_ : dict
    feature_importances_ : ndarray of shape (n_features,)
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when ``X`` had string column names.
    """

    def predict(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False) -> np.ndarray:
        """Predicted values, shape (n_samples,); or, as :meth:`Booster.predict`, the raw scores
        (``raw_score``), each tree's leaf (``pred_leaf``) or the SHAP values and expected value
        (``pred_contrib``), of the iterations ``start_iteration`` and ``num_iteration`` choose
        (:meth:`Booster.predict`'s; LightGBM's ``LGBMRegressor.predict``)."""
        return self._raw_predict(X, raw_score, start_iteration, num_iteration, pred_leaf, pred_contrib)


class SmartBoostClassifier(ClassifierMixin, _SmartBoostModel):
    """Gradient-boosted trees for classification (scikit-learn API).

    Takes the parameters of :class:`SmartBoostRegressor`. ``objective`` defaults to
    ``"binary"`` (logistic loss) for two classes and ``"multiclass"`` (softmax, one tree per
    class and iteration) for more. It must predict class probabilities: a binary objective
    (``"binary"``, ``"cross_entropy"``, the margin losses) for two classes, or ``"multiclass"``
    or ``"multiclassova"`` (whose per-class probabilities, as LightGBM's, need not sum to 1);
    another objective is a ParameterError at :meth:`fit`. ``num_class`` is set from the classes
    (``"multiclass"`` on two classes included: then :meth:`decision_function` gives a score per
    class). Labels of any type are accepted.

    A custom objective (a gradient function ``fn(label, raw) -> (grad, hess)``, labels 0 and 1)
    classifies two classes; its link from raw scores to probabilities is unknown, so, as with
    LightGBM's ``LGBMClassifier``, :meth:`predict_proba` returns the raw scores
    (:meth:`decision_function`, shape (n_samples,)) and :meth:`predict` the class of the raw
    score's sign (``classes_[1]`` above 0), each with a
    :class:`~smartboost.errors.RawScoreWarning`. A gradient function gives one score per row,
    so more than two classes with one is a ParameterError at :meth:`fit`.

    Attributes
    ----------
    classes_ : ndarray
        The class labels, sorted; the columns of ``predict_proba`` follow this order.
    n_classes_ : int
    booster_, best_iteration_, n_iter_, evals_result_, feature_importances_, n_features_in_,
    feature_names_in_
        As :class:`SmartBoostRegressor`.
    """

    def _encode_target(self, y: Any) -> np.ndarray:
        """Labels as ``classes_`` indices; unseen labels (in an eval set) raise."""
        y = np.asarray(y)
        try:
            index = np.minimum(np.searchsorted(self.classes_, y), self.classes_.size - 1)
            unknown = self.classes_[index] != y
        except TypeError:  # labels that do not compare with the classes (int and str): looked up instead
            position = {c: i for i, c in enumerate(self.classes_.tolist())}
            index = np.array([position.get(v, 0) for v in y.ravel().tolist()]).reshape(y.shape)
            unknown = np.array([v not in position for v in y.ravel().tolist()]).reshape(y.shape)
        if unknown.any():  # listed in order of appearance: np.unique would sort, which mixed types cannot
            raise DataError(f"y contains labels not in classes_ {self.classes_.tolist()}: "
                            f"{list(dict.fromkeys(y[unknown].tolist()))[:5]}")
        return index.astype(np.float64)

    def _fit_target(self, y: np.ndarray) -> np.ndarray:
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size == 1:
            raise DataError(f"y has one class ({classes[0]!r}); a classifier needs two")
        self.classes_ = classes
        self.n_classes_ = classes.size
        return self._encode_target(y)

    def _class_weights(self, counts: Callable[[], np.ndarray]) -> np.ndarray | None:
        """Each class's weight (in ``classes_`` order) of ``class_weight``, None when it is not
        set; ``counts()`` gives the rows of each class, which 'balanced' divides by.

        Raises
        ------
        ParameterError
            A ``class_weight`` that is neither a dict nor 'balanced', a class it names that
            ``y`` does not have, or a weight that is not a finite number >= 0.
        """
        given = self.class_weight
        if given is None:
            return None
        classes = self.classes_.tolist()
        if isinstance(given, str) and given == "balanced":
            rows = counts()
            return rows.sum() / (len(classes) * rows)
        if not isinstance(given, Mapping):
            raise ParameterError(f"class_weight must be a dict of class weights, 'balanced' or None, got {given!r}")
        per_class = np.ones(len(classes))
        for label, value in given.items():
            if label not in classes:
                raise ParameterError(f"class_weight names class {label!r}, which y does not have (classes: "
                                     f"{classes[:10]})")
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not (
                    math.isfinite(value) and value >= 0):
                raise ParameterError(f"class_weight of class {label!r} must be a finite number >= 0, got {value!r}")
            per_class[classes.index(label)] = value
        return per_class

    @property
    def _default_objective(self) -> str:
        return "binary" if self.n_classes_ == 2 else "multiclass"

    def _objective_params(self) -> dict[str, Any]:
        """The objective, and ``num_class`` from ``classes_`` for a multiclass one (as LightGBM's
        ``LGBMClassifier`` sets it; for two classes too, where LightGBM leaves it unset and
        refuses 'multiclass').

        Raises
        ------
        ParameterError
            An objective that does not predict class probabilities (``predict_proba`` would be
            meaningless), a binary one or a gradient function for more than two classes, or a
            ``num_class`` that is not the number of classes.
        """
        objective = self._given_objective()
        cls = _objective_class(objective)
        if callable(objective) and self.n_classes_ > 2:  # a custom objective's model has one output, not a class's
            raise ParameterError(f"objective {getattr(objective, '__name__', objective)!r} is a gradient function, "
                                 f"which trains one raw score per row: it cannot classify the {self.n_classes_} "
                                 "classes of y; use 'multiclass', or leave objective unset")
        multiclass = cls is not None and cls.task == "multiclass"
        if cls is not None and not multiclass:
            if cls.task != "binary" and cls.name not in _BINARY_PROBABILITY_OBJECTIVES:
                raise ParameterError(f"SmartBoostClassifier needs a classification objective ('binary', "
                                     f"'multiclass', ...), got objective {objective!r}, a {cls.task} objective "
                                     f"(use {'SmartBoostRanker' if cls.task == 'ranking' else 'SmartBoostRegressor'})")
            if self.n_classes_ > 2:
                raise ParameterError(f"objective {objective!r} classifies two classes, but y has {self.n_classes_}; "
                                     "use 'multiclass' or leave objective unset")
        num_class = self.n_classes_ if multiclass else 1
        given = self._extra_param("num_class")
        if given is not None and given != num_class:  # predict_proba's columns would not be the classes
            raise ParameterError(f"num_class={given!r} disagrees with the {self.n_classes_} classes of y for objective "
                                 f"{objective!r}; leave it unset (the classifier sets it from the classes)")
        return {"objective": objective, "num_class": num_class} if multiclass else {"objective": objective}

    _RAW_SCORES_INSTEAD = {
        "predict_proba": "it returns the raw scores (decision_function) instead",
        "predict": "it reads the labels off the raw scores as if they were log-odds: classes_[1] above 0"}
    """What :meth:`predict_proba` and :meth:`predict` give for a model of a custom objective."""

    def _unknown_link(self, method: str) -> bool:
        """Whether the model was trained with a custom objective, whose raw scores are not known to
        be log-odds; if so, warn that ``method`` gives what :attr:`_RAW_SCORES_INSTEAD` says."""
        if self.booster_.objective.name != "custom":
            return False
        warnings.warn(f"{type(self).__name__}.{method}: the model was trained with a custom objective, whose link "
                      f"from raw scores to class probabilities is unknown; {self._RAW_SCORES_INSTEAD[method]}",
                      RawScoreWarning, stacklevel=3)
        return True

    def predict_proba(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                      pred_leaf: bool = False, pred_contrib: bool = False) -> np.ndarray:
        """Class probabilities, shape (n_samples, ``n_classes_``), columns in ``classes_`` order;
        with ``raw_score``, ``pred_leaf`` or ``pred_contrib``, :meth:`Booster.predict`'s output
        as it is (LightGBM's ``LGBMClassifier.predict_proba``). ``start_iteration`` and
        ``num_iteration`` choose the iterations, as in :meth:`Booster.predict`.

        A model trained with a custom objective gives its raw scores instead, shape (n_samples,),
        with a :class:`~smartboost.errors.RawScoreWarning` (as LightGBM's ``LGBMClassifier``).
        """
        if raw_score or pred_leaf or pred_contrib:
            return self._raw_predict(X, raw_score, start_iteration, num_iteration, pred_leaf, pred_contrib)
        if self._unknown_link("predict_proba"):
            return self._raw_predict(X, True, start_iteration, num_iteration)
        p = self._raw_predict(X, False, start_iteration, num_iteration)
        return np.column_stack([1.0 - p, p]) if p.ndim == 1 else p

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw scores: log-odds of ``classes_[1]``, shape (n_samples,), for two classes; one score
        per class, shape (n_samples, ``n_classes_``), for more."""
        return self._raw_predict(X, raw_score=True)

    def predict(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False) -> np.ndarray:
        """Predicted class labels; or, as :meth:`Booster.predict`, the raw scores (``raw_score``),
        each tree's leaf (``pred_leaf``) or the SHAP values and expected value of the raw scores
        (``pred_contrib``); of the iterations ``start_iteration`` and ``num_iteration`` choose
        (:meth:`Booster.predict`'s; LightGBM's ``LGBMClassifier.predict``).

        The label is that of the highest probability: ``classes_[1]`` where the raw score (the
        log-odds) is above 0, or the class of the highest score. A model trained with a custom
        objective is read the same way, with a :class:`~smartboost.errors.RawScoreWarning`.
        """
        if raw_score or pred_leaf or pred_contrib:
            return self._raw_predict(X, raw_score, start_iteration, num_iteration, pred_leaf, pred_contrib)
        self._unknown_link("predict")
        raw = self._raw_predict(X, True, start_iteration, num_iteration)
        index = (raw > 0).astype(np.intp) if raw.ndim == 1 else np.argmax(raw, axis=1)
        return self.classes_[index]


class SmartBoostRanker(_SmartBoostModel):
    """Gradient-boosted trees for learning to rank (scikit-learn API; LightGBM's ``LGBMRanker``).

    Takes the parameters of :class:`SmartBoostRegressor`; ``objective`` defaults to
    ``"lambdarank"`` (LambdaMART; ``"rank_pairwise"`` is RankNet). Queries are given to
    :meth:`fit` as ``group`` (rows per query) or ``qid`` (a query id per row: it survives
    slicing, so ``GroupKFold(...).split(X, y, qid)`` splits keep queries whole), or, as
    XGBoost's ``XGBRanker`` takes them, as a ``qid`` column of a DataFrame ``X`` (not a feature).

    :meth:`score` is the mean NDCG, so scikit-learn's model selection needs no scorer. With its
    default settings scikit-learn passes ``score`` nothing but ``X`` and ``y``: give the queries
    as the ``qid`` column of a DataFrame ``X``, as for ``XGBRanker``::

        GridSearchCV(SmartBoostRanker(), grid, cv=GroupKFold(3)).fit(frame, y, groups=frame["qid"])

    With metadata routing (``sklearn.set_config(enable_metadata_routing=True)``), ask for
    ``qid`` in both ``fit`` and ``score`` instead::

        ranker = SmartBoostRanker().set_fit_request(qid=True).set_score_request(qid=True)
        GridSearchCV(ranker, grid, cv=GroupKFold(3)).fit(X, y, qid=qid, groups=qid)
    """

    _default_objective = "lambdarank"

    def fit(self, X: Any, y: Any, *, group: Any = None, qid: Any = None, sample_weight: Any = None,
            init_score: Any = None, eval_set: list[tuple[Any, Any]] | None = None, eval_group: list[Any] | None = None,
            eval_qid: list[Any] | None = None, eval_names: list[str] | None = None,
            eval_init_score: list[Any] | None = None, eval_metric: Any = None,
            init_model: Booster | str | None = None,
            callbacks: list[TrainingCallback] | None = None) -> SmartBoostRanker:
        """Train on ``X, y`` (relevance grades) with the queries of ``group`` or ``qid``.

        ``eval_set`` pairs take their queries from ``eval_group`` or ``eval_qid`` (one entry
        per pair); the other arguments are those of :meth:`SmartBoostRegressor.fit`.
        """
        X, qid = _qid_column(X, qid, group)
        if group is None and qid is None:
            raise DataError("SmartBoostRanker.fit needs the queries: group= (rows per query), qid= (per row) or a "
                             "qid column of a DataFrame X")
        eval_queries = None
        eval_set = _eval_pairs(eval_set)
        if eval_set:
            if (eval_group is None) == (eval_qid is None):
                raise ParameterError("give the eval sets' queries as eval_group or eval_qid (one entry per eval set)")
            given = eval_group if eval_group is not None else eval_qid
            if len(given) != len(eval_set):
                raise ParameterError(f"{len(given)} query entries for {len(eval_set)} eval sets")
            key = "group" if eval_group is not None else "qid"
            eval_queries = [{key: value} for value in given]
        return self._fit(X, y, sample_weight, init_score, eval_set, eval_names, None, eval_init_score, init_model,
                         {"group": group, "qid": qid}, eval_queries, eval_metric, callbacks)

    def predict(self, X: Any, raw_score: bool = False, start_iteration: int = 0, num_iteration: int | None = None,
                pred_leaf: bool = False, pred_contrib: bool = False) -> np.ndarray:
        """Relevance scores (higher ranks first), shape (n_samples,), which are the raw scores
        (``raw_score`` changes nothing); or, as :meth:`Booster.predict`, each tree's leaf
        (``pred_leaf``) or the SHAP values and expected value (``pred_contrib``); of the
        iterations ``start_iteration`` and ``num_iteration`` choose (:meth:`Booster.predict`'s).
        A ``qid`` column of a DataFrame ``X`` is left out."""
        X, _ = _qid_column(X, None, None)
        _bool("raw_score", raw_score)
        return self._raw_predict(X, True, start_iteration, num_iteration, pred_leaf, pred_contrib)

    def score(self, X: Any, y: Any, qid: Any = None, group: Any = None) -> float:
        """Mean NDCG of the ranking of each query by :meth:`predict`.

        The NDCG cut-off is that of the model's first ranking metric (``metric="ndcg@5"``, ...;
        ``map@k`` gives mean average precision), else the objective's metric, ``ndcg@10``.

        Parameters
        ----------
        X : array-like or DataFrame, shape (n_samples, n_features)
            A DataFrame may hold the queries as a ``qid`` column (XGBoost's convention; the way
            scikit-learn's model selection can pass them without metadata routing).
        y : array-like, shape (n_samples,)
            Relevance grades.
        qid, group : array-like, optional
            The queries, as in :meth:`fit`.

        Returns
        -------
        float
        """
        X, qid = _qid_column(X, qid, group)
        raw = self.predict(X)
        starts = to_query_starts(group, qid, raw.shape[0])
        if starts is None:
            raise DataError("SmartBoostRanker.score needs the queries: a qid column of a DataFrame X, or qid= or "
                             "group= (scikit-learn passes them with metadata routing and set_score_request(qid=True))")
        params = self.booster_.params
        ranking = [m for m in params["metric"] or () if m.startswith(("ndcg", "map"))]
        metric = get_metric(ranking[0] if ranking else self.booster_.objective.default_metric, params["label_gain"])
        # checked: a label of another length would be read past its end by the metric's kernel
        return metric(to_vector(y, raw.shape[0], "y"), raw, None, None, starts)


def _with_eval_metric(params: dict[str, Any], eval_metric: Any) -> tuple[dict[str, Any], list[Feval]]:
    """``fit``'s ``eval_metric`` as :func:`train` takes it: ``params`` whose ``metric`` lists its
    built-in names first, then the metrics the run had (``metric``, else the objective's), as
    LightGBM's ``fit`` orders them; and its functions as ``feval``.

    Raises
    ------
    ParameterError
        An entry that is neither a metric name nor a function, or an unknown metric name.
    """
    if eval_metric is None:
        return params, []
    items = [eval_metric] if isinstance(eval_metric, str) or callable(eval_metric) else eval_metric
    if not is_list_like(items):
        raise ParameterError(f"eval_metric must be a metric name, a function or a list of them, got "
                             f"{type(eval_metric).__name__}")
    names, feval = [], []
    for i, item in enumerate(items):
        if isinstance(item, str):
            names.append(canonical_metric_name(item))
        elif callable(item):
            feval.append(_scikit_learn_metric(item))
        else:
            raise ParameterError(f"eval_metric[{i}] must be a metric name or a function f(y_true, y_pred), got "
                                 f"{type(item).__name__}")
    if names:
        given = explicit_params(params)
        objective = given.get("objective")
        default = objective_class(objective).default_metric if isinstance(objective, str) else None
        run = given["metric"] if given.get("metric") is not None else (default,) if default else ()
        params = {key: value for key, value in params.items() if canonical_param_name(key) != "metric"}
        params["metric"] = list(dict.fromkeys([*names, *run]))
    return params, feval


def _scikit_learn_metric(function: Any) -> Feval:
    """A scikit-learn style metric ``function(y_true, y_pred[, weight[, group]])`` as a ``feval``
    of :func:`train`: its parameters say which of the labels, predictions, weights and query
    sizes of the evaluation set it takes, as LightGBM's wrapper counts them.

    Raises
    ------
    ParameterError
        A function with fewer than 2 or more than 4 parameters.
    """
    name = function_name(function)
    try:
        parameters = inspect.signature(function).parameters.values()
    except ValueError:  # no signature to read (some built-in functions): given the labels and predictions
        parameters = None
    if parameters is None:
        arity = 2
    elif any(p.kind == p.VAR_POSITIONAL for p in parameters):
        arity = 4
    else:
        arity = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in parameters)
        if not 2 <= arity <= 4:
            raise ParameterError(f"eval_metric function {name!r} takes {arity} positional parameters; it must take "
                                 "(y_true, y_pred), (y_true, y_pred, weight) or (y_true, y_pred, weight, group)")

    def feval(preds: np.ndarray, eval_data: Dataset) -> Any:
        given = (eval_data.get_label(), preds, eval_data.get_weight(), eval_data.get_group())
        return function(*given[:arity])

    feval.__qualname__ = name  # errors about what it returns name the user's function
    return feval


def _eval_pairs(eval_set: Any) -> list[tuple[Any, Any]]:
    """``eval_set`` as a list of ``(X, y)`` pairs; one pair alone is a list of one (as LightGBM
    takes it).

    Raises
    ------
    ParameterError
        An entry that is not an ``(X, y)`` pair (unpacking it failed with a bare ValueError).
    """
    if eval_set is None:
        return []
    if isinstance(eval_set, tuple) and len(eval_set) == 2 and not isinstance(eval_set[0], tuple):
        eval_set = [eval_set]
    pairs = list(eval_set)
    for i, pair in enumerate(pairs):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise ParameterError(f"eval_set[{i}] must be an (X, y) pair, got {type(pair).__name__}"
                                 + (f" of length {len(pair)}" if hasattr(pair, "__len__") else ""))
    return pairs


def _qid_column(X: Any, qid: Any, group: Any) -> tuple[Any, Any]:
    """``(X without its qid column, the column)`` for a DataFrame with a ``qid`` column and no
    other queries given; ``(X, qid)`` otherwise."""
    if not (hasattr(X, "columns") and "qid" in X.columns):
        return X, qid
    if qid is not None or group is not None:
        raise DataError("the queries are given twice: as the qid column of X and as qid= or group=")
    return X.drop(columns="qid"), X["qid"].to_numpy()


def _has_categories(X: Any) -> bool:
    """Whether ``X`` is a DataFrame with a column that is not numeric (categories, texts)."""
    dtypes = getattr(X, "dtypes", None)
    return dtypes is not None and hasattr(X, "columns") and any(
        getattr(dtype, "kind", "O") not in "biuf" for dtype in dtypes)


def _objective_class(objective: Any) -> type[Objective] | None:
    """The class of a named objective; None for a gradient function (or a value that
    :func:`~smartboost.train` refuses, with its own error)."""
    return objective_class(objective) if isinstance(objective, str) else None


def _seed(random_state: int | np.random.RandomState | None) -> int:
    """LightGBM's mapping: None -> the default seed, a RandomState -> one draw from it."""
    if random_state is None:
        return 0
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(np.iinfo(np.int32).max))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(np.iinfo(np.int32).max))
    return random_state
