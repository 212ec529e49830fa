"""The SMART paper's LambdaMART experiment, run with smartboost (``smartboost experiment ranking``).

:func:`smart_table`: LambdaMART without sampling and with each sampler at each sample rate;
for each run, the training seconds until test NDCG@10 first reaches the no-sampling run's best
minus a tolerance, the iteration it happens at, and the mean sample rate (ASRI). Sampled runs
train twice the trees, so that slower learners can still reach the target. Test NDCG@10 is
evaluated after every iteration, outside the timing. ``benchmarks/bench_ranking.py`` adds
LightGBM side by side, through :func:`ndcg_curve`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import Dataset, train
from ..datasets import make_ranking_like
from .data import SYNTHETIC, ExperimentData, load_public
from .report import Line, Panel, Result
from .sampling import SamplerSpec

__all__ = ["load", "base_params", "ndcg_curve", "smart_table", "DEFAULT_SAMPLERS"]

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
    NDCG truncation 30."""
    return {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
            "lambdarank_truncation_level": 30, "num_threads": threads}


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
    train_set = Dataset(X, y, qid=qid)
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
