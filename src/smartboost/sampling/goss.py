"""Gradient-based one-side sampling (GOSS, LightGBM; MVS paper 2.3).

The ``a N`` rows with the largest ``w |g|`` are kept with weight 1; ``b N`` of the others are
drawn uniformly without replacement and weighted ``(1 - a) / b``, with ``a = goss_top_rate``
and ``b = sample_rate - a``.
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import draw_top_and_rest
from .._kernels.importance import weighted_abs
from .base import Sampler
from .chunks import top_and_rest_counts
from .topk import top_threshold


class GOSSSampler(Sampler):
    """GOSS with top rate ``a`` and rest rate ``b = s - a``."""

    name = "goss"

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self.top_rate = params.goss_top_rate
        self.rest_rate = self.sample_rate - self.top_rate
        self._abs_grad = np.empty(n_rows)

    def sample(self, ctx, rows, rest):
        """Top rows by ``w |g|`` plus a uniform draw of the rest."""
        weighted_abs(ctx.grad, ctx.kernel_weight, self._abs_grad)
        k_top = int(round(self.top_rate * self.n_rows))
        k_rest = min(int(round(self.rest_rate * self.n_rows)), self.n_rows - k_top)
        rest_weight = (1.0 - self.top_rate) / self.rest_rate
        key = self.key(ctx.iteration)
        threshold, ties = top_threshold(self._abs_grad, k_top, key)
        counts = top_and_rest_counts(self._abs_grad, threshold, ties, k_top, k_rest, key)
        n = draw_top_and_rest(self._abs_grad, threshold, *counts, key, ctx.kernel_weight, rest_weight, rows, rest,
                              self.sample_weight)
        return n, self.sample_weight
