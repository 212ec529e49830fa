"""svmlight/LETOR reading: the compiled parser gives scikit-learn's load_svmlight_file values exactly."""

import gzip
import io

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_svmlight_file

from smartboost._kernels.svmlight import OK, parse_number, parse_svmlight
from smartboost.datafile import read_data, read_svmlight
from smartboost.errors import DataError


def _bits(a):
    return np.asarray(a, np.float64).view(np.uint64)


def assert_same_as_sklearn(text: bytes, n_features=None):
    """Every value bit for bit (-0.0 and NaN included), indices, row pointers, shape, labels, qids."""
    ours = read_svmlight(text, n_features)
    X, y, qid = load_svmlight_file(io.BytesIO(text), n_features=n_features, query_id=True)
    X = X.tocsr()
    assert ours.X.shape == X.shape
    np.testing.assert_array_equal(ours.X.indptr, X.indptr)
    np.testing.assert_array_equal(ours.X.indices, X.indices)
    np.testing.assert_array_equal(_bits(ours.X.data), _bits(X.data))
    np.testing.assert_array_equal(_bits(ours.label), _bits(y))
    if qid.size:
        np.testing.assert_array_equal(ours.qid, qid)
    else:
        assert ours.qid is None
    return ours


def _fast_path_used(text: bytes) -> bool:
    return parse_svmlight(np.frombuffer(text, np.uint8), 3)[0] == OK


LETOR = b"""# a LETOR 4.0-style file
2 qid:10 1:0.5 2:-0.25 3:1e-5 5:3.14159 #docid = GX000-00-0000000 inc = 1 prob = 0.0246906
0 qid:10 1:0 2:-0 3:1.5E+3 4:.5 5:7.
\t1  qid:10   2:123456789012345 4:0.000001  \r
# a comment line

4 qid:11 1:1 136:0.999999
-1 qid:12 3:+2.5e-22 4:9007199254740992 6:-17
+3 qid:12
"""


def test_letor_text_with_comments_blank_lines_and_crlf():
    assert _fast_path_used(LETOR)
    data = assert_same_as_sklearn(LETOR)
    assert data.X.shape == (6, 136) and data.qid.tolist() == [10, 10, 10, 11, 12, 12]


@pytest.mark.parametrize("value", [b"0.1234567890123456789", b"1e300", b"2.5e-30", b"nan", b"-inf", b"1_000",
                                   b"9007199254740993", b"123456789012345678901234"])
def test_values_off_the_fast_path_go_through_float(value):
    text = b"1 qid:1 1:0.5 2:" + value + b" 3:2\n0 qid:1 2:" + value + b"\n"
    assert _fast_path_used(text)  # only the values are slow
    assert_same_as_sklearn(text)


@pytest.mark.parametrize("text", [
    b"1 1:0.5 2:1\n0 0:3 2:1\n",                 # an index 0: zero-based
    b"1 1:1\n0 2:1\n",                           # no qid
    b"1e-30 1:1\n0 2:1\n",                      # a label off the fast path
    b"1 qid:3 1:1\n0 2:1\n",                     # a qid on some rows only
    b"1 qid:-3 1:1\n0 qid:+4 2:1\n",             # signs scikit-learn's np.int64 reads
    b"1 1:1 2:2 # \x00\n",                       # a NUL byte in a comment
    b"",                                         # nothing
])
def test_other_files_read_as_sklearn_does(text):
    if b"qid:3 1:1\n0 2:1" in text:
        with pytest.raises(DataError, match="line 2 has no qid, unlike line 1"):
            read_svmlight(text)
        return
    assert_same_as_sklearn(text)


@pytest.mark.parametrize("text", [b"1 2:1 1:3\n", b"1 1:1 1:2\n", b"1 a:1\n", b"1 -1:2\n", b"1 1:x\n", b"1 1:\n",
                                  b"x 1:1\n", b"1 qid:z 1:1\n", b"1 1:1 2:2\x003:3\n"])
def test_malformed_lines_are_data_errors_as_in_sklearn(text):
    with pytest.raises(ValueError):
        load_svmlight_file(io.BytesIO(text), query_id=True)
    with pytest.raises(DataError, match="not a valid svmlight file"):
        read_svmlight(text)


def test_n_features():
    assert read_svmlight(b"1 1:1 3:2\n", n_features=10).X.shape == (1, 10)
    assert_same_as_sklearn(b"1 1:1 3:2\n", n_features=10)
    with pytest.raises(DataError, match=r"line 1: index 3 is beyond the 2 features expected \(one-based indices 1"):
        read_svmlight(b"1 1:1 3:2\n", n_features=2)


@pytest.mark.parametrize("fast", [True, False])
def test_the_index_base_is_given_or_found(fast):
    tail = b"" if fast else b"1e-30 1:2\n"  # a label off the fast path: scikit-learn's loader reads the file
    one = b"1 1:0.5 3:1\n" + tail
    zero = b"# zero-based\n1 1:0.5 3:1\n\n0 0:3 2:1\n" + tail
    assert _fast_path_used(zero) == fast
    assert not read_svmlight(one).zero_based and read_svmlight(one).X.shape == (1 + bool(tail), 3)
    data = read_svmlight(zero)
    assert data.zero_based and data.X.shape == (2 + bool(tail), 4)
    assert read_svmlight(one, zero_based=True).X.toarray()[0].tolist() == [0, 0.5, 0, 1]
    with pytest.raises(DataError, match="line 4: index 0, but this data's indices are one-based"):
        read_svmlight(zero, zero_based=False)
    with pytest.raises(DataError, match=r"line 2: index 3 is beyond the 3 features expected \(zero-based indices 0"):
        read_svmlight(zero, n_features=3)


