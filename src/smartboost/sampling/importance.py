"""Importance samplers: row ``i`` is kept with ``p_i = min(1, c a_i)`` (docs/concepts/sampling.md).

The importance ``a_i`` (always including the row's own weight) is

- ``smart1``: ``w |g|`` (SMART, first-gradient-proportional, Algorithm 2);
- ``smart2``: ``w h`` (SMART, second-gradient-proportional, Algorithm 3), with the improved
  diagonal approximation of the gradients (``smart_eta``);
- ``mvs``: ``w sqrt(g^2 + lambda h^2)`` (Minimal Variance Sampling; ``mvs_lambda`` a number or
  ``"adaptive"``), with smart2's correction of the gradients when ``mvs_eta > 0``;
- ``loss``: ``w l(y, F)``, the row's current loss (ranking: its share of the query's pairwise
  loss).

``c`` solves ``sum_i min(1, c a_i) = s N`` (:func:`solve_scale`, expected O(N)), unless SMART's
``smart_rho`` gives it directly (``smart1``, ``smart2``, ``loss``). Kept rows get weight
``w_i / p_i``; rows of zero importance are never kept.

Drawing whole queries (``sampling_unit='query'``), a query's importance is the sum of its rows'
``a_q = sum_{i in q} a_i``; query ``q`` is kept with ``p_q = min(1, c a_q)``, where ``c`` solves
``sum_q n_q min(1, c a_q) = s N`` (``n_q`` its rows: ``sample_rate`` keeps meaning the expected
share of rows, :func:`~smartboost.sampling.queries.solve_scale_weighted`), and every row of a
kept query gets weight ``w_i / p_q``.
"""

from __future__ import annotations

import math

import numpy as np

from .._kernels.draws import draw_proportional
from .._kernels.importance import correct_sampled, leaf_sums, mvs_importance, weighted_abs
from .base import QueryDraw, Sampler, SamplingContext, mean_abs
from .queries import solve_scale_weighted
from .scale import solve_scale


class ProportionalSampler(Sampler):
    """Base of the samplers that keep row ``i`` with probability ``min(1, c a_i)``.

    Those with ``takes_rho`` use ``c = smart_rho`` when it is given (SMART's fixed rho: the
    sample size then follows the importances) instead of solving for ``sample_rate``.
    """

    supports_queries = True
    takes_rho = False

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self.importance_buffer = np.empty(n_rows)
        self.scale = np.nan  # the last iteration's c, for inspection

    def importance(self, ctx: SamplingContext) -> np.ndarray:
        """``a_i`` of every row (may be written into ``self.importance_buffer``)."""
        raise NotImplementedError

    def _scale(self, importance: np.ndarray, iteration: int, sizes: np.ndarray | None = None) -> float:
        """``c`` for ``importance`` of rows, or of queries of ``sizes`` rows each."""
        if self.takes_rho and self.params.smart_rho is not None:
            return self.params.smart_rho
        if sizes is not None:
            return solve_scale_weighted(importance, sizes, self.target_size)
        return solve_scale(importance, self.target_size, self.key(iteration, 1))

    def sample(self, ctx, rows, rest):
        """Bernoulli draw with the solved probabilities."""
        importance = self.importance(ctx)
        return self.draw(ctx, importance, self._scale(importance, ctx.iteration), rows, rest)

    def draw(self, ctx: SamplingContext, importance: np.ndarray, scale: float, rows: np.ndarray,
             rest: np.ndarray) -> tuple[int, np.ndarray]:
        """Keep row ``i`` with probability ``min(1, scale * importance[i])`` (the second half of
        :meth:`sample`, for a ``scale`` solved over every machine's rows)."""
        self.scale = scale
        n = draw_proportional(self.key(ctx.iteration), importance, scale, ctx.kernel_weight, rows, rest,
                              self.sample_weight, self.keep, self.row_ids)
        return n, self.sample_weight

    def query_importance(self, ctx: SamplingContext, draw: QueryDraw) -> np.ndarray:
        """``a_q`` of every query of ``draw``: the sum of its rows' importances."""
        return np.add.reduceat(self.importance(ctx), draw.starts[:-1])

    def draw_queries(self, ctx, draw: QueryDraw, importance: np.ndarray | None = None,
                     scale: float | None = None) -> None:
        """Bernoulli draw of the queries with ``p_q = min(1, c a_q)``, ``a_q`` the sum over the
        query; ``importance`` (:meth:`query_importance`) and ``scale`` when ``c`` was solved
        over every machine's queries."""
        if importance is None:
            importance = self.query_importance(ctx, draw)
        self.scale = self._scale(importance, ctx.iteration, draw.sizes) if scale is None else scale
        draw_proportional(self.key(ctx.iteration), importance, self.scale, np.ones(draw.n_queries), draw.ids,
                          draw.others, draw.inverse_p, draw.keep, draw.query_ids)


