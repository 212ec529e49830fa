"""The sampling papers' experiments, run with smartboost (``smartboost experiment sampling``).

- :func:`smart_table`: SMART's Table 2 shape. For each sampler, the first iteration at which the
  test logloss reaches a target (the no-sampling run's best plus a tolerance), the average
  sample rate up to it (ASRI) and the training seconds to reach it; the figure shows test
  logloss against iterations and against seconds.
- :func:`mvs_figure`: the MVS paper's Figure 1 shape. Test error (1 - AUC and logloss) against
  the sample rate for several samplers, mean and spread over seeds.
- :func:`iteration_cost`: milliseconds per iteration at each sample rate, against no sampling.

Under the papers' own protocols (``--protocol paper``):

- :func:`smart_paper_tables`: SMART's a8a Table 2 as the paper ran it: LogitBoost (SMART's
  logistic form from a zero start), a fixed ``rho`` per importance sampler so that the sample
  size follows the gradients (ASRI is an outcome), uniform sampling at the paper's 0.4 and
  weight trimming, every run timed in lockstep; the table at the paper's target test loss
  0.325 and the table at each method's best loss, beside the paper's figures.
- :func:`mvs_paper_tables`: the MVS paper's comparison: 1 - AUC against the sample rate with
  GOSS's large:small ratio and MVS's lambda tuned by k-fold cross-validation on the training
  set (the paper's grids), the lambda sweep, and at rate 0.8 the time each sampler needs to
  reach the no-sampling model's test AUC.

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
from ..datasets import make_higgs_like
from ..engine import Trainer
from ..metrics import get_metric
from ..objectives import make_objective
from ..sampling.scale import solve_scale
from .data import SYNTHETIC, ExperimentData, load_public
from .report import Line, Panel, Result
from .timing import train_in_lockstep

__all__ = ["SamplerSpec", "Curve", "DEFAULT_SAMPLERS", "MVS_FIGURE_SAMPLERS", "COST_SAMPLERS", "load", "base_params",
           "run_curve", "smart_table", "mvs_figure", "iteration_cost", "MetricCurve", "PaperFigures", "PAPER_A8A",
           "smart_paper_methods", "smart_paper_params", "lockstep_curves", "paper_tables", "smart_paper_tables",
           "start_rho", "MVS_LAMBDAS", "GOSS_RATIOS", "mvs_paper_tables"]

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
    leaves (default 255 on the synthetic set, 31 otherwise), 20 rows per leaf, every row (a run's
    sampler replaces ``sampling``)."""
    leaves = leaves or (255 if data.name == SYNTHETIC else 31)
    return {"objective": "binary", "learning_rate": 0.1, "num_leaves": leaves, "min_data_in_leaf": 20,
            "min_sum_hessian_in_leaf": 1e-3, "max_bin": 255, "num_threads": threads, "sampling": "none"}


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
    train_set = Dataset(data.X, data.y).construct()
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
    train_set = Dataset(data.X, data.y).construct()
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
    train_set = Dataset(data.X, data.y).construct()
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
    ``params``), the runs trained in :func:`~smartboost.experiments.timing.train_in_lockstep`."""
    trainers = train_in_lockstep([{**params, **run} for run in runs], train_set, None, num_boost_round, warm_up=0)
    return [list(t.booster.iteration_stats["seconds"]) for t in trainers]


# -- the papers' protocols -----------------------------------------------------------------------

@dataclass
class MetricCurve:
    """One run of a lockstep comparison: a validation score and the cost, per iteration."""

    label: str
    values: np.ndarray       # the validation score after each iteration
    seconds: np.ndarray      # cumulative training seconds
    sample_rate: np.ndarray  # realised |S| / N per iteration


@dataclass(frozen=True)
class PaperFigures:
    """One method's row of a SMART table: at the common target, then at the method's best
    (``metric``, ``iteration``, ``asri``, ``seconds``; None where the paper has no row)."""

    at_target: tuple[float, int, float, float] | None
    at_best: tuple[float, int, float, float] | None


PAPER_A8A = {
    "baseline": PaperFigures((0.325, 60, 1.0, 65), (0.319, 97, 1.0, 127)),
    "uniform": PaperFigures((0.325, 58, 0.3998, 16), (0.319, 96, 0.3993, 24)),
    "trimming": PaperFigures((0.325, 443, 0.4195, 141), (0.325, 443, 0.4195, 141)),
    "1st-order": PaperFigures((0.325, 57, 0.5028, 15), (0.319, 89, 0.4531, 22)),
    "2nd-order": PaperFigures((0.325, 34, 0.3052, 6), (0.319, 142, 0.2317, 20)),
}
"""SMART's Table 2 (LogitBoost on a8a), by method: test loss, iterations, ASRI, seconds."""

