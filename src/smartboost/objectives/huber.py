"""Huber loss (docs/concepts/boosting.md, "Losses and links"): squared within ``delta`` of the label, linear beyond.

With r = F - y: l = r^2 / 2 for |r| <= delta, delta (|r| - delta / 2) beyond; g = clip(r, -delta,
delta). The second derivative is 1 inside and 0 outside; a Newton leaf of outside rows only
would divide by zero, so the hessian is 1 everywhere (LightGBM's choice): outliers then move
their leaf by at most delta per unit of weight.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..errors import ParameterError
from .base import Objective, register, weighted_sum


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
        lo, hi = float(label.min()), float(label.max())
        if lo == hi:
            return lo
        from scipy.optimize import minimize_scalar  # imported on use: scipy.optimize is slow to import

        return float(minimize_scalar(lambda c: weighted_sum(self.loss(label, np.full_like(label, c)), weight),
                                     bounds=(lo, hi), method="bounded", options={"xatol": 1e-10 * (hi - lo)}).x)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = clip(F - y, -delta, delta), h = 1."""
        _huber_grad_hess(self.huber_delta, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """r^2 / 2 inside delta, delta (|r| - delta / 2) outside."""
        r = np.abs(raw - label)
        d = self.huber_delta
        return np.where(r <= d, 0.5 * r * r, d * (r - 0.5 * d))
