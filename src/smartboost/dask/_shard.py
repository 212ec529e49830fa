"""The worker side: one :class:`_Shard` per worker keeps that worker's rows and runs the steps.

A shard is a Dask actor, started where Dask placed the partitions
(:mod:`smartboost.dask._placement`). It serves the driver over one direct connection
(:mod:`smartboost.dask._transport`); each step of :class:`~smartboost.dask._rows._DaskRows` is
an ``op_<step>`` method, which runs the worker's own ``TrainingRows`` and returns what the
driver adds up.
"""

from __future__ import annotations

import threading
import traceback
from multiprocessing.connection import Listener
from typing import Any
from urllib.parse import urlparse

import cloudpickle
import distributed
import numpy as np

from .._common import FIXED_DTYPE
from .._data import concat_features, to_features, to_query_starts, to_vector
from .._kernels.scale import radix_buckets
from .._kernels.topk import count_ties
from .._params import TrainingParams
from .._rows import TrainingRows
from ..binning import BinMapper, BinnedData, category_counts
from ..booster import Booster
from ..engine import start_scores
from ..errors import DataError
from ..grower import GrownTree, SplitRequest
from ..objectives import make_objective
from ..tree import bins_in_set
from ._transport import _no_delay, _portable

_BINNING_STREAM = 0x42494E5348  # the shards' binning samples: their own random stream


