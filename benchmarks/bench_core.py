"""Core engine benchmark: smartboost vs LightGBM, XGBoost (hist) and scikit-learn's HistGradientBoosting.

Every library trains the same data with matched settings: 255 bins, learning rate 0.1, the same
number of leaves (leaf-wise growth, no depth limit), min 20 rows and 1e-3 hessian per leaf, no
L2, 2 threads, 100 trees. Each (dataset, library) pair runs in a fresh subprocess on data loaded
from a file; "peak MB" is the peak resident memory during binning, training and prediction above
the memory held before (library imports included), and repeats are interleaved across libraries so machine noise hits all
of them alike; the table shows medians. smartboost's kernels are compiled (or loaded from the
numba cache) before timing; that time is reported separately, as is a cold compile into an
empty cache.

Datasets: a9a (LIBSVM, train/test), LightGBM's binary example (train/test), and a generated
HIGGS-like set of 1,000,000 training rows x 28 features (+250,000 test rows). Public sets are
read through ``smartboost.datasets`` from ``$SMARTBOOST_DATA``.

Usage::

    python benchmarks/bench_core.py                       # everything
    python benchmarks/bench_core.py --datasets synthetic --repeats 3
    python benchmarks/bench_core.py --scaling             # time per tree at 250k / 500k / 1M rows
    python benchmarks/bench_core.py --thread-scaling 1 2 4 8 16   # time per tree, binning, prediction against threads

Prints markdown tables; ``--json PATH`` also writes the raw measurements.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
from _memory import reset_peak_rss, status_mb

LIBRARIES = ("smartboost", "lightgbm", "xgboost", "sklearn")
DATASETS = {"a9a": 31, "lightgbm-binary": 31, "synthetic": 255}
THREADS = 2


def prepare(name: str, folder: str, n_rows: int | None = None) -> str:
    """Write a benchmark dataset's train/test arrays to ``folder`` once; return the file path.

    Children load the file, so their peak memory above it is the library's own.
    """
    from smartboost import datasets

    path = os.path.join(folder, f"{name}-{n_rows or 0}.npz")
    if not os.path.exists(path):
        if name == "synthetic":
            n = n_rows or 1_000_000
            X, y = datasets.make_higgs_like(n + 250_000, seed=0)
            X, y, Xt, yt = X[:n], y[:n], X[n:], y[n:]
        else:
            X, y, Xt, yt = datasets.load(name, download=False)
        np.savez(path, X=np.ascontiguousarray(X, np.float32), y=y, Xt=np.ascontiguousarray(Xt, np.float32), yt=yt)
    return path


def _fit_smartboost(X, y, Xt, leaves, trees):
    import smartboost as sb

    params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 0.0, "max_bin": 255, "num_threads": THREADS,
              "sampling": "none", "verbosity": -1}
    jit = sb.compile_kernels()
    t0 = time.perf_counter()
    dataset = sb.Dataset(X, y, params=params).construct()
    t1 = time.perf_counter()
    booster = sb.train(params, dataset, trees)
    t2 = time.perf_counter()
    prob = booster.predict(Xt)
    t3 = time.perf_counter()
    content = json.loads(booster.model_to_string())
    del content["params"]["num_threads"]  # the one field that may differ between thread counts
    model = hashlib.sha256(json.dumps(content).encode()).hexdigest()
    return {"jit": jit, "binning": t1 - t0, "training": t2 - t1, "prediction": t3 - t2, "model": model}, prob


def _fit_lightgbm(X, y, Xt, leaves, trees):
    import lightgbm as lgb

    params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 0.0, "max_bin": 255, "num_threads": THREADS,
              "verbose": -1}
    t0 = time.perf_counter()
    dataset = lgb.Dataset(X, y, params=params).construct()
    t1 = time.perf_counter()
    booster = lgb.train(params, dataset, trees)
    t2 = time.perf_counter()
    prob = booster.predict(Xt, num_threads=THREADS)
    t3 = time.perf_counter()
    return {"binning": t1 - t0, "training": t2 - t1, "prediction": t3 - t2}, prob


def _fit_xgboost(X, y, Xt, leaves, trees):
    import xgboost as xgb

    params = {"objective": "binary:logistic", "tree_method": "hist", "grow_policy": "lossguide",
              "max_leaves": leaves, "max_depth": 0, "eta": 0.1, "min_child_weight": 1e-3, "lambda": 0.0,
              "max_bin": 255, "nthread": THREADS}
    t0 = time.perf_counter()
    dtrain = xgb.QuantileDMatrix(X, y, max_bin=255, nthread=THREADS)
    t1 = time.perf_counter()
    booster = xgb.train(params, dtrain, trees)
    t2 = time.perf_counter()
    prob = booster.inplace_predict(Xt)
    t3 = time.perf_counter()
    return {"binning": t1 - t0, "training": t2 - t1, "prediction": t3 - t2}, prob


def _fit_sklearn(X, y, Xt, leaves, trees):
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    model = HistGradientBoostingClassifier(max_iter=trees, learning_rate=0.1, max_leaf_nodes=leaves,
                                           min_samples_leaf=20, l2_regularization=0.0, max_bins=255,
                                           early_stopping=False, random_state=0)
    with threadpool_limits(THREADS):
        t0 = time.perf_counter()
        model.fit(X, y)  # binning happens inside fit and is not timed apart
        t1 = time.perf_counter()
        prob = model.predict_proba(Xt)[:, 1]
        t2 = time.perf_counter()
    return {"binning": float("nan"), "training": t1 - t0, "prediction": t2 - t1}, prob


FITS = {"smartboost": _fit_smartboost, "lightgbm": _fit_lightgbm, "xgboost": _fit_xgboost,
        "sklearn": _fit_sklearn}


def child(library: str, path: str, leaves: int, trees: int) -> dict:
    """One measurement, run inside a fresh interpreter on the arrays saved at ``path``."""
    from sklearn.metrics import log_loss, roc_auc_score

    with np.load(path) as data:
        X, y, Xt, yt = data["X"], data["y"], data["Xt"], data["yt"]
    base_rss = status_mb("VmRSS")
    reset_peak_rss()
    times, prob = FITS[library](X, y, Xt, leaves, trees)
    return {**times, "peak_mb": status_mb("VmHWM") - base_rss, "auc": roc_auc_score(yt, prob),
            "logloss": log_loss(yt, np.clip(prob, 1e-15, 1 - 1e-15)), "rows": len(y)}


def _run_child(library, path, leaves, trees, env=None, threads=None) -> dict:
    cmd = [sys.executable, __file__, "--child", library, path, str(leaves), str(trees), str(threads or THREADS)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{library} on {path} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def cold_compile_seconds(folder: str) -> float:
    """smartboost's kernel compile time into an empty numba cache."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache}
        return _run_child("smartboost", prepare("lightgbm-binary", folder), 31, 2, env=env)["jit"]


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def compare(datasets: list[str], libraries: list[str], repeats: int, trees: int, folder: str) -> dict:
    """Interleaved repeats of every library on every dataset; prints one table per dataset."""
    results = {}
    for dataset in datasets:
        leaves = DATASETS[dataset]
        path = prepare(dataset, folder)
        runs = {lib: [] for lib in libraries}
        for _ in range(repeats):
            for lib in libraries:
                runs[lib].append(_run_child(lib, path, leaves, trees))
        results[dataset] = runs
        sb = runs["smartboost"]
        print(f"\n### {dataset}: {sb[0]['rows']:,} training rows, {trees} trees x {leaves} leaves, "
              f"{THREADS} threads, median of {repeats}\n")
        print("| library | binning s | training s | prediction s | peak MB | test AUC | test logloss | "
              "smartboost time ratio (train / predict) |")
        print("|---|---|---|---|---|---|---|---|")
        for lib in libraries:
            r = runs[lib]
            ratio = (f"{_median(sb, 'training') / _median(r, 'training'):.2f} / "
                     f"{_median(sb, 'prediction') / _median(r, 'prediction'):.2f}") if lib != "smartboost" else "-"
            print(f"| {lib} | {_median(r, 'binning'):.2f} | {_median(r, 'training'):.2f} | "
                  f"{_median(r, 'prediction'):.3f} | {_median(r, 'peak_mb'):.0f} | {_median(r, 'auc'):.5f} | "
                  f"{_median(r, 'logloss'):.5f} | {ratio} |")
        print(f"\nsmartboost kernel compile/load (warm cache) before timing: {_median(sb, 'jit'):.2f} s")
    return results


