"""The sampling papers' experiments, run with smartboost (``smartboost experiment sampling``).

- :func:`smart_table`: SMART's Table 2 shape. For each sampler, the first iteration at which the
  test logloss reaches a target (the no-sampling run's best plus a tolerance), the average
  sample rate up to it (ASRI) and the training seconds to reach it; the figure shows test
  logloss against iterations and against seconds.
- :func:`mvs_figure`: the MVS paper's Figure 1 shape. Test error (1 - AUC and logloss) against
  the sample rate for several samplers, mean and spread over seeds.
- :func:`iteration_cost`: milliseconds per iteration at each sample rate, against no sampling.

Each returns a :class:`~smartboost.experiments.report.Result` (a markdown table, and a PNG
figure with matplotlib). ``benchmarks/bench_sampling.py`` runs the same functions and adds
LightGBM and CatBoost side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import Dataset, train
from .._config import threads as thread_count
from ..datasets import make_higgs_like
from .._params import training_params
from ..engine import Trainer
from ..metrics import get_metric
from .data import SYNTHETIC, ExperimentData, load_public
from .report import Line, Panel, Result
from .timing import lockstep

__all__ = ["SamplerSpec", "Curve", "DEFAULT_SAMPLERS", "MVS_FIGURE_SAMPLERS", "COST_SAMPLERS", "load", "base_params",
           "run_curve", "smart_table", "mvs_figure", "iteration_cost"]

Progress = Callable[[str], None] | None


@dataclass(frozen=True)
class SamplerSpec:
    """A named sampler configuration (extra parameters on top of the experiment's)."""

    label: str
    params: dict[str, Any] = field(default_factory=dict)


DEFAULT_SAMPLERS = (
    SamplerSpec("none", {"sampling": "none"}),
    SamplerSpec("uniform", {"sampling": "uniform"}),
    SamplerSpec("bernoulli", {"sampling": "bernoulli"}),
    SamplerSpec("trimming", {"sampling": "trimming"}),
    SamplerSpec("goss", {"sampling": "goss"}),
    SamplerSpec("smart1", {"sampling": "smart1"}),
    SamplerSpec("smart2", {"sampling": "smart2"}),
    SamplerSpec("mvs (lambda=1)", {"sampling": "mvs", "mvs_lambda": 1.0}),
    SamplerSpec("mvs-adaptive", {"sampling": "mvs", "mvs_lambda": "adaptive"}),
    SamplerSpec("loss", {"sampling": "loss"}),
)
"""The SMART table's samplers; the first, ``none``, sets the target."""

MVS_FIGURE_SAMPLERS = (
    SamplerSpec("uniform", {"sampling": "uniform"}),
    SamplerSpec("goss", {"sampling": "goss"}),
    SamplerSpec("mvs (lambda=1)", {"sampling": "mvs", "mvs_lambda": 1.0}),
    SamplerSpec("mvs-adaptive", {"sampling": "mvs", "mvs_lambda": "adaptive"}),
    SamplerSpec("smart1", {"sampling": "smart1"}),
    SamplerSpec("smart2", {"sampling": "smart2"}),
)
"""The MVS figure's samplers."""

COST_SAMPLERS = tuple(SamplerSpec(name, {"sampling": name})
                      for name in ("uniform", "bernoulli", "goss", "mvs", "smart1", "smart2"))
"""The iteration-cost table's samplers."""


def load(name: str, rows: int | None = None, seed: int = 0) -> ExperimentData:
    """A binary set of the registry, or ``"synthetic"``: ``make_higgs_like`` with ``rows``
    training rows (default 1,000,000) and a quarter as many test rows."""
    if name != SYNTHETIC:
        return load_public(name, ["binary"], rows, seed)
    rows = rows or 1_000_000
    X, y = make_higgs_like(rows + rows // 4, seed=seed)
    return ExperimentData(SYNTHETIC, "binary", X[:rows], y[:rows], X[rows:], y[rows:], note="HIGGS-like, generated")


def base_params(data: ExperimentData, leaves: int | None = None, threads: int = 0) -> dict[str, Any]:
    """The tree settings of every run: binary logloss, learning rate 0.1, 255 bins, ``leaves``
    leaves (default 255 on the synthetic set, 31 otherwise), 20 rows per leaf."""
    leaves = leaves or (255 if data.name == SYNTHETIC else 31)
    return {"objective": "binary", "learning_rate": 0.1, "num_leaves": leaves, "min_data_in_leaf": 20,
            "min_sum_hessian_in_leaf": 1e-3, "max_bin": 255, "num_threads": threads}


@dataclass
class Curve:
    """One training run's test metrics and cost, per iteration."""

    label: str
    logloss: np.ndarray
    auc: np.ndarray
    seconds: np.ndarray      # cumulative training seconds (evaluation excluded)
    sample_rate: np.ndarray  # realised |S| / N per iteration


def run_curve(spec: SamplerSpec, params: dict[str, Any], train_set: Dataset, valid_set: Dataset,
              num_boost_round: int) -> Curve:
    """Train one configuration, evaluating test logloss and AUC after every iteration.

    A 3-iteration warm-up first compiles (or loads) the configuration's kernels outside the timing.
    """
    run_params = {**params, **spec.params, "metric": ["logloss", "auc"], "verbosity": -1}
    if spec.params.get("sampling", "none") == "none":
        run_params.pop("sample_rate", None)
    for rounds in (3, num_boost_round):  # warm-up, then the timed run
        booster = train(run_params, train_set, rounds, valid_sets=[valid_set], valid_names=["test"])
    stats = booster.iteration_stats
    return Curve(spec.label, np.array(booster.evals_result["test"]["logloss"]),
                 np.array(booster.evals_result["test"]["auc"]), np.cumsum(stats["seconds"]),
                 np.array(stats["sample_size"]) / train_set.num_data())


def _say(progress: Progress, message: str) -> None:
    if progress is not None:
        progress(message)


def smart_table(data: ExperimentData, rate: float, num_boost_round: int,
                samplers: Sequence[SamplerSpec] = DEFAULT_SAMPLERS, tolerance: float = 0.002,
                leaves: int | None = None, threads: int = 0, progress: Progress = None) -> Result:
    """SMART's table: iterations, ASRI and seconds for each sampler to reach a target test logloss.

    The target is the best test logloss of the no-sampling run (the first sampler, which should be
    ``none``) plus ``tolerance``.

    Parameters
    ----------
    data : ExperimentData
    rate : float
        ``sample_rate`` of the sampled runs.
    num_boost_round : int
        Trees of every run.
    samplers : sequence of SamplerSpec
    tolerance : float
    leaves : int, optional
        See :func:`base_params`.
    threads : int
        0: all.
    progress : callable, optional
        Called with a line after each run.

    Returns
    -------
    Result
        One row per sampler: ``sampler``, ``target``, ``iteration`` (1-based, None when never
        reached), ``ASRI``, ``seconds``, ``speed-up`` (against the first sampler), ``best
        logloss``, ``best iteration``; test logloss against iterations and seconds.
    """
    params = {**base_params(data, leaves, threads), "sample_rate": rate}
    train_set = Dataset(data.X, data.y)
    valid_set = Dataset(data.X_test, data.y_test, reference=train_set)
    curves = []
    for spec in samplers:
        curves.append(run_curve(spec, params, train_set, valid_set, num_boost_round))
        _say(progress, f"{spec.label}: {num_boost_round} trees in {curves[-1].seconds[-1]:.2f} s")
    target = float(curves[0].logloss.min()) + tolerance
    rows = []
    base_seconds = None
    for curve in curves:
        reached = np.flatnonzero(curve.logloss <= target)
        if reached.size:
            k = int(reached[0])
            seconds = float(curve.seconds[k])
            base_seconds = seconds if base_seconds is None else base_seconds
            row = {"iteration": k + 1, "ASRI": float(curve.sample_rate[:k + 1].mean()), "seconds": seconds}
        else:
            row = {"iteration": None, "ASRI": float(curve.sample_rate.mean()), "seconds": None}
        speed_up = base_seconds / row["seconds"] if row["seconds"] and base_seconds else None
        rows.append({"sampler": curve.label, "target": target, **row, "speed-up": speed_up,
                     "best logloss": float(curve.logloss.min()), "best iteration": int(curve.logloss.argmin()) + 1})
    low = min(float(c.logloss.min()) for c in curves)
    panels = [Panel(xlabel, "test logloss",
                    [Line(c.label, np.arange(1, c.logloss.size + 1) if by_iteration else c.seconds, c.logloss)
                     for c in curves], ylim=(low - 0.005, low + 0.08))
              for xlabel, by_iteration in (("iteration", True), ("training seconds", False))]
    title = (f"SMART table, {data.describe()}, sample rate {rate}, {params['num_leaves']} leaves, target = best "
             f"no-sampling test logloss + {tolerance}")
    return Result(f"smart_table_{data.name}_{rate:g}", title, rows, panels)


def mvs_figure(data: ExperimentData, rates: Sequence[float], num_boost_round: int,
               samplers: Sequence[SamplerSpec] = MVS_FIGURE_SAMPLERS, seeds: Sequence[int] = range(5),
               leaves: int | None = None, threads: int = 0, progress: Progress = None) -> Result:
    """Test error against sample rate: mean and standard deviation over seeds.

    Each (sampler, rate, seed) trains ``num_boost_round`` trees; a rate of 1.0 is no sampling.

    Returns
    -------
    Result
        Rows ``sampler``, ``rate``, ``1-AUC mean``, ``1-AUC std``, ``logloss mean``,
        ``logloss std``; both errors against the rate (log scale) with +-1 std bands.
    """
    params = base_params(data, leaves, threads)
    train_set = Dataset(data.X, data.y)
    auc, logloss = get_metric("auc"), get_metric("logloss")
    rows = []
    for spec in samplers:
        for rate in rates:
            errors = []
            for seed in seeds:
                run = {**params, "seed": seed, "verbosity": -1}
                run.update(spec.params if rate < 1.0 else {"sampling": "none"})
                if rate < 1.0:
                    run["sample_rate"] = rate
                booster = train(run, train_set, num_boost_round)
                raw = booster.predict(data.X_test, raw_score=True)
                errors.append((1.0 - auc(data.y_test, raw, raw), logloss(data.y_test, raw, raw)))
            e = np.array(errors)
            rows.append({"sampler": spec.label, "rate": rate, "1-AUC mean": e[:, 0].mean(), "1-AUC std": e[:, 0].std(),
                         "logloss mean": e[:, 1].mean(), "logloss std": e[:, 1].std()})
            _say(progress, f"{spec.label} at {rate}: 1-AUC {rows[-1]['1-AUC mean']:.5f} over {len(e)} seeds")
    panels = []
    for key in ("1-AUC", "logloss"):
        lines = []
        for label in dict.fromkeys(r["sampler"] for r in rows):
            mine = [r for r in rows if r["sampler"] == label]
            lines.append(Line(label, np.array([r["rate"] for r in mine]), np.array([r[f"{key} mean"] for r in mine]),
                              np.array([r[f"{key} std"] for r in mine])))
        panels.append(Panel("sample rate", f"test {key}", lines, xscale="log"))
    title = (f"MVS figure, {data.describe()}: test error after {num_boost_round} trees against sample rate, "
             f"mean +- std over {len(seeds)} seeds")
    return Result(f"mvs_figure_{data.name}", title, rows, panels)


def iteration_cost(data: ExperimentData, rates: Sequence[float], num_boost_round: int,
                   samplers: Sequence[SamplerSpec] = COST_SAMPLERS, skip: int = 5, leaves: int | None = None,
                   threads: int = 0, progress: Progress = None, repeats: int = 1) -> Result:
    """Median training milliseconds per iteration at each sample rate, against no sampling.

    The runs are interleaved iteration by iteration: one training run per configuration (no
    sampling and each sampler at each rate), all held in memory, each doing its next iteration
    in turn (the order rotates every round), so that a shared machine's drifting load falls on
    all of them alike. Each run's iterations are timed as :func:`~smartboost.train` times
    them (``Booster.iteration_stats``); the first ``skip`` (tree shapes still changing) are left
    out when there are more. A 3-iteration interleaved warm-up comes first (kernel compilation).
    With ``repeats`` > 1 the whole is run that many times, and the table gives the medians and
    the range of the ratios.

    Returns
    -------
    Result
        Rows ``sampling``, ``rate``, ``ms per iteration``, ``ratio to none`` and, with repeats,
        ``ratio range`` (no figure).
    """
    params = {**base_params(data, leaves, threads), "verbosity": -1}
    train_set = Dataset(data.X, data.y)
    configs = [(spec, rate) for spec in samplers for rate in rates]
    runs = [{}] + [{**spec.params, "sample_rate": rate} for spec, rate in configs]
    _interleaved_seconds(params, runs, train_set, 3)  # warm-up: compilation, first touches of memory
    none_ms: list[float] = []
    sampled_ms: dict[int, list[float]] = {k: [] for k in range(len(configs))}
    ratios: dict[int, list[float]] = {k: [] for k in range(len(configs))}
    for _ in range(repeats):
        seconds = _interleaved_seconds(params, runs, train_set, num_boost_round)
        ms = [1e3 * float(np.median(s[skip:] if len(s) > skip else s)) for s in seconds]
        none_ms.append(ms[0])
        for k, (spec, rate) in enumerate(configs):
            sampled_ms[k].append(ms[k + 1])
            ratios[k].append(ms[k + 1] / ms[0])
            _say(progress, f"{spec.label} at {rate}: {ms[k + 1]:.2f} ms per iteration, none {ms[0]:.2f} ms")
    rows = [{"sampling": "none", "rate": 1.0, "ms per iteration": float(np.median(none_ms)), "ratio to none": 1.0}]
    for k, (spec, rate) in enumerate(configs):
        rows.append({"sampling": spec.label, "rate": rate, "ms per iteration": float(np.median(sampled_ms[k])),
                     "ratio to none": float(np.median(ratios[k]))})
        if repeats > 1:
            rows[-1]["ratio range"] = f"{min(ratios[k]):.3f}-{max(ratios[k]):.3f}"
    if repeats > 1:
        rows[0]["ratio range"] = "-"
    title = (f"Training ms per iteration, {data.describe()}, {params['num_leaves']} leaves (median of iterations "
             f"{skip + 1}-{num_boost_round}; every run interleaved with the others iteration by iteration, "
             f"{repeats} repeat{'s' if repeats > 1 else ''}; none: median of its repeats)")
    return Result(f"iteration_cost_{data.name}", title, rows)


def _interleaved_seconds(params: dict[str, Any], runs: list[dict[str, Any]], train_set: Dataset,
                         num_boost_round: int) -> list[list[float]]:
    """Seconds of each iteration of one training run per entry of ``runs`` (parameters on top of
    ``params``), the runs trained in :func:`~smartboost.experiments.timing.lockstep`."""
    resolved = [training_params({**params, **run}, num_boost_round) for run in runs]
    with thread_count(params["num_threads"]) as n_threads:
        trainers = [Trainer.local(r, train_set, None, None, None, n_threads) for r in resolved]
        lockstep([t.boost_one_iteration for t in trainers], [num_boost_round] * len(trainers))
    return [list(t.booster.iteration_stats["seconds"]) for t in trainers]
