"""Distributed training benchmark: smartboost.dask against lightgbm.dask (and xgboost.dask).

One Dask LocalCluster of worker processes (1 or 2 workers, ``--threads`` threads each) holds a
generated HIGGS-like binary set (``--rows`` x 28 float32 features) as a dask array chunked
evenly over the workers. Every library trains the same data with matched settings: leaf-wise
trees of ``--leaves`` leaves (XGBoost: lossguide), 255 bins, learning rate 0.1, min 20 rows per
leaf, no sampling. Time per tree is ``(t(T2) - t(T1)) / (T2 - T1)`` from two fits of T1 and T2
trees, so setup costs (data placement, binning, starting the workers' training state) drop out
for every library alike; the fits of the libraries are interleaved. smartboost also reports the
bytes sent per tree per worker (``Booster.iteration_stats["bytes"]``, every link's traffic, over
the number of workers): they depend on the number of workers, leaves and histogram cells, not on
the number of rows. Every library's traffic is also measured the same way on Linux: the bytes
the loopback interface carried during each fit (``/proc/net/dev``; the cluster runs on this
machine), per tree as for the time, over the number of workers; this counts each byte once,
the Dask scheduler's messages included.

``--max-depth D`` grows depth-wise trees of depth D instead (smartboost ``grow_policy="depthwise"``
and XGBoost ``depthwise``, no leaf limit; LightGBM has no depth-wise growth, so it grows leaf-wise
trees of at most 2^D leaves and depth D): smartboost's workers then exchange histograms once per
level.

Usage::

    python benchmarks/bench_dask.py --rows 4000000 --workers 1 2
    python benchmarks/bench_dask.py --rows 1000000 2000000 4000000 --workers 2 --libraries smartboost

Prints a markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import time


def _fit_smartboost(client, X, y, trees, leaves, threads, depth):
    import smartboost.dask as sbd
    params = {"objective": "binary", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "max_bin": 255, "sampling": "none", "verbosity": -1, "num_threads": threads}
    if depth:
        params.update(grow_policy="depthwise", max_depth=depth, num_leaves=0)
    start = time.perf_counter()
    booster = sbd.train(client, params, X, y, num_boost_round=trees)
    return time.perf_counter() - start, booster


def _fit_lightgbm(client, X, y, trees, leaves, threads, depth):
    import lightgbm as lgb
    shape = {"num_leaves": 2 ** depth, "max_depth": depth} if depth else {"num_leaves": leaves}
    model = lgb.DaskLGBMClassifier(client=client, n_estimators=trees, learning_rate=0.1, min_child_samples=20,
                                   max_bin=255, n_jobs=threads, verbosity=-1, **shape)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model


def _fit_xgboost(client, X, y, trees, leaves, threads, depth):
    import xgboost.dask as xgb_dask
    shape = ({"grow_policy": "depthwise", "max_depth": depth, "max_leaves": 0} if depth else
             {"grow_policy": "lossguide", "max_depth": 0, "max_leaves": leaves})
    model = xgb_dask.DaskXGBClassifier(n_estimators=trees, learning_rate=0.1, max_bin=256, tree_method="hist",
                                       n_jobs=threads, **shape)
    model.client = client
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model


FITTERS = {"smartboost": _fit_smartboost, "lightgbm": _fit_lightgbm, "xgboost": _fit_xgboost}


def _loopback_bytes() -> int | None:
    """Bytes the loopback interface has sent since boot (Linux), or None where it is not known."""
    try:
        with open("/proc/net/dev") as f:
            for line in f:
                name, _, counters = line.partition(":")
                if name.strip() == "lo":
                    return int(counters.split()[8])
    except OSError:
        pass
    return None


def _auc(client, library, model, X, y):
    from sklearn.metrics import roc_auc_score
    if library == "smartboost":
        import smartboost.dask as sbd
        p = sbd.predict(model, X).compute()
    else:
        p = model.predict_proba(X)[:, 1].compute()
    return roc_auc_score(y.compute(), p)


def _scatter_chunks(client, X_np, y_np, n_chunks: int):
    """Dask arrays of ``n_chunks`` row chunks, each sent to its own worker (not inside the graph)."""
    import dask.array as da

    workers = sorted(client.scheduler_info()["workers"])
    size = -(-X_np.shape[0] // n_chunks)
    X_parts, y_parts = [], []
    for k, start in enumerate(range(0, X_np.shape[0], size)):
        stop = min(X_np.shape[0], start + size)
        where = [workers[k % len(workers)]]
        X_future, y_future = client.scatter([X_np[start:stop], y_np[start:stop]], workers=where)
        X_parts.append(da.from_delayed(X_future, shape=(stop - start, X_np.shape[1]), dtype=X_np.dtype))
        y_parts.append(da.from_delayed(y_future, shape=(stop - start,), dtype=y_np.dtype))
    return da.concatenate(X_parts).persist(), da.concatenate(y_parts).persist()


def run(rows: int, n_workers: int, libraries: list[str], leaves: int, t1: int, t2: int, threads: int,
        repeats: int, depth: int = 0) -> list[dict]:
    from distributed import Client, LocalCluster

    from smartboost.datasets import make_higgs_like

    X_np, y_np = make_higgs_like(rows, seed=0)
    results = []
    with LocalCluster(n_workers=n_workers, threads_per_worker=threads, processes=True, dashboard_address=":0",
                      memory_limit=0) as cluster, Client(cluster) as client:
        X, y = _scatter_chunks(client, X_np, y_np, n_workers)
        del X_np, y_np
        for library in libraries:  # warm-up: compiles (or loads) smartboost's kernels on the workers
            FITTERS[library](client, X, y, 1, leaves, threads, depth)
        times: dict[str, dict[int, list[float]]] = {lib: {t1: [], t2: []} for lib in libraries}
        traffic: dict[str, dict[int, list[int]]] = {lib: {t1: [], t2: []} for lib in libraries}
        last = {}
        for _ in range(repeats):
            for trees in (t1, t2):
                for library in libraries:
                    before = _loopback_bytes()
                    seconds, model = FITTERS[library](client, X, y, trees, leaves, threads, depth)
                    after = _loopback_bytes()
                    times[library][trees].append(seconds)
                    if before is not None and after is not None:
                        traffic[library][trees].append(after - before)
                    last[library] = model
        for library in libraries:
            per_tree = (statistics.median(times[library][t2]) - statistics.median(times[library][t1])) / (t2 - t1)
            row = {"rows": rows, "workers": n_workers, "library": library, "per_tree_ms": per_tree * 1e3,
                   "fit_s": statistics.median(times[library][t2]), "auc": _auc(client, library, last[library], X, y)}
            if library == "smartboost":
                row["bytes_per_tree"] = statistics.median(last[library].iteration_stats["bytes"]) / n_workers
            if traffic[library][t2]:
                row["loopback_per_tree"] = (statistics.median(traffic[library][t2])
                                            - statistics.median(traffic[library][t1])) / (t2 - t1) / n_workers
            results.append(row)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[4_000_000])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--libraries", nargs="+", default=["smartboost", "lightgbm"], choices=list(FITTERS))
    parser.add_argument("--leaves", type=int, default=255)
    parser.add_argument("--trees", type=int, nargs=2, default=[5, 25], metavar=("T1", "T2"))
    parser.add_argument("--threads", type=int, default=1, help="threads per worker")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-depth", type=int, default=0,
                        help="depth-wise trees of this depth instead of leaf-wise ones (see the docstring)")
    args = parser.parse_args()
    rows_out = []
    for rows in args.rows:
        for n_workers in args.workers:
            rows_out += run(rows, n_workers, args.libraries, args.leaves, *args.trees, args.threads, args.repeats,
                            args.max_depth)
    shape = f"depth-wise trees of depth {args.max_depth}" if args.max_depth else f"{args.leaves} leaves"
    print(f"\n{shape}, trees {args.trees[0]} vs {args.trees[1]}, {args.threads} thread(s) per worker\n")
    print("| rows | workers | library | ms per tree | vs lightgbm | fit s (T2 trees) | train AUC "
          "| MB per tree per worker | loopback MB per tree per worker |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows_out:
        reference = next((x for x in rows_out if x["library"] == "lightgbm" and x["rows"] == r["rows"]
                          and x["workers"] == r["workers"]), None)
        ratio = f"{r['per_tree_ms'] / reference['per_tree_ms']:.2f}x" if reference else "-"
        mb = f"{r['bytes_per_tree'] / 1e6:.2f}" if "bytes_per_tree" in r else "-"
        loopback = f"{r['loopback_per_tree'] / 1e6:.2f}" if "loopback_per_tree" in r else "-"
        print(f"| {r['rows']:,} | {r['workers']} | {r['library']} | {r['per_tree_ms']:.1f} | {ratio} | {r['fit_s']:.2f} "
              f"| {r['auc']:.4f} | {mb} | {loopback} |")


if __name__ == "__main__":
    main()
