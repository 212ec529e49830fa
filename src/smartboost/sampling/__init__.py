"""Row samplers (docs/concepts/sampling.md), behind one interface (:class:`~smartboost.sampling.base.Sampler`).

``sampling`` selects one of :data:`SAMPLERS` (the sampling parameters are checked together at
the training boundary, ``_params.training_params``); :func:`make_sampler` builds the sampler of
a run, drawing whole queries with ``sampling_unit='query'`` (:mod:`smartboost.sampling.queries`).
"""

from __future__ import annotations


import numpy as np

from .._params import TrainingParams
from .auto import AutoSampler
from .base import NoSampling, Sampler, SamplingContext
from .goss import GOSSSampler
from .importance import LossSampler, MVSSampler, Smart1Sampler, Smart2Sampler
from .queries import QuerySampler
from .random import BernoulliSampler, UniformSampler
from .trimming import TrimmingSampler

SAMPLERS: dict[str, type[Sampler]] = {cls.name: cls for cls in (
    NoSampling, UniformSampler, BernoulliSampler, TrimmingSampler, GOSSSampler, Smart1Sampler, Smart2Sampler,
    MVSSampler, LossSampler, AutoSampler)}

__all__ = ["SAMPLERS", "Sampler", "SamplingContext", "make_sampler"]


def make_sampler(params: TrainingParams, n_rows: int, row_ids: np.ndarray | None = None,
                 total_rows: int | None = None, query_ids: np.ndarray | None = None,
                 total_queries: int | None = None, n_features: int | None = None) -> Sampler:
    """The sampler selected by training parameters (``TrainingParams``), for ``n_rows`` rows
    with ids ``row_ids`` among every machine's ``total_rows`` rows (None: ids 0 .. n_rows - 1,
    and ``n_rows`` in all) of ``n_features`` features (None: not known), and when it draws whole
    queries, queries with ids ``query_ids`` among every machine's ``total_queries`` (None: their
    index, and their number)."""
    sampler = SAMPLERS[params.sampling](params, n_rows)
    sampler.n_features = n_features
    sampler.row_ids = row_ids
    sampler.total_rows = n_rows if total_rows is None else total_rows
    if params.sampling_unit != "query":
        return sampler
    queries = QuerySampler(sampler)
    queries.query_ids, queries.total_queries = query_ids, total_queries
    return queries
