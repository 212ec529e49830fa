"""Binary margin losses l = phi(M), M = s F with s = 2y - 1 in {-1, +1} (docs/concepts/boosting.md, "Losses and links").

The seminar's and the papers' binary losses other than LightGBM's logistic one. Labels are 0/1
(or -1/+1, read as 0/1); gradients and hessians follow from phi: g = s phi'(M), h = phi''(M).

| name | phi(M) | P(y = 1) | sigma-smooth |
|---|---|---|---|
| ``exponential`` (AdaBoost) | e^-M | sigmoid(2F) | none |
| ``smart_logistic`` (SMART's form) | log(1 + e^-2M) | sigmoid(2F) | 1 |
| ``logistic_log2`` (the seminar's logarithmic loss) | log2(1 + e^-M) | sigmoid(F) | 1/(4 ln 2) |
| ``squared_margin`` | (1 - M)^2 | (F + 1) / 2, clipped | 2 |
| ``regularized_logistic`` (RGBM) | log(1 + e^-M) + mu M^2 / 2 (= mu F^2 / 2) | sigmoid(F) | 1/4 + mu |
| ``sigmoid_margin`` (first-order only) | 2 / (1 + e^M) | sigmoid(F) | 1/(3 sqrt 3) |
| ``hinge`` (first-order only) | max(0, 1 - M) | 1 if F > 0 else 0 | none |

The last two have no usable second derivative (negative, or zero almost everywhere): they train
with ``boosting="gradient"`` only.

The start score minimises the weighted loss of a constant (Brent's method on the convex sum).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from ..errors import ParameterError
from .base import Objective, register
from .binary import check_binary_label

(_EXPONENTIAL, _SMART_LOGISTIC, _LOGISTIC_LOG2, _SQUARED_MARGIN, _REGULARIZED_LOGISTIC, _SIGMOID_MARGIN,
 _HINGE) = range(7)


@njit(cache=True, nogil=True)
def _sigmoid(x):
    e = math.exp(-abs(x))
    return 1.0 / (1.0 + e) if x >= 0.0 else e / (1.0 + e)


@njit(cache=True, nogil=True, parallel=True)
def _margin_grad_hess(kind, mu, label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        s = 2.0 * label[i] - 1.0
        m = s * raw[i]
        if kind == _EXPONENTIAL:
            e = math.exp(-m)
            d1, d2 = -e, e
        elif kind == _SMART_LOGISTIC:
            d1, d2 = -2.0 * _sigmoid(-2.0 * m), 4.0 * _sigmoid(2.0 * m) * _sigmoid(-2.0 * m)
        elif kind == _LOGISTIC_LOG2:
            d1, d2 = -_sigmoid(-m) / math.log(2.0), _sigmoid(m) * _sigmoid(-m) / math.log(2.0)
        elif kind == _SQUARED_MARGIN:
            d1, d2 = -2.0 * (1.0 - m), 2.0
        elif kind == _REGULARIZED_LOGISTIC:
            d1, d2 = -_sigmoid(-m) + mu * m, _sigmoid(m) * _sigmoid(-m) + mu
        elif kind == _SIGMOID_MARGIN:
            q = _sigmoid(m) * _sigmoid(-m)
            d1, d2 = -2.0 * q, 2.0 * q * (_sigmoid(m) - _sigmoid(-m))
        else:  # _HINGE
            d1, d2 = (-1.0 if m < 1.0 else 0.0), 0.0
        out_grad[i] = s * d1
        out_hess[i] = d2


class MarginObjective(Objective):
    """A binary loss of the margin ``M = (2y - 1) F``; subclasses set ``kind`` and :meth:`phi`."""

    kind: int
    task = "binary"
    default_metric = "error"

    def check_label(self, label, name="label", training=True):
        """0/1 labels (-1/+1 accepted), both classes present in training data."""
        return check_binary_label(label, name, training)

    def phi(self, margin: np.ndarray) -> np.ndarray:
        """The loss as a function of the margin."""
        raise NotImplementedError

    @property
    def _mu(self) -> float:
        return 0.0

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = s phi'(sF), h = phi''(sF)."""
        _margin_grad_hess(self.kind, self._mu, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """phi((2y - 1) F)."""
        return self.phi((2.0 * label - 1.0) * raw)

    def init_score(self, label, weight):
        """The constant minimising the weighted loss."""
        w = np.ones_like(label) if weight is None else weight
        s = 2.0 * label - 1.0
        from scipy.optimize import minimize_scalar  # imported on use: scipy.optimize is slow to import

        return float(minimize_scalar(lambda c: float(np.dot(w, self.phi(s * c))), bracket=(-1.0, 1.0)).x)


@register
class Exponential(MarginObjective):
    """AdaBoost's exponential loss e^-M; P(y = 1) = sigmoid(2F)."""

    name = "exponential"
    aliases = ("adaboost",)
    kind = _EXPONENTIAL

    def phi(self, margin):
        """e^-M."""
        return np.exp(-margin)

    def transform(self, raw):
        """sigmoid(2F)."""
        return np.exp(-np.logaddexp(0.0, -2.0 * raw))

    def metric_score(self, raw):
        """Log-odds 2F."""
        return 2.0 * raw


@register
class SmartLogistic(MarginObjective):
    """SMART's logistic form: psi = e^F / (e^F + e^-F), l = -y ln psi - (1 - y) ln(1 - psi).

    The usual logistic loss of the doubled score: g = 2 (psi - y), h = 4 psi (1 - psi).
    """

    name = "smart_logistic"
    aliases = ("logistic_smart",)
    kind = _SMART_LOGISTIC
    default_metric = "logloss"
    sigma_smooth = 1.0

    def phi(self, margin):
        """log(1 + e^-2M)."""
        return np.logaddexp(0.0, -2.0 * margin)

    def transform(self, raw):
        """psi = sigmoid(2F)."""
        return np.exp(-np.logaddexp(0.0, -2.0 * raw))

    def metric_score(self, raw):
        """Log-odds 2F."""
        return 2.0 * raw


@register
class LogisticLog2(MarginObjective):
    """The seminar's logarithmic margin loss log2(1 + e^-M); P(y = 1) = sigmoid(F)."""

    name = "logistic_log2"
    aliases = ("logarithmic",)
    kind = _LOGISTIC_LOG2
    default_metric = "logloss"
    sigma_smooth = 1.0 / (4.0 * math.log(2.0))

    def phi(self, margin):
        """log2(1 + e^-M)."""
        return np.logaddexp(0.0, -margin) / math.log(2.0)

    def transform(self, raw):
        """sigmoid(F)."""
        return np.exp(-np.logaddexp(0.0, -raw))


@register
class SquaredMargin(MarginObjective):
    """The seminar's quadratic margin loss (1 - M)^2; P(y = 1) = (F + 1) / 2, clipped to [0, 1]."""

    name = "squared_margin"
    aliases = ("quadratic_margin",)
    kind = _SQUARED_MARGIN
    sigma_smooth = 2.0

    def phi(self, margin):
        """(1 - M)^2."""
        return np.square(1.0 - margin)

    def transform(self, raw):
        """(F + 1) / 2, clipped to [0, 1]."""
        return np.clip((raw + 1.0) / 2.0, 0.0, 1.0)

    def metric_score(self, raw):
        """Log-odds of the clipped probability."""
        p = np.clip((raw + 1.0) / 2.0, 1e-15, 1.0 - 1e-15)
        return np.log(p) - np.log1p(-p)


@register
class RegularizedLogistic(MarginObjective):
    """RGBM's regularised logistic loss log(1 + e^-M) + mu F^2 / 2; P(y = 1) = sigmoid(F).

    Parameters
    ----------
    logistic_mu : float
        The L2 penalty ``mu >= 0`` on the score (the ``logistic_mu`` parameter).
    """

    name = "regularized_logistic"
    aliases = ("regularised_logistic", "rgbm_logistic")
    kind = _REGULARIZED_LOGISTIC
    default_metric = "logloss"
    options = ("logistic_mu",)

    def __init__(self, logistic_mu: float = 0.0) -> None:
        if not logistic_mu >= 0.0:
            raise ParameterError(f"logistic_mu must be >= 0, got {logistic_mu}")
        self.logistic_mu = float(logistic_mu)
        self.sigma_smooth = 0.25 + self.logistic_mu

    @property
    def _mu(self) -> float:
        return self.logistic_mu

    def phi(self, margin):
        """log(1 + e^-M) + mu M^2 / 2."""
        return np.logaddexp(0.0, -margin) + 0.5 * self.logistic_mu * np.square(margin)

    def transform(self, raw):
        """sigmoid(F)."""
        return np.exp(-np.logaddexp(0.0, -raw))


@register
class SigmoidMargin(MarginObjective):
    """The seminar's sigmoid margin loss 2 / (1 + e^M) (non-convex); P(y = 1) = sigmoid(F)."""

    name = "sigmoid_margin"
    kind = _SIGMOID_MARGIN
    first_order_only = True
    sigma_smooth = 1.0 / (3.0 * math.sqrt(3.0))

    def init_score(self, label, weight):
        """0: the loss is bounded, and its constant minimiser is often at infinity."""
        return 0.0

    def phi(self, margin):
        """2 / (1 + e^M)."""
        return 2.0 * np.exp(-np.logaddexp(0.0, margin))

    def transform(self, raw):
        """sigmoid(F)."""
        return np.exp(-np.logaddexp(0.0, -raw))


@register
class Hinge(MarginObjective):
    """The hinge loss max(0, 1 - M) (the SVM's); predicts the class, 1 if F > 0."""

    name = "hinge"
    kind = _HINGE
    first_order_only = True

    def phi(self, margin):
        """max(0, 1 - M)."""
        return np.maximum(0.0, 1.0 - margin)

    def transform(self, raw):
        """1 where F > 0, else 0."""
        return (raw > 0).astype(np.float64)
