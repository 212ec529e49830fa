"""Prediction on dask collections: the model runs block by block where the partitions live."""

from __future__ import annotations

from typing import Any

import dask.array as da
import dask.dataframe as dd
import numpy as np

from ..booster import Booster
from ..errors import DataError


def predict(booster: Booster, X: Any, raw_score: bool = False, num_iteration: int | None = None,
            start_iteration: int = 0, pred_leaf: bool = False, pred_contrib: bool = False) -> Any:
    """Predict a dask collection block by block, where its partitions live.

    Parameters
    ----------
    booster : Booster
    X : dask array or dask DataFrame
    raw_score, num_iteration, start_iteration, pred_leaf, pred_contrib
        As for :meth:`Booster.predict` (checked here, on no rows, before any block is computed).

    Returns
    -------
    dask array (from an array) or dask Series/DataFrame (from a DataFrame), partitioned like
    ``X``: what :meth:`Booster.predict` gives for each block, one value per row or, for a
    multiclass model, leaves or contributions, one column per class, tree or contribution.
    """
    if isinstance(X, da.Array) and X.ndim != 2:  # map_blocks below reads the column chunks
        hint = " (use X.reshape(-1, 1) for a single feature)" if X.ndim == 1 else ""
        raise DataError(f"X must be 2-dimensional, got shape {X.shape}{hint}")
    if not isinstance(X, (da.Array, dd.DataFrame)):
        raise DataError(f"X must be a dask array or a dask DataFrame, got {type(X).__name__}")
    options = {"raw_score": raw_score, "start_iteration": start_iteration, "num_iteration": num_iteration,
               "pred_leaf": pred_leaf, "pred_contrib": pred_contrib}
    # the arguments checked, and the output's columns and type read, on no rows of X's own type
    empty = X._meta if isinstance(X, dd.DataFrame) else np.empty((0, X.shape[1]), X.dtype)
    shape = booster.predict(empty, **options)
    if isinstance(X, da.Array):
        if len(X.chunks[1]) > 1:
            X = X.rechunk({1: X.shape[1]})
        if shape.ndim == 1:
            return X.map_blocks(_predict_block, booster, options, drop_axis=1, dtype=shape.dtype)
        return X.map_blocks(_predict_block, booster, options, chunks=(X.chunks[0], (shape.shape[1],)),
                            dtype=shape.dtype)
    return X.map_partitions(_predict_frame, booster, options, meta=_frame(shape, X._meta.index))


def _predict_block(block: np.ndarray, booster: Booster, options: dict[str, Any]) -> np.ndarray:
    return booster.predict(block, **options)


def _frame(out: np.ndarray, index: Any) -> Any:
    """``out`` as a pandas Series (one value per row) or DataFrame (columns 0, 1, ...) on ``index``."""
    import pandas as pd
    return pd.Series(out, index=index) if out.ndim == 1 else pd.DataFrame(out, index=index)


def _predict_frame(frame: Any, booster: Booster, options: dict[str, Any]) -> Any:
    return _frame(booster.predict(frame, **options), frame.index)
