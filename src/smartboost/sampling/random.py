"""Uniform samplers: exactly ``round(s N)`` rows without replacement, or each row with ``p = s``.

Drawing whole queries (``sampling_unit='query'``), the same rules run over the queries:
exactly ``max(1, round(s Q))`` of the ``Q`` queries, weight ``Q / k`` (the exact inverse of
the inclusion probability ``k / Q``), or each query with ``p = s``, weight ``1 / s``.
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import draw_bernoulli, draw_exact_parallel
from .base import QueryDraw, Sampler
from .chunks import chunk_layout, exact_pieces


class _ConstantRateSampler(Sampler):
    """A sampler whose rows all have probability ``s``: weights ``w / s``, computed once."""

    reads_gradients = False

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self._weight_source = (None, None)

    def _weights(self, ctx):
        """``w / s``, computed again only when the weights or the rate (``sampling='auto'``) change."""
        if self._weight_source[0] is not ctx.weight or self._weight_source[1] != self.sample_rate:
            self._weight_source = (ctx.weight, self.sample_rate)
            np.divide(ctx.weight, self.sample_rate, out=self.sample_weight)
        return self.sample_weight


class UniformSampler(_ConstantRateSampler):
    """Friedman's stochastic gradient boosting: ``round(s N)`` rows without replacement, weight
    ``1/s`` (``N`` every machine's rows; each machine draws its share of the one draw)."""

    name = "uniform"
    supports_queries = True

    def sample(self, ctx, rows, rest):
        """Selection sampling over every row, in parallel chunks."""
        key = self.key(ctx.iteration)
        pieces = exact_pieces(key, int(round(self.target_size)), self.total_rows, self.chunk_layout())
        return draw_exact_parallel(key, pieces, rows, rest), self._weights(ctx)

    def draw_queries(self, ctx, draw: QueryDraw) -> None:
        """Selection sampling over the queries, in one pass (one chunk): exactly
        ``max(1, round(s Q))`` of them (``Q`` every machine's queries; each machine draws its
        share of the one draw)."""
        total = draw.total_queries
        k = max(1, int(round(self.sample_rate * total)))
        key = self.key(ctx.iteration)
        pieces = exact_pieces(key, k, total, chunk_layout(total, draw.query_ids, total), total)
        n = draw_exact_parallel(key, pieces, draw.ids, draw.others)
        draw.keep[:] = 0
        draw.keep[draw.ids[:n]] = 1
        draw.inverse_p[:] = total / k


class BernoulliSampler(_ConstantRateSampler):
    """Each row independently with probability ``s``, weight ``1/s`` (LightGBM's bagging draw)."""

    name = "bernoulli"
    supports_queries = True

    def sample(self, ctx, rows, rest):
        """One coin per row."""
        n = draw_bernoulli(self.key(ctx.iteration), self.sample_rate, rows, rest, self.keep, self.row_ids)
        return n, self._weights(ctx)

    def draw_queries(self, ctx, draw: QueryDraw) -> None:
        """One coin per query."""
        draw_bernoulli(self.key(ctx.iteration), self.sample_rate, draw.ids, draw.others, draw.keep, draw.query_ids)
        draw.inverse_p[:] = 1.0 / self.sample_rate
