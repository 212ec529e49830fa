"""``sampling='auto'``: the rate of every iteration, and whether to sample at all, chosen from what the run measures.

Below :data:`AUTO_MIN_ROWS` training rows or :data:`AUTO_MIN_FEATURES` features, every
iteration grows its trees on every row: a sample saves little time per iteration there
(docs/howto/choosing-a-sampler.md). Above, the rows are drawn by MVS
(``mvs_lambda='adaptive'``) at a rate that follows what the sampled trees learn
(docs/concepts/sampling.md, "Automatic sampling"):

- The sampled trees of every :data:`CHECK_EVERY`-th iteration are checked on the rows they
  were not grown on (where the rate's bounds below leave it room to move). A tree's step
  lowers the loss of row ``i`` by about ``c_i = -w_i (g_i d + h_i d^2 / 2)``; summed with
  inverse-probability weights, the sampled rows and the other rows each estimate the decrease
  over all rows (:func:`~smartboost._kernels.importance.holdout_extent`). On the sample the
  estimate also holds what the tree learnt of the sample's noise: the share ``rho`` of the
  sampled estimate that the other rows confirm is the share of the tree that is signal.
- With noise that grows as the sample shrinks, a tree at rate ``r`` keeps about
  ``rho(r) = r / (r + r0)`` of what it learns, and one measurement gives ``r0 = r (1 - rho) / rho``.
  A sampled iteration costs about ``a + (1 - a) r`` of a full one (``a``: its share that does not
  shrink with the rows, :data:`FIXED_COST`), so the loss decrease per second,
  ``rho(r) / (a + (1 - a) r)``, is largest at ``r* = sqrt(a r0 / (1 - a))``: the next rate.
- Far from convergence the gradients hold a strong signal, ``rho`` is near 1 and the rate small;
  as training converges the signal left in the gradients weakens, ``rho`` falls and the sample
  grows, as SMART's adaptive sampling rate lets the sample follow the gradients. The rate moves
  by at most a factor :data:`MAX_STEP` per check and stays between :data:`MIN_RATE` and
  :data:`MAX_RATE`, and above :data:`MIN_SAMPLE_ROWS` rows (up to :data:`MAX_FLOOR_RATE` of
  them), the ceiling rising to :data:`CEILING_ROOM` times that many where :data:`MAX_RATE` draws
  fewer: runs that went on sampling at a fifth of the rows or fewer ended at a better
  validation metric than runs that switched to every row once the rule asked for most of them,
  and with the leaf values from every row a ceiling of 0.05 reached the no-sampling metric
  sooner than one of 0.1 at 255 leaves and about as soon at 31 leaves, on regression and on
  ranking, its iterations costing less (docs/concepts/sampling.md).
- Where the sample gives the trees' leaves few rows (fewer than :data:`CORRECT_ROWS_PER_LEAF`
  sampled rows per leaf of the last trees, as with 255 leaves), the trees take their leaf values
  from every row (``leaf_value_rows='auto'``, :meth:`AutoSampler.values_from_every_row`), which
  keeps 255-leaf trees grown on a sample from fitting the sample's noise; with
  ``leaf_value_rows='sample'`` the sampled rows' gradients get smart2's correction at
  :data:`ETA` there instead (single-output objectives). On trees with many rows per leaf both
  only slow the training down.

The first iteration draws at the highest rate. The decisions read integer sums over
the rows (:func:`~smartboost.sampling.base.fixed_point_sums`), the same in any order, so a run
is deterministic for a seed on any thread count, and the sums are one machine's when the rows
are spread over several (``smartboost.dask``, where the driver's sampler chooses each rate and
the workers follow it).
``booster.iteration_stats`` records each iteration's sampler (``sampler``: ``'mvs'`` or
``'none'``) and its target rate (``target_rate``) next to the realised ``sample_rate``.
"""

from __future__ import annotations

import numpy as np

from .base import NoSampling, QueryDraw, Sampler, SamplingContext
from .importance import MVSSampler

AUTO_MIN_ROWS = 100_000
"""Training rows below which ``sampling='auto'`` uses every row at every iteration."""

AUTO_MIN_FEATURES = 20
"""Features below which ``sampling='auto'`` uses every row at every iteration: a sampled
iteration's work over every row (gradients, the draw, the walk of the other rows down the
tree) then costs about as much as growing the tree on every row (nycflights13, 261,807 rows x
12 features, 31 leaves: a sampled iteration took 1.1-1.8x a full one)."""

MIN_RATE = 0.02
"""The lowest rate."""

MAX_RATE = 0.05
"""The highest rate (unless :data:`MIN_SAMPLE_ROWS` and :data:`CEILING_ROOM` ask for more), and the first
iteration's."""

MIN_SAMPLE_ROWS = 20_000
"""The fewest rows a sample is drawn with, where that is at most :data:`MAX_FLOOR_RATE` of the
rows: the rate stays at least this share of them."""

