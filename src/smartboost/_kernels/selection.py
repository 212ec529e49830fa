"""RGBM's draws of candidate splits: Type 1's ``t`` (feature, threshold) pairs, and a node's own draw.

Knuth's selection sampling over the pairs in (feature, threshold) order, with the counter-based
random numbers of the samplers (``uniform(key, i)`` for pair ``i``), written straight into the
packed layout the split kernels read, in one pass over all pairs.
"""

from __future__ import annotations

from numba import njit

from .draws import draw_exact
from .random import hash_pair, uniform


@njit(cache=True, nogil=True)
def draw_pairs(key, t, n_thresholds, packed, features):
    """Draw ``t`` of the pairs; feature ``f`` has thresholds ``0 .. n_thresholds[f] - 1``.

    Parameters
    ----------
    key : uint64
        The draw's random stream.
    t : int
        Pairs to draw, at most ``n_thresholds.sum()``.
    n_thresholds : ndarray of int64, shape (n_features,)
    packed : ndarray of int64, shape (n_features + 2 + t,)
        Output: feature ``f``'s drawn thresholds, increasing, are
        ``packed[packed[f]:packed[f + 1]]`` (the last entry is scratch).
    features : ndarray of bool, shape (n_features,)
        Output: whether feature ``f`` has a drawn threshold.
    """
    n_features = n_thresholds.shape[0]
    left = 0
    for f in range(n_features):
        left += n_thresholds[f]
    needed = t
    i = 0
    out = n_features + 1
    for f in range(n_features):
        packed[f] = out
        for b in range(n_thresholds[f]):
            keep = uniform(key, i) * left < needed
            packed[out] = b  # branch-free: kept when ``out`` moves on
            out += keep
            needed -= keep
            left -= 1
            i += 1
        features[f] = packed[f] < out
    packed[n_features] = out


@njit(cache=True, nogil=True)
def draw_key(stream, iteration, node):
    """The random stream of the draw of ``node`` (-1: the tree's) at ``iteration``."""
    return hash_pair(stream, hash_pair(iteration, node + 1))


@njit(cache=True, nogil=True)
def draw_node_candidates(key, t, pool, n_thresholds, features, packed, chosen, rest):
    """One node's candidates, drawn in the tree's compiled growth loop (``_kernels.grow``) as
    ``selection.FeatureSelector.draw`` draws them.

    With ``packed`` (Type 1): ``t`` (feature, threshold) pairs by :func:`draw_pairs` into
    ``packed`` and ``features``. Without (``None``: Types 2 and 3): ``t`` of the ``pool``
    features, uniformly without replacement (``chosen`` and ``rest``, uint32 of ``pool.size``,
    are scratch), marked in ``features``.
    """
    if packed is not None:
        draw_pairs(key, t, n_thresholds, packed, features)
        return
    features[:] = False
    draw_exact(key, t, chosen, rest)
    for k in range(t):
        features[pool[chosen[k]]] = True