PAPER_A8A_TARGET = 0.325
"""The test loss SMART's a8a table reads every method at (the worst method's best, trimming's)."""


def smart_paper_methods(rhos: Sequence[float] = (0.5, 1.0, 2.0), uniform_rate: float = 0.4,
                        trimming_rate: float = 0.42, eta: float = 1.0) -> list[SamplerSpec]:
    """The methods of SMART's tables: baseline (no sampling), uniform sampling at
    ``uniform_rate`` (the paper's ASRI 0.40), weight trimming keeping the ``trimming_rate``
    share of the rows with the largest hessians (the paper's ASRI 0.42; it gives no threshold), and
    first- and second-order sampling at each fixed ``rho`` (the paper gives none: its ASRI
    follows), second order with the paper's correction at ``eta`` (the paper gives none) and,
    to separate the sampling from the correction, without it."""
    return [SamplerSpec("baseline", {"sampling": "none"}),
            SamplerSpec(f"uniform {uniform_rate:g}", {"sampling": "uniform", "sample_rate": uniform_rate}),
            SamplerSpec(f"trimming {trimming_rate:g}", {"sampling": "trimming", "sample_rate": trimming_rate}),
            *[SamplerSpec(f"1st-order rho={r:g}", {"sampling": "smart1", "smart_rho": r}) for r in rhos],
            *[SamplerSpec(f"2nd-order rho={r:g}", {"sampling": "smart2", "smart_rho": r, "smart_eta": eta,
                                                   "smart_correction": "paper"}) for r in rhos],
            *[SamplerSpec(f"2nd-order rho={r:g}, no correction", {"sampling": "smart2", "smart_rho": r,
                                                                  "smart_eta": 0.0}) for r in rhos]]


def smart_paper_params(leaves: int = 31, threads: int = 0) -> dict[str, Any]:
    """LogitBoost as SMART runs it: its logistic form (psi = sigmoid(2F)) from F = 0, Newton
    trees of ``leaves`` leaves, learning rate 0.1 (the paper gives neither), 20 rows per leaf, every
    row (a run's sampler replaces ``sampling``)."""
    return {"objective": "smart_logistic", "boost_from_average": False, "learning_rate": 0.1, "num_leaves": leaves,
            "min_data_in_leaf": 20, "min_sum_hessian_in_leaf": 1e-3, "max_bin": 255, "num_threads": threads,
            "sampling": "none", "verbosity": -1}


def start_rho(params: dict[str, Any], data: ExperimentData, rate: float) -> float:
    """The ``smart_rho`` with which ``params``' importance sampler (smart1, smart2, loss; rows of
    unit weight) keeps ``rate`` of the rows in expectation at the first iteration, from the
    start scores; kept fixed afterwards, the sample size then follows the gradients, as in
    SMART."""
    objective = make_objective(params["objective"], params)
    label = objective.check_label(np.asarray(data.y, np.float64))
    starts = None
    if data.qid is not None:
        starts = np.flatnonzero(np.r_[True, data.qid[1:] != data.qid[:-1], True])
    objective.bind(label, starts)
    start = objective.init_score(label, None) if params.get("boost_from_average", True) else 0.0
    scores = np.full(label.size, float(start))
    grad, hess = np.empty(label.size), np.empty(label.size)
    objective.grad_hess(label, scores, grad, hess)
    importance = {"smart1": np.abs(grad), "smart2": hess}.get(params["sampling"])
    if importance is None:
        importance = objective.sampling_loss(label, scores)
    return float(solve_scale(importance, rate * label.size, np.uint64(0)))