CEILING_ROOM = 2.0
"""Where :data:`MAX_RATE` draws fewer than this many times :data:`MIN_SAMPLE_ROWS` rows, the
highest rate rises to that many (up to :data:`MAX_FLOOR_RATE`), and the rate moves between the
two. On 400,000 rows of regression a rate fixed at 20,000 rows reached the no-sampling l2 about
as soon as one fixed at 40,000 and then learnt more slowly (1% higher l2 after 1,000
iterations); a rate free to move between them reached it sooner than either and ended where
40,000 rows did (docs/concepts/sampling.md)."""

MAX_FLOOR_RATE = 0.2
"""The highest rate :data:`MIN_SAMPLE_ROWS` and :data:`CEILING_ROOM` may ask for (up to
100,000 rows every iteration draws this share of the rows). Where the classes are many small
clusters, trees on 10% of 150,000-300,000 rows miss structure that trees on more rows find:
with samples of at most 10% the validation multi_logloss ended above no sampling's, with 20%
below it. Elsewhere the larger samples cost some of the speed-up (200,000 HIGGS-like rows:
2.1-2.3x sooner to the no-sampling AUC against 2.5-2.8x; docs/concepts/sampling.md)."""

CORRECT_ROWS_PER_LEAF = 2000
"""Expected sampled rows per leaf of the last trees (the rate times the rows over their leaves)
below which the leaf values come from every row (or, with ``leaf_value_rows='sample'``, the
sampled gradients are corrected)."""

ETA = 0.5
"""Strength of the correction (``smart_eta``'s default)."""

MAX_STEP = 2.0
"""The most the rate moves, up or down, from one check to the next (a factor)."""

FIXED_COST = 0.2
"""The share of a full iteration's time that a sampled one pays whatever its rate (the walk of the
other rows down the tree, the gradients, the split scans)."""

CHECK_EVERY = 4
"""The trees of every this many iterations are checked on the rows out of their sample: the
check is two passes over every row, about a tenth of a sampled iteration's time at 255 leaves
and rate 0.1, and the rate needs no more."""

SMOOTHING = 0.5
"""Weight of the newest check in the running sums of the holdout estimates (the older ones decay)."""


