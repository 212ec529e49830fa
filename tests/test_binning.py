import json

import numpy as np
import pytest
import scipy.sparse as sp

import smartboost as sb
from smartboost.binning import BinMapper, sparse_feature_mask


def _fit_transform(X, **kw):
    mapper = BinMapper(**kw).fit(X)
    return mapper, mapper.transform(X)


def test_few_distinct_values_get_one_bin_each():
    X = np.array([[3.0], [-1.0], [1.0], [2.0], [0.0], [1.0], [3.0]])
    mapper, binned = _fit_transform(X, min_data_in_bin=1)
    assert mapper.n_bins[0] == 5
    np.testing.assert_array_equal(mapper.edges[0], [-1e-35, 1e-35, 1.5, 2.5])
    np.testing.assert_array_equal(binned.row_major[:, 0], [4, 0, 2, 3, 1, 2, 4])


def test_zero_gets_its_own_bin():
    """Zero is bounded by edges at +-1e-35 (LightGBM's), not at midpoints: an unseen tiny value
    (above 1e-35) goes with the values of its sign, -0.0 with zero; a feature without zeros keeps an empty
    zero bin below its values (the same cuts as LightGBM)."""
    X = np.array([[-2.0, 5.0], [0.0, 6.0], [0.0, 7.0], [1.0, 8.0]])
    mapper, _ = _fit_transform(X, min_data_in_bin=1)
    np.testing.assert_array_equal(mapper.edges[0], [-1e-35, 1e-35])
    np.testing.assert_array_equal(mapper.edges[1], [1e-35, 5.5, 6.5, 7.5])
    unseen = np.array([[1e-30, 0.0], [-1e-30, 0.0], [-0.0, 0.0], [1e-300, 0.0]])
    np.testing.assert_array_equal(mapper.transform(unseen).row_major[:, 0], [2, 0, 1, 1])


@pytest.mark.parametrize("max_bin", [255, 1000])
def test_values_of_both_signs_get_a_bin_each_while_they_fit(max_bin):
    """At most max_bin - 1 distinct non-zero values: a bin each, however few rows one sign has
    (LightGBM would give the rare negative values a tenth of the bins); one value more, and the
    signs share the bins in proportion to their rows."""
    rng = np.random.default_rng(4)
    n_negative = max_bin - 1 - 50
    negative = -np.arange(1.0, n_negative + 1)
    X = np.r_[negative, rng.choice(negative, 300), np.tile(np.arange(1.0, 51.0), 60)].reshape(-1, 1)
    mapper, binned = _fit_transform(X, max_bin=max_bin, min_data_in_bin=1)
    assert mapper.n_bins[0] == max_bin  # the values, and the empty zero bin between the signs
    assert np.unique(binned.row_major[:, 0]).size == np.unique(X).size == max_bin - 1
    crowded = np.r_[X[:, 0], -n_negative - 1.0].reshape(-1, 1)
    mapper, binned = _fit_transform(crowded, max_bin=max_bin, min_data_in_bin=1)
    assert np.unique(binned.row_major[:, 0]).size < max_bin - 1


def test_min_data_in_bin_closes_bins_of_rare_values():
    X = np.r_[np.zeros(5), np.arange(1.0, 11.0)].reshape(-1, 1)
    for min_data, edges in [(1, [1e-35, *np.arange(1.5, 10)]), (3, [1e-35, 3.5, 6.5, 9.5]),
                            (6, [1e-35, 6.5]), (11, [1e-35])]:
        mapper, _ = _fit_transform(X, min_data_in_bin=min_data)
        np.testing.assert_array_equal(mapper.edges[0], edges)


def test_values_holding_a_mean_bin_get_their_own_bin():
    """More distinct values than bins: a value of at least a mean bin's rows is a bin alone, the
    others fill bins of the mean size of the rows and bins left, and a bin closes at half that
    size before a big value (hand-computed: 199 rows, 7 bins for the positive values)."""
    X = np.r_[np.arange(1.0, 101.0), np.full(99, 50.0)].reshape(-1, 1)
    mapper, binned = _fit_transform(X, max_bin=8, min_data_in_bin=1)
    np.testing.assert_array_equal(mapper.edges[0], [1e-35, 17.5, 34.5, 49.5, 50.5, 67.5, 84.5])
    assert np.bincount(binned.row_major[:, 0]).tolist() == [0, 17, 17, 15, 100, 17, 17, 16]
    _, binned = _fit_transform(X, max_bin=8, min_data_in_bin=40)  # 199 // 40 = 4 bins
    assert np.bincount(binned.row_major[:, 0]).tolist() == [0, 33, 116, 33, 17]


