"""The ``smartboost`` command line.

``smartboost demo`` trains and evaluates on a generated HIGGS-like set (no download) and prints
a table: the README's first command.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import numpy as np

from . import __version__
from .errors import SmartBoostError

__all__ = ["main"]


def _auc(label: np.ndarray, prob: np.ndarray) -> float:
    from .metrics import get_metric

    return get_metric("auc")(label, prob, prob)


def _scores(label: np.ndarray, prob: np.ndarray) -> tuple[float, float, float]:
    eps = 1e-15
    p = np.clip(prob, eps, 1 - eps)
    logloss = float(-np.mean(label * np.log(p) + (1 - label) * np.log(1 - p)))
    return _auc(label, prob), logloss, float(np.mean((prob > 0.5) != (label == 1)))


def _run_smartboost(params, X, y, Xt, trees):
    from . import Dataset, train

    start = time.perf_counter()
    dataset = Dataset(X, y, params=params)
    bin_seconds = time.perf_counter() - start
    start = time.perf_counter()
    booster = train(params, dataset, trees)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    prob = booster.predict(Xt)
    return bin_seconds, train_seconds, time.perf_counter() - start, prob


def _run_lightgbm(params, X, y, Xt, trees):
    import lightgbm

    start = time.perf_counter()
    dataset = lightgbm.Dataset(X, y, params={"max_bin": 255, "verbose": -1}).construct()
    bin_seconds = time.perf_counter() - start
    start = time.perf_counter()
    booster = lightgbm.train({**params, "verbose": -1}, dataset, trees)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    prob = booster.predict(Xt, num_threads=params["num_threads"])
    return bin_seconds, train_seconds, time.perf_counter() - start, prob


def _demo(args: argparse.Namespace) -> int:
    from . import compile_kernels
    from .datasets import make_higgs_like

    n_test = max(1, args.rows // 4)
    print(f"smartboost {__version__} demo: HIGGS-like synthetic binary data (generated, seed {args.seed}), "
          f"{args.rows:,} train / {n_test:,} test rows x 28 features")
    X, y = make_higgs_like(args.rows + n_test, seed=args.seed)
    X, y, Xt, yt = X[:args.rows], y[:args.rows], X[args.rows:], y[args.rows:]
    params = {"objective": "binary", "num_leaves": args.leaves, "learning_rate": args.learning_rate,
              "num_threads": args.threads, "verbosity": -1, "seed": args.seed}
    print(f"kernel compile/load: {compile_kernels():.1f} s (cached after the first run; not in the timings "
          "below)\n")
    runs = [("smartboost", _run_smartboost)]
    if args.compare:
        runs.append(("lightgbm", _run_lightgbm))
    print(f"| library | trees | leaves | binning s | training s | prediction s | test AUC | test logloss | "
          f"test error |\n|---|---|---|---|---|---|---|---|---|")
    for name, run in runs:
        try:
            bin_s, train_s, predict_s, prob = run(params, X, y, Xt, args.trees)
        except ImportError:
            print(f"| {name} | not installed | | | | | | | |")
            continue
        auc, logloss, error = _scores(yt, prob)
        print(f"| {name} | {args.trees} | {args.leaves} | {bin_s:.2f} | {train_s:.2f} | {predict_s:.3f} | "
              f"{auc:.4f} | {logloss:.4f} | {error:.4f} |")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="smartboost", description="Gradient boosting with fast row sampling.")
    parser.add_argument("--version", action="version", version=f"smartboost {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="train and evaluate on generated data, print a table",
                               description="Train smartboost on a generated HIGGS-like binary set (no download) "
                                           "and print binning, training and prediction times and test metrics.")
    demo.add_argument("--rows", type=int, default=200_000, help="training rows (test: a quarter more)")
    demo.add_argument("--trees", type=int, default=100, help="boosting iterations")
    demo.add_argument("--leaves", type=int, default=31, help="leaves per tree")
    demo.add_argument("--learning-rate", type=float, default=0.1, help="shrinkage")
    demo.add_argument("--threads", type=int, default=0, help="threads (0: all)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the data and the model")
    demo.add_argument("--compare", action="store_true", help="also train LightGBM if it is installed")
    demo.set_defaults(run=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``smartboost`` command."""
    args = _parser().parse_args(argv)
    try:
        return args.run(args)
    except (SmartBoostError, OSError) as exc:
        if args.debug:
            raise
        print(f"smartboost: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