class AutoSampler(Sampler):
    """MVS at a rate chosen from the holdout checks of its trees (module docstring), or every row.

    Attributes
    ----------
    rate : float
        The next draw's rate (1: every row).
    adapts : bool
        Whether the rate follows the trees (False below :data:`AUTO_MIN_ROWS` rows or
        :data:`AUTO_MIN_FEATURES` features, where every iteration uses every row).
    min_rate, max_rate : float
        The rate's bounds on these rows (:data:`MIN_RATE`, :data:`MAX_RATE`,
        :data:`MIN_SAMPLE_ROWS`, :data:`CEILING_ROOM`).
    """

    name = "auto"
    supports_queries = True
    needs_previous_leaves = True

    def __init__(self, params, n_rows):
        self._samplers = {"none": NoSampling(params, n_rows), "mvs": MVSSampler(params, n_rows, eta=ETA)}
        self._single_output = params.num_class == 1  # the correction follows one score per row
        self._n_outputs = params.num_class
        super().__init__(params, n_rows)

    @property
    def total_rows(self) -> int:
        """Every machine's rows, which with :attr:`n_features` (set first) decide whether it
        samples, and its rates' bounds (setting them starts the rate afresh)."""
        return self._total_rows

    @total_rows.setter
    def total_rows(self, value: int) -> None:
        self._total_rows = value
        for sampler in self._samplers.values():
            sampler.total_rows = value
        self.adapts = self.needs_previous_leaves = (
            value >= AUTO_MIN_ROWS and (self.n_features is None or self.n_features >= AUTO_MIN_FEATURES))
        self.min_rate = min(MAX_FLOOR_RATE, max(MIN_RATE, MIN_SAMPLE_ROWS / max(value, 1)))
        self.max_rate = max(MAX_RATE, min(MAX_FLOOR_RATE, CEILING_ROOM * MIN_SAMPLE_ROWS / max(value, 1)),
                            self.min_rate)
        self._holdout = np.zeros(2)  # running sums: (from the samples, from the other rows)
        self._set(self.max_rate if self.adapts else 1.0)

    @property
    def gradient_history(self) -> int:
        """See :class:`~smartboost.sampling.base.Sampler`: two iterations back for the
        correction, which runs only where the leaf values come from the sample."""
        return 2 if self.adapts and self._single_output and not self.chooses_leaf_values else 0

    @property
    def row_ids(self) -> np.ndarray | None:
        """See :class:`~smartboost.sampling.base.Sampler`; shared with the samplers it draws by."""
        return self._row_ids

    @row_ids.setter
    def row_ids(self, value: np.ndarray | None) -> None:
        self._row_ids = value
        for sampler in self._samplers.values():
            sampler.row_ids = value

    def _set(self, rate: float) -> None:
        """Make ``rate`` the next draw's."""
        self.rate = self.sample_rate = rate
        self._samplers["mvs"].sample_rate = rate

    @property
    def current(self) -> Sampler:
        """The sampler of the next draw."""
        return self._samplers["none" if self.rate >= 1.0 else "mvs"]

    @property
    def drawn_by(self) -> str:
        """See :class:`~smartboost.sampling.base.Sampler`."""
        return self.current.name

    def sample(self, ctx, rows, rest):
        """The current sampler's draw at the current rate."""
        return self.current.sample(ctx, rows, rest)

    def importance(self, ctx):
        """The current sampler's importances (MVS's; a draw decided over every machine's rows)."""
        return self.current.importance(ctx)

    def draw(self, ctx, importance, decision, rows, rest):
        """The current sampler's draw with a ``decision`` taken over every machine's rows."""
        return self.current.draw(ctx, importance, decision, rows, rest)

    def _few_rows_per_leaf(self, leaves: np.ndarray | None) -> bool:
        """Whether the next sample gives the last trees' leaves (``leaves``: their values, every
        output's) fewer than :data:`CORRECT_ROWS_PER_LEAF` rows each (the same decision on every
        machine)."""
        return (self.rate < 1.0 and leaves is not None and leaves.size > 0
                and self.rate * self.total_rows * self._n_outputs < CORRECT_ROWS_PER_LEAF * leaves.size)

    def values_from_every_row(self, previous_leaf_values):
        """Leaf values from every row (``leaf_value_rows='auto'``) where the sample gives the
        leaves few rows (:meth:`_few_rows_per_leaf`): there the sample's values hold its noise."""
        return self.chooses_leaf_values and self._few_rows_per_leaf(previous_leaf_values)

    def _corrects(self, ctx: SamplingContext) -> bool:
        """Whether this iteration's sampled gradients are corrected: where the leaf values come
        from the sample (``leaf_value_rows='sample'``) of a single-output objective and it gives
        the leaves few rows (:meth:`_few_rows_per_leaf`)."""
        return (not self.chooses_leaf_values and self._single_output
                and self._few_rows_per_leaf(ctx.previous_leaf_values))

    def correction_totals(self, ctx):
        """MVS's per-leaf totals for its correction, on the iterations :meth:`_corrects` picks."""
        return self._samplers["mvs"].correction_totals(ctx) if self._corrects(ctx) else None

    def correct_gradients(self, ctx, rows, totals=None):
        """MVS's correction of the sampled gradients, on the iterations :meth:`_corrects` picks."""
        return self._samplers["mvs"].correct_gradients(ctx, rows, totals) if self._corrects(ctx) else None

    def follow(self, rate: float) -> None:
        """Take the next draw's rate from the sampler that chose it (distributed training: the
        driver's, which :meth:`observe` sees every tree)."""
        self._set(rate)

    def query_importance(self, ctx: SamplingContext, draw: QueryDraw) -> np.ndarray:
        """MVS's importance of every query (a scale solved over every machine's queries)."""
        return self._samplers["mvs"].query_importance(ctx, draw)

    def draw_queries(self, ctx: SamplingContext, draw: QueryDraw, importance: np.ndarray | None = None,
                     scale: float | None = None) -> None:
        """The current sampler's rule over whole queries (every query at rate 1); ``importance``
        and ``scale`` when MVS's scale was solved over every machine's queries."""
        if self.rate >= 1.0:
            draw.keep[:] = 1
            draw.inverse_p[:] = 1.0
            return
        self._samplers["mvs"].draw_queries(ctx, draw, importance, scale)

    def checks(self, iteration: int) -> bool:
        """Whether the trees of ``iteration`` are checked (every :data:`CHECK_EVERY`-th iteration
        while the rate adapts and its bounds leave it room to move: where they meet, up to
        ``MIN_SAMPLE_ROWS / MAX_FLOOR_RATE`` rows, the check could not change it)."""
        return self.adapts and self.min_rate < self.max_rate and iteration % CHECK_EVERY == 0

    def observe(self, holdout: np.ndarray) -> None:
        """Choose the next rate from this iteration's holdout check.

        Parameters
        ----------
        holdout : ndarray of float64, shape (n_outputs, 2)
            ``TrainingRows.holdout_gains`` of each of the iteration's trees: its loss decrease
            estimated from its sample and from the other rows.
        """
        self._holdout = (1.0 - SMOOTHING) * self._holdout + SMOOTHING * holdout.sum(axis=0)
        in_sample, out_of_sample = self._holdout
        if not in_sample > 0.0:  # the trees learn nothing even on their samples: keep the rate
            return
        rho = min(1.0, max(out_of_sample / in_sample, 0.0))
        if rho <= 0.0:  # nothing holds out of the sample: as many rows as the step allows
            self._set(min(self.max_rate, MAX_STEP * self.rate))
            return
        r0 = self.rate * (1.0 - rho) / rho
        wanted = np.sqrt(FIXED_COST * r0 / (1.0 - FIXED_COST))
        rate = min(max(wanted, self.rate / MAX_STEP), MAX_STEP * self.rate)
        self._set(min(self.max_rate, max(self.min_rate, rate)))
