"""Weight trimming (Friedman et al. 2000; SMART 2.4): keep the rows with the largest hessians.

With ``trimming_alpha`` set, the rows with the largest ``w h`` (LogitBoost's weights) are kept
until their sum reaches ``(1 - alpha)`` of the total; otherwise the ``round(s N)`` rows with the
largest ``w h``. Kept rows keep their own weight: trimming is biased by design.
"""

from __future__ import annotations

import numpy as np

from .._kernels.sampling import count_top_for_sum, select_top, weighted_abs
from .base import Sampler


class TrimmingSampler(Sampler):
    """Keep the heaviest rows by ``w h``."""

    name = "trimming"

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self.alpha = params["trimming_alpha"]
        self._weighted_hess = np.empty(n_rows)

    def sample(self, ctx, rows, rest):
        """The top rows by ``w h``."""
        weighted_abs(ctx.hess, ctx.weight, self._weighted_hess)
        key = self.key(ctx.iteration)
        if self.alpha is None:
            k = int(round(self.target_size))
        else:
            k = count_top_for_sum(self._weighted_hess, (1.0 - self.alpha) * self._weighted_hess.sum(), key)
        n = select_top(self._weighted_hess, k, key, rows, rest)
        return n, ctx.weight
