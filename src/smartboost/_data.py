"""Input dispatch: user data to the arrays the library works on, validated once, here.

One ``_from_*`` converter per input type (numpy, pandas, scipy sparse, sequences). Feature
matrices become float32/float64 numpy arrays (any memory order) or float CSC matrices, in a
:class:`Features` record; labels, weights and scores become float64 vectors. Every error names
the argument and, where it applies, the first offending row or column.

A DataFrame's category, string and object columns (and arrow dictionary columns) are categorical
by their type. A column of text categories is stored as the index of each row's category in the
column's own sorted list of categories (its vocabulary; NaN for a missing value), which the bin
mapper maps to its bins by value (``binning.BinMapper``), so that two frames with the same
categories in another order, or other categories, are read alike. A category column whose
categories are integers holds those integers (category codes are never read).

Dates and durations (datetime64, timedelta64 and pandas period columns, and object arrays or
columns holding dates, times or durations) are refused, as LightGBM refuses them: read as
numbers their unit decides the splits' scale, read as text categories each date is a category
of its own, and either way the user had better choose the encoding.
"""

from __future__ import annotations

import datetime
import math
import os
import sys
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import DataError

if TYPE_CHECKING:
    import scipy.sparse as sp

    Matrix = np.ndarray | sp.csc_matrix


def issparse(data: Any) -> bool:
    """Whether ``data`` is a scipy sparse matrix or array. scipy.sparse, slow to import, is not
    imported for it: a sparse matrix exists only once it has been."""
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(data)


@dataclass
class Features:
    """A converted feature matrix.

    Attributes
    ----------
    matrix : ndarray of float32/float64 or scipy.sparse.csc_matrix, shape (n_rows, n_features)
    names : list of str or None
        Column names of a DataFrame.
    vocabularies : dict of int to ndarray of str
        The text columns: each one's sorted distinct categories; the column holds indexes into
        it (NaN: missing).
    from_dtype : ndarray of bool, shape (n_features,)
        The columns whose type makes them categorical (a DataFrame's category, string, object
        and arrow dictionary columns).
    """

    matrix: Matrix
    names: list[str] | None = None
    vocabularies: dict[int, np.ndarray] = field(default_factory=dict)
    from_dtype: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.from_dtype is None:
            self.from_dtype = np.zeros(self.matrix.shape[1] if self.matrix.ndim == 2 else 0, np.bool_)

    def column_name(self, j: int) -> str:
        """How errors name column ``j``: its name, or its index."""
        return repr(self.names[j]) if self.names else str(j)


def _is_dataframe(data: Any) -> bool:
    return hasattr(data, "columns") and hasattr(data, "dtypes") and hasattr(data, "to_numpy")


def _integer_values(values: np.ndarray) -> np.ndarray | None:
    """``values`` (categories) as float64 when every one is an integer number, else None.

    Booleans are the integers 0 and 1, as in a bool column: an object column of booleans with
    missing values and a bool column of the same flags are one feature's categories."""
    if values.dtype.kind in "iub":
        return values.astype(np.float64)
    if values.dtype.kind == "f":
        return values.astype(np.float64) if np.all(np.isfinite(values) & (values == np.round(values))) else None
    if values.size and all(isinstance(v, (int, np.integer, np.bool_)) for v in values):
        return values.astype(np.float64)
    return None


