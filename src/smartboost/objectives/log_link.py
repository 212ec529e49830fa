"""Losses of the log link, mu = e^F: Poisson, gamma and Tweedie regression (LightGBM's).

Each is the negative log-likelihood of its distribution with mean mu = e^F, as a function of F
(up to a term of y alone), with its gradient g and hessian h:

- ``poisson`` (labels y >= 0): l = e^F - y F, g = e^F - y, h = e^(F + poisson_max_delta_step);
- ``gamma`` (y > 0): l = y e^-F + F, g = 1 - y e^-F, h = y e^-F;
- ``tweedie`` (y >= 0, power p in [1, 2)): l = -y e^((1-p)F) / (1-p) + e^((2-p)F) / (2-p),
  g = -y e^((1-p)F) + e^((2-p)F), h = -(1-p) y e^((1-p)F) + (2-p) e^((2-p)F).

Poisson's hessian is LightGBM's safeguard: e^F times e^``poisson_max_delta_step`` (0.7), so
that a leaf of rows with small e^F does not take a huge Newton step (XGBoost does the same
with ``max_delta_step``). Gamma's and Tweedie's hessians are exact (Tweedie's is positive
since p < 2; ``y e^-F`` > 0 for gamma).

:meth:`~Objective.loss` gives each row's loss minus its value at F = log y, half the unit
deviance: zero at the best fit and never negative, which the ``loss`` sampler weighs rows by.
Boosting starts from log of the weighted label mean (the minimiser for all three); predictions
are e^F.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .._kernels.exp import exp
from ..errors import DataError, ParameterError
from .base import Objective, check_label_range, register, weighted_mean


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _poisson_grad_hess(max_delta_step, label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        out_grad[i] = exp(raw[i]) - label[i]
        out_hess[i] = exp(raw[i] + max_delta_step)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _gamma_grad_hess(label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        t = label[i] * exp(-raw[i])
        out_grad[i] = 1.0 - t
        out_hess[i] = t


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def _tweedie_grad_hess(power, label, raw, out_grad, out_hess):
    for i in prange(label.shape[0]):
        a = label[i] * exp((1.0 - power) * raw[i])
        b = exp((2.0 - power) * raw[i])
        out_grad[i] = b - a
        out_hess[i] = (2.0 - power) * b - (1.0 - power) * a


def _poisson_deviance(label: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Half the Poisson unit deviance at mu = e^F (0 log 0 = 0)."""
    from scipy.special import xlogy  # imported on use: scipy.special is slow to import

    return np.exp(raw) - label * raw - label + xlogy(label, label)


class _LogLink(Objective):
    """Shared start and link of the log-link losses."""

    def init_score(self, label, weight):
        """log of the weighted label mean."""
        mean = weighted_mean(label, weight)
        if not mean > 0.0:
            raise DataError(f"objective '{self.name}' needs a positive (weighted) label mean; every label with "
                            "weight is 0")
        return math.log(mean)

    def transform(self, raw):
        """The mean e^F."""
        return np.exp(raw)


@register
class Poisson(_LogLink):
    """Poisson regression of counts (or rates with weights); predicts e^F.

    Parameters
    ----------
    poisson_max_delta_step : float
        The hessian is e^(F + poisson_max_delta_step) (> 0; LightGBM's 0.7 by default).
    """

    name = "poisson"
    aliases = ("count:poisson",)
    default_metric = "poisson"
    hessian_exact = False
    options = ("poisson_max_delta_step",)

    def __init__(self, poisson_max_delta_step: float = 0.7) -> None:
        if not poisson_max_delta_step > 0.0:
            raise ParameterError(f"poisson_max_delta_step must be > 0, got {poisson_max_delta_step}")
        self.poisson_max_delta_step = float(poisson_max_delta_step)

    def check_label(self, label, name="label", training=True):
        """Counts: labels >= 0."""
        return check_label_range(label, name, f"objective '{self.name}'", 0.0)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = e^F - y, h = e^(F + poisson_max_delta_step)."""
        _poisson_grad_hess(self.poisson_max_delta_step, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """e^F - y F - (y - y log y): half the Poisson deviance."""
        return _poisson_deviance(label, raw)


@register
class Gamma(_LogLink):
    """Gamma regression of positive amounts (claim severities, durations); predicts e^F."""

    name = "gamma"
    aliases = ("reg:gamma",)
    default_metric = "gamma"

    def check_label(self, label, name="label", training=True):
        """Labels > 0."""
        return check_label_range(label, name, f"objective '{self.name}'", 0.0, low_open=True)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = 1 - y e^-F, h = y e^-F."""
        _gamma_grad_hess(label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """y e^-F + F - (1 + log y): half the gamma deviance."""
        ratio = label * np.exp(-raw)
        return ratio - np.log(ratio) - 1.0


@register
class Tweedie(_LogLink):
    """Tweedie regression (compound Poisson-gamma: zeros and positive amounts, e.g. pure
    premiums); predicts e^F.

    Parameters
    ----------
    tweedie_variance_power : float
        The power p in Var(y) = phi mu^p, in [1, 2): 1 is Poisson, towards 2 gamma.
    """

    name = "tweedie"
    aliases = ("reg:tweedie",)
    default_metric = "tweedie"
    options = ("tweedie_variance_power",)

    def __init__(self, tweedie_variance_power: float = 1.5) -> None:
        if not 1.0 <= tweedie_variance_power < 2.0:
            raise ParameterError(f"tweedie_variance_power must be in [1, 2), got {tweedie_variance_power}")
        self.tweedie_variance_power = float(tweedie_variance_power)

    def check_label(self, label, name="label", training=True):
        """Labels >= 0."""
        return check_label_range(label, name, f"objective '{self.name}'", 0.0)

    def grad_hess(self, label, raw, out_grad, out_hess):
        """g = -y e^((1-p)F) + e^((2-p)F), h = -(1-p) y e^((1-p)F) + (2-p) e^((2-p)F)."""
        _tweedie_grad_hess(self.tweedie_variance_power, label, raw, out_grad, out_hess)

    def loss(self, label, raw):
        """Half the Tweedie unit deviance (p = 1: the Poisson one)."""
        p = self.tweedie_variance_power
        if p == 1.0:
            return _poisson_deviance(label, raw)
        a, b = 1.0 - p, 2.0 - p
        return -label * np.exp(a * raw) / a + np.exp(b * raw) / b + label ** b / (a * b)