def test_malformed_values_name_their_line():
    with pytest.raises(DataError, match=r"line 3: could not convert b'1x' to a number"):
        read_svmlight(b"1 1:1\n# c\n0 2:1x\n")


@pytest.mark.parametrize("text", [b"1 1000000000000:1\n", b"1 qid:99999999999999999999 1:1\n"])
def test_indices_and_qids_beyond_64_bits_are_data_errors(text):
    with pytest.raises(DataError, match="not a valid svmlight file"):
        read_svmlight(text)


def _format(value, style):
    return {"repr": repr(value), "g6": f"{value:.6g}", "f4": f"{value:.4f}", "e3": f"{value:.3e}",
            "int": str(int(value))}[style].encode()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(-1e6, 1e6, allow_nan=False), st.sampled_from(["repr", "g6", "f4", "e3", "int"])),
                min_size=1, max_size=60),
       st.integers(1, 5), st.integers(0, 2 ** 31))
def test_random_files_equal_sklearn(values, per_row, seed):
    rng = np.random.default_rng(seed)
    lines, index = [], 0
    for k, (value, style) in enumerate(values):
        if k % per_row == 0:
            if lines:
                lines[-1] += b"\n"
            lines.append(_format(float(rng.integers(0, 5)), "int") + b" qid:%d" % (k // 7))
            index = 0
        index += int(rng.integers(1, 4))
        lines[-1] += b" %d:" % index + _format(value, style)
    assert_same_as_sklearn(b"".join(lines) + b"\n")


def test_parse_number_is_correctly_rounded_on_the_fast_path():
    rng = np.random.default_rng(1)
    for text in [f"{v:.{d}g}" for v, d in zip(rng.standard_normal(3000) * 10.0 ** rng.integers(-20, 20, 3000),
                                                rng.integers(1, 16, 3000))]:
        raw = np.frombuffer(text.encode(), np.uint8)
        value, exact = parse_number(raw, 0, raw.size)
        if exact:
            assert _bits(value) == _bits(float(text)), text


def test_read_data_reads_gzip_and_query_side_files(tmp_path):
    (tmp_path / "r.txt.gz").write_bytes(gzip.compress(LETOR))
    assert_same_as_sklearn(LETOR)
    np.testing.assert_array_equal(read_data(tmp_path / "r.txt.gz").qid, [10, 10, 10, 11, 12, 12])
    (tmp_path / "s.svm").write_bytes(b"1 1:1\n0 2:1\n2 1:3\n")
    (tmp_path / "s.svm.query").write_text("2\n1\n")
    np.testing.assert_array_equal(read_data(tmp_path / "s.svm").qid, [0, 0, 1])


@pytest.mark.parametrize("name", ["mq2008/Fold1/train.txt.gz", "mslr_fold1_5k/test.txt.gz",
                                  "lightgbm_examples/lambdarank/rank.train.gz"])
def test_public_letor_files_read_as_sklearn_does(shared_data, name):
    path = shared_data / name
    if not path.exists():
        pytest.skip(f"{path} not found")
    text = gzip.decompress(path.read_bytes())
    assert _fast_path_used(text)
    assert_same_as_sklearn(text)


def test_qid_fields_and_a_query_side_file_must_agree(tmp_path):
    (tmp_path / "q.svm").write_bytes(b"1 qid:4 1:1\n0 qid:4 2:1\n2 qid:9 1:3\n")
    (tmp_path / "q.svm.query").write_text("2\n1\n")
    np.testing.assert_array_equal(read_data(tmp_path / "q.svm").qid, [4, 4, 9])  # the same queries: read
    # the side file was silently ignored
    (tmp_path / "q.svm.query").write_text("1\n2\n")
    with pytest.raises(DataError, match=r"q.svm has qid: fields and a query file .*q.svm.query, and they disagree: "
                                        r"query 1 has 2 rows by the qid fields, 1 by q.svm.query"):
        read_data(tmp_path / "q.svm")
    (tmp_path / "q.svm.query").write_text("2\n")
    with pytest.raises(DataError, match="query sizes sum to 2 but"):
        read_data(tmp_path / "q.svm")


@pytest.mark.parametrize("bad", [b"1 :2", b"0 1:1 x", b"1 3:1 2:1"])
def test_errors_of_the_sklearn_reader_name_their_line(bad):
    lines = [b"1 1:0.5 2:1", b"# a comment", b"", b"0 2:3"] * 5
    lines[13:13] = [bad]
    # scikit-learn's message ("invalid literal for int() with base 10: b''") had no line
    with pytest.raises(DataError, match="not a valid svmlight file: line 14: "):
        read_svmlight(b"\n".join(lines) + b"\n")


def test_a_byte_order_mark_is_not_part_of_the_first_label():
    # it was "could not convert string to float: b'\xef\xbb\xbf1'"
    data = read_svmlight(b"\xef\xbb\xbf1 1:2\n0 2:3\n")
    np.testing.assert_array_equal(data.label, [1, 0])
    np.testing.assert_array_equal(data.X.toarray(), [[2, 0], [0, 3]])
