"""Do smartboost's bins cut each training column where LightGBM's do?

Run by hand (needs lightgbm): ``python benchmarks/bins_vs_lightgbm.py [--datasets ...]``. For
every dataset and feature it bins the training rows with smartboost and with LightGBM (the
same ``max_bin`` and ``min_data_in_bin``; LightGBM's per-row bins read through its text dump),
and counts the features whose two partitions of the rows differ. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

import numpy as np

from smartboost import datasets
from smartboost.binning import BinMapper

DEFAULT = ["lightgbm-binary", "lightgbm-rank", "mq2008", "mslr-5k", "a8a", "agaricus", "synthetic"]


def features(name: str) -> np.ndarray:
    """Training features of a public set, or ``synthetic``: 100,000 HIGGS-like rows (below
    LightGBM's and smartboost's 200,000-row binning sample, so both see every row) with a fifth
    of the values set to zero and a few rounded to 2 decimals (ties)."""
    if name == "synthetic":
        X = datasets.make_higgs_like(100_000, seed=0)[0]
        rng = np.random.default_rng(0)
        X[rng.random(X.shape) < 0.2] = 0.0
        X[:, ::4] = np.round(X[:, ::4], 2)
        return X
    X = datasets.load(name, download=False)[0]
    return np.ascontiguousarray(X.toarray() if hasattr(X, "toarray") else X, np.float64)


def lightgbm_bins(X: np.ndarray, max_bin: int, min_data_in_bin: int) -> np.ndarray:
    """LightGBM's bin of every value (-1 for the features it drops as trivial)."""
    import lightgbm as lgb

    params = {"max_bin": max_bin, "min_data_in_bin": min_data_in_bin, "verbose": -1}
    dataset = lgb.Dataset(X, np.zeros(len(X)), params=params).construct()
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "dump.txt")
        dataset._dump_text(path)
        rows = Path(path).read_text().splitlines()[-len(X):]
    return np.array([[-1 if v.strip() == "NA" else int(v) for v in row.split(",") if v.strip()]
                     for row in rows])


def same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two binnings of one column put the same rows together (bin numbers may differ)."""
    pairs = np.unique(np.stack([a, b]), axis=1)
    return np.unique(pairs[0]).size == pairs.shape[1] == np.unique(pairs[1]).size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DEFAULT)
    parser.add_argument("--max-bin", type=int, default=255)
    parser.add_argument("--min-data-in-bin", type=int, default=3)
    args = parser.parse_args()
    print("| data | rows | features | LightGBM keeps | same partition | differ (first) |\n|---|---|---|---|---|---|")
    for name in args.datasets:
        X = features(name)
        ours = BinMapper(args.max_bin, min_data_in_bin=args.min_data_in_bin).fit(X).transform(X).row_major
        theirs = lightgbm_bins(X, args.max_bin, args.min_data_in_bin)
        kept = np.flatnonzero(theirs[0] >= 0)
        differ = [f for f in kept if not same_partition(ours[:, f], theirs[:, f])]
        print(f"| {name} | {len(X):,} | {X.shape[1]} | {kept.size} | {kept.size - len(differ)} | "
              f"{len(differ)} {differ[:5]} |")


if __name__ == "__main__":
    main()
