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
loss worse than no step.
"""

from __future__ import annotations

import numpy as np

from .objectives import Objective

__all__ = ["line_search", "leaf_line_search", "to_signs"]


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
                weight: np.ndarray) -> float:
    """``rho`` minimising ``sum_i w_i l(y_i, F_i + rho d_i)`` (0 if no ``rho`` lowers the loss)."""
    return _minimise(lambda rho: float(np.dot(weight, objective.loss(label, scores + rho * direction))), 1.0)


def leaf_line_search(objective: Objective, label: np.ndarray, scores: np.ndarray, weight: np.ndarray,
                     start: float) -> float:
    """``gamma`` minimising ``sum_i w_i l(y_i, F_i + gamma)`` over one leaf's rows, from ``start``."""
    return _minimise(lambda gamma: float(np.dot(weight, objective.loss(label, scores + gamma))), start)