def lockstep_curves(specs: Sequence[SamplerSpec], params: dict[str, Any], train_set: Dataset,
                    valid_set: Dataset, num_boost_round: int, score: Callable[[Trainer], float],
                    progress: Progress = None) -> list[MetricCurve]:
    """Train one run per spec in lockstep, scoring the validation set after every iteration
    (``score(trainer)``, outside the timing)."""
    values: list[list[float]] = [[] for _ in specs]
    trainers = train_in_lockstep([{**params, **spec.params} for spec in specs], train_set, [valid_set],
                                 num_boost_round, lambda k, trainer: values[k].append(score(trainer)))
    curves = []
    for spec, trainer, curve in zip(specs, trainers, values):
        stats = trainer.booster.iteration_stats
        curves.append(MetricCurve(spec.label, np.array(curve), np.cumsum(stats["seconds"]),
                                  np.array(stats["sample_rate"])))
        _say(progress, f"{spec.label}: {num_boost_round} trees in {curves[-1].seconds[-1]:.2f} s, "
                       f"ASRI {curves[-1].sample_rate.mean():.4f}")
    return curves


def _paper_key(label: str, paper: dict[str, PaperFigures]) -> str | None:
    """The paper's row for one of our methods (its label's first word)."""
    first = label.split()[0]
    return first if first in paper else None


def paper_tables(curves: Sequence[MetricCurve], metric: str, higher_is_better: bool, target: float,
                 paper: dict[str, PaperFigures], name: str, title: str) -> list[Result]:
    """SMART's two tables from lockstep curves (the first curve the baseline): each method at
    the common ``target`` and at its own best, with the paper's figures beside.

    Returns
    -------
    list of Result
        ``<name>_target``: ``method``, ``iteration`` (first at the target; None: never),
        ``ASRI`` (mean sample rate up to it), ``seconds`` (measured), ``ms/iteration`` (the
        run's median), ``cost vs baseline`` (its ratio to the baseline's), ``speed-up``
        (the baseline's iterations times its median ms over the method's: a stall of a shared
        machine in one iteration does not move it), and the paper's ``iteration``, ``ASRI``,
        ``seconds``, ``speed-up``; ``<name>_best``: the same at each method's best ``metric``
        (speed-up against the baseline's time to its own best). The first has the figure: the
        metric against iterations and seconds.
    """
    sign = 1.0 if higher_is_better else -1.0
    base_ms = float(np.median(np.diff(curves[0].seconds, prepend=0.0)))

    def row(curve: MetricCurve, k: int | None, base_seconds: float | None, figures: tuple | None,
            base_figures: tuple | None) -> dict[str, Any]:
        ms = float(np.median(np.diff(curve.seconds, prepend=0.0)))
        steady = (k + 1) * ms if k is not None else None
        out = {"method": curve.label, metric: float(curve.values[k]) if k is not None else None,
               "iteration": k + 1 if k is not None else None,
               "ASRI": float(curve.sample_rate[:(k if k is not None else len(curve.sample_rate) - 1) + 1].mean()),
               "seconds": float(curve.seconds[k]) if k is not None else None, "ms/iteration": 1e3 * ms,
               "cost vs baseline": ms / base_ms, "speed-up": base_seconds / steady if steady and base_seconds else None}
        out.update({f"paper {metric}": figures[0] if figures else None,
                    "paper iteration": figures[1] if figures else None,
                    "paper ASRI": figures[2] if figures else None,
                    "paper seconds": figures[3] if figures else None,
                    "paper speed-up": base_figures[3] / figures[3] if figures and base_figures else None})
        return out

    tables = []
    for part in ("target", "best"):
        rows = []
        base_key = _paper_key(curves[0].label, paper)
        base_paper = getattr(paper[base_key], f"at_{part}") if base_key else None
        base_seconds = None
        for curve in curves:
            if part == "target":
                hit = np.flatnonzero(sign * curve.values >= sign * target)
                k = int(hit[0]) if hit.size else None
            else:
                k = int(np.argmax(sign * curve.values))
            if curve is curves[0]:
                base_seconds = (k + 1) * base_ms if k is not None else None
            key = _paper_key(curve.label, paper)
            rows.append(row(curve, k, base_seconds, getattr(paper[key], f"at_{part}") if key else None, base_paper))
        panels = []
        if part == "target":
            values = np.concatenate([c.values for c in curves])
            near = (target - 0.08, target + 0.01) if higher_is_better else (target - 0.01, target + 0.08)
            panels = [Panel(xlabel, f"test {metric}",
                            [Line(c.label, np.arange(1, c.values.size + 1) if by_iteration else c.seconds, c.values)
                             for c in curves],
                            ylim=(max(near[0], float(values.min())), min(near[1], float(values.max()))))
                      for xlabel, by_iteration in (("iteration", True), ("training seconds", False))]
        what = f"at {metric} {target:.4g}" if part == "target" else f"at each method's best {metric}"
        tables.append(Result(f"{name}_{part}", f"{title}: {what}", rows, panels))
    return tables


