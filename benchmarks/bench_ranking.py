"""LambdaMART side by side: smartboost ``lambdarank``, LightGBM ``lambdarank``, XGBoost ``rank:ndcg``.

Usage (the public sets are read from ``$SMARTBOOST_DATA``, default ``../shared/data``)::

    python benchmarks/bench_ranking.py --dataset lightgbm-rank
    python benchmarks/bench_ranking.py --dataset mq2008
    python benchmarks/bench_ranking.py --dataset mslr-5k
    python benchmarks/bench_ranking.py --dataset synthetic --queries 10000 --leaves 255
    python benchmarks/bench_ranking.py --dataset synthetic --queries 2000 --smart-table --rates 0.1 0.2
    python benchmarks/bench_ranking.py --dataset synthetic --smart-table --rates 0.15 --samplers mvs --repeats 2
    python benchmarks/bench_ranking.py --dataset synthetic --queries 2000 --smart-table --units row query
    python benchmarks/bench_ranking.py --dataset synthetic --queries 2000 --iteration-cost 3 --units row query
    python benchmarks/bench_ranking.py --dataset mslr-5k --cv 5 [--orders 5]
    python benchmarks/bench_ranking.py --reader 200

``--smart-table`` (the SMART paper's LambdaMART figures): for smartboost without sampling and
with each sampler of ``--samplers`` at each of ``--rates`` and each sampling unit of ``--units``
(rows, or whole queries: ``sampling_unit``; twice the trees), and for LightGBM without sampling
and with GOSS (when installed), the training seconds until test NDCG@10 first reaches the
smartboost no-sampling best minus 0.002, and LightGBM's no-sampling best; ASRI is the mean
sample rate (share of rows). Test NDCG@10 is evaluated after every iteration outside the
timing. Each library's runs train in lockstep, one iteration of each in turn, so that a shared
machine's drifting load falls on all alike; ``--repeats R`` does that R times and takes each
run's seconds per iteration as the medians over the R (the models are the same in every
repeat). The NDCG@10 curves against
iterations and against seconds go to ``results/ranking_curves_<dataset>_<leaves>.png``
(``smartboost.plotting``).

``--iteration-cost R``: seconds per iteration of ``--trees`` trees without sampling and with each
sampler of ``--samplers`` at each of ``--rates`` and ``--units``, each run R times in interleaved
order; the fastest of the R (the least disturbed on a shared machine) is reported.

``--cv K``: the small public sets' test sets (43-156 queries) cannot tell the libraries apart;
this pools their train and test queries, deals them into K folds at random (seed 0), and scores
every query with each library's model trained on the other folds, so that the paired interval
of the NDCG@10 difference spans every query. ``--orders N`` trains every fold N times, on the
file's order of the documents and on N - 1 shuffles within each query, and averages each query's
NDCG@10 over the N: the input order breaks the first iteration's ties (every score 0), and
LightGBM on a shuffle differs from LightGBM on the file's order by up to 0.024 on these sets.

``--reader MB``: rows per second of smartboost's LETOR reading (``smartboost.datafile.read_data``)
against scikit-learn's ``load_svmlight_file(..., query_id=True)`` on a generated MSLR-like text
file of about MB megabytes (136 features, ``qid:``, LETOR 4.0-style ``#`` comments), written
once into the temporary folder (never into the repository).

Datasets: LightGBM's ranking example (``.query`` side files), MQ2008 Fold1 (LETOR 4.0, 46
features), the first 5,000 rows of MSLR-WEB Fold1 train/test (136 features), and a generated
MSLR-like set (``--queries`` queries of 20-200 documents, 136 features, grades 0-4 from a
noisy nonlinear function; test: a quarter more queries). Every library: the same arrays,
``--trees`` trees of ``--leaves`` leaves, learning rate 0.1, 255 bins, min_data_in_leaf 20,
no L2, 2 threads, NDCG truncation 30. Test NDCG@1/5/10 use smartboost's definition for all
(docs: ``smartboost.metrics``); the difference of smartboost's test NDCG@10 to each other library's
comes with a 95% paired bootstrap interval over the test queries (10,000 resamples), the noise of
a test set of a few dozen queries. "lambda ms" is one call of smartboost's lambda kernel at the
final scores; training seconds exclude binning for every library.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

import smartboost as sb
from smartboost._config import threads
from smartboost.datafile import read_data
from smartboost.datasets import make_ranking_like as synthetic
from smartboost.engine import Trainer, training_params
from smartboost.experiments.timing import lockstep
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


def letor_file(megabytes: int, seed: int = 0) -> Path:
    """An MSLR-like LETOR text file of about ``megabytes`` MB in the temporary folder (made once).

    Every row lists all 136 features: small integers, 6-significant-digit decimals (some in
    exponent notation), large counts and zeros, then a LETOR 4.0-style ``#docid`` comment.
    """
    import tempfile

    path = Path(tempfile.gettempdir()) / f"smartboost_letor_{megabytes}mb_{seed}.txt"
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    partial = path.with_suffix(".partial")
    qid, written = 0, 0
    with open(partial, "w") as f:
        while written < megabytes * 1e6:
            sizes = rng.integers(20, 201, 100)
            n = int(sizes.sum())
            columns = [np.char.mod("%d", rng.integers(0, 12, (n, 5))),
                       np.char.mod("%.6g", rng.exponential(0.3, (n, 100)) * (rng.random((n, 100)) < 0.8)),
                       np.char.mod("%d", rng.integers(0, 100_000, (n, 31)))]
            values = np.concatenate(columns, axis=1)
            label = rng.integers(0, 5, n)
            query = np.repeat(np.arange(qid, qid + sizes.size), sizes)
            qid += sizes.size
            lines = [f"{label[i]} qid:{query[i]} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(values[i]))
                     + f" #docid = GX{i:06d} inc = 1 prob = {rng.random():.6f}\n" for i in range(n)]
            text = "".join(lines)
            f.write(text)
            written += len(text)
    partial.rename(path)
    return path


def reader_speed(megabytes: int) -> str:
    """Rows per second of read_data and of scikit-learn's loader on the same file (best of 2 each)."""
    from sklearn.datasets import load_svmlight_file

    from smartboost._config import threads

    path = letor_file(megabytes)
    size = path.stat().st_size / 1e6

    def read_on(n_threads):
        with threads(n_threads):
            return read_data(path, format="svmlight")

    timings, outputs = {}, {}
    for name, read in ((f"smartboost read_data, {THREADS} threads", lambda: read_on(THREADS)),
                       ("smartboost read_data, 1 thread", lambda: read_on(1)),
                       ("scikit-learn load_svmlight_file", lambda: load_svmlight_file(str(path), query_id=True))):
        seconds = []
        for _ in range(2):
            start = time.perf_counter()
            outputs[name] = read()
            seconds.append(time.perf_counter() - start)
        timings[name] = min(seconds)
    ours, _, (X, y, qid) = outputs.values()
    X = X.tocsr()
    same = (np.array_equal(ours.X.indptr, X.indptr) and np.array_equal(ours.X.indices, X.indices)
            and np.array_equal(ours.X.data.view(np.uint64), X.data.view(np.uint64))
            and np.array_equal(ours.label, y) and np.array_equal(ours.qid, qid))
    n_rows = X.shape[0]
    base = timings["scikit-learn load_svmlight_file"]
    lines = [f"### LETOR reading: {path.name}, {size:.0f} MB, {n_rows:,} rows x 136 features; outputs bit for bit "
             f"identical: {'yes' if same else 'NO'}", "",
             "| reader | seconds (best of 2) | rows / s | MB / s | time / scikit-learn's |", "|---|---|---|---|---|"]
    for name, seconds in timings.items():
        cells = [name, f"{seconds:.2f}", f"{n_rows / seconds:,.0f}", f"{size / seconds:.1f}", f"{seconds / base:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def starts_of(qid: np.ndarray) -> np.ndarray:
    return np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True])


