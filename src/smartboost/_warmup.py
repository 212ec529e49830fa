"""Compile (or load from numba's cache) every kernel a training run and a prediction use."""

from __future__ import annotations

import time

import numpy as np

from ._common import HIST_PARALLEL_MIN_ROWS, PARTITION_PARALLEL_MIN_ROWS


def compile_kernels() -> float:
    """Compile or load every training and prediction kernel, so later timings exclude it.

    Trains small models on float32 and float64 data with dense, sparse and missing values, on
    enough rows for the parallel paths and enough leaves for the serial ones, and predicts.

    Returns
    -------
    float
        Seconds spent.
    """
    from . import Dataset, train
    from .binning import _PARALLEL_TRANSPOSE_VALUES, BinMapper

    start = time.perf_counter()
    n = 4 * max(HIST_PARALLEL_MIN_ROWS, PARTITION_PARALLEL_MIN_ROWS)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 4))
    X[:, 3] *= rng.random(n) < 0.05  # a sparse feature
    X[rng.random(n) < 0.01, 0] = np.nan
    y = (X[:, 1] + rng.standard_normal(n) > 0).astype(np.float64)
    for objective, dtype in (("binary", np.float32), ("regression", np.float64)):
        data = X.astype(dtype)
        train_set = Dataset(data, y)
        booster = train({"objective": objective, "num_leaves": 64, "verbosity": -1}, train_set, 2,
                        valid_sets=[Dataset(data[:100], y[:100], reference=train_set)])
        booster.predict(data[:10])
    # a sampled tree on compact rows (grower.NodeRows), large enough for the parallel partition
    # (and its leaf values from every row, as sampling='auto' takes them on large trees)
    sampled = Dataset(np.tile(X, (3, 1)), np.tile(y, 3))
    for leaf_value_rows in ("sample", "all"):
        train({"objective": "binary", "num_leaves": 64, "verbosity": -1, "sampling": "bernoulli", "sample_rate": 0.2,
               "leaf_value_rows": leaf_value_rows}, sampled, 2)
    # a sample of _PARALLEL_TRANSPOSE_VALUES values or more is transposed by a compiled kernel
    # (smaller ones by numpy), so the data above do not compile it
    for dtype in (np.float32, np.float64):
        BinMapper().fit(np.zeros((_PARALLEL_TRANSPOSE_VALUES // 8, 8), dtype))
    return time.perf_counter() - start
