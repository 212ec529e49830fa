"""Learning to rank: LambdaMART (``lambdarank``) and RankNet (``rank_pairwise``) (docs/concepts/ranking.md).

Within each query, for every pair (i, j) with rel_i > rel_j of which at least one document is
ranked above the truncation level under the current scores:

    rho_ij = 1 / (1 + exp(sigma (s_i - s_j))),  lambda_ij = sigma w_ij rho_ij
    g_i -= lambda_ij,  g_j += lambda_ij,  h_i, h_j += sigma^2 w_ij rho_ij (1 - rho_ij)

with ``w_ij = |delta NDCG@k|`` when i and j swap places (gain ``label_gain[rel]``, default
2^rel - 1, the table the ``ndcg`` metric uses: :func:`smartboost.metrics.label_gains`; discount
1 / log2(2 + position), over the query's ideal DCG@k) for ``lambdarank``, and ``w_ij = 1`` for
``rank_pairwise``. With ``lambdarank_norm`` each query's lambdas and hessians are scaled by
log2(1 + S) / S, S the sum of 2 |lambda_ij| (LightGBM's normalisation). Queries whose labels are
all equal contribute nothing. Also as LightGBM does under ``lambdarank_norm``, |delta NDCG| is
divided by 0.01 + |s_i - s_j| once the query's scores differ. The kernel is parallel over
queries and ranks each query's documents once per iteration (ties in row order), starting
from the last iteration's ranking.

Loss-proportional sampling (``sampling="loss"``, SMART's WEB30K baseline) draws documents by
their share of the pairwise loss ``sum_pairs w_ij log(1 + exp(-sigma (s_high - s_low)))``
(:func:`pairwise_document_loss`: half of each pair's loss to each of its documents), and whole
queries (``sampling_unit="query"``) by the query's loss.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numba import njit, prange

from .._kernels.exp import exp
from .._kernels.metrics import inverse_ideal_dcg, longest_query_discounts
from ..errors import DataError, ParameterError
from ..metrics import check_relevance, label_gains
from .base import Objective, register


_SMALLEST_RATIO_TERM = 1e-280
"""Below this, ``exp(sigma (s_j - s_top))`` is too close to underflow for the ratio form of rho."""


_SORT_SHIFTS_PER_DOCUMENT = 16
"""Insertion sort from the last ranking gives up (for a merge sort) past this many moves per document."""


@njit(cache=True, nogil=True)
def rank_by_score(score, order):
    """Put ``order`` (a permutation of ``range(len(score))``) in ranked order: decreasing
    ``score``, ties by increasing index (the stable sort of ``-score``).

    Insertion sort from ``order`` as given, which is last iteration's ranking: one tree moves
    few documents, so this costs about O(n), well below a merge sort of every query. Past 16
    moves per document it falls back to the merge sort, so a reshuffled query costs at most that
    much more.
    """
    n = order.shape[0]
    budget = _SORT_SHIFTS_PER_DOCUMENT * n
    for i in range(1, n):
        k = order[i]
        v = score[k]
        j = i - 1
        while j >= 0 and (score[order[j]] < v or (score[order[j]] == v and order[j] > k)):
            order[j + 1] = order[j]
            j -= 1
        order[j + 1] = k
        budget -= i - 1 - j
        if budget < 0:
            order[:] = np.argsort(-score, kind="mergesort")
            return


@njit(cache=True, nogil=True, inline="always")
def _pair_weight(g_i, g_j, d_i, d_j, r_i, r_j, inverse_ideal, ndcg_weighted):
    """``w_ij``: |delta NDCG@k| of swapping i and j (``lambdarank``), or 1 (``rank_pairwise``);
    0 for equal grades either way (the pair then changes no sum)."""
    if ndcg_weighted:
        return abs(g_i - g_j) * (d_i - d_j) * inverse_ideal
    return 1.0 if r_i != r_j else 0.0


@njit(cache=True, nogil=True, fastmath={"reassoc"}, error_model="numpy")
def _ratio_form_pairs(pi, stop, s, rel, gain, e, discounts, lam, hess, sigma, inv_ideal, ndcg_weighted, damped):
    """Pairs ``(pi, pj)``, ``pi < pj < stop``, in the ratio form ``rho = e_low / (e_low + e_high)``
    (``1 - rho = e_high / (...)``): one division per pair. Adds each pair's terms to document
    ``pj``'s lambda and hessian and returns document ``pi``'s sums ``(lambda, hessian, steps)``.

    An unsigned index (numba wraps negative indices, and with ``range(pi + 1, ...)`` LLVM cannot
    tell the index is not negative) and reassociation allowed in this function only (``fastmath``:
    the three sums, and LLVM may regroup a pair's products; the order is fixed by the compiled
    code, not by the thread count) let LLVM vectorise the loop, 4 pairs at a time, with no
    arrays of per-pair terms to write and sum again.
    """
    e_i, r_i, g_i, d_i, s_i = e[pi], rel[pi], gain[pi], discounts[pi], s[pi]
    lam_i = 0.0
    hess_i = 0.0
    step_sum = 0.0
    for k in range(stop - pi - 1):
        pj = np.uint64(pi + 1 + k)
        i_high = r_i > rel[pj]
        e_high = e_i if i_high else e[pj]
        e_low = e[pj] if i_high else e_i
        damping = 0.01 + abs(s_i - s[pj]) if damped else 1.0
        inverse = 1.0 / ((e_low + e_high) * damping)
        step = sigma * _pair_weight(g_i, gain[pj], d_i, discounts[pj], r_i, rel[pj], inv_ideal,
                                    ndcg_weighted) * e_low * inverse
        curvature = step * sigma * e_high * inverse * damping
        signed = -step if i_high else step  # the higher grade's lambda falls by step
        lam[pj] -= signed
        hess[pj] += curvature
        lam_i += signed
        hess_i += curvature
        step_sum += step
    return lam_i, hess_i, step_sum


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def pairwise_lambdas(label, score, query_starts, inverse_ideal, gain_table, sigma, truncation, ndcg_weighted,
                     normalise, ranking, out_grad, out_hess):
    """LambdaMART / RankNet gradients and hessians of every row (see the module docstring).

    ``ranking`` holds each query's ranking of the last call (indices within the query), the
    starting point of :func:`rank_by_score`, and receives this call's.

    Each query is gathered once in ranked order into small contiguous arrays (scores, labels,
    gains, lambdas), so the pair loop reads only those instead of indexing the rows through
    the ranking.

    ``rho_ij`` comes from one exponential per document, ``e_p = exp(sigma (s_p - s_top))``,
    as ``e_j / (e_i + e_j)``, and the damping joins the same division: one division and no
    exponential per pair. The per-document loop uses the vectorised ``_kernels.exp.exp``
    (within 1 ulp of libm's; lambdas within 6e-11 relative of libm's).

    The pair loop has no branch on the grades: a pair of equal grades is computed with weight 0
    (its step and curvature are 0 and change no sum). The documents whose ``e`` is safe for the
    ratio form are a prefix of the ranking, so the pairs split into a vectorised loop
    (:func:`_ratio_form_pairs`) and a scalar loop for the rest; the vectorised loop keeps the
    sums itself. Each query's ranking starts from the last call's (:func:`rank_by_score`),
    which consecutive iterations barely change.
    """
    n_queries = query_starts.shape[0] - 1
    discounts = longest_query_discounts(query_starts)
    for q in prange(n_queries):
        start, end = query_starts[q], query_starts[q + 1]
        n = end - start
        if ndcg_weighted and inverse_ideal[q] == 0.0:  # no relevant document: no lambdas
            for i in range(start, end):
                out_grad[i] = 0.0
                out_hess[i] = 0.0
            continue
        order = ranking[start:end]
        rank_by_score(score[start:end], order)
        work = np.empty((6, n))  # one allocation for the query's arrays (rows are contiguous)
        s, rel, gain, lam, hess, e = work[0], work[1], work[2], work[3], work[4], work[5]
        for p in range(n):
            s[p] = score[start + order[p]]
            rel[p] = label[start + order[p]]
            gain[p] = gain_table[int(rel[p])]
            lam[p] = 0.0
            hess[p] = 0.0
        top = s[0]
        for p in range(n):  # in (0, 1], non-increasing: exp(sigma (s_i - s_j)) = e_i / e_j
            e[np.uint64(p)] = exp(sigma * (s[np.uint64(p)] - top))
        n_ratio = n  # documents whose e is safe for the ratio form of rho: a prefix
        while n_ratio > 0 and not e[n_ratio - 1] > _SMALLEST_RATIO_TERM:
            n_ratio -= 1
        damped = ndcg_weighted and normalise and s[0] != s[n - 1]  # LightGBM: damp pairs far apart
        inv_ideal = inverse_ideal[q]
        total = 0.0
        for pi in range(min(truncation, n)):
            r_i, g_i, d_i, s_i = rel[pi], gain[pi], discounts[pi], s[pi]
            stop = max(pi + 1, n_ratio)
            lam_i, hess_i, step_sum = _ratio_form_pairs(pi, stop, s, rel, gain, e, discounts, lam, hess, sigma,
                                                        inv_ideal, ndcg_weighted, damped)
            lam_i += lam[pi]  # document pi's sums stay in registers through its remaining pairs
            hess_i += hess[pi]
            total += 2.0 * step_sum
            # e underflows far below the query's top score: the plain formula
            for pj in range(stop, n):
                i_high = r_i > rel[pj]
                damping = 0.01 + abs(s_i - s[pj]) if damped else 1.0
                s_high, s_low = (s_i, s[pj]) if i_high else (s[pj], s_i)
                rho = 1.0 / (1.0 + math.exp(sigma * (s_high - s_low)))
                step = sigma * _pair_weight(g_i, gain[pj], d_i, discounts[pj], r_i, rel[pj], inv_ideal,
                                            ndcg_weighted) / damping * rho
                curvature = step * sigma * (1.0 - rho)
                signed = -step if i_high else step
                lam_i += signed
                lam[pj] -= signed
                hess_i += curvature
                hess[pj] += curvature
                total += 2.0 * step
            lam[pi] = lam_i
            hess[pi] = hess_i
        factor = math.log2(1.0 + total) / total if normalise and total > 0.0 else 1.0
        for p in range(n):
            out_grad[start + order[p]] = lam[p] * factor
            out_hess[start + order[p]] = hess[p] * factor


@njit(cache=True, nogil=True)
def _log1p_exp_neg(x):
    """``log(1 + exp(-x))`` without overflow."""
    return math.log1p(math.exp(-x)) if x > 0.0 else -x + math.log1p(math.exp(x))


@njit(cache=True, nogil=True, parallel=True)
def pairwise_document_loss(label, score, query_starts, inverse_ideal, gain_table, sigma, truncation, ndcg_weighted,
                           out):
    """Each document's share of the pairwise loss: the pairs of ``pairwise_lambdas`` (one
    document in the top ``truncation`` of the ranking by ``score``), each pair's loss
    ``w_ij log(1 + exp(-sigma (s_high - s_low)))`` split evenly between its two documents, so
    that a query's shares add up to its loss (SMART 2.3's loss, without LightGBM's damping)."""
    n_queries = query_starts.shape[0] - 1
    discounts = longest_query_discounts(query_starts)
    for q in prange(n_queries):
        start, end = query_starts[q], query_starts[q + 1]
        for i in range(start, end):
            out[i] = 0.0
        if ndcg_weighted and inverse_ideal[q] == 0.0:
            continue
        order = np.argsort(-score[start:end], kind="mergesort") + start
        n = end - start
        for pi in range(min(truncation, n)):
            i = order[pi]
            for pj in range(pi + 1, n):
                j = order[pj]
                if label[i] == label[j]:
                    continue
                w = _pair_weight(gain_table[int(label[i])], gain_table[int(label[j])], discounts[pi], discounts[pj],
                                 label[i], label[j], inverse_ideal[q], ndcg_weighted)
                margin = score[i] - score[j] if label[i] > label[j] else score[j] - score[i]
                half = 0.5 * w * _log1p_exp_neg(sigma * margin)
                out[i] += half
                out[j] += half


