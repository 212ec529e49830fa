"""The sampler interface: every row sampler draws (rows, weights) from one iteration's state.

A sampler returns the ids of the rows the next tree is grown on, in increasing order, and a
per-row weight for each of them (indexed by row id): the row's own weight times its
inverse-probability weight ``1 / p_i``, so weighted sums over the sample are unbiased for sums
over all rows (docs/concepts/sampling.md; trimming is biased by design). The tree learner never needs to
know which sampler ran.

Randomness: each sampler draws from its own stream, derived from the ``seed`` parameter and a
constant naming the stream, and each iteration from its own sub-stream, so changing the sampler
changes no other random choice, and a row's draw does not depend on the thread count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from .._kernels.importance import abs_fixed_sum
from .._kernels.random import fill_row_ids, hash_pair
from .._params import TrainingParams
from ..objectives import Objective
from .chunks import chunk_layout

_SAMPLING_STREAM = 0x53414D504C45  # "SAMPLE"


def mix_keys(a: int, b: int) -> np.uint64:
    """A 64-bit key mixing two integers (splitmix64 of a, combined with b)."""
    return np.uint64(hash_pair(np.uint64(a), np.uint64(b)))


@dataclass
class SamplingContext:
    """What a sampler may read at one iteration.

    Attributes
    ----------
    iteration : int
        0-based index of the iteration in the model: continued training counts on from the
        initial model, so a resumed run draws the samples an uninterrupted one would.
    grad, hess : ndarray of float64, shape (n_rows,)
        Gradients and hessians at the current scores (unweighted; for a multiclass objective,
        the L2 norms of each row's per-class vectors). Not modified: a sampler that corrects
        gradients (smart2) returns its own array from :meth:`Sampler.correct_gradients`.
    weight : ndarray of float64, shape (n_rows,)
        The rows' own weights (ones when the data has none).
    label, scores : ndarray of float64
        Labels, shape (n_rows,), and current raw scores, shape (n_rows,) or, for a multiclass
        objective, (n_classes, n_rows).
    objective : Objective
        The loss (per-row loss and gradients at other scores).
    previous_leaf : ndarray of int32 or None
        Leaf (0-based, in the leaf order of ``previous_leaf_values``) of every row in the
        previous tree; None before the first tree or when the sampler does not ask for it.
    previous_leaf_values : ndarray of float64 or None
        The previous tree's leaf values without shrinkage (Newton steps ``-G/(H+lambda)``).
    mean_abs_grad : float or None
        Mean ``|g|`` over every machine's rows (distributed training); None: over ``grad``
        (both by :func:`mean_abs`).
    unit_weight : bool
        Whether every row's own weight is 1 (the data has none): kernels may then leave
        ``weight`` unread (:attr:`kernel_weight`).
    past_grad : tuple of ndarray of float64
        The gradients of the previous iterations of this run, most recent first, as many as
        the sampler's ``gradient_history`` asks for and the run has had (uncorrected).
    """

    iteration: int
    grad: np.ndarray
    hess: np.ndarray
    weight: np.ndarray
    label: np.ndarray
    scores: np.ndarray
    objective: Objective
    previous_leaf: np.ndarray | None = None
    previous_leaf_values: np.ndarray | None = None
    mean_abs_grad: float | None = None
    unit_weight: bool = False
    past_grad: tuple[np.ndarray, ...] = ()

    @property
    def kernel_weight(self) -> np.ndarray | None:
        """``weight`` for the sampling kernels, or None when every weight is 1 (one array fewer
        to read per pass over the rows)."""
        return None if self.unit_weight else self.weight


@dataclass
class QueryDraw:
    """One query-level draw (``sampling_unit='query'``): the queries and the per-query arrays.

    A sampler's :meth:`Sampler.draw_queries` fills ``keep`` and ``inverse_p``; the rows of
    query ``q`` are then all kept or all dropped, with weight ``w_i * inverse_p[q]``.

    Attributes
    ----------
    starts : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` owns rows ``starts[q]:starts[q + 1]``.
    sizes : ndarray of int64, shape (n_queries,)
        Rows per query.
    keep : ndarray of uint8, shape (n_queries,)
        Output: 1 for the queries drawn.
    inverse_p : ndarray of float64, shape (n_queries,)
        Output: ``1 / P(query q drawn)`` (read only for drawn queries).
    ids, others : ndarray of uint32, shape (n_queries,)
        Scratch for the row-draw kernels, run over queries.
    query_ids : ndarray of int64 or None
        Id of each query among every machine's queries (None on one machine: its index): a
        query's random number depends on that id only.
    total_queries : int or None
        Every machine's queries together (None: ``n_queries``).
    """

    starts: np.ndarray
    query_ids: np.ndarray | None = None
    total_queries: int | None = None
    sizes: np.ndarray = field(init=False)
    keep: np.ndarray = field(init=False)
    inverse_p: np.ndarray = field(init=False)
    ids: np.ndarray = field(init=False)
    others: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.sizes = np.diff(self.starts)
        n = self.sizes.size
        self.keep = np.zeros(n, np.uint8)
        self.inverse_p = np.ones(n)
        self.ids = np.empty(n, np.uint32)
        self.others = np.empty(n, np.uint32)
        if self.total_queries is None:
            self.total_queries = n

    @property
    def n_queries(self) -> int:
        """Number of queries."""
        return self.sizes.size


class Sampler:
    """Base class of the row samplers.

    Parameters
    ----------
    params : dict
        Resolved training parameters (``sample_rate`` and the sampler's own).
    n_rows : int
        Rows of the training set.

    Attributes
    ----------
    name : str
        The value of the ``sampling`` parameter that selects this sampler.
    needs_previous_leaves : bool
        Whether the sampler reads every row's leaf in the last tree (``SamplingContext.previous_leaf``
        for smart2's correction, the holdout check for ``sampling='auto'``): the trainer then
        tracks them.
    supports_multiclass : bool
        Whether the sampler works for multiclass objectives, where it sees each row's gradient
        and hessian as the L2 norms of their per-class vectors (CatBoost's rule for MVS).
    supports_queries : bool
        Whether the sampler can draw whole queries (:meth:`draw_queries`, ``sampling_unit='query'``).
    reads_gradients : bool
        Whether the draw reads the gradients (False: the trainer may compute them for the
        sampled rows only).
    gradient_history : int
        How many past iterations' gradients :meth:`correct_gradients` reads
        (``SamplingContext.past_grad``; the trainer keeps them in buffers that rotate).
    inverse_probability : bool
        Whether the weights are inverse probabilities ``w_i / p_i``, whose sums over the sample
        estimate sums over every row: the trainer then scales them by the realised sampling rate
        (``sample_weight_scale='sample'``). False for trimming, which keeps the rows' own weights.
    row_ids : ndarray of int64 or None
        Id of each row among every machine's rows (None on one machine: the row's index): a
        row's random number depends on that id only, not on how rows are spread over machines.
    total_rows : int
        Every machine's rows together (``n_rows`` on one machine): the exact-count draws
        (uniform, GOSS) draw their counts of them.
    n_features : int or None
        Features of the data (None: not known); ``sampling='auto'`` samples only data of enough
        features.
    adapts : bool
        Whether the sampler learns from every iteration's trees (:meth:`observe`;
        ``sampling='auto'``).
    chooses_leaf_values : bool
        Whether :meth:`values_from_every_row` decides the leaf values of each sampled tree
        (``leaf_value_rows='auto'`` with a sampler that chooses; set by the trainer).
    """

    name: ClassVar[str]
    needs_previous_leaves: ClassVar[bool] = False
    supports_multiclass: ClassVar[bool] = True
    supports_queries: ClassVar[bool] = False
    reads_gradients: ClassVar[bool] = True
    inverse_probability: ClassVar[bool] = True
    gradient_history: int = 0
    adapts: bool = False
    n_features: int | None = None
    chooses_leaf_values: bool = False

    def __init__(self, params: TrainingParams, n_rows: int) -> None:
        self.params = params
        self.n_rows = n_rows
        self.sample_rate = params.sample_rate
        self.sample_weight = np.zeros(n_rows)
        self.keep = np.zeros(n_rows, np.uint8)  # scratch of the parallel draws
        self._stream = mix_keys(params.seed, _SAMPLING_STREAM)
        self.row_ids: np.ndarray | None = None
        self.total_rows = n_rows
        self._chunk_layout: tuple | None = None

    @classmethod
    def multiclass_refusal(cls, params: TrainingParams) -> str | None:
        """Why the sampler cannot train a multiclass objective with ``params``, or None when it
        can (:attr:`supports_multiclass`, and its options)."""
        return None if cls.supports_multiclass else f"sampling='{cls.name}' does not support multiclass objectives"

    def chunk_layout(self) -> tuple:
        """This machine's pieces of the exact-count draws' chunks
        (:func:`~smartboost.sampling.chunks.chunk_layout`), found once."""
        if self._chunk_layout is None:
            self._chunk_layout = chunk_layout(self.total_rows, self.row_ids)
        return self._chunk_layout

    def key(self, iteration: int, purpose: int = 0) -> np.uint64:
        """Random stream key of one iteration (``purpose`` separates draws within it)."""
        return mix_keys(self._stream, mix_keys(iteration, purpose))

    @property
    def target_size(self) -> float:
        """Expected sample size ``s N`` (``N`` every machine's rows)."""
        return self.sample_rate * self.total_rows

    @property
    def drawn_by(self) -> str:
        """Name of the sampler of the next draw (``sampling='auto'`` chooses one per iteration)."""
        return self.name

    @property
    def target_rate(self) -> float:
        """Target rate of the next draw."""
        return self.sample_rate

    def checks(self, iteration: int) -> bool:
        """Whether the trees of ``iteration`` are checked on the rows out of their sample for
        :meth:`observe` (samplers that :attr:`adapts`)."""
        return self.adapts

    def values_from_every_row(self, previous_leaf_values: np.ndarray | None) -> bool:
        """Whether this iteration's sampled trees take their leaf values from every row
        (``leaf_value_rows='auto'``; ``previous_leaf_values``: the last trees' leaves): only
        ``sampling='auto'`` chooses, the other samplers keep their sample's values."""
        return False

    def observe(self, holdout: np.ndarray) -> None:
        """Learn from an iteration's trees (samplers that :attr:`adapts`; see
        :meth:`smartboost.sampling.auto.AutoSampler.observe`)."""
        raise NotImplementedError(f"sampling='{self.name}' does not adapt")

    def sample(self, ctx: SamplingContext, rows: np.ndarray, rest: np.ndarray) -> tuple[int, np.ndarray]:
        """Draw this iteration's sample.

        Parameters
        ----------
        ctx : SamplingContext
        rows, rest : ndarray of uint32, shape (n_rows,)
            Output: ``rows[:n]`` receives the sampled ids and ``rest[:n_rows - n]`` the others,
            both in increasing order.

        Returns
        -------
        n : int
            Sample size.
        weight : ndarray of float64, shape (n_rows,)
            Weight of each sampled row, indexed by row id (other entries are not read).
        """
        raise NotImplementedError

    def correction_totals(self, ctx: SamplingContext) -> np.ndarray | None:
        """Per-leaf totals over these rows that :meth:`correct_gradients` needs (summed over
        every machine's rows in distributed training), or None (the default: no correction)."""
        return None

    def correct_gradients(self, ctx: SamplingContext, rows: np.ndarray,
                          totals: np.ndarray | None = None) -> np.ndarray | None:
        """The gradients the tree is grown on, those of the sampled ``rows`` in their order
        (``out[k]`` for row ``rows[k]``), or None for ``ctx.grad`` itself (the default: no
        correction). ``totals`` are :meth:`correction_totals` over every machine's rows (None:
        these rows)."""
        return None

    def draw_queries(self, ctx: SamplingContext, draw: QueryDraw) -> None:
        """The sampler's rule applied to whole queries: fill ``draw.keep`` and ``draw.inverse_p``.

        Only for samplers with ``supports_queries`` (see :mod:`smartboost.sampling.queries`).
        """
        raise NotImplementedError(f"sampling='{self.name}' does not draw queries")


class NoSampling(Sampler):
    """Every row, with its own weight."""

    name = "none"

    def sample(self, ctx, rows, rest):
        """All rows."""
        fill_row_ids(rows)
        return self.n_rows, ctx.weight


FIXED_SUM_BITS = 62
"""Sums that must not depend on the order of the rows (:func:`fixed_sum_unit`) stay below
``2**FIXED_SUM_BITS`` units."""

_MIN_SUM_UNIT = 2.0 ** -1022
"""The smallest unit of :func:`fixed_sum_unit`: the smallest normal float (a subnormal unit
would lose bits, or read as 0 where the CPU flushes subnormals). Values below ``2**62`` of it
are counted in it, coarser than their own unit: the samplers' rules read these sums to a few
digits."""


def fixed_sum_unit(extent: float, n_rows: int) -> float | None:
    """The power-of-two unit in which ``n_rows`` values of magnitude at most ``extent`` (over
    every machine's rows) add up below ``2**FIXED_SUM_BITS`` as integers; None when ``extent``
    is not finite.

    Rounded to it and summed as integers, values give the same sum in any order and over any
    split of the rows among machines (``smartboost.dask`` then draws one machine's samples). On a
    million rows a value keeps about 40 bits below the largest, far finer than the samplers'
    rules read."""
    if not math.isfinite(extent):
        return None
    if not extent > 0.0:
        return 1.0
    return max(math.ldexp(1.0, math.frexp(extent * max(n_rows, 1))[1] - FIXED_SUM_BITS), _MIN_SUM_UNIT)


def fixed_point_sums(extent: np.ndarray, n_rows: int,
                     integer_sums: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
    """Sums over every machine's ``n_rows`` rows that are the same in any order and over any split
    of the rows among machines: one per entry of ``extent`` (the largest magnitude of its values),
    each in its unit (:func:`fixed_sum_unit`), in which ``integer_sums(units)`` adds up the
    rounded values (int64, one per sum); NaN when an extent is not finite."""
    units = [fixed_sum_unit(float(e), n_rows) for e in extent]
    if None in units:
        return np.full(len(units), np.nan)
    units = np.array(units)
    return np.asarray(integer_sums(units)) * units


def mean_abs(values: np.ndarray) -> float:
    """Mean of ``|values|`` by :func:`fixed_point_sums` (the mean ``smartboost.dask`` finds over
    several machines' rows); NaN when a value is not finite."""
    n = values.shape[0]
    if not n:
        return math.nan
    extent = np.array([np.max(np.abs(values))])
    return float(fixed_point_sums(extent, n, lambda units: np.array([abs_fixed_sum(values, units[0])]))[0]) / n
