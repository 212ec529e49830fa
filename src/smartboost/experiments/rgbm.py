"""The RGBM paper's experiment (its Figure 5 shape), run with smartboost (``smartboost experiment rgbm``).

:func:`rgbm_figure`: training and test loss against iterations and seconds, one curve per number
t of candidate features drawn per tree (Type 3, ``selection_t``), on a geometric grid from 1 to
F (t = F is Type 0, every feature). Every run: stumps (``max_depth=1``), first-order boosting
with RGBM's constant step 1/sigma (``boosting="gradient"``, ``step_rule="smooth"``,
``learning_rate=1``). Seconds are the library's per-iteration training time
(``iteration_stats``); the losses are computed outside it from running scores. The table gives
the training loss reached within fractions of the t = F run's time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import Dataset, TrainingCallback, train
from ..datasets import make_high_dim
from ..objectives import Objective, make_objective
from .data import SYNTHETIC, ExperimentData, load_public
from .report import Line, Panel, Result

__all__ = ["load", "objective_params", "t_grid", "LossCurves", "rgbm_figure"]

BUDGETS = (0.05, 0.1, 0.25, 0.5, 1.0)
"""Fractions of the t = F run's training time at which the table reads each run's training loss."""


def load(name: str, rows: int | None = None, seed: int = 0) -> ExperimentData:
    """A binary or regression set of the registry, or ``"synthetic"``: ``make_high_dim`` (200
    training and 500 test rows, 2,000 features of which 10 informative; p >> n like colon-cancer)."""
    if name != SYNTHETIC:
        return load_public(name, ["binary", "regression"], rows, seed)
    X, y = make_high_dim(700, 2000, 10, seed)
    return ExperimentData(SYNTHETIC, "binary", X[:200], y[:200], X[200:], y[200:], note="p >> n, generated")


def objective_params(task: str) -> dict[str, Any]:
    """Squared loss for regression; RGBM's regularised logistic loss (mu = 0.001) for binary sets."""
    return {"objective": "regression"} if task == "regression" else {"objective": "regularized_logistic",
                                                                      "logistic_mu": 0.001}


def t_grid(n_features: int) -> list[int]:
    """1, 2, 4, ... and ``n_features``: the powers of two below it, then F itself."""
    return sorted({min(2 ** i, n_features) for i in range(int(np.log2(n_features)) + 2)})


class LossCurves(TrainingCallback):
    """Mean loss on each of ``datasets`` after every iteration, from running raw scores (not timed).

    Parameters
    ----------
    objective : Objective
        Its ``loss`` is averaged over the rows.
    datasets : sequence of Dataset
        Binned with the training set's edges.
    """

    def __init__(self, objective: Objective, datasets: Sequence[Dataset]):
        self.objective, self.datasets = objective, list(datasets)

    def before_training(self, env) -> None:
        self.scores = [np.full(d.num_data(), env.booster.base_score) for d in self.datasets]
        self.losses: list[list[float]] = [[] for _ in self.datasets]

    def after_iteration(self, env) -> bool:
        k = env.booster.num_trees()
        for data, scores, losses in zip(self.datasets, self.scores, self.losses):
            env.booster.predict_binned(data.binned, scores, k - 1, k)
            label = self.objective.check_label(data.label, training=False)
            losses.append(float(np.mean(self.objective.loss(label, scores))))
        return False


def rgbm_figure(data: ExperimentData, iterations: int, t_values: Sequence[int] | None = None, threads: int = 0,
                progress: Callable[[str], None] | None = None) -> Result:
    """Training and test loss against iterations and seconds, one run per t.

    Parameters
    ----------
    data : ExperimentData
        A binary or regression set.
    iterations : int
        Stumps per run.
    t_values : sequence of int, optional
        Candidate features per tree (default :func:`t_grid`); values of at least F run Type 0.
    threads : int
        0: all.
    progress : callable, optional
        Called with a line after each run.

    Returns
    -------
    Result
        One row per t: ``t``, ``ms per iteration``, the training loss at each fraction of
        :data:`BUDGETS` of the t = F (or largest t) run's time (nan before a run's first
        iteration), ``final test loss``; training loss against iterations and seconds, and test
        loss against seconds (log scale).
    """
    objective_settings = objective_params(data.task)
    train_set = Dataset(data.X, data.y)
    test_set = Dataset(data.X_test, data.y_test, reference=train_set)
    objective = make_objective(objective_settings["objective"], objective_settings)
    n_features = int(train_set.binned.usable_features.sum())
    grid = sorted({min(int(t), n_features) for t in t_values}) if t_values else t_grid(n_features)
    base = {**objective_settings, "boosting": "gradient", "step_rule": "smooth", "learning_rate": 1.0,
            "max_depth": 1, "min_data_in_leaf": 1, "num_threads": threads, "verbosity": -1}
    runs = {}
    for t in grid:
        params = {**base, "selection_type": 3, "selection_t": t} if t < n_features else base
        train(params, train_set, 3)  # warm-up: compiles this selection's kernel variant outside the timing
        curves = LossCurves(objective, [train_set, test_set])
        booster = train(params, train_set, iterations, callbacks=[curves])
        runs[t] = (np.cumsum(booster.iteration_stats["seconds"]), *map(np.array, curves.losses))
        if progress is not None:
            progress(f"t={t}: {iterations} iterations in {runs[t][0][-1]:.3f} s, training loss {runs[t][1][-1]:.5f}")
    budgets = [runs[grid[-1]][0][-1] * f for f in BUDGETS]
    rows = []
    for t, (seconds, train_loss, test_loss) in runs.items():
        row: dict[str, Any] = {"t": f"{t} (Type 0)" if t == n_features else t,
                               "ms per iteration": seconds[-1] / len(seconds) * 1e3}
        for b in budgets:
            row[f"train loss at {b:.3g} s"] = (float(train_loss[np.searchsorted(seconds, b, side="right") - 1])
                                               if seconds[0] <= b else float("nan"))
        rows.append({**row, "final test loss": float(test_loss[-1])})
    axes = [("iteration", "training loss", 1), ("training seconds", "training loss", 1),
            ("training seconds", "test loss", 2)]
    panels = [Panel(xlabel, ylabel, [Line(f"t={t}", np.arange(1, curve[0].size + 1) if xlabel == "iteration"
                                          else curve[0], curve[which]) for t, curve in runs.items()], yscale="log")
              for xlabel, ylabel, which in axes]
    title = (f"RGBM Type 3 per tree, {data.describe()}, {objective_settings['objective']}, stumps, step 1/sigma, "
             f"{iterations} iterations")
    return Result(f"rgbm_{data.name}", title, rows, panels)
