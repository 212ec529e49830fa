"""Gradient-based one-side sampling (GOSS, LightGBM; MVS paper 2.3).

The ``a N`` rows with the largest ``w |g|`` are kept with weight 1; ``b N`` of the others are
drawn uniformly without replacement and weighted ``(1 - a) / b``, with ``a = goss_top_rate``
and ``b = sample_rate - a``.
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import draw_top_and_rest
from .._kernels.importance import weighted_abs
from .._kernels.topk import piece_top_counts
from .base import Sampler
from .chunks import ends_inside, top_and_rest_pieces
from .topk import top_threshold


class GOSSSampler(Sampler):
    """GOSS with top rate ``a`` and rest rate ``b = s - a``."""

    name = "goss"

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self.top_rate = params.goss_top_rate
        self.rest_rate = self.sample_rate - self.top_rate
        self.rest_weight = (1.0 - self.top_rate) / self.rest_rate
        self._abs_grad = np.empty(n_rows)

    def sizes(self) -> tuple[int, int]:
        """``(k_top, k_rest)``: the top rows and the rows drawn from the others, of every
        machine's rows."""
        n = self.total_rows
        k_top = int(round(self.top_rate * n))
        return k_top, min(int(round(self.rest_rate * n)), n - k_top)

    def importance(self, ctx):
        """``w |g|`` of every row: the top rows are the largest."""
        weighted_abs(ctx.grad, ctx.kernel_weight, self._abs_grad)
        return self._abs_grad

    def sample(self, ctx, rows, rest):
        """Top rows by ``w |g|`` plus a uniform draw of the rest."""
        values = self.importance(ctx)
        k_top, k_rest = self.sizes()
        key = self.key(ctx.iteration)
        threshold, ties = top_threshold(values, k_top, key)
        return self.draw(ctx, values, (threshold, top_and_rest_pieces(values, threshold, ties, k_top, k_rest, key)),
                         rows, rest)

    def top_counts(self, importance, threshold):
        """This machine's share of a draw decided over every machine's rows
        (:func:`~smartboost.sampling.distributed.top_and_rest_by_machine`): its pieces, the values
        above ``threshold`` and equal to it in each, and the codes of the rows of the pieces
        that end inside their chunk (2 above, 1 equal, 0 below)."""
        layout = self.chunk_layout()
        start, _, length, _ = layout
        counts = piece_top_counts(importance, threshold, start, length)
        inside = ends_inside(layout, self.total_rows)
        values = [importance[s:s + n] for s, n in zip(start[inside], length[inside])]
        codes = np.concatenate([2 * (v > threshold) + (v == threshold) for v in values] + [np.zeros(0)])
        return layout, counts, codes.astype(np.int8)

    def draw(self, ctx, importance, decision, rows, rest):
        """Keep the top rows and draw the others: ``decision = (threshold, pieces)``, the
        threshold and this machine's ``DrawPieces`` (the second half of :meth:`sample`, for a
        decision taken over every machine's rows)."""
        threshold, pieces = decision
        n = draw_top_and_rest(importance, threshold, pieces, self.key(ctx.iteration), ctx.kernel_weight,
                              self.rest_weight, rows, rest, self.sample_weight)
        return n, self.sample_weight
