"""Robust regression losses (docs/concepts/boosting.md, "Losses and links"): squared near the
label, linear far from it, so that outliers pull less.

Huber, with r = F - y: l = r^2 / 2 for |r| <= delta, delta (|r| - delta / 2) beyond; g =
clip(r, -delta, delta). The second derivative is 1 inside and 0 outside; a Newton leaf of
outside rows only would divide by zero, so the hessian is 1 everywhere (LightGBM's choice):
outliers then move their leaf by at most delta per unit of weight.

Fair (LightGBM's ``fair``): l = c |r| - c^2 log(1 + |r| / c), g = c r / (|r| + c), h = c^2 /
(|r| + c)^2, its exact second derivative: 1 at the label, as the squared loss's, and falling as
1/|r|^2 far from it, where g tends to +-c.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..errors import ParameterError
from .base import Objective, constant_minimiser, register


@njit(cache=True, nogil=True, parallel=True)
def _huber_grad_hess(delta, label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        out_grad[i] = min(max(raw[i] - label[i], -delta), delta)
        out_hess[i] = 1.0


@register
class Huber(Objective):
    """Huber regression; the prediction is the raw score.

    Parameters
    ----------
    huber_delta : float
        Residual size where the loss turns linear (> 0; the ``huber_delta`` parameter).
    """

    name = "huber"
    aliases = ("huber_loss", "reg:pseudohubererror")
    default_metric = "mae"
    sigma_smooth = 1.0
    hessian_exact = False
    options = ("huber_delta",)

    def __init__(self, huber_delta: float = 1.0) -> None:
        if not huber_delta > 0.0:
            raise ParameterError(f"huber_delta must be > 0, got {huber_delta}")
        self.huber_delta = float(huber_delta)

    def init_score(self, label, weight):
        """The constant minimising the weighted Huber loss (between median and mean)."""
        return constant_minimiser(self, label, weight)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = clip(F - y, -delta, delta), h = 1."""
        _huber_grad_hess(self.huber_delta, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """r^2 / 2 inside delta, delta (|r| - delta / 2) outside."""
        r = np.abs(raw - label)
        d = self.huber_delta
        return np.where(r <= d, 0.5 * r * r, d * (r - 0.5 * d))


@njit(cache=True, nogil=True, parallel=True)
def _fair_grad_hess(c, label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        r = raw[i] - label[i]
        d = abs(r) + c
        out_grad[i] = c * r / d
        out_hess[i] = c * c / (d * d)


@register
class Fair(Objective):
    """Fair loss regression (LightGBM's ``fair``); the prediction is the raw score.

    Parameters
    ----------
    fair_c : float
        Residual scale where the loss turns from squared to linear (> 0; the ``fair_c`` parameter).
    """

    name = "fair"
    aliases = ("fair_loss",)
    default_metric = "fair"
    sigma_smooth = 1.0  # h <= 1, at r = 0
    options = ("fair_c",)

    def __init__(self, fair_c: float = 1.0) -> None:
        if not (fair_c > 0.0 and np.isfinite(fair_c)):
            raise ParameterError(f"fair_c must be a finite number > 0, got {fair_c}")
        self.fair_c = float(fair_c)

    def init_score(self, label, weight):
        """The constant minimising the weighted Fair loss (LightGBM starts from the mean)."""
        return constant_minimiser(self, label, weight)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = c r / (|r| + c), h = c^2 / (|r| + c)^2."""
        _fair_grad_hess(self.fair_c, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """c |r| - c^2 log(1 + |r| / c)."""
        return fair_loss(label, raw, self.fair_c)


def fair_loss(label: np.ndarray, raw: np.ndarray, c: float) -> np.ndarray:
    """Each row's Fair loss c |r| - c^2 log(1 + |r| / c), r = F - y (objective and metric)."""
    r = np.abs(raw - label)
    return c * r - c * c * np.log1p(r / c)
