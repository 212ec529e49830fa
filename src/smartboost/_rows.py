"""The row side of a training run: everything that is stored or computed per training row.

:class:`TrainingRows` holds one machine's training rows (labels, weights, raw scores, gradients,
the iteration's row sample, every row's leaf in the last tree) and does the per-row work of an
iteration (docs/concepts/boosting.md, "The boosting loop"): gradients, the row sample, the rows a tree is grown on, and the
update of the scores by the new tree. The boosting loop (:mod:`smartboost.engine`) makes the
decisions and holds the model; it drives one :class:`TrainingRows` in a single process, and
:mod:`smartboost.dask` drives one per worker through the same calls.

Raw scores, gradients and hessians are held class-major, shape ``(n_outputs, n_rows)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._common import INDEX_DTYPE
from ._kernels.gradients import fixed_point_extents, gather_pair, leaf_fixed_sums, scatter_pair
from ._kernels.importance import class_norms, holdout_extent, holdout_sums
from ._kernels.predict import add_leaf_values, add_values_by_leaf
from ._params import TrainingParams, leaf_value_rows_mode
from .binning import BinnedData
from .grower import GrownTree, NodeRows, TreeGrower
from .objectives import Objective
from .sampling import Sampler, SamplingContext, make_sampler
from .sampling.base import fixed_point_sums
from .selection import FeatureSelector
from .steps import Gather, leaf_line_search, line_search

__all__ = ["TrainingRows"]


class TrainingRows:
    """The training rows of one machine and their per-row state.

    Parameters
    ----------
    data : BinnedData
        The rows' bins.
    label : ndarray of float64, shape (n_rows,)
        Checked labels (the objective has bound its queries, if any).
    weight : ndarray of float64 or None
        Row weights (None: ones).
    scores : ndarray of float64, shape (n_outputs, n_rows)
        Starting raw scores; updated in place by every tree.
    objective : Objective
    params : dict
        Resolved parameters (sampling, ``boosting``, ``learning_rate``, ``line_search_rows``).
    n_threads : int
        Threads of the kernels.
    row_ids : ndarray of int64, optional
        Id of each row among every machine's rows (None: 0 .. n_rows - 1), so that the random
        draws of a row do not depend on how rows are spread over machines.
    total_rows : int, optional
        Every machine's rows together (None: these rows only).
    query_ids : ndarray of int64, optional
        Id of each query (the objective's) among every machine's queries (None: its index).
    total_queries : int, optional
        Every machine's queries together (None: these queries only).
    """

    def __init__(self, data: BinnedData, label: np.ndarray, weight: np.ndarray | None, scores: np.ndarray,
                 objective: Objective, params: TrainingParams, n_threads: int,
                 row_ids: np.ndarray | None = None, total_rows: int | None = None,
                 query_ids: np.ndarray | None = None, total_queries: int | None = None) -> None:
        n = data.n_rows
        self.data = data
        self.n_rows = n
        self.label = label
        self.weight = np.ones(n) if weight is None else weight
        self.unweighted = weight is None
        self.scores = scores
        self.objective = objective
        self.params = params
        self.n_outputs = scores.shape[0]
        self.row_ids = row_ids
        self.sampler: Sampler = make_sampler(params, n, row_ids, total_rows, query_ids, total_queries,
                                             data.mapper.n_features)
        # a sampled tree's leaf values from every row (leaf_value_rows): its rows are placed in
        # their leaves first, the values computed, then added; every row's gradient is read
        leaf_values = leaf_value_rows_mode(params, objective)
        self.values_from_every_row = leaf_values != "sample"
        self.sampler.chooses_leaf_values = leaf_values == "sampler"
        # the gradients of this iteration, then of the ones before that the sampler reads
        # (smart2): buffers that rotate, never copied
        self._grad_ring = [np.empty((self.n_outputs, n)) for _ in range(1 + self.sampler.gradient_history)]
        self._n_computed = 0  # iterations whose gradients were computed (this run's only)
        self.grad = self._grad_ring[0]
        self.hess = np.empty((self.n_outputs, n))
        # what the sampler sees: the gradients, or per-row norms of the per-class gradients
        if self.n_outputs == 1:
            self.row_grad, self.row_hess = self.grad[0], self.hess[0]
        else:
            self.row_grad, self.row_hess = np.empty(n), np.empty(n)
        self.tree_grad: np.ndarray | None = None  # the sampler's corrected gradients (smart2), in sample order
        self.unit_hess = np.ones(n) if params.boosting == "gradient" else None
        self.rows = np.empty(n, INDEX_DTYPE)
        self.out_of_sample = np.empty(n, INDEX_DTYPE)
        self.n_sampled = n
        self._row_wise = objective.row_wise and self.n_outputs == 1
        self.sample: tuple[np.ndarray, np.ndarray] | None = None   # (rows, rest), kept when sampling_freq > 1
        self.sample_weight = self.weight
        tracks_leaves = self.sampler.needs_previous_leaves or self.values_from_every_row
        self.previous_leaf = np.zeros(n, np.int32) if tracks_leaves else np.zeros(0, np.int32)
        self.node_rows = NodeRows(data, n_threads)
        self._in_sample = np.zeros(0, np.uint8)  # scratch of holdout_gains
        self._sorted_rows: np.ndarray | None = None

    @property
    def raw(self) -> np.ndarray:
        """Raw scores as objectives take them: a vector for single-output objectives."""
        return self.scores[0] if self.n_outputs == 1 else self.scores

    # -- one iteration ------------------------------------------------------------------------

    def compute_gradients(self, rows: np.ndarray | None = None) -> None:
        """Gradients and hessians of every row at the current scores (and, for a multiclass
        objective, their per-row norms, which a sampler that reads the gradients sees, unless its
        next draw takes every row), or of ``rows`` only (a single-output, row-wise objective)."""
        if rows is not None:
            label, raw, grad, hess = np.empty((4, rows.shape[0]))
            gather_pair(rows, self.label, self.scores[0], label, raw)
            self.objective.grad_hess(label, raw, grad, hess)
            scatter_pair(rows, grad, hess, self.grad[0], self.hess[0])
            return
        squeeze = self.n_outputs == 1
        if len(self._grad_ring) > 1:  # the oldest buffer takes this iteration's gradients
            self._grad_ring.insert(0, self._grad_ring.pop())
            self.grad = self._grad_ring[0]
            if squeeze:
                self.row_grad = self.grad[0]
        self._n_computed += 1
        self.objective.grad_hess(self.label, self.raw, self.grad[0] if squeeze else self.grad,
                                 self.hess[0] if squeeze else self.hess)
        sampler = self.sampler
        if not squeeze and sampler.reads_gradients and sampler.drawn_by != "none":  # else nothing reads them
            class_norms(self.grad, self.row_grad)
            class_norms(self.hess, self.row_hess)

    def sampling_context(self, iteration: int, previous_leaf_values: np.ndarray | None,
                         mean_abs_grad: float | None = None) -> SamplingContext:
        """What the sampler may read at ``iteration`` (after :meth:`compute_gradients`)."""
        past = tuple(grad[0] for grad in self._grad_ring[1:self._n_computed])
        return SamplingContext(iteration, self.row_grad, self.row_hess, self.weight, self.label, self.raw,
                               self.objective, self.previous_leaf if self.previous_leaf.size else None,
                               previous_leaf_values, mean_abs_grad, self.unweighted, past)

    def resample_due(self, iteration: int) -> bool:
        """Whether ``iteration`` draws a new sample (``sampling_freq`` keeps one for k iterations)."""
        freq = self.params.sampling_freq
        return self.sample is None or freq <= 1 or iteration % freq == 0

    @property
    def gradients_of_sample_only(self) -> bool:
        """Whether the next draw is made before the gradients, and only the sampled rows' are
        computed: a draw that does not read them, on a single-output row-wise objective."""
        return self._row_wise and not self.sampler.reads_gradients and not self.values_from_every_row

    def holdout_gains(self, k: int, grown: GrownTree) -> np.ndarray:
        """The loss decrease of output ``k``'s new tree (after :meth:`add_tree`), estimated from
        its sample and from the other rows (:func:`~smartboost._kernels.importance.holdout_extent`,
        summed by :func:`~smartboost.sampling.base.fixed_point_sums`; the sampler must
        track every row's leaf); zeros when the tree was grown on every row, NaN when a term is
        not finite."""
        if self.n_sampled == self.n_rows:
            return np.zeros(2)
        return fixed_point_sums(self.holdout_extent(k, grown.leaf_values), self.n_rows,
                                lambda units: self.holdout_sums(k, grown.leaf_values, units))

    def holdout_extent(self, k: int, leaf_values: np.ndarray) -> np.ndarray:
        """The largest term of each holdout estimate over these rows, for the tree of output ``k``
        with ``leaf_values`` (``_kernels.importance.holdout_extent``)."""
        return self._holdout(holdout_extent, k, leaf_values)

    def holdout_sums(self, k: int, leaf_values: np.ndarray, units: np.ndarray) -> np.ndarray:
        """The holdout estimates over these rows as integer sums in ``units``
        (``_kernels.importance.holdout_sums``)."""
        return self._holdout(holdout_sums, k, leaf_values, units)

    def _holdout(self, kernel: Callable[..., np.ndarray], k: int, leaf_values: np.ndarray, *extra: Any) -> np.ndarray:
        """``kernel`` of the holdout check run over these rows, the sampled ones marked."""
        if self._in_sample.size != self.n_rows:
            self._in_sample = np.zeros(self.n_rows, np.uint8)
        rows = self.rows[:self.n_sampled]
        self._in_sample[rows] = 1
        out = kernel(self.previous_leaf, leaf_values, self.grad[k], self.hess[k],
                     None if self.unweighted else self.weight, self.sample_weight, self._in_sample, *extra)
        self._in_sample[rows] = 0
        return out

    def draw_sample(self, iteration: int, previous_leaf_values: np.ndarray | None) -> int:
        """Gradients, then this iteration's rows (sorted) and their weights, and the sampler's
        correction of their gradients; returns the sample size.

        When the draw does not read the gradients and the objective is row-wise, the rows are
        drawn first and only theirs are computed."""
        if self.gradients_of_sample_only:
            ctx = self.sampling_context(iteration, previous_leaf_values)
            n = self.sample_rows(ctx)
            self.compute_gradients(self.rows[:n])
        else:
            self.compute_gradients()
            ctx = self.sampling_context(iteration, previous_leaf_values)
            n = self.sample_rows(ctx)
        self.correct_gradients(ctx)
        return n

    def importance(self, ctx: SamplingContext) -> None:
        """The rows' importances for a sampler whose decision is taken over every machine's
        rows (:mod:`smartboost.sampling.distributed`); kept for :meth:`sample_rows`."""
        self._importance = self.sampler.importance(ctx)

    def sample_rows(self, ctx: SamplingContext, decision: Any = None) -> int:
        """Draw (or keep) the sample of ``ctx.iteration``; returns the sample size.

        ``decision``: what the sampler decided over every machine's rows from the importances
        of :meth:`importance` (a proportional sampler's scale, trimming's threshold and ties),
        given to its ``draw``; None: the sampler decides on these rows alone.
        """
        if self.resample_due(ctx.iteration):
            if decision is None:
                n, weight = self.sampler.sample(ctx, self.rows, self.out_of_sample)
            else:
                n, weight = self.sampler.draw(ctx, self._importance, decision, self.rows, self.out_of_sample)
            self.keep_sample(n, weight)
        else:
            self.reuse_sample()
        return self.n_sampled

    def correct_gradients(self, ctx: SamplingContext, totals: np.ndarray | None = None) -> None:
        """The sampler's correction of the sampled rows' gradients (smart2), with its per-leaf
        ``totals`` over every machine's rows (None: over these rows)."""
        self.tree_grad = self.sampler.correct_gradients(ctx, self.rows[:self.n_sampled], totals)

    def keep_sample(self, n: int, weight: np.ndarray) -> None:
        """Record a freshly drawn sample of ``n`` rows (in ``rows``/``out_of_sample``)."""
        self.n_sampled, self.sample_weight = n, weight
        if self.params.sampling_freq > 1:
            self.sample = (self.rows[:n].copy(), self.out_of_sample[:self.n_rows - n].copy())
        self._sorted_rows = self.rows[:n].copy() if self.n_outputs > 1 else None

    def reuse_sample(self) -> None:
        """Put the kept sample back in place (the grower partitioned the row list)."""
        n = self.sample[0].shape[0]
        self.n_sampled = n
        self.rows[:n] = self.sample[0]
        self.out_of_sample[:self.n_rows - n] = self.sample[1]
        self._sorted_rows = self.rows[:n].copy() if self.n_outputs > 1 else None

    def tree_rows(self, k: int) -> NodeRows:
        """The rows the tree of output ``k`` is grown on, ready for ``TreeGrower.grow``."""
        rows = self.rows[:self.n_sampled]
        if k:
            rows[:] = self._sorted_rows  # the previous class's tree partitioned them
        grad = self.grad[k] if self.tree_grad is None else self.tree_grad
        hess = self.hess[k] if self.unit_hess is None else self.unit_hess
        weight = None if self.unweighted and self.sample_weight is self.weight else self.sample_weight
        self.node_rows.set_rows(rows, grad, hess, weight, grad_by_position=self.tree_grad is not None)
        return self.node_rows

    def grow_tree(self, k: int, grower: TreeGrower, selector: FeatureSelector, iteration: int,
                  weight_scale: float) -> GrownTree:
        """Grow the tree of output ``k`` on these rows (see ``TreeGrower.grow``)."""
        return grower.grow(self.tree_rows(k), selector, iteration, weight_scale)

    def add_tree(self, k: int, grown: GrownTree) -> None:
        """Add the new tree of output ``k`` to every row's score; record each row's leaf."""
        rows, ids = self.node_rows.row_list()
        start, end = self.node_rows.segments(grown.leaf_nodes)
        leaves_out = self.previous_leaf if self.previous_leaf.size else None
        add_leaf_values(self.scores[k], rows, ids, start, end, grown.leaf_values, leaves_out)
        if self.n_sampled < self.n_rows:
            self._walk_out_of_sample(grown, self.scores[k], leaves_out)

    def place_tree(self, grown: GrownTree) -> None:
        """Record every row's leaf of a tree grown on a sample in ``previous_leaf`` (its sampled
        rows' from their leaf segments, the others' by the walk), the scores unchanged: the
        first step of leaf values from every row (:meth:`leaf_extents`, :meth:`leaf_sums`,
        :meth:`add_placed_tree`)."""
        rows, ids = self.node_rows.row_list()
        start, end = self.node_rows.segments(grown.leaf_nodes)
        add_leaf_values(None, rows, ids, start, end, grown.leaf_values, self.previous_leaf)
        self._walk_out_of_sample(grown, None, self.previous_leaf)

    def _leaf_hess(self, k: int) -> np.ndarray:
        return self.hess[k] if self.unit_hess is None else self.unit_hess

    def leaf_extents(self, k: int) -> tuple[float, float]:
        """The largest weighted gradient and hessian of output ``k`` over every row, whose
        ``unit_exponents`` (the largest over every machine) are the units of :meth:`leaf_sums`."""
        return fixed_point_extents(None, self.grad[k], self._leaf_hess(k), None if self.unweighted else self.weight,
                                   False)

    def leaf_sums(self, k: int, n_leaves: int, g_exp: int, h_exp: int) -> np.ndarray:
        """Each leaf's weighted gradient and hessian sums of output ``k`` over every row placed
        by :meth:`place_tree`, as integers in units ``2**g_exp``, ``2**h_exp``, shape ``(n_leaves, 2)``."""
        return leaf_fixed_sums(self.previous_leaf, self.grad[k], self._leaf_hess(k),
                               None if self.unweighted else self.weight, g_exp, h_exp, n_leaves)

    def add_placed_tree(self, k: int, grown: GrownTree) -> None:
        """Add the tree placed by :meth:`place_tree` to every row's score of output ``k``."""
        add_values_by_leaf(self.scores[k], self.previous_leaf, grown.leaf_values)

    def _walk_out_of_sample(self, grown: GrownTree, scores: np.ndarray | None, leaves_out: np.ndarray | None) -> None:
        """Add the tree to ``scores`` of the rows it was not grown on (walking it on their bins),
        and record their leaves in ``leaves_out`` when given."""
        grown.tree.add_to_binned_rows(self.data.row_major, self.out_of_sample[:self.n_rows - self.n_sampled],
                                      self.data.mapper.n_bins, scores, grown.leaf_nodes, leaves_out)

    # -- step rules that read the rows (smartboost.steps) ---------------------------------------

    def line_step(self, k: int, grown: GrownTree, gather: Gather | None = None) -> float:
        """``rho`` of the ``line`` rule for the new tree of output ``k`` (its values as grown);
        ``gather``: every machine's rows take part (:func:`~smartboost.steps.line_search`)."""
        rows = self.node_rows.row_ids()
        direction = np.zeros(self.n_rows)
        start, end = self.node_rows.segments(grown.leaf_nodes)
        add_leaf_values(direction, rows, None, start, end, grown.leaf_values, None)
        if self.params.line_search_rows == "sample":
            on, weight = rows, self.sample_weight[rows]
        else:
            on, weight = slice(None), self.weight
            if self.n_sampled < self.n_rows:
                self._walk_out_of_sample(grown, direction, None)
        return line_search(self.objective, self.label[on], self.scores[k][on], direction[on], weight, gather)

    def renewed_leaf_values(self, k: int, grown: GrownTree) -> np.ndarray:
        """The objective's refit of the new tree's leaves (``Objective.renew_leaf_values``) from
        the rows it was grown on, with their sampling weights, at the scores before it."""
        start, end = self.node_rows.segments(grown.leaf_nodes)
        return self.objective.renew_leaf_values(self.label, self.scores[k], self.sample_weight,
                                                self.node_rows.row_ids(), start, end)

    def leaf_rows(self, k: int, grown: GrownTree) -> tuple[np.ndarray, ...]:
        """What the objective's refit of the new tree of output ``k`` reads of these rows, for a
        refit over every machine's rows: the rows of each leaf in turn (each leaf's sorted by id,
        as the partition keeps them) as their ids among every machine's rows, labels, scores
        before the tree and sampling weights, and the rows of each leaf."""
        start, end = self.node_rows.segments(grown.leaf_nodes)
        rows = np.concatenate([self.node_rows.row_ids()[s:e] for s, e in zip(start, end)] + [np.zeros(0, np.int64)])
        ids = rows.astype(np.int64) if self.row_ids is None else self.row_ids[rows]
        return ids, self.label[rows], self.scores[k][rows], self.sample_weight[rows], end - start

    def leaf_line_steps(self, k: int, grown: GrownTree, gather: Gather | None = None) -> np.ndarray:
        """The ``leaf_line`` rule: each leaf's own step over its rows of the sample (Friedman's
        TreeBoost), starting from its value as grown; ``gather``: every machine's rows of the
        leaf take part."""
        rows = self.node_rows.row_ids()
        fitted = grown.leaf_values
        start, end = self.node_rows.segments(grown.leaf_nodes)
        scores = self.scores[k]
        return np.array([leaf_line_search(self.objective, self.label[rows[s:e]], scores[rows[s:e]],
                                          self.sample_weight[rows[s:e]], fitted[j], gather)
                         for j, (s, e) in enumerate(zip(start, end))])
