"""Metric kernels that numpy cannot express in a few vector operations."""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def roc_auc(label, score, weight, order):
    """Weighted area under the ROC curve; tied scores count one half.

    AUC = sum over (positive i, negative j) of w_i w_j ([s_i > s_j] + [s_i = s_j] / 2), divided
    by (sum of positive weights)(sum of negative weights): one pass, in increasing score, over
    groups of equal scores. NaN when one class has no weight.

    Parameters
    ----------
    label : ndarray of float64
        1 for positive rows, anything else negative.
    score : ndarray of float64
        Any score increasing with P(positive).
    weight : ndarray of float64
        Row weights.
    order : ndarray of int
        ``np.argsort(score)``, sorted by numpy outside the kernel (numpy's sort is several times
        faster than numba's ``np.argsort``).
    """
    n = order.shape[0]
    area = 0.0
    negative_below = 0.0
    positive_total = 0.0
    i = 0
    while i < n:
        s = score[order[i]]
        positive = 0.0
        negative = 0.0
        while i < n and score[order[i]] == s:
            r = order[i]
            if label[r] == 1.0:
                positive += weight[r]
            else:
                negative += weight[r]
            i += 1
        area += positive * (negative_below + 0.5 * negative)
        negative_below += negative
        positive_total += positive
    if positive_total == 0.0 or negative_below == 0.0:
        return np.nan
    return area / (positive_total * negative_below)


@njit(cache=True, nogil=True)
def dcg_discounts(n):
    """``1 / log2(2 + position)`` for positions ``0 .. n-1`` (position 0 is the top)."""
    out = np.empty(n)
    for p in range(n):
        out[p] = 1.0 / np.log2(2.0 + p)
    return out


@njit(cache=True, nogil=True)
def longest_query_discounts(query_starts):
    """:func:`dcg_discounts` for the longest query of ``query_starts``."""
    longest = 1
    for q in range(query_starts.shape[0] - 1):
        longest = max(longest, query_starts[q + 1] - query_starts[q])
    return dcg_discounts(longest)


@njit(cache=True, nogil=True)
def query_dcg(gains, order, k, discounts):
    """DCG@k of one query's ``gains`` ranked in ``order`` (indices, best first)."""
    total = 0.0
    for p in range(min(k, order.shape[0])):
        total += gains[order[p]] * discounts[p]
    return total


@njit(cache=True, nogil=True, parallel=True)
def inverse_ideal_dcg(label, query_starts, k, gain_table):
    """1 / ideal DCG@k of every query (0 when the query has no relevant document)."""
    n_queries = query_starts.shape[0] - 1
    discounts = longest_query_discounts(query_starts)
    out = np.zeros(n_queries)
    for q in prange(n_queries):
        start, end = query_starts[q], query_starts[q + 1]
        gains = np.empty(end - start)
        for i in range(end - start):
            gains[i] = gain_table[int(label[start + i])]
        ideal = query_dcg(gains, np.argsort(-gains, kind="mergesort"), k, discounts)
        out[q] = 1.0 / ideal if ideal > 0.0 else 0.0
    return out


@njit(cache=True, nogil=True, parallel=True)
def mean_ndcg(label, score, query_starts, k, gain_table):
    """Mean NDCG@k over queries (docs/concepts/ranking.md; docs in ``smartboost.metrics``).

    Documents are ranked by decreasing score, ties in row order (a stable sort); gain
    ``gain_table[label]``, discount ``1 / log2(2 + position)``; a query whose ideal DCG@k is 0
    (no relevant document) scores 1, as in LightGBM.
    """
    n_queries = query_starts.shape[0] - 1
    discounts = longest_query_discounts(query_starts)
    inverse_ideal = inverse_ideal_dcg(label, query_starts, k, gain_table)
    values = np.empty(n_queries)
    for q in prange(n_queries):
        start, end = query_starts[q], query_starts[q + 1]
        if inverse_ideal[q] == 0.0:
            values[q] = 1.0
            continue
        gains = np.empty(end - start)
        for i in range(end - start):
            gains[i] = gain_table[int(label[start + i])]
        values[q] = query_dcg(gains, np.argsort(-score[start:end], kind="mergesort"), k, discounts) * inverse_ideal[q]
    return values.mean()


@njit(cache=True, nogil=True, parallel=True)
def mean_average_precision(label, score, query_starts, k):
    """Mean AP@k over queries (docs in ``smartboost.metrics``; LightGBM's definition).

    Documents are ranked by decreasing score, ties in row order (a stable sort); a document is
    relevant when its label is > 0. AP@k of a query with R relevant documents is the sum, over
    the positions p < k holding a relevant document, of the precision of the top p + 1,
    divided by min(R, k); a query without any relevant document scores 1.
    """
    n_queries = query_starts.shape[0] - 1
    values = np.empty(n_queries)
    for q in prange(n_queries):
        start, end = query_starts[q], query_starts[q + 1]
        relevant = 0
        for i in range(start, end):
            relevant += label[i] > 0.0
        if relevant == 0:
            values[q] = 1.0
            continue
        order = np.argsort(-score[start:end], kind="mergesort")
        hits = 0
        total = 0.0
        for p in range(min(k, end - start)):
            if label[start + order[p]] > 0.0:
                hits += 1
                total += hits / (p + 1.0)
        values[q] = total / min(relevant, k)
    return values.mean()
