"""Distributed training on Dask: every worker keeps its partitions; histograms travel.

Design (``docs/concepts/distributed.md`` gives the reasoning and the costs):

- Dask places the data. The partitions of ``X`` and ``y`` (with weights, query ids and initial
  scores) are computed where Dask puts them; each worker that holds some starts one long-lived
  :class:`_Shard` (a Dask actor) that concatenates its partitions and keeps them.
- Bin edges are global: each shard sends a random sample of its rows, in proportion to its
  size, and the driver fits the edges on the union (``bin_construct_sample_cnt`` rows in all),
  then every shard bins its rows with them. Categories are global too: each shard sends the
  categories of its rows with their counts, and the driver bins the union (as one machine bins
  every row's categories); shards map their own text categories to those bins by value.
- The driver (the process calling :func:`train`) runs the boosting loop of
  :func:`smartboost.train` unchanged (``engine.Trainer``), with the training rows replaced by
  :class:`_DaskRows`, which forwards each step to every shard's ``TrainingRows`` and adds up what
  they return. Per iteration: gradients and the row sample on each shard (the scale of the
  importance samplers solved from per-shard bucket sums, :mod:`smartboost.sampling.distributed`);
  per tree: the fixed-point units (a max), the root histogram (a sum); per split: each shard
  partitions its rows and returns the histogram of its rows in the left child, built for its
  smaller child and derived by subtraction from its own parent histogram, the driver sums them,
  derives the right child from its parent and scans both (depth-wise trees: every split of a
  level in one step). Histogram cells are integers, so the sums are exact and the trees equal
  those of one machine on the same rows and bin edges.
- Steps go over one direct connection per shard (``multiprocessing.connection``, authenticated
  with a random key per run): a Dask actor call costs milliseconds, a split must cost much less.
  Every step waits at most ``timeout`` seconds for every shard; a lost worker or a timeout stops
  training with :class:`~smartboost.errors.DistributedError`. Until the first iteration is done,
  the first shard runs each step before the others (see :meth:`_Workers.call`).

Ranking keeps every query inside one partition (checked, with a clear error naming the query).
Not supported here yet: ``step_rule`` line searches, the samplers uniform and goss (exact-count
uniform draws over every worker's rows), and a training set listed among the evaluation sets.
"""

from __future__ import annotations

import os
import secrets
import socket
import threading
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Client, Connection, Listener
from typing import Any
from urllib.parse import urlparse

import numpy as np

try:
    import cloudpickle
    import dask
    import dask.array as da
    import dask.dataframe as dd
    import distributed
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(f"smartboost.dask needs {exc.name or 'dask[distributed,dataframe]'}, which is not installed "
                      f"or does not import ({exc}): pip install 'smartboost[dask]'", name=exc.name) from exc

from ._common import FIXED_DTYPE
from ._config import set_verbosity, threads
from ._data import concat_features, to_features, to_query_starts, to_vector
from ._kernels.sampling import count_ties, radix_buckets
from ._params import explicit_params, resolve_params
from ._rows import TrainingRows
from .binning import BinMapper, BinnedData, category_counts
from .booster import Booster
from .callback import Checkpoint, TrainingCallback
from .dataset import Dataset, categorical_mask
from .engine import Trainer, check_training_params, run_training, start_scores
from .errors import DataError, DistributedError, ParameterError
from .grower import GrownTree, SplitRequest
from .objectives import make_objective
from .sampling import make_sampler, resolve_sampling_params
from .sampling.distributed import (count_top_for_sum_by_radix, kth_largest_by_radix, solve_scale_by_radix,
                                   total_by_radix)
from .sampling.importance import ProportionalSampler
from .sampling.trimming import TrimmingSampler
from .selection import resolve_selection_params
from .tree import bins_in_set
from .sklearn import SmartBoostClassifier, SmartBoostRanker, SmartBoostRegressor, _SmartBoostModel

__all__ = ["train", "predict", "DaskSmartBoostClassifier", "DaskSmartBoostRegressor", "DaskSmartBoostRanker"]

