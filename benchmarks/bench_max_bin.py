"""Exact split search: accuracy, time and memory at max_bin 255, 1023 and 65535 beside LightGBM.

Run by hand (needs lightgbm): ``python benchmarks/bench_max_bin.py`` (a9a, the LightGBM
regression example and 800,000 + 200,000 ``make_higgs_like`` rows; ``--datasets``,
``--higgs-rows``, ``--trees`` and ``--max-bins`` change them).

Every (dataset, max_bin) trains smartboost and LightGBM with the same settings: ``--trees``
trees of ``--leaves`` leaves, learning rate 0.1, 20 rows per leaf, ``min_data_in_bin`` and the
binning sample of LightGBM's defaults (3 and 200,000 rows), ``--threads`` threads (one by
default: on a shared machine a busy core stalls the other thread of a parallel loop, and
training CPU seconds on one thread do not count the waits). Each run is a fresh process
(``--child``), the two libraries one after the other, in alternating order: the table gives the
binning wall seconds, the training CPU and wall seconds, the peak resident memory the run
added to the process once its data was loaded (``_memory.py``), the test metric (AUC, or RMSE
for regression), and smartboost's bins (their width in bytes, the most bins of a feature).
smartboost's kernels are compiled or loaded from numba's cache before the timing, by two trees
on the same data.
Prints markdown.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np
from sklearn.metrics import roc_auc_score  # imported before any measurement: it costs 70 MB
from _memory import reset_peak_rss, status_mb

DATASETS = ("a9a", "lightgbm-regression", "higgs")


def _data(name: str, higgs_rows: int):
    """Train and test arrays, and the task."""
    from smartboost import datasets

    if name == "higgs":
        X, y = datasets.make_higgs_like(higgs_rows + higgs_rows // 4, seed=0)
        return X[:higgs_rows], y[:higgs_rows], X[higgs_rows:], y[higgs_rows:], "binary"
    X, y, Xt, yt = datasets.load(name, download=False)
    task = datasets.REGISTRY[name].task
    return X, y, Xt, yt, task


def _metric(task: str, y: np.ndarray, prediction: np.ndarray) -> float:
    if task == "regression":
        return float(np.sqrt(np.mean((prediction - y) ** 2)))
    return float(roc_auc_score(y, prediction))


def child(library: str, name: str, max_bin: int, args: argparse.Namespace) -> dict:
    """One training run in this process; its figures."""
    X, y, Xt, yt, task = _data(name, args.higgs_rows)
    params = {"objective": task, "num_leaves": args.leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "max_bin": max_bin, "min_data_in_bin": 3, "bin_construct_sample_cnt": 200_000,
              "num_threads": args.threads, "seed": 0}
    out: dict = {}
    if library == "smartboost":
        import smartboost as sb

        sb.compile_kernels()
        # the kernels of this data's layout and bin width too, before the timing: two trees on it
        sb.train({**params, "sampling": "none", "verbosity": -1}, sb.Dataset(X, y, params=params), 2)
        base = status_mb("VmRSS")
        reset_peak_rss()
        start = time.perf_counter()
        train_set = sb.Dataset(X, y, params=params).construct()
        out["bin_s"] = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        model = sb.train({**params, "sampling": "none", "verbosity": -1}, train_set, args.trees)
        out["train_s"], out["train_cpu"] = time.perf_counter() - start, time.process_time() - cpu
        out["bytes"] = train_set.binned.row_major.dtype.itemsize
        out["most_bins"] = int(train_set.bin_mapper.n_bins.max())
        prediction = model.predict(Xt, raw_score=task == "binary")
    else:
        import lightgbm as lgb

        base = status_mb("VmRSS")
        reset_peak_rss()
        start = time.perf_counter()
        train_set = lgb.Dataset(X, y, params={**params, "verbose": -1}).construct()
        out["bin_s"] = time.perf_counter() - start
        start, cpu = time.perf_counter(), time.process_time()
        model = lgb.train({**params, "verbose": -1}, train_set, args.trees)
        out["train_s"], out["train_cpu"] = time.perf_counter() - start, time.process_time() - cpu
        prediction = model.predict(Xt, raw_score=task == "binary")
    out["metric"] = _metric(task, yt, prediction)
    out["memory_mb"] = status_mb("VmHWM") - base
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS))
    parser.add_argument("--max-bins", type=int, nargs="+", default=[255, 1023, 65535])
    parser.add_argument("--higgs-rows", type=int, default=800_000, help="training rows of the HIGGS-like set")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--higgs-trees", type=int, default=None, help="trees on the HIGGS-like set (default --trees)")
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--child", nargs=3, metavar=("LIBRARY", "DATASET", "MAX_BIN"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        library, name, max_bin = args.child
        print(json.dumps(child(library, name, int(max_bin), args)))
        return
    print("| data | trees | max_bin | smartboost bins (bytes, most) | metric | smartboost | LightGBM | "
          "binning s (sb / LGBM) | training CPU s (sb / LGBM) | CPU ratio | training wall s (sb / LGBM) | "
          "added memory MB (sb / LGBM) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    k = 0
    for name in args.datasets:
        trees = args.higgs_trees if name == "higgs" and args.higgs_trees else args.trees
        for max_bin in args.max_bins:
            runs = {}
            order = ("smartboost", "lightgbm") if k % 2 == 0 else ("lightgbm", "smartboost")
            k += 1
            for library in order:
                command = [sys.executable, __file__, "--child", library, name, str(max_bin),
                           "--higgs-rows", str(args.higgs_rows), "--trees", str(trees), "--leaves", str(args.leaves),
                           "--threads", str(args.threads)]
                done = subprocess.run(command, capture_output=True, text=True, check=True)
                runs[library] = json.loads(done.stdout.strip().splitlines()[-1])
            ours, theirs = runs["smartboost"], runs["lightgbm"]
            metric = "RMSE" if name == "lightgbm-regression" else "AUC"
            pair = {key: f"{ours[key]:.2f} / {theirs[key]:.2f}" for key in ("bin_s", "train_cpu", "train_s")}
            print(f"| {name} | {trees} | {max_bin} | {ours['bytes']}, {ours['most_bins']} | {metric} | "
                  f"{ours['metric']:.5f} | {theirs['metric']:.5f} | {pair['bin_s']} | {pair['train_cpu']} | "
                  f"{ours['train_cpu'] / theirs['train_cpu']:.2f} | {pair['train_s']} | "
                  f"{ours['memory_mb']:.0f} / {theirs['memory_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
