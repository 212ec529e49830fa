"""Data placement: the partitions of the dask collections, which worker holds each, and one
shard started on every worker that holds any.

Dask places the data: the partitions are computed where Dask puts them and stay there; a
partition held by several workers belongs to the first of them by address. Ranking needs every
query inside one partition, which is checked here.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import dask.dataframe as dd
import distributed
import numpy as np

from ..errors import DataError
from ._shard import Shard


def row_blocks(collection: Any, name: str, n_parts: int | None) -> list[Any] | None:
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


def check_aligned(X: Any, others: dict[str, Any]) -> None:
    """Arrays must have X's row chunks (dask checks DataFrames' divisions itself)."""
    if not isinstance(X, da.Array):
        return
    for name, array in others.items():
        if isinstance(array, da.Array) and array.chunks[0] != X.chunks[0]:
            raise DataError(f"{name} has row chunks {array.chunks[0]} but X has {X.chunks[0]}; rechunk it like X")


def check_queries_in_partitions(part_qids: list[np.ndarray]) -> None:
    """Each partition's query ids (one per run of equal ids), in partition order: an id in two
    partitions is an error, whether its query was cut or the id comes back further on (each
    worker would take its rows as a query of their own, where one machine refuses the qid)."""
    partition_of: dict[Any, int] = {}
    try:
        for i, ids in enumerate(part_qids):
            for q in [] if ids is None else ids.tolist():  # None: an empty partition, held by no shard
                j = partition_of.setdefault(q, i)
                if j != i:
                    raise DataError(f"query {q!r} spans two partitions ({j} and {i}); repartition so that every "
                                    "query lies in one partition (e.g. set the index of a DataFrame to the query id)")
    except TypeError:  # an id that is not hashable: the shards' own qid check names it
        return


_PART_NAMES = ("X", "y", "sample_weight", "qid", "init_score")


def _lengths(part: tuple) -> list[int | None]:
    """The rows of each entry of a computed partition ``(X, y, weight, qid, init_score)``."""
    return [None if a is None else int(np.shape(a)[0]) if np.ndim(a) else 1 for a in part]


def _check_empty(index: int, lengths: list[int | None]) -> bool:
    """Whether partition ``index`` has rows; an empty X whose other entries have some is an error."""
    if lengths[0]:
        return True
    for name, n in zip(_PART_NAMES[1:], lengths[1:]):
        if n:
            raise DataError(f"partition {index}: {name} has {n} entries but X has 0 rows")
    return False


def start_shards(client: distributed.Client, parts: list[Any],
                  authkey: bytes) -> tuple[list, list[str], list[list[int]], list]:
    """Compute the partitions where Dask puts them and start one shard per worker that holds any.

    Returns the actors, their workers' addresses, the indices of the partitions each holds (in
    order; empty partitions are left out), and the actor futures (kept alive by the caller).
    """
    futures = client.compute(parts)
    distributed.wait(futures)
    for future in futures:
        if future.status == "error":
            future.result()  # raises the partition's error
    # empty partitions (a filtered DataFrame's) hold nothing to train on: no shard takes them,
    # and a worker that holds only such partitions starts none
    filled = [i for i, lengths in enumerate(client.gather(client.map(_lengths, futures, pure=False)))
              if _check_empty(i, lengths)]
    if not filled:
        raise DataError("X has no rows")
    owner = {key: sorted(workers)[0] for key, workers in client.who_has(futures).items() if workers}
    by_worker: dict[str, list[int]] = {}
    for i in filled:
        by_worker.setdefault(owner[futures[i].key], []).append(i)
    names = list(by_worker)
    actor_futures = [client.submit(Shard, [futures[i] for i in by_worker[w]], by_worker[w], authkey, workers=[w],
                                   allow_other_workers=False, actor=True, pure=False) for w in names]
    actors = [f.result() for f in actor_futures]
    return actors, names, [by_worker[w] for w in names], actor_futures
