"""Fuzzing the data-file readers (issue 31): any input is read into a consistent DataFile or
refused with a SmartBoostError subclass; any other exception fails.

Inputs: random bytes; valid svmlight/LETOR text mutated (truncated, hostile tokens inserted:
huge, negative or non-integer indices, a ``qid`` on some rows only, NaN/inf values, comments,
CRLF); CSV/TSV grids of numbers, missing-value tokens and junk, with or without a header, with
ragged rows, quoted fields, blank lines and CRLF, whose first bad cell must be the one the error
names; truncated gzip files. Also: a file read with a model's svmlight index base never shifts
its columns.

Each property runs ``SMARTBOOST_FUZZ_EXAMPLES`` examples (default 150: about 20 s for the
module on a 2-core machine); raise it for a longer hunt, e.g.
``SMARTBOOST_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz_readers.py``.
"""

import gzip
import io
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.datasets import dump_svmlight_file, load_svmlight_file

from smartboost.datafile import NA_VALUES, DataFile, read_data, read_delimited, read_svmlight
from smartboost.errors import DataError, SmartBoostError

EXAMPLES = int(os.environ.get("SMARTBOOST_FUZZ_EXAMPLES", "150"))
fuzz = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _outcome(read) -> DataFile | None:
    """``read()``'s DataFile, checked for consistency, or None when it raised a SmartBoostError."""
    try:
        data = read()
    except SmartBoostError:
        return None
    n_rows = data.X.shape[0]
    assert data.X.ndim == 2 and data.X.dtype == np.float64
    assert data.label is None or data.label.shape == (n_rows,)
    assert data.qid is None or data.qid.shape == (n_rows,)
    if sp.issparse(data.X):
        assert data.X.indices.size == 0 or 0 <= data.X.indices.min() <= data.X.indices.max() < data.X.shape[1]
    elif data.feature_names is not None:
        assert len(data.feature_names) == data.X.shape[1]
    return data


# -- svmlight ------------------------------------------------------------------------------

@fuzz
@given(st.binary(max_size=400), st.sampled_from(["auto", True, False]), st.sampled_from([None, 3, 50]))
def test_svmlight_random_bytes(data, zero_based, n_features):
    _outcome(lambda: read_svmlight(data, n_features, zero_based))


HOSTILE = [b"1000000000000:1", b"99999999999999999999:1", b"-3:1", b"1.5:2", b"a:1", b"0:1", b"2147483648:1",
           b"qid:7", b"qid:", b"qid:x", b"1:nan", b"1:inf", b"1:-inf", b"nan", b"inf", b"1:1e999", b"1:", b":",
           b"#", b"# c 1:2", b"\r\n", b"\n", b"\r", b"\x00", b"\xff\xfe", b" ", b"\t", b"1:1:1", b"5:1 3:1",
           b"1:0x10", b"1:1_0", b"+1", b"-0", b"1e5"]


@st.composite
def svmlight_texts(draw):
    """A valid svmlight text (zero- or one-based, with or without qid), and its matrix."""
    n_rows, n_features = draw(st.integers(1, 8)), draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    X = np.where(rng.random((n_rows, n_features)) < 0.6, np.round(rng.standard_normal((n_rows, n_features)), 3), 0)
    y = rng.integers(0, 3, n_rows).astype(float)
    out = io.BytesIO()
    qid = np.sort(rng.integers(0, 3, n_rows)) if draw(st.booleans()) else None
    dump_svmlight_file(X, y, out, zero_based=draw(st.booleans()), query_id=qid)
    return out.getvalue()


@st.composite
def mutations(draw, text):
    """``text`` truncated, with hostile tokens inserted, with CRLF line ends: any of them."""
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "truncate", "crlf", "delete"]))
        if kind == "insert":
            sep = draw(st.sampled_from([b" ", b"", b"\n"]))
            text = text[:at] + sep + draw(st.sampled_from(HOSTILE)) + sep + text[at:]
        elif kind == "truncate":
            text = text[:at]
        elif kind == "crlf":
            text = text.replace(b"\n", b"\r\n")
        else:
            text = text[:at] + text[at + draw(st.integers(1, 5)):]
    return text


@fuzz
@given(st.data(), svmlight_texts(), st.sampled_from(["auto", True, False]))
def test_svmlight_mutations_are_read_as_sklearn_does_or_refused(draw, text, zero_based):
    mutated = draw.draw(mutations(text))
    data = _outcome(lambda: read_svmlight(mutated, zero_based=zero_based))
    if data is not None and zero_based == "auto":
        X, y = load_svmlight_file(io.BytesIO(mutated))  # what we read, scikit-learn reads too
        assert data.X.shape == X.shape
        np.testing.assert_array_equal(data.X.toarray(), X.toarray())
        np.testing.assert_array_equal(data.label, y)


@fuzz
@given(st.integers(2, 8), st.integers(0, 2 ** 32 - 1))
def test_a_file_read_with_the_models_index_base_never_shifts(n_features, seed):
    """Training file zero-based with an index 0; a later file without index 0 is read with the
    training file's base and the model's width: the same rows, the same columns."""
    rng = np.random.default_rng(seed)
    X = np.where(rng.random((12, n_features)) < 0.7, rng.integers(1, 9, (12, n_features)), 0).astype(float)
    X[0, 0], X[6:, 0] = 1.0, 0.0  # "0:" appears in the training file but not in rows 6..
    y = np.arange(12.0)
    train, test = io.BytesIO(), io.BytesIO()
    dump_svmlight_file(X, y, train, zero_based=True)
    dump_svmlight_file(X[6:], y[6:], test, zero_based=True)
    trained = read_svmlight(train.getvalue())
    assert trained.zero_based
    later = read_svmlight(test.getvalue(), trained.X.shape[1], trained.zero_based)
    np.testing.assert_array_equal(later.X.toarray(), trained.X.toarray()[6:])
    one_based = read_svmlight(test.getvalue(), zero_based=False, n_features=n_features)  # a one-based model
    with pytest.raises(DataError, match="line 1: index 0, but this data's indices are one-based"):
        read_svmlight(train.getvalue(), zero_based=False, n_features=n_features)
    assert one_based.zero_based is False


