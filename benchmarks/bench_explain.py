"""SHAP values and the regression objectives of issue 38, side by side with LightGBM.

Run by hand (not a test): ``python benchmarks/bench_explain.py`` (the sizes of the issue, which
take a while on few cores) or smaller, e.g. ``--train-rows 200000 --contrib-rows 20000``.

(a) ``pred_contrib``: a model of ``--trees`` trees of ``--leaves`` leaves trained on
``make_higgs_like`` rows, by each library with the same settings, explains ``--contrib-rows``
new rows on the same threads; the table gives the seconds (best of ``--repeats``, after a
warm-up call that compiles smartboost's kernel) and each model's mean leaves and depth, which
set the cost (smartboost: O(rows x trees x leaves x depth); LightGBM's TreeSHAP: x depth^2).

(b) Objectives: Poisson (claim frequency, weight exposure), gamma (claim severity, weight the
claim count) and Tweedie (pure premium, power 1.5, weight exposure) on
``make_insurance_like(--policies)``, two thirds for training and a third held out; quantile
(alpha 0.1 and 0.9) on LightGBM's regression example (``lightgbm-regression``, from the
dataset cache). Both libraries train ``--objective-trees`` trees of ``--objective-leaves``
leaves with LightGBM's defaults otherwise (learning rate 0.1, 20 rows per leaf, 255 bins); the
table gives the held-out mean deviance (scikit-learn's, weighted) or pinball loss, the
quantile's held-out coverage, the training seconds (the best of ``--objective-repeats`` runs
of each library, alternating; smartboost's kernels compiled beforehand by two trees on the
same data) and the ratios smartboost / LightGBM.
"""

from __future__ import annotations

import argparse
import os
import time

import lightgbm as lgb
import numpy as np
from sklearn.metrics import mean_gamma_deviance, mean_pinball_loss, mean_poisson_deviance, mean_tweedie_deviance

import smartboost as sb
from smartboost.datasets import load, make_higgs_like, make_insurance_like
from smartboost.errors import DatasetNotFoundError


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _best_seconds(fn, repeats: int) -> tuple[float, object]:
    best, value = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def _lightgbm_shape(model: lgb.Booster) -> tuple[float, float]:
    """Mean leaves and mean depth of a LightGBM model's trees."""
    def depth(node):
        return 0 if "leaf_index" in node else 1 + max(depth(node["left_child"]), depth(node["right_child"]))

    trees = model.dump_model()["tree_info"]
    return np.mean([t["num_leaves"] for t in trees]), np.mean([depth(t["tree_structure"]) for t in trees])


def contributions(args: argparse.Namespace) -> None:
    X, y = make_higgs_like(args.train_rows, seed=0)
    rows, _ = make_higgs_like(args.contrib_rows, seed=1)
    params = {"objective": "binary", "num_leaves": args.leaves, "learning_rate": 0.1, "num_threads": args.threads}
    start = time.perf_counter()
    ours = sb.train({**params, "sampling": "none", "verbosity": -1}, sb.Dataset(X, y), args.trees)
    ours_train = time.perf_counter() - start
    start = time.perf_counter()
    theirs = lgb.train({**params, "verbose": -1}, lgb.Dataset(X, y), args.trees)
    theirs_train = time.perf_counter() - start
    ours.predict(rows[:256], pred_contrib=True)  # compile or load the kernel
    ours_s, ours_phi = _best_seconds(lambda: ours.predict(rows, pred_contrib=True), args.repeats)
    theirs_s, theirs_phi = _best_seconds(lambda: theirs.predict(rows, pred_contrib=True), args.repeats)
    ours_error = np.abs(ours_phi.sum(axis=1) - ours.predict(rows, raw_score=True)).max()
    theirs_error = np.abs(theirs_phi.sum(axis=1) - theirs.predict(rows, raw_score=True)).max()
    our_leaves = np.mean([t.n_leaves for t in ours.trees])
    our_depth = np.mean([t.depth() for t in ours.trees])
    their_leaves, their_depth = _lightgbm_shape(theirs)
    print(f"\n### pred_contrib: {args.contrib_rows:,} rows, {args.trees} trees of up to {args.leaves} leaves "
          f"(trained on {args.train_rows:,} make_higgs_like rows), threads={args.threads or 'all'}\n")
    print("| | smartboost | LightGBM | ratio |\n|---|---|---|---|")
    print(f"| pred_contrib seconds (best of {args.repeats}) | {ours_s:.2f} | {theirs_s:.2f} | "
          f"{ours_s / theirs_s:.2f} |")
    print(f"| mean leaves per tree | {our_leaves:.1f} | {their_leaves:.1f} | |")
    print(f"| mean depth per tree | {our_depth:.1f} | {their_depth:.1f} | |")
    print(f"| max \\|sum - raw score\\| | {ours_error:.1e} | {theirs_error:.1e} | |")
    print(f"| training seconds | {ours_train:.1f} | {theirs_train:.1f} | {ours_train / theirs_train:.2f} |")