def test_bins_are_quantiles_and_respect_max_bin():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50_000, 2))
    X[:, 1] = np.round(X[:, 1], 1)  # heavy ties
    mapper, binned = _fit_transform(X, max_bin=63)
    assert mapper.n_bins[0] == 63 and mapper.n_bins[1] <= 63
    counts = np.bincount(binned.row_major[:, 0])
    assert np.flatnonzero(counts == 0).tolist() == [31]  # the zero bin: no value is exactly 0
    counts = counts[counts > 0]
    assert counts.min() > 0.8 * counts.mean() and counts.max() < 1.2 * counts.mean()
    # every bin of the tied feature holds rows, and a row's bin agrees with the edges
    assert np.all(np.bincount(binned.row_major[:, 1]) > 0)
    for f in range(2):
        expected = np.searchsorted(mapper.edges[f], X[:, f], side="left")
        np.testing.assert_array_equal(binned.row_major[:, f], expected)


def test_missing_and_infinite_values():
    X = np.array([[0.0], [1.0], [np.nan], [np.inf], [-np.inf], [2.0]])
    mapper, binned = _fit_transform(X, min_data_in_bin=1)
    n_bins = mapper.n_bins[0]
    assert n_bins == 3  # edges from finite values only
    np.testing.assert_array_equal(binned.row_major[:, 0], [0, 1, n_bins, n_bins - 1, 0, 2])
    assert binned.missing_count[0] == 1


def test_constant_features_are_not_usable():
    X = np.column_stack([np.ones(10), np.arange(10.0), np.r_[np.ones(9), np.nan], np.full(10, np.nan)])
    _, binned = _fit_transform(X)
    np.testing.assert_array_equal(binned.usable_features, [False, True, True, True])


@pytest.mark.parametrize("max_bin", [255, 65535])  # 65535: two-byte bins, a bin per value
def test_layouts_dtypes_and_sparse_bin_identically(max_bin):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2000, 5))
    X[rng.random(X.shape) < 0.6] = 0.0
    X[rng.random(X.shape) < 0.05] = np.nan
    mapper, reference = _fit_transform(X, max_bin=max_bin, min_data_in_bin=1)
    assert reference.row_major.dtype == (np.uint8 if max_bin == 255 else np.uint16)
    for variant in (np.asfortranarray(X), sp.csr_matrix(X), sp.csc_matrix(X)):
        other = BinMapper(max_bin=max_bin, min_data_in_bin=1).fit(variant)
        assert other.same_edges(mapper)
        binned = other.transform(variant)
        np.testing.assert_array_equal(binned.row_major, reference.row_major)
        np.testing.assert_array_equal(binned.column_major, reference.column_major)
        np.testing.assert_array_equal(binned.missing_count, reference.missing_count)
    X32 = X.astype(np.float32)
    np.testing.assert_array_equal(
        BinMapper(max_bin=max_bin, min_data_in_bin=1).fit(X32).transform(X32).row_major,
        BinMapper(max_bin=max_bin, min_data_in_bin=1).fit(X32.astype(np.float64)).transform(
            X32.astype(np.float64)).row_major)


def test_bin_of_counts_the_edges_below_the_value_for_every_window():
    """The branch-free search equals a sorted-array search (edges below the value) for every
    window size, at an offset into a longer table, on values at, between and beyond the
    edges; NaN gets the missing-value bin."""
    from smartboost._kernels.binning import bin_of

    rng = np.random.default_rng(4)
    table = np.sort(rng.standard_normal(400))
    for n in [*range(0, 20), 31, 32, 33, 254, 255, 256, 300]:
        first = int(rng.integers(0, table.size - n + 1))
        edges = table[first:first + n]
        x = np.concatenate([edges, np.nextafter(edges, np.inf), np.nextafter(edges, -np.inf),
                            rng.standard_normal(50) * 3, [-np.inf, np.inf, -1e300, 1e300]])
        got = np.array([bin_of(v, table, first, n) for v in x])
        np.testing.assert_array_equal(got, np.searchsorted(edges, x, side="left"), err_msg=f"{n} edges")
        assert bin_of(np.nan, table, first, n) == n + 1