def smart_paper_tables(data: ExperimentData, num_boost_round: int = 500,
                       methods: Sequence[SamplerSpec] | None = None, target: float = PAPER_A8A_TARGET,
                       leaves: int = 31, threads: int = 0, progress: Progress = None) -> list[Result]:
    """SMART's a8a Table 2 under the paper's protocol (see the module docstring).

    Parameters
    ----------
    data : ExperimentData
        A binary set (a8a for the paper's table).
    num_boost_round : int
        Trees of every run (trimming needed 443 in the paper).
    methods : sequence of SamplerSpec, optional
        Default :func:`smart_paper_methods` (the first must be the baseline).
    target : float
        The test loss of the first table (the paper's 0.325).
    leaves, threads, progress
        As :func:`smart_table`.

    Returns
    -------
    list of Result
        :func:`paper_tables`' two tables, with SMART's a8a figures beside.
    """
    params = smart_paper_params(leaves, threads)
    train_set = Dataset(data.X, data.y).construct()
    valid_set = Dataset(data.X_test, data.y_test, reference=train_set)
    objective = make_objective("smart_logistic")
    label = objective.check_label(np.asarray(data.y_test, np.float64), training=False)
    curves = lockstep_curves(methods or smart_paper_methods(), params, train_set, valid_set, num_boost_round,
                             lambda trainer: float(np.mean(objective.loss(label, trainer.eval_sets[0].raw))),
                             progress)
    title = (f"SMART's table under its protocol, {data.describe()}, LogitBoost (SMART's logistic form, from F = 0), "
             f"{leaves} leaves, learning rate 0.1, fixed rho, runs timed in lockstep")
    return paper_tables(curves, "test loss", False, target, PAPER_A8A, f"smart_paper_{data.name}", title)


MVS_LAMBDAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0)
"""The lambda grid of the MVS protocol (the paper's is "a logspace grid", its bounds lost)."""

GOSS_RATIOS = ((5, 1), (4, 1), (2, 1), (1, 1), (1, 2), (1, 4), (1, 5))
"""The MVS paper's grid of GOSS's large:small gradient ratios."""


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    """``k`` seeded disjoint validation folds of ``n`` rows."""
    return np.array_split(np.random.default_rng(seed).permutation(n), k)


def _test_errors(params: dict[str, Any], train_set: Dataset, X: np.ndarray, y: np.ndarray, num_boost_round: int,
                 seeds: Sequence[int]) -> np.ndarray:
    """1 - AUC on (X, y) of one model per seed."""
    auc = get_metric("auc")
    errors = []
    for seed in seeds:
        raw = train({**params, "seed": seed}, train_set, num_boost_round).predict(X, raw_score=True)
        errors.append(1.0 - auc(y, raw, raw))
    return np.array(errors)


