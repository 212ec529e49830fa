"""RGBM experiment (the RGBM paper's Figure 5 shape): ``smartboost experiment rgbm`` on 2 threads.

Usage (public sets are read through ``smartboost.datasets`` from ``$SMARTBOOST_DATA``)::

    python benchmarks/bench_rgbm.py --dataset a9a --iterations 500
    python benchmarks/bench_rgbm.py --dataset lightgbm-regression --iterations 500
    python benchmarks/bench_rgbm.py --dataset synthetic --iterations 500

Training and test loss against iterations and seconds, one curve per number t of candidate
features drawn per tree (Type 3), on a geometric grid from 1 to F; the experiment itself is
``smartboost.experiments.rgbm.rgbm_figure`` (its docstring has the settings). ``synthetic`` is the
generated p >> n set (200 training rows x 2,000 features, 10 informative, like colon-cancer).
Prints a markdown table of the training loss reached within fixed time budgets, and saves it
with PNG curves to ``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import os

import smartboost as sb
from smartboost.experiments.rgbm import load, rgbm_figure

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="a9a", help="a binary or regression registry set, or 'synthetic'")
    parser.add_argument("--iterations", type=int, default=500)
    args = parser.parse_args()
    data = load(args.dataset)
    sb.compile_kernels()
    result = rgbm_figure(data, args.iterations, threads=2)
    print(result.markdown())
    result.save(RESULTS)


if __name__ == "__main__":
    main()
