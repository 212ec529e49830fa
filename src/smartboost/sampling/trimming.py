"""Weight trimming (Friedman et al. 2000; SMART 2.4): keep the rows with the largest hessians.

With ``trimming_alpha`` set, the rows with the largest ``w h`` (LogitBoost's weights) are kept
until their sum reaches ``(1 - alpha)`` of the total; otherwise the ``round(s N)`` rows with the
largest ``w h``. Kept rows keep their own weight: trimming is biased by design.
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import select_above
from .._kernels.importance import weighted_abs
from .base import Sampler
from .topk import count_top_for_sum, top_threshold


class TrimmingSampler(Sampler):
    """Keep the heaviest rows by ``w h``."""

    name = "trimming"

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self.alpha = params.trimming_alpha
        self._weighted_hess = np.empty(n_rows)

    def importance(self, ctx):
        """``w h`` of every row: the rows are kept from the largest down."""
        weighted_abs(ctx.hess, ctx.kernel_weight, self._weighted_hess)
        return self._weighted_hess

    def sample(self, ctx, rows, rest):
        """The top rows by ``w h``."""
        values = self.importance(ctx)
        key = self.key(ctx.iteration)
        if self.alpha is None:
            k = int(round(self.target_size))
        else:
            k = count_top_for_sum(values, (1.0 - self.alpha) * values.sum(), key)
        threshold, ties = top_threshold(values, k, key)
        return self.draw(ctx, values, (threshold, np.array([self.n_rows]), np.array([ties])), rows, rest)

    def draw(self, ctx, importance, decision, rows, rest):
        """Keep the rows above a threshold and, segment by segment, the first rows equal to it:
        ``decision = (threshold, segment_ends, segment_ties)`` (the second half of
        :meth:`sample`, for a decision taken over every machine's rows)."""
        threshold, segment_ends, segment_ties = decision
        return select_above(importance, threshold, segment_ends, segment_ties, rows, rest), ctx.weight
