"""The RGBM paper's experiment (its Figure 5 shape), run with smartboost (``smartboost experiment rgbm``).

:func:`rgbm_figure`: training and test loss against iterations and seconds, one curve per number
t of candidate features drawn per tree (Type 3, ``selection_t``), on a geometric grid from 1 to
F (t = F is Type 0, every feature). Every run: stumps (``max_depth=1``), first-order boosting
with RGBM's constant step 1/sigma (``boosting="gradient"``, ``step_rule="smooth"``,
``learning_rate=1``). Seconds are the library's per-iteration training time
(``iteration_stats``); the losses are computed outside it from running scores. The table gives
the training loss reached within fractions of the t = F run's time.

:func:`rgbm_paper_figure` runs the paper's protocol (``--protocol paper``): its stump (a
single-coefficient learner normalised to unit norm, ``weak_learner="sign"``), every selection
Type (0; 1 with t (feature, threshold) pairs; 2; 3 with t features) on the paper's grid of t,
each with line search and with the constant step 1/sigma, the data split 80/20 at random,
100 quantile thresholds per feature, every run given the same training time in lockstep, and
the training and test losses compared at equal times. The paper's rcv1 and YearPredictionMSD
are not in the registry: ``rcv1-like`` and ``yearprediction-like`` are generated stand-ins.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import scipy.sparse as sp

from .. import Dataset, TrainingCallback, train
from ..datasets import make_high_dim
from ..engine import Trainer
from ..objectives import Objective, make_objective
from .data import SYNTHETIC, ExperimentData, load_public
from .report import Line, Panel, Result
from .timing import train_in_lockstep

__all__ = ["load", "objective_params", "t_grid", "LossCurves", "rgbm_figure", "STAND_INS", "paper_t_grid",
           "paper_params", "rgbm_paper_figure"]

STAND_INS = ("rcv1-like", "yearprediction-like")
"""Generated stand-ins for the RGBM paper's sets that the registry does not have."""

BUDGETS = (0.05, 0.1, 0.25, 0.5, 1.0)
"""Fractions of the t = F run's training time at which the table reads each run's training loss."""


def load(name: str, rows: int | None = None, seed: int = 0, holdout: float | None = None) -> ExperimentData:
    """A binary or regression set of the registry (``holdout``: as
    :func:`~smartboost.experiments.data.load_public`), or a generated one:

    - ``"synthetic"``: ``make_high_dim`` (200 training and 500 test rows, 2,000 features of
      which 10 informative; p >> n like colon-cancer);
    - ``"rcv1-like"``: a stand-in for LIBSVM rcv1 (20,242 rows, 47,236 sparse tf-idf features):
      ``rows`` rows (default 10,000) of 20,000 sparse non-negative features (about 0.25% set),
      the label a noisy sparse linear function of 200 of them; a fifth held out;
    - ``"yearprediction-like"``: a stand-in for YearPredictionMSD (463,715 rows, 90 dense
      features, regression): ``rows`` rows (default 50,000) of 90 correlated Gaussian features,
      a smooth nonlinear target; a fifth held out.
    """
    if name == SYNTHETIC:
        X, y = make_high_dim(700, 2000, 10, seed)
        return ExperimentData(SYNTHETIC, "binary", X[:200], y[:200], X[200:], y[200:], note="p >> n, generated")
    if name in STAND_INS:
        X, y, task = (_rcv1_like(rows or 10_000, seed) if name == "rcv1-like"
                      else _yearprediction_like(rows or 50_000, seed))
        cut = X.shape[0] * 4 // 5
        return ExperimentData(name, task, X[:cut], y[:cut], X[cut:], y[cut:], note="a generated stand-in")
    return load_public(name, ["binary", "regression"], rows, seed, holdout=holdout)


