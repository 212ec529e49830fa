"""Speed and memory where a user meets the library first: compile, small and wide data, prediction.

One command prints the table of the "fast from the first call" targets, smartboost side by side
with LightGBM, XGBoost (hist) and scikit-learn's HistGradientBoosting, measured in the same run:

- **cold compile**: a fresh interpreter with an empty numba cache (``NUMBA_CACHE_DIR``), from
  its start to the return of the first ``train`` (5 trees on 1,000 x 8); smartboost only.
- **first call**: a fresh interpreter, kernels cached: import, train 5 trees on 1,000 x 8 and
  predict them, from the interpreter's start.
- **a9a** (32,561 x 123, from ``smartboost.datasets``) and **10k x 20** (generated): training
  100 trees x 31 leaves, binning included, kernels compiled and loaded by two trees on the same
  data.
- **800k x 28** (``make_higgs_like``, 255 leaves, 100 trees): training time, and the peak
  resident memory of binning, training and predicting 200,000 rows above the memory held before
  (data loaded, library imported).
- **predict**: 200,000 x 28 rows through 100 trees x 255 leaves (the model of the 200,000-row
  version of that set), and 100 rows and 1 row through the a9a model (100 x 31); the median of
  repeated calls on a warm model.
- **wide sparse**: 201 rows x 1,000,000 features in CSR, 2,000 stored values a row
  (svmlight-like), binning and 100 trees: peak resident memory above the memory held before, and
  time. scikit-learn takes no sparse input of that width and is left out.

Every measurement runs in a fresh subprocess; repeats are interleaved across libraries so that a
changing load falls on all of them alike; the table shows medians, wall seconds, 2 threads per
library (``--threads``). Times are wall-clock: check ``uptime`` before a run and compare within
one run. On a machine other jobs share, parallel regions wait for their threads to be scheduled
and multi-threaded timings of small data become meaningless; ``--threads 1`` stays comparable.

Usage::

    python benchmarks/bench_speed.py                      # every row, 3 repeats
    python benchmarks/bench_speed.py --rows cold first a9a 10k --repeats 5 --threads 1
    python benchmarks/bench_speed.py --json speed.json    # also the raw measurements
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

START_WALL = time.perf_counter()
START_CPU = time.process_time()

import numpy as np  # noqa: E402  (after the clocks: the first-call rows count every import)
from _memory import reset_peak_rss, status_mb  # noqa: E402

LIBRARIES = ("smartboost", "lightgbm", "xgboost", "sklearn")
THREADS = 2
ROWS = ("cold", "first", "a9a", "10k", "800k", "predict", "wide")

# -- libraries: one small adapter each --------------------------------------------------------


def _train(library: str, X, y, trees: int, leaves: int):
    """Train ``library`` with matched settings; return a predict(X) -> probabilities function."""
    if library == "smartboost":
        import smartboost as sb

        params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
                  "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 0.0, "max_bin": 255, "num_threads": THREADS,
                  "sampling": "none", "verbosity": -1}
        booster = sb.train(params, sb.Dataset(X, y, params=params), trees)
        return booster.predict
    if library == "lightgbm":
        import lightgbm as lgb

        params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
                  "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 0.0, "max_bin": 255, "num_threads": THREADS,
                  "verbose": -1}
        booster = lgb.train(params, lgb.Dataset(X, y, params=params), trees)
        return lambda data: booster.predict(data, num_threads=THREADS)
    if library == "xgboost":
        import xgboost as xgb

        params = {"objective": "binary:logistic", "tree_method": "hist", "grow_policy": "lossguide",
                  "max_leaves": leaves, "max_depth": 0, "eta": 0.1, "min_child_weight": 1e-3, "lambda": 0.0,
                  "max_bin": 255, "nthread": THREADS}
        booster = xgb.train(params, xgb.QuantileDMatrix(X, y, max_bin=255, nthread=THREADS), trees)
        return booster.inplace_predict
    from sklearn.ensemble import HistGradientBoostingClassifier
    from threadpoolctl import threadpool_limits

    with threadpool_limits(THREADS):
        model = HistGradientBoostingClassifier(max_iter=trees, learning_rate=0.1, max_leaf_nodes=leaves,
                                               min_samples_leaf=20, l2_regularization=0.0, max_bins=255,
                                               early_stopping=False, random_state=0).fit(X, y)

    def predict(data):
        with threadpool_limits(THREADS):
            return model.predict_proba(data)[:, 1]
    return predict


def _warm(library: str) -> None:
    """Compile (or load) smartboost's kernels before a timed run; nothing for the others."""
    if library == "smartboost":
        import smartboost as sb

        sb.compile_kernels()


