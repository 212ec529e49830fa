"""The driver's row source: :class:`DaskRows` drives every shard's rows as one.

``engine.Trainer`` calls it as it calls one machine's rows; each call becomes one step on every
shard (:class:`~smartboost.dask._transport.Workers`), and the driver adds up the answers
(sample sizes). A tree is one step: the shards grow it together
(:class:`~smartboost.dask._shard._PeerRows`). The samplers that decide over every row
(importance sampling's scale, trimming's threshold and ties, GOSS's threshold and its draw
over the chunks that span shards) decide here from per-shard bucket sums and counts
(:mod:`smartboost.sampling.distributed`), or, for whole queries, from every query's importance
gathered here; the others draw on each shard by row ids alone. The
line searches of the step rules run on the shards together, on sums exact over every row; the
refit of the leaves (quantile losses) runs here on the leaves' rows gathered from the shards.
"""

from __future__ import annotations


import numpy as np

from .._params import TrainingParams, leaf_value_rows_mode
from ..grower import GrownTree, TreeGrower
from ..objectives import Objective
from ..sampling import make_sampler
from ..sampling.auto import AutoSampler
from ..sampling.base import fixed_point_sums
from ..sampling.distributed import (count_top_for_sum_by_radix, kth_largest_by_radix, solve_scale_by_radix,
                                    top_and_rest_by_machine, total_by_radix)
from ..sampling.goss import GOSSSampler
from ..sampling.importance import ProportionalSampler
from ..sampling.queries import QuerySampler
from ..sampling.trimming import TrimmingSampler
from ..selection import FeatureSelector
from ._transport import Workers