_UNSUPPORTED_SAMPLERS = {
    "uniform": "its exact sample size is one draw over all rows; use sampling='bernoulli'",
    "goss": "its uniform draw of an exact count among the other rows spans every worker; use sampling='mvs' "
            "(importance sampling by |g| and h)",
}

_BINNING_STREAM = 0x42494E5348  # the shards' binning samples: their own random stream


# -- the worker side ------------------------------------------------------------------------


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

    def op_labels(self, params: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
        """Check the labels (and bind the queries) for the objective; the distinct labels and
        their summed weights, from which the driver finds the start score."""
        self.objective = make_objective(params["objective"], params)
        self.label = self.objective.check_label(self.y, "label")
        self.objective.bind_queries(self.label, to_query_starts(None, self.qid, self.label.shape[0]))
        values, inverse = np.unique(self.label, return_inverse=True)
        weight = np.ones_like(self.label) if self.weight is None else self.weight
        return values, np.bincount(inverse, weights=weight, minlength=values.size)

    def op_start(self, params: dict[str, Any], booster: Booster, part_offsets: list[int]) -> None:
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


def _portable(exc: Exception) -> Exception:
    """``exc`` if it survives pickling, else a RuntimeError with its text."""
    try:
        cloudpickle.loads(cloudpickle.dumps(exc))
        return exc
    except Exception:
        return RuntimeError(f"{type(exc).__name__}: {exc}")


# -- the driver side ------------------------------------------------------------------------


def _link_ends(conn: Connection) -> tuple[str, str]:
    """The local and the peer address of a step link (equal when both ends are on one host; a
    link that is not TCP, which is always local, gives two empty strings)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        if sock.family not in (socket.AF_INET, socket.AF_INET6):
            return "", ""
        return sock.getsockname()[0], sock.getpeername()[0]


def _no_delay(conn: Connection) -> Connection:
    """Turn Nagle's algorithm off on a step link. Its messages are request-answer pairs, and a
    large one is written as a 4-byte header and a body: with Nagle on, the tail of a message can
    wait for the peer's delayed acknowledgement (40 ms on Linux)."""
    with socket.socket(fileno=os.dup(conn.fileno())) as sock:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


class _Workers:
    """The driver's connections to the shards; every step is sent to all, then answered by all.

    Parameters
    ----------
    addresses : list of (host, port)
    names : list of str
        Worker addresses, for messages.
    authkey : bytes
    timeout : float
        Seconds to wait for each shard's answer to each step.
    """

    def __init__(self, addresses: list[tuple[str, int]], names: list[str], authkey: bytes, timeout: float) -> None:
        self.names = names
        self.timeout = timeout
        self.one_at_a_time = True  # until the first iteration is done: see :meth:`call`
        self.conns = [_no_delay(Client(address, authkey=authkey)) for address in addresses]
        self.link_ends = [_link_ends(conn) for conn in self.conns]
        self.bytes_received = 0
        self.bytes_sent = 0

    def __len__(self) -> int:
        return len(self.conns)

    def call(self, step: str, *args: Any) -> list[Any]:
        """Run ``step(*args)`` on every shard; their answers in shard order.

        While ``one_at_a_time`` is set (setup and the first iteration, when the shards compile
        or load their kernels), the first shard runs each step alone and the others start when
        it has answered, so they load the kernels it compiled: processes that share numba's
        cache (one machine, or a shared file system) must not compile the same kernel at once,
        or the cache can end up holding the index of one compilation and the code of another,
        which crashes later loads (numba issue #4807). It costs one step's time more, whatever
        the number of shards.
        """
        return self._run(step, [cloudpickle.dumps((step, args), protocol=5)] * len(self.conns))

    def call_each(self, step: str, args: Sequence[tuple]) -> list[Any]:
        """Run ``step(*args[i])`` on shard ``i``; their answers in shard order."""
        return self._run(step, [cloudpickle.dumps((step, a), protocol=5) for a in args])

    def _run(self, step: str, messages: list[bytes]) -> list[Any]:
        first = 1 if self.one_at_a_time else 0
        answers = []
        for group in (range(first), range(first, len(self.conns))):
            for i in group:
                self._send(i, step, self.conns[i], messages[i])
            answers += [self._receive(i, step) for i in group]
        return answers

    def _send(self, i: int, step: str, conn: Any, message: bytes) -> None:
        try:
            conn.send_bytes(message)
        except OSError as exc:
            raise DistributedError(f"lost the connection to worker {self.names[i]} sending step '{step}': the "
                                   "worker died or was closed") from exc
        self.bytes_sent += len(message)

    def _receive(self, i: int, step: str) -> Any:
        conn = self.conns[i]
        try:
            if not conn.poll(self.timeout):
                raise DistributedError(f"worker {self.names[i]} did not answer step '{step}' within {self.timeout:g} s "
                                       "(smartboost.dask.train's timeout)")
            message = conn.recv_bytes()
        except (EOFError, OSError) as exc:
            raise DistributedError(f"lost the connection to worker {self.names[i]} during step '{step}': the worker "
                                   "died or was closed") from exc
        self.bytes_received += len(message)
        status, *payload = cloudpickle.loads(message)
        if status == "error":
            exc, remote_traceback = payload
            exc.add_note(f"(raised on worker {self.names[i]} in step '{step}'; the worker's traceback follows)\n"
                         f"{remote_traceback.rstrip()}")
            raise exc
        return payload[0]

    def close(self) -> None:
        """Tell the shards to drop their rows, and close the connections (errors ignored)."""
        for conn in self.conns:
            try:
                conn.send_bytes(cloudpickle.dumps(("close", ()), protocol=5))
                if conn.poll(self.timeout):
                    conn.recv_bytes()
            except (EOFError, OSError):
                pass
            conn.close()


class _AllAtOnceAfterFirstIteration(TrainingCallback):
    """Lets the shards run their steps at the same time once every kernel is compiled (see
    :meth:`_Workers.call`)."""

    def __init__(self, workers: _Workers) -> None:
        self.workers = workers

    def after_iteration(self, env: Any) -> bool:
        self.workers.one_at_a_time = False
        return False


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

    def __init__(self, workers: _Workers, n_rows: int, params: dict[str, Any], part_index: list[list[int]],
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
        freq = self.params["sampling_freq"]
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
                rho = self.params.get("smart_rho")
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


# -- data placement -------------------------------------------------------------------------


def _partitions(collection: Any, name: str, n_parts: int | None) -> list[Any] | None:
    """The delayed row blocks of a dask collection (None stays None)."""
    if collection is None:
        return None
    if isinstance(collection, da.Array):
        if collection.ndim == 2 and len(collection.chunks[1]) > 1:
            collection = collection.rechunk({1: collection.shape[1]})
        blocks = list(collection.to_delayed().ravel())
    elif isinstance(collection, (dd.DataFrame, dd.Series)):
        blocks = list(collection.to_delayed())
    else:
        raise DataError(f"{name} must be a dask array or a dask DataFrame/Series, got {type(collection).__name__}")
    if n_parts is not None and len(blocks) != n_parts:
        raise DataError(f"{name} has {len(blocks)} partitions but X has {n_parts}; partition them alike")
    return blocks


def _check_aligned(X: Any, others: dict[str, Any]) -> None:
    """Arrays must have X's row chunks (dask checks DataFrames' divisions itself)."""
    if not isinstance(X, da.Array):
        return
    for name, array in others.items():
        if isinstance(array, da.Array) and array.chunks[0] != X.chunks[0]:
            raise DataError(f"{name} has row chunks {array.chunks[0]} but X has {X.chunks[0]}; rechunk it like X")


def _start_shards(client: distributed.Client, parts: list[Any],
                  authkey: bytes) -> tuple[list, list[str], list[list[int]], list]:
    """Compute the partitions where Dask puts them and start one shard per worker that holds any.

    Returns the actors, their workers' addresses, the indices of the partitions each holds (in
    order), and the actor futures (kept alive by the caller).
    """
    futures = client.compute(parts)
    distributed.wait(futures)
    for future in futures:
        if future.status == "error":
            future.result()  # raises the partition's error
    owner = {key: sorted(workers)[0] for key, workers in client.who_has(futures).items() if workers}
    by_worker: dict[str, list[int]] = {}
    for i, future in enumerate(futures):
        by_worker.setdefault(owner[future.key], []).append(i)
    names = list(by_worker)
    actor_futures = [client.submit(_Shard, [futures[i] for i in by_worker[w]], by_worker[w], authkey, workers=[w],
                                   allow_other_workers=False, actor=True, pure=False) for w in names]
    actors = [f.result() for f in actor_futures]
    return actors, names, [by_worker[w] for w in names], actor_futures


# -- public API -----------------------------------------------------------------------------


def train(client: distributed.Client | None, params: dict[str, Any] | None, X: Any, y: Any, *,
          sample_weight: Any = None, qid: Any = None, init_score: Any = None, num_boost_round: int = 100,
          eval_set: list[tuple[Any, Any]] | None = None, eval_names: list[str] | None = None,
          eval_sample_weight: list[Any] | None = None, eval_qid: list[Any] | None = None,
          feature_name: list[str] | None = None, callbacks: list[TrainingCallback] | None = None,
          init_model: Booster | str | None = None, reference: Any = None, timeout: float = 300.0) -> Booster:
    """Train on data spread over a Dask cluster; the same model as :func:`smartboost.train`.

    Parameters
    ----------
    client : distributed.Client or None
        The cluster (None: Dask's default client).
    params : dict
        Training parameters, as for :func:`smartboost.train`.
    X : dask array or dask DataFrame, shape (n_rows, n_features)
        Features, partitioned by rows.
    y : dask array or dask Series
        Labels, partitioned like ``X``.
    sample_weight, init_score : dask array or Series, optional
        Row weights and initial raw scores, partitioned like ``X``.
    qid : dask array or Series, optional
        Ranking: the query id of every row; a query must lie inside one partition, ids sorted.
    num_boost_round : int
        Iterations, unless ``params`` sets ``num_iterations``.
    eval_set : list of (X, y), optional
        Evaluation sets (numpy or dask); they are gathered and evaluated on the driver.
    eval_names, eval_sample_weight, eval_qid : list, optional
        Their names, weights and query ids.
    feature_name : list of str, optional
        Feature names (default: the DataFrame's columns).
    callbacks : list of TrainingCallback, optional
        Run on the driver, as in :func:`smartboost.train`.
    init_model : Booster or path, optional
        Continue training this model (its bin edges are used).
    reference : Dataset or Booster, optional
        Use its bin edges instead of learning them from the data.
    timeout : float
        Seconds every distributed step may take before training stops with an error.

    Returns
    -------
    Booster
    """
    if client is None:
        client = distributed.default_client()
    given = explicit_params(params)
    resolved = resolve_params(given)
    if "num_iterations" not in given:
        resolved["num_iterations"] = resolve_params({"num_iterations": num_boost_round})["num_iterations"]
    resolve_sampling_params(resolved, given)
    resolve_selection_params(resolved, given)
    _check_distributed_params(resolved)
    set_verbosity(resolved["verbosity"])
    objective = make_objective(resolved["objective"], resolved)
    check_training_params(resolved, objective)
    if not timeout > 0:
        raise ParameterError(f"timeout must be positive, got {timeout}")
    init = _as_booster(init_model)

    _check_aligned(X, {"y": y, "sample_weight": sample_weight, "qid": qid, "init_score": init_score})
    x_parts = _partitions(X, "X", None)
    columns = [_partitions(c, name, len(x_parts)) for name, c in
               (("y", y), ("sample_weight", sample_weight), ("qid", qid), ("init_score", init_score))]
    if columns[0] is None:
        raise DataError("y is None")
    parts = [dask.delayed(tuple)([x_parts[i]] + [None if c is None else c[i] for c in columns])
             for i in range(len(x_parts))]
    names_from_frame = [str(c) for c in X.columns] if isinstance(X, dd.DataFrame) else None

    authkey = secrets.token_bytes(32)
    actors, worker_names, part_index, actor_futures = _start_shards(client, parts, authkey)
    workers = _Workers([a.address().result() for a in actors], worker_names, authkey, timeout)
    try:
        described = workers.call("describe")
        n_rows = sum(d["n_rows"] for d in described)
        n_features = described[0]["n_features"]
        if n_rows == 0:
            raise DataError("X has no rows")
        part_rows = np.zeros(len(parts), np.int64)
        part_qids: list[Any] = [None] * len(parts)
        for d, indices in zip(described, part_index):
            part_rows[indices] = d["part_rows"]
            for i, q in zip(indices, d["part_qids"]):
                part_qids[i] = q
        if qid is not None:
            _check_queries_in_partitions([q for q in part_qids if q is not None])
        names = feature_name or names_from_frame or [f"Column_{i}" for i in range(n_features)]
        mapper = _bin_edges(workers, described, resolved, init if init is not None else reference, names)
        missing = sum(workers.call("bin", mapper))
        usable = (mapper.n_bins > 1) | (missing > 0)
        label_values, label_weights = _merge_labels(workers.call("labels", resolved))
        if init is not None:
            base_score, trees = init.base_score, list(init.trees)
        elif resolved["boost_from_average"] and init_score is None:
            base_score, trees = objective.init_score(label_values, label_weights), []
        else:
            base_score, trees = (0.0 if objective.num_outputs == 1 else np.zeros(objective.num_outputs)), []
        booster = Booster._new(objective=objective, bin_mapper=mapper, base_score=base_score, feature_names=names,
                               params=resolved, trees=trees)
        part_offsets = np.concatenate([[0], np.cumsum(part_rows)[:-1]])
        workers.call_each("start", [(resolved, booster, part_offsets[indices].tolist()) for indices in part_index])
        valid = _eval_datasets(eval_set, eval_sample_weight, eval_qid, booster)
        rows = _DaskRows(workers, n_rows, resolved, part_index, [d["part_rows"] for d in described])
        trainer = Trainer(resolved, objective, booster, rows, usable, valid, eval_names)
        try:
            with threads(_driver_threads(workers.link_ends, resolved["num_threads"])):
                booster = run_training(trainer, [*(callbacks or []), _AllAtOnceAfterFirstIteration(workers)])
        except DistributedError as exc:
            for callback in callbacks or []:
                if isinstance(callback, Checkpoint) and os.path.exists(callback.path):
                    exc.add_note(f"the last checkpoint is {callback.path}: continue from it with "
                                 f"init_model='{callback.path}'")
            raise
        rows._record_traffic()
        booster.iteration_stats["bytes"] = rows.traffic
        return booster
    finally:
        workers.close()
        del actors
        client.cancel(actor_futures)


def _driver_threads(link_ends: list[tuple[str, str]], num_threads: int) -> int:
    """Threads of the driver's own kernels (split scans, evaluation): one when a shard runs on the
    driver's host (a link whose two ends have the same address), so that the driver does not take
    cores from it (200,000 rows, 2 local workers: 179.4 against 228.7 ms per tree with 2 driver
    threads); ``num_threads`` otherwise."""
    return 1 if any(local == peer for local, peer in link_ends) else num_threads


def _check_distributed_params(params: dict[str, Any]) -> None:
    sampling = params["sampling"]
    if sampling in _UNSUPPORTED_SAMPLERS:
        raise ParameterError(f"sampling='{sampling}' is not supported by smartboost.dask: "
                             f"{_UNSUPPORTED_SAMPLERS[sampling]}")
    if params["sampling_unit"] == "query":
        raise ParameterError("sampling_unit='query' is not supported by smartboost.dask yet; sample rows "
                             "(sampling_unit='row')")
    if params["step_rule"] in ("line", "leaf_line"):
        raise ParameterError(f"step_rule='{params['step_rule']}' is not supported by smartboost.dask yet; use "
                             "'shrinkage' or 'smooth'")


def _as_booster(model: Booster | str | None) -> Booster | None:
    if model is None or isinstance(model, Booster):
        return model
    return Booster(model_file=model)


def _check_queries_in_partitions(part_qids: list[tuple[Any, Any]]) -> None:
    """Each partition's (first, last) query id; a query spanning two partitions is an error."""
    for i in range(1, len(part_qids)):
        if part_qids[i][0] == part_qids[i - 1][1]:
            raise DataError(f"query {part_qids[i][0]!r} spans two partitions; repartition so that every query lies "
                            "in one partition (e.g. set the index of a DataFrame to the query id)")


def _bin_edges(workers: _Workers, described: list[dict], params: dict[str, Any], reference: Any,
               names: list[str]) -> BinMapper:
    """Bin edges learned from a sample of every shard's rows, and the bins of the categorical
    features from every shard's categories (or the reference's bins)."""
    n_features = len(names)
    if reference is not None:
        mapper = getattr(reference, "bin_mapper", None)
        if not isinstance(mapper, BinMapper):
            raise DataError(f"reference must be a Dataset or a Booster, got {type(reference).__name__}")
        if mapper.n_features != n_features:
            raise DataError(f"X has {n_features} features but the reference has {mapper.n_features}")
        return mapper
    n_rows = sum(d["n_rows"] for d in described)
    wanted = params["bin_construct_sample_cnt"]
    quota = [d["n_rows"] if n_rows <= wanted else int(round(wanted * d["n_rows"] / n_rows)) for d in described]
    samples = workers.call_each("bin_sample", [(q, params["seed"]) for q in quota])
    mapper = BinMapper.from_params(params).fit(np.concatenate(samples), np.zeros(n_features, np.bool_))
    declared = params["categorical_feature"]
    categorical = (np.logical_or.reduce([d["from_dtype"] for d in described]) if declared == "auto"
                   else categorical_mask(declared, names, "categorical_feature"))
    if categorical.any():
        mapper.set_categories(_merge_categories(workers.call("categories", np.flatnonzero(categorical).tolist()),
                                                names))
    return mapper


def _merge_categories(answers: list[dict[int, tuple[np.ndarray, np.ndarray]]],
                      names: list[str]) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Every shard's categories of each categorical feature, with their summed counts."""
    merged = {}
    for f in answers[0]:
        values = [answer[f][0] for answer in answers]
        if len({v.dtype == object for v in values if v.size}) > 1:
            raise DataError(f"column {names[f]!r} holds text on some workers and integer codes on others")
        distinct, inverse = np.unique(np.concatenate(values), return_inverse=True)
        counts = np.bincount(inverse, weights=np.concatenate([answer[f][1] for answer in answers]),
                             minlength=distinct.size)
        merged[f] = (distinct, counts.astype(np.int64))
    return merged


def _merge_labels(answers: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct labels of every shard with their summed weights."""
    values, inverse = np.unique(np.concatenate([a[0] for a in answers]), return_inverse=True)
    return values, np.bincount(inverse, weights=np.concatenate([a[1] for a in answers]), minlength=values.size)


def _eval_datasets(eval_set, eval_sample_weight, eval_qid, booster: Booster) -> list[Dataset]:
    """Evaluation sets, gathered to the driver and binned with the training edges."""
    out = []
    for i, (X, y) in enumerate(eval_set or []):
        weight = eval_sample_weight[i] if eval_sample_weight else None
        qid = eval_qid[i] if eval_qid else None
        X, y, weight, qid = dask.compute(X, y, weight, qid)
        out.append(Dataset(X, y, weight=weight, qid=qid, reference=booster))
    return out


def predict(booster: Booster, X: Any, raw_score: bool = False, num_iteration: int | None = None) -> Any:
    """Predict a dask collection block by block, where its partitions live.

    Parameters
    ----------
    booster : Booster
    X : dask array or dask DataFrame
    raw_score, num_iteration
        As for :meth:`Booster.predict`.

    Returns
    -------
    dask array (from an array) or dask Series/DataFrame (from a DataFrame): one value per row,
    or one column per class for a multiclass model.
    """
    n_classes = booster.num_model_per_iteration()
    if isinstance(X, da.Array):
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: X.shape[1]})
        if n_classes == 1:
            return X.map_blocks(_predict_block, booster, raw_score, num_iteration, drop_axis=1, dtype=np.float64)
        return X.map_blocks(_predict_block, booster, raw_score, num_iteration, chunks=(X.chunks[0], (n_classes,)),
                            dtype=np.float64)
    if isinstance(X, dd.DataFrame):
        import pandas as pd
        meta = pd.Series(dtype=np.float64) if n_classes == 1 else pd.DataFrame(
            {k: pd.Series(dtype=np.float64) for k in range(n_classes)})
        return X.map_partitions(_predict_frame, booster, raw_score, num_iteration, meta=meta)
    raise DataError(f"X must be a dask array or a dask DataFrame, got {type(X).__name__}")


def _predict_block(block: np.ndarray, booster: Booster, raw_score: bool, num_iteration: int | None) -> np.ndarray:
    return booster.predict(block, raw_score=raw_score, num_iteration=num_iteration)


def _predict_frame(frame: Any, booster: Booster, raw_score: bool, num_iteration: int | None) -> Any:
    import pandas as pd
    out = booster.predict(frame, raw_score=raw_score, num_iteration=num_iteration)
    return pd.Series(out, index=frame.index) if out.ndim == 1 else pd.DataFrame(out, index=frame.index)


# -- scikit-learn estimators ----------------------------------------------------------------


class _DaskModel:
    """Dask variants of the scikit-learn estimators: ``fit`` trains with :func:`train` on dask
    collections, ``predict`` returns dask collections (as LightGBM's ``DaskLGBM*``).

    Extra parameters: ``client`` (None: Dask's default client when fitting) and ``timeout``
    (seconds per distributed step). Every other parameter is that of the scikit-learn estimator.
    """

    _NOT_TRAINING_PARAMS = _SmartBoostModel._NOT_TRAINING_PARAMS | {"client", "timeout"}

    def __init__(self, *, client: distributed.Client | None = None, timeout: float = 300.0, **kwargs: Any) -> None:
        self.client = client
        self.timeout = timeout
        super().__init__(**kwargs)

    @classmethod
    def _named_params(cls) -> list[str]:
        return _SmartBoostModel._named_params() + ["client", "timeout"]

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return sorted(cls._named_params())

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["client"] = None  # a client does not travel; fitted models do
        return state

    def _dask_target(self, y: Any) -> Any:
        """The training labels as :func:`train` takes them (classifiers: learn ``classes_``)."""
        return y

    def _fit_dask(self, X: Any, y: Any, sample_weight: Any, eval_set: list[tuple[Any, Any]] | None,
                  eval_names: list[str] | None, eval_sample_weight: list[Any] | None, init_model: Any,
                  qid: Any = None, eval_qid: list[Any] | None = None) -> _DaskModel:
        y = self._dask_target(y)
        eval_set = [(X_valid, self._dask_eval_target(y_valid)) for X_valid, y_valid in eval_set or []]
        self._Booster = train(self.client, self._train_params(), X, y, sample_weight=sample_weight, qid=qid,
                              num_boost_round=self.n_estimators, eval_set=eval_set or None, eval_names=eval_names,
                              eval_sample_weight=eval_sample_weight, eval_qid=eval_qid, callbacks=self.callbacks,
                              init_model=init_model, timeout=self.timeout)
        self.n_features_in_ = X.shape[1]
        if isinstance(X, dd.DataFrame):
            self.feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
        return self

    def _dask_eval_target(self, y: Any) -> Any:
        return y

    def fit(self, X: Any, y: Any, sample_weight: Any = None, *, eval_set: list[tuple[Any, Any]] | None = None,
            eval_names: list[str] | None = None, eval_sample_weight: list[Any] | None = None,
            init_model: Booster | str | None = None) -> _DaskModel:
        """Train on the dask collections ``X, y`` (partitioned alike); see :func:`train`."""
        return self._fit_dask(X, y, sample_weight, eval_set, eval_names, eval_sample_weight, init_model)

    def _raw_predict(self, X: Any, raw_score: bool) -> Any:
        return predict(self.booster_, X, raw_score=raw_score)

    def to_local(self) -> _SmartBoostModel:
        """The same fitted model as the plain scikit-learn estimator (numpy in, numpy out)."""
        local = self._local_class()(**{k: v for k, v in self.get_params().items() if k not in ("client", "timeout")})
        local.__dict__.update({k: v for k, v in self.__dict__.items() if k.endswith("_") or k == "_Booster"})
        return local


class DaskSmartBoostRegressor(_DaskModel, SmartBoostRegressor):
    """:class:`~smartboost.sklearn.SmartBoostRegressor` on Dask; see :class:`_DaskModel`."""

    @staticmethod
    def _local_class() -> type:
        return SmartBoostRegressor

    def predict(self, X: Any) -> Any:
        """Predicted values, a dask collection partitioned like ``X``."""
        return self._raw_predict(X, raw_score=False)


class DaskSmartBoostClassifier(_DaskModel, SmartBoostClassifier):
    """:class:`~smartboost.sklearn.SmartBoostClassifier` on Dask; see :class:`_DaskModel`."""

    @staticmethod
    def _local_class() -> type:
        return SmartBoostClassifier

    def _dask_target(self, y: Any) -> Any:
        classes = np.unique(np.asarray(y.unique().compute() if isinstance(y, dd.Series) else da.unique(y).compute()))
        if classes.size < 2:
            raise DataError(f"y has one class ({classes[0]!r}); a classifier needs two" if classes.size else "y is empty")
        self.classes_, self.n_classes_ = classes, classes.size
        return self._dask_eval_target(y)

    def _dask_eval_target(self, y: Any) -> Any:
        if isinstance(y, dd.Series):
            return y.map_partitions(self._encode_target, meta=(y.name, np.float64))
        if isinstance(y, da.Array):
            return y.map_blocks(self._encode_target, dtype=np.float64)
        return self._encode_target(y)

    def predict_proba(self, X: Any) -> Any:
        """Class probabilities, a dask collection with one column per class of ``classes_``."""
        p = self._raw_predict(X, raw_score=False)
        if self.n_classes_ > 2:
            return p
        if isinstance(p, da.Array):
            return da.stack([1.0 - p, p], axis=1)
        return p.map_partitions(_two_class_frame, meta={0: np.float64, 1: np.float64})

    def predict(self, X: Any) -> Any:
        """Predicted class labels, a dask collection partitioned like ``X``."""
        raw = self._raw_predict(X, raw_score=True)
        if isinstance(raw, da.Array):
            return raw.map_blocks(_class_labels, self.classes_, drop_axis=1 if raw.ndim == 2 else None,
                                  dtype=self.classes_.dtype)
        return raw.map_partitions(_class_label_series, self.classes_, meta=(None, self.classes_.dtype))


def _class_labels(raw: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Labels from raw scores: log-odds of ``classes[1]`` (1-D), or one column per class."""
    return classes[(raw > 0).astype(np.intp) if raw.ndim == 1 else np.argmax(raw, axis=1)]


def _class_label_series(raw: Any, classes: np.ndarray) -> Any:
    import pandas as pd
    return pd.Series(_class_labels(raw.to_numpy(), classes), index=raw.index)


def _two_class_frame(p: Any) -> Any:
    import pandas as pd
    return pd.DataFrame({0: 1.0 - p, 1: p}, index=p.index)


class DaskSmartBoostRanker(_DaskModel, SmartBoostRanker):
    """:class:`~smartboost.sklearn.SmartBoostRanker` on Dask; queries are given per row as
    ``qid`` (every query inside one partition). See :class:`_DaskModel`."""

    @staticmethod
    def _local_class() -> type:
        return SmartBoostRanker

    def fit(self, X: Any, y: Any, *, qid: Any = None, sample_weight: Any = None,
            eval_set: list[tuple[Any, Any]] | None = None, eval_qid: list[Any] | None = None,
            eval_names: list[str] | None = None, init_model: Booster | str | None = None) -> DaskSmartBoostRanker:
        """Train on ``X, y`` (relevance grades) with the query id of every row, ``qid``."""
        if qid is None:
            raise ValueError("DaskSmartBoostRanker.fit needs qid= (a query id per row, partitioned like X)")
        if eval_set and (eval_qid is None or len(eval_qid) != len(eval_set)):
            raise ValueError("give the eval sets' queries as eval_qid (one entry per eval set)")
        return self._fit_dask(X, y, sample_weight, eval_set, eval_names, None, init_model, qid, eval_qid)

    def predict(self, X: Any) -> Any:
        """Relevance scores (higher ranks first), a dask collection partitioned like ``X``."""
        return self._raw_predict(X, raw_score=True)
