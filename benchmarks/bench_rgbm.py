"""RGBM experiment (the RGBM paper's Figure 5 shape): training and test loss against iterations and
seconds, one curve per number t of candidate features drawn per tree (Type 3), on a geometric grid
from 1 to F.

Usage (public sets are read through ``smartboost.datasets`` from ``$SMARTBOOST_DATA``)::

    python benchmarks/bench_rgbm.py --dataset a9a --iterations 500
    python benchmarks/bench_rgbm.py --dataset lightgbm-regression --iterations 500
    python benchmarks/bench_rgbm.py --dataset high-dim --iterations 500

Datasets and losses: ``a9a`` (regularised logistic, mu = 0.001), ``lightgbm-regression``
(squared loss), ``high-dim`` (generated: 200 training rows x 2,000 features, 10 informative,
regularised logistic; p >> n like colon-cancer). Every run: stumps (``max_depth=1``), first-order
boosting with RGBM's constant step 1/sigma (``boosting="gradient"``, ``step_rule="smooth"``,
``learning_rate=1``), 2 threads. Seconds are the library's per-iteration training time
(``iteration_stats``); the losses are computed outside it from running scores. Prints a markdown
table of the training loss reached within fixed time budgets, and saves it with PNG curves to
``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

import smartboost as sb
from smartboost import datasets
from smartboost.objectives import make_objective

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def load(name: str):
    """Train/test arrays and the objective parameters."""
    if name == "high-dim":
        rng = np.random.default_rng(0)
        X = rng.standard_normal((700, 2000))
        margin = X[:, :10] @ rng.standard_normal(10)
        y = (margin + 0.5 * rng.standard_normal(700) > 0).astype(np.float64)
        return X[:200], y[:200], X[200:], y[200:], {"objective": "regularized_logistic", "logistic_mu": 0.001}
    X, y, Xt, yt = datasets.load(name, download=False)
    objective = {"objective": "regression"} if name == "lightgbm-regression" else {
        "objective": "regularized_logistic", "logistic_mu": 0.001}
    return X, y, Xt, yt, objective


class LossCurves(sb.TrainingCallback):
    """Training and test loss after every iteration, from running raw scores (not timed)."""

    def __init__(self, objective, train, test):
        self.objective, self.sets = objective, [train, test]

    def before_training(self, env):
        self.scores = [np.full(d.num_data(), env.booster.base_score) for d in self.sets]
        self.losses = [[], []]

    def after_iteration(self, env):
        k = env.booster.num_trees()
        for data, scores, losses in zip(self.sets, self.scores, self.losses):
            env.booster.predict_binned(data.binned, scores, k - 1, k)
            label = self.objective.check_label(data.label, training=False)
            losses.append(float(np.mean(self.objective.loss(label, scores))))
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="a9a", choices=["a9a", "lightgbm-regression", "high-dim"])
    parser.add_argument("--iterations", type=int, default=500)
    args = parser.parse_args()
    X, y, Xt, yt, objective_params = load(args.dataset)
    train = sb.Dataset(X, y)
    test = sb.Dataset(Xt, yt, reference=train)
    objective = make_objective(objective_params["objective"], objective_params)
    n_features = int(train.binned.usable_features.sum())
    grid = sorted({min(2 ** i, n_features) for i in range(int(np.log2(n_features)) + 2)})
    sb.compile_kernels()
    base = {**objective_params, "boosting": "gradient", "step_rule": "smooth", "learning_rate": 1.0,
            "max_depth": 1, "min_data_in_leaf": 1, "num_threads": 2, "verbosity": -1}
    runs = {}
    for t in grid:
        params = {**base, "selection_type": 3, "selection_t": t} if t < n_features else base
        sb.train(params, train, 3)  # warm-up: compiles this selection's kernel variant outside the timing
        curves = LossCurves(objective, train, test)
        booster = sb.train(params, train, args.iterations, callbacks=[curves])
        runs[t] = (np.cumsum(booster.iteration_stats["seconds"]), *map(np.array, curves.losses))
    full_time = runs[n_features][0][-1]
    budgets = [full_time * f for f in (0.05, 0.1, 0.25, 0.5, 1.0)]
    lines = ["| t | s per iteration | " + " | ".join(f"train loss at {b:.3f} s" for b in budgets)
             + " | final test loss |", "|---" * (len(budgets) + 3) + "|"]
    for t, (seconds, train_loss, test_loss) in runs.items():
        reached = [train_loss[np.searchsorted(seconds, b, side="right") - 1] if seconds[0] <= b else np.nan
                   for b in budgets]
        lines.append(f"| {t} | {seconds[-1] / len(seconds):.5f} | " + " | ".join(f"{v:.5f}" for v in reached)
                     + f" | {test_loss[-1]:.5f} |")
    title = (f"RGBM Type 3 per tree, {args.dataset}: {train.num_data():,} rows x {n_features} features, "
             f"{objective_params['objective']}, stumps, step 1/sigma, {args.iterations} iterations")
    text = f"### {title}\n\n" + "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"rgbm_{args.dataset}.md"), "w") as f:
        f.write(text + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    for t, (seconds, train_loss, test_loss) in runs.items():
        axes[0].plot(np.arange(1, len(train_loss) + 1), train_loss, label=f"t={t}")
        axes[1].plot(seconds, train_loss, label=f"t={t}")
        axes[2].plot(seconds, test_loss, label=f"t={t}")
    for ax, (xlabel, ylabel) in zip(axes, [("iteration", "training loss"), ("seconds", "training loss"),
                                           ("seconds", "test loss")]):
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_yscale("log")
    axes[0].legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(RESULTS, f"rgbm_{args.dataset}.png"), dpi=120)


if __name__ == "__main__":
    main()
