"""The objective interface and registry.

An objective (a loss with its link) is a class deriving from :class:`Objective` and decorated
with :func:`register`. Every module of this package is imported at start-up, so adding a loss
is adding one file here: its gradient kernels, its class, its registration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np

from ..errors import DataError, ParameterError, did_you_mean

_REGISTRY: dict[str, type[Objective]] = {}


class Objective:
    """A differentiable loss l(y, F) of the raw score F.

    Subclasses set the class attributes and implement :meth:`grad_hess`, :meth:`loss`,
    :meth:`init_score` and, when the prediction is not the raw score, :meth:`transform`.

    Attributes
    ----------
    name : str
        Canonical name (LightGBM's where it has one).
    aliases : tuple of str
        Other accepted names (XGBoost's ``family:variant`` names among them).
    default_metric : str or None
        Metric evaluated when the user sets none (None: no metric).
    task : {'regression', 'binary', 'multiclass', 'ranking'}
        What the labels are: real numbers, 0/1 classes, class indices, or relevance grades.
    row_wise : bool
        Each row's gradient and hessian depend on its own label and raw scores only, so
        :meth:`grad_hess` may be given any subset of the rows (the trainer then computes them
        for the sampled rows alone when the sampler does not read them).
    sigma_smooth : float or None
        Smoothness constant of docs/concepts/boosting.md, "Losses and links" (for RGBM's constant step 1/sigma).
    options : tuple of str
        Training parameters the objective takes (e.g. ``("huber_delta",)``); the constructor
        receives them as keywords, and :meth:`to_dict` stores them in model files.
    hessian_exact : bool
        False when ``grad_hess`` returns a floored or surrogate hessian (e.g. Huber's 1
        outside delta) instead of the second derivative.
    first_order_only : bool
        The second derivative is useless for Newton steps (zero or negative: hinge, sigmoid);
        the objective trains only with ``boosting='gradient'``.
    has_row_loss : bool
        :meth:`loss` gives each row's loss (not for ranking losses, which couple the documents
        of a query, nor for custom gradient functions).
    num_outputs : int
        Raw scores per row: 1, or the number of classes. With K > 1 outputs, raw scores,
        gradients and hessians are arrays of shape (K, n_rows) and each iteration grows K trees.
    renews_leaves : bool
        After a tree is grown, its leaf values are replaced by :meth:`renew_leaf_values` (the
        quantile losses, whose Newton step with a unit hessian is not the leaf's minimiser).
    weight_in_loss : bool
        The row weights are a parameter of each row's loss, not factors of it
        (``cross_entropy_lambda``): the training run gives every training row's weights to
        ``bind_weight(weight)`` before the first gradients, then grows the trees, starts the
        samplers and checks the start with unit row weights (the weights are in the gradients
        and the loss already); the start is still ``init_score(label, weight)``.
    """

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    default_metric: ClassVar[str | None]
    task: ClassVar[str] = "regression"
    sigma_smooth: ClassVar[float | None] = None
    options: ClassVar[tuple[str, ...]] = ()
    hessian_exact: ClassVar[bool] = True
    first_order_only: ClassVar[bool] = False
    row_wise: ClassVar[bool] = True
    has_row_loss: ClassVar[bool] = True
    renews_leaves: ClassVar[bool] = False
    weight_in_loss: ClassVar[bool] = False
    num_outputs: int = 1

    def check_label(self, label: np.ndarray, name: str = "label", training: bool = True) -> np.ndarray:
        """Validate labels (already finite float64) for this objective; return them.

        ``training`` is False for evaluation sets, which may, for example, hold one class.
        """
        return label

    def init_score(self, label: np.ndarray, weight: np.ndarray | None) -> float | np.ndarray:
        """The constant raw score minimising the weighted loss (the boosting start; one per output)."""
        raise NotImplementedError

    def grad_hess(self, label: np.ndarray, raw: np.ndarray, out_grad: np.ndarray, out_hess: np.ndarray) -> None:
        """Write dl/dF and d2l/dF2 of every row into ``out_grad`` and ``out_hess`` (float64)."""
        raise NotImplementedError

    def loss(self, label: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Per-row loss l(y_i, F_i)."""
        raise NotImplementedError

    def sampling_loss(self, label: np.ndarray, raw: np.ndarray) -> np.ndarray:
        """Each row's share of the loss, what ``sampling="loss"`` draws by: :meth:`loss` by
        default (ranking objectives share a query's pairwise loss among its documents)."""
        return self.loss(label, raw)

    def transform(self, raw: np.ndarray) -> np.ndarray:
        """Prediction from raw scores (the inverse link); identity by default."""
        return raw

    def bind(self, label: np.ndarray, query_starts: np.ndarray | None) -> None:
        """Remember what the objective needs of the training data (every row's labels and the
        query starts, before the first gradients): the queries of the ranking objectives, the
        class counts of ``binary``'s ``is_unbalance``; the others need nothing."""

    def renew_leaf_values(self, label: np.ndarray, raw: np.ndarray, weight: np.ndarray, rows: np.ndarray,
                          leaf_start: np.ndarray, leaf_end: np.ndarray) -> np.ndarray:
        """The values (before shrinkage) that replace a new tree's leaf values, for objectives
        with ``renews_leaves`` (LightGBM's ``RenewTreeOutput``).

        Parameters
        ----------
        label, raw, weight : ndarray of float64, shape (n_rows,)
            Labels, raw scores before the tree, and the weights the tree was grown with (the
            rows' own weights times their sampling weights).
        rows : ndarray of int
            Ids of the rows the tree was grown on; leaf ``j`` holds ``rows[leaf_start[j]:leaf_end[j]]``.
        leaf_start, leaf_end : ndarray of int64, shape (n_leaves,)

        Returns
        -------
        ndarray of float64, shape (n_leaves,)
        """
        raise NotImplementedError(f"objective '{self.name}' keeps its Newton leaf values")

    def metric_score(self, raw: np.ndarray) -> np.ndarray:
        """The score the metrics read (``auc`` excepted, which ranks ``raw``): the log-odds of
        ``y = 1`` for binary objectives (the raw score by default)."""
        return raw

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description, enough to rebuild the objective with :func:`make_objective`."""
        return {"name": self.name, **{key: getattr(self, key) for key in self.options}}


def register(cls: type[Objective]) -> type[Objective]:
    """Class decorator adding an objective to the registry under its name and aliases."""
    for key in (cls.name, *cls.aliases):
        key = key.lower()
        if key in _REGISTRY:
            raise RuntimeError(f"objective name {key!r} registered twice")
        _REGISTRY[key] = cls
    return cls


def objective_class(name: str) -> type[Objective]:
    """The objective class registered under a name or alias; raises ParameterError for unknown names."""
    cls = _REGISTRY.get(name.lower())
    if cls is None:
        known = sorted({c.name for c in _REGISTRY.values()})
        raise ParameterError(f"unknown objective {name!r}{did_you_mean(name.lower(), _REGISTRY)} (known: {known})")
    return cls


def canonical_objective_name(name: str) -> str:
    """Canonical name of an objective or alias; raises ParameterError for unknown names."""
    return objective_class(name).name


def make_objective(name: str | Callable, params: Mapping[str, Any] | None = None) -> Objective:
    """Instantiate the objective registered under ``name``.

    Parameters
    ----------
    name : str or callable
        Objective name or alias, or a gradient function (see ``objectives/custom.py``).
    params : mapping, optional
        Parameters; the objective takes those named in its ``options``. ``num_class`` must be
        1 (or absent) for objectives that do not take it, a gradient function among them.

    Raises
    ------
    ParameterError
        An unknown name, or ``num_class`` other than 1 for an objective that does not take it.
    """
    params = params or {}
    cls = _REGISTRY["custom"] if callable(name) else objective_class(name)
    if "num_class" not in cls.options and params.get("num_class", 1) != 1:
        # a gradient function gives one score per row: its model would silently have one output, not num_class
        what = (f"objective {getattr(name, '__name__', name)!r}, a gradient function giving one raw score per row"
                if callable(name) else f"'{cls.name}'")
        raise ParameterError(f"num_class={params['num_class']} is only for multiclass objectives, not {what}")
    if callable(name):
        return cls(name)
    return cls(**{key: params[key] for key in cls.options if key in params})


def check_label_range(label: np.ndarray, name: str, user: str, low: float, high: float = np.inf,
                      low_open: bool = False) -> np.ndarray:
    """Check that every label lies in ``[low, high]`` (``(low, high]`` with ``low_open``); return them.

    ``user`` names what needs the range, as the error says it: ``"objective 'poisson'"``, or a
    metric.

    Raises
    ------
    DataError
        Naming the user, the allowed range and the first row outside it.
    """
    bad = ((label <= low) if low_open else (label < low)) | (label > high)
    if bad.any():
        row = int(np.argmax(bad))
        rule = (f"> {low:g}" if low_open else f">= {low:g}") if high == np.inf else f"in [{low:g}, {high:g}]"
        raise DataError(f"{name} must be {rule} for {user}; row {row} has {label[row]:g}")
    return label


def scaled_score(raw: np.ndarray, factor: float) -> np.ndarray:
    """``factor * raw``, saturating to +-inf where it overflows (raw scores near the float range,
    from a huge learning rate): the sigmoid links read an infinite log-odds as a probability of
    0 or 1, which is the limit, and numpy's overflow warning would only be noise."""
    with np.errstate(over="ignore"):
        return factor * raw


def weighted_sum(values: np.ndarray, weight: np.ndarray | None) -> float:
    """``sum(values * weight)`` (``sum(values)`` when ``weight`` is None) by numpy's pairwise sum,
    not ``np.dot``: a BLAS dot of more than 10,000 values runs on OpenBLAS's own threads, which
    then spin on the cores the training's threads need (gamma on 11,762 weighted rows, 2 threads:
    0.31 s instead of 0.20 s), and it splits the sum by OpenBLAS's thread count, so its last bits
    would depend on the machine."""
    return float((values if weight is None else np.multiply(values, weight)).sum())


def constant_minimiser(objective: Objective, label: np.ndarray, weight: np.ndarray | None) -> float:
    """The constant raw score minimising ``objective``'s weighted loss, for a loss convex in F
    whose minimiser lies between the least and the largest label (Brent's bounded search, to
    1e-10 of the labels' range)."""
    lo, hi = float(label.min()), float(label.max())
    if lo == hi:
        return lo
    from scipy.optimize import minimize_scalar  # imported on use: scipy.optimize is slow to import

    return float(minimize_scalar(lambda c: weighted_sum(objective.loss(label, np.full_like(label, c)), weight),
                                 bounds=(lo, hi), method="bounded", options={"xatol": 1e-10 * (hi - lo)}).x)


def weighted_mean(values: np.ndarray, weight: np.ndarray | None) -> float:
    """Weighted mean; raises DataError when the weights sum to zero."""
    if weight is None:
        return float(np.mean(values))
    total = float(np.sum(weight))
    if not total > 0.0:
        raise DataError("weight sums to zero: no row carries any weight")
    return weighted_sum(values, weight) / total
