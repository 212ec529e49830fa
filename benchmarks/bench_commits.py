"""Paired benchmark of two revisions of smartboost: same data, runs interleaved in one session.

A refactor must leave models and speed as they were. This script exports ``src/`` of two git
revisions (anything ``git archive`` takes: commits, branches, tags) into a temporary folder, gives
each its own numba cache (compiled once before timing), and then alternates the revisions, one
fresh interpreter per run, on the same arrays. Machine noise then hits both alike; the table shows
median training and prediction seconds per revision, their ratio, and whether the saved model
files are byte for byte the same.

Usage::

    python benchmarks/bench_commits.py OLD NEW                         # HIGGS-like 300k x 28, 255 leaves
    python benchmarks/bench_commits.py HEAD~5 HEAD --rows 1000000 --trees 50 --repeats 7
    python benchmarks/bench_commits.py v0.1 HEAD --objective regression --leaves 31
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def export(revision: str, folder: str) -> str:
    """``src/`` of ``revision`` extracted under ``folder``; returns the path to put on PYTHONPATH."""
    target = os.path.join(folder, hashlib.sha1(revision.encode()).hexdigest()[:12])
    archive = subprocess.run(["git", "-C", REPO, "archive", "--format=tar", revision, "src"],
                             capture_output=True, check=True).stdout
    os.makedirs(target)
    with tempfile.TemporaryFile() as f:
        f.write(archive)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(target, filter="data")
    return os.path.join(target, "src")


def child(path: str, params: dict, trees: int, model_path: str) -> dict:
    """One run inside a fresh interpreter whose ``smartboost`` is the revision under test."""
    import smartboost as sb

    with np.load(path) as data:
        X, y, Xt = data["X"], data["y"], data["Xt"]
    sb.compile_kernels()
    t0 = time.perf_counter()
    booster = sb.train(params, sb.Dataset(X, y, params=params), trees)
    t1 = time.perf_counter()
    prediction = booster.predict(Xt)
    t2 = time.perf_counter()
    booster.save_model(model_path)
    with open(model_path, "rb") as f:
        model_hash = hashlib.sha256(f.read()).hexdigest()
    return {"training": t1 - t0, "prediction": t2 - t1, "model": model_hash,
            "prediction_hash": hashlib.sha256(np.ascontiguousarray(prediction).tobytes()).hexdigest()}


def _run(src: str, cache: str, path: str, params: dict, trees: int, folder: str) -> dict:
    env = {**os.environ, "PYTHONPATH": src, "NUMBA_CACHE_DIR": cache}
    cmd = [sys.executable, __file__, "--child", path, json.dumps(params), str(trees), os.path.join(folder, "m.json")]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"run with {src} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("old", nargs="?", help="the revision to compare against")
    parser.add_argument("new", nargs="?", help="the revision under test")
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--trees", type=int, default=30)
    parser.add_argument("--leaves", type=int, default=255)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--objective", default="binary", choices=["binary", "regression"])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        path, params, trees, model_path = args.child
        print(json.dumps(child(path, json.loads(params), int(trees), model_path)))
        return
    if args.old is None or args.new is None:
        parser.error("two revisions are needed: OLD NEW")
    sys.path.insert(0, os.path.join(REPO, "src"))
    from smartboost import datasets

    params = {"objective": args.objective, "num_leaves": args.leaves, "learning_rate": 0.1, "sampling": "none",
              "num_threads": args.threads, "verbosity": -1, "seed": 0}
    with tempfile.TemporaryDirectory() as folder:
        X, y = datasets.make_higgs_like(args.rows + 50_000, seed=0)
        path = os.path.join(folder, "data.npz")
        np.savez(path, X=X[:args.rows], y=y[:args.rows], Xt=X[args.rows:])
        revisions = {rev: (export(rev, folder), os.path.join(folder, f"cache-{i}"))
                     for i, rev in enumerate((args.old, args.new))}
        for src, cache in revisions.values():  # compile into each revision's cache before timing
            _run(src, cache, path, params, 1, folder)
        runs = {rev: [] for rev in revisions}
        for _ in range(args.repeats):
            for rev, (src, cache) in revisions.items():
                runs[rev].append(_run(src, cache, path, params, args.trees, folder))
    print(f"{args.rows:,} x 28 HIGGS-like, {args.objective}, {args.trees} trees x {args.leaves} leaves, "
          f"{args.threads} threads, {args.repeats} interleaved repeats (median); machine {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}\n")
    print("| revision | training s | prediction s |\n|---|---|---|")
    median = {rev: {key: statistics.median(r[key] for r in rs) for key in ("training", "prediction")}
              for rev, rs in runs.items()}
    for rev in revisions:
        print(f"| {rev} | {median[rev]['training']:.3f} | {median[rev]['prediction']:.3f} |")
    old, new = median[args.old], median[args.new]
    print(f"| ratio new/old | {new['training'] / old['training']:.3f} | {new['prediction'] / old['prediction']:.3f} |")
    models = {r["model"] for rs in runs.values() for r in rs}
    predictions = {r["prediction_hash"] for rs in runs.values() for r in rs}
    print(f"\nmodel files byte-identical across revisions and repeats: {len(models) == 1}; "
          f"predictions identical: {len(predictions) == 1}")


if __name__ == "__main__":
    main()
