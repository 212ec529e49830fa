"""Reading data files: svmlight/LETOR, CSV/TSV and parquet, for the command line and the loaders.

:func:`read_data` returns features, labels and (LETOR) query ids. The format follows the file
name unless given: ``.svm``, ``.svmlight``, ``.libsvm``, ``.letor`` and names without a known
extension are svmlight (LIBSVM's own sets have none: ``a9a``, ``a9a.t``); ``.csv`` and ``.tsv``
are delimited text; ``.parquet`` needs pandas with pyarrow. A trailing ``.gz`` is read through
gzip. svmlight/LETOR text is parsed by a compiled parser (``_kernels/svmlight.py``) that gives
scikit-learn's ``load_svmlight_file`` values exactly, several times faster (docs/benchmarks.md);
anything outside its grammar goes to scikit-learn's loader itself. CSV/TSV go to numpy's text
reader, parquet to pandas.

Queries: svmlight ``qid:`` fields, or a LightGBM-style side file next to the data (``<name>.query``,
one query size per line; ``rank.train.gz`` pairs with ``rank.train.query.gz``), become
``DataFile.qid``.
"""

from __future__ import annotations

import gzip
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np
import scipy.sparse as sp

from ._kernels.svmlight import OK, parse_svmlight
from .errors import DataError

__all__ = ["DataFile", "FORMATS", "read_data"]

FORMATS = ("svmlight", "csv", "tsv", "parquet")
_EXTENSIONS = {".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight", ".letor": "svmlight",
               ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}


@dataclass
class DataFile:
    """The content of a data file.

    Attributes
    ----------
    X : ndarray of float64 or scipy.sparse.csr_matrix, shape (n_rows, n_features)
    label : ndarray of float64 or None
        None when the file has no label column (``label_column=None``).
    qid : ndarray of int64 or None
        Query id of every row (svmlight ``qid:`` fields or a ``.query`` side file), None when
        the file has neither.
    feature_names : list of str or None
        Column names of a CSV/TSV header or a parquet file.
    """

    X: np.ndarray | sp.csr_matrix
    label: np.ndarray | None
    qid: np.ndarray | None
    feature_names: list[str] | None