def _insurance_tasks(policies: int):
    """(name, objective params, X/y/weight for training and held out, deviance) of the claims models."""
    X, exposure, count, amount = make_insurance_like(policies, seed=0)
    train = np.arange(policies) < 2 * policies // 3
    claims = count > 0
    severity = np.divide(amount, count, out=np.zeros_like(amount), where=claims)
    tweedie = lambda y, mu, sample_weight: mean_tweedie_deviance(y, mu, sample_weight=sample_weight,  # noqa: E731
                                                                 power=1.5)
    for name, params, y, w, rows, deviance in (
            ("poisson (frequency)", {"objective": "poisson"}, count / exposure, exposure, np.ones_like(claims),
             mean_poisson_deviance),
            ("gamma (severity)", {"objective": "gamma"}, severity, count, claims, mean_gamma_deviance),
            ("tweedie 1.5 (pure premium)", {"objective": "tweedie", "tweedie_variance_power": 1.5},
             amount / exposure, exposure, np.ones_like(claims), tweedie)):
        fit, held_out = rows & train, rows & ~train
        yield name, params, (X[fit], y[fit], w[fit]), (X[held_out], y[held_out], w[held_out]), deviance


def _quantile_tasks():
    X, y, X_test, y_test = load("lightgbm-regression", download=False)
    for alpha in (0.1, 0.9):
        loss = lambda t, p, sample_weight, alpha=alpha: mean_pinball_loss(t, p, alpha=alpha)  # noqa: E731
        yield (f"quantile {alpha} (lightgbm-regression)", {"objective": "quantile", "alpha": alpha},
               (X, y, None), (X_test, y_test, None), loss)


def objectives(args: argparse.Namespace) -> None:
    tasks = list(_insurance_tasks(args.policies))
    try:
        tasks += list(_quantile_tasks())
    except DatasetNotFoundError as exc:
        print(f"(quantile skipped: {exc})")
    common = {"num_leaves": args.objective_leaves, "learning_rate": 0.1, "num_threads": args.threads,
              "sampling": "none"}
    print(f"\n### objectives: {args.objective_trees} trees of up to {args.objective_leaves} leaves, "
          f"{args.policies:,} insurance-like policies, threads={args.threads or 'all'}\n")
    print("| task | train rows | smartboost loss | LightGBM loss | loss ratio | smartboost s | LightGBM s | "
          "time ratio |\n|---|---|---|---|---|---|---|---|")
    for name, params, (X, y, w), (X_test, y_test, w_test), loss in tasks:
        # warm-up on the measured data itself, so that the timed run loads no kernel for the first time
        sb.train({**common, **params, "verbosity": -1}, sb.Dataset(X, y, weight=w), 2)
        ours_s = theirs_s = np.inf
        for _ in range(args.objective_repeats):  # alternating, so that a changing load falls on both
            start = time.perf_counter()
            ours = sb.train({**common, **params, "verbosity": -1}, sb.Dataset(X, y, weight=w), args.objective_trees)
            ours_s = min(ours_s, time.perf_counter() - start)
            start = time.perf_counter()
            theirs = lgb.train({**common, **params, "verbose": -1}, lgb.Dataset(X, y, weight=w), args.objective_trees)
            theirs_s = min(theirs_s, time.perf_counter() - start)
        ours_loss = loss(y_test, ours.predict(X_test), sample_weight=w_test)
        theirs_loss = loss(y_test, theirs.predict(X_test), sample_weight=w_test)
        coverage = ""
        if params["objective"] == "quantile":
            coverage = (f" (coverage {np.mean(y_test <= ours.predict(X_test)):.3f} / "
                        f"{np.mean(y_test <= theirs.predict(X_test)):.3f})")
        print(f"| {name}{coverage} | {X.shape[0]:,} | {ours_loss:.5g} | {theirs_loss:.5g} | "
              f"{ours_loss / theirs_loss:.3f} | {ours_s:.2f} | {theirs_s:.2f} | {ours_s / theirs_s:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-rows", type=int, default=1_000_000, help="make_higgs_like rows the models learn")
    parser.add_argument("--contrib-rows", type=int, default=100_000, help="rows explained")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=255)
    parser.add_argument("--repeats", type=_positive, default=1, help="timed pred_contrib calls (the best is shown)")
    parser.add_argument("--policies", type=int, default=300_000, help="make_insurance_like policies")
    parser.add_argument("--objective-trees", type=int, default=200)
    parser.add_argument("--objective-leaves", type=int, default=31)
    parser.add_argument("--objective-repeats", type=_positive, default=3,
                        help="training runs per library and task, alternating (the best is shown)")
    parser.add_argument("--threads", type=int, default=0, help="threads of both libraries (0: all)")
    parser.add_argument("--skip", choices=["contrib", "objectives"], help="leave one part out")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    if args.skip != "contrib":
        contributions(args)
    if args.skip != "objectives":
        objectives(args)
    print(f"\nload average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
