"""The worker side: one :class:`Shard` per worker keeps that worker's rows and runs the steps.

A shard is a Dask actor, started where Dask placed the partitions
(:mod:`smartboost.dask._placement`). It serves the driver over one direct connection
(:mod:`smartboost.dask._transport`); each step of :class:`~smartboost.dask._rows.DaskRows` is
an ``op_<step>`` method, which runs the worker's own ``TrainingRows`` and returns what the
driver adds up. Trees are grown by the shards together (:class:`_PeerRows`), over links among
them (:mod:`smartboost.dask._peers`).
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
from .._dispatch import BoundKernel
from .._data import concat_features, to_features, to_query_starts, to_vector
from .._kernels.fsum import exact_partials
from .._kernels.gradients import unit_exponents
from .._kernels.importance import abs_fixed_sum
from .._kernels.records import GrowthState
from .._kernels.shard import best_of_workers, put_share, put_shares, split_own_rows, take_shares
from .._kernels.scale import radix_buckets
from .._kernels.topk import count_ties
from .._params import TrainingParams
from .._rows import TrainingRows
from ..binning import BinMapper, BinnedData, category_counts
from ..booster import Booster
from ..engine import start_scores, tree_growth, tree_weight
from ..errors import DataError
from ..grower import GrownTree, NodeRows
from ..objectives import make_objective
from ._peers import Peers
from ._transport import no_delay, portable

_BINNING_STREAM = 0x42494E5348  # the shards' binning samples: their own random stream


class Shard:
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
        self.part_rows = [p[0].shape[0] for p in parts]
        self.part_index = part_index
        self.X, self.y, self.weight, self.qid, self.init_score = (
            _concat([p[j] for p in parts], part_index, self.part_rows, name)
            for j, name in enumerate(("X", "y", "sample_weight", "qid", "init_score")))
        bounds = np.cumsum([0] + self.part_rows)
        # queries of each partition: its runs of equal query ids (whole queries, checked by the driver)
        self.part_queries = [0 if self.qid is None or a == b else 1 + int(np.count_nonzero(np.diff(self.qid[a:b])))
                             for a, b in zip(bounds[:-1], bounds[1:])]
        worker = distributed.get_worker()
        self.name = worker.address
        self.n_threads = worker.state.nthreads
        host = urlparse(worker.address).hostname or "127.0.0.1"
        self.listener = Listener((host, 0), authkey=authkey)  # the driver's link
        self.peer_listener = Listener((host, 0), authkey=authkey)  # the other shards' links
        self.authkey = authkey
        self.peers: Peers | None = None
        threading.Thread(target=self._serve, name="smartboost-shard", daemon=True).start()

    def address(self) -> tuple[str, int]:
        """Where the driver connects."""
        return self.listener.address

    def _serve(self) -> None:
        import numba
        numba.set_num_threads(max(1, min(self.n_threads, numba.config.NUMBA_NUM_THREADS)))
        try:
            conn = no_delay(self.listener.accept())
        finally:
            self.listener.close()
        with conn:
            while True:
                try:
                    message = conn.recv_bytes()
                except (EOFError, OSError):
                    return
                name = None
                try:
                    # unpickled here, so that a step whose arguments fail to load is answered with the error
                    name, args = cloudpickle.loads(message)
                    reply = ("ok", getattr(self, "op_" + name)(*args))
                except Exception as exc:  # sent back to the driver, which raises it
                    reply = ("error", portable(exc), traceback.format_exc())
                try:
                    conn.send_bytes(cloudpickle.dumps(reply, protocol=5))
                except OSError:  # the driver is gone (it gave up on a timeout, or was stopped)
                    return
                if name == "close":
                    return

    # -- setup ------------------------------------------------------------------------------

    def op_describe(self) -> dict[str, Any]:
        """Rows, features, the columns categorical by their type, the query ids of each partition
        (one per run of equal ids) and its number of queries, and the largest weight (0 without)."""
        qids = []
        start = 0
        for n in self.part_rows:
            if self.qid is not None:
                ids = self.qid[start:start + n]
                qids.append(ids[np.r_[True, ids[1:] != ids[:-1]]] if n else ids)
            start += n
        largest_weight = float(self.weight.max()) if self.weight is not None and self.weight.size else 0.0
        return {"n_rows": self.X.matrix.shape[0], "n_features": self.X.matrix.shape[1], "part_rows": self.part_rows,
                "part_qids": qids, "part_queries": self.part_queries, "from_dtype": self.X.from_dtype,
                "largest_weight": largest_weight, "peer_address": self.peer_listener.address}

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
        """Bin the rows with the global edges (the raw values are dropped); the rows in every
        histogram cell (``BinnedData.cell_counts``), whose sum over the workers gives the
        missing values and the features worth searching."""
        self.binned: BinnedData = mapper.transform(self.X)
        self.X = None
        return self.binned.cell_counts

    def op_labels(self, params: TrainingParams) -> tuple[np.ndarray, np.ndarray]:
        """Check the labels (and bind the queries) for the objective; the distinct labels and
        their summed weights, from which the driver finds the start score and checks what needs
        every row (a binary objective's two classes: a worker may hold one)."""
        self.objective = make_objective(params.objective, params.as_dict())
        try:
            self.label = self.objective.check_label(self.y, "label", training=False)
        except DataError as exc:  # its row counts from this worker's first row: say which partition's it is
            bounds = np.cumsum([0] + self.part_rows)
            for index, start, end in zip(self.part_index, bounds[:-1], bounds[1:]):
                try:
                    self.objective.check_label(self.y[start:end], "label", training=False)
                except DataError as own:
                    raise DataError(f"partition {index}: {own}") from None
            raise exc
        self.objective.bind(self.label, to_query_starts(None, self.qid, self.label.shape[0]))
        values, inverse = np.unique(self.label, return_inverse=True)
        weight = np.ones_like(self.label) if self.weight is None else self.weight
        return values, np.bincount(inverse, weights=weight, minlength=values.size)

    def op_start(self, params: TrainingParams, booster: Booster, usable: np.ndarray, from_top: np.ndarray,
                 part_offsets: list[int], total_rows: int, query_offsets: list[int], total_queries: int) -> None:
        """Starting scores, the rows' training state and the tree grower (the boosting loop's:
        ``usable`` are the features a split may use, ``from_top`` those whose scan sending missing
        values right counts from the top, of every worker's rows); ``part_offsets`` are the global ids of the
        first rows of this worker's partitions, of ``total_rows`` rows on every worker, and
        ``query_offsets`` those of their first queries, of ``total_queries``."""
        scores = start_scores(booster, self.binned, self.init_score)
        row_ids = np.concatenate([np.arange(o, o + n, dtype=np.int64) for o, n in zip(part_offsets, self.part_rows)])
        query_ids = np.concatenate([np.arange(o, o + n, dtype=np.int64)
                                    for o, n in zip(query_offsets, self.part_queries)])
        self.rows = TrainingRows(self.binned, self.label, tree_weight(self.objective, self.weight), scores,
                                 self.objective, params, self.n_threads, row_ids, total_rows, query_ids, total_queries)
        self.grower, self.selector = tree_growth(params, booster, usable, from_top)
        self.peer_rows = _PeerRows(self.rows.node_rows, self.peers)

    # -- one iteration ------------------------------------------------------------------------

    def op_follow_rate(self, rate: float) -> None:
        """Draw the next sample at the rate the driver's ``sampling='auto'`` chose."""
        self.rows.sampler.follow(rate)

    def op_gradients(self) -> None:
        """Gradients at the current scores."""
        self.rows.compute_gradients()

    def op_abs_grad_extent(self) -> float:
        """The largest |g| of these rows (the unit of MVS-adaptive's first lambda,
        :func:`~smartboost.sampling.base.mean_abs`)."""
        return float(np.max(np.abs(self.rows.row_grad), initial=0.0))

    def op_abs_grad_sum(self, unit: float) -> int:
        """The sum of |g| over these rows, as an integer in ``unit``."""
        return int(abs_fixed_sum(self.rows.row_grad, unit))

    def op_importance(self, iteration: int, previous_leaf_values: np.ndarray | None,
                      mean_abs_grad: float) -> None:
        """Importances of the rows, for a sampler that decides over every shard's rows."""
        self.ctx = self.rows.sampling_context(iteration, previous_leaf_values, mean_abs_grad)
        self.rows.importance(self.ctx)

    def op_query_importances(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each query's id among every shard's, importance (:meth:`op_importance`) and rows, for
        a scale solved over every query (``sampling_unit='query'``)."""
        draw = self.rows.sampler.query_draw(self.ctx)
        return draw.query_ids, self.rows._importance, draw.sizes

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

    def op_top_counts(self, threshold: float) -> tuple[tuple, np.ndarray, np.ndarray]:
        """This worker's share of GOSS's draw (``GOSSSampler.top_counts``)."""
        return self.rows.sampler.top_counts(self.rows._importance, threshold)

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

    def op_connect(self, rank: int, addresses: list[tuple[str, int]], names: list[str], timeout: float) -> None:
        """Connect to every other shard (all shards at once); ``rank`` is this one's position."""
        self.peers = Peers.connect(rank, self.peer_listener, addresses, names, self.authkey, timeout)

    def op_warm(self, k: int, iteration: int, weight_scale: float) -> None:
        """Grow the tree of output ``k`` alone, on a copy of its rows, and drop it: compiles (or
        loads) the kernels of growth over peers before the shards grow a tree together (see
        :meth:`~smartboost.dask._transport.Workers.call`); and the exact sum of the line
        searches, which the shards also run together."""
        rows = self.rows.tree_rows(k)
        copy = NodeRows(self.binned, self.n_threads)
        copy.set_rows(rows.ids.copy(), rows.grad, rows.hess, rows.weight, rows.grad_by_position)
        self.grower.grow(_PeerRows(copy, Peers.alone()), self.selector, iteration, weight_scale)
        if self.rows.params.step_rule in ("line", "leaf_line"):
            exact_partials(np.zeros(1))

    def op_grow(self, k: int, iteration: int, weight_scale: float) -> tuple[GrownTree | None, int]:
        """Grow the tree of output ``k`` together with the other shards (all at once). Returns
        the tree (from the first shard only: every shard grows the same) and the bytes this
        shard sent to its peers."""
        sent = self.peers.bytes_sent
        self.peers.context = f"iteration {iteration}, tree of output {k}"
        rows = self.rows.tree_rows(k)
        source = rows if self.peers.size == 1 else self.peer_rows
        grown = self.grower.grow(source, self.selector, iteration, weight_scale)
        return (grown if self.peers.rank == 0 else None), self.peers.bytes_sent - sent

    def op_leaf_rows(self, k: int, grown: GrownTree) -> tuple[np.ndarray, ...]:
        """What the objective's refit of the new tree reads of this worker's rows of each leaf
        (``TrainingRows.leaf_rows``)."""
        return self.rows.leaf_rows(k, grown)

    def op_line_step(self, k: int, grown: GrownTree) -> float:
        """The ``line`` rule's ``rho`` for the new tree of output ``k``, searched with the other
        shards (all at once) on the loss summed over every shard's rows."""
        return self.rows.line_step(k, grown, self._gather_partials)

    def op_leaf_line_steps(self, k: int, grown: GrownTree) -> np.ndarray:
        """The ``leaf_line`` rule's steps of the new tree of output ``k``, searched with the
        other shards (all at once) on each leaf's loss summed over every shard's rows."""
        return self.rows.leaf_line_steps(k, grown, self._gather_partials)

    def _gather_partials(self, partials: np.ndarray) -> np.ndarray:
        return self.peers.gather_concat(partials, "line search sums")

    def op_holdout_extent(self, k: int, leaf_values: np.ndarray) -> np.ndarray:
        """The largest term of each holdout estimate over these rows (``sampling='auto'``)."""
        return self.rows.holdout_extent(k, leaf_values)

    def op_holdout_sums(self, k: int, leaf_values: np.ndarray, units: np.ndarray) -> np.ndarray:
        """The holdout estimates over these rows, as integer sums in ``units``."""
        return self.rows.holdout_sums(k, leaf_values, units)

    def op_add_tree(self, k: int, grown: GrownTree) -> None:
        """Add the new tree of output ``k`` to the rows' scores."""
        self.rows.add_tree(k, grown)

    def op_place_tree(self, grown: GrownTree) -> None:
        """Record every row's leaf of the new tree, the scores unchanged (``leaf_value_rows``)."""
        self.rows.place_tree(grown)

    def op_leaf_extents(self, k: int) -> tuple[float, float]:
        """The largest weighted gradient and hessian of output ``k`` over these rows."""
        return self.rows.leaf_extents(k)

    def op_leaf_sums(self, k: int, n_leaves: int, g_exp: int, h_exp: int) -> np.ndarray:
        """Each leaf's weighted gradient and hessian sums over these rows, as integers."""
        return self.rows.leaf_sums(k, n_leaves, g_exp, h_exp)

    def op_add_placed_tree(self, k: int, grown: GrownTree) -> None:
        """Add the placed tree of output ``k`` (its values from every row) to the rows' scores."""
        self.rows.add_placed_tree(k, grown)

    def op_close(self) -> None:
        """End of training: drop the rows and the links to the other shards."""
        if self.peers is not None:
            self.peers.close()
        self.rows = self.binned = self.peer_rows = self.peers = None


class _PeerRows:
    """A worker's rows of the tree being grown, as the row source (``grower.RowSource``) of its
    own grower, whose histograms are those of every worker's rows together.

    Every worker runs the same growth loop (``TreeGrower.grow``) on its rows. Where the loop
    needs rows, each worker does its part on its own rows and the parts are summed among the
    workers (exact on integer cells): the fixed-point units (from the largest values) and root
    sums, the root's histogram, and for the splits of a step (one, or a depth-wise level) the
    children's row counts and the histogram of each left child that the loop wants. A worker
    builds its histogram of the child with fewer of its rows and derives the other one by
    subtraction from its own histogram of the parent.

    The histograms are summed by feature share (:meth:`feature_share`): the tree's features are
    cut into one run of consecutive features per worker, of about equal cells, and each worker
    receives the sums of its own share only (:meth:`Peers.reduce_scatter`), which its loop
    scans. The workers then agree on each scanned node's best split (:meth:`agree`: the best
    gain over the shares, ties to the lowest feature as on one machine). So every worker's loop
    takes the decisions of one machine holding every row, and receives half the bytes an
    all-reduce of the histograms would send it. A grower that does not ask for a share (the
    intermediate monotone method) gets every histogram whole (:meth:`Peers.all_reduce`).

    Parameters
    ----------
    node_rows : NodeRows
        This worker's rows of the tree (``TrainingRows.tree_rows``).
    peers : Peers
        The links to the other workers.
    """

    def __init__(self, node_rows: NodeRows, peers: Peers) -> None:
        self.node_rows = node_rows
        self.peers = peers
        data = node_rows.data
        self._offsets = data.histogram_layout.offsets.astype(np.int64)
        self._n_bins = data.mapper.n_bins.astype(np.int64)
        self._categorical = data.mapper.categorical if data.mapper.categorical.any() else None
        n_cells = data.histogram_layout.n_cells
        self._own = np.empty((0, n_cells, 2), FIXED_DTYPE)  # this worker's histograms of the open nodes
        self._free = np.zeros(1, np.int64)  # a stack of free own slots: its size, then the slots
        self._slot_of = np.zeros(0, np.int64)  # each node's own slot
        self._sums = np.zeros((0, 2), np.int64)  # each node's fixed-point sums over this worker's rows
        # the cells each worker receives the sums of, as rows (worker, first cell, end cell); the
        # whole histogram for worker 0 when the histograms are summed whole (all-reduce)
        self._whole = np.array([[0, 0, n_cells]], np.int64)
        self._runs = self._whole
        self._cells = np.array([n_cells])  # the cells each worker receives
        self._shared = False
        self._out = np.empty((0, 0), FIXED_DTYPE)  # the messages' buffer, a row per worker

    def begin_tree(self, features: np.ndarray | None) -> tuple[int, int, int, int, int]:
        """See ``grower.RowSource``: units are the largest any worker needs; sums add up."""
        n_own = self._own.shape[0]
        self._free[0] = n_own  # every own slot is free
        self._free[1:n_own + 1] = np.arange(n_own)
        self._runs, self._cells, self._shared = self._whole, self._whole[:, 2], False
        self._split_own_rows = BoundKernel(split_own_rows)  # called at every split of the tree
        rows = self.node_rows
        rows.use_features(features)
        extents = np.max(self.peers.all_gather(np.array(rows.extents()), "fixed-point extents"), axis=0)
        g_exp, h_exp = unit_exponents(float(extents[0]), float(extents[1]))
        g, h, n = rows.to_fixed_point(g_exp, h_exp)
        self._room(nodes=1, slots=0)
        self._sums[0] = g, h
        total = np.array([g, h, n], np.int64)
        self.peers.all_reduce(total, "root sums")
        return g_exp, h_exp, int(total[0]), int(total[1]), int(total[2])

    def local_rows(self) -> None:
        """See ``grower.RowSource``: the loop stops for every step on rows."""
        return None

    def feature_share(self, built: np.ndarray) -> np.ndarray:
        """See ``grower.RowSource``: the ``built`` features cut into one run of consecutive
        features per worker, by their cells (a worker's share may be empty when features are
        fewer than workers); this worker's run."""
        features = np.flatnonzero(built)
        self._shared = True
        self._cells = np.zeros(self.peers.size, np.int64)
        if features.size == 0:
            self._runs = np.empty((0, 3), np.int64)
            return np.zeros_like(built)
        first = self._offsets[features]
        width = self._n_bins[features] + 1
        before = np.cumsum(width) - width  # the built cells before each feature
        owner = before * self.peers.size // max(1, int(width.sum()))
        # features next to each other in the layout make one run of cells
        new_run = np.ones(features.size, bool)
        new_run[1:] = (owner[1:] != owner[:-1]) | (first[1:] != first[:-1] + width[:-1])
        starts = np.flatnonzero(new_run)
        ends = np.append(starts[1:], features.size) - 1
        self._runs = np.stack([owner[starts], first[starts], first[ends] + width[ends]], axis=1)
        np.add.at(self._cells, self._runs[:, 0], self._runs[:, 2] - self._runs[:, 1])
        share = np.zeros_like(built)
        share[features[owner == self.peers.rank]] = True
        return share

    def agree(self, splits: np.ndarray) -> np.ndarray:
        """See ``grower.RowSource``: every worker's best splits of the nodes (an all-gather),
        and for each node the best of them (``_kernels.shard.best_of_workers``)."""
        every = self.peers.all_gather(splits.ravel(), "best splits").reshape(self.peers.size, *splits.shape)
        best = np.empty_like(splits)
        best_of_workers(every, best)
        return best

    def root_histogram(self, g: int, h: int, out: np.ndarray) -> None:
        """See ``grower.RowSource``."""
        self._room(nodes=1, slots=1)
        slot = self._pop_slot()
        # sparse features' default cells come from the node's sums: this worker's, not the total
        self.node_rows.histogram(0, int(self._sums[0, 0]), int(self._sums[0, 1]), self._own[slot])
        self._slot_of[0] = slot
        flat, worker = self._sum(np.array([slot]), np.empty((0, 2), np.int64), "root histogram")
        put_share(flat, 0, self._runs, worker, out)

    def split_many(self, state: GrowthState) -> None:
        """See ``grower.RowSource``: this worker's rows split by one compiled call
        (``_kernels.shard.split_own_rows``), then one exchange of the children's row counts and
        of the left children's histograms (each worker's share of them) for every split."""
        k = int(state.counts[0]["n_pending"])
        pending, splits = state.pending[:k], state.splits[:k]
        self._room(nodes=int(splits[:, 1].max()) + 2, slots=k)
        rows = self.node_rows
        counts = np.empty((k, 2), np.int64)
        lefts = np.empty(k, np.int64)
        n_lefts = self._split_own_rows(splits, pending, rows.local_rows(), self._n_bins, self._offsets,
                                       self._categorical, self._own, self._slot_of, self._sums, self._free,
                                       *rows.segment_arrays, counts, lefts)
        flat, worker = self._sum(lefts[:n_lefts], counts, "split histograms")
        put_shares(flat, self._runs, worker, state.pool, pending, splits)

    def _sum(self, slots: np.ndarray, counts: np.ndarray, what: str) -> tuple[np.ndarray, int]:
        """Sum ``counts`` and the histograms of the own ``slots`` over every worker: each
        worker's share of them (a reduce-scatter), or the whole of them (an all-reduce) before
        :meth:`feature_share`. Returns the summed message and the worker whose share it holds."""
        sizes = counts.size + 2 * slots.size * self._cells
        if self._out.shape[0] < sizes.size or self._out.shape[1] < sizes.max():
            self._out = np.empty((sizes.size, max(int(sizes.max()), self._out.shape[1])), FIXED_DTYPE)
        take_shares(self._own, slots, self._runs, counts, self._out)
        parts = [self._out[w, :n] for w, n in enumerate(sizes)]
        if self._shared:
            return self.peers.reduce_scatter(parts, what), self.peers.rank
        self.peers.all_reduce(parts[0], what)
        return parts[0], 0

    def _pop_slot(self) -> int:
        slot = int(self._free[self._free[0]])
        self._free[0] -= 1
        return slot

    def _room(self, nodes: int, slots: int) -> None:
        """At least ``nodes`` node entries, and ``slots`` free own slots."""
        if self._slot_of.size < nodes:
            size = max(nodes, 2 * self._slot_of.size)
            self._slot_of = np.resize(self._slot_of, size)
            self._sums = np.resize(self._sums, (size, 2))
        start, end = self.node_rows.segment_arrays
        if start.size < nodes:
            size = max(nodes, 2 * start.size)
            self.node_rows.set_segments(np.resize(start, size), np.resize(end, size))
        if self._free[0] < slots:
            old = self._own.shape[0]
            more = max(slots - int(self._free[0]), old, 4)
            own = np.empty((old + more, *self._own.shape[1:]), FIXED_DTYPE)
            own[:old] = self._own
            self._own = own
            free = np.zeros(1 + old + more, np.int64)
            n_free = int(self._free[0])
            free[:1 + n_free] = self._free[:1 + n_free]
            free[1 + n_free:1 + n_free + more] = np.arange(old, old + more)
            free[0] = n_free + more
            self._free = free


def _concat(parts: list[Any], part_index: list[int], part_rows: list[int], name: str) -> np.ndarray | None:
    """One array from a worker's partitions of ``name`` (None when it was not given), each
    checked to have its partition of X's ``part_rows`` rows (the collections' partitions need
    not match: a DataFrame's lengths are unknown to the driver); errors name the partition."""
    if parts[0] is None:
        return None
    arrays = []
    for part, index, n_rows in zip(parts, part_index, part_rows):
        try:
            if name == "X":
                arrays.append(to_features(part, name))
            elif name == "qid":
                ids = np.asarray(part).ravel()
                if ids.shape[0] != n_rows:
                    raise DataError(f"qid has {ids.shape[0]} entries but X has {n_rows} rows")
                arrays.append(ids)
            else:
                arrays.append(to_vector(part, n_rows, name, nonnegative=name == "sample_weight",
                                        columns=name == "init_score"))
        except DataError as exc:
            raise DataError(f"partition {index}: {exc}") from None
    if name == "X":
        return concat_features(arrays)
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)