class DaskRows:
    """Every shard's training rows driven as one: the rows of ``engine.Trainer`` (see the
    module docstring for the steps).

    Parameters
    ----------
    workers : Workers
    n_rows : int
        Rows of every shard together.
    params : dict
        Resolved parameters.
    objective : Objective
        The run's objective (its leaf refit runs here).
    part_index, part_rows : list of list of int
        The partitions each shard holds (their positions among all partitions) and their rows.
    """

    def __init__(self, workers: Workers, n_rows: int, params: TrainingParams, objective: Objective,
                 part_index: list[list[int]], part_rows: list[list[int]], n_features: int) -> None:
        self.workers = workers
        self.objective = objective
        self.n_rows = n_rows
        self.params = params
        self.part_index = part_index
        self.part_rows = part_rows
        # the driver's copy: random keys and parameters only
        self.sampler = make_sampler(params, 0, None, n_rows, n_features=n_features)
        self.sampler.chooses_leaf_values = leaf_value_rows_mode(params, objective) == "sampler"
        self._sampled = False
        self.n_sampled = 0  # the last draw's sample size, over every shard
        self._warm = False
        self.peer_bytes = 0
        self.traffic: list[int] = []
        self._traffic_mark: int | None = None

    def _record_traffic(self) -> None:
        total = self.workers.bytes_sent + self.workers.bytes_received + self.peer_bytes
        if self._traffic_mark is not None:
            self.traffic.append(total - self._traffic_mark)
        self._traffic_mark = total

    def _resample_due(self, iteration: int) -> bool:
        freq = self.params.sampling_freq
        return not self._sampled or freq <= 1 or iteration % freq == 0

    def draw_sample(self, iteration: int, previous_leaf_values: np.ndarray | None) -> int:
        """Gradients and the iteration's sample on every shard; the total sample size.

        Also closes the previous iteration's record of traffic (``traffic``: bytes sent and
        received per iteration, summed over shards).
        """
        self._record_traffic()
        # the rule of this draw, over rows or (by_query) over whole queries
        by_query = isinstance(self.sampler, QuerySampler)
        sampler = self.sampler.inner if by_query else self.sampler
        if isinstance(sampler, AutoSampler):  # the shards draw at the rate this driver's sampler chose, by its MVS
            self.workers.call("follow_rate", sampler.rate)
            sampler = sampler.current
        self.workers.call("gradients")
        decisions = [None] * len(self.workers)
        # an importance sampler's scale is solved over every shard's rows, or queries
        decides = isinstance(sampler, (ProportionalSampler, TrimmingSampler, GOSSSampler))
        if decides and self._resample_due(iteration):
            first = previous_leaf_values is None or not previous_leaf_values.size  # MVS-adaptive's lambda: mean |g|
            mean_abs_grad = self._mean_abs_grad() if first else None
            self.workers.call("importance", iteration, previous_leaf_values, mean_abs_grad)
            if isinstance(sampler, TrimmingSampler):
                decisions = self._trimming_decisions(iteration)
            elif isinstance(sampler, GOSSSampler):
                decisions = self._goss_decisions(iteration)
            else:
                rho = self.params.smart_rho if sampler.takes_rho else None
                if rho is not None:
                    scale = rho
                elif by_query:
                    scale = self._query_scale(sampler, iteration)
                else:
                    scale = solve_scale_by_radix(self._bucket_sums, self._members,
                                                 sampler.sample_rate * self.n_rows, sampler.key(iteration, 1))
                decisions = [scale] * len(self.workers)
        self._sampled = True
        n = sum(self.workers.call_each("sample", [(iteration, previous_leaf_values, d) for d in decisions]))
        self.n_sampled = n
        totals = None
        if sampler.needs_previous_leaves:  # smart2: leaf means of old gradients over every row
            parts = [t for t in self.workers.call("correction_totals") if t is not None]
            totals = sum(parts) if parts else None
        self.workers.call("correct", totals)
        return n

    def _query_scale(self, sampler: ProportionalSampler, iteration: int) -> float:
        """An importance sampler's scale over every shard's queries (``sampling_unit='query'``):
        each query's importance and rows gathered here in the order of one machine (by query id),
        and solved by the sampler as one machine solves them (its target is every shard's rows).
        The gather is 24 bytes a query per iteration."""
        ids, importance, sizes = (np.concatenate(column) for column in zip(*self.workers.call("query_importances")))
        order = np.argsort(ids, kind="stable")
        return sampler._scale(importance[order], iteration, sizes[order])

    def _mean_abs_grad(self) -> float:
        """Mean |g| over every shard's rows, as one machine finds it
        (:func:`~smartboost.sampling.base.mean_abs`)."""
        extent = np.array([max(self.workers.call("abs_grad_extent"))])
        total = fixed_point_sums(extent, self.n_rows,
                                 lambda units: np.array([sum(self.workers.call("abs_grad_sum", units[0]))]))
        return float(total[0]) / self.n_rows

    def holdout_gains(self, k: int, grown: GrownTree) -> np.ndarray:
        """``TrainingRows.holdout_gains`` over every shard's rows: each estimate's largest term
        over the shards sets its unit, and the shards' integer sums in it add up to one
        machine's (``sampling='auto'``)."""
        if self.n_sampled == self.n_rows:
            return np.zeros(2)
        extent = np.max(self.workers.call("holdout_extent", k, grown.leaf_values), axis=0)
        return fixed_point_sums(extent, self.n_rows, lambda units: np.sum(
            self.workers.call("holdout_sums", k, grown.leaf_values, units), axis=0))

    def _trimming_decisions(self, iteration: int) -> list[tuple]:
        """Trimming over every shard: the threshold of the ``k`` heaviest rows, and how many rows
        equal to it each partition keeps (the lowest global row ids, as on one machine)."""
        key = self.sampler.key(iteration)
        if self.sampler.alpha is None:
            k = int(round(self.sampler.sample_rate * self.n_rows))
        else:
            total = total_by_radix(self._bucket_sums)[1]
            k = count_top_for_sum_by_radix(self._bucket_sums, self._members, (1.0 - self.sampler.alpha) * total, key)
        threshold, greater = kth_largest_by_radix(self._bucket_sums, self._members, k, key) if k > 0 else (np.inf, k)
        ties = k - greater
        counts = self.workers.call("tie_counts", threshold)
        quota = np.zeros(1 + max(max(indices) for indices in self.part_index), np.int64)  # empty ones held by none
        for shard_counts, indices in zip(counts, self.part_index):
            quota[indices] = shard_counts
        quota = np.minimum(quota, np.maximum(0, ties - (np.cumsum(quota) - quota)))  # lowest partitions first
        return [(threshold, np.cumsum(rows), quota[indices]) for rows, indices in zip(self.part_rows, self.part_index)]

    def _goss_decisions(self, iteration: int) -> list[tuple]:
        """GOSS over every shard: the threshold of the top rows, and each shard's pieces of the
        draw (:func:`~smartboost.sampling.distributed.top_and_rest_by_machine`)."""
        key = self.sampler.key(iteration)
        k_top, k_rest = self.sampler.sizes()
        threshold, greater = (kth_largest_by_radix(self._bucket_sums, self._members, k_top, key) if k_top > 0
                              else (np.inf, 0))
        layouts, counts, codes = zip(*self.workers.call("top_counts", threshold))
        pieces = top_and_rest_by_machine(list(layouts), list(counts), list(codes), k_top - greater, k_rest, key,
                                         self.n_rows)
        return [(threshold, p) for p in pieces]

    def _bucket_sums(self, prefix: int, prefix_shift: int, shift: int, n_buckets: int):
        answers = self.workers.call("buckets", prefix, prefix_shift, shift, n_buckets)
        return sum(a[0] for a in answers), sum(a[1] for a in answers)

    def _members(self, prefix: int, prefix_shift: int) -> np.ndarray:
        answers = self.workers.call("members", prefix, prefix_shift)
        return np.concatenate([np.repeat(values, counts) for values, counts in answers])

    def grow_tree(self, k: int, grower: TreeGrower, selector: FeatureSelector, iteration: int,
                  weight_scale: float) -> GrownTree:
        """Have the shards grow the tree of output ``k`` together, each with its own copy of
        ``grower`` and ``selector`` (built alike, ``engine.tree_growth``), in one step
        (:class:`~smartboost.dask._shard._PeerRows`); the tree and the bytes the shards sent
        each other."""
        if not self._warm and len(self.workers) > 1:  # the first tree: kernels compiled one shard at a time
            self.workers.call("warm", k, iteration, weight_scale)
            self._warm = True
        answers = self.workers.call("grow", k, iteration, weight_scale, together=True)
        self.peer_bytes += sum(sent for _, sent in answers)
        return answers[0][0]

    def renewed_leaf_values(self, k: int, grown: GrownTree) -> np.ndarray:
        """The objective's refit of the new tree's leaves (``Objective.renew_leaf_values``) on
        every shard's rows of each leaf, gathered here in the order of one machine (by row id),
        so that the refit is one machine's."""
        ids, label, scores, weight, counts = (np.concatenate(column) for column in
                                              zip(*self.workers.call("leaf_rows", k, grown)))
        n_leaves = grown.leaf_nodes.shape[0]
        leaf = np.repeat(np.tile(np.arange(n_leaves), len(self.workers)), counts)
        order = np.lexsort((ids, leaf))
        sizes = np.bincount(leaf, minlength=n_leaves)
        end = np.cumsum(sizes)
        return self.objective.renew_leaf_values(label[order], scores[order], weight[order], np.arange(order.shape[0]),
                                                end - sizes, end)

    def line_step(self, k: int, grown: GrownTree) -> float:
        """The ``line`` rule's ``rho``: the shards search it together (every shard finds the same)."""
        return self.workers.call("line_step", k, grown, together=True)[0]

    def leaf_line_steps(self, k: int, grown: GrownTree) -> np.ndarray:
        """The ``leaf_line`` rule's steps: the shards search them together."""
        return self.workers.call("leaf_line_steps", k, grown, together=True)[0]

    def add_tree(self, k: int, grown: GrownTree) -> None:
        """Add the new tree to every shard's scores."""
        self.workers.call("add_tree", k, grown)

    def place_tree(self, grown: GrownTree) -> None:
        """``TrainingRows.place_tree`` on every shard."""
        self.workers.call("place_tree", grown)

    def leaf_extents(self, k: int) -> tuple[float, float]:
        """``TrainingRows.leaf_extents`` over every shard's rows: the largest of the shards'."""
        extents = np.max(np.array(self.workers.call("leaf_extents", k)), axis=0)
        return float(extents[0]), float(extents[1])

    def leaf_sums(self, k: int, n_leaves: int, g_exp: int, h_exp: int) -> np.ndarray:
        """``TrainingRows.leaf_sums`` over every shard's rows: the shards' integer sums added."""
        return np.sum(self.workers.call("leaf_sums", k, n_leaves, g_exp, h_exp), axis=0)

    def add_placed_tree(self, k: int, grown: GrownTree) -> None:
        """``TrainingRows.add_placed_tree`` on every shard."""
        self.workers.call("add_placed_tree", k, grown)
