"""The SMART paper's LambdaMART experiment, run with smartboost (``smartboost experiment ranking``).

:func:`smart_table`: LambdaMART without sampling and with each sampler at each sample rate;
for each run, the training seconds until test NDCG@10 first reaches the no-sampling run's best
minus a tolerance, the iteration it happens at, and the mean sample rate (ASRI). Sampled runs
train twice the trees, so that slower learners can still reach the target. Test NDCG@10 is
evaluated after every iteration, outside the timing. ``benchmarks/bench_ranking.py`` adds
LightGBM side by side, through :func:`ndcg_curve`.

:func:`smart_paper_tables` runs the paper's protocol (``--protocol paper``): the methods of its
MSLR-WEB30K table (baseline, uniform, weight trimming, loss-based, first and second order), the
importance samplers at a fixed rho (set so that the first iteration keeps the given share of
the rows: the sample size then follows the gradients), with the paper's lambdas (no
normalisation) and with LightGBM's, every run timed in lockstep; its two tables at uniform
sampling's best NDCG@10 (as the paper's) and at each method's best, beside the paper's WEB30K
figures. The paper's MSLR-WEB10K/30K and Yahoo! sets cannot be had offline: the generated
MSLR-like set stands in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import Dataset, train
from ..datasets import make_ranking_like
from .data import SYNTHETIC, ExperimentData, load_public
from .report import Line, Panel, Result
from .sampling import PaperFigures, SamplerSpec, lockstep_curves, paper_tables, start_rho

__all__ = ["load", "base_params", "ndcg_curve", "smart_table", "DEFAULT_SAMPLERS", "PAPER_WEB30K", "paper_methods",
           "smart_paper_tables"]

DEFAULT_SAMPLERS = tuple(SamplerSpec(name, {"sampling": name})
                         for name in ("uniform", "goss", "mvs", "smart1", "smart2"))
"""The table's sampled runs (each at every rate)."""