def mvs_paper_tables(data: ExperimentData, rates: Sequence[float] = (0.1, 0.2, 0.5, 0.8), num_boost_round: int = 100,
                     seeds: Sequence[int] = range(5), folds: int = 5, lambdas: Sequence[float] = MVS_LAMBDAS,
                     goss_ratios: Sequence[tuple[int, int]] = GOSS_RATIOS, leaves: int | None = None,
                     threads: int = 0, progress: Progress = None) -> list[Result]:
    """The MVS paper's comparison under its protocol.

    For each rate, GOSS's large:small ratio and MVS's lambda are tuned by ``folds``-fold
    cross-validation on the training set (1 - AUC, the paper's grids), then every sampler
    (uniform, GOSS and MVS tuned, MVS Adaptive) is trained with each seed and scored on the
    test set; no sampling is the baseline. At rate 0.8 (when among ``rates``) the tuned
    samplers and the baseline are also trained in lockstep, and each run's training time to
    the baseline's best test AUC is read off.

    Returns
    -------
    list of Result
        ``mvs_paper_<name>``: ``sampler``, ``rate``, ``tuned`` (the chosen ratio or lambda),
        ``1-AUC mean``, ``1-AUC std``, ``relative to baseline``; figure: 1 - AUC against the
        rate. ``mvs_paper_lambda_<name>``: the cross-validated 1 - AUC of every lambda (and
        GOSS ratio) at every rate. ``mvs_paper_time_<name>`` (with rate 0.8): ``sampler``,
        ``iteration`` and ``seconds`` to the baseline's test AUC, ``time change`` (the paper:
        MVS -17.7%, GOSS -8.5%, uniform never).
    """
    params = {**base_params(data, leaves, threads), "verbosity": -1}
    auc = get_metric("auc")
    train_set = Dataset(data.X, data.y).construct()

    def cv_error(run: dict[str, Any]) -> float:
        errors = []
        for fold in _folds(len(data.y), folds, 0):
            keep = np.ones(len(data.y), bool)
            keep[fold] = False
            part = Dataset(data.X[keep], data.y[keep], reference=train_set)
            raw = train(run, part, num_boost_round).predict(data.X[fold], raw_score=True)
            errors.append(1.0 - auc(data.y[fold], raw, raw))
        return float(np.mean(errors))

    baseline = _test_errors({**params, "sampling": "none"}, train_set, data.X_test, data.y_test, num_boost_round,
                            seeds)
    rows = [{"sampler": "none", "rate": 1.0, "tuned": "-", "1-AUC mean": baseline.mean(), "1-AUC std": baseline.std(),
             "relative to baseline": 0.0}]
    sweep = []
    tuned: dict[float, dict[str, dict[str, Any]]] = {}
    for rate in rates:
        run = {**params, "sample_rate": rate}
        goss = {f"{a}:{b}": {**run, "sampling": "goss", "goss_top_rate": rate * a / (a + b)} for a, b in goss_ratios}
        mvs = {f"{lam:g}": {**run, "sampling": "mvs", "mvs_lambda": lam} for lam in lambdas}
        cv = {}
        for family, grid in (("goss", goss), ("mvs", mvs)):
            for value, candidate in grid.items():
                cv[family, value] = cv_error(candidate)
                sweep.append({"rate": rate, "sampler": family, "ratio or lambda": value,
                              "cross-validated 1-AUC": cv[family, value]})
            _say(progress, f"rate {rate}: {family} tuned by {folds}-fold CV")
        best_goss = min(goss, key=lambda v: cv["goss", v])
        best_mvs = min(mvs, key=lambda v: cv["mvs", v])
        tuned[rate] = {"uniform": ({**run, "sampling": "uniform"}, "-"),
                       "goss": (goss[best_goss], best_goss),
                       "mvs": (mvs[best_mvs], f"lambda={best_mvs}"),
                       "mvs-adaptive": ({**run, "sampling": "mvs", "mvs_lambda": "adaptive"}, "-")}
        for label, (config, chosen) in tuned[rate].items():
            e = _test_errors(config, train_set, data.X_test, data.y_test, num_boost_round, seeds)
            rows.append({"sampler": label, "rate": rate, "tuned": chosen, "1-AUC mean": e.mean(), "1-AUC std": e.std(),
                         "relative to baseline": e.mean() / baseline.mean() - 1.0})
            _say(progress, f"{label} at {rate}: test 1-AUC {e.mean():.5f}")
    lines = []
    for label in ("uniform", "goss", "mvs", "mvs-adaptive"):
        mine = [r for r in rows if r["sampler"] == label]
        lines.append(Line(label, np.array([r["rate"] for r in mine]), np.array([r["1-AUC mean"] for r in mine]),
                          np.array([r["1-AUC std"] for r in mine])))
    lines.append(Line("none", np.array([min(rates), 1.0]), np.full(2, baseline.mean())))
    describe = (f"{data.describe()}, {params['num_leaves']} leaves, {num_boost_round} trees, test 1-AUC mean +- std "
                f"over {len(seeds)} seeds; GOSS ratio and MVS lambda tuned by {folds}-fold CV on the training set")
    results = [Result(f"mvs_paper_{data.name}", f"MVS comparison under its protocol, {describe}", rows,
                      [Panel("sample rate", "test 1-AUC", lines, xscale="log")]),
               Result(f"mvs_paper_lambda_{data.name}", f"MVS lambda sweep and GOSS ratios, {data.describe()}, "
                                                       f"{folds}-fold cross-validated 1-AUC on the training set",
                      sweep)]
    if 0.8 in tuned:
        results.append(_time_to_baseline(data, params, train_set, tuned[0.8], num_boost_round, progress))
    return results