class Smart1Sampler(ProportionalSampler):
    """SMART first-gradient-proportional sampling: ``a_i = w_i |g_i|``."""

    name = "smart1"
    takes_rho = True

    def importance(self, ctx):
        """``w |g|``."""
        weighted_abs(ctx.grad, ctx.kernel_weight, self.importance_buffer)
        return self.importance_buffer


class _DiagonalCorrection:
    """SMART's improved diagonal approximation of the sampled rows' gradients, for the samplers
    that apply it (smart2, and mvs with ``mvs_eta``; docs/concepts/sampling.md).

    From the third iteration on, the gradient of a sampled row ``i`` is corrected with ``y~``,
    the scores of two iterations back, and ``leaf(i)``, row i's leaf in the previous tree:

    - the scaled form: ``g_i + eta * (mean_{k in leaf(i)} l'(y~_k) - l'(y~_i))``; ``eta = 0``
      leaves the gradients unchanged, ``eta = 1`` is the paper's formula;
    - the paper's form: ``g_i - l'(y~_i) + eta * mean_{k in leaf(i)} l'(y~_k)``, the formula of
      SMART's Section 3.2 for every ``eta``.

    The correction is a control variate: over the rows of each previous-tree leaf its
    inverse-probability-weighted sum has expectation zero, while it cancels the part of the
    sampled gradients that the gradients of two iterations back predict.
    """

    def _init_correction(self, n_rows: int, eta: float, paper_form: bool) -> None:
        self.eta = eta
        self.paper_form = paper_form
        # the paper's form subtracts l'(y~_i) whatever eta is
        self.corrects = paper_form or eta > 0.0
        self.needs_previous_leaves = self.corrects
        # l'(y~) is the gradient this run computed two iterations ago, at those scores: kept by
        # the trainer (ctx.past_grad), not recomputed (for lambdarank, one lambda-kernel call
        # less per iteration)
        self.gradient_history = 2 if self.corrects else 0
        self._n_rows = n_rows
        self._corrected = np.empty(0)  # made at the first correction (auto may never correct)

    def correction_totals(self, ctx):
        """Per-leaf sums and counts of ``l'(y~)`` over these rows, shape (2, n_leaves), or None
        when no correction applies at this iteration."""
        if not (self.corrects and len(ctx.past_grad) >= 2 and ctx.previous_leaf is not None):
            return None
        return leaf_sums(ctx.previous_leaf, ctx.past_grad[1], ctx.previous_leaf_values.shape[0])

    def correct_gradients(self, ctx, rows, totals=None):
        """The improved diagonal approximation (leaf means from ``totals``, or from these rows)
        of the sampled ``rows``, in their order, in an array of its own: ``ctx.grad`` stays the
        uncorrected history of the iterations to come."""
        totals = self.correction_totals(ctx) if totals is None else totals
        if totals is None:
            return None
        means = np.divide(totals[0], totals[1], out=np.zeros(totals.shape[1]), where=totals[1] > 0)
        if self._corrected.shape[0] < rows.shape[0]:
            self._corrected = np.empty(self._n_rows)
        corrected = self._corrected[:rows.shape[0]]
        if self.paper_form:  # g + 1 * (eta mean - l'(y~_i)): the kernel's form with eta folded into the means
            correct_sampled(rows, ctx.grad, ctx.past_grad[1], ctx.previous_leaf, self.eta * means, 1.0, corrected)
        else:
            correct_sampled(rows, ctx.grad, ctx.past_grad[1], ctx.previous_leaf, means, self.eta, corrected)
        return corrected