class _PairwiseRanking(Objective):
    """Shared plumbing of the pairwise ranking objectives: queries, labels, options."""

    has_row_loss = False
    task = "ranking"
    row_wise = False
    ndcg_weighted: bool
    options = ("sigmoid", "lambdarank_truncation_level", "lambdarank_norm", "label_gain")

    def __init__(self, sigmoid: float = 1.0, lambdarank_truncation_level: int = 30,
                 lambdarank_norm: bool = True, label_gain: Sequence[float] | str | None = None) -> None:
        if not sigmoid > 0.0:
            raise ParameterError(f"sigmoid must be > 0, got {sigmoid}")
        self.sigmoid = float(sigmoid)
        self.lambdarank_truncation_level = int(lambdarank_truncation_level)
        self.lambdarank_norm = bool(lambdarank_norm)
        self._gains = label_gains(label_gain)
        # as given (None: the default table), so model files store only a user's table
        self.label_gain = None if label_gain is None else tuple(float(v) for v in self._gains)
        self.query_starts: np.ndarray | None = None

    def check_label(self, label, name="label", training=True):
        """Relevance grades: integers indexing the gain table (0-31 by default)."""
        return check_relevance(label, self._gains, name)

    def bind(self, label: np.ndarray, query_starts: np.ndarray | None) -> None:
        """Remember the training queries (and their ideal DCGs) for :meth:`grad_hess`."""
        if query_starts is None:
            raise DataError(f"objective '{self.name}' needs queries: build the training Dataset with group= or qid=")
        self.query_starts = query_starts
        self._inverse_ideal = inverse_ideal_dcg(label, query_starts, self.lambdarank_truncation_level,
                                               self._gains)
        # each query's ranking at the last call (row order at first): where the next sort starts
        self._ranking = np.arange(label.shape[0], dtype=np.int32) - np.repeat(
            query_starts[:-1], np.diff(query_starts)).astype(np.int32)

    def init_score(self, label, weight):
        """0: rankings do not change with a constant."""
        return 0.0

    def grad_hess(self, label, raw, out_grad, out_hess):
        """Pairwise lambdas of every query."""
        pairwise_lambdas(label, raw, self.query_starts, self._inverse_ideal, self._gains, self.sigmoid,
                         self.lambdarank_truncation_level, self.ndcg_weighted, self.lambdarank_norm,
                         self._ranking, out_grad, out_hess)

    def loss(self, label, raw):
        """No per-row loss: the loss of a ranking couples the documents of a query."""
        raise ParameterError(f"objective '{self.name}' has no per-row loss (line searches need one)")

    def sampling_loss(self, label, raw):
        """Each document's share of its query's pairwise loss (:func:`pairwise_document_loss`)."""
        out = np.empty(label.shape[0])
        pairwise_document_loss(label, raw, self.query_starts, self._inverse_ideal, self._gains, self.sigmoid,
                               self.lambdarank_truncation_level, self.ndcg_weighted, out)
        return out


@register
class LambdaRank(_PairwiseRanking):
    """LambdaMART: pairwise logistic lambdas weighted by |delta NDCG@k| (k = truncation level)."""

    name = "lambdarank"
    aliases = ("rank:ndcg", "lambdamart")
    default_metric = "ndcg@10"
    ndcg_weighted = True


@register
class RankPairwise(_PairwiseRanking):
    """RankNet: pairwise logistic lambdas without NDCG weighting (the baseline)."""

    name = "rank_pairwise"
    aliases = ("rank:pairwise", "ranknet")
    default_metric = "ndcg@10"
    ndcg_weighted = False
