"""The driver: :func:`train` resolves the parameters, places the data, starts the shards, learns
the bin edges and the start score from them, and runs the boosting loop of
:func:`smartboost.train` (``engine.Trainer``) on :class:`~smartboost.dask._rows.DaskRows`.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

import dask
import dask.dataframe as dd
import distributed
import numpy as np

from .._config import set_verbosity, threads
from .._data import check_largest_weight
from .._params import TrainingParams, _float, explicit_params, training_params, with_data_defaults
from ..binning import BinMapper, histogram_cells, missing_right_from_top, search_features
from ..booster import Booster
from ..callback import Checkpoint, TrainingCallback, callback_list
from ..dataset import Dataset, _feature_names, categorical_mask
from ..engine import Trainer, check_start, load_init_model, run_training, start_model, training_objective
from ..errors import DataError, DistributedError, ParameterError
from ..metrics import Feval, custom_metrics
from ..sklearn import _eval_pairs
from ._placement import check_aligned, check_queries_in_partitions, row_blocks, start_shards
from ._rows import DaskRows
from ._transport import AllAtOnceAfterFirstIteration, Workers


def train(client: distributed.Client | None, params: dict[str, Any] | None, X: Any, y: Any, *,
          sample_weight: Any = None, qid: Any = None, init_score: Any = None, num_boost_round: int = 100,
          eval_set: list[tuple[Any, Any]] | None = None, eval_names: list[str] | None = None,
          eval_sample_weight: list[Any] | None = None, eval_qid: list[Any] | None = None,
          feature_name: list[str] | None = None, callbacks: list[TrainingCallback] | None = None,
          init_model: Booster | str | None = None, reference: Any = None, timeout: float = 300.0,
          feval: Feval | list[Feval] | None = None) -> Booster:
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
        Row weights and initial raw scores, partitioned like ``X`` (a multiclass model's init
        scores: a 2-D dask array or a DataFrame, a column per class).
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
    callbacks : TrainingCallback or list of them, optional
        Run on the driver, as in :func:`smartboost.train`.
    init_model : Booster or path, optional
        Continue training this model (its bin edges are used).
    reference : Dataset or Booster, optional
        Use its bin edges instead of learning them from the data.
    timeout : float
        Seconds the driver waits for a worker's answer to a step (twice that for a tree, which
        the workers grow in one step), and a worker for another's part of an exchange, before
        training stops with :class:`~smartboost.errors.DistributedError`.
    feval : callable or list of callable, optional
        Custom metrics, as for :func:`smartboost.train` (``feval(preds, eval_data)``), computed on
        the driver for every evaluation set.

    Returns
    -------
    Booster
    """
    callbacks = callback_list(callbacks)  # checked before the cluster is touched
    custom = custom_metrics(feval)
    eval_set = _eval_pairs(eval_set)
    for name, given in (("eval_sample_weight", eval_sample_weight), ("eval_qid", eval_qid)):
        if given is not None and len(given) != len(eval_set):
            raise ParameterError(f"{name} has {len(given)} entries for {len(eval_set)} eval sets (give one per eval "
                                 "set, None where it has none)")
    if client is None:
        client = distributed.default_client()
    elif not isinstance(client, distributed.Client):
        raise ParameterError(f"client must be a distributed.Client (or None for the default one), got "
                             f"{type(client).__name__}")
    resolved = training_params(params, num_boost_round)
    set_verbosity(resolved.verbosity)
    objective = training_objective(resolved)
    if resolved.is_unbalance:
        raise ParameterError("is_unbalance counts the classes of every training row, which smartboost.dask does not "
                             "gather; give scale_pos_weight = negatives / positives instead")
    timeout = _float(0.0, low_open=True)("timeout", timeout)
    init = load_init_model(init_model, objective)

    check_aligned(X, {"y": y, "sample_weight": sample_weight, "qid": qid, "init_score": init_score})
    x_parts = row_blocks(X, "X", None)
    columns = [row_blocks(c, name, len(x_parts)) for name, c in
               (("y", y), ("sample_weight", sample_weight), ("qid", qid), ("init_score", init_score))]
    if columns[0] is None:
        raise DataError("y is None")
    parts = [dask.delayed(tuple)([x_parts[i]] + [None if c is None else c[i] for c in columns])
             for i in range(len(x_parts))]
    names_from_frame = [str(c) for c in X.columns] if isinstance(X, dd.DataFrame) else None

    authkey = secrets.token_bytes(32)
    actors, worker_names, part_index, actor_futures = start_shards(client, parts, authkey)
    workers = Workers([a.address().result() for a in actors], worker_names, authkey, timeout)
    try:
        described = workers.call("describe")
        n_rows = sum(d["n_rows"] for d in described)
        n_features = described[0]["n_features"]
        if n_rows == 0:
            raise DataError("X has no rows")
        check_largest_weight(max(d["largest_weight"] for d in described), "sample_weight")
        resolved = with_data_defaults(resolved, explicit_params(params), n_rows, n_features, objective)
        part_rows = np.zeros(len(parts), np.int64)
        part_queries = np.zeros(len(parts), np.int64)
        part_qids: list[Any] = [None] * len(parts)
        for d, indices in zip(described, part_index):
            part_rows[indices] = d["part_rows"]
            part_queries[indices] = d["part_queries"]
            for i, q in zip(indices, d["part_qids"]):
                part_qids[i] = q
        if qid is not None:
            check_queries_in_partitions(part_qids)
        workers.call_each("connect", [(rank, [d["peer_address"] for d in described], worker_names, timeout)
                                      for rank in range(len(described))], together=True)
        if isinstance(feature_name, str):  # as Dataset takes it: 'auto' or a list
            if feature_name != "auto":
                raise DataError(f"feature_name must be a list of names (or 'auto'), got the text {feature_name!r}")
            feature_name = None
        # checked here: a shard given names of another count, or repeated, failed to load the model and died
        names = _feature_names(feature_name if feature_name is not None else names_from_frame, n_features)
        mapper = _bin_edges(workers, described, resolved, init if init is not None else reference, names)
        cell_counts = sum(workers.call("bin", mapper))
        missing = cell_counts[histogram_cells(mapper.n_bins)[0].astype(np.int64) + mapper.n_bins]
        usable = search_features(mapper.n_bins, missing, cell_counts, n_rows,
                                 resolved.min_data_in_leaf if resolved.feature_pre_filter else None)
        label_values, label_weights = _merge_labels(workers.call("labels", resolved))
        objective.check_label(label_values, "label")  # over every worker's labels (a worker may hold one class)
        booster = start_model(resolved, objective, label_values, label_weights, init, init_score is not None, mapper,
                              names)
        # the labels' part of the start check (initial scores stay on the workers)
        check_start(objective, label_values, label_weights, booster._start_scores(label_values.size))
        part_offsets = np.cumsum(part_rows) - part_rows
        query_offsets = np.cumsum(part_queries) - part_queries
        from_top = missing_right_from_top(mapper, cell_counts, n_rows)
        workers.call_each("start", [(resolved, booster, usable, from_top, part_offsets[indices].tolist(), n_rows,
                                     query_offsets[indices].tolist(), int(part_queries.sum()))
                                    for indices in part_index])
        valid = _eval_datasets(eval_set, eval_sample_weight, eval_qid, booster)
        rows = DaskRows(workers, n_rows, resolved, objective, part_index, [d["part_rows"] for d in described],
                        n_features)
        trainer = Trainer(resolved, objective, booster, rows, usable, valid, eval_names, custom=custom,
                          from_top=from_top)
        try:
            with threads(_driver_threads(workers.link_ends, resolved.num_threads)):
                booster = run_training(trainer, [*callbacks, AllAtOnceAfterFirstIteration(workers)])
        except DistributedError as exc:
            for callback in callbacks:
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
    """Threads of the driver's own kernels (evaluation, the samplers' decisions): one when a shard runs on the
    driver's host (a link whose two ends have the same address), so that the driver does not take
    the cores the shard is working on; ``num_threads`` otherwise."""
    return 1 if any(local == peer for local, peer in link_ends) else num_threads


def _bin_edges(workers: Workers, described: list[dict], params: TrainingParams, reference: Any,
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
    wanted = params.bin_construct_sample_cnt
    quota = [d["n_rows"] if n_rows <= wanted else int(round(wanted * d["n_rows"] / n_rows)) for d in described]
    samples = workers.call_each("bin_sample", [(q, params.seed) for q in quota])
    mapper = BinMapper.from_params(params.as_dict()).fit(np.concatenate(samples), np.zeros(n_features, np.bool_))
    declared = params.categorical_feature
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
    for i, (X, y) in enumerate(eval_set):
        weight = eval_sample_weight[i] if eval_sample_weight else None
        qid = eval_qid[i] if eval_qid else None
        X, y, weight, qid = dask.compute(X, y, weight, qid)
        out.append(Dataset(X, y, weight=weight, qid=qid, reference=booster))
    return out