class Smart2Sampler(_DiagonalCorrection, Smart1Sampler):
    """SMART second-gradient-proportional sampling with the improved diagonal approximation.

    ``a_i = w_i h_i``; the sampled rows' gradients are corrected (:class:`_DiagonalCorrection`)
    with ``eta = smart_eta``, in the scaled form (``smart_correction="scaled"``) or the paper's
    (``"paper"``).
    """

    name = "smart2"
    supports_multiclass = False  # its correction follows one score per row through the trees

    def __init__(self, params, n_rows):
        super().__init__(params, n_rows)
        self._init_correction(n_rows, params.smart_eta, params.smart_correction == "paper")

    def importance(self, ctx):
        """``w h``: on unweighted rows the hessians themselves, which are non-negative for every
        objective that takes Newton steps (a custom objective's are checked), so no pass over
        the rows."""
        if ctx.kernel_weight is None and not ctx.objective.first_order_only:
            return ctx.hess
        weighted_abs(ctx.hess, ctx.kernel_weight, self.importance_buffer)
        return self.importance_buffer


class MVSSampler(_DiagonalCorrection, ProportionalSampler):
    """Minimal Variance Sampling: ``a_i = w_i sqrt(g_i^2 + lambda h_i^2)``.

    ``mvs_lambda="adaptive"`` (MVS Adaptive) sets ``lambda`` at each iteration to the square of
    the mean absolute leaf value (Newton step, without shrinkage) of the previous tree, and to
    ``(mean |g|)^2`` at the first iteration. With ``mvs_eta > 0`` the sampled rows' gradients
    get smart2's correction (:class:`_DiagonalCorrection`, scaled form) at that ``eta``.
    """

    name = "mvs"

    @classmethod
    def multiclass_refusal(cls, params):
        """See :class:`~smartboost.sampling.base.Sampler`: the correction (``mvs_eta > 0``)
        follows one score per row through the trees."""
        if params.mvs_eta > 0.0:
            return "mvs_eta > 0 corrects one gradient per row and does not support multiclass objectives; use mvs_eta=0"
        return super().multiclass_refusal(params)

    def __init__(self, params, n_rows, eta: float | None = None):
        super().__init__(params, n_rows)
        self._init_correction(n_rows, params.mvs_eta if eta is None else eta, False)
        self.adaptive = params.mvs_lambda == "adaptive"
        self.lam = np.nan if self.adaptive else float(params.mvs_lambda)
        self.root = math.sqrt(self.lam)  # sqrt(lambda), for norms whose squares overflow

    def importance(self, ctx):
        """``w sqrt(g^2 + lambda h^2)``."""
        if self.adaptive:
            values = ctx.previous_leaf_values
            if values is not None and values.size:
                mean = np.mean(np.abs(values))
            else:
                mean = ctx.mean_abs_grad if ctx.mean_abs_grad is not None else mean_abs(ctx.grad)
            self.root = float(mean)
            self.lam = self.root * self.root  # inf for diverging gradients: the kernel takes the root then
        mvs_importance(ctx.grad, ctx.hess, ctx.kernel_weight, self.lam, self.root, self.importance_buffer)
        return self.importance_buffer


class LossSampler(ProportionalSampler):
    """Loss-proportional sampling: ``a_i = w_i l(y_i, F_i)`` (SMART's WEB30K table); for ranking
    objectives, the document's share of its query's pairwise loss (``Objective.sampling_loss``)."""

    name = "loss"
    takes_rho = True

    def importance(self, ctx):
        """``w l(y, F)``."""
        np.multiply(ctx.objective.sampling_loss(ctx.label, ctx.scores), ctx.weight, out=self.importance_buffer)
        return self.importance_buffer
