"""Random-then-greedy candidate splits (RGBM, docs/concepts/rgbm.md): which splits a node may choose.

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
node), so they change no other random choice; each is one compiled pass of selection sampling
over the features or pairs, with no random generator object to create per draw.
"""

from __future__ import annotations


import numpy as np

from ._kernels.draws import draw_exact
from ._kernels.records import NodeDraws
from ._kernels.selection import draw_key, draw_pairs
from ._params import TrainingParams
from .errors import ParameterError
from .sampling.base import mix_keys

__all__ = ["FeatureSelector"]

_SELECTION_STREAM = 0x53454C454354  # "SELECT"


class FeatureSelector:
    """Draws the candidate splits of a tree or a node.

    Parameters
    ----------
    params : dict
        Training parameters (``_params.TrainingParams``).
    usable : ndarray of bool, shape (n_features,)
        Features that can be split on at all (not constant).
    """

    def __init__(self, params: TrainingParams, usable: np.ndarray) -> None:
        self.usable = usable
        self.candidates = np.flatnonzero(usable)
        n = self.candidates.size
        by_tree, by_node = params.colsample_bytree, params.colsample_bynode
        if min(by_tree, by_node) < 1.0:
            self.kind, self.per_node = 3, by_node < 1.0
            self.t = max(1, int(round(min(by_tree, by_node) * n)))
        else:
            self.kind, self.per_node = params.selection_type, params.selection_scope == "node"
            self.t = 1 if self.kind == 2 else (params.selection_t or n)
        if self.kind == 3 and self.t > n:
            raise ParameterError(f"selection_t={self.t} exceeds the {n} features that can be split on")
        self._stream = mix_keys(params.seed, _SELECTION_STREAM)
        self._scratch = np.empty((2, 0), np.uint32)

    @property
    def active(self) -> bool:
        """Whether draws may restrict anything (Type 0 and Type 3 with t = F do not)."""
        return self.kind == 1 or (self.kind != 0 and self.t < self.candidates.size)

    def _key(self, iteration: int, node: int) -> np.uint64:
        """The random stream of one draw."""
        return np.uint64(draw_key(self._stream, iteration, node))

    def _sample(self, iteration: int, node: int, k: int, m: int) -> np.ndarray:
        """``k`` of ``0 .. m - 1``, uniformly without replacement, sorted."""
        if self._scratch.shape[1] < m:
            self._scratch = np.empty((2, m), np.uint32)
        chosen, rest = self._scratch[0, :m], self._scratch[1, :m]
        draw_exact(self._key(iteration, node), k, chosen, rest)
        return chosen[:k].astype(np.int64)

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
            return self._draw_pairs(iteration, node, n_thresholds)
        mask = np.zeros_like(self.usable)
        mask[self.candidates[self._sample(iteration, node, self.t, self.candidates.size)]] = True
        return mask, None

    def node_draws(self, iteration: int, n_thresholds: np.ndarray) -> NodeDraws | None:
        """The per-node draws of ``iteration`` as the compiled growth loop makes them
        (``_kernels.selection.draw_node_candidates``, node by node), with buffers for two nodes'
        draws; None when the draws restrict nothing (Type 1 drawing every pair).
        """
        n = n_thresholds.size
        if self.kind == 1:
            total = self._pair_count(n_thresholds)
            if self.t == total:
                return None
            packed = np.empty((2, n + 2 + self.t), np.int64)
        else:
            packed = None
        m = self.candidates.size
        return NodeDraws(self._stream, iteration, self.t, self.candidates, n_thresholds, np.empty((2, n), np.bool_),
                         packed, np.empty(m, np.uint32), np.empty(m, np.uint32))

    def _pair_count(self, n_thresholds: np.ndarray) -> int:
        """All (feature, threshold) pairs; ``selection_t`` may not exceed it."""
        total = int(n_thresholds.sum())
        if self.t > total:
            raise ParameterError(f"selection_t={self.t} exceeds the {total} (feature, threshold) pairs of the "
                                 "training data")
        return total

    def _draw_pairs(self, iteration: int, node: int,
                    n_thresholds: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Type 1: ``t`` of all (feature, threshold) pairs, uniformly without replacement."""
        if self.t == self._pair_count(n_thresholds):
            return None, None
        packed = np.empty(n_thresholds.size + 2 + self.t, np.int64)
        features = np.empty(n_thresholds.size, np.bool_)
        draw_pairs(self._key(iteration, node), self.t, n_thresholds, packed, features)
        return features, packed[:-1]

