"""The driver's row source: :class:`_DaskRows` drives every shard's rows as one.

``engine.Trainer`` and ``grower.TreeGrower`` call it as they call one machine's rows; each call
becomes one step on every shard (:class:`~smartboost.dask._transport._Workers`), and the
driver adds up the answers: sample sizes, fixed-point sums and histograms (exact integer sums).
The samplers that decide over every row (importance sampling's scale, trimming's threshold and
ties) decide here from per-shard bucket sums (:mod:`smartboost.sampling.distributed`).
"""

from __future__ import annotations


import numpy as np

from .._params import TrainingParams
from ..grower import GrownTree, SplitRequest
from ..sampling import make_sampler
from ..sampling.distributed import (count_top_for_sum_by_radix, kth_largest_by_radix, solve_scale_by_radix,
                                    total_by_radix)
from ..sampling.importance import ProportionalSampler
from ..sampling.trimming import TrimmingSampler
from ._transport import _Workers


class _DaskRows:
    """Every shard's training rows driven as one: the rows of ``engine.Trainer`` and the row
    source of ``grower.TreeGrower`` (see the module docstring for the steps).

    Parameters
    ----------
    workers : _Workers
    n_rows : int
        Rows of every shard together.
    params : dict
        Resolved parameters.
    part_index, part_rows : list of list of int
        The partitions each shard holds (their positions among all partitions) and their rows.
    """

    def __init__(self, workers: _Workers, n_rows: int, params: TrainingParams, part_index: list[list[int]],
                 part_rows: list[list[int]]) -> None:
        self.workers = workers
        self.n_rows = n_rows
        self.params = params
        self.part_index = part_index
        self.part_rows = part_rows
        self.sampler = make_sampler(params, 0)  # the driver's copy: random keys and parameters only
        self._sampled = False
        self._k = 0
        self.traffic: list[int] = []
        self._traffic_mark: int | None = None

    def _record_traffic(self) -> None:
        total = self.workers.bytes_sent + self.workers.bytes_received
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
        abs_sums = self.workers.call("gradients")
        decisions = [None] * len(self.workers)
        if isinstance(self.sampler, (ProportionalSampler, TrimmingSampler)) and self._resample_due(iteration):
            self.workers.call("importance", iteration, previous_leaf_values, sum(abs_sums) / self.n_rows)
            if isinstance(self.sampler, TrimmingSampler):
                decisions = self._trimming_decisions(iteration)
            else:
                rho = self.params.smart_rho
                scale = rho if rho is not None else solve_scale_by_radix(
                    self._bucket_sums, self._members, self.sampler.sample_rate * self.n_rows,
                    self.sampler.key(iteration, 1))
                decisions = [scale] * len(self.workers)
        self._sampled = True
        n = sum(self.workers.call_each("sample", [(iteration, previous_leaf_values, d) for d in decisions]))
        totals = None
        if self.sampler.needs_previous_leaves:  # smart2: leaf means of old gradients over every row
            parts = [t for t in self.workers.call("correction_totals") if t is not None]
            totals = sum(parts) if parts else None
        self.workers.call("correct", totals)
        return n

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
        quota = np.zeros(sum(len(indices) for indices in self.part_index), np.int64)
        for shard_counts, indices in zip(counts, self.part_index):
            quota[indices] = shard_counts
        quota = np.minimum(quota, np.maximum(0, ties - (np.cumsum(quota) - quota)))  # lowest partitions first
        return [(threshold, np.cumsum(rows), quota[indices]) for rows, indices in zip(self.part_rows, self.part_index)]

    def _bucket_sums(self, prefix: int, prefix_shift: int, shift: int, n_buckets: int):
        answers = self.workers.call("buckets", prefix, prefix_shift, shift, n_buckets)
        return sum(a[0] for a in answers), sum(a[1] for a in answers)

    def _members(self, prefix: int, prefix_shift: int) -> np.ndarray:
        answers = self.workers.call("members", prefix, prefix_shift)
        return np.concatenate([np.repeat(values, counts) for values, counts in answers])

    def tree_rows(self, k: int) -> _DaskRows:
        """The row source of the tree of output ``k``."""
        self._k = k
        return self

    def begin_tree(self, features: np.ndarray | None) -> tuple[float, float, int, int, int]:
        """See ``grower.RowSource``: units are the largest any shard needs; sums add up."""
        units = self.workers.call("units", self._k, features)
        g_unit = max(u[0] for u in units)
        h_unit = max(u[1] for u in units)
        sums = self.workers.call("fixed_point", g_unit, h_unit)
        return (g_unit, h_unit, *(sum(s[j] for s in sums) for j in range(3)))

    def local_rows(self) -> None:
        """See ``grower.RowSource``: the rows are the workers'."""
        return None

    def root_histogram(self, g: int, h: int, out: np.ndarray) -> None:
        """See ``grower.RowSource``."""
        _add_up(self.workers.call("root_histogram"), out)

    def split_many(self, requests: list[SplitRequest]) -> list[tuple[int, int, int]]:
        """See ``grower.RowSource``: one round trip; the histogram written is always the left child's."""
        answers = self.workers.call("split_many", [request._replace(out=None) for request in requests],
                                    [request.out is not None for request in requests])
        results = []
        for j, request in enumerate(requests):
            left, out = request.left, request.out
            if out is not None:
                _add_up([answer[j][2] for answer in answers], out)
            results.append((sum(answer[j][0] for answer in answers), sum(answer[j][1] for answer in answers),
                            left if out is not None else -1))
        return results

    def add_tree(self, k: int, grown: GrownTree) -> None:
        """Add the new tree to every shard's scores."""
        self.workers.call("add_tree", k, grown)


def _add_up(hists: list[np.ndarray], out: np.ndarray) -> None:
    np.copyto(out, hists[0])
    for hist in hists[1:]:
        out += hist
