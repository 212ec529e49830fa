"""A user-given objective: a Python function returning gradients and hessians.

``train({"objective": fn, ...}, ...)`` with ``fn(label, raw_score) -> (grad, hess)``, both
arrays of shape (n_rows,) (LightGBM's scikit-learn convention): one raw score per row, so
``num_class`` other than 1 is a ParameterError (:func:`~smartboost.objectives.base.make_objective`
checks it). Boosting starts from 0, no
metric is evaluated unless ``metric`` names some, and predictions are raw scores. A saved
model records the objective as ``"custom"``: it predicts as before, and continued training
needs the function again (``init_model`` with ``objective=fn``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import DataError, ParameterError
from .base import Objective, register


@register
class CustomObjective(Objective):
    """Wraps ``fn(label, raw) -> (grad, hess)``.

    Parameters
    ----------
    function : callable, optional
        The gradient function; None for a model loaded from a file.
    """

    name = "custom"
    default_metric = None
    row_wise = False  # the user's function sees the whole training set
    has_row_loss = False

    def __init__(self, function: Callable[[np.ndarray, np.ndarray], tuple] | None = None) -> None:
        self.function = function

    def init_score(self, label, weight):
        """0: nothing is known about the loss."""
        return 0.0

    def grad_hess(self, label, raw, out_grad, out_hess):
        """Call the function and check what it returns."""
        if self.function is None:
            raise ParameterError("this model was trained with a custom objective; to continue training pass the "
                                 "function again as params['objective']")
        result = self.function(label, raw.copy())
        if not isinstance(result, tuple) or len(result) != 2:
            raise DataError("a custom objective must return a (grad, hess) pair of arrays")
        for name, values, out in (("grad", result[0], out_grad), ("hess", result[1], out_hess)):
            values = np.asarray(values, dtype=np.float64)
            if values.shape != out.shape:
                raise DataError(f"the custom objective's {name} has shape {values.shape}, expected {out.shape}")
            if not np.isfinite(values).all():
                row = int(np.argmax(~np.isfinite(values)))
                raise DataError(f"the custom objective's {name} is not finite at row {row} ({values[row]})")
            out[:] = values
        if (out_hess < 0).any():
            raise DataError(f"the custom objective's hess is negative at row {int(np.argmax(out_hess < 0))}")

    def loss(self, label, raw):
        """Unknown for a user function."""
        raise ParameterError("a custom objective has no per-row loss (sampling='loss' needs a built-in objective)")
