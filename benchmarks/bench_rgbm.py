"""RGBM benchmarks: the experiment of the RGBM paper's Figure 5, and the cost of an iteration against t.

Usage (public sets are read through ``smartboost.datasets`` from ``$SMARTBOOST_DATA``)::

    python benchmarks/bench_rgbm.py experiment --dataset a9a --iterations 500
    python benchmarks/bench_rgbm.py experiment --dataset lightgbm-regression --iterations 500
    python benchmarks/bench_rgbm.py experiment --dataset synthetic --iterations 500
    python benchmarks/bench_rgbm.py iteration-cost --rows 1000000 --t 28 14 7 3 --phases
    python benchmarks/bench_rgbm.py iteration-cost --t 28 --against ../base/src

``experiment``: ``smartboost experiment rgbm`` on 2 threads (the logic is
``smartboost.experiments.rgbm.rgbm_figure``; its docstring has the settings): training and test
loss against iterations and seconds, one curve per number t of candidate features drawn per tree
(Type 3), on a geometric grid from 1 to F. ``synthetic`` is the generated p >> n set (200
training rows x 2,000 features, 10 informative, like colon-cancer). Prints a markdown table of
the training loss reached within fixed time budgets, and saves it with PNG curves to
``benchmarks/results/``.

``iteration-cost``: milliseconds per iteration (median over the iterations after the first
``--skip``) of Newton boosting with 255-leaf trees on the HIGGS-like synthetic set
(``make_higgs_like``), for Type 3 per-tree draws of each t (t = F: plain boosting), wall clock
and process CPU time. Each repeat runs every t in turn (interleaved, since the machine is
shared), and the table gives the median, lowest and highest over the repeats. ``--phases``
times the steps of an iteration (in a separate run, since the timers cost a little):
gradients, row sample, fixed-point conversion, compact column copy, histograms, partitions,
split scans (with histogram subtraction), score update, and the rest (tree bookkeeping in
Python). ``--against SRC`` runs the same measurement with the smartboost package found in
``SRC`` (another checkout's ``src``) in alternation, each repeat in fresh processes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
from phases import PhaseTimer

import smartboost as sb
from smartboost import datasets
from smartboost.experiments.rgbm import load, rgbm_figure

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def cmd_experiment(args) -> None:
    """The RGBM figure (see the module docstring)."""
    data = load(args.dataset)
    sb.compile_kernels()
    result = rgbm_figure(data, args.iterations, threads=2)
    print(result.markdown())
    result.save(RESULTS)

class _CpuClock(sb.TrainingCallback):
    """Process CPU seconds of every iteration."""

    def before_training(self, env):
        self.last, self.seconds = time.process_time(), []

    def after_iteration(self, env):
        now = time.process_time()
        self.seconds.append(now - self.last)
        self.last = now
        return False


def _higgs_like(rows: int):
    X, y = datasets.make_higgs_like(rows, seed=0)
    return sb.Dataset(X, y).construct()


def _cost_params(t: int, n_features: int, threads: int) -> dict:
    params = {"objective": "binary", "num_leaves": 255, "learning_rate": 0.1, "num_threads": threads,
              "sampling": "none", "verbosity": -1}
    return {**params, "selection_type": 3, "selection_t": t} if t < n_features else params


def cost_worker(args) -> dict:
    """One repeat of ``iteration-cost`` in this process: per t, median wall and CPU ms per
    iteration, and with ``--phases`` the step split (JSON-ready)."""
    train_set = _higgs_like(args.rows)
    n_features = int(train_set.binned.usable_features.sum())
    sb.compile_kernels()
    for t in args.t:
        sb.train(_cost_params(t, n_features, args.threads), train_set, 2)  # this t's kernel variants
    out = {}
    for t in args.t:
        params = _cost_params(t, n_features, args.threads)
        clock = _CpuClock()
        booster = sb.train(params, train_set, args.trees, callbacks=[clock])
        wall = booster.iteration_stats["seconds"][args.skip:]
        out[t] = {"wall": 1e3 * float(np.median(wall)), "cpu": 1e3 * float(np.median(clock.seconds[args.skip:]))}
        if args.phases:
            timer, clock = PhaseTimer(), _CpuClock()
            try:
                booster = sb.train(params, train_set, args.trees, callbacks=[clock])
            finally:
                timer.restore()
            wall = float(np.sum(booster.iteration_stats["seconds"]))
            out[t]["phases"] = {"wall": timer.split(args.trees, wall, "wall"),
                                "cpu": timer.split(args.trees, float(np.sum(clock.seconds)), "cpu")}
    return out


def cmd_iteration_cost(args) -> None:
    """Milliseconds per iteration against t (see the module docstring)."""
    if args.worker:
        print(json.dumps(cost_worker(args)))
        return
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    sources = {"this": os.path.abspath(here)}
    if args.against:
        sources["against"] = os.path.abspath(args.against)
    runs: dict[str, list[dict]] = {name: [] for name in sources}
    argv = [sys.executable, os.path.abspath(__file__), "iteration-cost", "--worker", "--rows", str(args.rows),
            "--trees", str(args.trees), "--skip", str(args.skip), "--threads", str(args.threads),
            "--t", *map(str, args.t)]
    for repeat in range(args.repeats):
        order = list(sources) if repeat % 2 == 0 else list(sources)[::-1]
        for name in order:
            env = {**os.environ, "PYTHONPATH": sources[name]}
            done = subprocess.run(argv + (["--phases"] if args.phases else []), env=env, check=True,
                                  capture_output=True, text=True)
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(f"repeat {repeat} {name}: " + ", ".join(f"t={t} {r['wall']:.1f}/{r['cpu']:.1f} ms"
                                                         for t, r in runs[name][-1].items()), flush=True)
    lines = [f"### Milliseconds per iteration, {args.rows:,} x 28 HIGGS-like, 255 leaves, {args.threads} threads, "
             f"Type 3 per tree (median of iterations {args.skip + 1}-{args.trees}; median [min-max] of "
             f"{args.repeats} interleaved repeats)", "",
             "| source | t | wall ms | CPU ms | wall ratio to t = F |", "|---|---|---|---|---|"]
    full = str(max(args.t))
    for name, reps in runs.items():
        for t in map(str, args.t):
            wall = [r[t]["wall"] for r in reps]
            cpu = [r[t]["cpu"] for r in reps]
            ratio = [r[t]["wall"] / r[full]["wall"] for r in reps]
            lines.append(f"| {name} | {t} | {np.median(wall):.1f} [{min(wall):.1f}-{max(wall):.1f}] | "
                         f"{np.median(cpu):.1f} [{min(cpu):.1f}-{max(cpu):.1f}] | "
                         f"{np.median(ratio):.3f} [{min(ratio):.3f}-{max(ratio):.3f}] |")
    if args.phases:
        phases = list(runs["this"][0][str(args.t[0])]["phases"]["wall"])
        lines += ["", "Steps of an iteration (wall / CPU ms per iteration over all iterations, median over the "
                  "repeats):", "", "| source | t | " + " | ".join(phases) + " |", "|---" * (len(phases) + 2) + "|"]
        for name, reps in runs.items():
            for t in map(str, args.t):
                lines.append(f"| {name} | {t} | " + " | ".join(
                    "/".join(f"{np.median([r[t]['phases'][clock].get(p, 0.0) for r in reps]):.1f}"
                             for clock in ("wall", "cpu")) for p in phases) + " |")
    text = "\n".join(lines)
    print(text)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "rgbm_iteration_cost.md"), "w") as f:
        f.write(text + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    experiment = commands.add_parser("experiment")
    experiment.set_defaults(run=cmd_experiment)
    experiment.add_argument("--dataset", default="a9a", help="a binary or regression registry set, or 'synthetic'")
    experiment.add_argument("--iterations", type=int, default=500)
    cost = commands.add_parser("iteration-cost")
    cost.set_defaults(run=cmd_iteration_cost)
    cost.add_argument("--rows", type=int, default=1_000_000)
    cost.add_argument("--t", type=int, nargs="+", default=[28, 14, 7, 4, 3])
    cost.add_argument("--trees", type=int, default=30)
    cost.add_argument("--skip", type=int, default=5, help="first iterations left out (tree shapes settling)")
    cost.add_argument("--repeats", type=int, default=3)
    cost.add_argument("--threads", type=int, default=2)
    cost.add_argument("--phases", action="store_true", help="also time the steps of an iteration")
    cost.add_argument("--against", help="another checkout's src folder, measured in alternation")
    cost.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
