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
| ``gaussian_margin`` (first-order only; BrownBoost's) | exp(-c M (M + s)) | sigmoid(F) | 2 c exp(c s^2 / 4) |
| ``hinge`` (first-order only) | max(0, 1 - M) | 1 if F > 0 else 0 | none |

The last three have no usable second derivative (negative somewhere, or zero almost everywhere):
they train with ``boosting="gradient"`` only. The Gaussian loss rises from 0 at large negative
margins to its peak exp(c s^2 / 4) at M = -s/2 and falls to 0 at large positive ones: rows
misclassified by more than s/2 are pushed further down, that is, given up (BrownBoost's
robustness to label noise); ``gaussian_c`` sets its width and ``gaussian_s`` the margin where
it gives up. The seminar gives no values; the defaults c = 1, s = 2 put the peak at M = -1.

The start score minimises the weighted loss of a constant (Brent's method on the convex sum).
"""

from __future__ import annotations

import math
import sys
from typing import ClassVar

import numpy as np
from numba import njit, prange

from ..errors import ParameterError
from .base import Objective, register, scaled_score, weighted_sum
from .binary import check_binary_label, weighted_positive_share

(_EXPONENTIAL, _SMART_LOGISTIC, _LOGISTIC_LOG2, _SQUARED_MARGIN, _REGULARIZED_LOGISTIC, _SIGMOID_MARGIN,
 _HINGE, _GAUSSIAN) = range(8)


@njit(cache=True, nogil=True)
def _sigmoid(x):
    e = math.exp(-abs(x))
    return 1.0 / (1.0 + e) if x >= 0.0 else e / (1.0 + e)


@njit(cache=True, nogil=True, parallel=True)
def _margin_grad_hess(kind, a, b, label, raw, out_grad, out_hess):
    """phi'(M) and phi''(M) of every row; ``a``, ``b`` are the loss's own constants
    (regularized_logistic: mu; gaussian_margin: c, s)."""
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
            d1, d2 = -_sigmoid(-m) + a * m, _sigmoid(m) * _sigmoid(-m) + a
        elif kind == _SIGMOID_MARGIN:
            q = _sigmoid(m) * _sigmoid(-m)
            d1, d2 = -2.0 * q, 2.0 * q * (_sigmoid(m) - _sigmoid(-m))
        elif kind == _GAUSSIAN:
            slope = 2.0 * m + b
            e = math.exp(-a * m * (m + b))
            d1, d2 = -a * slope * e, a * (a * slope * slope - 2.0) * e
        else:  # _HINGE
            d1, d2 = (-1.0 if m < 1.0 else 0.0), 0.0
        out_grad[i] = s * d1
        out_hess[i] = d2


class MarginObjective(Objective):
    """A binary loss of the margin ``M = (2y - 1) F``; subclasses set ``kind`` and :meth:`phi`."""

    kind: int
    task = "binary"
    default_metric = "error"
    bounded: ClassVar[bool] = False
    """The loss is bounded, and its constant minimiser is often at infinity: boosting starts from 0."""

    def check_label(self, label, name="label", training=True):
        """0/1 labels (-1/+1 accepted), both classes present in training data."""
        return check_binary_label(label, name, training)

    def phi(self, margin: np.ndarray) -> np.ndarray:
        """The loss as a function of the margin."""
        raise NotImplementedError

    @property
    def _constants(self) -> tuple[float, float]:
        """The loss's own constants as the gradient kernel takes them."""
        return 0.0, 0.0

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = s phi'(sF), h = phi''(sF)."""
        _margin_grad_hess(self.kind, *self._constants, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """phi((2y - 1) F)."""
        return self.phi((2.0 * label - 1.0) * raw)

    def init_score(self, label, weight):
        """The constant minimising the weighted loss (0 for a bounded loss); both classes must
        carry weight, else the minimiser of an unbounded loss is at infinity."""
        weighted_positive_share(label, weight, self.name)
        if self.bounded:
            return 0.0
        s = 2.0 * label - 1.0
        from scipy.optimize import minimize_scalar  # imported on use: scipy.optimize is slow to import

        return float(minimize_scalar(lambda c: weighted_sum(self.phi(s * c), weight), bracket=(-1.0, 1.0)).x)


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
        return np.exp(-np.logaddexp(0.0, -self.metric_score(raw)))

    def metric_score(self, raw):
        """Log-odds 2F."""
        return scaled_score(raw, 2.0)


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
        return np.exp(-np.logaddexp(0.0, -self.metric_score(raw)))

    def metric_score(self, raw):
        """Log-odds 2F."""
        return scaled_score(raw, 2.0)


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
        """Log-odds of the clipped probability (ties beyond F = +-1: ``auc`` ranks ``raw`` instead)."""
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
    def _constants(self) -> tuple[float, float]:
        return self.logistic_mu, 0.0

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
    bounded = True
    sigma_smooth = 1.0 / (3.0 * math.sqrt(3.0))

    def phi(self, margin):
        """2 / (1 + e^M)."""
        return 2.0 * np.exp(-np.logaddexp(0.0, margin))

    def transform(self, raw):
        """sigmoid(F)."""
        return np.exp(-np.logaddexp(0.0, -raw))


@register
class GaussianMargin(MarginObjective):
    """The seminar's Gaussian (BrownBoost) margin loss exp(-c M (M + s)) (non-convex, bounded);
    P(y = 1) = sigmoid(F), a monotone score rather than a calibrated probability.

    Parameters
    ----------
    gaussian_c : float
        The width constant ``c > 0`` (the ``gaussian_c`` parameter).
    gaussian_s : float
        The shift ``s`` (the ``gaussian_s`` parameter): the loss peaks at ``M = -s / 2``, and
        rows with a smaller margin are given up.
    """

    name = "gaussian_margin"
    aliases = ("brownboost", "gaussian")
    kind = _GAUSSIAN
    first_order_only = True
    bounded = True
    options = ("gaussian_c", "gaussian_s")

    def __init__(self, gaussian_c: float = 1.0, gaussian_s: float = 2.0) -> None:
        if not (gaussian_c > 0.0 and math.isfinite(gaussian_c)):
            raise ParameterError(f"gaussian_c must be a finite number > 0, got {gaussian_c}")
        if not math.isfinite(gaussian_s):
            raise ParameterError(f"gaussian_s must be finite, got {gaussian_s}")
        self.gaussian_c = float(gaussian_c)
        self.gaussian_s = float(gaussian_s)
        # |phi''| peaks at M = -s/2, where it is 2 c exp(c s^2 / 4), and so does the loss: exp(c s^2 / 4)
        peak = self.gaussian_c * self.gaussian_s * self.gaussian_s / 4.0
        if not peak < math.log(sys.float_info.max / (2.0 * self.gaussian_c)):
            raise ParameterError(f"gaussian_c={gaussian_c} and gaussian_s={gaussian_s} are too large: the loss "
                                 f"exp(-c M (M + s)) peaks at exp(c s^2 / 4) = exp({peak:g}), beyond a float")
        self.sigma_smooth = 2.0 * self.gaussian_c * math.exp(peak)

    @property
    def _constants(self) -> tuple[float, float]:
        return self.gaussian_c, self.gaussian_s

    def phi(self, margin):
        """exp(-c M (M + s))."""
        return np.exp(-self.gaussian_c * margin * (margin + self.gaussian_s))

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