# -- data ------------------------------------------------------------------------------------


def _tiny():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1000, 8))
    return X, (X[:, 0] + rng.standard_normal(1000) > 0).astype(np.float64)


def _a9a():
    from smartboost import datasets

    X, y, _, _ = datasets.load("a9a", download=False)
    return np.ascontiguousarray(X.toarray() if hasattr(X, "toarray") else X, np.float32), y


def _ten_k():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((10_000, 20))
    return X, (X[:, 0] + X[:, 1] * X[:, 2] + rng.standard_normal(10_000) > 0).astype(np.float64)


def _higgs(n_train: int):
    from smartboost import datasets

    X, y = datasets.make_higgs_like(n_train + 200_000, seed=0)
    return X[:n_train], y[:n_train], X[n_train:]


def _wide():
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    n_rows, n_features, per_row = 201, 1_000_000, 2_000
    indices = np.sort(np.stack([rng.choice(n_features, per_row, replace=False) for _ in range(n_rows)]), axis=1)
    values = rng.standard_normal((n_rows, per_row))
    X = sp.csr_matrix((values.ravel(), indices.ravel(), np.arange(n_rows + 1) * per_row), (n_rows, n_features))
    return X, (rng.random(n_rows) < 0.5).astype(np.float64)


# -- measurements (each in a fresh interpreter) ----------------------------------------------


def _import(library: str) -> None:
    __import__({"smartboost": "smartboost", "lightgbm": "lightgbm", "xgboost": "xgboost",
                "sklearn": "sklearn.ensemble"}[library])


def _timed_training(library: str, X, y, trees: int, leaves: int) -> dict:
    _import(library)
    _warm(library)
    # first-use costs out of the timing: two trees on the same data load the kernels and run the
    # binning and training of this size once (in a fresh process the first full-size run on a9a
    # takes about 0.1 s longer than the next ones, after a warm-up on 2,000 rows)
    _train(library, X, y, 2, leaves)
    start = time.perf_counter()
    _train(library, X, y, trees, leaves)
    return {"seconds": time.perf_counter() - start}


def _median_call(function, data, calls: int) -> float:
    function(data)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function(data)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(row: str, library: str) -> dict:
    """One row's measurement of one library, in this (fresh) interpreter."""
    if row == "warm-up":
        _warm(library)
        return {}
    if row in ("cold", "first"):
        X, y = _tiny()
        _import(library)
        predict = _train(library, X, y, 5, 31)
        trained = {"seconds": time.perf_counter() - START_WALL, "cpu": time.process_time() - START_CPU}
        predict(X)
        return trained if row == "cold" else {"seconds": time.perf_counter() - START_WALL,
                                              "cpu": time.process_time() - START_CPU}
    if row == "a9a":
        return _timed_training(library, *_a9a(), 100, 31)
    if row == "10k":
        return _timed_training(library, *_ten_k(), 100, 31)
    if row == "800k":
        X, y, Xt = _higgs(800_000)
        _import(library)
        _warm(library)
        base = status_mb("VmRSS")
        reset_peak_rss()
        start = time.perf_counter()
        predict = _train(library, X, y, 100, 255)
        seconds = time.perf_counter() - start
        predict(Xt)
        return {"seconds": seconds, "peak_mb": status_mb("VmHWM") - base}
    if row == "predict":
        X, y, _ = _higgs(200_000)
        _import(library)
        _warm(library)
        big = _median_call(_train(library, X, y, 100, 255), X, 5)
        A, b = _a9a()
        small = _train(library, A, b, 100, 31)
        return {"rows_200k": big, "rows_100": _median_call(small, A[:100], 200),
                "rows_1": _median_call(small, A[:1], 500)}
    if row == "wide":
        X, y = _wide()
        _import(library)
        _warm(library)
        base = status_mb("VmRSS")
        reset_peak_rss()
        start = time.perf_counter()
        _train(library, X, y, 100, 31)
        return {"seconds": time.perf_counter() - start, "peak_mb": status_mb("VmHWM") - base}
    raise ValueError(row)


