"""Squared error: l = (y - F)^2 / 2, g = F - y, h = 1 (docs/concepts/boosting.md, "Losses and links")."""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .base import Objective, register, weighted_mean


@njit(cache=True, nogil=True, parallel=True)
def _squared_grad_hess(label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        out_grad[i] = raw[i] - label[i]
        out_hess[i] = 1.0


@register
class SquaredError(Objective):
    """Least squares regression; the prediction is the raw score."""

    name = "regression"
    aliases = ("regression_l2", "l2", "mse", "mean_squared_error", "squared_error", "squared",
               "reg:squarederror")
    default_metric = "rmse"
    sigma_smooth = 1.0

    def init_score(self, label, weight):
        """Weighted mean of the labels."""
        return weighted_mean(label, weight)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = F - y, h = 1."""
        _squared_grad_hess(label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """(y - F)^2 / 2."""
        return 0.5 * np.square(label - raw)