@pytest.mark.parametrize("out_dtype", [np.uint8, np.uint16])
def test_dense_binning_equals_the_search_of_each_value(out_dtype):
    """bin_dense (four rows at a time, then the rows left over, in blocks) bins every value as
    bin_of does: features of 0 to 300 edges, values at, beside and between them, NaN and
    infinities, row counts that leave 1-3 rows after the groups of four."""
    from smartboost._kernels.binning import bin_dense, bin_of

    rng = np.random.default_rng(5)
    widths = [0, 1, 2, 3, 7, 253] + ([300] if out_dtype == np.uint16 else [])  # every bin fits the dtype
    tables = [np.sort(rng.choice(rng.standard_normal(1000), n, replace=False)) for n in widths]
    edges = np.concatenate(tables)
    n_edges = np.array(widths, np.int64)
    first = np.concatenate([[0], np.cumsum(n_edges)[:-1]])
    for n_rows, n_blocks in [(1, 1), (3, 1), (13, 2), (103, 5)]:
        X = rng.standard_normal((n_rows, len(widths))) * 2
        for f, table in enumerate(tables):
            if table.size:
                at = rng.random(n_rows) < 0.3
                X[at, f] = rng.choice(table, at.sum())
        X[rng.random(X.shape) < 0.1] = np.nan
        X[rng.random(X.shape) < 0.05] = np.inf
        X[rng.random(X.shape) < 0.05] = -np.inf
        out = np.empty(X.shape, out_dtype)
        missing = np.zeros((n_blocks, X.shape[1]), np.int64)
        bin_dense(X, edges, first, n_edges, out, missing)
        expected = [[bin_of(X[i, f], edges, first[f], n_edges[f]) for f in range(X.shape[1])] for i in range(n_rows)]
        np.testing.assert_array_equal(out, expected)
        np.testing.assert_array_equal(missing.sum(axis=0), np.isnan(X).sum(axis=0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_large_c_ordered_samples_learn_the_edges_of_any_layout(dtype):
    """A C-ordered sample from ``_PARALLEL_TRANSPOSE_VALUES`` values is transposed by the
    compiled kernel, others by numpy, and its features sorted on every thread: the same edges
    either way, and on one thread."""
    import numba

    from smartboost.binning import _PARALLEL_TRANSPOSE_VALUES

    rng = np.random.default_rng(5)
    n_features = 7
    X = (rng.standard_normal((_PARALLEL_TRANSPOSE_VALUES // n_features + 1, n_features)) * 10).round(1).astype(dtype)
    X[rng.random(X.shape) < 0.01] = np.nan
    X[:, 3] = 0.0
    c_ordered = BinMapper(sample_cnt=X.shape[0]).fit(X)
    assert c_ordered.same_edges(BinMapper(sample_cnt=X.shape[0]).fit(np.asfortranarray(X)))
    assert c_ordered.n_bins[3] == 1 and c_ordered.n_bins.max() > 200
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one_thread = BinMapper(sample_cnt=X.shape[0]).fit(X)
    finally:
        numba.set_num_threads(threads)
    assert c_ordered.same_edges(one_thread)


def test_subsample_is_seeded():
    rng = np.random.default_rng(2)
    X = rng.standard_normal((5000, 3))
    a = BinMapper(sample_cnt=1000, seed=1).fit(X)
    b = BinMapper(sample_cnt=1000, seed=1).fit(X)
    c = BinMapper(sample_cnt=1000, seed=2).fit(X)
    assert a.same_edges(b) and not a.same_edges(c)


def test_thresholds_reproduce_bins():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((3000, 1)) * 1e3
    mapper, binned = _fit_transform(X, max_bin=31)
    t = mapper.thresholds(0)
    assert t[-1] == np.inf
    for b in range(mapper.n_bins[0]):
        np.testing.assert_array_equal(binned.row_major[:, 0] <= b, X[:, 0] <= t[b])


@pytest.mark.parametrize("max_bin", [3, 63, 255, 1023])
def test_threshold_table_holds_every_features_thresholds(max_bin):
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n = 2000
    df = pd.DataFrame({"wide": rng.normal(size=n) * 1e3, "three": rng.integers(0, 3, n).astype(float),
                       "cat": pd.Categorical(rng.choice(list("pqrst"), n)), "constant": np.zeros(n),
                       "half_missing": np.where(rng.random(n) < 0.5, np.nan, rng.normal(size=n)),
                       "cat2": pd.Categorical(rng.choice(list("xy"), n))})
    mapper = sb.Dataset(df, params={"max_bin": max_bin}).bin_mapper
    for m in (mapper, BinMapper.from_dict(json.loads(json.dumps(mapper.to_dict())))):
        table, offsets = m.threshold_table
        for f in range(m.n_features):
            np.testing.assert_array_equal(table[offsets[f]:offsets[f] + m.n_bins[f]], m.thresholds(f))
        assert table.size == m.n_bins.sum()


def test_edges_never_merge_adjacent_floats():
    a = 1.0
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [b], [a], [b]])
    mapper, binned = _fit_transform(X, min_data_in_bin=1)
    assert mapper.n_bins[0] == 3  # and the empty zero bin
    np.testing.assert_array_equal(binned.row_major[:, 0], [1, 2, 1, 2])



@pytest.mark.parametrize("seed", range(4))
def test_distinct_values_and_counts_of_sorted_runs(seed):
    """Runs of every length (the galloping search's steps and halvings), signed zeros counted
    as one value with the implicit zeros of sparse columns, distinct values one a run."""
    from smartboost._kernels.binning import _distinct_counts

    rng = np.random.default_rng(seed)
    pool = np.array([-3.0, -1e-300, -0.0, 0.0, 1e-300, 0.5, 2.0, 7.0])
    for _ in range(300):
        n = int(rng.integers(0, 300))
        if rng.random() < 0.2:
            values = np.sort(rng.standard_normal(n))
        else:
            few = pool[rng.random(pool.size) < 0.5]  # often one or two values: long runs
            values = np.sort(rng.choice(few if few.size else pool, n))
        n_zeros = int(rng.integers(0, 4)) * int(rng.integers(0, 50))
        distinct, counts = np.full(n + 1, np.nan), np.full(n + 1, -1)
        d = _distinct_counts(values, n_zeros, distinct, counts)
        distinct, counts = distinct[:d], counts[:d]
        expected, expected_counts = np.unique(np.concatenate([values, np.zeros(n_zeros)]), return_counts=True)
        np.testing.assert_array_equal(distinct, expected)
        np.testing.assert_array_equal(counts, expected_counts)


@pytest.mark.parametrize("max_bin", [2, 3, 255, 256, 65535])
def test_max_bin_extremes(max_bin):
    X = np.arange(1.0, 70_001.0).reshape(-1, 1)
    mapper, binned = _fit_transform(X, max_bin=max_bin, min_data_in_bin=1)
    assert mapper.n_bins[0] == max_bin
    assert binned.row_major.max() == max_bin - 1


def test_most_populated_bins_count_rows_per_cell_and_take_the_lowest_of_ties():
    """Rows counted in four tables (features of few bins, a row count not a multiple of 4) and
    in place (255 bins on 302 rows)."""
    from smartboost._kernels.histogram import bin_counts
    from smartboost.binning import histogram_cells, most_populated_bins

    rng = np.random.default_rng(8)
    n_bins = np.array([1, 2, 5, 3, 255])
    column_major = np.stack([rng.integers(0, n + 1, 302) for n in n_bins]).astype(np.uint8)
    column_major[3, :] = np.repeat([0, 2], 151)  # a tie: the lower bin wins
    offsets, n_cells = histogram_cells(n_bins)
    counts = np.zeros(n_cells, np.int64)
    bin_counts(column_major, offsets, counts)
    bins, rows = most_populated_bins(counts, n_bins)
    for f, n in enumerate(n_bins):
        expected = np.bincount(column_major[f], minlength=n + 1)
        np.testing.assert_array_equal(counts[offsets[f]:offsets[f] + n + 1], expected)
        assert (bins[f], rows[f]) == (np.argmax(expected), expected.max())
    assert bins[3] == 0


def test_sparse_features_go_sparse_within_the_bytes_of_their_dense_bins():
    """Features of a concentrated bin go sparse first; those at half to 0.75 of the rows only on
    the bytes the others saved, so the listed cells never take more than the dense bins."""
    fraction = np.array([0.3, 0.6, 0.95, 0.55, 0.8])
    # 4-byte cells: 0.95 saves 0.8 byte a row, 0.8 saves 0.2; 0.6 then costs 0.6 more, 0.55 0.8
    assert sparse_feature_mask(fraction, 1).tolist() == [False, True, True, False, True]
    assert not sparse_feature_mask(np.array([0.6, 0.6, 0.7]), 1).any()  # each costs more than a byte
    assert sparse_feature_mask(np.array([0.6, 0.6, 0.4]), 2).tolist() == [True, True, False]  # 2-byte bins
    assert not sparse_feature_mask(np.zeros(0), 1).any()