# -- CSV/TSV -------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False).map(repr),
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: f"{v:.3g}"),
    st.floats(-1e3, 1e3, allow_nan=False).map(lambda v: f"{v:.2e}"),
    st.integers(-10 ** 6, 10 ** 6).map(str),
    st.sampled_from(["+1.5", ".5", "5.", " 2 ", "-0", "1E3", '"3.25"']),
)
MISSING = st.sampled_from(["", "NA", " NA ", "null", "N/A", "None", '""', '"NA"', "nan", "NaN"])
JUNK = st.sampled_from(["0.5x", "?", "abc", "--1", "1e", "0x10", "1 2", "nan(1)", "#", "1.2.3", "e5", "TRUE",
                        "'1'", '"1,5"', "N A", "1d5", "inf5", "ä"])


def _value(cell: str) -> float:
    """The value the reader must give a number or missing cell."""
    text = cell.strip().strip('"').strip()
    return np.nan if text in NA_VALUES or text.lower() == "nan" or text == "" else float(text)


@st.composite
def grids(draw):
    """Rows of cells (text as written) and what each cell is: 'number', 'missing' or 'junk'."""
    n_rows, n_columns = draw(st.integers(1, 6)), draw(st.integers(1, 5))
    kinds = draw(st.lists(st.lists(st.sampled_from(["number"] * 6 + ["missing"] * 2 + ["junk"]),
                                   min_size=n_columns, max_size=n_columns), min_size=n_rows, max_size=n_rows))
    cells = [[draw({"number": NUMBERS, "missing": MISSING, "junk": JUNK}[kind]) for kind in row] for row in kinds]
    return cells, kinds


@fuzz
@given(grids(), st.booleans(), st.sampled_from([",", "\t"]), st.data())
def test_csv_grids_are_read_exactly_or_the_first_bad_cell_is_named(grid, has_header, delimiter, draw):
    cells, kinds = grid
    n_columns = len(cells[0])
    names = [f"f{j}" for j in range(n_columns)]
    rows, kinds = [list(row) for row in cells], [list(row) for row in kinds]
    if draw.draw(st.booleans()):  # a ragged row: one field more or less
        r = draw.draw(st.integers(0, len(rows) - 1))
        if n_columns > 1 and draw.draw(st.booleans()):
            rows[r], kinds[r] = rows[r][:-1], kinds[r][:-1]
        else:
            rows[r], kinds[r] = rows[r] + ["1"], kinds[r] + ["number"]
    assume(all(delimiter.join(row) for row in rows))  # an empty line is a blank line, not a row
    entries: list[int | None] = list(range(len(rows)))  # row index per line after the header; None: blank
    if draw.draw(st.booleans()):
        entries.insert(draw.draw(st.integers(0 if has_header else 1, len(rows))), None)
    lines = ([delimiter.join(names)] if has_header else []) + [
        "" if e is None else delimiter.join(rows[e]) for e in entries]
    newline = draw.draw(st.sampled_from(["\n", "\r\n"]))
    text = newline.join(lines) + (newline if draw.draw(st.booleans()) else "")
    # 'auto' would take a first row with junk for a header: say there is none
    header = has_header if draw.draw(st.booleans()) or not has_header and "junk" in kinds[0] else "auto"

    expected = None  # the first ragged row or junk cell, in reading order
    n_fields = n_columns if has_header else len(rows[0])  # every row has the first line's number of fields
    for number, e in enumerate(entries, 2 if has_header else 1):
        if e is None:
            continue
        if len(rows[e]) != n_fields:
            expected = f"line {number} has {len(rows[e])} fields"
            break
        if "junk" in kinds[e]:
            expected = f"line {number}, column {kinds[e].index('junk') + 1}"
            break

    def read():
        return read_delimited(io.BytesIO(text.encode()), delimiter, None, header)

    if expected is not None:
        with pytest.raises(DataError) as error:
            read()
        assert str(error.value).startswith(expected), (str(error.value), expected)
    else:
        data = _outcome(read)
        assert data is not None and data.feature_names == (names if has_header else None)
        np.testing.assert_array_equal(data.X, [[_value(c) for c in row] for row in rows])


@fuzz
@given(st.one_of(st.binary(max_size=300), st.text(max_size=200).map(str.encode)), st.sampled_from([",", "\t"]),
       st.sampled_from(["auto", True, False]), st.sampled_from([0, None, "name:a"]))
def test_csv_random_input(data, delimiter, header, label_column):
    _outcome(lambda: read_delimited(io.BytesIO(data), delimiter, label_column, header))


# -- compressed files ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


@fuzz
@given(svmlight_texts(), st.floats(0, 1), st.sampled_from(["d.svm.gz", "d.csv.gz"]))
def test_truncated_gzip_files(folder, text, fraction, name):
    content = gzip.compress(text if name.endswith("svm.gz") else b"y,a\n1,2\n0,3\n")
    (folder / name).write_bytes(content[:int(len(content) * fraction)])
    data = _outcome(lambda: read_data(folder / name))
    assert data is not None or fraction < 1
