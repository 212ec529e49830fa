"""Uniform samplers: exactly ``round(s N)`` rows without replacement, or each row with ``p = s``."""

from __future__ import annotations

import numpy as np

from .._kernels.sampling import draw_bernoulli, draw_exact
from .base import Sampler


class _ConstantRateSampler(Sampler):
    """A sampler whose rows all have probability ``s``: weights ``w / s``, computed once."""

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self._weight_source = None

    def _weights(self, ctx):
        if self._weight_source is not ctx.weight:
            self._weight_source = ctx.weight
            np.divide(ctx.weight, self.sample_rate, out=self.sample_weight)
        return self.sample_weight


class UniformSampler(_ConstantRateSampler):
    """Friedman's stochastic gradient boosting: ``round(s N)`` rows without replacement, weight ``1/s``."""

    name = "uniform"

    def sample(self, ctx, rows, rest):
        """Selection sampling over every row."""
        n = draw_exact(self.key(ctx.iteration), int(round(self.target_size)), rows, rest)
        return n, self._weights(ctx)


class BernoulliSampler(_ConstantRateSampler):
    """Each row independently with probability ``s``, weight ``1/s`` (LightGBM's bagging draw)."""

    name = "bernoulli"

    def sample(self, ctx, rows, rest):
        """One coin per row."""
        n = draw_bernoulli(self.key(ctx.iteration), self.sample_rate, rows, rest, self.keep, self.row_ids)
        return n, self._weights(ctx)
