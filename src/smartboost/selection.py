"""Random-then-greedy candidate splits (RGBM, ALGORITHMS.md 4): which splits a node may choose.

A weak learner is a (feature, threshold) split and a feature's thresholds form its group. Each
tree (``selection_scope="tree"``) or each node (``"node"``) draws a random set of candidates,
and the best split is then chosen greedily among them:

- Type 0: every split (plain boosting, the default);
- Type 1: ``selection_t`` (feature, threshold) pairs, uniformly without replacement;
- Type 2: one feature (all its thresholds), uniformly;
- Type 3: ``selection_t`` features, uniformly without replacement.

A feature's thresholds are those of ``BinMapper.thresholds``: one between each two of its value
bins, and, when its training values include missing ones, "all values left, missing right"
(the grower passes their number per feature). Either way, missing values may go to either side
of a drawn threshold: the direction is learned as in plain boosting.

The savings are real: with per-tree draws the histograms are built for the drawn features only
(for Type 1, those with a drawn threshold), and only the drawn candidates are scanned; with
per-node draws the histograms hold every feature, since children are derived from their parent
by subtraction, and only the scans shrink. The familiar names map onto Type 3:
``colsample_bytree=f`` (LightGBM's ``feature_fraction``) draws ``max(1, round(f F))`` features per
tree, ``colsample_bynode=f`` per node. Draws use their own random stream (seed, iteration,
node), so they change no other random choice.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import ParameterError
from .sampling.base import _hash

__all__ = ["FeatureSelector", "pack_thresholds", "resolve_selection_params"]

_SELECTION_STREAM = 0x53454C454354  # "SELECT"


def resolve_selection_params(params: dict[str, Any], given: dict[str, Any]) -> None:
    """Check the selection parameters together (``colsample_*`` are read by :class:`FeatureSelector`)."""
    by_tree, by_node = params["colsample_bytree"], params["colsample_bynode"]
    if by_tree < 1.0 and by_node < 1.0:
        raise ParameterError("give colsample_bytree or colsample_bynode, not both")
    if min(by_tree, by_node) < 1.0 and ("selection_type" in given or "selection_t" in given):
        raise ParameterError("colsample_bytree/colsample_bynode set the selection; drop selection_type and "
                             "selection_t, or the colsample parameter")
    if params["selection_type"] == 1 and params["selection_t"] is None:
        raise ParameterError("selection_type=1 needs selection_t (the number of (feature, threshold) pairs per draw)")
    if params["selection_type"] == 3 and params["selection_t"] is None:
        raise ParameterError("selection_type=3 needs selection_t (the number of features per draw)")


class FeatureSelector:
    """Draws the candidate splits of a tree or a node.

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
        """Whether draws may restrict anything (Type 0 and Type 3 with t = F do not)."""
        return self.kind == 1 or (self.kind != 0 and self.t < self.candidates.size)

    def _generator(self, iteration: int, node: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(int(_hash(self._stream, _hash(iteration, node + 1)))))

    def draw(self, iteration: int, node: int = -1,
             n_thresholds: np.ndarray | None = None) -> tuple[np.ndarray | None, np.ndarray | None]:
        """The candidates drawn for ``iteration`` (and ``node``, per-node scope).

        Parameters
        ----------
        iteration, node : int
            Key of the draw (``node`` -1 for a per-tree draw).
        n_thresholds : ndarray of int64, shape (n_features,), optional
            Thresholds of each feature (0 for features that cannot be split on); Type 1 only.

        Returns
        -------
        features : ndarray of bool or None
            The features that may be split on (None: every usable one).
        thresholds : ndarray of int64 or None
            Type 1: the drawn thresholds, packed: feature ``f``'s sorted bins are
            ``thresholds[thresholds[f]:thresholds[f + 1]]``. None: every threshold of ``features``.
        """
        if not self.active:
            return None, None
        if self.kind == 1:
            return self._draw_pairs(self._generator(iteration, node), n_thresholds)
        chosen = self._generator(iteration, node).choice(self.candidates, self.t, replace=False)
        mask = np.zeros_like(self.usable)
        mask[chosen] = True
        return mask, None

    def _draw_pairs(self, rng: np.random.Generator, n_thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Type 1: ``t`` of all (feature, threshold) pairs, uniformly without replacement."""
        total = int(n_thresholds.sum())
        if self.t > total:
            raise ParameterError(f"selection_t={self.t} exceeds the {total} (feature, threshold) pairs of the "
                                 "training data")
        if self.t == total:
            return None, None
        pair = np.sort(rng.choice(total, self.t, replace=False, shuffle=False))
        ends = np.cumsum(n_thresholds)
        feature = np.searchsorted(ends, pair, side="right")
        return pack_thresholds(feature, pair - (ends - n_thresholds)[feature], n_thresholds.size)


def pack_thresholds(feature: np.ndarray, bins: np.ndarray, n_features: int) -> tuple[np.ndarray, np.ndarray]:
    """(feature, threshold) pairs as the split kernels take them.

    Parameters
    ----------
    feature, bins : ndarray of int
        The pairs, sorted by feature, then bin (threshold ``b``: bins ``<= b`` go left).
    n_features : int

    Returns
    -------
    features : ndarray of bool, shape (n_features,)
        Features with at least one pair.
    packed : ndarray of int64, shape (n_features + 1 + n_pairs,)
        Feature ``f``'s bins are ``packed[packed[f]:packed[f + 1]]``.
    """
    packed = np.empty(n_features + 1 + bins.size, np.int64)
    packed[:n_features + 1] = n_features + 1 + np.searchsorted(feature, np.arange(n_features + 1))
    packed[n_features + 1:] = bins
    mask = np.zeros(n_features, np.bool_)
    mask[feature] = True
    return mask, packed
