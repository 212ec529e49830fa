"""Query-level sampling (``sampling_unit='query'``): whole queries kept or dropped.

A ranking objective's gradients couple the documents of a query, and a tree grown on part of a
query sees pairs whose partners are missing. :class:`QuerySampler` wraps a row sampler and applies
its rule to queries instead (:meth:`~smartboost.sampling.base.Sampler.draw_queries`):

- ``uniform``: exactly ``max(1, round(s Q))`` of the ``Q`` queries, weight ``Q / k``;
- ``bernoulli``: each query with probability ``s``, weight ``1 / s``;
- the importance samplers (``smart1``, ``smart2``, ``mvs``, ``loss``): a query's importance is
  the sum of its rows' importances, ``p_q = min(1, c a_q)`` with ``c`` such that the expected
  number of rows is ``s N`` (:func:`solve_scale_weighted`), weight ``1 / p_q``.

Every row of a kept query gets the query's weight times its own, so weighted sums over the
sample stay unbiased for sums over all rows. The draws use the wrapped sampler's random stream
over query indices, so they are deterministic by seed. The queries are the training queries
the ranking objective holds (``objective.query_starts``).
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import compact
from ..errors import ParameterError
from .base import QueryDraw, Sampler, SamplingContext


def solve_scale_weighted(importance: np.ndarray, size: np.ndarray, target: float) -> float:
    """The scale ``c`` with ``sum_q size_q min(1, c a_q) = target``.

    Sorts the importances once (O(Q log Q) over queries, not rows): with the ``k`` largest
    sure, ``c_k = (target - their sizes) / sum of size_q a_q over the rest``, and the answer is
    the first ``k`` whose next query is not sure (``c_k a_k < 1``).

    Parameters
    ----------
    importance : ndarray of float64
        ``a_q >= 0``.
    size : ndarray
        ``size_q > 0``, the rows of each query.
    target : float
        Expected number of rows, ``> 0``.

    Returns
    -------
    float
        ``c``; ``inf`` when ``target`` is at least the rows of the queries with ``a_q > 0``,
        0 when every ``a_q`` is 0.
    """
    positive = importance > 0.0
    a = importance[positive]
    s = size[positive].astype(np.float64)
    if a.size == 0:
        return 0.0
    if target >= s.sum():
        return np.inf
    order = np.argsort(-a, kind="stable")
    a, s = a[order], s[order]
    sure = np.concatenate(([0.0], np.cumsum(s)[:-1]))    # rows of the k largest, k = 0 .. m - 1
    rest = np.cumsum((s * a)[::-1])[::-1]                # sum of size_q a_q from k on
    scale = (target - sure) / rest
    return float(scale[np.argmax(scale * a < 1.0)])      # the last k (= m - 1) always qualifies


class QuerySampler(Sampler):
    """A row sampler's rule applied to whole queries (see the module docstring).

    Parameters
    ----------
    inner : Sampler
        The row sampler (``supports_queries``); its gradient correction (smart2) still runs on
        the sampled rows.
    """

    def __init__(self, inner: Sampler) -> None:
        super().__init__(inner.params, inner.n_rows)
        self.inner = inner
        self.gradient_history = inner.gradient_history
        self._draw: QueryDraw | None = None
        self.query_ids: np.ndarray | None = None  # the queries' ids among every machine's (None: their index)
        self.total_queries: int | None = None  # and every machine's queries together
        self._query_of_row = np.empty(0, np.intp)
        self._row_inverse_p = np.empty(inner.n_rows)

    @property
    def name(self) -> str:  # type: ignore[override]
        """The wrapped sampler's name."""
        return self.inner.name

    @property
    def needs_previous_leaves(self) -> bool:  # type: ignore[override]
        """As the wrapped sampler."""
        return self.inner.needs_previous_leaves

    @property
    def adapts(self) -> bool:  # type: ignore[override]
        """As the wrapped sampler."""
        return self.inner.adapts

    @property
    def drawn_by(self) -> str:
        """As the wrapped sampler."""
        return self.inner.drawn_by

    @property
    def target_rate(self) -> float:
        """As the wrapped sampler."""
        return self.inner.target_rate

    def checks(self, iteration):
        """The wrapped sampler's."""
        return self.inner.checks(iteration)

    def observe(self, holdout):
        """The wrapped sampler's."""
        self.inner.observe(holdout)

    def follow(self, rate):
        """The wrapped sampler's (``sampling='auto'``, distributed)."""
        self.inner.follow(rate)

    supports_multiclass = False  # ranking objectives have one score per row

    def query_draw(self, ctx: SamplingContext) -> QueryDraw:
        """The draw's queries (the objective's training queries) and per-query arrays."""
        if self._draw is None:
            starts = getattr(ctx.objective, "query_starts", None)
            if starts is None:
                raise ParameterError(f"sampling_unit='query' draws whole queries: it needs a ranking objective "
                                     f"(lambdarank, rank_pairwise), not '{ctx.objective.name}'")
            if starts[-1] != self.n_rows:
                raise ParameterError(f"the objective's queries cover {starts[-1]} rows, not the {self.n_rows} "
                                     "training rows")
            self._draw = QueryDraw(np.asarray(starts, np.int64), self.query_ids, self.total_queries)
            self._query_of_row = np.repeat(np.arange(self._draw.n_queries, dtype=np.intp), self._draw.sizes)
        return self._draw

    def sample(self, ctx, rows, rest):
        """The wrapped rule over queries, spread to their rows."""
        draw = self.query_draw(ctx)
        self.inner.draw_queries(ctx, draw)
        return self._spread(ctx, draw, rows, rest)

    def importance(self, ctx: SamplingContext) -> np.ndarray:
        """Each query's importance (an importance sampler's, summed over the query's rows), for
        a scale solved over every machine's queries (``smartboost.dask``)."""
        return self.inner.query_importance(ctx, self.query_draw(ctx))

    def draw(self, ctx: SamplingContext, importance: np.ndarray, scale: float, rows: np.ndarray,
             rest: np.ndarray) -> tuple[int, np.ndarray]:
        """The wrapped importance sampler's rule over queries with the ``scale`` solved over every
        machine's queries from :meth:`importance`, spread to their rows."""
        draw = self.query_draw(ctx)
        self.inner.draw_queries(ctx, draw, importance, scale)
        return self._spread(ctx, draw, rows, rest)

    def _spread(self, ctx: SamplingContext, draw: QueryDraw, rows: np.ndarray,
                rest: np.ndarray) -> tuple[int, np.ndarray]:
        """The rows of the queries drawn (into ``rows``, the others into ``rest``) and their
        weights."""
        # mode="clip": written straight into ``out`` (mode="raise" buffers); the indices are valid
        np.take(draw.keep, self._query_of_row, out=self.keep, mode="clip")
        n = compact(self.keep, rows, rest)
        np.take(draw.inverse_p, self._query_of_row, out=self._row_inverse_p, mode="clip")
        np.multiply(ctx.weight, self._row_inverse_p, out=self.sample_weight)
        return n, self.sample_weight

    def correction_totals(self, ctx):
        """The wrapped sampler's (smart2's per-leaf totals)."""
        return self.inner.correction_totals(ctx)

    def correct_gradients(self, ctx, rows, totals=None):
        """The wrapped sampler's correction (smart2's diagonal approximation)."""
        return self.inner.correct_gradients(ctx, rows, totals)
