"""Prediction on dask collections: the model runs block by block where the partitions live."""

from __future__ import annotations

from typing import Any

import dask.array as da
import dask.dataframe as dd
import numpy as np

from ..booster import Booster
from ..errors import DataError


def predict(booster: Booster, X: Any, raw_score: bool = False, num_iteration: int | None = None,
            start_iteration: int = 0) -> Any:
    """Predict a dask collection block by block, where its partitions live.

    Parameters
    ----------
    booster : Booster
    X : dask array or dask DataFrame
    raw_score, num_iteration, start_iteration
        As for :meth:`Booster.predict` (checked here, before any block is computed).

    Returns
    -------
    dask array (from an array) or dask Series/DataFrame (from a DataFrame): one value per row,
    or one column per class for a multiclass model.
    """
    n_classes = booster.num_model_per_iteration()
    booster._tree_slice(start_iteration, num_iteration)  # a bad range fails here, not in every block
    iterations = (raw_score, start_iteration, num_iteration)
    if isinstance(X, da.Array):
        if X.ndim != 2:  # map_blocks below reads the column chunks
            hint = " (use X.reshape(-1, 1) for a single feature)" if X.ndim == 1 else ""
            raise DataError(f"X must be 2-dimensional, got shape {X.shape}{hint}")
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: X.shape[1]})
        if n_classes == 1:
            return X.map_blocks(_predict_block, booster, *iterations, drop_axis=1, dtype=np.float64)
        return X.map_blocks(_predict_block, booster, *iterations, chunks=(X.chunks[0], (n_classes,)),
                            dtype=np.float64)
    if isinstance(X, dd.DataFrame):
        import pandas as pd
        meta = pd.Series(dtype=np.float64) if n_classes == 1 else pd.DataFrame(
            {k: pd.Series(dtype=np.float64) for k in range(n_classes)})
        return X.map_partitions(_predict_frame, booster, *iterations, meta=meta)
    raise DataError(f"X must be a dask array or a dask DataFrame, got {type(X).__name__}")


def _predict_block(block: np.ndarray, booster: Booster, raw_score: bool, start_iteration: int,
                   num_iteration: int | None) -> np.ndarray:
    return booster.predict(block, raw_score=raw_score, start_iteration=start_iteration, num_iteration=num_iteration)


def _predict_frame(frame: Any, booster: Booster, raw_score: bool, start_iteration: int,
                   num_iteration: int | None) -> Any:
    import pandas as pd
    out = booster.predict(frame, raw_score=raw_score, start_iteration=start_iteration, num_iteration=num_iteration)
    return pd.Series(out, index=frame.index) if out.ndim == 1 else pd.DataFrame(out, index=frame.index)
