"""LambdaMART side by side: smartboost ``lambdarank``, LightGBM ``lambdarank``, XGBoost ``rank:ndcg``.

Usage (the public sets are read from ``$SMARTBOOST_DATA``, default ``../shared/data``)::

    python benchmarks/bench_ranking.py --dataset lightgbm-rank
    python benchmarks/bench_ranking.py --dataset mq2008
    python benchmarks/bench_ranking.py --dataset mslr-5k
    python benchmarks/bench_ranking.py --dataset synthetic --queries 10000 --leaves 255
    python benchmarks/bench_ranking.py --dataset synthetic --queries 2000 --smart-table --rates 0.1 0.2

``--smart-table`` (the SMART paper's LambdaMART figures): for smartboost without sampling and
with each sampler of ``--samplers`` at each of ``--rates`` (twice the trees), and for LightGBM
without sampling and with GOSS, the training seconds until test NDCG@10 first reaches the
smartboost no-sampling best minus 0.002, and LightGBM's no-sampling best; ASRI is the mean
sample rate. Test NDCG@10 is evaluated after every iteration outside the timing.

Datasets: LightGBM's ranking example (``.query`` side files), MQ2008 Fold1 (LETOR 4.0, 46
features), the first 5,000 rows of MSLR-WEB Fold1 train/test (136 features), and a generated
MSLR-like set (``--queries`` queries of 20-200 documents, 136 features, grades 0-4 from a
noisy nonlinear function; test: a quarter more queries). Every library: the same arrays,
``--trees`` trees of ``--leaves`` leaves, learning rate 0.1, 255 bins, min_data_in_leaf 20,
no L2, 2 threads, NDCG truncation 30. Test NDCG@1/5/10 use smartboost's definition for all
(docs: ``smartboost.metrics``). "lambda ms" is one call of smartboost's lambda kernel at the
final scores; training seconds exclude binning for every library.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import smartboost as sb
from smartboost.datafile import read_data
from smartboost.datasets import make_ranking_like as synthetic
from smartboost.experiments.ranking import ndcg_curve as _smartboost_curve
from smartboost.metrics import get_metric

THREADS = 2
DATA = Path(os.environ.get("SMARTBOOST_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
_FILES = {"lightgbm-rank": ("lightgbm_examples/lambdarank/rank.train.gz", "lightgbm_examples/lambdarank/rank.test.gz",
                            300),
          "mq2008": ("mq2008/Fold1/train.txt.gz", "mq2008/Fold1/test.txt.gz", 46),
          "mslr-5k": ("mslr_fold1_5k/train.txt.gz", "mslr_fold1_5k/test.txt.gz", 136)}


def load(name: str, n_queries: int):
    """(X, y, qid) for train and test."""
    if name == "synthetic":
        return synthetic(n_queries, 0), synthetic(n_queries // 4, 1)
    train_path, test_path, n_features = _FILES[name]
    out = []
    for path in (train_path, test_path):
        data = read_data(DATA / path, format="svmlight", n_features=n_features)
        out.append((np.ascontiguousarray(data.X.toarray(), np.float32), data.label, data.qid))
    return out


def starts_of(qid: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])


def run_smartboost(X, y, qid, Xt, trees, leaves):
    train = sb.Dataset(X, y, qid=qid)
    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "lambdarank_truncation_level": 30, "num_threads": THREADS, "verbosity": -1}
    start = time.perf_counter()
    booster = sb.train(params, train, trees)
    seconds = time.perf_counter() - start
    raw = booster.predict(X, raw_score=True)
    g, h = np.empty_like(raw), np.empty_like(raw)
    booster.objective.bind_queries(y, train.query_starts)
    calls = []
    for _ in range(5):
        t = time.perf_counter()
        booster.objective.grad_hess(y, raw, g, h)
        calls.append(time.perf_counter() - t)
    return seconds, booster.predict(Xt, raw_score=True), float(np.median(calls))


def run_lightgbm(X, y, qid, Xt, trees, leaves):
    import lightgbm as lgb

    group = np.diff(starts_of(qid))
    train = lgb.Dataset(X, y, group=group, params={"max_bin": 255, "verbose": -1}).construct()
    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "lambdarank_truncation_level": 30, "num_threads": THREADS, "verbose": -1}
    start = time.perf_counter()
    booster = lgb.train(params, train, trees)
    return time.perf_counter() - start, booster.predict(Xt, num_threads=THREADS), None


def run_xgboost(X, y, qid, Xt, trees, leaves):
    import xgboost as xgb

    train = xgb.DMatrix(X, y, qid=qid, nthread=THREADS)
    params = {"objective": "rank:ndcg", "tree_method": "hist", "grow_policy": "lossguide", "max_leaves": leaves,
              "max_depth": 0, "eta": 0.1, "lambda": 0.0, "min_child_weight": 1e-3, "max_bin": 255,
              "lambdarank_pair_method": "topk", "lambdarank_num_pair_per_sample": 30, "nthread": THREADS}
    start = time.perf_counter()
    booster = xgb.train(params, train, trees)
    return time.perf_counter() - start, booster.predict(xgb.DMatrix(Xt, nthread=THREADS)), None


def _lightgbm_curve(params, X, y, qid, Xt, yt, qidt, trees):
    import lightgbm as lgb

    stamps = []
    train = lgb.Dataset(X, y, group=np.diff(starts_of(qid)), params={"max_bin": 255, "verbose": -1}).construct()
    start = time.perf_counter()
    booster = lgb.train({**params, "verbose": -1}, train, trees,
                        callbacks=[lambda env: stamps.append(time.perf_counter())])
    seconds = np.array(stamps) - start
    ndcg, raw, metric, test_starts = [], np.zeros(len(yt)), get_metric("ndcg@10"), starts_of(qidt)
    for k in range(booster.current_iteration()):
        raw += booster.predict(Xt, start_iteration=k, num_iteration=1, raw_score=True)
        ndcg.append(metric(yt, raw, None, None, test_starts))
    return seconds, np.array(ndcg), None


def smart_table(args, X, y, qid, Xt, yt, qidt) -> str:
    base = {"objective": "lambdarank", "num_leaves": args.leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
            "lambdarank_truncation_level": 30, "num_threads": THREADS}
    runs = [("smartboost", "none", _smartboost_curve(base, X, y, qid, Xt, yt, qidt, args.trees))]
    for rate in args.rates:
        for sampling in args.samplers:
            params = {**base, "sampling": sampling, "sample_rate": rate}
            runs.append(("smartboost", f"{sampling} {rate}",
                         _smartboost_curve(params, X, y, qid, Xt, yt, qidt, 2 * args.trees)))
    runs.append(("lightgbm", "none", _lightgbm_curve(base, X, y, qid, Xt, yt, qidt, args.trees)))
    for rate in args.rates:
        goss = {**base, "data_sample_strategy": "goss", "top_rate": 2 * rate / 3, "other_rate": rate / 3}
        runs.append(("lightgbm", f"goss {rate}", _lightgbm_curve(goss, X, y, qid, Xt, yt, qidt, 2 * args.trees)))
    target = runs[0][2][1].max() - 0.002
    lightgbm_best = next(curve[1].max() for library, label, curve in runs if (library, label) == ("lightgbm", "none"))
    lines = [f"### SMART LambdaMART table, {args.dataset}: {len(y):,} rows / {len(starts_of(qid)) - 1:,} queries, "
             f"{args.leaves} leaves; targets: smartboost no-sampling best NDCG@10 - 0.002 = {target:.4f}, "
             f"LightGBM no-sampling best = {lightgbm_best:.4f}", "",
             "| library | run | ASRI | best NDCG@10 | it. to target | s to target | speed-up | s to LightGBM's best |",
             "|---|---|---|---|---|---|---|---|"]
    base_seconds = None
    for library, label, (seconds, ndcg, asri) in runs:
        hit = np.flatnonzero(ndcg >= target)
        hit_lgb = np.flatnonzero(ndcg >= lightgbm_best)
        t = float(seconds[hit[0]]) if hit.size else None
        if base_seconds is None:
            base_seconds = t
        cells = [library, label, _fmt(asri, ".3f"), _fmt(ndcg.max(), ".4f"),
                 _fmt(hit[0] + 1 if hit.size else None, "d"), _fmt(t, ".2f"),
                 _fmt(base_seconds / t if t and base_seconds else None, ".2f"),
                 _fmt(seconds[hit_lgb[0]] if hit_lgb.size else None, ".2f")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="lightgbm-rank", choices=[*_FILES, "synthetic"])
    parser.add_argument("--queries", type=int, default=10_000, help="synthetic: training queries")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--smart-table", action="store_true", help="sampling runs: seconds to a target NDCG@10")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.1, 0.2])
    parser.add_argument("--samplers", nargs="+", default=["uniform", "goss", "mvs", "smart1", "smart2"])
    args = parser.parse_args()
    (X, y, qid), (Xt, yt, qidt) = load(args.dataset, args.queries)
    test_starts = starts_of(qidt)
    sb.compile_kernels()
    if args.smart_table:
        text = smart_table(args, X, y, qid, Xt, yt, qidt)
        print(text)
        os.makedirs(RESULTS, exist_ok=True)
        with open(os.path.join(RESULTS, f"ranking_smart_table_{args.dataset}_{args.leaves}.md"), "w") as f:
            f.write(text + "\n")
        return
    rows = []
    for name, run in (("smartboost", run_smartboost), ("lightgbm", run_lightgbm), ("xgboost", run_xgboost)):
        try:
            seconds, scores, lambda_seconds = run(X, y, qid, Xt, args.trees, args.leaves)
        except ImportError:
            continue
        ndcg = [get_metric(f"ndcg@{k}")(yt, scores, None, None, test_starts) for k in (1, 5, 10)]
        rows.append((name, seconds, ndcg, lambda_seconds))
    base = rows[0][1]
    lines = [f"### Ranking, {args.dataset}: {len(y):,} train rows / {len(starts_of(qid)) - 1:,} queries, "
             f"{len(yt):,} test rows / {len(test_starts) - 1:,} queries, {X.shape[1]} features; {args.trees} trees "
             f"x {args.leaves} leaves, {THREADS} threads", "",
             "| library | NDCG@1 | NDCG@5 | NDCG@10 | training s | s per iteration | time / smartboost's | lambda ms |",
             "|---|---|---|---|---|---|---|---|"]
    for name, seconds, ndcg, lambda_seconds in rows:
        lam = f"{lambda_seconds * 1e3:.2f}" if lambda_seconds is not None else "-"
        lines.append(f"| {name} | {ndcg[0]:.4f} | {ndcg[1]:.4f} | {ndcg[2]:.4f} | {seconds:.2f} | "
                     f"{seconds / args.trees:.4f} | {seconds / base:.2f} | {lam} |")
    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"ranking_{args.dataset}_{args.leaves}.md"), "w") as f:
        f.write(text + "\n")


if __name__ == "__main__":
    main()