def _rcv1_like(n: int, seed: int) -> tuple[sp.csr_matrix, np.ndarray, str]:
    """Sparse non-negative tf-idf-like rows and a noisy sparse linear label (see :func:`load`)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, 20_000, density=0.0025, format="csr", random_state=seed, dtype=np.float64)
    X.data = -np.log(X.data)  # heavy-tailed positive weights, as tf-idf values are
    weights = np.zeros(20_000)
    weights[rng.choice(20_000, 200, replace=False)] = rng.standard_normal(200) * 3.0
    margin = X @ weights
    y = (margin - np.median(margin) + 0.5 * rng.standard_normal(n) > 0).astype(np.float64)
    return X, y, "binary"


def _yearprediction_like(n: int, seed: int) -> tuple[np.ndarray, np.ndarray, str]:
    """Correlated Gaussian features and a smooth nonlinear target (see :func:`load`)."""
    rng = np.random.default_rng(seed)
    mixing = rng.standard_normal((90, 90)) / np.sqrt(90)
    X = (rng.standard_normal((n, 90)) @ (np.eye(90) + mixing)).astype(np.float32)
    y = np.sin(X[:, 0]) * 3 + X[:, 1] * X[:, 2] + np.abs(X[:, 3]) * 2 + 0.5 * X[:, 4:12].sum(1) \
        + rng.standard_normal(n)
    return X, y.astype(np.float64), "regression"


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
    train_set = Dataset(data.X, data.y).construct()
    test_set = Dataset(data.X_test, data.y_test, reference=train_set)
    objective = make_objective(objective_settings["objective"], objective_settings)
    n_features = int(train_set.binned.usable_features.sum())
    grid = sorted({min(int(t), n_features) for t in t_values}) if t_values else t_grid(n_features)
    base = {**objective_settings, "boosting": "gradient", "step_rule": "smooth", "learning_rate": 1.0,
            "max_depth": 1, "min_data_in_leaf": 1, "num_threads": threads, "sampling": "none", "verbosity": -1}
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


PAPER_MU = 1e-4
"""The regularised logistic loss's mu in the RGBM authors' published code (their text gives none)."""


def paper_t_grid(n: int, points: int = 5) -> list[int]:
    """The paper's t: ``points`` values on a geometric grid from 1 to ``n`` (rounded, distinct)."""
    return sorted({max(1, min(n, round(n ** (k / (points - 1))))) for k in range(points)})


def paper_params(task: str, threads: int = 0) -> dict[str, Any]:
    """The RGBM paper's weak learner and loss: its normalised stump (``weak_learner="sign"``,
    ``max_depth=1``) from the null model (``boost_from_average=False``), first-order, learning
    rate 1 (the step rule sizes each step), no leaf-size limits; squared loss for regression,
    the regularised logistic loss with :data:`PAPER_MU` for binary sets."""
    objective = {"objective": "regression"} if task == "regression" else {"objective": "regularized_logistic",
                                                                          "logistic_mu": PAPER_MU}
    return {**objective, "boosting": "gradient", "weak_learner": "sign", "max_depth": 1, "learning_rate": 1.0,
            "boost_from_average": False, "min_data_in_leaf": 0, "min_sum_hessian_in_leaf": 0.0,
            "num_threads": threads, "verbosity": -1}


def _paper_runs(n_features: int, n_pairs: int, types: Sequence[int], rules: Sequence[str],
                points: int) -> list[tuple[str, str, dict[str, Any]]]:
    """``(selection, step, params)`` of every run: Type 0; Type 1 with the grid over the pairs;
    Type 2; Type 3 with the grid's inner t (1 is Type 2, F is Type 0)."""
    selections: list[tuple[str, dict[str, Any]]] = []
    for kind in types:
        if kind == 0:
            selections.append((f"Type 0 (t={n_features})", {}))
        elif kind == 1:
            selections += [(f"Type 1 t={t}", {"selection_type": 1, "selection_t": t})
                           for t in paper_t_grid(n_pairs, points)[:-1]]
        elif kind == 2:
            selections.append(("Type 2 (t=1)", {"selection_type": 2}))
        else:
            selections += [(f"Type 3 t={t}", {"selection_type": 3, "selection_t": t})
                           for t in paper_t_grid(n_features, points)[1:-1]]
    steps = {"line": "line search", "smooth": "1/sigma"}
    return [(selection, steps[rule], {**extra, "step_rule": rule}) for selection, extra in selections for rule in rules]


