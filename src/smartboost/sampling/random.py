"""Uniform samplers: exactly ``round(s N)`` rows without replacement, or each row with ``p = s``."""

from __future__ import annotations

import numpy as np

from .._kernels.sampling import draw_bernoulli, draw_exact
from .base import Sampler


class UniformSampler(Sampler):
    """Friedman's stochastic gradient boosting: ``round(s N)`` rows without replacement, weight ``1/s``."""

    name = "uniform"

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self._all = np.arange(n_rows, dtype=np.uint32)

    def sample(self, ctx, rows):
        """Selection sampling over every row."""
        k = int(round(self.target_size))
        n = draw_exact(self.key(ctx.iteration), self._all, self.n_rows, k, rows, 0)
        self.sample_weight[rows[:n]] = ctx.weight[rows[:n]] / self.sample_rate
        return n, self.sample_weight


class BernoulliSampler(Sampler):
    """Each row independently with probability ``s``, weight ``1/s`` (LightGBM's bagging draw)."""

    name = "bernoulli"

    def sample(self, ctx, rows):
        """One coin per row."""
        n = draw_bernoulli(self.key(ctx.iteration), self.sample_rate, rows)
        self.sample_weight[rows[:n]] = ctx.weight[rows[:n]] / self.sample_rate
        return n, self.sample_weight