def per_query_ndcg10(label: np.ndarray, scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """NDCG@10 of each query (the ``ndcg@10`` metric is their mean)."""
    metric = get_metric("ndcg@10")
    return np.array([metric(label[a:b], scores[a:b], None, None, np.array([0, b - a]))
                     for a, b in zip(starts[:-1], starts[1:])])


def paired_bootstrap_ci(differences: np.ndarray, draws: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% interval of the mean of per-query differences, by resampling the test queries."""
    rng = np.random.default_rng(seed)
    means = differences[rng.integers(0, differences.size, (draws, differences.size))].mean(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def run_smartboost(X, y, qid, Xt, trees, leaves):
    train = sb.Dataset(X, y, qid=qid).construct()
    params = {"objective": "lambdarank", "num_leaves": leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
              "lambdarank_truncation_level": 30, "num_threads": THREADS, "sampling": "none", "verbosity": -1}
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


class _SmartboostRun:
    """One smartboost training run done one iteration at a time (:func:`_lockstep`): its
    seconds per iteration (``Booster.iteration_stats``) and test NDCG@10 after each (recorded in
    ``Booster.evals_result`` as :func:`smartboost.train` records it)."""

    def __init__(self, params, train, test, trees, n_threads):
        resolved = training_params({**params, "metric": "ndcg@10", "verbosity": -1}, trees)
        self.trainer = Trainer.local(resolved, train, [test], ["test"], None, n_threads)
        self.trees = trees
        self.ndcg = self.trainer.booster.evals_result.setdefault("test", {}).setdefault("ndcg@10", [])

    def step(self):
        self.trainer.boost_one_iteration()
        self.ndcg.append(self.trainer.evaluate()[0].value)

    def curve(self):
        """``(seconds of each iteration, NDCG@10 after each, ASRI, booster)``."""
        stats = self.trainer.booster.iteration_stats
        return np.array(stats["seconds"]), np.array(self.ndcg), np.mean(stats["sample_rate"]), self.trainer.booster


class _LightGBMRun:
    """One LightGBM training run done one iteration at a time (``Booster.update``)."""

    def __init__(self, params, train, trees, Xt, yt, test_starts):
        import lightgbm as lgb

        self.booster = lgb.Booster({**params, "verbose": -1}, train)
        self.trees = trees
        self.seconds = []
        self.test = (Xt, yt, test_starts)

    def step(self):
        start = time.perf_counter()
        self.booster.update()
        self.seconds.append(time.perf_counter() - start)

    def curve(self):
        """As :meth:`_SmartboostRun.curve`, test NDCG@10 from staged predictions (no ASRI, no
        smartboost booster)."""
        Xt, yt, test_starts = self.test
        ndcg, raw, metric = [], np.zeros(len(yt)), get_metric("ndcg@10")
        for k in range(self.booster.current_iteration()):
            raw += self.booster.predict(Xt, start_iteration=k, num_iteration=1, raw_score=True)
            ndcg.append(metric(yt, raw, None, None, test_starts))
        return np.array(self.seconds), np.array(ndcg), None, None


def _lockstep(runs) -> None:
    """Train ``runs`` (of either class above) in :func:`smartboost.experiments.timing.lockstep`."""
    lockstep([run.step for run in runs], [run.trees for run in runs])


def _sampled_runs(args, base):
    """``(label, params)`` of every sampler x rate x unit of the command line."""
    for rate in args.rates:
        for sampling in args.samplers:
            for unit in args.units:
                label = f"{sampling} {rate}" + (" queries" if unit == "query" else "")
                yield label, {**base, "sampling": sampling, "sample_rate": rate, "sampling_unit": unit}


def within_query_order(query: np.ndarray, rows: np.ndarray, order: int) -> np.ndarray:
    """``rows`` (grouped by ``query``) in the file's order (``order`` 0) or with the documents of
    each query shuffled (seed ``order``); the queries keep their places."""
    if order == 0:
        return rows
    return rows[np.lexsort((np.random.default_rng(order).random(rows.size), query[rows]))]


def cross_validated(args, X, y, qid, Xt, yt, qidt) -> str:
    """``--cv K``: every library's test NDCG@10 of each query of train and test pooled, each
    query scored by the model trained on the other ``K - 1`` folds (the same folds for every
    library: queries dealt out at random, seed 0), with paired bootstrap intervals over all
    the pooled queries.

    ``--orders N``: the same K folds trained N times, on the file's order of the documents and on
    N - 1 shuffles of the documents within each training query (the same shuffles for every
    library); a query's NDCG@10 is then its mean over the N models. At the first iteration every
    score is 0, and LambdaMART ranks tied documents in their input order (smartboost and LightGBM
    both sort stably), so the order changes the first trees and, through them, every later one:
    one order's difference between two libraries holds that chance as well as the libraries'
    difference, and the mean over orders averages it out."""
    X_all, y_all = np.concatenate([X, Xt]), np.concatenate([y, yt])
    starts = np.concatenate([starts_of(qid), len(y) + starts_of(qidt)[1:]])
    sizes = np.diff(starts)
    query = np.repeat(np.arange(sizes.size), sizes)  # pooled query ids: train's and test's may repeat
    fold_of_query = np.random.default_rng(0).permutation(sizes.size) % args.cv
    fold = fold_of_query[query]
    libraries = {"smartboost": run_smartboost, "lightgbm": run_lightgbm, "xgboost": run_xgboost}
    per_query = {name: np.zeros((args.orders, sizes.size)) for name in libraries}
    seconds = dict.fromkeys(libraries, 0.0)
    for order in range(args.orders):
        for k in range(args.cv):
            train = within_query_order(query, np.flatnonzero(fold != k), order)
            test = fold == k
            test_starts = starts_of(query[test])
            for name, run in list(libraries.items()):
                try:
                    took, scores, _ = run(X_all[train], y_all[train], query[train], X_all[test], args.trees,
                                          args.leaves)
                except ImportError:
                    del libraries[name]
                    continue
                seconds[name] += took
                per_query[name][order, fold_of_query == k] = per_query_ndcg10(y_all[test], scores, test_starts)
    orders = "the file's order of the documents" if args.orders == 1 else (
        f"the mean over {args.orders} orders of the training documents (the file's, {args.orders - 1} shuffles within "
        "each query)")
    title = (f"### Ranking, {args.dataset}, {args.cv}-fold cross-validation over the {sizes.size:,} train and test "
             f"queries pooled ({len(y_all):,} rows, {X.shape[1]} features); {args.trees} trees x {args.leaves} leaves, "
             f"{THREADS} threads; {orders}")
    columns = ["library", "NDCG@10, mean over queries", "smartboost's minus this [95% CI]"]
    if args.orders > 1:
        columns.append("smartboost's minus this, each order")
    lines = [title, "", "| " + " | ".join(columns + ["training s, all folds"]) + " |",
             "|---" * (len(columns) + 1) + "|"]
    ours = per_query["smartboost"]
    for name in libraries:
        cells = [name, f"{per_query[name].mean():.4f}"]
        differences = ours - per_query[name]
        if name == "smartboost":
            cells += ["-"] * (len(columns) - 2)
        else:
            low, high = paired_bootstrap_ci(differences.mean(axis=0))
            cells.append(f"{differences.mean():+.4f} [{low:+.4f}, {high:+.4f}]")
            if args.orders > 1:
                cells.append(" ".join(f"{d:+.4f}" for d in differences.mean(axis=1)))
        lines.append("| " + " | ".join(cells + [f"{seconds[name]:.2f}"]) + " |")
    return "\n".join(lines)


def smart_table(args, X, y, qid, Xt, yt, qidt) -> tuple[str, list]:
    """The table's markdown and its runs ``(library, label, (seconds, ndcg, asri, booster))``,
    ``seconds`` cumulative.

    Each library's runs are trained in lockstep (:func:`_lockstep`), ``args.repeats`` times; a
    run's seconds per iteration are the medians over the repeats, iteration by iteration. The
    models and curves of NDCG@10 against iterations are the same in every repeat.
    """
    base = {"objective": "lambdarank", "num_leaves": args.leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
            "lambdarank_truncation_level": 30, "num_threads": THREADS}
    train = sb.Dataset(X, y, qid=qid).construct()
    test = sb.Dataset(Xt, yt, qid=qidt, reference=train)
    ours = [("smartboost", "none", {**base, "sampling": "none"}, args.trees)]
    ours += [("smartboost", label, params, 2 * args.trees) for label, params in _sampled_runs(args, base)]
    theirs = []
    try:
        import lightgbm as lgb

        lgb_train = lgb.Dataset(X, y, group=np.diff(starts_of(qid)), params={"max_bin": 255, "verbose": -1}).construct()
        theirs.append(("lightgbm", "none", base, args.trees))
        for rate in args.rates:
            goss = {**base, "data_sample_strategy": "goss", "top_rate": 2 * rate / 3, "other_rate": rate / 3}
            theirs.append(("lightgbm", f"goss {rate}", goss, 2 * args.trees))
    except ImportError:
        print("lightgbm is not installed: smartboost runs only")
    configs = ours + theirs
    per_repeat = []
    for _ in range(args.repeats):
        with threads(THREADS) as n_threads:
            runs = [_SmartboostRun(params, train, test, trees, n_threads) for _, _, params, trees in ours]
            _lockstep(runs)
        if theirs:
            lgb_runs = [_LightGBMRun(params, lgb_train, trees, Xt, yt, starts_of(qidt)) for _, _, params, trees in theirs]
            _lockstep(lgb_runs)
            runs += lgb_runs
        per_repeat.append([run.curve() for run in runs])
    runs = []
    for k, (library, label, _, _) in enumerate(configs):
        _, ndcg, asri, booster = per_repeat[-1][k]
        seconds = np.median([curves[k][0] for curves in per_repeat], axis=0)
        runs.append((library, label, (np.cumsum(seconds), ndcg, asri, booster)))
    target = runs[0][2][1].max() - 0.002
    lightgbm_best = next((curve[1].max() for library, label, curve in runs if (library, label) == ("lightgbm", "none")),
                         None)
    lines = [f"### SMART LambdaMART table, {args.dataset}: {len(y):,} rows / {len(starts_of(qid)) - 1:,} queries, "
             f"{args.leaves} leaves, runs in lockstep, median seconds of {args.repeats} repeats; targets: "
             f"smartboost no-sampling best NDCG@10 - 0.002 = {target:.4f}, "
             f"LightGBM no-sampling best = {_fmt(lightgbm_best, '.4f')}", "",
             "| library | run | ASRI | best NDCG@10 | s / iteration | it. to target | s to target | speed-up "
             "| s to LightGBM's best |", "|---|---|---|---|---|---|---|---|---|"]
    base_seconds = None
    for library, label, (seconds, ndcg, asri, _) in runs:
        hit = np.flatnonzero(ndcg >= target)
        hit_lgb = np.flatnonzero(ndcg >= lightgbm_best) if lightgbm_best is not None else np.zeros(0)
        t = float(seconds[hit[0]]) if hit.size else None
        if base_seconds is None:
            base_seconds = t
        cells = [library, label, _fmt(asri, ".3f"), _fmt(ndcg.max(), ".4f"), _fmt(seconds[-1] / seconds.size, ".3f"),
                 _fmt(hit[0] + 1 if hit.size else None, "d"), _fmt(t, ".2f"),
                 _fmt(base_seconds / t if t and base_seconds else None, ".2f"),
                 _fmt(seconds[hit_lgb[0]] if hit_lgb.size else None, ".2f")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines), runs


def iteration_cost(args, X, y, qid) -> str:
    """Seconds per iteration of every run, the fastest of ``args.iteration_cost`` interleaved repeats."""
    base = {"objective": "lambdarank", "num_leaves": args.leaves, "learning_rate": 0.1, "min_data_in_leaf": 20,
            "lambdarank_truncation_level": 30, "num_threads": THREADS, "verbosity": -1}
    runs = {"none": {**base, "sampling": "none"}, **dict(_sampled_runs(args, base))}
    train = sb.Dataset(X, y, qid=qid).construct()
    seconds = {label: [] for label in runs}
    rates = {}
    for _ in range(args.iteration_cost):
        for label, params in runs.items():
            stats = sb.train(params, train, args.trees).iteration_stats
            seconds[label].append(np.sum(stats["seconds"]) / args.trees)
            rates[label] = np.mean(stats["sample_rate"])
    lines = [f"### Seconds per iteration, {args.dataset}: {len(y):,} rows / {len(starts_of(qid)) - 1:,} queries, "
             f"{args.leaves} leaves, {args.trees} trees, fastest of {args.iteration_cost}", "",
             "| run | ASRI | s / iteration | / no sampling |", "|---|---|---|---|"]
    for label in runs:
        best = min(seconds[label])
        lines.append(f"| {label} | {rates[label]:.3f} | {best:.3f} | {best / min(seconds['none']):.2f} |")
    return "\n".join(lines)


def plot_curves(runs, path: str, title: str) -> None:
    """Test NDCG@10 against iterations and against training seconds, one line per run (PNG)."""
    from smartboost.plotting import plot_metric, pyplot

    plt = pyplot(headless=True)
    fig, axes = plt.subplots(1, 2, figsize=(15, 5))
    ours = {f"smartboost {label}": curve[3] for library, label, curve in runs if library == "smartboost"}
    best = max(curve[1].max() for _, _, curve in runs)
    for ax, x in zip(axes, ("iteration", "seconds")):
        ax.set_prop_cycle(color=plt.cm.tab20.colors)
        plot_metric(ours, "ndcg@10", "test", x=x, ax=ax)
        for line in ax.get_lines():  # whole-query samples dotted
            line.set_linestyle(":" if line.get_label().endswith("queries") else "-")
        for library, label, (seconds, ndcg, _, booster) in runs:
            if booster is None:  # LightGBM: its own timings
                ax.plot(np.arange(1, ndcg.size + 1) if x == "iteration" else seconds, ndcg, "--",
                        label=f"{library} {label}")
        ax.set_ylim(best - 0.03, best + 0.003)
        ax.set_ylabel("test NDCG@10")
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _report(text: str, name: str) -> None:
    """Print a result table and keep it in ``results/<name>.md``."""
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, f"{name}.md"), "w") as f:
        f.write(text + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="lightgbm-rank", choices=[*_FILES, "synthetic"])
    parser.add_argument("--queries", type=int, default=10_000, help="synthetic: training queries")
    parser.add_argument("--trees", type=int, default=100)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--smart-table", action="store_true", help="sampling runs: seconds to a target NDCG@10")
    parser.add_argument("--rates", type=float, nargs="+", default=[0.1, 0.2])
    parser.add_argument("--samplers", nargs="+", default=["uniform", "goss", "mvs", "smart1", "smart2"])
    parser.add_argument("--units", nargs="+", default=["row"], choices=["row", "query"],
                        help="sample rows, whole queries (sampling_unit), or both")
    parser.add_argument("--repeats", type=int, default=1, metavar="R",
                        help="--smart-table: train the runs R times in lockstep; median seconds per iteration")
    parser.add_argument("--iteration-cost", type=int, metavar="R", help="seconds per iteration, fastest of R repeats")
    parser.add_argument("--cv", type=int, metavar="K", help="K-fold cross-validation over train and test queries pooled")
    parser.add_argument("--orders", type=int, default=1, metavar="N",
                        help="--cv: also train on N - 1 shuffles of the documents within each query, and average")
    parser.add_argument("--reader", type=int, metavar="MB", help="time LETOR reading on a generated file of MB MB")
    args = parser.parse_args()
    if args.orders < 1:
        parser.error(f"--orders must be at least 1, got {args.orders}")
    if args.reader:
        _report(reader_speed(args.reader), f"ranking_reader_{args.reader}mb")
        return
    (X, y, qid), (Xt, yt, qidt) = load(args.dataset, args.queries)
    test_starts = starts_of(qidt)
    sb.compile_kernels()
    if args.iteration_cost:
        _report(iteration_cost(args, X, y, qid), f"ranking_iteration_cost_{args.dataset}_{args.leaves}")
        return
    if args.cv:
        _report(cross_validated(args, X, y, qid, Xt, yt, qidt), f"ranking_cv{args.cv}_{args.dataset}_{args.leaves}")
        return
    if args.smart_table:
        text, runs = smart_table(args, X, y, qid, Xt, yt, qidt)
        _report(text, f"ranking_smart_table_{args.dataset}_{args.leaves}")
        png = os.path.join(RESULTS, f"ranking_curves_{args.dataset}_{args.leaves}.png")
        plot_curves(runs, png, f"{args.dataset}, {len(y):,} rows, {args.leaves} leaves: test NDCG@10")
        print(f"curves: {png}")
        return
    rows = []
    for name, run in (("smartboost", run_smartboost), ("lightgbm", run_lightgbm), ("xgboost", run_xgboost)):
        try:
            seconds, scores, lambda_seconds = run(X, y, qid, Xt, args.trees, args.leaves)
        except ImportError:
            continue
        ndcg = [get_metric(f"ndcg@{k}")(yt, scores, None, None, test_starts) for k in (1, 5, 10)]
        rows.append((name, seconds, ndcg, lambda_seconds, per_query_ndcg10(yt, scores, test_starts)))
    base = rows[0][1]
    ours = rows[0][4]
    lines = [f"### Ranking, {args.dataset}: {len(y):,} train rows / {len(starts_of(qid)) - 1:,} queries, "
             f"{len(yt):,} test rows / {len(test_starts) - 1:,} queries, {X.shape[1]} features; {args.trees} trees "
             f"x {args.leaves} leaves, {THREADS} threads", "",
             "| library | NDCG@1 | NDCG@5 | NDCG@10 | smartboost's NDCG@10 minus this [95% CI] | training s | "
             "s per iteration | time / smartboost's | lambda ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, seconds, ndcg, lambda_seconds, per_query in rows:
        lam = f"{lambda_seconds * 1e3:.2f}" if lambda_seconds is not None else "-"
        difference = "-"
        if name != "smartboost":
            low, high = paired_bootstrap_ci(ours - per_query)
            difference = f"{np.mean(ours - per_query):+.4f} [{low:+.4f}, {high:+.4f}]"
        lines.append(f"| {name} | {ndcg[0]:.4f} | {ndcg[1]:.4f} | {ndcg[2]:.4f} | {difference} | {seconds:.2f} | "
                     f"{seconds / args.trees:.4f} | {seconds / base:.2f} | {lam} |")
    _report("\n".join(lines), f"ranking_{args.dataset}_{args.leaves}")


if __name__ == "__main__":
    main()
