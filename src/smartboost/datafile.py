"""Reading data files: svmlight/LETOR, CSV/TSV and parquet, for the command line and the loaders.

:func:`read_data` returns features, labels and (LETOR) query ids. The format follows the file
name unless given: ``.svm``, ``.svmlight``, ``.libsvm``, ``.letor`` and names without a known
extension are svmlight (LIBSVM's own sets have none: ``a9a``, ``a9a.t``); ``.csv`` and ``.tsv``
are delimited text; ``.parquet`` needs pandas with pyarrow. A trailing ``.gz`` is read through
gzip. svmlight/LETOR text is parsed by a compiled parser (``_kernels/svmlight.py``) that gives
scikit-learn's ``load_svmlight_file`` values exactly, several times faster (docs/benchmarks.md);
anything outside its grammar goes to scikit-learn's loader itself. CSV/TSV go to numpy's text
reader, parquet to pandas.

Reading is strict: what cannot be read exactly is a :class:`~smartboost.errors.DataError`
naming the file, the line (counted from 1, a header line included, as in a text editor) and,
for CSV/TSV, the column (counted from 1, with its header name), never a silent NaN or shift.
A truncated or corrupt ``.gz`` file and text that is not UTF-8 are errors too.

CSV/TSV
    Fields are separated by ``,`` (``.csv``) or a tab (``.tsv``) and may be quoted with ``"``;
    a quoted field ends at its closing quote (spaces may follow) and on its own line: text after
    the closing quote, or a quote open to the next line, is an error.
    A field is a number when Python's ``float()`` reads it (``3``, ``-2.5e-3``, ``inf``;
    ``nan`` in any case is a number: NaN), spaces around it allowed. A missing value is an
    empty field or a missing-value token: by default those of :data:`NA_VALUES` (``NA N/A n/a
    na NULL null None #N/A <NA>``, pandas' list less its ``nan`` spellings, which are numbers
    anyway); ``na_values`` replaces them (``--na_values`` on the command line, comma-separated),
    the empty field staying missing. Any other field (``0.5x``, ``?`` unless declared, a word)
    is an error. ``header="auto"`` (the default) takes the first line for a header when one of
    its fields is neither a number nor a missing value; ``True`` always, ``False`` never (a
    first line that is not numeric is then an error at line 1). A header's names are unique and
    not empty (``y,a,`` is an error, not a feature ''). Every row has as many fields as the
    first line (``1,2,`` under ``y,a`` is an error); blank lines are skipped.

svmlight/LETOR
    Indices are one-based or zero-based for a whole file: ``zero_based="auto"`` (the default)
    reads a file with an index 0 zero-based and any other one-based (scikit-learn's rule);
    ``True``/``False`` say it. The command line decides it once, from the training file, and
    stores it in the model (``Booster.data_format``), so validation, prediction and evaluation
    files are read the same way: an index 0 in a file of a one-based model, or an index beyond
    the model's features, is an error naming the line, never a shift of the columns.

Categorical columns
    A reader given ``text_columns`` (a function of the header's names, or None, and the number
    of columns, giving a boolean mask of the columns) keeps every field of those columns as text
    (a missing value as None): ``X`` is then an object array, which :func:`to_frame` makes a
    DataFrame of text and number columns.
    Text anywhere else is still an error naming its line and column. The command line allows it
    in the columns of ``--categorical_feature``, and reads a training file's such column whose
    every field is a number as numbers (:func:`text_numbers`): integer codes, as LightGBM reads
    them, matched by value ("2" and "2.0" alike, and a model trained on numbers in Python).

Columns for a model (:func:`select_columns`)
    A CSV/TSV file with a header, or a parquet file, is matched to a model's feature names by
    name: columns in any order, an error naming the missing features or the columns that are
    neither features nor the label. The label column, unless given: the one column that is not
    a feature (none: the file has no label). Without names (a file without header, or a model
    trained on one: ``Column_<i>``), columns are matched by position, the label first when there
    is one column more than the model's features.

Queries: svmlight ``qid:`` fields, or a LightGBM-style side file next to the data (``<name>.query``,
one query size per line; ``rank.train.gz`` pairs with ``rank.train.query.gz``), become
``DataFile.qid``. A file with both is read only when they give the same queries (the side file's
sizes are the runs of equal ``qid:`` fields); else it is an error.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import scipy.sparse as sp

from ._kernels.svmlight import OK, parse_svmlight
from .errors import DataError, ParameterError

__all__ = ["DataFile", "FORMATS", "NA_VALUES", "ReadOptions", "read_data", "read_for_model", "read_training",
           "select_columns", "text_numbers", "text_refs", "to_frame"]

FORMATS = ("svmlight", "csv", "tsv", "parquet")
_EXTENSIONS = {".svm": "svmlight", ".svmlight": "svmlight", ".libsvm": "svmlight", ".letor": "svmlight",
               ".csv": "csv", ".tsv": "tsv", ".parquet": "parquet"}

NA_VALUES = ("NA", "N/A", "n/a", "na", "NULL", "null", "None", "#N/A", "<NA>")
"""The default missing-value tokens of CSV/TSV files, besides the empty field."""

ZeroBased = bool | Literal["auto"]
Header = bool | Literal["auto"]
TextColumns = Callable[[list[str] | None, int], np.ndarray]
"""Which CSV/TSV/parquet columns may hold text: ``text_columns(header names or None, number of
columns)``, a boolean mask."""


@dataclass
class DataFile:
    """The content of a data file.

    Attributes
    ----------
    X : ndarray of float64 (of objects with text columns) or scipy.sparse.csr_matrix
        Shape (n_rows, n_features).
    label : ndarray of float64 or None
        None when the file has no label column (``label_column=None``).
    qid : ndarray of int64 or None
        Query id of every row (svmlight ``qid:`` fields or a ``.query`` side file), None when
        the file has neither.
    feature_names : list of str or None
        Column names of a CSV/TSV header or a parquet file.
    zero_based : bool or None
        svmlight: whether the indices were read zero-based; None for other formats.
    """

    X: np.ndarray | sp.csr_matrix
    label: np.ndarray | None
    qid: np.ndarray | None
    feature_names: list[str] | None
    zero_based: bool | None = None


def guess_format(path: str | Path) -> str:
    """The format implied by a file name (``.gz`` looked through)."""
    name = Path(path).name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return _EXTENSIONS.get(Path(name).suffix, "svmlight")


_CORRUPT = (EOFError, zlib.error, gzip.BadGzipFile)


def _content(source: bytes | IO[bytes]) -> bytes:
    """Every byte of ``source``; a truncated or corrupt compressed stream is a DataError."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    try:
        return source.read()
    except _CORRUPT as exc:
        raise DataError(f"truncated or corrupt compressed data ({exc})") from None


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as f:
        return _content(gzip.GzipFile(fileobj=f) if path.name.lower().endswith(".gz") else f)