def _time_to_baseline(data: ExperimentData, params: dict[str, Any], train_set: Dataset,
                      tuned: dict[str, tuple[dict[str, Any], str]], num_boost_round: int,
                      progress: Progress) -> Result:
    """The MVS paper's learning-time comparison at one rate: no sampling and each tuned sampler
    trained in lockstep; each run's seconds until its test AUC reaches the baseline's final one."""
    auc = get_metric("auc")
    valid_set = Dataset(data.X_test, data.y_test, reference=train_set)
    specs = [SamplerSpec("none", {"sampling": "none"}),
             *[SamplerSpec(f"{label} ({chosen})" if chosen != "-" else label,
                           {k: v for k, v in config.items() if k not in params or params[k] != v})
               for label, (config, chosen) in tuned.items()]]
    curves = lockstep_curves(specs, params, train_set, valid_set, num_boost_round,
                             lambda trainer: auc(data.y_test, trainer.eval_sets[0].raw, trainer.eval_sets[0].raw),
                             progress)
    target = float(curves[0].values.max())
    base_ms = float(np.median(np.diff(curves[0].seconds, prepend=0.0)))
    base_steady = (int(np.argmax(curves[0].values)) + 1) * base_ms
    rows = []
    for curve in curves:
        hit = np.flatnonzero(curve.values >= target)
        k = int(hit[0]) if hit.size else None
        ms = float(np.median(np.diff(curve.seconds, prepend=0.0)))
        rows.append({"sampler": curve.label, "best test AUC": float(curve.values.max()),
                     "iteration": k + 1 if k is not None else None,
                     "seconds": float(curve.seconds[k]) if k is not None else None, "ms/iteration": 1e3 * ms,
                     "time change": (k + 1) * ms / base_steady - 1.0 if k is not None else None})
    title = (f"MVS learning time at rate 0.8, {data.describe()}, {params['num_leaves']} leaves: training to the "
             f"no-sampling model's best test AUC ({target:.5f} within {num_boost_round} trees), runs in lockstep; "
             f"time change: iterations times median ms per iteration, against no sampling's")
    return Result(f"mvs_paper_time_{data.name}", title, rows)
