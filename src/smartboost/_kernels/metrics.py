"""Metric kernels that numpy cannot express in a few vector operations."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def roc_auc(label, score, weight):
    """Weighted area under the ROC curve; tied scores count one half.

    AUC = sum over (positive i, negative j) of w_i w_j ([s_i > s_j] + [s_i = s_j] / 2), divided
    by (sum of positive weights)(sum of negative weights): one sort, then one pass over groups
    of equal scores. NaN when one class has no weight.

    Parameters
    ----------
    label : ndarray of float64
        1 for positive rows, anything else negative.
    score : ndarray of float64
        Any score increasing with P(positive).
    weight : ndarray of float64
        Row weights.
    """
    order = np.argsort(score)
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
