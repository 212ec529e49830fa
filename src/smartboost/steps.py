"""Step sizes: how far each tree moves the scores (docs/concepts/boosting.md, "The boosting loop"; RGBM's and TreeBoost's rules).

A grown tree proposes leaf values ``v_j`` (Newton steps, or least-squares fits of the negative
gradient in first-order boosting). The ``step_rule`` parameter scales them, always on top of
``learning_rate``:

- ``shrinkage``: ``v_j`` as fitted;
- ``line``: ``rho v_j`` with ``rho = argmin sum_i w_i l(y_i, F_i + rho t(x_i))`` (:func:`line_search`);
- ``leaf_line``: ``gamma_j = argmin sum_{i in leaf j} w_i l(y_i, F_i + gamma)`` (Friedman's TreeBoost);
- ``smooth``: ``v_j / sigma`` for a sigma-smooth loss (RGBM's constant step).

A sign tree (``weak_learner="sign"``) outputs ``f_j = -sign(G_j)`` in every leaf: AnyBoost's
{-1, +1} base classifier. Its ``line`` step is AnyBoost's line-searched ``alpha``. Its
``smooth`` step is RGBM's constant step on the normalised learner ``b = f / sqrt(n)``:
``(1/sigma) <r, b> b = (1/sigma) (sum_j |G_j| / n) f``, the correlation of ``f`` with the
negative gradients ``r`` over the ``n`` rows (weighted: the sample's weight), which
:func:`to_signs` returns.

The searches are Brent's method on a convex 1-D function (scipy), started from the fitted value
and accepted only when they do not increase the loss, so a line step never makes the training
loss worse than no step. The loss is summed exactly (:func:`exact_sum`, rounded once), so the
search takes the same steps whatever the order of the rows and however they are spread over
machines: ``gather`` collects every machine's partial sums (``smartboost.dask``).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from ._kernels.fsum import exact_partials
from .objectives import Objective

__all__ = ["exact_sum", "line_search", "leaf_line_search", "to_signs"]

Gather = Callable[[np.ndarray], np.ndarray]
"""Every machine's partials (:func:`~smartboost._kernels.fsum.exact_partials`) from this
machine's, concatenated in a fixed order."""


def exact_sum(values: np.ndarray, gather: Gather | None = None) -> float:
    """The sum of ``values`` correctly rounded (as ``math.fsum``), or with ``gather`` of every
    machine's ``values``: the same float on every machine and in any order of the rows."""
    partials = exact_partials(values)
    if gather is not None:
        partials = gather(partials)
    finite = np.isfinite(partials)
    if not finite.all():  # inf, -inf or nan, as their IEEE sum
        with np.errstate(invalid="ignore"):
            return float(partials[~finite].sum())
    try:
        return math.fsum(partials)
    except OverflowError:  # the exact sum lies beyond the largest float
        return math.copysign(math.inf, partials[-1])


def to_signs(grown, lambda_l2: float) -> float:
    """Turn a first-order tree's values (``-G_j / (H_j + lambda_l2)``) into their signs, in place;
    return ``sum_j |G_j| / sum_j H_j``, the mean correlation of the sign tree with the negative
    gradients per unit of (unit-hessian) weight, RGBM's step on the normalised tree.

    Parameters
    ----------
    grown : GrownTree
        As the grower returns it, with unit hessians (``boosting="gradient"``).
    lambda_l2 : float
        The tree's ``lambda_l2``.
    """
    value, hessian, leaves = grown.tree.value, grown.tree.hessian, grown.leaf_nodes
    correlation = float(np.sum(np.abs(value[leaves]) * (hessian[leaves] + lambda_l2)))
    weight = float(np.sum(hessian[leaves]))
    np.sign(value, out=value)
    return correlation / weight if weight > 0.0 else 0.0


def _minimise(total, start: float) -> float:
    """argmin of a convex 1-D function, from the bracket (0, start); 0 when nothing beats it."""
    from scipy.optimize import minimize_scalar  # imported on use: scipy.optimize is slow to import

    result = minimize_scalar(total, bracket=(0.0, start if start != 0.0 else 1.0))
    best = float(result.x)
    return best if np.isfinite(best) and total(best) <= total(0.0) else 0.0


def line_search(objective: Objective, label: np.ndarray, scores: np.ndarray, direction: np.ndarray,
                weight: np.ndarray, gather: Gather | None = None) -> float:
    """``rho`` minimising ``sum_i w_i l(y_i, F_i + rho d_i)`` (0 if no ``rho`` lowers the loss),
    over these rows or (``gather``) every machine's."""
    return _minimise(lambda rho: exact_sum(weight * objective.loss(label, scores + rho * direction), gather), 1.0)


def leaf_line_search(objective: Objective, label: np.ndarray, scores: np.ndarray, weight: np.ndarray,
                     start: float, gather: Gather | None = None) -> float:
    """``gamma`` minimising ``sum_i w_i l(y_i, F_i + gamma)`` over one leaf's rows, from ``start``
    (with ``gather``, the leaf's rows on every machine)."""
    return _minimise(lambda gamma: exact_sum(weight * objective.loss(label, scores + gamma), gather), start)