class _Shard:
    """The training rows of one worker, served over a direct connection.

    Created on its worker as a Dask actor; ``parts`` are the worker's partitions, each a tuple
    ``(X, y, weight, qid, init_score)`` (None for what is not given), in partition order, and
    ``part_index`` their positions among all partitions (for error messages). After
    :meth:`address`, the driver connects once and sends ``(step, args)`` messages; each step is
    an ``op_<step>`` method, run in the shard's serving thread.

    Parameters
    ----------
    parts : list of tuple
    part_index : list of int
    authkey : bytes
        The run's key; connections without it are refused.
    """

    def __init__(self, parts: list[tuple], part_index: list[int], authkey: bytes) -> None:
        self.X, self.y, self.weight, self.qid, self.init_score = (
            _concat([p[j] for p in parts], part_index, name)
            for j, name in enumerate(("X", "y", "sample_weight", "qid", "init_score")))
        self.part_rows = [p[0].shape[0] for p in parts]
        worker = distributed.get_worker()
        self.name = worker.address
        self.n_threads = worker.state.nthreads
        self.listener = Listener((urlparse(worker.address).hostname or "127.0.0.1", 0), authkey=authkey)
        self._hists: dict[int, np.ndarray] = {}   # this worker's histogram of each open node
        self._sums: dict[int, tuple[int, int]] = {}
        self._free: list[np.ndarray] = []
        threading.Thread(target=self._serve, name="smartboost-shard", daemon=True).start()

    def address(self) -> tuple[str, int]:
        """Where the driver connects."""
        return self.listener.address

    def _serve(self) -> None:
        import numba
        numba.set_num_threads(max(1, min(self.n_threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            conn = _no_delay(self.listener.accept())
        finally:
            self.listener.close()
        with conn:
            while True:
                try:
                    name, args = cloudpickle.loads(conn.recv_bytes())
                except (EOFError, OSError):
                    return
                try:
                    reply = ("ok", getattr(self, "op_" + name)(*args))
                except Exception as exc:  # sent back to the driver, which raises it
                    reply = ("error", _portable(exc), traceback.format_exc())
                try:
                    conn.send_bytes(cloudpickle.dumps(reply, protocol=5))
                except OSError:  # the driver is gone (it gave up on a timeout, or was stopped)
                    return
                if name == "close":
                    return

    # -- setup ------------------------------------------------------------------------------

    def op_describe(self) -> dict[str, Any]:
        """Rows, features, the columns categorical by their type, and the first and last query
        id of each partition."""
        qids = []
        start = 0
        for n in self.part_rows:
            if self.qid is not None and n:
                qids.append((self.qid[start], self.qid[start + n - 1]))
            start += n
        return {"n_rows": self.X.matrix.shape[0], "n_features": self.X.matrix.shape[1], "part_rows": self.part_rows,
                "part_qids": qids, "from_dtype": self.X.from_dtype}

    def op_bin_sample(self, n_sample: int, seed: int) -> np.ndarray:
        """``n_sample`` of this worker's rows, drawn without replacement (all when fewer)."""
        X = self.X.matrix
        n = X.shape[0]
        if n_sample >= n:
            return np.asarray(X, dtype=np.float64)
        rng = np.random.default_rng([seed, _BINNING_STREAM])
        return np.asarray(X[np.sort(rng.choice(n, n_sample, replace=False))], dtype=np.float64)

    def op_categories(self, features: list[int]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        """The categories of these rows in each of the categorical ``features``, with their counts."""
        return {f: category_counts(self.X, f) for f in features}

    def op_bin(self, mapper: BinMapper) -> np.ndarray:
        """Bin the rows with the global edges (the raw values are dropped); their missing counts."""
        self.binned: BinnedData = mapper.transform(self.X)
        self.X = None
        return self.binned.missing_count

    def op_labels(self, params: TrainingParams) -> tuple[np.ndarray, np.ndarray]:
        """Check the labels (and bind the queries) for the objective; the distinct labels and
        their summed weights, from which the driver finds the start score."""
        self.objective = make_objective(params.objective, params.as_dict())
        self.label = self.objective.check_label(self.y, "label")
        self.objective.bind_queries(self.label, to_query_starts(None, self.qid, self.label.shape[0]))
        values, inverse = np.unique(self.label, return_inverse=True)
        weight = np.ones_like(self.label) if self.weight is None else self.weight
        return values, np.bincount(inverse, weights=weight, minlength=values.size)

    def op_start(self, params: TrainingParams, booster: Booster, part_offsets: list[int]) -> None:
        """Starting scores and the rows' training state; ``part_offsets`` are the global ids of
        the first rows of this worker's partitions."""
        scores = start_scores(booster, self.binned, self.init_score)
        row_ids = np.concatenate([np.arange(o, o + n, dtype=np.int64) for o, n in zip(part_offsets, self.part_rows)])
        self.rows = TrainingRows(self.binned, self.label, self.weight, scores, self.objective, params,
                                 self.n_threads, row_ids)

    # -- one iteration ------------------------------------------------------------------------

    def op_gradients(self) -> float:
        """Gradients at the current scores; the sum of |g| (MVS-adaptive's first lambda)."""
        self.rows.compute_gradients()
        return float(np.abs(self.rows.row_grad).sum())

    def op_importance(self, iteration: int, previous_leaf_values: np.ndarray | None,
                      mean_abs_grad: float) -> None:
        """Importances of the rows, for a sampler that decides over every shard's rows."""
        self.ctx = self.rows.sampling_context(iteration, previous_leaf_values, mean_abs_grad)
        self.rows.importance(self.ctx)

    def op_buckets(self, prefix: int, prefix_shift: int, shift: int, n_buckets: int) -> tuple[np.ndarray, np.ndarray]:
        """Radix bucket counts and sums of the importances (``sampling.distributed``)."""
        counts = np.zeros(n_buckets, np.int64)
        sums = np.zeros(n_buckets)
        radix_buckets(self.rows._importance, prefix, prefix_shift, shift, counts, sums)
        return counts, sums

    def op_members(self, prefix: int, prefix_shift: int) -> tuple[np.ndarray, np.ndarray]:
        """The distinct importances with a bit prefix, and how many rows have each."""
        a = self.rows._importance
        chosen = a[(a > 0.0) & ((a.view(np.uint64) >> np.uint64(prefix_shift)) == np.uint64(prefix))]
        return np.unique(chosen, return_counts=True)

    def op_tie_counts(self, threshold: float) -> np.ndarray:
        """Rows of each partition whose importance equals ``threshold`` (trimming's ties)."""
        return count_ties(self.rows._importance, threshold, np.cumsum(self.part_rows))

    def op_sample(self, iteration: int, previous_leaf_values: np.ndarray | None, decision: Any) -> int:
        """Draw (or keep) the iteration's sample with the sampler's global ``decision`` (None:
        the sampler decides on these rows, which is the same for row-wise draws); its size."""
        if decision is None:
            self.ctx = self.rows.sampling_context(iteration, previous_leaf_values)
        return self.rows.sample_rows(self.ctx, decision)

    def op_correction_totals(self) -> np.ndarray | None:
        """The sampler's per-leaf totals over these rows, for its gradient correction."""
        return self.rows.sampler.correction_totals(self.ctx)

    def op_correct(self, totals: np.ndarray | None) -> None:
        """The sampler's gradient correction, with the totals over every shard's rows."""
        self.rows.correct_gradients(self.ctx, totals)

    def op_units(self, k: int, features: np.ndarray | None) -> tuple[float, float]:
        """Start the tree of output ``k``: the fixed-point units these rows need."""
        self.node_rows = self.rows.tree_rows(k)
        self.node_rows.use_features(features)
        return self.node_rows.units()

    def op_fixed_point(self, g_unit: float, h_unit: float) -> tuple[int, int, int]:
        """Fixed-point gradients in the tree's units; the root's sums and rows here."""
        self._free += self._hists.values()
        self._hists.clear()
        g, h, n = self.node_rows.to_fixed_point(g_unit, h_unit)
        self._sums = {0: (g, h)}
        return g, h, n

    def op_root_histogram(self) -> np.ndarray:
        """Histogram of this worker's rows of the root."""
        return self._build(0)

    def op_split(self, request: SplitRequest, want_histogram: bool) -> tuple[int, int, np.ndarray | None]:
        """Partition the node of ``request`` (its ``out`` is not sent); with ``want_histogram``,
        the histogram of this worker's rows in its left child (built for the smaller child here,
        the other one by subtraction)."""
        node, left, right, feature = request.node, request.left, request.right, request.feature
        parent = self._hists.pop(node)
        g, h = self._sums.pop(node)
        offset = int(self.binned.histogram_layout.offsets[feature])
        if request.left_set is not None:
            left_cells = parent[offset + bins_in_set(request.left_set)].sum(axis=0)
        else:
            left_cells = parent[offset:offset + request.bin + 1].sum(axis=0)
            if request.missing_left:
                left_cells = left_cells + parent[offset + int(self.binned.mapper.n_bins[feature])]
        gl, hl = int(left_cells[0]), int(left_cells[1])
        self._sums[left], self._sums[right] = (gl, hl), (g - gl, h - hl)
        n_left, n_right = self.node_rows.partition(node, left, right, feature, request.bin, request.missing_left,
                                                   request.left_set)
        if not want_histogram:
            self._free.append(parent)
            return n_left, n_right, None
        small, large = (left, right) if n_left <= n_right else (right, left)
        built = self._build(small)
        np.subtract(parent, built, out=parent)
        self._hists[large] = parent
        return n_left, n_right, self._hists[left]

    def op_split_many(self, requests: list[SplitRequest],
                      wanted: list[bool]) -> list[tuple[int, int, np.ndarray | None]]:
        """:meth:`op_split` of every node of a depth-wise level, in order (none is a child of
        another, so no returned histogram is touched by a later split of the list)."""
        return [self.op_split(request, want) for request, want in zip(requests, wanted)]

    def _build(self, node: int) -> np.ndarray:
        hist = self._free.pop() if self._free else np.empty((self.binned.histogram_layout.n_cells, 2), FIXED_DTYPE)
        self.node_rows.histogram(node, *self._sums[node], hist)
        self._hists[node] = hist
        return hist

    def op_add_tree(self, k: int, grown: GrownTree) -> None:
        """Add the new tree of output ``k`` to the rows' scores."""
        self.rows.add_tree(k, grown)

    def op_close(self) -> None:
        """End of training: drop the rows."""
        self.rows = self.binned = self.node_rows = None


def _concat(parts: list[Any], part_index: list[int], name: str) -> np.ndarray | None:
    """One array from a worker's partitions of ``name`` (None when it was not given); errors
    name the partition."""
    if parts[0] is None:
        return None
    arrays = []
    for part, index in zip(parts, part_index):
        try:
            if name == "X":
                arrays.append(to_features(part, name))
            elif name == "qid":
                arrays.append(np.asarray(part).ravel())
            else:
                arrays.append(to_vector(part, len(part), name))
        except DataError as exc:
            raise DataError(f"partition {index}: {exc}") from None
    if name == "X":
        return concat_features(arrays)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