def scaling(repeats: int, trees: int, folder: str) -> dict:
    """Time per tree against training rows (255 leaves), smartboost and LightGBM."""
    results = {}
    print(f"\n### scaling: synthetic, {trees} trees x 255 leaves, {THREADS} threads, median of {repeats}\n")
    print("| rows | smartboost ms/tree | lightgbm ms/tree | ratio |\n|---|---|---|---|")
    for n in (250_000, 500_000, 1_000_000):
        path = prepare("synthetic", folder, n)
        runs = {lib: [] for lib in ("smartboost", "lightgbm")}
        for _ in range(repeats):
            for lib in runs:
                runs[lib].append(_run_child(lib, path, 255, trees))
        sb_ms = _median(runs["smartboost"], "training") / trees * 1e3
        lgb_ms = _median(runs["lightgbm"], "training") / trees * 1e3
        results[n] = {"smartboost": sb_ms, "lightgbm": lgb_ms}
        print(f"| {n:,} | {sb_ms:.1f} | {lgb_ms:.1f} | {sb_ms / lgb_ms:.2f} |")
    return results


def thread_scaling(thread_counts: list[int], repeats: int, trees: int, folder: str) -> dict:
    """Time per tree, binning and prediction against the thread count (1M synthetic rows, 255
    leaves), smartboost and LightGBM, and whether smartboost's model (all but its ``num_threads``) is the
    same, byte for byte, at every thread count."""
    results = {}
    path = prepare("synthetic", folder)
    print(f"\n### threads: synthetic 1,000,000 rows, {trees} trees x 255 leaves, median of {repeats}\n")
    print("| threads | smartboost ms/tree | lightgbm ms/tree | ratio | smartboost speed-up | lightgbm speed-up "
          "| binning s (smartboost / lightgbm) | predicting 250,000 rows s (smartboost / lightgbm) |")
    print("|---|---|---|---|---|---|---|---|")
    first = None
    for threads in thread_counts:
        runs = {lib: [] for lib in ("smartboost", "lightgbm")}
        for _ in range(repeats):
            for lib in runs:
                runs[lib].append(_run_child(lib, path, 255, trees, threads=threads))
        ms = {lib: _median(r, "training") / trees * 1e3 for lib, r in runs.items()}
        first = first or ms
        results[threads] = {**ms, **{f"{lib} {key}": _median(r, key) for lib, r in runs.items()
                                     for key in ("binning", "prediction")},
                            "models": [r["model"] for r in runs["smartboost"]]}
        sb, lgb = runs["smartboost"], runs["lightgbm"]
        print(f"| {threads} | {ms['smartboost']:.1f} | {ms['lightgbm']:.1f} | {ms['smartboost'] / ms['lightgbm']:.2f} | "
              f"{first['smartboost'] / ms['smartboost']:.2f} | {first['lightgbm'] / ms['lightgbm']:.2f} | "
              f"{_median(sb, 'binning'):.2f} / {_median(lgb, 'binning'):.2f} | "
              f"{_median(sb, 'prediction'):.3f} / {_median(lgb, 'prediction'):.3f} |")
    models = {model for r in results.values() for model in r["models"]}
    print(f"\nsmartboost model identical (byte for byte) at every thread count: {len(models) == 1}")
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--scaling", action="store_true", help="only the rows-scaling table")
    parser.add_argument("--thread-scaling", type=int, nargs="+", metavar="THREADS",
                        help="only the time-per-tree table at these thread counts")
    parser.add_argument("--json", help="write raw measurements here")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    global THREADS
    if args.child:
        library, path, leaves, trees, THREADS = args.child[:4] + [int(args.child[4])]
        print(json.dumps(child(library, path, int(leaves), int(trees))))
        return
    if "smartboost" not in args.libraries:
        args.libraries.insert(0, "smartboost")
    print(f"machine: {os.cpu_count()} cores" + ("" if args.thread_scaling else f"; threads per library: {THREADS}"))
    with tempfile.TemporaryDirectory() as folder:
        if args.thread_scaling:
            results = {"threads": thread_scaling(args.thread_scaling, args.repeats, args.trees, folder)}
        elif args.scaling:
            results = {"scaling": scaling(args.repeats, args.trees, folder)}
        else:
            print(f"smartboost cold kernel compile (empty numba cache): {cold_compile_seconds(folder):.1f} s")
            results = compare(args.datasets, args.libraries, args.repeats, args.trees, folder)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
