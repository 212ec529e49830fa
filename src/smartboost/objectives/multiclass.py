"""Multiclass losses, labels in {0, ..., K-1} (docs/concepts/boosting.md, "Losses and links"): softmax
cross-entropy, and one-vs-all logistic regressions (LightGBM's ``multiclassova``).

The raw score is a vector F_i of K class scores; p_i = softmax(F_i) and
l = -log p_{i, y_i}. Per class k: g_k = p_k - [y = k] and, as LightGBM and XGBoost do, the
diagonal of the Hessian scaled by K / (K - 1): h_k = K / (K - 1) p_k (1 - p_k) (Friedman's
multiclass LogitBoost step). One tree per class is grown each iteration. Raw scores are held
class-major, shape (K, n_rows), so each class's scores are one contiguous row.

``multiclassova`` fits K independent binary logistic models, class k's positives being the rows
of label k: its loss is the sum of the K binary losses, its predictions the K probabilities
sigmoid(s F_k), which need not sum to 1 (as LightGBM's).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .._kernels.exp import exp
from ..errors import DataError, ParameterError
from .base import Objective, register, scaled_score
from .binary import BinaryLogistic

_ROWS_PER_BLOCK = 1024


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _softmax_grad_hess(label, raw, out_grad, out_hess):
    # Blocks of rows, each loop over the rows of a block: they vectorise with the vectorisable
    # exp (_kernels/exp.py), one exp per class and row (kept in out_hess until p is known).
    n_class, n = raw.shape
    scale = n_class / (n_class - 1.0)
    for block in prange((n + _ROWS_PER_BLOCK - 1) // _ROWS_PER_BLOCK):
        start = block * _ROWS_PER_BLOCK
        end = min(n, start + _ROWS_PER_BLOCK)
        top = raw[0, start:end].copy()
        for k in range(1, n_class):
            row = raw[k, start:end]
            for i in range(end - start):
                top[i] = max(top[i], row[i])
        total = np.zeros(end - start)
        for k in range(n_class):
            row, e = raw[k, start:end], out_hess[k, start:end]
            for i in range(end - start):
                e[i] = exp(row[i] - top[i])
                total[i] += e[i]
        for k in range(n_class):
            y, g, e = label[start:end], out_grad[k, start:end], out_hess[k, start:end]
            for i in range(end - start):
                p = e[i] / total[i]
                g[i] = p - (1.0 if y[i] == k else 0.0)
                e[i] = scale * p * (1.0 - p)


def _log_softmax(raw: np.ndarray) -> np.ndarray:
    top = raw.max(axis=0)
    with np.errstate(over="ignore"):  # scores far below the top overflow to -inf: their exp is 0, as it should be
        return raw - (top + np.log(np.exp(raw - top).sum(axis=0)))


def check_class_label(label: np.ndarray, num_class: int, name: str) -> np.ndarray:
    """Labels must be integers in [0, num_class)."""
    bad = (label != np.floor(label)) | (label < 0) | (label >= num_class)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"{name} must be an integer class in [0, {num_class}) for a multiclass objective with "
                        f"num_class={num_class}; row {row} has {label[row]}")
    return label


def class_shares(label: np.ndarray, weight: np.ndarray | None, num_class: int) -> np.ndarray:
    """The weighted share of each class among the rows, shape (num_class,).

    Raises
    ------
    DataError
        When the weights sum to zero.
    """
    counts = np.bincount(label.astype(np.intp), weights=weight, minlength=num_class)
    if not counts.sum() > 0:
        raise DataError("weight sums to zero: no row carries any weight")
    return counts / counts.sum()


@register
class MulticlassSoftmax(Objective):
    """Softmax cross-entropy over ``num_class`` classes; predicts the class probabilities.

    Parameters
    ----------
    num_class : int
        Number of classes K >= 2 (the ``num_class`` parameter).
    """

    name = "multiclass"
    task = "multiclass"
    aliases = ("softmax", "multi:softprob", "multi_logloss", "multiclass_softmax")
    default_metric = "multi_logloss"
    sigma_smooth = 1.0
    options = ("num_class",)

    def __init__(self, num_class: int = 1) -> None:
        if not isinstance(num_class, int) or num_class < 2:
            raise ParameterError(f"objective 'multiclass' needs num_class >= 2 (the number of classes), got "
                                 f"{num_class}")
        self.num_class = self.num_outputs = num_class

    def check_label(self, label, name="label", training=True):
        """Integer classes in ``[0, num_class)``."""
        return check_class_label(label, self.num_outputs, name)

    def init_score(self, label, weight):
        """Log of the weighted class frequencies (LightGBM's start; an absent class gets log 1e-15)."""
        return np.log(np.maximum(class_shares(label, weight, self.num_outputs), 1e-15))

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g_k = p_k - [y = k], h_k = K/(K-1) p_k (1 - p_k); arrays of shape (K, n)."""
        _softmax_grad_hess(label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """-log softmax(F_i)[y_i] per row."""
        return -_log_softmax(raw)[label.astype(np.intp), np.arange(label.shape[0])]

    def transform(self, raw):
        """Class probabilities softmax(F), shape (K, n)."""
        return np.exp(_log_softmax(raw))


@register
class MulticlassOVA(Objective):
    """One-vs-all: ``num_class`` binary logistic models, one per class (LightGBM's ``multiclassova``);
    predicts each class's probability sigmoid(s F_k), not normalised.

    Parameters
    ----------
    num_class : int
        Number of classes K >= 2 (the ``num_class`` parameter).
    sigmoid, scale_pos_weight, is_unbalance
        As for ``binary``, applied to each class's model: its positives are the rows of that
        class, and ``is_unbalance`` weighs each model by its own class counts (as LightGBM).
    """

    name = "multiclassova"
    task = "multiclass"
    aliases = ("multiclass_ova", "ova", "ovr")
    default_metric = "multi_logloss"
    options = ("num_class", "sigmoid", "scale_pos_weight", "is_unbalance")

    def __init__(self, num_class: int = 1, sigmoid: float = 1.0, scale_pos_weight: float = 1.0,
                 is_unbalance: bool = False) -> None:
        if not isinstance(num_class, int) or num_class < 2:
            raise ParameterError(f"objective '{self.name}' needs num_class >= 2 (the number of classes), got "
                                 f"{num_class}")
        self.num_class = self.num_outputs = num_class
        # each class's model holds its own class weights (is_unbalance: bound to its own counts)
        self.binary = [BinaryLogistic(sigmoid, scale_pos_weight, is_unbalance) for _ in range(num_class)]
        self.sigmoid, self.scale_pos_weight, self.is_unbalance = (
            self.binary[0].sigmoid, self.binary[0].scale_pos_weight, self.binary[0].is_unbalance)

    def _positives(self, label: np.ndarray, k: int) -> np.ndarray:
        """Class ``k``'s 0/1 labels."""
        return (label == k).astype(np.float64)

    def check_label(self, label, name="label", training=True):
        """Integer classes in ``[0, num_class)``."""
        return check_class_label(label, self.num_outputs, name)

    def bind(self, label, query_starts):
        """Each class's model binds its 0/1 labels (``is_unbalance``'s class counts)."""
        if self.is_unbalance:
            for k, model in enumerate(self.binary):
                model.bind(self._positives(label, k), None)

    @property
    def sigma_smooth(self) -> float:
        """The largest of the class models' hessian bounds."""
        return max(model.sigma_smooth for model in self.binary)

    def init_score(self, label, weight):
        """Each class's log-odds of its weighted share, divided by s; a share is kept within
        [1e-15, 1 - 1e-15] (LightGBM's start: a class absent from the rows starts near -34.5 / s)."""
        p = np.clip(class_shares(label, weight, self.num_outputs), 1e-15, 1.0 - 1e-15)
        return np.log(p / (1.0 - p)) / self.sigmoid

    def grad_hess(self, label, raw, out_grad, out_hess):
        """Class k's row: binary's g = s (p_k - [y = k]), h = s^2 p_k (1 - p_k), times its class weights."""
        for k, model in enumerate(self.binary):
            model.grad_hess(self._positives(label, k), raw[k], out_grad[k], out_hess[k])

    def loss(self, label, raw):
        """The sum of the K binary losses: sum_k log(1 + e^(s F_k)) - s F_y."""
        log_odds = self.metric_score(raw)
        return np.logaddexp(0.0, log_odds).sum(axis=0) - log_odds[label.astype(np.intp), np.arange(label.shape[0])]

    def transform(self, raw):
        """Each class's probability sigmoid(s F_k), shape (K, n)."""
        return np.exp(-np.logaddexp(0.0, -self.metric_score(raw)))

    def metric_score(self, raw):
        """Each class's log-odds s F_k."""
        return scaled_score(raw, self.sigmoid)

    def to_dict(self):
        """Name, ``num_class``, and each of binary's options that is not at its default."""
        return {"name": self.name, "num_class": self.num_class,
                **{key: value for key, value in self.binary[0].to_dict().items() if key != "name"}}
