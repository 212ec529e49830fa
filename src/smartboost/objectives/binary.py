"""Binary logistic loss, labels in {0, 1}: l = log(1 + e^F) - y F (docs/concepts/boosting.md, "Losses and links").

g = sigmoid(F) - y, h = p (1 - p), prediction p = sigmoid(F), start F0 = log-odds of the
weighted label mean. ``cross_entropy`` (LightGBM's ``xentropy``) is the same loss for labels
anywhere in [0, 1] (probabilities, shares).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._kernels.exp import exp
from ..errors import DataError
from .base import Objective, check_label_range, register, weighted_mean


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _logistic_grad_hess(label, raw, out_grad, out_hess):
    # vectorised: the vectorisable exp of _kernels/exp.py, and numpy's error model, whose
    # division has no zero check
    for i in prange(label.shape[0]):
        # sigmoid without a data-dependent branch: e = exp(-|F|) never overflows
        x = raw[i]
        e = exp(-abs(x))
        r = 1.0 / (1.0 + e)
        p = r if x >= 0.0 else e * r
        out_grad[i] = p - label[i]
        out_hess[i] = p * (1.0 - p)


def check_binary_label(label: np.ndarray, name: str, training: bool, user: str = "a binary objective") -> np.ndarray:
    """Labels must be 0/1 (or -1/+1, returned as 0/1); training labels must hold both classes.
    ``user`` names what needs them in the error (a binary metric names itself)."""
    if label.size and (label == -1.0).any() and np.isin(label, (-1.0, 1.0)).all():
        label = (label > 0).astype(np.float64)
    bad = (label != 0.0) & (label != 1.0)
    if bad.any():
        row = int(np.argmax(bad))
        raise DataError(f"{name} must be 0 or 1 (or -1 and +1) for {user}; row {row} has {label[row]}")
    if training and label.min() == label.max():
        raise DataError(f"{name} holds a single class ({label[0]:g}); a binary objective needs both classes")
    return label


def weighted_positive_share(label: np.ndarray, weight: np.ndarray | None, objective: str) -> float:
    """The weighted mean of 0/1 (or [0, 1]) labels, the share of the positive class.

    Raises
    ------
    DataError
        When the rows with positive weight hold a single class (the share is 0 or 1): the
        constant minimising a binary loss is then at infinity. The labels alone may hold both
        classes (``check_binary_label`` passes them) while the weights leave one.
    """
    p = weighted_mean(label, weight)
    if not 0.0 < p < 1.0:
        raise DataError(f"the rows with positive weight hold a single class (mean label {p:g}); objective "
                        f"'{objective}' needs both")
    return p


@register
class BinaryLogistic(Objective):
    """Logistic regression on 0/1 labels (LogitBoost's loss); predicts P(y = 1)."""

    name = "binary"
    task = "binary"
    aliases = ("binary:logistic", "logistic", "binary_logloss", "log_loss", "logloss")
    default_metric = "logloss"
    sigma_smooth = 0.25

    def check_label(self, label, name="label", training=True):
        """0/1 labels, both classes present in training data."""
        return check_binary_label(label, name, training)

    def init_score(self, label, weight):
        """Log-odds of the weighted mean label."""
        p = weighted_positive_share(label, weight, self.name)
        return math.log(p / (1.0 - p))

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = p - y, h = p (1 - p)."""
        _logistic_grad_hess(label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """log(1 + e^F) - y F, computed without overflow."""
        return np.logaddexp(0.0, raw) - label * raw

    def transform(self, raw):
        """P(y = 1) = sigmoid(F)."""
        return np.exp(-np.logaddexp(0.0, -raw))


@register
class CrossEntropy(BinaryLogistic):
    """Cross-entropy of labels in [0, 1] (LightGBM's ``cross_entropy``); predicts sigmoid(F)."""

    name = "cross_entropy"
    task = "regression"
    aliases = ("xentropy",)
    default_metric = "cross_entropy"

    def check_label(self, label, name="label", training=True):
        """Labels in [0, 1]."""
        return check_label_range(label, name, f"objective '{self.name}'", 0.0, 1.0)