def rgbm_paper_figure(data: ExperimentData, seconds: float, types: Sequence[int] = (0, 1, 2, 3),
                      rules: Sequence[str] = ("line", "smooth"), points: int = 5, threads: int = 0,
                      progress: Callable[[str], None] | None = None) -> Result:
    """The RGBM paper's Figure 5 under its protocol (see the module docstring).

    Parameters
    ----------
    data : ExperimentData
        A binary or regression set (the paper: 80/20 random split, ``load(..., holdout=0.2)``).
    seconds : float
        Training time given to every run.
    types : sequence of int
        Selection Types to run.
    rules : sequence of str
        Step rules: ``"line"`` (line search) and ``"smooth"`` (1/sigma).
    points : int
        Values of the geometric grid of t.
    threads : int
        0: all.
    progress : callable, optional
        Called with a line per run.

    Returns
    -------
    Result
        One row per run: ``selection``, ``step``, ``iterations``, ``ms per iteration``, and the
        training and test losses at a quarter, half and all of ``seconds`` (nan before a run's
        first iteration); training and test loss against seconds (log scale).
    """
    params = paper_params(data.task, threads)
    bins = {"max_bin": 100, "min_data_in_bin": 1}  # the paper's 100 quantile thresholds per feature
    train_set = Dataset(data.X, data.y, params=bins).construct()
    test_set = Dataset(data.X_test, data.y_test, reference=train_set)
    objective = make_objective(params["objective"], params)
    label = objective.check_label(np.asarray(data.y, np.float64))
    label_test = objective.check_label(np.asarray(data.y_test, np.float64), training=False)
    usable = train_set.binned.usable_features
    n_features = int(usable.sum())
    n_pairs = int((train_set.bin_mapper.n_bins - 1)[usable].sum())
    runs = _paper_runs(n_features, n_pairs, types, rules, points)
    losses: list[list[tuple[float, float]]] = [[] for _ in runs]

    def record(k: int, trainer: Trainer) -> None:
        losses[k].append((float(np.mean(objective.loss(label, trainer.rows.raw))),
                          float(np.mean(objective.loss(label_test, trainer.eval_sets[0].raw)))))

    trainers = train_in_lockstep([{**params, **bins, **extra} for _, _, extra in runs], train_set, [test_set],
                                 10_000_000, record, seconds=seconds)
    times = [seconds * f for f in (0.25, 0.5, 1.0)]
    rows, curves = [], []
    for (selection, step, _), trainer, loss in zip(runs, trainers, losses):
        elapsed = np.cumsum(trainer.booster.iteration_stats["seconds"])
        train_loss, test_loss = np.array(loss).T
        curves.append((f"{selection}, {step}", elapsed, train_loss, test_loss))
        row: dict[str, Any] = {"selection": selection, "step": step, "iterations": len(elapsed),
                               "ms per iteration": 1e3 * elapsed[-1] / len(elapsed)}
        for name, values in (("train", train_loss), ("test", test_loss)):
            for t in times:
                at = np.searchsorted(elapsed, t, side="right") - 1
                row[f"{name} loss at {t:.3g} s"] = float(values[at]) if at >= 0 else float("nan")
        rows.append(row)
        if progress is not None:
            progress(f"{selection}, {step}: {len(elapsed)} iterations, training loss {train_loss[-1]:.5f}, "
                     f"test loss {test_loss[-1]:.5f}")
    panels = [Panel("training seconds", f"{which} loss", [Line(name, elapsed, losses_[column])
                                                          for name, elapsed, *losses_ in curves], yscale="log")
              for column, which in enumerate(("training", "test"))]
    title = (f"RGBM under its protocol, {data.describe()}, {params['objective']}, the paper's normalised stumps "
             f"from F = 0, 100 thresholds per feature, {seconds:g} s of training per run, runs in lockstep")
    return Result(f"rgbm_paper_{data.name}", title, rows, panels)
