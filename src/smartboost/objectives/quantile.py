"""Piecewise-linear losses: quantile (pinball), absolute error and absolute percentage error.

With r = y - F:

| name | l(y, F) | g for F > y, F < y, F = y | minimiser of a constant |
|---|---|---|---|
| ``quantile`` | alpha r for r >= 0, (alpha - 1) r below | 1 - alpha, -alpha, 1 - alpha | the alpha-quantile of y |
| ``regression_l1`` | \\|r\\| | 1, -1, 0 | the median of y |
| ``mape`` | \\|r\\| / max(1, \\|y\\|) | u, -u, 0 with u = 1 / max(1, \\|y\\|) | the median weighted by u |

(LightGBM's definitions; MAPE divides by ``max(1, |y|)``, not ``|y|``, so labels near 0 do not
blow up.) The second derivative is 0 almost everywhere; the hessian is 1, so a tree is grown on
the gradients' signs, and, as LightGBM does (``RenewTreeOutput``), each new leaf's value is then
replaced by the minimiser of the loss over the leaf's rows: the weighted alpha-quantile (the
median for l1, weighted by ``w u`` for MAPE) of their residuals ``y - F`` at the scores before
the tree, weighted by the weights the tree was grown with (sampling weights included). The
shrinkage applies to the refitted values.

The weighted alpha-quantile of values v with weights w (:func:`weighted_quantile`) is the
smallest v_k, in increasing order, whose cumulative weight exceeds alpha W (W the total); when
it reaches alpha W exactly, the midpoint of v_k and the next value (so an even number of equal
weights gives the usual median). Every such value minimises sum w_i rho_alpha(v_i - c).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..errors import DataError, ParameterError
from .base import Objective, register


@njit(cache=True, nogil=True, parallel=True)
def _piecewise_linear_grad_hess(above, below, at, percentage, label, raw, out_grad, out_hess):
    """g = ``above`` where F > y, ``below`` where F < y, ``at`` where F = y; divided by
    max(1, |y|) with ``percentage``; h = 1."""
    for i in prange(label.shape[0]):
        d = raw[i] - label[i]
        g = above if d > 0.0 else (below if d < 0.0 else at)
        out_grad[i] = g / max(1.0, abs(label[i])) if percentage else g
        out_hess[i] = 1.0


@njit(cache=True, nogil=True)
def weighted_quantile(values, weights, alpha):
    """The weighted ``alpha``-quantile of ``values`` (see the module docstring); 0 when the
    weights sum to 0."""
    total = 0.0
    unit = True
    for k in range(weights.shape[0]):
        total += weights[k]
        unit = unit and weights[k] == 1.0
    if not total > 0.0:
        return 0.0
    target = alpha * total
    if unit:
        return _unit_weight_quantile(values, target)
    order = np.argsort(values, kind="mergesort")
    cumulative = 0.0
    for j in range(order.shape[0]):
        cumulative += weights[order[j]]
        if cumulative > target:
            return values[order[j]]
        if cumulative == target:
            for after in range(j + 1, order.shape[0]):  # the next value that carries weight
                if weights[order[after]] > 0.0:
                    return 0.5 * (values[order[j]] + values[order[after]])
            return values[order[j]]
    return values[order[order.shape[0] - 1]]


_SELECT_SORTED = 16
"""Ranges of at most this many values are sorted instead of partitioned further."""

_SELECT_ROUNDS = 48
"""Partition rounds after which :func:`_select_pair` sorts what is left: a bound on the
quadratic worst case of a bad run of pivots (each round keeps a quarter to three quarters of
the range on typical data)."""


@njit(cache=True, nogil=True)
def _select_pair(values, k):
    """The ``k``-th and ``(k + 1)``-th smallest of ``values`` (0-based; +inf for the second
    when ``k`` is the last), leaving ``values`` as they are.

    Quickselect with the median of three spread values as pivot, and a partition without
    branches: each value is written to both a "below" and an "above" buffer, and each buffer's
    length grows by the comparison's outcome. A branch per value mispredicts half the time on
    unordered data, which made numba's ``np.partition`` 2-4x slower on a leaf's residuals. Values
    equal to the pivot are counted, not copied, so many equal values end the search early.
    """
    n = values.shape[0]
    src = values
    below = np.empty(n)
    above = np.empty(n)
    free = np.empty(n)  # the buffer the first round's side replaces: ``values`` is never written
    m = n
    next_above = np.inf  # the smallest value above the range searched (rank k + 1 if none in it)
    for _ in range(_SELECT_ROUNDS):
        if m <= _SELECT_SORTED:
            break
        a, b, c = src[m // 4], src[m // 2], src[(3 * m) // 4]
        pivot = max(min(a, b), min(max(a, b), c))
        n_below = 0
        n_above = 0
        for i in range(m):
            v = src[i]
            below[n_below] = v
            n_below += v < pivot
            above[n_above] = v
            n_above += v > pivot
        if n_below <= k < m - n_above:  # rank k is the pivot
            if k + 1 < m - n_above:
                return pivot, pivot
            following = next_above
            for i in range(n_above):
                following = min(following, above[i])
            return pivot, following
        done = free if m == n else src
        if k < n_below:
            next_above = min(next_above, pivot)
            src, below, m = below, done, n_below
        else:
            k -= m - n_above
            src, above, m = above, done, n_above
    rest = np.sort(src[:m])
    return rest[k], rest[k + 1] if k + 1 < m else next_above


@njit(cache=True, nogil=True)
def _unit_weight_quantile(values, target):
    """:func:`weighted_quantile` when every weight is 1, by selection instead of a sort.

    The running weight after the j-th smallest value is then the integer j + 1, exact in
    floating point, so the value the sorted scan stops at is known beforehand: the
    floor(target)-th smallest, or, when the target is a whole number m, the midpoint of the
    (m - 1)-th and m-th smallest (:func:`_select_pair` finds them in linear expected time).
    """
    m = np.int64(np.floor(target))
    n = values.shape[0]
    if m >= n:  # alpha n rounded up to n: the scan reaches the target at the largest value
        return _select_pair(values, n - 1)[0]
    if m == target and m >= 1:
        low, high = _select_pair(values, m - 1)
        return 0.5 * (low + high)
    return _select_pair(values, m)[0]


@njit(cache=True, nogil=True, parallel=True)
def _leaf_quantiles(alpha, percentage, label, raw, weight, rows, leaf_start, leaf_end, out):
    """``out[j]``: the weighted quantile of the residuals ``y - F`` of leaf ``j``'s rows."""
    for j in prange(leaf_start.shape[0]):
        n = leaf_end[j] - leaf_start[j]
        residual = np.empty(n)
        w = np.empty(n)
        for k in range(n):
            row = rows[leaf_start[j] + k]
            residual[k] = label[row] - raw[row]
            w[k] = weight[row] / max(1.0, abs(label[row])) if percentage else weight[row]
        out[j] = weighted_quantile(residual, w, alpha)


