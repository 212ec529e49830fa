"""Split finding: the best (feature, bin, missing direction) of a node from its histogram.

For a candidate split with left sums (GL, HL) and right sums (GR, HR) of the node's
(G, H) (docs/concepts/boosting.md, "Histogram trees"):

    gain = 1/2 [T(GL)^2/(HL+l2) + T(GR)^2/(HR+l2) - T(G)^2/(H+l2)],  T(g) = sign(g) max(|g|-l1, 0)

and the split is valid when ``gain - min_gain_to_split`` is positive (above a 1e-12 relative
rounding guard), both sides hold at least ``min_sum_hessian_in_leaf`` and at least
``min_data_in_leaf`` rows by LightGBM's estimate (there is no count channel): each bin holds
``round(h_bin * node_rows / node_H)`` rows, the side a scan adds bins to counts its bins' rows,
the other side the node's other rows (:func:`_count_window`), so that both libraries accept the
same thresholds.

Missing values: each feature's last cell holds its missing rows. When the node has any, every
threshold is tried with them on the left and on the right, and the better direction is learned;
"all values left, missing right" is a candidate too. When it has none, missing values met at
prediction time follow the side with the larger hessian sum (scikit-learn's rule, by samples).

Categorical features (``cells.categorical``; docs/howto/categorical.md) are scanned by
:func:`scan_categorical`: one category against the rest when the node has at most
``max_cat_to_onehot`` categories holding rows, else LightGBM's many-vs-many partition (the
categories sorted by ``sum_g / (sum_h + cat_smooth)``, Fisher's result, and cut from either end).
Their missing-value bin, which also holds categories unseen in training, always goes right.

Monotone constraints (``cells.monotone``; docs/howto/constraints.md) are LightGBM's "basic"
method: a node's output, and its children's, are clamped to the node's bounds
(``NodeSums.lower``, ``upper``), a split is scored by the loss reduction of the clamped outputs,
and a split on a constrained feature is valid only when those outputs are ordered its way
(:func:`scan_bounded`). Nodes without bounds scan unconstrained features as without constraints.

Sign leaves (``weak_learner="sign"``, ``params.sign_leaves``): a leaf outputs ``-sign(G)``, so a
tree's correlation with the negative gradients is the sum of its leaves' ``|G|`` (AnyBoost's
criterion; RGBM's normalised stump), and a split's gain is ``|GL| + |GR| - |G|`` (see
:func:`_scan_sign`); the hessians then enter the validity tests only.

``params`` is a :class:`~smartboost._kernels.records.SplitParams`; a node's sums and the tree's
fixed-point units come as :class:`~smartboost._kernels.records.NodeSums` and ``Units``, and a
node's best split is returned as a :class:`~smartboost._kernels.records.Split`.

The scans compute in the tree's scale (``Units``): the sums as their integer counts times a
factor near 1, the parameters' absolute quantities divided by the units' powers of two
(:func:`in_units`, once per tree), so that their gains are the values' gains times a power of
two, exactly. On the values themselves a score ``GL^2 (HR+l2) / ...`` is of the order of the
cube of the weights' scale: uniform weights of about 1e-100 made it subnormal and changed the
trees, 1e-120 made it 0 (no split), 1e200 made it overflow.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import get_thread_id, njit, prange, types
from numba.extending import overload

from .._common import SCAN_FEATURE_CELLS, SCAN_PARALLEL_MIN_CELLS
from ._intrinsics import bits_float, float_bits
from .histogram import build_column_block
from .records import NO_LEFT_SET, Split, SplitParams, Units

_GAIN_EPS = 1e-12
"""A split must beat the parent's score by this relative margin: float rounding of a pure node
(every row the same g/h) would otherwise produce spurious splits with gain ~1e-16."""

_NO_GAIN = -np.inf


def _scan_kernel(**options):
    """``njit`` for the per-feature scans and what they call, compiled without numba's reference
    counting (``_nrt=False``).

    A tree runs them features x nodes times (7,000 times on a9a's 123 features and 31 leaves),
    each on arrays its caller owns; with reference counting, every array argument and every
    view (a row of ``scratch``, a feature's thresholds) costs an atomic increment and decrement,
    which came to 11% of a9a's training time. Such a function must not allocate, nor return or
    keep an array: they only read and write their callers' arrays and return numbers. A
    compiled function they call inherits the setting unless it sets ``_nrt=True`` itself, as
    :func:`scan_categorical`, which allocates, does.
    """
    return njit(cache=True, nogil=True, _nrt=False, **options)


@njit(cache=True, nogil=True)
def _threshold_l1(g, l1):
    if g > l1:
        return g - l1
    if g < -l1:
        return g + l1
    return 0.0


@njit(cache=True, nogil=True)
def leaf_score(g, h, l1, l2):
    """``T(g)^2 / (h + l2)``: twice the loss reduction of a leaf with sums (g, h)."""
    t = _threshold_l1(g, l1)
    return t * t / (h + l2)


_LARGEST = np.finfo(np.float64).max


@njit(cache=True, nogil=True)
def in_scale(value, exponent):
    """``value / 2**exponent``, at most the largest float: a parameter beyond it in a tree's
    scale outweighs every sum there as an infinite one would, without the NaN of ``inf * 0``
    in a score."""
    return min(math.ldexp(value, -exponent), _LARGEST)


@njit(cache=True, nogil=True)
def tree_units(g_exp, h_exp, weight_scale, lambda_l2):
    """The :class:`~smartboost._kernels.records.Units` of a tree whose fixed-point units are
    ``2**g_exp`` and ``2**h_exp`` (ints) and whose rows' weights are scaled by ``weight_scale``.

    Hessians are read in their unit unless ``lambda_l2`` is more than ``2**64`` of it; then in
    ``lambda_l2``'s own scale, where it is below ``2**64`` and they are smaller still (0 where it
    dwarfs them beyond the float range), so that ``H + lambda_l2`` stays below ``2**65``: the
    cross-multiplied scores, of the order of its cube, would overflow in the unit's scale."""
    scale = np.int64(h_exp)
    if lambda_l2 > 0.0:
        scale = max(scale, np.int64(math.frexp(lambda_l2)[1] - 64))
    return Units(weight_scale, math.ldexp(weight_scale, h_exp - scale), np.int64(g_exp), scale)


@njit(cache=True, nogil=True)
def gain_exponent(params, units):
    """The power of two between a tree's gains in its scale and in values: a Newton gain is of
    the form ``G^2 / H``, a sign leaves' gain ``|G|``."""
    return units.g_exp if params.sign_leaves != 0.0 else 2 * units.g_exp - units.h_exp


@njit(cache=True, nogil=True)
def in_units(params, units):
    """The :class:`~smartboost._kernels.records.SplitParams` ``params`` (values) in the scale of
    ``units``, as the split kernels take them: ``lambda_l1`` in gradients, ``lambda_l2``,
    ``min_sum_hessian_in_leaf`` and ``cat_l2`` in hessians, ``min_gain_to_split`` in gains
    (:func:`gain_exponent`); the counts as they are."""
    return SplitParams(in_scale(params.lambda_l1, units.g_exp), in_scale(params.lambda_l2, units.h_exp),
                       in_scale(params.min_gain_to_split, gain_exponent(params, units)),
                       in_scale(params.min_sum_hessian_in_leaf, units.h_exp), params.min_data_in_leaf,
                       params.max_cat_to_onehot, params.max_cat_threshold, params.cat_smooth,
                       in_scale(params.cat_l2, units.h_exp), params.min_data_per_group, params.sign_leaves)


@njit(cache=True, nogil=True)
def leaf_values(g_sums, h_sums, units, l1, l2, out):
    """Newton leaf values ``-T(G)/(H + l2)`` from fixed-point sums (docs/concepts/boosting.md,
    "Histogram trees"): computed in the scale of ``units`` (``l1``, ``l2`` in it:
    :func:`in_units`), written as values."""
    shift = units.g_exp - units.h_exp
    for i in range(g_sums.shape[0]):
        h = h_sums[i] * units.h + l2
        out[i] = math.ldexp(-_threshold_l1(g_sums[i] * units.g, l1) / h, shift) if h > 0.0 else 0.0


_LEAST_NORMAL = np.finfo(np.float64).tiny
"""The least positive normal float: a bound the comparison reads the same with subnormals
flushed to zero (a library loaded into the process may set the CPU's DAZ flag)."""


@njit(cache=True, nogil=True)
def least_child_hessian(min_h, l2):
    """The least hessian sum a child of a valid split may have: ``h >= least_child_hessian``
    on both sides is the whole validity test (``h >= min_h >= 0`` and ``h + l2 > 0``,
    ``l2 >= 0``): ``min_h`` when ``l2 > 0``, else at least the least positive normal float (a
    subnormal hessian sum counts as an empty child)."""
    return min_h if l2 > 0.0 else max(min_h, _LEAST_NORMAL)


@njit(cache=True, nogil=True)
def rows_per_hessian(h_total, n_rows):
    """LightGBM's count estimate (its ``cnt_factor``) of a node with hessian sum ``h_total`` and
    ``n_rows`` rows: a bin, or a category, with hessian sum ``h`` holds ``round(h *
    rows_per_hessian)`` rows, each rounded on its own. (LightGBM adds 2e-15 to the node's sum, an
    absolute amount: left out here, where the trees do not depend on the weights' scale.)"""
    return n_rows / h_total if h_total > 0.0 else 0.0


@_scan_kernel()
def _count_prefix(hist, first_cell, n_bins, unit, c_left):
    """``c_left[b]``: the estimated rows of bins ``0 .. b`` (``unit``: rows per fixed-point
    hessian unit, :func:`rows_per_hessian` times ``Units.h``), each bin's rounded on its own as
    LightGBM rounds them."""
    total = 0
    for b in range(n_bins):
        total += np.int64(hist[np.uint64(first_cell + b), 1] * unit + 0.5)
        c_left[np.uint64(b)] = total


@_scan_kernel()
def _node_counts(hist, first_cell, n_bins, unit, params, c_left):
    """:func:`_count_prefix` of a feature's value bins (``unit``: the node's rows per fixed-point
    hessian unit), for :func:`_count_window`; nothing without ``min_data_in_leaf``, where the
    window reads no count."""
    if params.min_data_in_leaf > 0.0:
        _count_prefix(hist, first_cell, n_bins, unit, c_left)


@_scan_kernel()
def _count_window(c_left, n_thresholds, n_rows, min_data, forward, right_extra):
    """``(lo, hi)``: the thresholds ``lo <= t <= hi`` (of ``0 .. n_thresholds - 1``, left: bins
    ``<= t``) that leave ``min_data`` estimated rows on both sides, by LightGBM's count: the
    side its scan adds bins to counts its bins (``c_left``: :func:`_count_prefix` of every value
    bin), the other side holds the node's other rows. Its scans add the right side's bins
    (from the top), and ``right_extra`` rows more (the missing cell's, when the scan sends them
    right from the top), except the scan that sends missing values right counting from the
    bottom (``forward``). The window is empty (``lo > hi``) when no threshold is valid."""
    if min_data <= 0.0:
        return np.int64(0), np.int64(n_thresholds - 1)
    values = c_left[np.uint64(c_left.shape[0] - 1)] + right_extra
    low, high = (min_data, n_rows - min_data) if forward else (values - (n_rows - min_data), values - min_data)
    # c_left does not decrease: the first t with c_left[t] >= low, the last with c_left[t] <= high
    a, b = np.int64(0), np.int64(n_thresholds)
    while a < b:
        mid = (a + b) >> 1
        if c_left[np.uint64(mid)] >= low:
            b = mid
        else:
            a = mid + 1
    lo = a
    a, b = np.int64(0), np.int64(n_thresholds)
    while a < b:
        mid = (a + b) >> 1
        if c_left[np.uint64(mid)] > high:
            b = mid
        else:
            a = mid + 1
    return lo, a - 1


@_scan_kernel()
def _missing_right_count(h_missing, unit, has_missing, from_top):
    """How :func:`_count_window` counts the scan that sends missing values right: ``(forward,
    right_extra)``. In a node with missing values, LightGBM's scan adds bins from the bottom
    (forward), unless the feature's most frequent bin is its first (``from_top``,
    ``binning.missing_right_from_top``): its histogram then leaves that bin out, and the scan
    starts from the node's rows less every other cell's, the missing one's included, which counts
    the right side, missing rows and all. Without missing values, the scan runs from the top."""
    if has_missing and from_top:
        return False, np.int64(h_missing * unit + 0.5)
    return has_missing, np.int64(0)


@njit(cache=True, nogil=True)
def leaf_output(g, h, l1, l2, lower, upper):
    """The Newton value ``-T(g)/(h + l2)`` of a leaf with sums ``(g, h)``, clamped to ``[lower,
    upper]`` (0 when ``h + l2`` is not positive); all in the tree's scale."""
    d = h + l2
    w = -_threshold_l1(g, l1) / d if d > 0.0 else 0.0
    return min(max(w, lower), upper)


@njit(cache=True, nogil=True)
def _bounded_score(g, h, l1, l2, lower, upper):
    """Twice the loss reduction of a leaf with sums ``(g, h)`` whose output ``w`` is clamped to
    ``[lower, upper]``: ``-(2 T(g) w + (h + l2) w^2)``, which is ``T(g)^2/(h + l2)`` when the
    bounds do not bind (LightGBM's ``GetLeafGainGivenOutput``)."""
    w = leaf_output(g, h, l1, l2, lower, upper)
    return -(2.0 * _threshold_l1(g, l1) * w + (h + l2) * w * w)


@njit(cache=True, nogil=True, inline="always")
def _children_score(g_left, h_left, g_total, h_total, least_h, l1, l2):
    """The children's score ``num / den`` of a threshold whose left sums are ``(g_left,
    h_left)``, and whether it is a valid split (``least_h``: :func:`least_child_hessian`).

    Without L1 (``l1 == 0``) the soft threshold ``T`` is left out: ``|g| |g| = g g``. The
    branch does not depend on the threshold, so LLVM takes it out of a vectorised loop."""
    h_right = h_total - h_left
    d_left = h_left + l2
    d_right = h_right + l2
    t_left = g_left
    t_right = g_total - g_left
    if l1 != 0.0:
        t_left = max(abs(t_left) - l1, 0.0)
        t_right = max(abs(t_right) - l1, 0.0)
    num = t_left * t_left * d_right + t_right * t_right * d_left
    den = d_left * d_right
    valid = (h_left >= least_h) & (h_right >= least_h)
    return num, den, valid


@_scan_kernel()
def _prefix_sums(hist, first_cell, n_bins, unit, counted, g_left, h_left, c_left):
    """One pass over a feature's value bins: ``g_left[b], h_left[b]``, the fixed-point sums of
    bins ``0 .. b``, and, when ``counted``, ``c_left[b]``, their estimated rows (:func:`_count_prefix`
    with ``unit``). Every scan of the feature in the node reads them: both missing directions
    (:func:`_threshold_scores` adds the missing cell) and the count window. Integers only: the
    conversion to values is left to the vectorised :func:`_threshold_scores`."""
    gl = np.int64(0)
    hl = np.int64(0)
    if counted:
        total = np.int64(0)
        for b in range(n_bins):
            cell = np.uint64(first_cell + b)
            h = hist[cell, 1]
            gl += hist[cell, 0]
            hl += h
            total += np.int64(h * unit + 0.5)
            i = np.uint64(b)
            g_left[i] = gl
            h_left[i] = hl
            c_left[i] = total
    else:
        for b in range(n_bins):
            cell = np.uint64(first_cell + b)
            gl += hist[cell, 0]
            hl += hist[cell, 1]
            g_left[np.uint64(b)] = gl
            h_left[np.uint64(b)] = hl


@_scan_kernel(error_model="numpy")
def _threshold_scores(g_left, h_left, g_extra, h_extra, g_unit, h_unit, g_total, h_total, least_h, l1, l2, lo, hi,
                      score):
    """``score[b]`` for ``lo <= b <= hi`` = the children's score ``num / den`` of threshold
    ``b`` (left sums ``(g_left[b] + g_extra) * g_unit``, ``(h_left[b] + h_extra) * h_unit``),
    -inf where the split is not valid; returns the largest (-inf when none is).

    The thresholds outside the count window are not scored: in a small node it leaves out
    most of them. No branch that depends on the threshold: the loop is vectorised (numpy's
    error model lets a division by zero give inf instead of raising; such thresholds are
    invalid). The largest is taken over the scores' bits as integers, a reduction that
    vectorises where a float maximum does not: a valid score is at least +0 (or +inf), whose
    bits order as the values do, and -inf's bits are negative."""
    top = float_bits(-np.inf)
    for b in range(lo, hi + 1):
        i = np.uint64(b)
        num, den, valid = _children_score((g_left[i] + g_extra) * g_unit, (h_left[i] + h_extra) * h_unit, g_total,
                                          h_total, least_h, l1, l2)
        value = num / den if valid else -np.inf
        score[i] = value
        top = max(top, float_bits(value))
    return bits_float(top)


_FEW_THRESHOLDS = 8
"""Features with at most this many thresholds (binary and other few-valued features) are
scanned in one pass (:func:`_scan_thresholds`): on so few thresholds the vectorised passes'
setup costs more than they save."""

_NEAR_BEST = 1e-12
"""Thresholds whose score (divided out) is within this relative margin of the largest one are
compared exactly, by cross-multiplication. The margin is far above the few units of rounding of
either form, so the result is that of comparing every threshold by cross-multiplication."""


@_scan_kernel()
def _near_best(score, lo, hi, cut):
    """How many of ``score[lo:hi + 1]`` are at least ``cut``, and the sum of their indices (the
    index itself when there is one). Two integer sums, no branch: the loop is vectorised."""
    count = 0
    index_sum = 0
    for b in range(lo, hi + 1):
        near = score[np.uint64(b)] >= cut
        count += near
        index_sum += b if near else 0
    return count, index_sum


@njit(cache=True, nogil=True, inline="always")
def _beats(num, den, best_num, best_den, ties):
    """Whether the score ``num / den`` beats ``best_num / best_den`` (denominators positive),
    compared by cross-multiplication; an exact tie beats it when ``ties``."""
    a = num * best_den
    b = best_num * den
    return a > b or (ties and a == b)


@_scan_kernel()
def _scan_thresholds(hist, first_cell, n_thresholds, candidates, g_extra, h_extra, g_total, h_total, g_unit,
                     h_unit, least_h, l1, l2, lo, hi, highest, scratch):
    """Best threshold with ``(g_extra, h_extra)`` (the missing cell, or nothing) on the left.

    Thresholds are ``0 .. n_thresholds - 1``, or only those of them listed in ``candidates``
    (sorted bins: RGBM's Type 1), whose scan still adds up the bins before each candidate but
    scores the candidates only. Returns ``(num, den, bin)``; the children's score is
    ``num / den`` (``bin`` is -1 when no threshold is valid).

    The winner is the threshold whose score ``T(GL)^2/DL + T(GR)^2/DR`` (``D = H + lambda_l2``),
    kept as the fraction ``num / den``, no other threshold beats by cross-multiplication,
    compared in order: of tied ones the lowest, or the ``highest``. Over every threshold this
    runs in passes over ``scratch`` (float64, shape ``(4, >= n_thresholds)``, its first two rows
    read as int64, holding the feature's :func:`_prefix_sums`, which the caller computes once for
    both missing directions): every score ``num / den`` in the count window ``lo .. hi`` and the
    largest in one vectorised loop, then the exact comparison of the thresholds near it only (``_NEAR_BEST``),
    skipped when a vectorised count (:func:`_near_best`) finds one alone there. Every pass
    indexes with unsigned integers (numba's negative-index wrap costs a compare and a select
    per access).

    The division-based score pass vectorises, where a pass comparing every threshold by
    cross-multiplication cannot; the exact comparison then runs on the few thresholds near the
    best only. The validity test is one hessian bound per side (:func:`least_child_hessian`),
    and the fixed-point sums are added up for the node's winning feature only
    (:func:`split_sums`), not for every feature's best.

    Features of at most ``_FEW_THRESHOLDS`` thresholds, and candidate lists, are scanned in one
    pass that compares each threshold in order by cross-multiplication, the same winner.
    """
    best_num = -1.0
    best_den = 1.0
    best_bin = -1
    if candidates is None and n_thresholds > _FEW_THRESHOLDS:
        g_left, h_left, score = scratch[0].view(np.int64), scratch[1].view(np.int64), scratch[2]
        if lo > hi:
            return best_num, best_den, best_bin
        cut = _threshold_scores(g_left, h_left, g_extra, h_extra, g_unit, h_unit, g_total, h_total, least_h, l1, l2,
                                lo, hi, score)
        if cut == -np.inf:
            return best_num, best_den, best_bin
        if cut < np.inf:
            cut -= abs(cut) * _NEAR_BEST
        count, index_sum = _near_best(score, lo, hi, cut)
        if count == 1:  # the only threshold near the largest score wins (its score > -inf: valid)
            best_num, best_den, _ = _children_score((g_left[index_sum] + g_extra) * g_unit,
                                                    (h_left[index_sum] + h_extra) * h_unit, g_total, h_total,
                                                    least_h, l1, l2)
            best_bin = index_sum
        else:
            for b in range(lo, hi + 1):
                if score[np.uint64(b)] >= cut:
                    num, den, valid = _children_score((g_left[b] + g_extra) * g_unit, (h_left[b] + h_extra) * h_unit,
                                                      g_total, h_total, least_h, l1, l2)
                    if valid and _beats(num, den, best_num, best_den, highest):
                        best_num, best_den, best_bin = num, den, b
        return best_num, best_den, best_bin
    gl = g_extra
    hl = h_extra
    b = 0
    for k in range(n_thresholds if candidates is None else candidates.shape[0]):
        candidate = k if candidates is None else candidates[k]
        if candidate >= n_thresholds:
            break
        while b <= candidate:
            cell = np.uint64(first_cell + b)
            gl += hist[cell, 0]
            hl += hist[cell, 1]
            b += 1
        num, den, valid = _children_score(gl * g_unit, hl * h_unit, g_total, h_total, least_h, l1, l2)
        if valid and lo <= candidate <= hi and _beats(num, den, best_num, best_den, highest):
            best_num, best_den, best_bin = num, den, candidate
    return best_num, best_den, best_bin


@_scan_kernel()
def _scan_sign(hist, first_cell, n_thresholds, candidates, g_extra, h_extra, g_total, h_total, g_unit, h_unit,
               least_h, lo, hi, highest):
    """Best threshold for sign leaves with ``(g_extra, h_extra)`` on the left: the largest
    ``|GL| + |GR|`` among valid thresholds (all, or those in ``candidates``), ties to the lowest
    or the ``highest``. Returns ``(score, bin)``, ``bin`` -1 when none is valid."""
    best = -1.0
    best_bin = -1
    gl = g_extra
    hl = h_extra
    b = 0
    if candidates is None:
        n_candidates = n_thresholds
    else:
        n_candidates = candidates.shape[0]
    for k in range(n_candidates):
        candidate = k
        if candidates is not None:
            candidate = candidates[k]
        if candidate >= n_thresholds:
            break
        while b <= candidate:
            gl += hist[first_cell + b, 0]
            hl += hist[first_cell + b, 1]
            b += 1
        g_left = gl * g_unit
        h_left = hl * h_unit
        score = abs(g_left) + abs(g_total - g_left)
        if h_left >= least_h and h_total - h_left >= least_h and lo <= candidate <= hi and \
                (score > best or (highest and score == best)):
            best, best_bin = score, candidate
    return best, best_bin


@_scan_kernel()
def _scan_feature_sign(hist, first_cell, n_bins, thresholds, g_total, h_total, g_unit, h_unit, least_h, c_left,
                       n_rows, min_data, min_gain_to_split, unit, from_top):
    """:func:`scan_feature` for sign leaves: gain ``|GL| + |GR| - |G|``, missing values tried on
    both sides as there."""
    g_missing = hist[first_cell + n_bins, 0]
    h_missing = hist[first_cell + n_bins, 1]
    has_missing = g_missing != 0 or h_missing != 0
    zero = np.int64(0)
    n_missing_right = n_bins if has_missing else n_bins - 1
    forward, extra = _missing_right_count(h_missing, unit, has_missing, from_top)
    lo, hi = _count_window(c_left, n_missing_right, n_rows, min_data, forward, extra)
    best, best_bin = _scan_sign(hist, first_cell, n_missing_right, thresholds, zero, zero, g_total, h_total, g_unit,
                                h_unit, least_h, lo, hi, not has_missing)
    missing_left = False
    if has_missing:
        lo, hi = _count_window(c_left, n_bins - 1, n_rows, min_data, np.bool_(False), zero)
        best_l, bin_l = _scan_sign(hist, first_cell, n_bins - 1, thresholds, g_missing, h_missing, g_total, h_total,
                                   g_unit, h_unit, least_h, lo, hi, np.bool_(True))
        if bin_l >= 0 and best_l >= best:
            best, best_bin, missing_left = best_l, bin_l, True
    if best_bin < 0:
        return _NO_GAIN, -1, False
    parent = abs(g_total)
    gain = best - parent
    if gain - min_gain_to_split <= _GAIN_EPS * parent:
        return _NO_GAIN, -1, False
    return gain, best_bin, missing_left


@_scan_kernel()
def scan_feature(hist, first_cell, n_bins, thresholds, sums, units, params, from_top, scratch):
    """Best split of one feature.

    Parameters
    ----------
    hist : ndarray of int64, shape (n_cells, 2)
        The node's histogram.
    first_cell, n_bins : int
        The feature's cells are ``first_cell .. first_cell + n_bins`` (the last is missing).
    thresholds : ndarray of int64 or None
        The only thresholds to try (sorted bins; RGBM's Type 1), or None for all of them.
    sums : NodeSums
        The node's fixed-point gradient and hessian sums and its rows (for the count estimate),
        and its output bounds (in the tree's scale).
    units : Units
        The tree's scale.
    params : SplitParams
        In the tree's scale (:func:`in_units`).
    from_top : bool
        Whether the scan sending missing values right counts from the top
        (:func:`_missing_right_count`).
    scratch : ndarray of float64, shape (4, >= n_bins)
        Work space.

    Returns
    -------
    gain : float
        -inf when the feature has no valid split.
    bin : int
        Rows with bin <= ``bin`` go left.
    missing_left : bool
        Whether missing values go left, when the node has any (else False: the winning
        feature's direction is set by :func:`split_sums`).

    Notes
    -----
    The hessian bound is one bound on each side's hessian sum; the estimated counts make a
    window of thresholds (:func:`_count_window`). With missing
    values, thresholds ``0 .. n_bins - 1`` are tried with them on the right (the last one is
    "all values left") and ``0 .. n_bins - 2`` with them on the left. Exact ties go where
    LightGBM sends them, so that both libraries pick the same thresholds: to the highest bin
    (LightGBM scans from the top), except among missing-right thresholds, where to the lowest
    (that scan runs upwards); between the two directions, to missing-left (scanned first). A
    tie is mostly a stretch of bins empty in the node: the choice moves where unseen values in
    the stretch go.
    """
    l1, l2 = params.lambda_l1, params.lambda_l2
    g_unit, h_unit = units.g, units.h
    g_total = sums.g * g_unit
    h_total = sums.h * h_unit
    least_h = least_child_hessian(params.min_sum_hessian_in_leaf, l2)
    c_left = scratch[3, :n_bins].view(np.int64)
    counted = params.min_data_in_leaf > 0.0
    unit = units.h * rows_per_hessian(h_total, sums.n_rows)
    _prefix_sums(hist, first_cell, n_bins, unit, counted, scratch[0].view(np.int64), scratch[1].view(np.int64),
                 c_left)
    if params.sign_leaves != 0.0:
        return _scan_feature_sign(hist, first_cell, n_bins, thresholds, g_total, h_total, g_unit, h_unit, least_h,
                                  c_left, sums.n_rows, params.min_data_in_leaf, params.min_gain_to_split, unit,
                                  from_top)
    g_missing = hist[first_cell + n_bins, 0]
    h_missing = hist[first_cell + n_bins, 1]
    has_missing = g_missing != 0 or h_missing != 0
    n_missing_right = n_bins if has_missing else n_bins - 1
    forward, extra = _missing_right_count(h_missing, unit, has_missing, from_top)
    lo, hi = _count_window(c_left, n_missing_right, sums.n_rows, params.min_data_in_leaf, forward, extra)
    # np.int64(0) and np.bool_(True), not 0 and True: a literal argument makes numba compile the
    # callee (and all it calls) once more, for the literal's own type
    zero = np.int64(0)
    num, den, best_bin = _scan_thresholds(
        hist, first_cell, n_missing_right, thresholds, zero, zero, g_total, h_total, g_unit,
        h_unit, least_h, l1, l2, lo, hi, not has_missing, scratch)
    missing_left = False
    if has_missing:
        lo, hi = _count_window(c_left, n_bins - 1, sums.n_rows, params.min_data_in_leaf, np.bool_(False), zero)
        num_l, den_l, bin_l = _scan_thresholds(
            hist, first_cell, n_bins - 1, thresholds, g_missing, h_missing, g_total, h_total, g_unit, h_unit, least_h,
            l1, l2, lo, hi, np.bool_(True), scratch)
        if bin_l >= 0 and _beats(num_l, den_l, num, den, True):
            num, den, best_bin, missing_left = num_l, den_l, bin_l, True
    if best_bin < 0:
        return _NO_GAIN, np.int64(-1), False
    parent_score = leaf_score(g_total, h_total, l1, l2)
    gain = 0.5 * (num / den - parent_score)
    if gain - params.min_gain_to_split <= _GAIN_EPS * parent_score:
        return _NO_GAIN, np.int64(-1), False
    return gain, np.int64(best_bin), missing_left


@_scan_kernel()
def _scan_bounded_thresholds(hist, first_cell, n_thresholds, candidates, g_extra, h_extra, g_total, h_total, g_unit,
                             h_unit, least_h, lo, hi, l1, l2, lower, upper, direction, highest):
    """:func:`_scan_thresholds` with the children's outputs clamped to ``[lower, upper]``: the
    best children's score (:func:`_bounded_score`) and its threshold (-1: none valid). With
    ``direction`` +1 (-1) the left output must not be above (below) the right one."""
    best = _NO_GAIN
    best_bin = -1
    gl = g_extra
    hl = h_extra
    b = 0
    n = n_thresholds if candidates is None else candidates.shape[0]
    for k in range(n):
        t = k if candidates is None else candidates[k]
        if t >= n_thresholds:
            break
        while b <= t:
            gl += hist[first_cell + b, 0]
            hl += hist[first_cell + b, 1]
            b += 1
        g_left, h_left = gl * g_unit, hl * h_unit
        g_right, h_right = g_total - g_left, h_total - h_left
        if h_left >= least_h and h_right >= least_h and lo <= t <= hi:
            w_left = leaf_output(g_left, h_left, l1, l2, lower, upper)
            w_right = leaf_output(g_right, h_right, l1, l2, lower, upper)
            if direction * (w_right - w_left) >= 0.0:
                score = _bounded_score(g_left, h_left, l1, l2, lower, upper) + \
                    _bounded_score(g_right, h_right, l1, l2, lower, upper)
                if score > best or (highest and score == best):
                    best, best_bin = score, t
    return best, best_bin


@_scan_kernel()
def scan_bounded(hist, first_cell, n_bins, thresholds, sums, units, params, direction, from_top, scratch):
    """:func:`scan_feature` in a node with output bounds or on a monotone feature
    (``direction`` -1, 0 or +1): the children's outputs are clamped to the node's bounds, the
    gain is the loss reduction of the clamped outputs against the node's own clamped output, and
    a split on a monotone feature must order its children's outputs its way. Missing values and
    ties are treated as in :func:`scan_feature` (exact comparisons of the scores)."""
    l1, l2 = params.lambda_l1, params.lambda_l2
    g_unit, h_unit = units.g, units.h
    g_total = sums.g * g_unit
    h_total = sums.h * h_unit
    lower, upper = sums.lower, sums.upper
    least_h = least_child_hessian(params.min_sum_hessian_in_leaf, l2)
    c_left = scratch[3, :n_bins].view(np.int64)
    unit = units.h * rows_per_hessian(h_total, sums.n_rows)
    _node_counts(hist, first_cell, n_bins, unit, params, c_left)
    g_missing = hist[first_cell + n_bins, 0]
    h_missing = hist[first_cell + n_bins, 1]
    has_missing = g_missing != 0 or h_missing != 0
    zero = np.int64(0)
    n_missing_right = n_bins if has_missing else n_bins - 1
    forward, extra = _missing_right_count(h_missing, unit, has_missing, from_top)
    lo, hi = _count_window(c_left, n_missing_right, sums.n_rows, params.min_data_in_leaf, forward, extra)
    score, best_bin = _scan_bounded_thresholds(
        hist, first_cell, n_missing_right, thresholds, zero, zero, g_total, h_total, g_unit, h_unit, least_h, lo, hi,
        l1, l2, lower, upper, direction, not has_missing)
    missing_left = False
    if has_missing:
        lo, hi = _count_window(c_left, n_bins - 1, sums.n_rows, params.min_data_in_leaf, np.bool_(False), zero)
        score_l, bin_l = _scan_bounded_thresholds(
            hist, first_cell, n_bins - 1, thresholds, g_missing, h_missing, g_total, h_total, g_unit, h_unit, least_h,
            lo, hi, l1, l2, lower, upper, direction, np.bool_(True))
        if bin_l >= 0 and score_l >= score:
            score, best_bin, missing_left = score_l, bin_l, True
    if best_bin < 0:
        return _NO_GAIN, np.int64(-1), False
    gain = _bounded_gain(score, g_total, h_total, l1, l2, lower, upper, params.min_gain_to_split)
    if gain == _NO_GAIN:
        return _NO_GAIN, np.int64(-1), False
    return gain, np.int64(best_bin), missing_left


@njit(cache=True, nogil=True)
def _bounded_gain(score, g_total, h_total, l1, l2, lower, upper, min_gain):
    """The gain of a split whose children score ``score`` (:func:`_bounded_score` summed) over
    the node's own bounded score, or ``_NO_GAIN`` when it does not clear ``min_gain`` (with
    the relative margin that keeps rounding noise from splitting)."""
    parent_score = _bounded_score(g_total, h_total, l1, l2, lower, upper)
    gain = 0.5 * (score - parent_score)
    if gain - min_gain <= _GAIN_EPS * abs(parent_score):
        return _NO_GAIN
    return gain


@_scan_kernel()
def _value_sums(hist, first_cell, n_bins, units, grad, hess):
    """``grad[b]``, ``hess[b]``: the value bins' sums of a feature, in the tree's scale; returns
    how many bins hold rows."""
    used = 0
    for b in range(n_bins):
        g = hist[first_cell + b, 0]
        h = hist[first_cell + b, 1]
        grad[b] = g * units.g
        hess[b] = h * units.h
        used += (g != 0) | (h != 0)
    return used


@njit(cache=True, nogil=True)
def _sorted_categories(grad, hess, n_bins, rows_per_h, params, units, keys):
    """The bins of a many-vs-many categorical split, in the order it cuts them: the bins holding
    rows and at least ``cat_smooth`` (estimated) rows, sorted by ``grad / (hess + cat_smooth)``
    (stable: ties in bin order), ``cat_smooth`` there a hessian in the scale of ``units``.
    ``keys`` is scratch."""
    smooth = in_scale(params.cat_smooth, units.h_exp)
    eligible = np.empty(n_bins, np.int64)
    m = 0
    for b in range(n_bins):
        if (grad[b] != 0.0 or hess[b] != 0.0) and np.int64(hess[b] * rows_per_h + 0.5) >= params.cat_smooth:
            eligible[m] = b
            keys[m] = grad[b] / (hess[b] + smooth)
            m += 1
    return eligible[np.argsort(keys[:m], kind="mergesort")]


# _nrt=True: it allocates, and a function numba compiles for a caller without reference
# counting (_scan_feature_kind) inherits the caller's setting unless it sets its own
@njit(cache=True, nogil=True, _nrt=True)
def scan_categorical(hist, first_cell, n_bins, sums, units, params, scratch):
    """Best split of a categorical feature.

    The missing-value bin (missing values, and categories unseen in training) always goes
    right. With at most ``max_cat_to_onehot`` bins holding rows in the node, each of them alone
    on the left is tried (one-vs-rest). Otherwise the categories of :func:`_sorted_categories`
    are cut after their first ``k + 1`` (``k < max_cat_threshold``, at most half of them), from
    the low end and from the high end, as LightGBM does: a cut is tried once at least
    ``min_data_per_group`` rows were added since the last one tried, the right side must keep
    ``min_data_per_group`` rows, and the children's score takes ``lambda_l2 + cat_l2``. Both
    sides must hold ``min_sum_hessian_in_leaf`` and ``min_data_in_leaf`` (as estimated); the
    children's outputs are clamped to the node's bounds (monotone constraints of ancestors).
    Ties go to the first cut tried (ascending bins, then the low end, then the high end).

    Returns
    -------
    gain : float
        -inf when no split is valid.
    k : int
        One-vs-rest: the bin on the left. Many-vs-many: the left side's categories less one.
    from_top : bool
        Many-vs-many: whether they are the high end of the sorted categories.
    """
    l1, l2 = params.lambda_l1, params.lambda_l2
    lower, upper = sums.lower, sums.upper
    g_total = sums.g * units.g
    h_total = sums.h * units.h
    least_h = least_child_hessian(params.min_sum_hessian_in_leaf, l2)
    rows_per_h = rows_per_hessian(h_total, sums.n_rows)
    n_rows, min_data = sums.n_rows, params.min_data_in_leaf
    grad, hess = scratch[0], scratch[1]
    used = _value_sums(hist, first_cell, n_bins, units, grad, hess)
    best = _NO_GAIN
    best_k = -1
    best_top = False
    if used <= params.max_cat_to_onehot:
        for b in range(n_bins):
            h_left = hess[b]
            count = np.int64(h_left * rows_per_h + 0.5)
            if h_left >= least_h and h_total - h_left >= least_h and count >= min_data and n_rows - count >= min_data:
                score = _bounded_score(grad[b], h_left, l1, l2, lower, upper) + \
                    _bounded_score(g_total - grad[b], h_total - h_left, l1, l2, lower, upper)
                if score > best:
                    best, best_k = score, b
    else:
        order = _sorted_categories(grad, hess, n_bins, rows_per_h, params, units, scratch[2])
        m = order.shape[0]
        l2_cat = l2 + params.cat_l2
        for from_top in (False, True):
            g_left = 0.0
            h_left = 0.0
            count = 0
            group = 0
            for k in range(min(m, int(params.max_cat_threshold), (m + 1) // 2)):
                b = order[m - 1 - k] if from_top else order[k]
                g_left += grad[b]
                h_left += hess[b]
                added = np.int64(hess[b] * rows_per_h + 0.5)
                count += added
                group += added
                if h_left < least_h or count < min_data:
                    continue
                h_right = h_total - h_left
                if n_rows - count < max(min_data, params.min_data_per_group) or h_right < least_h:
                    break
                if group < params.min_data_per_group:
                    continue
                group = 0
                score = _bounded_score(g_left, h_left, l1, l2_cat, lower, upper) + \
                    _bounded_score(g_total - g_left, h_right, l1, l2_cat, lower, upper)
                if score > best:
                    best, best_k, best_top = score, k, from_top
    if best_k < 0:
        return _NO_GAIN, np.int64(-1), False
    gain = _bounded_gain(best, g_total, h_total, l1, l2, lower, upper, params.min_gain_to_split)
    if gain == _NO_GAIN:
        return _NO_GAIN, np.int64(-1), False
    return gain, np.int64(best_k), best_top


@njit(cache=True, nogil=True)
def _categorical_split_sums(hist, first_cell, n_bins, k, from_top, sums, units, params, scratch):
    """The left bins of the categorical split :func:`scan_categorical` found (its ``k`` and
    ``from_top``), as a :class:`Split`'s ``left_set``, and the left child's fixed-point sums."""
    grad, hess = scratch[0], scratch[1]
    used = _value_sums(hist, first_cell, n_bins, units, grad, hess)
    if used <= params.max_cat_to_onehot:
        order = np.full(1, k, np.int64)
        count = 1
    else:
        rows_per_h = rows_per_hessian(sums.h * units.h, sums.n_rows)
        order = _sorted_categories(grad, hess, n_bins, rows_per_h, params, units, scratch[2])
        count = k + 1
    words = np.zeros(4, np.uint64)
    gl = 0
    hl = 0
    for i in range(count):
        b = order[order.shape[0] - 1 - i] if from_top else order[i]
        words[b >> 6] |= np.uint64(1) << np.uint64(b & 63)
        gl += hist[first_cell + b, 0]
        hl += hist[first_cell + b, 1]
    return (words[0], words[1], words[2], words[3]), gl, hl


@_scan_kernel()
def split_sums(hist, first_cell, n_bins, bin_threshold, missing_left, h_fixed):
    """The left child's fixed-point sums of a feature's split (bins <= ``bin_threshold`` left,
    and the missing cell when ``missing_left``), added up for the node's winning feature only.

    Returns ``(missing_left, gl_fixed, hl_fixed)``: the direction as scanned when the node has
    missing values; otherwise the side with the larger hessian sum, where missing values met at
    prediction time go.
    """
    g_missing = hist[first_cell + n_bins, 0]
    h_missing = hist[first_cell + n_bins, 1]
    gl = g_missing if missing_left else 0
    hl = h_missing if missing_left else 0
    for b in range(bin_threshold + 1):
        cell = np.uint64(first_cell + b)
        gl += hist[cell, 0]
        hl += hist[cell, 1]
    if g_missing == 0 and h_missing == 0:
        missing_left = 2 * hl >= h_fixed
    return missing_left, gl, hl


@_scan_kernel()
def _scan_feature_kind(hist, first_cell, n_bins, thresholds, f, sums, units, params, work, categorical, monotone,
                       from_top):
    """The scan that feature ``f`` takes: :func:`scan_categorical` (categorical; RGBM's
    thresholds only say whether it is a candidate), :func:`scan_bounded` (a monotone feature,
    or a node with output bounds) or :func:`scan_feature`. ``categorical``, ``monotone`` and
    ``from_top`` are the cells' fields, arguments so that numba compiles no code for them when
    they are None."""
    if categorical is not None:
        if categorical[f]:
            return scan_categorical(hist, first_cell, n_bins, sums, units, params, work)
    top = False if from_top is None else from_top[f]
    if monotone is not None:
        direction = monotone[f]
        if direction != 0 or sums.lower > -np.inf or sums.upper < np.inf:
            return scan_bounded(hist, first_cell, n_bins, thresholds, sums, units, params, direction, top, work)
    return scan_feature(hist, first_cell, n_bins, thresholds, sums, units, params, top, work)


@_scan_kernel()
def _scan(hist, cells, thresholds, f, sums, units, params, scratch):
    """The scan of feature ``f`` (:func:`_scan_feature_kind`) with its own thresholds (packed;
    None: all), on the calling thread's ``scratch``."""
    work = scratch[get_thread_id()]
    first_cell, n_bins = cells.offsets[f], cells.n_bins[f]
    if thresholds is None:
        return _scan_feature_kind(hist, first_cell, n_bins, None, f, sums, units, params, work, cells.categorical,
                                  cells.monotone, cells.from_top)
    return _scan_feature_kind(hist, first_cell, n_bins, thresholds[thresholds[f]:thresholds[f + 1]], f, sums, units,
                              params, work, cells.categorical, cells.monotone, cells.from_top)


def split_scratch(n_bins: np.ndarray) -> np.ndarray:
    """The ``scratch`` argument of :func:`find_best_split` and :func:`subtract_and_find_splits`:
    one :func:`scan_feature` work space per thread numba may run (their kernels index it by
    thread id; numba's ``get_num_threads`` inside a kernel would keep it out of the cache)."""
    return np.empty((numba.config.NUMBA_NUM_THREADS, 4, max(1, int(n_bins.max(initial=1)))))


@njit(cache=True, nogil=True)
def _no_splits(n_nodes, n_features):
    """Results of ``n_nodes`` nodes for ``n_features`` listed features before any scan: gains
    -inf; bins and directions uninitialised (:func:`_best_of` reads them only where a gain is
    above -inf).

    A separate (serial) kernel: in a parallel kernel ``np.full`` and ``np.zeros`` are parallel
    loops of their own, each a parallel region to start."""
    gains = np.empty((n_nodes, n_features))
    gains[:] = _NO_GAIN
    return gains, np.empty((n_nodes, n_features), np.int64), np.empty((n_nodes, n_features), np.bool_)


@njit(cache=True, nogil=True)
def _best_of(gains, bins, missing_left, features, hist, cells, sums, units, params, scratch):
    """The :class:`Split` of the best feature among the results of the listed ``features``
    (increasing; entry ``j`` is feature ``features[j]``'s, so ties go to the lowest feature
    index), with its missing direction and left sums (:func:`split_sums` on the node's
    ``hist``), or its left bins (a categorical feature)."""
    best = -1
    for j in range(gains.shape[0]):
        if gains[j] > _NO_GAIN and (best < 0 or gains[j] > gains[best]):
            best = j
    if best < 0:
        return Split(np.int32(-1), np.int32(-1), False, _NO_GAIN, np.int64(0), np.int64(0), NO_LEFT_SET)
    return _split_of(hist, cells, features[best], gains[best], bins[best], missing_left[best], sums, units, params,
                     scratch, cells.categorical)


@njit(cache=True, nogil=True)
def _split_of(hist, cells, f, gain, k, missing_left, sums, units, params, scratch, categorical):
    """The :class:`Split` of feature ``f``'s scan result (``categorical``: ``cells.categorical``,
    an argument so that numba compiles no categorical code without it)."""
    first, n_bins = cells.offsets[f], cells.n_bins[f]
    if categorical is not None:
        if categorical[f]:
            left_set, gl, hl = _categorical_split_sums(hist, first, n_bins, k, missing_left, sums, units, params,
                                                       scratch[get_thread_id()])
            return Split(np.int32(f), np.int32(0), False, gain, np.int64(gl), np.int64(hl), left_set)
    missing, gl, hl = split_sums(hist, first, n_bins, k, missing_left, sums.h)
    return Split(np.int32(f), np.int32(k), missing, gain, np.int64(gl), np.int64(hl), NO_LEFT_SET)


@njit(cache=True, nogil=True)
def scans_in_parallel(n_bins, features, n_nodes):
    """Whether the scans of ``features`` in ``n_nodes`` nodes are worth a parallel loop: their
    cells, each feature counted ``SCAN_FEATURE_CELLS`` more for its fixed cost, reach
    ``SCAN_PARALLEL_MIN_CELLS`` (docs/internals.md, "Splits")."""
    work = 0
    for j in range(features.shape[0]):
        work += n_bins[features[j]] + 1 + SCAN_FEATURE_CELLS
    return n_nodes * work >= SCAN_PARALLEL_MIN_CELLS


@_scan_kernel()
def _scan_into(j, features, hist, cells, candidates, sums, units, params, scratch, gains, bins, missing_left):
    """Scan the ``j``-th listed feature of a node into its results' entry ``j``."""
    gains[j], bins[j], missing_left[j] = _scan(hist, cells, candidates.thresholds, features[j], sums, units, params,
                                               scratch)


@njit(cache=True, nogil=True, parallel=True)
def _scan_all_parallel(features, hist, cells, candidates, sums, units, params, scratch, gains, bins, missing_left):
    """:func:`_scan_into` of every listed feature, over the threads."""
    for j in prange(features.shape[0]):
        # np.int64: the loop's own index type would compile the callee a second time, beside the serial loop's
        _scan_into(np.int64(j), features, hist, cells, candidates, sums, units, params, scratch, gains, bins,
                   missing_left)


@njit(cache=True, nogil=True)
def find_best_split(hist, cells, candidates, sums, units, params, scratch):
    """Best split of a node over the features it may split on.

    Parameters
    ----------
    hist : ndarray of int64, shape (n_cells, 2)
        The node's histogram.
    cells : Cells
        Its cell layout.
    candidates : Candidates
        The features (and, RGBM's Type 1, the thresholds) the node may split on.
    sums, units, params
        As :func:`scan_feature`.
    scratch : ndarray of float64
        :func:`split_scratch` of the features' bin counts.

    Returns
    -------
    Split
    """
    # results sized by the candidates, not by every feature: a wide sparse set has many that
    # cannot split
    features = np.flatnonzero(candidates.features)
    gains, bins, missing_left = _no_splits(np.int64(1), features.shape[0])
    gains, bins, missing_left = gains[0], bins[0], missing_left[0]
    if scans_in_parallel(cells.n_bins, features, 1):
        _scan_all_parallel(features, hist, cells, candidates, sums, units, params, scratch, gains, bins, missing_left)
    else:
        for j in range(features.shape[0]):
            _scan_into(j, features, hist, cells, candidates, sums, units, params, scratch, gains, bins, missing_left)
    return _best_of(gains, bins, missing_left, features, hist, cells, sums, units, params, scratch)


@_scan_kernel()
def _subtract_cells(parent, small, first, n_cells):
    """``parent[first:first + n_cells] -= small[...]``, both columns, over the flat arrays: a
    loop of a constant stride, which LLVM vectorises (indexed by cell and column, the row
    stride is only known at run time, and the loop took twice the time). Unsigned indices:
    numba's negative-index wrap would keep it scalar."""
    p = parent.reshape(-1)
    s = small.reshape(-1)
    for k in range(np.uint64(2 * first), np.uint64(2 * (first + n_cells))):
        p[k] -= s[k]


@_scan_kernel()
def _subtract_and_scan(item, features, parent, small, cells, small_candidates, small_sums, scan_small,
                       large_candidates, large_sums, scan_large, units, params, scratch, gains, bins, missing_left):
    """Item ``item`` of :func:`subtract_and_find_splits`: for the ``item // 2``-th listed
    feature, the smaller child's scan (even items), or the larger child's cells by subtraction
    and its scan (odd items)."""
    j = item >> 1
    f = features[j]
    first = cells.offsets[f]
    if item & 1:
        _subtract_cells(parent, small, first, cells.n_bins[f] + 1)
        if scan_large and large_candidates.features[f]:
            gains[1, j], bins[1, j], missing_left[1, j] = _scan(
                parent, cells, large_candidates.thresholds, f, large_sums, units, params, scratch)
    elif scan_small and small_candidates.features[f]:
        gains[0, j], bins[0, j], missing_left[0, j] = _scan(
            small, cells, small_candidates.thresholds, f, small_sums, units, params, scratch)


def _row_arrays(rows):
    """The arrays of ``rows`` a histogram is built from (rows, gh, then the layout's dense bins
    and offsets, sparse pointers and cells), out of the namedtuples, which numba cannot pass
    into a parallel loop; empty ones when ``rows`` is None (the rows are elsewhere).

    Which applies is decided by the type of ``rows`` when numba compiles the caller
    (:func:`_row_arrays_types`): a branch on ``rows is None`` is pruned only where ``rows`` is
    None, so with rows given it would unify the empty arrays with the layout's (one- or two-byte
    bins)."""


@overload(_row_arrays, jit_options={"cache": True, "nogil": True})
def _row_arrays_types(rows):
    """The implementation of :func:`_row_arrays` for the type of ``rows``."""
    if isinstance(rows, (types.NoneType, types.Omitted)):
        return lambda rows: (np.empty(0, np.uint32), np.empty((0, 2), np.int32), np.empty((0, 0), np.uint8),
                             np.empty(0, np.uint32), np.empty(1, np.int64), np.empty(0, np.uint32))
    return lambda rows: (rows.rows, rows.gh, rows.histogram.dense_bins, rows.histogram.dense_offsets,
                         rows.histogram.sparse_indptr, rows.histogram.sparse_cells)


@njit(cache=True, nogil=True, parallel=True)
def _subtract_and_scan_parallel(features, parent, small, cells, small_candidates, small_sums, scan_small,
                                large_candidates, large_sums, scan_large, units, params, scratch, gains, bins,
                                missing_left, rows, build, start, end, n_blocks):
    """:func:`_subtract_and_scan` of every item, over the threads (items, not features, so that
    a tree on a few features keeps every thread busy: a static schedule over features could give
    them all to one thread).

    With ``build`` (``rows`` given), the smaller child's histogram of ``rows.rows[start:end]`` is
    built in the same loop: each of ``n_blocks`` threads builds the cells of a block of the
    listed features (their columns, :func:`~smartboost._kernels.histogram.build_column_block`),
    then subtracts and scans those features, so that the cells it writes are the ones it reads,
    in its own core's cache. One kernel for both, so that numba compiles the scans into one
    parallel loop, not two (``rows`` None: compiled without the build)."""
    n = features.shape[0]
    n_tasks, step = 2 * n, 1  # task t: items t * step .. t * step + step - 1
    if build:
        n_tasks, step = n_blocks, 2 * ((n + n_blocks - 1) // n_blocks)
    row_list, gh, dense_bins, dense_offsets, sparse_indptr, sparse_cells = _row_arrays(rows)
    for task in prange(n_tasks):
        first_item = min(2 * n, task * step)
        stop_item = min(2 * n, first_item + step)
        if build and first_item < stop_item:  # the block's features: items come in pairs
            build_column_block(row_list, start, end, dense_bins, dense_offsets, sparse_indptr, sparse_cells, gh,
                               small, features[first_item // 2], features[stop_item // 2 - 1] + 1)
        for item in range(first_item, stop_item):
            # np.int64: as in _scan_all_parallel
            _subtract_and_scan(np.int64(item), features, parent, small, cells, small_candidates, small_sums,
                               scan_small, large_candidates, large_sums, scan_large, units, params, scratch, gains,
                               bins, missing_left)


@njit(cache=True, nogil=True)
def subtract_and_find_splits(parent, small, cells, built, small_candidates, small_sums, scan_small, large_candidates,
                             large_sums, scan_large, units, params, scratch, rows=None, build=False, start=0, end=0):
    """Derive the larger child by subtraction and find both children's best splits.

    One loop does the subtraction and both scans (docs/internals.md, "Splits"), over (feature,
    child) pairs of the built features, on every thread when :func:`scans_in_parallel` says
    the work pays for it, else on the calling thread. With ``build``, the same parallel loop
    builds the smaller child's histogram first, each thread the cells of the features it then
    scans (:func:`_subtract_and_scan_parallel`).

    Parameters
    ----------
    parent : ndarray of int64, shape (n_cells, 2)
        The parent's histogram; overwritten with the larger child's (in the ``built`` features'
        cells; the others are left as they are).
    small : ndarray of int64, shape (n_cells, 2)
        The smaller child's histogram (built directly), or where it is built (``rows`` given).
    cells : Cells
        The cell layout.
    built : ndarray of bool, shape (n_features,)
        Features whose histograms the tree builds (a superset of both children's candidates).
    small_candidates, large_candidates : Candidates
        What each child may split on.
    small_sums, large_sums : NodeSums
        Fixed-point sums and row counts of the smaller and the larger child.
    scan_small, scan_large : bool
        Whether to look for a split in each child.
    units, params, scratch
        As :func:`find_best_split`.
    rows : LocalRows or None
        This process's rows (None: they are elsewhere, and ``build`` must be False).
    build : bool
        Build the smaller child's histogram here from ``rows.rows[start:end]`` (``small`` is then
        only written): for a layout of dense columns only, one per feature, all of them given
        (``LocalRows.scan_build_rows``). False: ``small`` is built already.
    start, end : int
        The smaller child's slice of ``rows.rows`` (read with ``build`` only).

    Returns
    -------
    tuple of two Split
        The best split of the smaller and of the larger child.
    """
    features = np.flatnonzero(built)
    gains, bins, missing_left = _no_splits(np.int64(2), features.shape[0])
    if build or scans_in_parallel(cells.n_bins, features, 2):
        n_blocks = 1
        if rows is not None:
            n_blocks = rows.thread_hists.shape[0]
        _subtract_and_scan_parallel(features, parent, small, cells, small_candidates, small_sums, scan_small,
                                    large_candidates, large_sums, scan_large, units, params, scratch, gains, bins,
                                    missing_left, rows, build, start, end, n_blocks)
    else:
        for item in range(2 * features.shape[0]):
            _subtract_and_scan(item, features, parent, small, cells, small_candidates, small_sums, scan_small,
                               large_candidates, large_sums, scan_large, units, params, scratch, gains, bins,
                               missing_left)
    return (_best_of(gains[0], bins[0], missing_left[0], features, small, cells, small_sums, units, params, scratch),
            _best_of(gains[1], bins[1], missing_left[1], features, parent, cells, large_sums, units, params, scratch))
