"""Random-then-greedy candidate splits (RGBM, ALGORITHMS.md 4): which features a split may use.

A weak learner is a (feature, threshold) split and a feature's thresholds form its group. Each
tree (``selection_scope="tree"``) or each node (``"node"``) draws a random set of groups, and
the best split is then chosen greedily among them:

- Type 0: every feature (plain boosting, the default);
- Type 2: one feature, uniformly;
- Type 3: ``selection_t`` features, uniformly without replacement.

The savings are real: with per-tree draws the histograms are built for the drawn features only
(and scanned only there); with per-node draws the histograms hold every feature, since children
are derived from their parent by subtraction, and only the split scans shrink. The familiar
names map onto Type 3: ``colsample_bytree=f`` (LightGBM's ``feature_fraction``) draws
``max(1, round(f F))`` features per tree, ``colsample_bynode=f`` per node. Draws use their own
random stream (seed, iteration, node), so they change no other random choice.

(Type 1, random (feature, bin) pairs, is not implemented yet.)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ParameterError
from .sampling.base import _hash

__all__ = ["FeatureSelector", "resolve_selection_params"]

_SELECTION_STREAM = 0x53454C454354  # "SELECT"


def resolve_selection_params(params: dict[str, Any], given: dict[str, Any]) -> None:
    """Check the selection parameters together (``colsample_*`` are read by :class:`FeatureSelector`)."""
    by_tree, by_node = params["colsample_bytree"], params["colsample_bynode"]
    if by_tree < 1.0 and by_node < 1.0:
        raise ParameterError("give colsample_bytree or colsample_bynode, not both")
    if min(by_tree, by_node) < 1.0 and ("selection_type" in given or "selection_t" in given):
        raise ParameterError("colsample_bytree/colsample_bynode set the selection; drop selection_type and "
                             "selection_t, or the colsample parameter")
    if params["selection_type"] == 1:
        raise ParameterError("selection_type=1 (random (feature, bin) pairs) is not implemented yet; use 0, 2 or 3")
    if params["selection_type"] == 3 and params["selection_t"] is None:
        raise ParameterError("selection_type=3 needs selection_t (the number of features per draw)")


class FeatureSelector:
    """Draws the features a tree or a node may split on.

    Parameters
    ----------
    params : dict
        Resolved parameters (after :func:`resolve_selection_params`).
    usable : ndarray of bool, shape (n_features,)
        Features that can be split on at all (not constant).
    """

    def __init__(self, params: dict[str, Any], usable: np.ndarray) -> None:
        self.usable = usable
        self.candidates = np.flatnonzero(usable)
        n = self.candidates.size
        by_tree, by_node = params["colsample_bytree"], params["colsample_bynode"]
        if min(by_tree, by_node) < 1.0:
            self.kind, self.per_node = 3, by_node < 1.0
            self.t = max(1, int(round(min(by_tree, by_node) * n)))
        else:
            self.kind, self.per_node = params["selection_type"], params["selection_scope"] == "node"
            self.t = 1 if self.kind == 2 else (params["selection_t"] or n)
        if self.kind == 3 and self.t > n:
            raise ParameterError(f"selection_t={self.t} exceeds the {n} features that can be split on")
        self._stream = _hash(params["seed"], _SELECTION_STREAM)

    @property
    def active(self) -> bool:
        """Whether draws restrict anything (Type 0 and t = F do not)."""
        return self.kind != 0 and self.t < self.candidates.size

    def draw(self, iteration: int, node: int = -1) -> np.ndarray:
        """The bool mask of the features drawn for ``iteration`` (and ``node``, per-node scope)."""
        if not self.active:
            return self.usable
        key = _hash(self._stream, _hash(iteration, node + 1))
        chosen = np.random.Generator(np.random.PCG64(int(key))).choice(self.candidates, self.t, replace=False)
        mask = np.zeros_like(self.usable)
        mask[chosen] = True
        return mask
