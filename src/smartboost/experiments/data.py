"""The train/test arrays an experiment runs on: a public set of the registry, or a generated one.

:func:`load_public` reads a set of :data:`smartboost.datasets.REGISTRY` (downloaded into the
cache when missing), checks that its task suits the experiment, holds out a seeded quarter of
the rows (of the queries, for ranking) as the test set when the set has no test split, and can
keep only the first training rows for quick runs. The experiments add their own generated set
under the name ``"synthetic"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .. import datasets
from ..datafile import DataFile
from ..errors import DataError

__all__ = ["ExperimentData", "load_public", "SYNTHETIC"]

SYNTHETIC = "synthetic"
"""The dataset name under which every experiment offers its own generated set."""


@dataclass
class ExperimentData:
    """Training and test arrays, with query ids for ranking sets; ``task`` as in the registry."""

    name: str
    task: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    qid: np.ndarray | None = None
    qid_test: np.ndarray | None = None
    note: str = ""

    def describe(self) -> str:
        """``name: N train / M test rows x F features`` (with queries for ranking sets)."""
        def size(y: np.ndarray, qid: np.ndarray | None) -> str:
            return f"{len(y):,}" + ("" if qid is None else f" rows / {np.unique(qid).size:,} queries")

        text = (f"{self.name}: {size(self.y, self.qid)} train / {size(self.y_test, self.qid_test)} test"
                f"{' rows' if self.qid is None else ''} x {self.X.shape[1]} features")
        return f"{text} ({self.note})" if self.note else text


def _dense(X) -> np.ndarray:
    """Dense float32 (what the benchmarks train on)."""
    X = X.toarray() if hasattr(X, "toarray") else X
    return np.ascontiguousarray(X, np.float32)


def _holdout(data: DataFile, seed: int, fraction: float = 0.25) -> tuple[DataFile, DataFile]:
    """A seeded split holding out ``fraction`` of the rows, or of the queries when there are
    query ids (each row or query independently)."""
    rng = np.random.default_rng(seed)
    if data.qid is None:
        test = rng.random(len(data.label)) < fraction
    else:
        ids = np.unique(data.qid)
        test = np.isin(data.qid, ids[rng.random(ids.size) < fraction])
    if test.all() or not test.any():
        raise DataError(f"too few rows ({len(data.label)}) to hold out a test set")

    def part(mask: np.ndarray) -> DataFile:
        return DataFile(data.X[mask], data.label[mask], None if data.qid is None else data.qid[mask], None)

    return part(~test), part(test)


def _first_rows(data: DataFile, rows: int) -> DataFile:
    """The first ``rows`` rows, ending at a query boundary when there are query ids."""
    if data.qid is not None:
        starts = np.flatnonzero(np.r_[True, data.qid[1:] != data.qid[:-1]])
        ends = np.r_[starts[1:], len(data.qid)]
        rows = int(ends[max(np.searchsorted(ends, rows, side="right") - 1, 0)])  # at least one query
    return DataFile(data.X[:rows], data.label[:rows], None if data.qid is None else data.qid[:rows], None)


def load_public(name: str, tasks: Sequence[str], rows: int | None = None, seed: int = 0,
                download: bool = True, holdout: float | None = None) -> ExperimentData:
    """A registry dataset as train/test arrays.

    Parameters
    ----------
    name : str
        A key of :data:`smartboost.datasets.REGISTRY`.
    tasks : sequence of str
        The tasks the experiment handles (``"binary"``, ``"regression"``, ``"ranking"``).
    rows : int, optional
        Keep only the first ``rows`` training rows (whole queries for ranking sets).
    seed : int
        Seed of the held-out split of sets without a test split.
    download : bool
        Download files missing from the cache.
    holdout : float, optional
        Hold out this seeded fraction of the training file as the test set, whatever test
        split the set has (the RGBM paper's random 80/20 split: 0.2).

    Raises
    ------
    DataError
        The set's task is not one of ``tasks``.
    DatasetNotFoundError
        Unknown name, or files neither cached nor downloadable.
    """
    dataset = datasets.get(name)
    if dataset.task not in tasks:
        raise DataError(f"{name} is a {dataset.task} dataset; this experiment needs {' or '.join(tasks)} data")
    splits = datasets.load_splits(name, download)
    train, test, note = splits["train"], splits.get("test"), ""
    unit = "queries" if train.qid is not None else "rows"
    if holdout is not None:
        train, test = _holdout(train, seed, holdout)
        note = f"a seeded {holdout:.0%} of the training file's {unit} held out"
    elif test is None:
        train, test = _holdout(train, seed)
        note = f"no test split: a seeded quarter of the {unit} held out"
    if rows is not None and rows < len(train.label):
        train = _first_rows(train, rows)
        note = ", ".join(filter(None, [note, f"first {len(train.label):,} training rows"]))
    return ExperimentData(name, dataset.task, _dense(train.X), train.label, _dense(test.X), test.label,
                          train.qid, test.qid, note)
