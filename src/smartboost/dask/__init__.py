"""Distributed training on Dask: every worker keeps its partitions; histograms travel.

Design (``docs/concepts/distributed.md`` gives the reasoning and the costs):

- Dask places the data. The partitions of ``X`` and ``y`` (with weights, query ids and initial
  scores) are computed where Dask puts them; each worker that holds some starts one long-lived
  :class:`~smartboost.dask._shard.Shard` (a Dask actor) that concatenates its partitions and
  keeps them.
- Bin edges are global: each shard sends a random sample of its rows, in proportion to its
  size, and the driver fits the edges on the union (``bin_construct_sample_cnt`` rows in all),
  then every shard bins its rows with them.
- The driver (the process calling :func:`train`) runs the boosting loop of
  :func:`smartboost.train` unchanged (``engine.Trainer``), with the training rows replaced by
  :class:`~smartboost.dask._rows.DaskRows`, which forwards each step to every shard's
  ``TrainingRows`` and adds up what they return. Per iteration: gradients and the row sample on
  each shard (the scale of the importance samplers solved from per-shard bucket sums,
  :mod:`smartboost.sampling.distributed`); per tree: one step, in which the shards grow the tree
  together without the driver (:class:`~smartboost.dask._shard._PeerRows`). Each runs the
  growth loop of one machine on its rows; wherever the loop needs rows, each shard builds its
  part (fixed-point units and sums, the root's histogram, per split the children's row counts
  and the left child's histogram) and the shards sum the parts among themselves over direct
  links (:mod:`smartboost.dask._peers`), each receiving the sums of its own share of the
  features, which it scans; the shards then agree on each node's best split. Histogram cells
  are integers, so every shard's loop sees the histograms of one machine and takes its
  decisions: the trees equal those of one machine on the same rows and bin edges.
- Steps go over one direct connection per shard, and exchanges over one per pair of shards
  (``multiprocessing.connection``, authenticated with a random key per run): a Dask actor call
  costs milliseconds, an exchange of a split must cost much less. Every wait lasts at most ``timeout``
  seconds; a lost worker or a timeout stops training with
  :class:`~smartboost.errors.DistributedError`. Until the first iteration is done, the first
  shard runs each step before the others (see
  :meth:`~smartboost.dask._transport.Workers.call`).

Ranking keeps every query inside one partition (checked, with a clear error naming the query).
Not supported here yet: a training set listed among the evaluation sets
(``docs/concepts/distributed.md``).

Modules, by concern: ``_shard`` (the worker side: a worker's rows and the steps run on them),
``_peers`` (the links among the shards and their collectives), ``_transport`` (the driver's
connections to the shards, messages, timeouts), ``_placement``
(partitions, which worker holds each, starting the shards), ``_rows`` (the driver's row source
that the grower calls), ``_train`` (:func:`train`), ``_predict`` (:func:`predict`) and
``estimators`` (the scikit-learn estimators).
"""

from __future__ import annotations

try:
    import cloudpickle  # noqa: F401
    import dask  # noqa: F401
    import dask.array  # noqa: F401
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(f"smartboost.dask needs {exc.name or 'dask[distributed,dataframe]'}, which is not installed "
                      f"or does not import ({exc}): pip install 'smartboost[dask]'", name=exc.name) from exc

from ._predict import predict
from ._train import train
from .estimators import DaskSmartBoostClassifier, DaskSmartBoostRanker, DaskSmartBoostRegressor

__all__ = ["train", "predict", "DaskSmartBoostClassifier", "DaskSmartBoostRegressor", "DaskSmartBoostRanker"]