def load(name: str, queries: int | None = None, rows: int | None = None, seed: int = 0) -> ExperimentData:
    """A ranking set of the registry, or ``"synthetic"``: ``make_ranking_like`` with ``queries``
    training queries (default 10,000) and a quarter as many test queries."""
    if name != SYNTHETIC:
        return load_public(name, ["ranking"], rows, seed)
    queries = queries or 10_000
    X, y, qid = make_ranking_like(queries, seed)
    X_test, y_test, qid_test = make_ranking_like(max(queries // 4, 1), seed + 1)
    return ExperimentData(SYNTHETIC, "ranking", X, y, X_test, y_test, qid, qid_test, note="MSLR-like, generated")


def base_params(leaves: int = 31, threads: int = 0) -> dict[str, Any]:
    """LambdaMART settings of every run: ``leaves`` leaves, learning rate 0.1, 20 rows per leaf,
    NDCG truncation 30, every row (a run's sampler replaces ``sampling``)."""
    return {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
            "lambdarank_truncation_level": 30, "num_threads": threads, "sampling": "none"}


def ndcg_curve(params: dict[str, Any], X: np.ndarray, y: np.ndarray, qid: np.ndarray, X_test: np.ndarray,
               y_test: np.ndarray, qid_test: np.ndarray, trees: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Train ``trees`` iterations, evaluating test NDCG@10 after each (outside the timing).

    A 3-iteration warm-up first compiles (or loads) the configuration's kernels outside the timing.

    Returns
    -------
    seconds : ndarray
        Cumulative training seconds after each iteration.
    ndcg : ndarray
        Test NDCG@10 after each iteration.
    asri : float
        Mean realised sample rate.
    """
    train_set = Dataset(X, y, qid=qid).construct()
    test_set = Dataset(X_test, y_test, qid=qid_test, reference=train_set)
    for rounds in (3, trees):  # warm-up, then the timed run
        booster = train({**params, "metric": "ndcg@10", "verbosity": -1}, train_set, rounds, valid_sets=[test_set],
                        valid_names=["test"])
    stats = booster.iteration_stats
    return (np.cumsum(stats["seconds"]), np.array(booster.evals_result["test"]["ndcg@10"]),
            float(np.mean(stats["sample_rate"])))


def smart_table(data: ExperimentData, rates: Sequence[float], trees: int,
                samplers: Sequence[SamplerSpec] = DEFAULT_SAMPLERS, leaves: int = 31, tolerance: float = 0.002,
                threads: int = 0, progress: Callable[[str], None] | None = None) -> Result:
    """Seconds to a target test NDCG@10 without sampling and with each sampler at each rate.

    Parameters
    ----------
    data : ExperimentData
        With query ids.
    rates : sequence of float
        ``sample_rate`` values.
    trees : int
        Trees of the no-sampling run; the sampled runs train twice as many.
    samplers : sequence of SamplerSpec
        Sampler settings (their ``sample_rate`` is each of ``rates``).
    leaves : int
    tolerance : float
        The target is the no-sampling run's best test NDCG@10 minus ``tolerance``.
    threads : int
        0: all.
    progress : callable, optional
        Called with a line after each run.

    Returns
    -------
    Result
        One row per run: ``run``, ``ASRI``, ``best NDCG@10``, ``iteration`` (to the target,
        None when never reached), ``seconds`` (to the target), ``speed-up`` (against no
        sampling); test NDCG@10 against iterations and seconds.
    """
    base = base_params(leaves, threads)
    arrays = (data.X, data.y, data.qid, data.X_test, data.y_test, data.qid_test)

    def run(label: str, params: dict[str, Any], n_trees: int) -> tuple[str, tuple[np.ndarray, np.ndarray, float]]:
        curve = ndcg_curve(params, *arrays, n_trees)
        if progress is not None:
            progress(f"{label}: {n_trees} trees in {curve[0][-1]:.2f} s, best test NDCG@10 {curve[1].max():.4f}")
        return label, curve

    runs = [run("none", base, trees)]
    runs += [run(f"{spec.label} {rate:g}", {**base, **spec.params, "sample_rate": rate}, 2 * trees)
             for rate in rates for spec in samplers]
    target = float(runs[0][1][1].max()) - tolerance
    rows = []
    base_seconds = None
    for label, (seconds, ndcg, asri) in runs:
        hit = np.flatnonzero(ndcg >= target)
        t = float(seconds[hit[0]]) if hit.size else None
        base_seconds = t if label == "none" else base_seconds
        rows.append({"run": label, "ASRI": asri, "best NDCG@10": float(ndcg.max()),
                     "iteration": int(hit[0]) + 1 if hit.size else None, "seconds": t,
                     "speed-up": base_seconds / t if t and base_seconds else None})
    panels = [Panel(xlabel, "test NDCG@10",
                    [Line(label, np.arange(1, curve[1].size + 1) if by_iteration else curve[0], curve[1])
                     for label, curve in runs])
              for xlabel, by_iteration in (("iteration", True), ("training seconds", False))]
    title = (f"SMART LambdaMART table, {data.describe()}, {leaves} leaves; target: no-sampling best test NDCG@10 "
             f"- {tolerance} = {target:.4f}; sampled runs train {2 * trees} trees, the other {trees}")
    return Result(f"ranking_smart_table_{data.name}_{leaves}", title, rows, panels)


PAPER_WEB30K = {
    "baseline": PaperFigures((0.464, 97, 1.0, 33773), (0.480, 228, 1.0, 89898)),
    "uniform": PaperFigures((0.464, 117, 0.0800, 6495), (0.464, 117, 0.0800, 6495)),
    "trimming": PaperFigures((0.464, 47, 0.1021, 2948), (0.471, 139, 0.0984, 9405)),
    "loss-based": PaperFigures((0.464, 95, 0.1468, 7453), None),
    "1st-order": PaperFigures((0.464, 94, 0.0901, 5652), (0.480, 247, 0.0836, 16234)),
    "2nd-order": PaperFigures((0.464, 63, 0.0595, 1654), (0.480, 236, 0.0530, 6827)),
}
"""SMART's MSLR-WEB30K table (LambdaMART), by method: NDCG@10, iterations, ASRI, seconds."""


def paper_methods(data: ExperimentData, params: dict[str, Any], rate: float, eta: float = 1.0) -> list[SamplerSpec]:
    """The methods of SMART's WEB30K table at ``rate``: uniform and trimming keep that share of
    the rows (trimming: the largest hessians); loss-based, first- and second-order sampling use
    the fixed rho that keeps it at the first iteration (:func:`~.sampling.start_rho`); second
    order with the paper's correction at ``eta``, and without it."""
    def rho(sampling: str) -> float:
        return start_rho({**params, "sampling": sampling}, data, rate)

    return [SamplerSpec("baseline", {"sampling": "none"}),
            SamplerSpec(f"uniform {rate:g}", {"sampling": "uniform", "sample_rate": rate}),
            SamplerSpec(f"trimming {rate:g}", {"sampling": "trimming", "sample_rate": rate}),
            SamplerSpec(f"loss-based rho={rho('loss'):.3g}", {"sampling": "loss", "smart_rho": rho("loss")}),
            SamplerSpec(f"1st-order rho={rho('smart1'):.3g}", {"sampling": "smart1", "smart_rho": rho("smart1")}),
            SamplerSpec(f"2nd-order rho={rho('smart2'):.3g}", {"sampling": "smart2", "smart_rho": rho("smart2"),
                                                               "smart_eta": eta, "smart_correction": "paper"}),
            SamplerSpec(f"2nd-order rho={rho('smart2'):.3g}, no correction",
                        {"sampling": "smart2", "smart_rho": rho("smart2"), "smart_eta": 0.0})]


def smart_paper_tables(data: ExperimentData, trees: int, rate: float = 0.1, norms: Sequence[bool] = (False, True),
                       leaves: int = 31, threads: int = 1,
                       progress: Callable[[str], None] | None = None) -> list[Result]:
    """SMART's LambdaMART tables under its protocol (see the module docstring), once per
    setting of ``lambdarank_norm`` in ``norms`` (False: the paper's lambdas).

    Returns
    -------
    list of Result
        Per setting, :func:`~.sampling.paper_tables`' two tables: at uniform sampling's best
        test NDCG@10 (the paper's ranking tables read every method there), and at each
        method's best.
    """
    train_set = Dataset(data.X, data.y, qid=data.qid).construct()
    valid_set = Dataset(data.X_test, data.y_test, qid=data.qid_test, reference=train_set)
    results = []
    for norm in norms:
        params = {**base_params(leaves, threads), "lambdarank_norm": norm, "metric": "ndcg@10", "verbosity": -1}
        methods = paper_methods(data, params, rate)
        curves = lockstep_curves(methods, params, train_set, valid_set, trees,
                                 lambda trainer: trainer.evaluate()[0].value, progress)
        target = float(curves[1].values.max())  # the uniform run's best
        lambdas = "LightGBM's normalised lambdas" if norm else "the paper's lambdas (no normalisation)"
        title = (f"SMART's LambdaMART table under its protocol, {data.describe()}, {lambdas}, {leaves} leaves, "
                 f"learning rate 0.1, rate {rate:g}, runs timed in lockstep")
        results += paper_tables(curves, "NDCG@10", True, target, PAPER_WEB30K,
                                f"ranking_smart_paper_{data.name}_{'norm' if norm else 'paper'}", title)
    return results