def _line_at(data: bytes, offset: int) -> int:
    """The line number (from 1) of byte ``offset``."""
    return data.count(b"\n", 0, offset) + 1


# -- svmlight ------------------------------------------------------------------------------

_TOKEN = re.compile(rb"[^\s#]*")
_BLOCK_BYTES = 1 << 16


def read_svmlight(source: bytes | IO[bytes], n_features: int | None = None,
                  zero_based: ZeroBased = "auto") -> DataFile:
    """An svmlight/LIBSVM/LETOR text (``label [qid:q] index:value ... [# comment]``), as scikit-learn reads it.

    Query ids are kept when every row has one.

    Parameters
    ----------
    source : bytes or binary file object
        The file's content.
    n_features : int, optional
        Number of features (default: the largest index); a larger index is an error.
    zero_based : bool or 'auto'
        Whether index 0 is the first feature; 'auto': when some index is 0 (scikit-learn's
        rule). With False, an index 0 is an error.
    """
    # a byte-order mark (some Windows editors write one) is not part of the first label, as in CSV/TSV
    data = _content(source).removeprefix(b"\xef\xbb\xbf")
    status, label, qid, has_qid, indptr, indices, values, slow, n_slow = parse_svmlight(
        np.frombuffer(data, np.uint8), max(1, min(4096, len(data) // _BLOCK_BYTES)))
    if status != OK:
        label, qid, indptr, indices, values = _parse_svmlight_sklearn(data)
    else:
        if 0 < has_qid.sum() < has_qid.size:
            row = int(np.argmax(has_qid != has_qid[0]))
            raise DataError(f"not a valid svmlight file: line {_svmlight_line(data, row)} has "
                            f"{'a' if has_qid[row] else 'no'} qid, unlike line {_svmlight_line(data, 0)} (either "
                            "every row has a qid or none)")
        qid = qid if label.size and has_qid.all() else None
        for k in np.flatnonzero(slow) if n_slow else ():  # values off the fast path: float(), as scikit-learn
            start = int(values[k])
            token = data[start:_TOKEN.match(data, start).end()]
            try:
                values[k] = float(token)
            except ValueError:
                raise DataError(f"not a valid svmlight file: line {_line_at(data, start)}: could not convert "
                                f"{token!r} to a number") from None
    X, zero_based = _svmlight_matrix(data, label.size, indptr, indices, values, n_features, zero_based)
    return DataFile(X, label, qid, None, zero_based)


_SKLEARN_ERRORS = (ValueError, OverflowError)  # OverflowError: an index or qid beyond 64 bits


def _sklearn_bad_line(load_svmlight_file: Callable, data: bytes) -> int | None:
    """The number (from 1) of the line of ``data`` that scikit-learn's loader refuses, which
    its errors do not say; None when no line is refused alone (the error is between lines).

    Found by halving: the half that fails alone holds it. Each step reads the half of the
    previous one's lines, about twice the file in all, and only once an error is known.
    """
    # where each line starts, and where the text ends
    ends = np.r_[0, np.flatnonzero(np.frombuffer(data, np.uint8) == ord("\n")) + 1, len(data)]

    def fails(start: int, stop: int) -> bool:
        try:
            load_svmlight_file(io.BytesIO(data[ends[start]:ends[stop]]), zero_based=True, query_id=True)
        except _SKLEARN_ERRORS:
            return True
        return False

    start, stop = 0, len(ends) - 1
    while stop - start > 1:
        middle = (start + stop) // 2
        if fails(start, middle):
            stop = middle
        elif fails(middle, stop):
            start = middle
        else:
            return None
    return start + 1


def _parse_svmlight_sklearn(data: bytes) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's ``load_svmlight_file``: the reference, and the reader of what the fast parser leaves.

    Returns the labels, query ids and CSR arrays with the indices as written.
    """
    try:
        from sklearn.datasets import load_svmlight_file
    except ImportError:
        raise ImportError("reading this svmlight file needs scikit-learn: pip install 'smartboost[sklearn]'") from None
    try:
        X, y, qid = load_svmlight_file(io.BytesIO(data), zero_based=True, query_id=True)
    except _SKLEARN_ERRORS as exc:
        line = _sklearn_bad_line(load_svmlight_file, data)
        raise DataError(f"not a valid svmlight file: {f'line {line}: ' if line else ''}{exc}") from None
    if 0 < qid.size < y.size:
        raise DataError("not a valid svmlight file: some rows have a qid and others not")
    X = sp.csr_matrix(X)
    return (y.astype(np.float64), qid.astype(np.int64) if qid.size else None, X.indptr.astype(np.int64),
            X.indices.astype(np.int64), X.data)


def _svmlight_matrix(data: bytes, n_rows: int, indptr: np.ndarray, indices: np.ndarray, values: np.ndarray,
                     n_features: int | None, zero_based: ZeroBased) -> tuple[sp.csr_matrix, bool]:
    """The CSR matrix of indices as written, on the index base given or found, and that base."""
    if zero_based == "auto":
        zero_based = bool(indices.size) and indices.min() == 0
    elif not zero_based and indices.size and indices.min() == 0:
        raise DataError(f"line {_svmlight_line(data, _row_of(indptr, np.argmin(indices)))}: index 0, but this data's "
                        "indices are one-based (zero_based=False: a model trained on one-based svmlight data "
                        "reads every later file one-based)")
    if not zero_based:
        indices = indices - 1
    found = int(indices.max()) + 1 if indices.size else 1
    if n_features is None:
        n_features = found
    elif found > n_features:
        k = int(np.argmax(indices >= n_features))
        base = 0 if zero_based else 1
        raise DataError(f"line {_svmlight_line(data, _row_of(indptr, k))}: index {indices[k] + base} is beyond the "
                        f"{n_features} features expected ({'zero' if zero_based else 'one'}-based indices "
                        f"{base}..{n_features - 1 + base})")
    return sp.csr_matrix((values, indices, indptr), shape=(n_rows, n_features)), bool(zero_based)


def _row_of(indptr: np.ndarray, pair: int) -> int:
    """The row of the ``pair``-th ``index:value`` pair."""
    return int(np.searchsorted(indptr, pair, side="right")) - 1


def _svmlight_line(data: bytes, row: int) -> int:
    """The line number (from 1) of a row: lines without a token before their first ``#`` hold none."""
    return [number for number, line in enumerate(data.split(b"\n"), 1) if line.split(b"#", 1)[0].split()][row]


# -- CSV/TSV -------------------------------------------------------------------------------

def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")  # a byte-order mark is not part of the first field
    except UnicodeDecodeError as exc:
        byte = data[exc.start]
        raise DataError(f"line {_line_at(data, exc.start)}: not UTF-8 text (byte {byte:#04x})") from None


# A line of well-quoted fields: a quoted field ends at its closing quote (spaces may follow), an
# unquoted one holds no delimiter; the csv module, and numpy's reader, would instead glue text
# after a closing quote to the field ('"2"3' is 23) and join the lines of an unclosed quote.
_QUOTED_FIELD = {",": '"(?:[^"]|"")*"[ \t]*', "\t": '"(?:[^"]|"")*" *'}
_WELL_QUOTED = {delimiter: re.compile(f'(?:{quoted}|[^{delimiter}"][^{delimiter}]*|)'
                                      f'(?:{delimiter}(?:{quoted}|[^{delimiter}"][^{delimiter}]*|))*')
                for delimiter, quoted in _QUOTED_FIELD.items()}


def _check_quotes(line: str, number: int, delimiter: str, names: list[str] | None = None) -> None:
    """Refuse a line whose quotes the csv module would misread (see ``_WELL_QUOTED``), naming
    the line and the column of the first such field."""
    if '"' not in line or _WELL_QUOTED[delimiter].fullmatch(line):
        return
    quoted = re.compile(_QUOTED_FIELD[delimiter])
    position, column = 0, 0
    problem = "quotes the csv format does not allow"
    while position <= len(line):  # find the field, only once the line is known to be bad
        match = quoted.match(line, position) if line.startswith('"', position) else None
        end = line.find(delimiter, position) if match is None else match.end()
        if line.startswith('"', position) and match is None:
            problem = "a quote not closed on this line (a line break inside quotes is not read)"
            break
        if match is not None and end < len(line) and line[end] != delimiter:
            problem = f"text after its closing quote ({line[end:].split(delimiter, 1)[0]!r})"
            break
        position, column = (len(line) + 1 if end < 0 else end + 1), column + 1
    name = f" ({names[column]!r})" if names and column < len(names) else ""
    raise DataError(f"line {number}, column {column + 1}{name}: a field with {problem}")


def _fields(line: str, number: int, delimiter: str) -> list[str]:
    """The fields of one line, unquoted and stripped."""
    _check_quotes(line, number, delimiter)
    try:
        return [field.strip() for field in next(csv.reader([line], delimiter=delimiter))]
    except csv.Error as exc:
        raise DataError(f"line {number}: {exc}") from None


def _is_number(field: str) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _missing_tokens(na_values: Sequence[str] | None) -> frozenset[str]:
    """The missing-value tokens, the empty field included; a token that is a number is refused."""
    tokens = NA_VALUES if na_values is None else tuple(na_values)
    for token in tokens:
        if not isinstance(token, str) or _is_number(token) and not math.isnan(float(token)):
            raise ParameterError(f"na_values must be strings that are not numbers, got {token!r}")
    return frozenset(token.strip() for token in tokens) | {""}


def _describe_missing(missing: frozenset[str]) -> str:
    tokens = sorted(missing - {""})
    return f"an empty field{' or ' + ', '.join(tokens) if tokens else ''}"


def read_delimited(source: IO[bytes], delimiter: str, label_column: int | str | None = 0, header: Header = "auto",
                   na_values: Sequence[str] | None = None, text_columns: TextColumns | None = None) -> DataFile:
    """A CSV/TSV table of numbers and missing values (the rules: see the module's docstring).

    Parameters
    ----------
    source : binary file object
    delimiter : str
        ``","`` or ``"\\t"``.
    label_column : int, 'name:<column>' or None
        The label column (None: the file holds features only).
    header : bool or 'auto'
        Whether the first line is a header; 'auto': when one of its fields is neither a number
        nor a missing value.
    na_values : sequence of str, optional
        Missing-value tokens besides the empty field (default :data:`NA_VALUES`).
    text_columns : callable, optional
        The columns kept as text (see the module's docstring).
    """
    missing = _missing_tokens(na_values)
    # a lone \r ends a line too (old Mac files), as in text editors, so that line numbers agree with them
    content = _decode(_content(source)).replace("\r\n", "\n").replace("\r", "\n")
    lines = content.split("\n")
    if not lines[0].strip():
        raise DataError("line 1 is blank: the first line must be the header or the first row"
                        if any(line.strip() for line in lines) else "the file is empty")
    first = _fields(lines[0], 1, delimiter)
    if header == "auto":
        header = any(field not in missing and not _is_number(field) for field in first)
    names = _header_names(first) if header else None
    body = lines[1:] if header else lines
    if not any(line.strip() for line in body):
        raise DataError("the file has no data rows")
    text = _text_mask(text_columns, names, len(first))
    table = None
    if not text.any():
        try:
            table = np.loadtxt(body, delimiter=delimiter, quotechar='"', comments=None, dtype=np.float64, ndmin=2)
        except ValueError:  # a missing value, or a field that is not a number: the exact reader says which
            table = None
        else:  # numbers read, but numpy reads quotes as loosely as the csv module
            if '"' in content:  # one search of the text, not a call per line (0.4x loadtxt's own time)
                for number, line in enumerate(body, 2 if header else 1):
                    _check_quotes(line, number, delimiter, names)
    if table is None or table.shape[1] != len(first):
        table = _read_fields(body, 2 if header else 1, delimiter, names, len(first), missing, text)
    return _split_label(table, names, label_column)


def _text_mask(text_columns: TextColumns | None, names: list[str] | None, n_columns: int) -> np.ndarray:
    """Which of ``n_columns`` columns ``text_columns`` keeps as text."""
    if text_columns is None:
        return np.zeros(n_columns, np.bool_)
    return np.asarray(text_columns(names, n_columns), np.bool_)


def _read_fields(lines: list[str], first_line: int, delimiter: str, names: list[str] | None, n_columns: int,
                 missing: frozenset[str], text: np.ndarray) -> np.ndarray:
    """The table of ``lines`` (line ``first_line`` onwards), field by field.

    The exact reader behind numpy's: missing values become NaN, and the first ragged row or
    field that is neither a number nor a missing value is an error naming its line and column.
    The ``text`` columns keep their fields as text (None: missing); the table is then of objects.
    """
    if text.any():
        return _read_text_fields(lines, first_line, delimiter, names, n_columns, missing, text)
    as_nan = dict.fromkeys(missing, "nan")
    rows = []
    for line, fields in _csv_rows(lines, first_line, delimiter, names, n_columns):
        try:
            rows.append(list(map(float, [as_nan.get(field, field) for field in fields])))
        except ValueError:  # a missing-value token with spaces around it, or not a number at all
            rows.append([_value(field, line, j, names, missing) for j, field in enumerate(fields)])
    return np.array(rows, np.float64).reshape(len(rows), n_columns)


def _csv_rows(lines: list[str], first_line: int, delimiter: str, names: list[str] | None, n_columns: int):
    """``(line number, fields)`` of each non-empty CSV row; a ragged row or a CSV syntax error is
    a DataError naming its line."""
    reader = csv.reader(lines, delimiter=delimiter)
    start = 0  # the index in lines of the record's (first) line
    try:
        for fields in reader:
            line = first_line + start
            _check_quotes(lines[start], line, delimiter, names)  # so that each record is one line
            start = reader.line_num
            if not fields:
                continue
            if len(fields) != n_columns:
                raise DataError(f"line {line} has {len(fields)} fields, but line 1{' (the header)' if names else ''} "
                                f"has {n_columns}")
            yield line, fields
    except csv.Error as exc:
        raise DataError(f"line {first_line + reader.line_num - 1}: {exc}") from None


def _read_text_fields(lines: list[str], first_line: int, delimiter: str, names: list[str] | None, n_columns: int,
                      missing: frozenset[str], text: np.ndarray) -> np.ndarray:
    """:func:`_read_fields` with the ``text`` columns kept as text: an object table."""
    rows = [[(None if field.strip() in missing else field.strip()) if text[j]
             else _value(field, line, j, names, missing) for j, field in enumerate(fields)]
            for line, fields in _csv_rows(lines, first_line, delimiter, names, n_columns)]
    table = np.empty((len(rows), n_columns), object)
    for i, row in enumerate(rows):
        table[i] = row
    return table


def _value(field: str, line: int, column: int, names: list[str] | None, missing: frozenset[str]) -> float:
    token = field.strip()
    if token in missing:
        return math.nan
    try:
        return float(token)
    except ValueError:
        name = f" ({names[column]!r})" if names else ""
        raise DataError(f"line {line}, column {column + 1}{name}: {field!r} is not a number; a missing value is "
                        f"{_describe_missing(missing)} (na_values sets them); a column of text categories is named "
                        "in categorical_feature") from None


def _header_names(fields: list[str]) -> list[str]:
    """The column names of a header line; an empty one (``y,a,``: a trailing delimiter) would
    name a feature '' of a column of missing values, and is an error naming its column."""
    if "" in fields:
        j = fields.index("")
        raise DataError(f"line 1 (the header), column {j + 1}: an empty column name"
                        + (" (the line ends with a delimiter)" if j == len(fields) - 1 else "")
                        + "; every column needs a name")
    return _unique(fields)


def _unique(names: list[str]) -> list[str]:
    """Column names, each once (columns are matched to features by name)."""
    seen: dict[str, int] = {}
    for j, name in enumerate(names):
        if name in seen:
            raise DataError(f"column name {name!r} appears twice (columns {seen[name] + 1} and {j + 1})")
        seen[name] = j
    return names


def label_column_index(label_column: int | str | None, names: list[str] | None, n_columns: int) -> int | None:
    if label_column is None:
        return None
    if isinstance(label_column, str) and label_column.startswith("name:"):
        name = label_column[5:]
        if names is None:
            raise DataError(f"label column {name!r}: the file has no header")
        if name not in names:
            raise DataError(f"label column {name!r} is not in the file's header ({_names(names)})")
        return names.index(name)
    index = int(label_column)
    if not -n_columns <= index < n_columns:
        raise DataError(f"label column {index} is outside the file's {n_columns} columns")
    return index % n_columns


def _split_label(table: np.ndarray, names: list[str] | None, label_column: int | str | None) -> DataFile:
    """Features and label of a table of every column."""
    label_index = label_column_index(label_column, names, table.shape[1])
    if label_index is None:
        return DataFile(table, None, None, names)
    keep = [j for j in range(table.shape[1]) if j != label_index]
    return DataFile(table[:, keep], _label_values(table[:, label_index]), None,
                    [names[j] for j in keep] if names else None)


def _label_values(column: np.ndarray) -> np.ndarray:
    """A label column as float64 (one of an object table holds numbers: it is not a text column)."""
    if column.dtype == object and any(isinstance(v, str) for v in column):
        raise DataError("the label column holds text; it cannot be a categorical column")
    return column.astype(np.float64)


# -- parquet -------------------------------------------------------------------------------

def read_parquet(path: Path, label_column: int | str | None = 0, text_columns: TextColumns | None = None) -> DataFile:
    """A parquet file (needs pandas with pyarrow); every column numeric (nulls are missing
    values), but the ``text_columns``, whose values are kept as text."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("reading parquet needs pandas and pyarrow: pip install pandas pyarrow") from None
    try:
        frame = pd.read_parquet(path)
    except ValueError as exc:  # pyarrow's ArrowInvalid: not a parquet file, or a damaged one
        raise DataError(f"cannot read it as parquet: {exc}") from None
    names = _unique([str(c) for c in frame.columns])
    text = _text_mask(text_columns, names, len(names))
    columns = []
    for j, name in enumerate(names):
        if text[j]:
            values = frame.iloc[:, j].astype(object).to_numpy()
            columns.append(np.array([None if pd.isna(v) else str(v) for v in values], object))
            continue
        try:
            columns.append(frame.iloc[:, j].to_numpy(np.float64, na_value=np.nan))
        except (TypeError, ValueError) as exc:
            raise DataError(f"column {j + 1} ({name!r}, {frame.dtypes.iloc[j]}) is not numeric: {exc}") from None
    if not columns:
        table = np.empty((len(frame), 0))
    else:
        table = np.empty((len(frame), len(columns)), object if text.any() else np.float64)
        for j, column in enumerate(columns):
            table[:, j] = column
    return _split_label(table, names, label_column)


def text_numbers(data: DataFile) -> DataFile:
    """``data`` with each text column whose every field is a number or missing read as numbers
    (float64; missing: NaN), the others as they are: ``X`` is float64 when no text is left.

    A categorical column of integer codes read as text would hold categories "2" and "2.0"
    apart, and a model of text categories could not take the codes as numbers (a NumPy matrix, a
    numeric column); read as numbers, the codes are matched by value, as LightGBM's are.
    """
    if getattr(data.X, "dtype", None) != object:
        return data
    table = data.X.copy()
    for j in range(table.shape[1]):
        try:
            table[:, j] = [math.nan if v is None else float(v) for v in table[:, j]]
        except ValueError:  # a field that is not a number: the column holds text
            continue
    if all(isinstance(v, float) for v in table.flat):
        table = table.astype(np.float64)
    data.X = table
    return data


def to_frame(data: DataFile) -> Any:
    """The features of a file read with text columns as a DataFrame: text columns of strings
    (None: missing), the others float64 (needs pandas)."""
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("reading categorical text columns needs pandas: pip install pandas") from None
    names = data.feature_names or [f"Column_{j}" for j in range(data.X.shape[1])]
    return pd.DataFrame({name: column.astype(np.float64) if all(isinstance(v, float) for v in column) else column
                         for name, column in zip(names, data.X.T)})


# -- matching a model ----------------------------------------------------------------------

def select_columns(data: DataFile, n_features: int, feature_names: list[str] | None,
                   label_column: int | str | None = "auto") -> DataFile:
    """The label and a model's features, in the model's order, of a file read with every column.

    Parameters
    ----------
    data : DataFile
        Read with ``label_column=None``. svmlight data is returned as it is (its label is the
        first field of every line; ``read_data(n_features=...)`` lines its indices up).
    n_features : int
        The model's number of features.
    feature_names : list of str or None
        The model's feature names: columns are matched to them by name when the file has names
        (a header, parquet). None (a model without names) or a file without names: by position.
    label_column : 'auto', int, 'name:<column>' or None
        'auto': by name, the one column that is not a feature (no such column: no label); by
        position, the first column when there is one more than ``n_features`` (else no label).

    Returns
    -------
    DataFile
        ``X`` with the model's ``n_features`` columns in its order.

    Raises
    ------
    DataError
        Model features missing from the file, columns that are neither features nor the label,
        or (by position) a number of columns that does not fit.
    """
    if data.zero_based is not None:
        return data
    names = data.feature_names
    by_name = names is not None and feature_names is not None
    features = set(feature_names or ())
    n_columns = data.X.shape[1]
    if label_column != "auto":
        label_index = label_column_index(label_column, names, n_columns)
    elif by_name:
        others = [j for j, name in enumerate(names) if name not in features]
        label_index = others[0] if len(others) == 1 else None
    else:
        label_index = 0 if n_columns == n_features + 1 else None
    keep = [j for j in range(n_columns) if j != label_index]
    if by_name:
        position = {names[j]: j for j in keep}
        lacking = [name for name in feature_names if name not in position]
        extra = [names[j] for j in keep if names[j] not in features]
        if lacking or extra:
            raise DataError("; ".join(
                [f"the model's features {_names(lacking)} are not in the file"] * bool(lacking)
                + [f"columns {_names(extra)} are neither features of the model nor its label (give the label "
                   "with label_column, --label-column on the command line)"] * bool(extra)))
        keep = [position[name] for name in feature_names]
    elif len(keep) != n_features:
        raise DataError(f"the file has {len(keep)} columns besides its label, but the model has {n_features} "
                        "features" if label_index is not None else
                        f"the file has {n_columns} columns, but the model has {n_features} features (and the file "
                        "may have a label column first)")
    return DataFile(data.X[:, keep], None if label_index is None else data.X[:, label_index], data.qid,
                    [names[j] for j in keep] if names else None)


def _names(names: list[str]) -> str:
    shown = ", ".join(repr(name) for name in names[:10])
    return shown + (f" and {len(names) - 10} more" if len(names) > 10 else "")


# -- files ---------------------------------------------------------------------------------

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
    try:
        sizes = [_query_size(line, number) for number, line in enumerate(_decode(_read_bytes(path)).split("\n"), 1)
                 if line.strip()]
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None
    if not sizes:
        raise DataError(f"{path}: the file holds no query sizes (one positive integer per line)")
    return np.array(sizes, np.int64)


def _query_size(line: str, number: int) -> int:
    try:
        size = int(line)
    except ValueError:
        size = 0
    if size <= 0:
        raise DataError(f"line {number}: {line.strip()!r} is not a query size (a positive integer)")
    return size


def read_data(path: str | Path, format: str | None = None, label_column: int | str | None = 0,
              n_features: int | None = None, *, zero_based: ZeroBased = "auto", header: Header = "auto",
              na_values: Sequence[str] | None = None, text_columns: TextColumns | None = None) -> DataFile:
    """Read a data file.

    Parameters
    ----------
    path : str or Path
    format : {'svmlight', 'csv', 'tsv', 'parquet'}, optional
        Default: from the file name (:func:`guess_format`).
    label_column : int, 'name:<column>' or None
        CSV/TSV/parquet: the label column (default the first, LightGBM's convention); None when
        the file holds features only (or to keep every column, for :func:`select_columns`).
        svmlight files always start with the label.
    n_features : int, optional
        svmlight: the number of features (default: the largest index in the file), so that a
        test file lines up with its training file; a larger index is an error.
    zero_based : bool or 'auto'
        svmlight: whether indices start at 0; 'auto': when some index is 0.
    header : bool or 'auto'
        CSV/TSV: whether the first line is a header; 'auto': when one of its fields is neither
        a number nor a missing value.
    na_values : sequence of str, optional
        CSV/TSV: the missing-value tokens besides the empty field (default :data:`NA_VALUES`).
    text_columns : callable, optional
        CSV/TSV/parquet: the columns kept as text (categorical columns; see the module's
        docstring); ``X`` is then an object array.

    Returns
    -------
    DataFile

    Raises
    ------
    DataError
        Anything in the file that cannot be read exactly, naming the file, line and column.
    """
    path = Path(path)
    if path.is_dir():  # not "no such data file": it exists
        raise IsADirectoryError(f"{path} is a directory, not a data file")
    if not path.is_file():
        raise FileNotFoundError(f"no such data file: {path}")
    for name, value in (("zero_based", zero_based), ("header", header)):
        if not (value is True or value is False or value == "auto"):
            raise ParameterError(f"{name} must be True, False or 'auto', got {value!r}")
    format = format or guess_format(path)
    if format not in FORMATS:
        raise DataError(f"unknown data format {format!r}; known: {', '.join(FORMATS)}")
    try:
        if format == "parquet":
            data = read_parquet(path, label_column, text_columns)
        elif format == "svmlight":
            data = read_svmlight(_read_bytes(path), n_features, zero_based)
        else:
            data = read_delimited(io.BytesIO(_read_bytes(path)), "," if format == "csv" else "\t", label_column,
                                  header, na_values, text_columns)
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None
    side = query_file(path)
    if side is not None:
        sizes = read_query_sizes(side)
        if sizes.sum() != data.X.shape[0]:
            raise DataError(f"{side}: query sizes sum to {sizes.sum()} but {path} has {data.X.shape[0]} rows")
        if data.qid is None:
            data.qid = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)
        else:  # qid: fields too: which queries are meant is ambiguous unless both say the same
            _check_same_queries(data.qid, sizes, path, side)
    return data


def _check_same_queries(qid: np.ndarray, sizes: np.ndarray, path: Path, side: Path) -> None:
    """Refuse a ``.query`` side file whose query sizes are not the runs of equal ``qid:``
    fields of its data file."""
    runs = np.diff(np.flatnonzero(np.r_[True, qid[1:] != qid[:-1], True]))
    if np.array_equal(runs, sizes):
        return
    # both sum to the rows (checked before), so they differ within the shorter one
    n = min(runs.size, sizes.size)
    q = int(np.argmax(runs[:n] != sizes[:n]))
    raise DataError(f"{path} has qid: fields and a query file {side}, and they disagree: query {q + 1} has "
                    f"{runs[q]} rows by the qid fields, {sizes[q]} by {side.name}; remove one of them")


@dataclass(frozen=True)
class ReadOptions:
    """How a data file is read: the command line's data options (``--format``,
    ``--label-column``, ``--header``, ``--na-values``, ``--zero-based``). The defaults read a
    file as ``smartboost train FILE`` and ``Dataset(FILE)`` do.

    Attributes
    ----------
    format : str or None
        One of :data:`FORMATS`; None: from the file name (:func:`guess_format`).
    label_column : int, 'name:<column>', None or 'auto'
        As :func:`read_data`'s; 'auto': the first column of a training file, and for a model's
        files the one column that is not a feature (:func:`select_columns`).
    header, na_values, zero_based
        As :func:`read_data`'s.
    """

    format: str | None = None
    label_column: int | str | None = "auto"
    header: Header = "auto"
    na_values: Sequence[str] | None = None
    zero_based: ZeroBased = "auto"


def _text_columns(categorical: Any, label_at: Callable[[list[str] | None, int], int | None],
                  strict: bool = False) -> TextColumns | None:
    """Which columns of a file hold categories as text: those of the ``categorical`` features
    (feature indices, not counting the label column, or header names; None: none), the label
    being the column ``label_at(names, n_columns)`` gives (None: no label). ``strict``: a
    feature of ``categorical`` that no column is (``categorical_feature`` of a training file)
    is an error."""
    if not categorical:
        return None
    refs, categorical = list(categorical), set(categorical)

    def text(names: list[str] | None, n_columns: int) -> np.ndarray:
        label = label_at(names, n_columns)
        mask = np.zeros(n_columns, np.bool_)
        features = [j for j in range(n_columns) if j != label]
        for position, j in enumerate(features):
            mask[j] = position in categorical or (names is not None and names[j] in categorical)
        feature_names = [] if names is None else [names[j] for j in features]
        unknown = [ref for ref in refs
                   if (ref not in feature_names if isinstance(ref, str) else not 0 <= ref < len(features))]
        if strict and unknown:
            columns = "no header" if names is None else f"columns {', '.join(feature_names)}"
            raise DataError(f"categorical_feature names {unknown[0]!r}, which is not a feature column of the file "
                            f"({len(features)} feature columns; {columns})")
        return mask
    return text


def _with_frame(data: DataFile) -> DataFile:
    """A file's features as Dataset and Booster take them: a DataFrame when it has text columns."""
    if getattr(data.X, "dtype", None) == object:
        data.X = to_frame(data)
    return data


def read_training(path: str | Path, options: ReadOptions, categorical: Any) -> DataFile:
    """A training file, text in the columns of the ``categorical`` features (indices or names;
    'auto': none) unless a column holds numbers only (integer codes, :func:`text_numbers`);
    ``label_column='auto'`` is its first column. ``X`` is a DataFrame when it has text columns."""
    label_column = 0 if options.label_column == "auto" else options.label_column
    text = None if categorical == "auto" else _text_columns(
        categorical, lambda names, n_columns: label_column_index(label_column, names, n_columns), strict=True)
    return _with_frame(text_numbers(read_data(path, options.format, label_column, zero_based=options.zero_based,
                                              header=options.header, na_values=options.na_values,
                                              text_columns=text)))


def read_for_model(path: str | Path, options: ReadOptions, n_features: int, feature_names: list[str] | None,
                   zero_based: bool | None, categorical: list[int | str]) -> DataFile:
    """A file read as a model's training file was: the same svmlight index base (None: unknown,
    then ``options.zero_based``), its columns matched to the model's features (by name when
    ``feature_names`` is given and the file has a header, :func:`select_columns`), text in the
    columns of its ``categorical`` features (indices, or names when it has names,
    :func:`text_refs`).

    Raises
    ------
    ParameterError
        ``options.zero_based`` contradicting the model's ``zero_based``.
    DataError
        What :func:`read_data` and :func:`select_columns` refuse, naming the file.
    """
    if zero_based is None:
        zero_based = options.zero_based
    elif options.zero_based not in ("auto", zero_based):
        raise ParameterError(f"zero_based {str(options.zero_based).lower()} contradicts the model, trained on "
                             f"{'zero' if zero_based else 'one'}-based svmlight data")

    def label_at(names: list[str] | None, n_columns: int) -> int | None:  # as select_columns finds it
        if options.label_column != "auto":
            return label_column_index(options.label_column, names, n_columns)
        if names is not None and feature_names is not None:
            others = [j for j, name in enumerate(names) if name not in feature_names]
            return others[0] if len(others) == 1 else None
        return 0 if n_columns == n_features + 1 else None

    data = read_data(path, options.format, None, n_features, zero_based=zero_based, header=options.header,
                     na_values=options.na_values, text_columns=_text_columns(categorical, label_at))
    try:
        return _with_frame(select_columns(data, n_features, feature_names, options.label_column))
    except DataError as exc:
        raise DataError(f"{path}: {exc}") from None


def text_refs(mapper: Any, feature_names: list[str] | None) -> list[int | str]:
    """The categorical features of text categories of ``mapper`` (a BinMapper), whose columns a
    file holds as text, as its columns are matched to them: by name, or by index. (The columns
    of integer codes hold numbers, read as such: a field that is not one is an error naming its
    line.)"""
    indices = [f for f, table in sorted(mapper.categories.items()) if table.is_text]
    return indices if feature_names is None else [feature_names[f] for f in indices]