class _PiecewiseLinear(Objective):
    """Shared gradients, start and leaf refit; subclasses set the level and the weighting."""

    hessian_exact = False
    renews_leaves = True
    percentage = False

    @property
    def _level(self) -> float:
        """The quantile level the loss's minimiser is at."""
        return 0.5

    def _gradient_steps(self) -> tuple[float, float, float]:
        """g where F > y, F < y and F = y (before the division by max(1, |y|))."""
        return 1.0, -1.0, 0.0

    def init_score(self, label, weight):
        """The weighted quantile of the labels (weights times 1 / max(1, |y|) for MAPE)."""
        w = np.ones_like(label) if weight is None else weight
        if self.percentage:
            w = w / np.maximum(1.0, np.abs(label))
        if not w.sum() > 0.0:
            raise DataError("weight sums to zero: no row carries any weight")
        return float(weighted_quantile(label, w, self._level))

    def grad_hess(self, label, raw, out_grad, out_hess):
        """Signs of F - y scaled as the loss says; h = 1."""
        _piecewise_linear_grad_hess(*self._gradient_steps(), self.percentage, label, raw, out_grad, out_hess)

    def renew_leaf_values(self, label, raw, weight, rows, leaf_start, leaf_end):
        """Each leaf's weighted quantile of its rows' residuals (the loss's minimiser there)."""
        out = np.empty(leaf_start.shape[0])
        _leaf_quantiles(self._level, self.percentage, label, raw, weight, rows, leaf_start, leaf_end, out)
        return out


@register
class Quantile(_PiecewiseLinear):
    """Quantile regression: predicts the conditional alpha-quantile (the raw score).

    Parameters
    ----------
    alpha : float
        The quantile level, in (0, 1) (the ``alpha`` parameter, alias ``quantile_alpha``).
    """

    name = "quantile"
    aliases = ("reg:quantileerror",)
    default_metric = "quantile"
    options = ("alpha",)

    def __init__(self, alpha: float = 0.9) -> None:
        if not 0.0 < alpha < 1.0:
            raise ParameterError(f"objective 'quantile' needs alpha in (0, 1), got {alpha}")
        self.alpha = float(alpha)

    @property
    def _level(self) -> float:
        return self.alpha

    def _gradient_steps(self) -> tuple[float, float, float]:
        return 1.0 - self.alpha, -self.alpha, 1.0 - self.alpha

    def loss(self, label, raw):
        """alpha r for r = y - F >= 0, (alpha - 1) r below."""
        r = label - raw
        return np.where(r >= 0.0, self.alpha * r, (self.alpha - 1.0) * r)


@register
class AbsoluteError(_PiecewiseLinear):
    """Absolute error (L1) regression: predicts the conditional median (the raw score)."""

    name = "regression_l1"
    aliases = ("l1", "mae", "mean_absolute_error", "reg:absoluteerror")
    default_metric = "mae"

    def loss(self, label, raw):
        """|y - F|."""
        return np.abs(label - raw)


@register
class AbsolutePercentageError(_PiecewiseLinear):
    """Mean absolute percentage error regression (LightGBM's ``mape``); predicts the raw score."""

    name = "mape"
    aliases = ("mean_absolute_percentage_error",)
    default_metric = "mape"
    percentage = True

    def loss(self, label, raw):
        """|y - F| / max(1, |y|)."""
        return np.abs(label - raw) / np.maximum(1.0, np.abs(label))