def _text_column(values: np.ndarray, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """A categorical column from its distinct ``values`` and each row's index into them
    (``codes``, -1: missing): the integers themselves, or indexes into the sorted text of the
    values and that vocabulary."""
    column = np.full(codes.shape, np.nan)
    present = codes >= 0  # indexed by these only: a column of missing values may have no values at all
    numbers = _integer_values(values)
    if numbers is not None:
        column[present] = numbers[codes[present]]
        return column, None
    text = np.array([str(v) for v in values], dtype=object)
    vocabulary, position = np.unique(text, return_inverse=True)
    column[present] = position[codes[present]]
    return column, vocabulary


_TIME_ADVICE = ("convert them first: to numbers (e.g. days since a date, or the year and month as columns of "
                "their own) or to text categories")


def _time_entry(values: np.ndarray) -> int | None:
    """The flat index (C order) of the first date, time or duration among the entries of an
    object array (datetime's date, time, datetime and timedelta, numpy's datetime64 and
    timedelta64, pandas' Timestamp, Timedelta and Period), or None when it holds none.

    Such entries would be read as numbers in their unit (numpy's, by ``astype``) or as one text
    category per date: one pass over the entries' types finds them, the index only on a hit."""
    kinds: tuple[type, ...] = (datetime.date, datetime.time, datetime.timedelta, np.datetime64, np.timedelta64)
    pandas = sys.modules.get("pandas")  # a pandas Period exists only once pandas is imported
    if pandas is not None:
        kinds += (pandas.Period,)
    if not any(issubclass(kind, kinds) for kind in set(map(type, values.flat))):
        return None
    return next(i for i, value in enumerate(values.flat) if isinstance(value, kinds))


def _from_dataframe(data: Any) -> Features:
    names = [str(c) for c in data.columns]
    numeric = np.array([getattr(dt, "kind", "O") in "biuf" for dt in data.dtypes], np.bool_)
    if numeric.all():
        return Features(data.to_numpy(dtype=np.float64, na_value=np.nan), names)
    import pandas as pd

    for j, dtype in enumerate(data.dtypes):  # not categories: they would be, one per date or number
        if getattr(dtype, "kind", "O") in "mM" or isinstance(dtype, pd.PeriodDtype):
            raise DataError(f"column {names[j]!r} holds dates or durations (dtype {dtype}); {_TIME_ADVICE}")
        if getattr(dtype, "kind", "O") == "c":
            raise DataError(f"column {names[j]!r} is complex (dtype {dtype}); only real numbers are supported")

    matrix = np.empty((len(data), len(names)))
    vocabularies = {}
    for j in range(len(names)):
        column = data.iloc[:, j]
        if numeric[j]:
            matrix[:, j] = column.to_numpy(dtype=np.float64, na_value=np.nan)
            continue
        if isinstance(column.dtype, pd.CategoricalDtype):  # mapped by value: codes depend on the frame
            values, codes = column.cat.categories.to_numpy(), column.cat.codes.to_numpy()
        else:
            codes, values = pd.factorize(column)
            values = np.asarray(values, dtype=object)
            first = _time_entry(values)  # of the distinct values only: rows repeat them
            if first is not None:
                raise DataError(f"column {names[j]!r} holds dates or durations ({type(values[first]).__name__} "
                                f"values in a column of dtype {column.dtype}); {_TIME_ADVICE}")
        matrix[:, j], vocabulary = _text_column(values, codes)
        if vocabulary is not None:
            vocabularies[j] = vocabulary
    return Features(matrix, names, vocabularies, ~numeric)


def refuse_times(data: Any, name: str) -> None:
    """Refuse a NumPy array, or a list of rows, holding a date, time or duration (a datetime64 or
    timedelta64 dtype, or an entry of an object array, :func:`_time_entry`): numpy's
    ``astype(float)``, and scikit-learn's validation, read numpy's as counts of their unit.
    Anything else passes.

    Raises
    ------
    DataError
        Naming the column (of a matrix) and row of the first one, and its type.
    """
    if isinstance(data, (list, tuple)):
        try:
            data = np.asarray(data)
        except (TypeError, ValueError):  # ragged: the reader's own error names it
            return
    if not isinstance(data, np.ndarray):
        return
    if data.dtype.kind in "mM":  # astype would give counts of the dtype's unit
        raise DataError(f"{name} holds dates or durations (dtype {data.dtype}) in every column; {_TIME_ADVICE}")
    if data.dtype.kind != "O":
        return
    first = _time_entry(data)
    if first is not None:
        at = np.unravel_index(first, data.shape)
        where = f"column {at[1]} of {name}" if data.ndim == 2 else name
        raise DataError(f"{where} holds dates or durations ({type(data.flat[first]).__name__} at row {at[0]}); "
                        f"{_TIME_ADVICE}")


def _non_numeric(data: np.ndarray, name: str) -> DataError:
    """The error of an array whose values are not all numbers (text)."""
    return DataError(f"{name} holds non-numeric values (dtype {data.dtype}); an array holds numbers only: give text "
                     "categories as columns of a DataFrame (category, string or object), or encode them as numbers")


def refuse_text(data: Any, name: str) -> None:
    """Refuse an array (or list) of text, and one holding dates or durations
    (:func:`refuse_times`), as :func:`to_features` does, before scikit-learn's validation reads
    it: its conversion fails with numpy's bare "could not convert string to float". Anything
    else passes (a value of another type, such as a dict, to scikit-learn's own TypeError).

    Raises
    ------
    DataError
        Naming the argument.
    """
    if isinstance(data, (list, tuple)):
        try:
            data = np.asarray(data)
        except (TypeError, ValueError):  # ragged: scikit-learn says so
            return
    refuse_times(data, name)
    if not (isinstance(data, np.ndarray) and data.dtype.kind in "OUS"):
        return
    try:
        data.astype(np.float64)
    except ValueError:
        raise _non_numeric(data, name) from None
    except TypeError:
        return


def _from_numpy(data: np.ndarray, name: str) -> np.ndarray:
    if data.dtype in (np.float32, np.float64):
        return data
    if data.dtype.kind in "biu":
        return data.astype(np.float64)
    if data.dtype.kind == "f":  # float16, longdouble
        return data.astype(np.float64)
    if data.dtype.kind == "c":
        raise DataError(f"{name} is complex; only real numbers are supported")
    refuse_times(data, name)
    try:
        return data.astype(np.float64)
    except (TypeError, ValueError):
        raise _non_numeric(data, name) from None


def _from_sparse(data: Any, name: str) -> sp.csc_matrix:
    import scipy.sparse as sp  # already imported: data is sparse

    csc = sp.csc_matrix(data)
    if csc.dtype not in (np.float32, np.float64):
        if csc.dtype.kind not in "biuf":
            raise DataError(f"{name} is a sparse matrix of non-numeric dtype {csc.dtype}")
        csc = csc.astype(np.float64)
    csc.sum_duplicates()
    csc.sort_indices()
    return csc


def to_features(data: Any, name: str = "X", allow_empty: bool = False) -> Features:
    """Convert a feature matrix.

    Parameters
    ----------
    data : array-like, pandas DataFrame or scipy sparse matrix, or Features
        Shape (n_rows, n_features); a :class:`Features` record is returned as it is.
    name : str
        Argument name used in error messages.
    allow_empty : bool
        Accept zero rows (prediction); training data needs rows.

    Returns
    -------
    Features
    """
    if isinstance(data, Features):
        return data
    features = None
    if data is None:
        raise DataError(f"{name} is None")
    if isinstance(data, (str, bytes, os.PathLike)):  # as a one-element text array: "non-numeric values"
        raise DataError(f"{name} is a {type(data).__name__}, not a feature matrix: give the data in memory (read a "
                        "file with e.g. pandas.read_csv or sklearn.datasets.load_svmlight_file; smartboost.Dataset "
                        "and the command line read files themselves)")
    if issparse(data):
        matrix: Matrix = _from_sparse(data, name)
    elif _is_dataframe(data):
        features = _from_dataframe(data)
        matrix = features.matrix
    else:
        try:
            array = np.asarray(data)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{name} cannot be read as a numeric matrix: {exc}") from None
        matrix = _from_numpy(array, name)
    if matrix.ndim != 2:
        hint = " (use X.reshape(-1, 1) for a single feature)" if matrix.ndim == 1 else ""
        raise DataError(f"{name} must be 2-dimensional, got shape {matrix.shape}{hint}")
    if matrix.shape[0] == 0 and not allow_empty:
        raise DataError(f"{name} has no rows")
    if matrix.shape[1] == 0:
        raise DataError(f"{name} has no features")
    return features or Features(matrix)


def default_names(names: list[str]) -> bool:
    """Whether ``names`` are the names features get without any (``Column_<i>``)."""
    return all(n == f"Column_{i}" for i, n in enumerate(names))


def check_column_names(names: list[str] | None, feature_names: list[str], owner: str) -> None:
    """Refuse a DataFrame whose column names are not the features' of ``owner`` (a model, or the
    reference of a Dataset): columns are read by position, so names in another order, or other
    names, would silently read each column as another feature. Features without names of their
    own (``Column_<i>``: trained on an array) take any names, but not their own in another order.

    Raises
    ------
    DataError
        Showing both lists of names.
    """
    if names is not None and names != feature_names and (
            not default_names(feature_names) or sorted(names) == sorted(feature_names)):
        raise DataError(f"data column names {names[:5]}... differ from the {owner} feature names "
                        f"{feature_names[:5]}...")


def concat_features(parts: list[Features]) -> Features:
    """Row blocks of one feature matrix (a Dask worker's partitions) as one :class:`Features`:
    each text column indexes the union of the blocks' vocabularies."""
    if len(parts) == 1:
        return parts[0]
    vocabularies = {}
    for j in sorted(set().union(*(part.vocabularies for part in parts))):
        vocabularies[j] = np.unique(np.concatenate([part.vocabularies.get(j, np.empty(0, object)) for part in parts]))
    blocks = []
    for part in parts:
        matrix = part.matrix
        if vocabularies:
            matrix = np.array(matrix, np.float64)
            for j, vocabulary in vocabularies.items():
                own = part.vocabularies.get(j)
                rows = ~np.isnan(matrix[:, j])
                if own is None:  # a block of numbers in a column of text: nothing to map them to
                    if rows.any():
                        raise DataError(f"column {part.column_name(j)} holds text in some partitions and numbers in "
                                        "others")
                    continue
                matrix[rows, j] = np.searchsorted(vocabulary, own)[matrix[rows, j].astype(np.int64)]
        blocks.append(matrix)
    if issparse(blocks[0]):
        import scipy.sparse as sp  # already imported: the blocks are sparse

        matrix = sp.vstack(blocks, format="csc")
    else:
        matrix = np.concatenate(blocks)
    return Features(matrix, parts[0].names, vocabularies, np.logical_or.reduce([part.from_dtype for part in parts]))


def dense_rows(matrix: Matrix, start: int, stop: int) -> np.ndarray:
    """Rows ``start:stop`` of a converted matrix as a C-ordered float32/float64 array."""
    if issparse(matrix):
        return np.ascontiguousarray(matrix[start:stop].toarray())
    return np.ascontiguousarray(matrix[start:stop])


def to_vector(values: Any, n_rows: int, name: str, *, nonnegative: bool = False, columns: bool = False
              ) -> np.ndarray:
    """Convert a per-row vector (label, weight, init_score) and check it.

    Parameters
    ----------
    values : array-like
        Length ``n_rows``; a column vector of shape (n_rows, 1) is accepted.
    n_rows : int
        Rows of the data it belongs to.
    name : str
        Argument name used in error messages.
    nonnegative : bool
        Reject negative entries (weights).
    columns : bool
        Also accept shape (n_rows, k): a value per row and output (a multiclass init_score).

    Returns
    -------
    ndarray of float64, shape (n_rows,), or (n_rows, k) with ``columns``
    """
    if hasattr(values, "to_numpy"):
        values = values.to_numpy()
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be numeric") from None
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1 and not (columns and array.ndim == 2):
        raise DataError(f"{name} must be 1-dimensional{' or (rows, outputs)' if columns else ''}, got shape "
                        f"{array.shape}")
    if array.shape[0] != n_rows:
        raise DataError(f"{name} has {array.shape[0]} entries but the data has {n_rows} rows")
    bad = ~np.isfinite(array)
    if bad.any():
        at = np.unravel_index(int(np.argmax(bad)), array.shape)
        where = f"row {at[0]}" + (f", column {at[1]}" if array.ndim == 2 else "")
        raise DataError(f"{name} contains {array[at]} at {where}; it must be finite")
    if nonnegative:
        if (array < 0).any():
            row = int(np.argmax(array < 0))
            raise DataError(f"{name} contains a negative value ({array[row]}) at row {row}")
    return np.ascontiguousarray(array)


LEAST_LARGEST_WEIGHT = float(np.finfo(np.float64).tiny)
"""The least largest row weight training takes: the least normal float, 2.2e-308. Down to it the
weighted gradients keep their precision (a tree's fixed-point units follow them below the float
range), so weights scaled by one factor grow the same trees; subnormal weights have fewer bits."""


def check_largest_weight(largest: float, name: str = "weight") -> None:
    """Raise DataError when the largest row weight ``largest`` is positive but below
    :data:`LEAST_LARGEST_WEIGHT` (0 is the caller's "sums to zero" error)."""
    if 0.0 < largest < LEAST_LARGEST_WEIGHT:
        raise DataError(f"{name}: the largest weight is {largest:g}, below the least normal float "
                        f"({LEAST_LARGEST_WEIGHT:g}), where the weighted gradients lose their precision; rescale the "
                        "weights (a uniform factor leaves the trees as they are when min_sum_hessian_in_leaf, "
                        "lambda_l1, lambda_l2, min_gain_to_split and cat_l2 take it too)")


def _is_missing(value: Any) -> bool:
    """Whether one entry of an object array is a missing value: None, NaN, or pandas' NA or NaT
    (compared as ``value != value``, pandas' NA has no truth value)."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        type(value).__name__ in ("NAType", "NaTType")


def to_query_starts(group: Any, qid: Any, n_rows: int) -> np.ndarray | None:
    """Query boundaries from group sizes or per-row query ids.

    Parameters
    ----------
    group : array-like of int, optional
        Rows per query, in row order (what LETOR tools and LightGBM's ``.query`` files hold).
    qid : array-like, optional
        Query id of every row; rows of one query must be contiguous and ids non-decreasing.
    n_rows : int

    Returns
    -------
    ndarray of int64 or None
        ``starts`` with query ``q`` owning rows ``starts[q]:starts[q + 1]``; None without queries.
    """
    if group is not None and qid is not None:
        raise DataError("give group (query sizes) or qid (a query id per row), not both")
    if group is not None:
        sizes = np.asarray(group.to_numpy() if hasattr(group, "to_numpy") else group)
        if sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iuf" or (sizes != np.round(sizes)).any():
            raise DataError("group must be a non-empty 1-dimensional array of query sizes (integers)")
        if (sizes <= 0).any():
            q = int(np.argmax(sizes <= 0))
            raise DataError(f"group sizes must be positive; query {q} has {sizes[q]}")
        if sizes.sum() != n_rows:
            raise DataError(f"group sizes sum to {int(sizes.sum())} but the data has {n_rows} rows")
        return np.concatenate([[0], np.cumsum(sizes.astype(np.int64))])
    if qid is not None:
        ids = np.asarray(qid.to_numpy() if hasattr(qid, "to_numpy") else qid)
        if ids.ndim != 1 or ids.shape[0] != n_rows:
            raise DataError(f"qid must have one entry per row ({n_rows}), got shape {ids.shape}")
        if n_rows == 0:
            raise DataError("qid given for empty data")
        # a missing id is no query: NaN != NaN would make each such row a query of its own
        missing = np.isnan(ids) if ids.dtype.kind == "f" else np.array(
            [_is_missing(v) for v in ids.tolist()], np.bool_) if ids.dtype.kind == "O" else None
        if missing is not None and missing.any():
            row = int(np.argmax(missing))
            raise DataError(f"qid has a missing value ({ids[row]}) at row {row}; every row needs a query id")
        if ids.dtype.kind in "iuf" and (np.diff(ids) < 0).any():
            row = int(np.argmax(np.diff(ids) < 0)) + 1
            raise DataError(f"qid must be sorted (rows of a query contiguous, ids non-decreasing); row {row} has "
                            f"{ids[row]} after {ids[row - 1]}")
        change = np.flatnonzero(ids[1:] != ids[:-1]) + 1
        starts = np.concatenate([[0], change, [n_rows]]).astype(np.int64)
        try:  # by hashing: ids of mixed types (an object array) need not be orderable
            distinct = len(set(ids[starts[:-1]].tolist()))
        except TypeError:
            row = next(i for i, v in enumerate(ids.tolist()) if not isinstance(v, Hashable))
            raise DataError(f"qid must hold numbers or texts, got {type(ids[row]).__name__} at row {row}") from None
        if distinct != starts.size - 1:
            raise DataError("qid must keep the rows of each query contiguous; a query id appears in two places")
        return starts
    return None