def guess_format(path: str | Path) -> str:
    """The format implied by a file name (``.gz`` looked through)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _EXTENSIONS.get(Path(name).suffix, "svmlight")


def _read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.name.lower().endswith(".gz") else data


def _open_bytes(path: Path) -> IO[bytes]:
    return io.BytesIO(_read_bytes(path))


_TOKEN = re.compile(rb"[^\s#]*")
_BLOCK_BYTES = 1 << 16


def read_svmlight(source: bytes | IO[bytes], n_features: int | None = None) -> DataFile:
    """An svmlight/LIBSVM/LETOR text (``label [qid:q] index:value ... [# comment]``), as scikit-learn reads it.

    Indices are 1-based unless one of them is 0 (scikit-learn's ``zero_based="auto"``). Query
    ids are kept when every row has one.

    Parameters
    ----------
    source : bytes or binary file object
        The file's content.
    n_features : int, optional
        Number of features (default: the largest index).
    """
    data = bytes(source) if isinstance(source, (bytes, bytearray, memoryview)) else source.read()
    status, label, qid, has_qid, indptr, indices, values, slow, n_slow = parse_svmlight(
        np.frombuffer(data, np.uint8), max(1, min(4096, len(data) // _BLOCK_BYTES)))
    if status != OK or 0 < has_qid.sum() < has_qid.size:
        return _read_svmlight_sklearn(data, n_features)
    if n_slow:  # values off the fast path: Python's float(), as scikit-learn
        for k in np.flatnonzero(slow):
            start = int(values[k])
            token = data[start:_TOKEN.match(data, start).end()]
            try:
                values[k] = float(token)
            except ValueError:
                raise DataError(f"not a valid svmlight file: could not convert {token!r} to a number") from None
    if indices.size and indices.min() > 0:
        indices -= 1
    n_features = _check_n_features(n_features, int(indices.max()) + 1 if indices.size else 1)
    X = sp.csr_matrix((values, indices, indptr), shape=(label.size, n_features))
    return DataFile(X, label, qid if label.size and has_qid.all() else None, None)


def _check_n_features(n_features: int | None, found: int) -> int:
    if n_features is None:
        return found
    if n_features < found:
        raise DataError(f"not a valid svmlight file: n_features was set to {n_features}, but the file contains "
                        f"{found} features")
    return n_features


def _read_svmlight_sklearn(data: bytes, n_features: int | None) -> DataFile:
    """scikit-learn's ``load_svmlight_file``: the reference, and the reader of what the fast parser leaves."""
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        raise ImportError("reading this svmlight file needs scikit-learn: pip install 'smartboost[sklearn]'") from None
    try:
        X, y, qid = load_svmlight_file(io.BytesIO(data), n_features=n_features, query_id=True)
    except ValueError as exc:
        raise DataError(f"not a valid svmlight file: {exc}") from None
    if 0 < qid.size < y.size:
        raise DataError("not a valid svmlight file: some rows have a qid and others not")
    return DataFile(sp.csr_matrix(X), y.astype(np.float64), qid.astype(np.int64) if qid.size else None, None)


def _label_index(label_column: int | str | None, names: list[str] | None, n_columns: int) -> int | None:
    if label_column is None:
        return None
    if isinstance(label_column, str) and label_column.startswith("name:"):
        name = label_column[5:]
        if names is None or name not in names:
            raise DataError(f"label column {name!r} is not in the file's header {names[:10] if names else None}")
        return names.index(name)
    index = int(label_column)
    if not -n_columns <= index < n_columns:
        raise DataError(f"label column {index} is outside the file's {n_columns} columns")
    return index % n_columns


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return field == ""
    return True


def read_delimited(source: IO[bytes], delimiter: str, label_column: int | str | None = 0) -> DataFile:
    """A CSV/TSV file of numbers; a first line that is not numeric is a header.

    Empty fields and ``nan`` are missing values.
    """
    text = io.TextIOWrapper(source, encoding="utf-8")
    first = text.readline()
    if not first.strip():
        raise DataError("the file is empty")
    fields = [f.strip() for f in first.rstrip("\r\n").split(delimiter)]
    names = None if all(_is_number(f) for f in fields) else fields
    lines = text.read().splitlines()
    if names is None:
        lines.insert(0, first.rstrip("\r\n"))
    try:
        table = np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, ndmin=2)
    except ValueError:  # numpy's fast reader refuses empty fields; the slow one reads them as NaN
        try:
            table = np.genfromtxt(lines, delimiter=delimiter, dtype=np.float64, ndmin=2, invalid_raise=True)
        except ValueError as exc:
            raise DataError(f"cannot read the table: {exc}") from None
    if table.size == 0:
        raise DataError("the file has no data rows")
    label_index = _label_index(label_column, names, table.shape[1])
    if label_index is None:
        return DataFile(table, None, None, names)
    keep = [j for j in range(table.shape[1]) if j != label_index]
    return DataFile(table[:, keep], table[:, label_index],
                    None, [names[j] for j in keep] if names else None)


def read_parquet(path: Path, label_column: int | str | None = 0) -> DataFile:
    """A parquet file (needs pandas with pyarrow); every column numeric."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("reading parquet needs pandas and pyarrow: pip install pandas pyarrow") from None
    frame = pd.read_parquet(path)
    names = [str(c) for c in frame.columns]
    label_index = _label_index(label_column, names, len(names))
    if label_index is None:
        return DataFile(frame.to_numpy(np.float64, na_value=np.nan), None, None, names)
    label = frame.iloc[:, label_index].to_numpy(np.float64)
    features = frame.drop(columns=frame.columns[label_index])
    return DataFile(features.to_numpy(np.float64, na_value=np.nan), label, None,
                    names[:label_index] + names[label_index + 1:])


def query_file(path: Path) -> Path | None:
    """The LightGBM-style ``.query`` side file of a data file, if there is one."""
    gz = path.name.endswith(".gz")
    stem = path.name[:-3] if gz else path.name
    for candidate in (f"{stem}.query.gz", f"{stem}.query"):
        if (path.parent / candidate).is_file():
            return path.parent / candidate
    return None


def read_query_sizes(path: str | Path) -> np.ndarray:
    """Query sizes from a ``.query`` file (one positive integer per line)."""
    path = Path(path)
    sizes = np.loadtxt(_open_bytes(path), dtype=np.int64, ndmin=1)
    if sizes.size == 0 or (sizes <= 0).any():
        raise DataError(f"{path}: query sizes must be positive integers, one per line")
    return sizes


def read_data(path: str | Path, format: str | None = None, label_column: int | str | None = 0,
              n_features: int | None = None) -> DataFile:
    """Read a data file.

    Parameters
    ----------
    path : str or Path
    format : {'svmlight', 'csv', 'tsv', 'parquet'}, optional
        Default: from the file name (:func:`guess_format`).
    label_column : int, 'name:<column>' or None
        CSV/TSV/parquet: the label column (default the first, LightGBM's convention); None when
        the file holds features only. svmlight files always start with the label.
    n_features : int, optional
        svmlight: the number of features (default: the largest index in the file), so that a
        test file lines up with its training file.

    Returns
    -------
    DataFile
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    format = format or guess_format(path)
    if format not in FORMATS:
        raise DataError(f"unknown data format {format!r}; known: {', '.join(FORMATS)}")
    try:
        if format == "parquet":
            data = read_parquet(path, label_column)
        elif format == "svmlight":
            data = read_svmlight(_read_bytes(path), n_features)
        else:
            data = read_delimited(_open_bytes(path), "," if format == "csv" else "\t", label_column)
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None
    side = query_file(path)
    if data.qid is None and side is not None:
        sizes = read_query_sizes(side)
        if sizes.sum() != data.X.shape[0]:
            raise DataError(f"{side}: query sizes sum to {sizes.sum()} but {path} has {data.X.shape[0]} rows")
        data.qid = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
    return data