def _run(row: str, library: str) -> dict | None:
    """``measure`` in a fresh interpreter (an empty numba cache for the cold row); None when the
    library cannot run it."""
    if (row == "cold" and library != "smartboost") or (row == "wide" and library == "sklearn"):
        return None
    with tempfile.TemporaryDirectory() as cache:
        # a user's imports read the bytecode Python caches at the first import (pip writes it at
        # install): without it the first-call rows would time the compilation of every module
        env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
        if row == "cold":
            env["NUMBA_CACHE_DIR"] = cache
        out = subprocess.run([sys.executable, __file__, "--child", row, library, "--threads", str(THREADS)],
                             capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{row} / {library} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# -- the table -------------------------------------------------------------------------------

_LINES = (  # (row, key, label, unit scale, unit)
    ("cold", "seconds", "cold compile: start to first `train` returned, 1,000 x 8 (CPU s in brackets)", 1, "s"),
    ("first", "seconds", "first call, kernels cached: import, train 5 trees, predict (CPU s in brackets)", 1, "s"),
    ("a9a", "seconds", "a9a (32,561 x 123), 100 trees x 31 leaves, training", 1, "s"),
    ("10k", "seconds", "10,000 x 20, 100 trees x 31 leaves, training", 1, "s"),
    ("800k", "seconds", "800,000 x 28, 100 trees x 255 leaves, training", 1, "s"),
    ("predict", "rows_200k", "predict 200,000 x 28, 100 trees x 255 leaves", 1, "s"),
    ("predict", "rows_100", "predict 100 rows (a9a model)", 1e3, "ms"),
    ("predict", "rows_1", "predict 1 row (a9a model)", 1e3, "ms"),
    ("800k", "peak_mb", "peak RSS above baseline, 800k x 28 binning + training + predicting 200k", 1, "MB"),
    ("wide", "peak_mb", "peak RSS above baseline, 201 x 1,000,000 sparse, binning + training", 1, "MB"),
    ("wide", "seconds", "201 x 1,000,000 sparse, binning + 100 trees", 1, "s"),
)


def table(results: dict, libraries: list[str]) -> None:
    def cell(row, key, lib, scale, unit):
        runs = [r for r in results.get(row, {}).get(lib, []) if r is not None]
        if not runs:
            return None, "-"
        value = statistics.median(r[key] for r in runs) * scale
        text = f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
        if key == "seconds" and "cpu" in runs[0]:
            text += f" ({statistics.median(r['cpu'] for r in runs):.2f})"
        return value, text

    others = [lib for lib in libraries if lib != "smartboost"]
    print("| what | " + " | ".join(libraries) + " | " + " | ".join(f"ratio to {lib}" for lib in others) + " |")
    print("|---|" + "---|" * (len(libraries) + len(others)))
    for row, key, label, scale, unit in _LINES:
        if row not in results:
            continue
        cells = {lib: cell(row, key, lib, scale, unit) for lib in libraries}
        ours = cells["smartboost"][0]
        ratios = [f"{ours / cells[lib][0]:.2f}" if ours is not None and cells[lib][0] else "-" for lib in others]
        print(f"| {label} | " + " | ".join(cells[lib][1] for lib in libraries) + " | " + " | ".join(ratios) + " |")


def main() -> None:
    global THREADS
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", nargs="+", default=list(ROWS), choices=ROWS)
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES), choices=LIBRARIES)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=THREADS, help="threads of every library")
    parser.add_argument("--json", help="write the raw measurements here")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    THREADS = args.threads
    if args.child:
        print(json.dumps(measure(*args.child)))
        return
    if "smartboost" not in args.libraries:
        args.libraries.insert(0, "smartboost")
    with open("/proc/loadavg") as f:
        load = " ".join(f.read().split()[:3])
    print(f"machine: {os.cpu_count()} cores, load average {load}; {THREADS} threads per library, "
          f"median of {args.repeats}\n")
    _run("warm-up", "smartboost")  # the kernels in the numba cache, the modules' bytecode written
    results: dict = {row: {lib: [] for lib in args.libraries} for row in args.rows}
    for _ in range(args.repeats):
        for row in args.rows:
            for lib in args.libraries:
                results[row][lib].append(_run(row, lib))
    table(results, args.libraries)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
