"""Step sizes: how far each tree moves the scores (docs/concepts/boosting.md, "The boosting loop"; RGBM's and TreeBoost's rules).

A grown tree proposes leaf values ``v_j`` (Newton steps, or least-squares fits of the negative
gradient in first-order boosting). The ``step_rule`` parameter scales them, always on top of
``learning_rate``:

- ``shrinkage``: ``v_j`` as fitted;
- ``line``: ``rho v_j`` with ``rho = argmin sum_i w_i l(y_i, F_i + rho t(x_i))`` (:func:`line_search`);
- ``leaf_line``: ``gamma_j = argmin sum_{i in leaf j} w_i l(y_i, F_i + gamma)`` (Friedman's TreeBoost);
- ``smooth``: ``v_j / sigma`` for a sigma-smooth loss (RGBM's constant step).

The searches are Brent's method on a convex 1-D function (scipy), started from the fitted value
and accepted only when they do not increase the loss, so a line step never makes the training
loss worse than no step.
"""

from __future__ import annotations

import numpy as np

from .objectives import Objective

__all__ = ["line_search", "leaf_line_search"]


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
