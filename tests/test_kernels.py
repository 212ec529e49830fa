"""Histogram, split, partition and prediction kernels against direct numpy references."""

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from numba import jit, njit

from smartboost._kernels.exp import exp as vector_exp
from smartboost._kernels.gradients import unit_exponents, fixed_point_extents, to_fixed_point
from smartboost._kernels.histogram import (build_histogram, build_histogram_columns, build_histogram_parallel,
                                          gather_columns, gather_rows, rows_far_apart)
from smartboost._kernels.partition import partition, partition_parallel
from smartboost._kernels.split import (find_best_split, in_units, leaf_score, leaf_values, least_child_hessian,
                                       split_scratch, subtract_and_find_splits, tree_units)
from smartboost._kernels.records import Candidates, Cells, LocalRows, NodeSums, SplitParams, ThresholdRule, Units
from smartboost.binning import BinMapper
from smartboost import grower
from smartboost.grower import NodeRows
from smartboost._kernels.selection import draw_pairs


def _binned(n=4000, n_features=4, seed=0, missing_rate=0.1, max_bin=16, sparse_features=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, n_features))
    X[rng.random(X.shape) < missing_rate] = np.nan
    if sparse_features:  # mostly-zero columns, one of them binary
        X[:, :sparse_features] *= rng.random((n, sparse_features)) < 0.05
        X[:, 0] = X[:, 0] != 0
    mapper = BinMapper(max_bin=max_bin).fit(X)
    binned = mapper.transform(X)
    layout = binned.histogram_layout
    g = rng.integers(-1000, 1000, n).astype(np.int64)
    h = rng.integers(1, 1000, n).astype(np.int64)
    return X, mapper, binned, layout.offsets, layout.n_cells, g, h


def _pack(feature, bins, n_features):
    """(feature, threshold) pairs, sorted, in the split kernels' packed layout (and the mask of
    features that have one)."""
    packed = np.concatenate([n_features + 1 + np.searchsorted(feature, np.arange(n_features + 1)), bins])
    mask = np.zeros(n_features, np.bool_)
    mask[feature] = True
    return mask, packed.astype(np.int64)


def _reference_histogram(binned, offsets, n_cells, rows, g, h):
    hist = np.zeros((n_cells, 2), np.int64)
    for f in range(binned.row_major.shape[1]):
        cells = offsets[f] + binned.row_major[rows, f]
        np.add.at(hist[:, 0], cells, g[rows])
        np.add.at(hist[:, 1], cells, h[rows])
    return hist


@pytest.mark.parametrize("n_rows", [1500, 150])  # of 4,000: rows close together, and far apart (prefetched)
@pytest.mark.parametrize("sparse_features", [0, 3, 6])
@pytest.mark.parametrize("n_chunks", [1, 2, 3, 7])
@pytest.mark.parametrize("max_bin", [16, 1000])  # one-byte and two-byte bins
def test_histogram_matches_reference_and_is_chunk_independent(n_chunks, sparse_features, n_rows, max_bin):
    _, _, binned, offsets, n_cells, g, h = _binned(n_features=6, sparse_features=sparse_features, max_bin=max_bin)
    # two-byte bins once a feature has more than 255 bins (the mostly-zero features have fewer)
    assert binned.row_major.dtype == (np.uint16 if max_bin > 255 and sparse_features < 6 else np.uint8)
    layout = binned.histogram_layout
    assert layout.default_cells.size == sparse_features and layout.dense_offsets.size == 6 - sparse_features
    rows = np.sort(np.random.default_rng(1).choice(4000, n_rows, replace=False)).astype(np.uint32)
    assert rows_far_apart(rows, 0, n_rows, 8) == (n_rows == 150)
    expected = _reference_histogram(binned, offsets, n_cells, rows, g, h)
    gh = np.column_stack([g, h]).astype(np.int32)
    totals = (g[rows].sum(), h[rows].sum())
    serial = np.empty((n_cells, 2), np.int64)
    build_histogram(rows, 0, rows.size, *layout.arrays, gh, *totals, serial)
    np.testing.assert_array_equal(serial, expected)
    parallel = np.empty_like(serial)
    build_histogram_parallel(rows, 0, rows.size, *layout.arrays, gh, *totals, parallel,
                             np.empty((n_chunks, n_cells, 2), np.int64))
    np.testing.assert_array_equal(parallel, expected)


@pytest.mark.parametrize("n_blocks", [1, 2, 3, 7, 9])
@pytest.mark.parametrize("max_bin", [16, 1000])
def test_histogram_over_column_blocks_matches_reference(n_blocks, max_bin):
    _, _, binned, offsets, n_cells, g, h = _binned(n_features=8, missing_rate=0.2, max_bin=max_bin)
    layout = binned.histogram_layout
    rows = np.sort(np.random.default_rng(2).choice(4000, 1700, replace=False)).astype(np.uint32)
    gh = np.column_stack([g, h]).astype(np.int32)
    hist = np.full((n_cells, 2), -7, np.int64)  # every cell must be overwritten
    build_histogram_columns(rows, 0, rows.size, *layout.arrays[:4], gh, hist, n_blocks)
    np.testing.assert_array_equal(hist, _reference_histogram(binned, offsets, n_cells, rows, g, h))


def _record_column_blocks(monkeypatch) -> list:
    """The list to which every tree appends whether it builds its histograms over column blocks."""
    choices = []
    use_features = NodeRows.use_features

    def recording(self, features):
        use_features(self, features)
        choices.append(self._column_blocks)
    monkeypatch.setattr(NodeRows, "use_features", recording)
    return choices


@pytest.mark.parametrize("sampling", [{}, {"sampling": "bernoulli", "sample_rate": 0.15}])  # 0.15: compact
@pytest.mark.parametrize("width", ["wide", "small data"])
def test_dense_data_builds_histograms_over_column_blocks(sampling, width, monkeypatch):
    """From HIST_COLUMNS_PER_THREAD columns per thread, and from HIST_SMALL_DATA_COLUMNS_PER_THREAD
    on rows that fit in HIST_SMALL_DATA_BYTES, trees grown with 2 threads build their histograms
    over column blocks (on every row, and on a sample's compact copy) and equal the 1-thread
    trees."""
    import smartboost as sb
    choices = _record_column_blocks(monkeypatch)
    per_thread = grower.HIST_COLUMNS_PER_THREAD if width == "wide" else grower.HIST_SMALL_DATA_COLUMNS_PER_THREAD
    n_rows, n_columns = 3000, 2 * per_thread
    rng = np.random.default_rng(3)
    X = rng.standard_normal((n_rows, n_columns))
    y = X[:, 0] + X[:, 5] * X[:, 9] + 0.1 * rng.standard_normal(n_rows)
    params = {"objective": "regression", "num_leaves": 15, "verbosity": -1, **sampling}
    two = sb.train({**params, "num_threads": 2}, sb.Dataset(X, y), 3).predict(X)
    assert choices and all(choices)
    one = sb.train({**params, "num_threads": 1}, sb.Dataset(X, y), 3).predict(X)
    np.testing.assert_array_equal(two, one)
    assert not choices[-1]  # one thread: no blocks


@pytest.mark.parametrize("shape", ["narrower", "larger"])
def test_narrower_or_larger_data_builds_no_column_blocks(shape, monkeypatch):
    """Below HIST_SMALL_DATA_COLUMNS_PER_THREAD columns per thread, or above HIST_SMALL_DATA_BYTES
    of rows (below HIST_COLUMNS_PER_THREAD), histograms go by row chunks."""
    import smartboost as sb
    choices = _record_column_blocks(monkeypatch)
    monkeypatch.setattr(grower, "HIST_SMALL_DATA_BYTES", 2000 * 40 - 1)  # the larger set's rows: 2,000 x (32 + 8)
    n_columns = 2 * grower.HIST_SMALL_DATA_COLUMNS_PER_THREAD - (1 if shape == "narrower" else -8)
    X = np.random.default_rng(4).standard_normal((2000, n_columns))
    sb.train({"objective": "regression", "num_leaves": 7, "num_threads": 2, "verbosity": -1},
             sb.Dataset(X, X[:, 0]), 2)
    assert choices and not any(choices)


@pytest.mark.parametrize("compact", [False, True])
@pytest.mark.parametrize("sparse_features", [0, 3])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("max_bin", [16, 1000])
def test_histograms_of_some_features_from_their_compact_copy(n_threads, sparse_features, compact, max_bin,
                                                              monkeypatch):
    """RGBM's per-tree features: histograms read a compact copy of their bins for the tree's rows
    (indexed by row id, or by position for a compact tree); their cells (and the sparse
    features') equal the full build, the other cells are not written."""
    monkeypatch.setattr(grower, "COMPACT_ROWS_FRACTION", 1.0 if compact else 0.0)
    _, mapper, binned, offsets, n_cells, _, _ = _binned(n_features=6, sparse_features=sparse_features,
                                                        max_bin=max_bin)
    rng = np.random.default_rng(2)
    rows = np.sort(rng.choice(4000, 1500, replace=False)).astype(np.uint32)
    chosen = np.array([True, False, False, True, False, True])
    source = NodeRows(binned, n_threads)
    source.set_rows(rows, rng.standard_normal(4000), rng.random(4000), np.ones(4000))
    source.use_features(chosen)
    g, h, _ = source.to_fixed_point(*unit_exponents(*source.extents()))
    assert source.is_compact == compact
    hist = np.full((n_cells, 2), -7, np.int64)
    source.histogram(0, g, h, hist)
    gh = np.zeros((4000, 2), np.int64)
    gh[rows] = source.gh[:rows.size] if compact else source.gh[rows]
    expected = _reference_histogram(binned, offsets, n_cells, rows, gh[:, 0], gh[:, 1])
    dense = binned.histogram_layout.dense_features
    for f in range(6):
        cells = slice(offsets[f], offsets[f] + mapper.n_bins[f] + 1)
        written = chosen[f] or f not in dense
        np.testing.assert_array_equal(hist[cells], expected[cells] if written else -7)


@pytest.mark.parametrize("width", [6, 136])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_gather_rows_copies_whole_rows_or_chosen_columns(width, dtype):
    """gather_rows copies the rows' bins in order: every column (None) or the listed ones."""
    rng = np.random.default_rng(width)
    bins = rng.integers(0, np.iinfo(dtype).max + 1, (3000, width)).astype(dtype)
    ids = np.sort(rng.choice(3000, 1100, replace=False)).astype(np.uint32)
    chosen = np.array([width - 1, 0, 3], np.uint32)
    for columns, expected in ((None, bins[ids]), (chosen, bins[ids][:, chosen])):
        out = np.zeros(expected.shape, dtype)
        gather_rows(ids, bins, columns, out)
        np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("sparse_features", [0, 3])
@pytest.mark.parametrize("wide_row_bytes", [64, 1])
@pytest.mark.parametrize("max_bin", [16, 1000])
def test_compact_tree_rows_split_like_the_rows_themselves(sparse_features, wide_row_bytes, max_bin, monkeypatch):
    """A compact tree (its rows' bins copied, positions in the row list) partitions and builds
    histograms exactly as the same rows read in place, and gives their ids back in order, whether
    its partitions read columns of the compact copy or the features' gathered bins."""
    monkeypatch.setattr(grower, "WIDE_ROW_BYTES", wide_row_bytes)
    _, _, binned, _, n_cells, _, _ = _binned(n_features=6, sparse_features=sparse_features, max_bin=max_bin)
    rng = np.random.default_rng(5)
    rows = np.sort(rng.choice(4000, 900, replace=False)).astype(np.uint32)
    grad, hess = rng.standard_normal(4000), rng.random(4000)
    results = []
    for fraction in (0.0, 1.0):
        monkeypatch.setattr(grower, "COMPACT_ROWS_FRACTION", fraction)
        source = NodeRows(binned, 2)
        source.set_rows(rows.copy(), grad, hess, np.ones(4000))
        source.use_features(None)
        g, h, _ = source.to_fixed_point(*unit_exponents(*source.extents()))
        hists = []
        for node, (feature, threshold) in enumerate([(1, 7), (4, 3), (5, 9)]):  # nodes 0, 1, 2 -> children
            source.partition(node, 2 * node + 1, 2 * node + 2, feature, threshold, node == 1)
            hist = np.empty((n_cells, 2), np.int64)
            source.histogram(2 * node + 1, g, h, hist)
            hists.append(hist)
        start, end = source.segments(np.arange(7))
        results.append((source.is_compact, source.row_ids().copy(), start, end, hists))
    (flat, *plain), (compact, *copied) = results
    assert compact and not flat
    for a, b in zip(plain, copied):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("params", [
    {"num_leaves": 40},
    {"grow_policy": "depthwise", "max_depth": 4, "num_leaves": 0, "num_threads": 1},
    {"num_leaves": 2},
    {"sampling": "mvs", "sample_rate": 0.15, "min_data_in_leaf": 5},  # compact rows
    {"colsample_bytree": 0.5, "sampling": "uniform", "sample_rate": 0.15},  # some features' cells
    {"selection_type": 1, "selection_t": 30, "lambda_l1": 0.5, "min_gain_to_split": 0.1},  # chosen thresholds
    {"colsample_bynode": 0.5, "grow_policy": "depthwise", "max_depth": 5},  # RGBM's draws per node
    {"selection_type": 1, "selection_t": 25, "selection_scope": "node", "sampling": "mvs", "sample_rate": 0.15},
], ids=["leafwise", "depthwise", "stump", "compact", "some features", "type 1", "per node", "type 1 per node"])
@pytest.mark.parametrize("wide_row_bytes", [64, 1])  # 1: a compact tree's partitions gather their columns
def test_rows_split_elsewhere_grow_the_trees_of_local_rows(params, wide_row_bytes, monkeypatch):
    """The growth loop stopped at every split for the rows to be split elsewhere (as
    ``smartboost.dask``'s workers do: partition, the left child's histogram) grows exactly the
    trees it grows on local rows, with missing values and sparse features, on every layout, and
    with RGBM's per-node draws."""
    import smartboost as sb
    monkeypatch.setattr(grower, "WIDE_ROW_BYTES", wide_row_bytes)
    X, _, _, _, _, _, _ = _binned(n=6000, n_features=6, sparse_features=2, max_bin=32)
    y = np.nan_to_num(X[:, 3]) + np.nan_to_num(X[:, 4]) * (X[:, 1] > 0) + 0.3 * np.cos(np.arange(6000))
    full = {"objective": "regression", "verbosity": -1, **params}
    local = sb.train(full, sb.Dataset(X, y), 4)

    def split_many(self, state):
        for j in range(state.counts[0]["n_pending"]):
            node, left, feature, bin_, missing_left, _, gl, hl = state.splits[j, :8]
            left_set = state.splits[j, 10:].view(np.uint64) if self.data.mapper.categorical[feature] else None
            n_left, _ = self.partition(node, left, left + 1, feature, bin_, bool(missing_left), left_set)
            slot = state.pending[j, 1]
            if slot >= 0:
                self.histogram(left, gl, hl, state.pool[slot])
            state.pending[j, 2], state.pending[j, 3] = n_left, left if slot >= 0 else -1

    asked = []
    monkeypatch.setattr(NodeRows, "local_rows", lambda self: asked.append(1))
    monkeypatch.setattr(NodeRows, "root_histogram", lambda self, g, h, out: self.histogram(0, g, h, out),
                        raising=False)
    monkeypatch.setattr(NodeRows, "split_many", split_many, raising=False)
    elsewhere = sb.train(full, sb.Dataset(X, y), 4)
    assert len(asked) == 4 and [tree.value.size for tree in local.trees] == [
        tree.value.size for tree in elsewhere.trees]
    for a, b in zip(local.trees, elsewhere.trees):
        for field in ("feature", "bin_threshold", "threshold", "missing_left", "left", "right", "value", "count"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)
    np.testing.assert_array_equal(local.predict(X), elsewhere.predict(X))


@pytest.mark.parametrize("params", [{"num_leaves": 0, "max_depth": 12, "min_data_in_leaf": 2},
                                    {"num_leaves": 0, "max_depth": 7, "grow_policy": "depthwise"}])
def test_a_tree_given_more_slots_midway_is_the_tree_of_a_large_pool(params, monkeypatch):
    """Histogram slots are sized up front by the leaves a tree may have, at most
    ``_MAX_POOL_BYTES``; a tree that needs more (no leaf limit) stops, is given more, and grows
    the tree it grows with enough slots from the start."""
    import smartboost as sb
    X, y = _binned(n=3000, n_features=5)[0], np.cos(np.arange(3000) / 7.0)
    full = {"objective": "regression", "verbosity": -1, **params}
    roomy = sb.train(full, sb.Dataset(X, y), 3)
    _, _, binned, _, n_cells, _, _ = _binned(n=3000, n_features=5)
    monkeypatch.setattr(grower, "_MAX_POOL_BYTES", 3 * 16 * n_cells)  # three slots
    enlarged = []
    monkeypatch.setattr(grower, "_enlarged", lambda state, grow=grower._enlarged: enlarged.append(1) or grow(state))
    tight = sb.train(full, sb.Dataset(X, y), 3)
    assert enlarged and roomy.trees[0].n_leaves > 3
    for a, b in zip(roomy.trees, tight.trees):
        for field in ("feature", "bin_threshold", "missing_left", "left", "value", "count"):
            np.testing.assert_array_equal(getattr(a, field), getattr(b, field), err_msg=field)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_gather_columns_copies_the_rows_given(dtype):
    column_major = np.random.default_rng(3).integers(0, np.iinfo(dtype).max + 1, (5, 3000)).astype(dtype)
    rows = np.arange(0, 3000, 7, dtype=np.uint32)
    out = np.zeros((3000, 2), dtype)
    gather_columns(rows, column_major, np.array([4, 1]), out)
    np.testing.assert_array_equal(out[rows], column_major[[4, 1]][:, rows].T)
    assert not out[np.setdiff1d(np.arange(3000), rows)].any()


def _units(*rows_and_values):
    """The exponents of the fixed-point units of a tree grown on these rows (``NodeRows.begin_tree``'s)."""
    return unit_exponents(*fixed_point_extents(*rows_and_values))


@pytest.mark.parametrize("by_position", [False, True])
def test_fixed_point_without_weights_equals_unit_weights(by_position):
    """``weight=None`` (unweighted data) gives what weights of 1 give, and real weights count."""
    rng = np.random.default_rng(4)
    grad, hess, weight = rng.standard_normal(3000) * 7, rng.random(3000), rng.random(3000) * 3
    rows = np.sort(rng.choice(3000, 1000, replace=False)).astype(np.uint32)
    units = _units(rows, grad, hess, None, False)
    assert units == _units(rows, grad, hess, np.ones(3000), False)
    out = [np.zeros((3000, 2), np.int32) for _ in range(3)]
    sums = [to_fixed_point(rows, grad, hess, w, False, *units, gh, by_position)
            for w, gh in zip((None, np.ones(3000), weight), out)]
    assert sums[0] == sums[1] != sums[2]
    np.testing.assert_array_equal(out[0], out[1])
    written = np.arange(1000) if by_position else rows
    np.testing.assert_array_equal(out[0][written, 0], np.rint(np.ldexp(grad[rows], -units[0])))
    np.testing.assert_array_equal(out[2][written, 0], np.rint(np.ldexp(grad[rows] * weight[rows], -units[0])))


@pytest.mark.parametrize("by_position", [False, True])
def test_fixed_point_of_gradients_in_row_order_equals_by_row_id(by_position):
    """``grad_by_position``: the rows' gradients given in the order of ``rows`` (smart2's
    corrected ones) give what the same values indexed by row id give."""
    rng = np.random.default_rng(5)
    grad, hess, weight = rng.standard_normal(3000) * 7, rng.random(3000), rng.random(3000) * 3
    rows = np.sort(rng.choice(3000, 1000, replace=False)).astype(np.uint32)
    in_order = grad[rows]
    for w in (None, weight):
        units = _units(rows, grad, hess, w, False)
        assert _units(rows, in_order, hess, w, True) == units
        by_id, ordered = np.zeros((3000, 2), np.int32), np.zeros((3000, 2), np.int32)
        assert (to_fixed_point(rows, grad, hess, w, False, *units, by_id, by_position)
                == to_fixed_point(rows, in_order, hess, w, True, *units, ordered, by_position))
        np.testing.assert_array_equal(by_id, ordered)


def test_histogram_subtraction_equals_direct_build():
    _, mapper, binned, offsets, n_cells, g, h = _binned()
    rows = np.arange(4000, dtype=np.uint32)
    parent = _reference_histogram(binned, offsets, n_cells, rows, g, h)
    before = parent.copy()
    small_rows, large_rows = rows[:1000], rows[1000:]
    small = _reference_histogram(binned, offsets, n_cells, small_rows, g, h)
    params = SplitParams(0.0, 1.0, 0.0, 0.0, 0.0)
    built = np.array([True, True, False, True])  # the tree's histograms leave feature 2 out
    candidates = Candidates(built, None)
    subtract_and_find_splits(parent, small, Cells(offsets, mapper.n_bins), built, candidates,
                             NodeSums(g[small_rows].sum(), h[small_rows].sum(), 1000), False, candidates,
                             NodeSums(g[large_rows].sum(), h[large_rows].sum(), 3000), False, Units(1.0, 1.0), params,
                             split_scratch(mapper.n_bins))
    large = _reference_histogram(binned, offsets, n_cells, large_rows, g, h)
    for f in range(4):
        cells = slice(offsets[f], offsets[f] + mapper.n_bins[f] + 1)
        np.testing.assert_array_equal(parent[cells], large[cells] if built[f] else before[cells])


@pytest.mark.parametrize("built", [[True] * 6, [True, False, True, True, False, True], [False] * 5 + [True]])
@pytest.mark.parametrize("n_blocks", [2, 3, 8])
def test_small_child_built_inside_the_scans_equals_built_before(built, n_blocks):
    """``subtract_and_find_splits`` given the rows builds the smaller child's histogram in its
    parallel loop, by blocks of the built features (``LocalRows.scan_build_rows``): the same
    splits, the same larger child, and the smaller child's cells of every built feature, as when
    the histogram is built first; with more blocks than features too."""
    _, mapper, binned, offsets, n_cells, g, h = _binned(n=3000, n_features=6, seed=2, max_bin=40)
    rows = np.random.default_rng(3).permutation(3000).astype(np.uint32)  # a node's rows in any order
    start, end = 1000, 1400  # the smaller child: rows[start:end] of the parent rows[1000:3000]
    small_rows, large_rows = rows[start:end], rows[end:]
    parent = _reference_histogram(binned, offsets, n_cells, rows[start:], g, h)
    small = _reference_histogram(binned, offsets, n_cells, small_rows, g, h)
    built = np.array(built)
    candidates, cells = Candidates(built, None), Cells(offsets, mapper.n_bins)
    small_sums = NodeSums(g[small_rows].sum(), h[small_rows].sum(), small_rows.size)
    large_sums = NodeSums(g[large_rows].sum(), h[large_rows].sum(), large_rows.size)
    args = (cells, built, candidates, small_sums, True, candidates, large_sums, True, Units(1e-3, 1e-3),
            SplitParams(0.0, 1.0, 0.0, 1e-3, 5.0), split_scratch(mapper.n_bins))
    layout = binned.histogram_layout
    assert layout.dense_offsets.size == 6  # every feature dense, as the grower asks
    gh = np.column_stack([g, h]).astype(np.int32)
    local = LocalRows(rows, None, gh, np.zeros((n_blocks, n_cells, 2), np.int64), layout.arrays, False, None, 1000)
    expected_parent = parent.copy()
    expected = subtract_and_find_splits(expected_parent, small, *args)
    in_scans_parent, in_scans_small = parent.copy(), np.full_like(small, -7)  # garbage, as a reused slot
    assert subtract_and_find_splits(in_scans_parent, in_scans_small, *args, local, True, start, end) == expected
    assert expected[0].feature >= 0 and expected[1].feature >= 0
    for f in np.flatnonzero(built):
        cells_f = slice(offsets[f], offsets[f] + mapper.n_bins[f] + 1)
        np.testing.assert_array_equal(in_scans_small[cells_f], small[cells_f])
        np.testing.assert_array_equal(in_scans_parent[cells_f], expected_parent[cells_f])


def _brute_force_split(X, binned, mapper, g, h, params, unit=1e-3, pairs=None):
    """Every (feature, threshold, missing direction) evaluated directly from the rows (only the
    (feature, threshold) ``pairs`` when given). Of tied splits (gains within 1e-9) the lowest
    feature's wins, then missing-left, then the highest bin, except among missing-right ones
    in a node with missing values, the lowest (LightGBM's order)."""
    l1, l2, min_gain, min_hess, min_data = params[:5]
    sign_leaves = params.sign_leaves
    G, H = g.sum() * unit, h.sum() * unit

    def score(g_sum, h_sum):  # sign leaves: |G| (the leaf's correlation); else the Newton score
        return abs(g_sum) if sign_leaves else leaf_score(g_sum, h_sum, l1, l2)

    parent = score(G, H)
    found = []
    for f in range(X.shape[1]):
        bins = binned.row_major[:, f]
        missing = bins == mapper.n_bins[f]
        has_missing = missing.any()
        for b, missing_left in itertools.product(range(mapper.n_bins[f]), (False, True)):
            if missing_left and not has_missing or pairs is not None and (f, b) not in pairs:
                continue
            left = (bins <= b) & ~missing | (missing & missing_left)
            if left.all() or not left.any():
                continue
            gl, hl = g[left].sum() * unit, h[left].sum() * unit
            gr, hr = G - gl, H - hl
            if min(hl, hr) < min_hess or min(hl, hr) * len(g) / H < min_data:
                continue
            gain = (1.0 if sign_leaves else 0.5) * (score(gl, hl) + score(gr, hr) - parent)
            if gain - min_gain > 1e-12 * parent:
                found.append((gain, f, b, missing_left, has_missing))
    if not found:
        return -np.inf, None
    top = max(gain for gain, *_ in found)
    tied = [x for x in found if x[0] > top - 1e-9]
    gain, f, b, missing_left, has_missing = min(
        tied, key=lambda x: (x[1], not x[3], x[2] if x[4] and not x[3] else -x[2]))
    return gain, (f, b, missing_left)


@pytest.mark.parametrize("seed, params", [
    (0, [0.0, 0.0, 0.0, 0.0, 0.0]),
    (1, [0.0, 1.0, 0.0, 0.0, 0.0]),
    (2, [5.0, 2.0, 0.0, 0.0, 0.0]),
    (3, [0.0, 1.0, 0.0, 30.0, 0.0]),
    (4, [0.0, 1.0, 0.0, 0.0, 40.0]),
    (5, [0.0, 1.0, 1e3, 0.0, 0.0]),
    (6, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
    (7, [0.0, 1.0, 0.0, 30.0, 0.0, 1.0]),
    (8, [0.0, 0.0, 0.0, 0.0, 40.0, 1.0]),
])
@pytest.mark.parametrize("share", [None, 0.3])
def test_split_finding_matches_brute_force(seed, params, share):
    """Every threshold, or (share) only a random third of the (feature, threshold) pairs (RGBM Type 1);
    Newton gains, and sign leaves' |GL| + |GR| - |G| (``weak_learner="sign"``)."""
    X, mapper, binned, offsets, n_cells, g, h = _binned(n=200, n_features=3, seed=seed, missing_rate=0.2,
                                                         max_bin=8)
    rows = np.arange(200, dtype=np.uint32)
    hist = _reference_histogram(binned, offsets, n_cells, rows, g, h)
    params = SplitParams(*params[:5], sign_leaves=params[5] if len(params) > 5 else 0.0)
    usable, packed, pairs = np.ones(3, np.bool_), None, None
    if share is not None:
        every = [(f, b) for f in range(3) for b in range(mapper.n_bins[f])]
        keep = np.sort(np.random.default_rng(seed).choice(len(every), int(share * len(every)), replace=False))
        pairs = {every[k] for k in keep}
        usable, packed = _pack(np.array([every[k][0] for k in keep]),
                                         np.array([every[k][1] for k in keep]), 3)
    feature, b, missing_left, gain, gl, hl, _ = find_best_split(
        hist, Cells(offsets, mapper.n_bins), Candidates(usable, packed), NodeSums(g.sum(), h.sum(), 200),
        Units(1e-3, 1e-3), params, split_scratch(mapper.n_bins))
    expected_gain, expected = _brute_force_split(X, binned, mapper, g, h, params, pairs=pairs)
    if expected is None:
        assert feature == -1
        return
    assert gain == pytest.approx(expected_gain, rel=1e-12)
    f, eb, eml = expected
    assert (feature, b) == (f, eb)
    if binned.missing_count[f] > 0:
        assert missing_left == eml
    bins = binned.row_major[:, feature]
    left = (bins <= b) & (bins != mapper.n_bins[feature]) | ((bins == mapper.n_bins[feature]) & missing_left)
    assert (gl, hl) == (g[left].sum(), h[left].sum())


def test_per_feature_scans_compile_without_reference_counting():
    """The scans a tree runs features x nodes times take no reference on their arrays (see
    ``split._scan_kernel``): no NRT increment or decrement in their own compiled code. Each is
    compiled afresh with its own options (one loaded from numba's cache has no IR to read)."""
    import re

    from smartboost._kernels import split

    _, mapper, _, offsets, n_cells, _, _ = _binned(n=200, n_features=3, seed=0, missing_rate=0.2, max_bin=8)
    hist, scratch = np.zeros((n_cells, 2), np.int64), split_scratch(mapper.n_bins)
    sums, units, params = NodeSums(0, 200, 200), Units(1e-3, 1e-3), SplitParams(0.0, 0.0, 0.0, 1e-3, 1.0)
    first, n_bins, zero = offsets[1], mapper.n_bins[1], np.int64(0)
    for kernel, args in (
            (split._scan, (hist, Cells(offsets, mapper.n_bins), None, np.int64(1), sums, units, params, scratch)),
            (split.scan_feature, (hist, first, n_bins, None, sums, units, params, np.bool_(True), scratch[0])),
            (split._scan_thresholds, (hist, first, n_bins, None, zero, zero, 0.0, 200.0, 1e-3, 1e-3, 1e-3, 0.0, 1.0,
                                      zero, np.int64(n_bins - 1), np.bool_(True), scratch[0])),
            (split._count_prefix, (hist, first, n_bins, 0.5, scratch[0, 3, :n_bins].view(np.int64))),
            (split._node_counts, (hist, first, n_bins, 0.5, params, scratch[0, 3, :n_bins].view(np.int64))),
            (split._count_window, (scratch[0, 3, :n_bins].view(np.int64), n_bins, np.int64(200), 20.0,
                                   np.bool_(True), np.int64(0))),
            (split._missing_right_count, (np.int64(40), 0.5, np.bool_(True), np.bool_(True))),
            (split._prefix_sums, (hist, first, n_bins, 0.5, np.bool_(True), scratch[0, 0].view(np.int64),
                                   scratch[0, 1].view(np.int64), scratch[0, 3, :n_bins].view(np.int64))),
            (split.split_sums, (hist, first, n_bins, np.int64(1), False, np.int64(200)))):
        fresh = jit(**kernel.targetoptions)(kernel.py_func)  # its options hold nopython=True
        fresh(*args)
        (overload,) = fresh.overloads.values()
        ir = overload.library.get_llvm_str()
        body = re.search(r'define [^\n]*@"?' + re.escape(overload.fndesc.mangled_name) + r'"?\(.*?\n}', ir, re.S)
        assert body is not None and "NRT_incref" not in body.group(0) and "NRT_decref" not in body.group(0), kernel


@pytest.mark.parametrize("seed", range(4))
def test_scans_over_every_candidate_equal_the_full_scans(seed):
    """Type 1 with every (feature, threshold) pair listed gives Type 0's splits, bit for bit."""
    _, mapper, binned, offsets, n_cells, g, h = _binned(n=3000, n_features=5, seed=seed, max_bin=64)
    rows = np.arange(3000, dtype=np.uint32)
    usable = np.ones(5, np.bool_)
    feature = np.repeat(np.arange(5), mapper.n_bins)
    bins = np.concatenate([np.arange(n) for n in mapper.n_bins])
    _, every = _pack(feature, bins, 5)
    params = SplitParams(0.5, 1.0, 0.0, 2.0, 10.0)
    hist = _reference_histogram(binned, offsets, n_cells, rows, g, h)
    scratch = split_scratch(mapper.n_bins)
    cells, units, node = Cells(offsets, mapper.n_bins), Units(1e-3, 1e-3), NodeSums(g.sum(), h.sum(), 3000)
    full = find_best_split(hist, cells, Candidates(usable, None), node, units, params, scratch)
    assert full.feature >= 0
    assert find_best_split(hist, cells, Candidates(usable, every), node, units, params, scratch) == full
    small_rows = rows[::3]
    small = _reference_histogram(binned, offsets, n_cells, small_rows, g, h)
    small_sums = NodeSums(g[small_rows].sum(), h[small_rows].sum(), small_rows.size)
    large_sums = NodeSums(g.sum() - small_sums.g, h.sum() - small_sums.h, 3000 - small_rows.size)
    results = [subtract_and_find_splits(hist.copy(), small, cells, usable, Candidates(usable, thresholds), small_sums,
                                        True, Candidates(usable, thresholds), large_sums, True, units, params, scratch)
               for thresholds in (None, every)]
    assert results[0] == results[1] and results[0][0].feature >= 0


def _one_pass_scan(hist, n_thresholds, g_extra, h_extra, g_total, h_total, unit, min_h, l1, l2, highest=False,
                   window=None):
    """Reference: every threshold in order (those of ``window``, ``(lo, hi)``, when given), compared
    with the best so far by cross-multiplication (an exact tie wins when ``highest``)."""
    best = (-1.0, 1.0, -1)
    gl, hl = g_extra, h_extra
    lo, hi = window or (0, n_thresholds - 1)
    for b in range(n_thresholds):
        gl, hl = gl + int(hist[b, 0]), hl + int(hist[b, 1])
        if not lo <= b <= hi:
            continue
        g_left, h_left = gl * unit, hl * unit
        d_left, d_right = h_left + l2, h_total - h_left + l2
        t_left, t_right = max(abs(g_left) - l1, 0.0), max(abs(g_total - g_left) - l1, 0.0)
        num, den = t_left * t_left * d_right + t_right * t_right * d_left, d_left * d_right
        valid = h_left >= min_h and h_total - h_left >= min_h and d_left > 0 and d_right > 0
        if valid and (num * best[1] > best[0] * den or (highest and num * best[1] == best[0] * den)):
            best = (num, den, b)
    return best[2]


@pytest.mark.parametrize("seed", range(30))
def test_vectorised_scan_picks_the_threshold_of_a_one_pass_scan(seed):
    """Scores with divisions select the thresholds compared exactly: same bin as comparing every
    threshold by cross-multiplication, including ties (empty bins repeat a score, as do mirrored
    halves: the lowest wins, or the highest), over the thresholds of a count window, from the
    feature's prefix sums computed once for both missing directions."""
    from smartboost._kernels.split import _prefix_sums, _scan_thresholds
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 256))
    hist = np.zeros((n, 2), np.int64)
    filled = rng.random(n) < rng.choice([0.05, 0.5, 1.0])
    hist[filled, 0] = rng.integers(-2**40, 2**40, filled.sum())
    hist[filled, 1] = rng.integers(0, 2**40, filled.sum())
    if seed % 3 == 0:  # mirrored: threshold b and n - 2 - b split into the same two halves
        half = hist[: n // 2].copy()
        hist[n - n // 2:] = half[::-1] * np.array([-1, 1])
        if n % 2:
            hist[n // 2] = 0
    unit = 2.0 ** -30
    g_extra, h_extra = (int(rng.integers(-2**40, 2**40)), int(rng.integers(0, 2**40))) if seed % 2 else (0, 0)
    g_total = (g_extra + int(hist[:, 0].sum())) * unit
    h_total = (h_extra + int(hist[:, 1].sum())) * unit
    scratch = np.empty((4, n))
    _prefix_sums(hist, 0, n, 0.0, False, scratch[0].view(np.int64), scratch[1].view(np.int64),
                 scratch[3].view(np.int64))
    windows = [(0, n - 1), tuple(sorted(rng.integers(0, n, 2))), (n // 2, n // 2 - 1)]  # all, some, none
    for (l1, l2, min_h), highest, window in itertools.product(
            ((0.0, 0.0, 0.0), (10.0, 1.0, 0.0), (0.0, 1e-3, h_total / 4)), (False, True), windows):
        expected = _one_pass_scan(hist, n, g_extra, h_extra, g_total, h_total, unit, min_h, l1, l2, highest, window)
        got = _scan_thresholds(hist, 0, n, None, g_extra, h_extra, g_total, h_total, unit, unit,
                               least_child_hessian(min_h, l2), l1, l2, np.int64(window[0]), np.int64(window[1]),
                               highest, scratch)
        assert got[2] == expected


@pytest.mark.parametrize("g_exp, h_exp", [(-1040, -1043), (-30, -32), (700, 690)])
def test_parameters_and_leaf_values_in_a_trees_scale(g_exp, h_exp):
    """A tree's scale divides the absolute parameters by its powers of two, exactly, far outside
    the float range of the sums' values; leaf values come back as values; a parameter beyond the
    float range in that scale is the largest float, not inf (whose products with 0 are NaN)."""
    params = SplitParams(4.0, 2.0, 64.0, 32.0, 5.0, cat_l2=8.0)
    values = params._replace(lambda_l1=2.0 ** g_exp * 4, lambda_l2=2.0 ** h_exp * 2,
                             min_gain_to_split=2.0 ** (2 * g_exp - h_exp) * 64,
                             min_sum_hessian_in_leaf=2.0 ** h_exp * 32, cat_l2=2.0 ** h_exp * 8)
    units = tree_units(g_exp, h_exp, 0.75, values.lambda_l2)
    assert units == Units(0.75, 0.75, g_exp, h_exp)
    scaled = in_units(values, units)
    assert scaled == params
    beyond = in_units(SplitParams(0.0, 0.0, 0.0, 1.0, 0.0), Units(1.0, 1.0, 0, -1074))
    assert beyond.min_sum_hessian_in_leaf == np.finfo(np.float64).max
    out = np.empty(2)
    leaf_values(np.array([-3000, 10]), np.array([400, 0]), units, scaled.lambda_l1, scaled.lambda_l2, out)
    assert out[0] == np.ldexp((3000 * 0.75 - 4) / (400 * 0.75 + 2), g_exp - h_exp)
    assert out[1] == np.ldexp(-(10 * 0.75 - 4) / 2, g_exp - h_exp)


def test_hessians_take_the_scale_of_a_lambda_l2_far_above_their_unit():
    """With ``lambda_l2`` more than 2**64 hessian units, the scans read hessians in its scale, where
    it is below 2**64, so that the cross-multiplied scores (of the order of its cube) stay finite."""
    units = tree_units(-30, -32, 0.5, 1e40)
    assert units.g_exp == -30 and units.h == np.ldexp(0.5, -32 - units.h_exp)
    assert 2.0 ** 63 <= in_units(SplitParams(0.0, 1e40, 0.0, 0.0, 0.0), units).lambda_l2 < 2.0 ** 64
    assert tree_units(-30, -32, 0.5, 2.0 ** 31) == Units(0.5, 0.5, -30, -32)


def test_least_child_hessian_is_the_whole_validity_test():
    """``h >= least_child_hessian(min_h, l2)`` is ``h >= min_h and h + l2 > 0`` for normal floats;
    without L2 a subnormal hessian sum counts as an empty child."""
    tiny = np.finfo(np.float64).tiny
    values = [0.0, 1e-320, tiny, 1e-4, 1e-3, 0.5, 2.0, 3.0]
    for min_h, l2, h in itertools.product(values, [0.0, 0.5, 2.0], values):
        least = least_child_hessian(min_h, l2)
        if 0.0 < h < tiny or 0.0 < min_h < tiny:
            if l2 == 0.0:
                assert (h >= least) == (h >= max(min_h, tiny))
            continue
        assert (h >= least) == (h >= min_h and h + l2 > 0.0), (min_h, l2, h)


@pytest.mark.parametrize("g_total, h_total, l2, first, second", [
    # two thresholds whose scores are a rounding apart, where the divided and the cross-multiplied
    # forms disagree on which is larger (found by a random search)
    (-3720204166800024, 8048831325492749, 0.1, (-415458619378476, 1518559433589071),
     (-458935480878901, 1629365217878347)),
    (-3648991864356035, 5140651967470228, 0.0, (-1653589278953495, 2683065809057023),
     (-2079674927099291, 3270296296472440)),
    (-583837154992250, 8654589184043100, 0.0, (2305280907187214, 7816277098896845),
     (1567471448745408, 8206883760375051)),
])
def test_vectorised_scan_compares_near_ties_exactly(g_total, h_total, l2, first, second):
    from smartboost._kernels.split import _scan_thresholds
    hist = np.array([first, (second[0] - first[0], second[1] - first[1]),
                     (g_total - second[0], h_total - second[1])], np.int64)
    unit = 2.0 ** -30
    expected = _one_pass_scan(hist, 2, 0, 0, g_total * unit, h_total * unit, unit, 0.0, 0.0, l2)
    got = _scan_thresholds(hist, 0, 2, None, 0, 0, g_total * unit, h_total * unit, unit, unit,
                           least_child_hessian(0.0, l2), 0.0, l2, 0, 1, False, np.empty((4, 2)))
    assert got[2] == expected


def test_type_1_draws_are_uniform_pairs_in_the_packed_layout():
    n_thresholds = np.array([3, 0, 2, 4], np.int64)  # 9 pairs
    counts = np.zeros((4, 4))
    packed = np.empty(4 + 2 + 5, np.int64)
    features = np.empty(4, np.bool_)
    for key in range(4000):
        draw_pairs(np.uint64(key), 5, n_thresholds, packed, features)
        assert packed[4] - packed[0] == 5 and packed[0] == 5
        for f in range(4):
            drawn = packed[packed[f]:packed[f + 1]]
            assert features[f] == (drawn.size > 0) and np.all(np.diff(drawn) > 0)
            assert np.all(drawn < n_thresholds[f])
            counts[f, drawn] += 1
    expected = 4000 * 5 / 9  # every pair equally likely; a standard deviation is about 31
    assert np.all(np.abs(counts[n_thresholds[:, None] > np.arange(4)] - expected) < 150)
    packed = np.empty(4 + 2 + 9, np.int64)
    draw_pairs(np.uint64(7), 9, n_thresholds, packed, features)  # all of them
    np.testing.assert_array_equal(packed[:5], [5, 8, 8, 10, 14])
    np.testing.assert_array_equal(packed[5:-1], [0, 1, 2, 0, 1, 0, 1, 2, 3])


def test_split_without_missing_sends_missing_to_heavier_side():
    X = np.arange(100.0).reshape(-1, 1)
    mapper = BinMapper(min_data_in_bin=1).fit(X)
    binned = mapper.transform(X)
    g = np.where(np.arange(100) < 80, -10, 10).astype(np.int64)
    h = np.ones(100, np.int64)
    offsets = binned.histogram_layout.offsets
    hist = np.zeros((mapper.n_bins[0] + 1, 2), np.int64)
    build_histogram(np.arange(100, dtype=np.uint32), 0, 100, *binned.histogram_layout.arrays,
                    np.column_stack([g, h]).astype(np.int32), g.sum(), h.sum(), hist)
    feature, b, missing_left, *_ = find_best_split(hist, Cells(offsets, mapper.n_bins),
                                                   Candidates(np.ones(1, np.bool_), None), NodeSums(g.sum(), h.sum(), 100),
                                                   Units(1.0, 1.0), SplitParams(0.0, 0.0, 0.0, 0.0, 0.0),
                                                   split_scratch(mapper.n_bins))
    assert (feature, b, missing_left) == (0, 79, True)


@pytest.mark.parametrize("n, start, end", [(100, 0, 100), (20000, 3000, 17001), (7, 2, 5)])
@pytest.mark.parametrize("missing_left", [False, True])
@pytest.mark.parametrize("dtype, top", [(np.uint8, 8), (np.uint16, 65535)])
def test_partition_is_stable_and_matches_numpy(n, start, end, missing_left, dtype, top):
    rng = np.random.default_rng(n)
    column = rng.integers(0, top + 1, n).astype(dtype)  # bin ``top`` is "missing"
    threshold = top // 2
    rows = rng.permutation(n).astype(np.uint32)
    segment = rows[start:end]
    goes_left = (column[segment] <= threshold) | (missing_left & (column[segment] == top))
    expected = np.concatenate([segment[goes_left], segment[~goes_left]])
    # a contiguous column (column-major bins), and a column view of row-major bins
    views = [column, np.column_stack([column + 1, column, column + 2])[:, 1]]
    for bins, n_chunks in itertools.product(views, (None, 1, 2, 5)):
        r = rows.copy()
        scratch = np.empty(n, np.uint32)
        if n_chunks is None:
            n_left = partition(r, start, end, bins, ThresholdRule(threshold, missing_left, top), scratch)
        else:
            n_left = partition_parallel(r, start, end, bins, ThresholdRule(threshold, missing_left, top), scratch,
                                        n_chunks)
        assert n_left == goes_left.sum()
        np.testing.assert_array_equal(r[start:end], expected)
        np.testing.assert_array_equal(r[:start], rows[:start])
        np.testing.assert_array_equal(r[end:], rows[end:])


def _random_tree(rng, n_leaves, n_bins):
    """Arrays of a random binary tree in the grower's layout (right child = left child + 1)."""
    feature, threshold, missing_left, left = [-1], [0], [False], [-1]
    open_leaves = [0]
    while len(open_leaves) < n_leaves:
        node = open_leaves.pop(rng.integers(len(open_leaves)))
        f = int(rng.integers(n_bins.size))
        feature[node], threshold[node] = f, int(rng.integers(n_bins[f]))
        missing_left[node], left[node] = bool(rng.integers(2)), len(feature)
        for _ in range(2):
            open_leaves.append(len(feature))
            feature.append(-1), threshold.append(0), missing_left.append(False), left.append(-1)
    return (np.array(feature, np.int32), np.array(threshold, np.int32), np.array(missing_left),
            np.array(left, np.int32))


@pytest.mark.parametrize("n", [1, 7, 15, 16, 17, 100, 3 * 4096 + 5, 50_000])
@pytest.mark.parametrize("record", [False, True])
@pytest.mark.parametrize("ahead", [None, 16])
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
@pytest.mark.parametrize("steps", [3, 64])
def test_walk_of_binned_rows_reaches_each_rows_leaf(n, record, ahead, dtype, steps):
    """add_tree_to_rows (groups of 8 rows taking ``steps`` levels together, then each row to its
    leaf alone, with or without prefetching rows ahead) adds every listed row's leaf value once,
    and records its leaf, like following the tree row by row, on one- and two-byte bins (a
    feature with the most bins of each among them), whether the groups stop above every leaf,
    among them, or far below the deepest."""
    from smartboost._kernels.predict import add_tree_to_rows, pack_bin_decisions
    rng = np.random.default_rng(n)
    most = np.iinfo(dtype).max
    n_bins = np.r_[rng.integers(2, most, 5), most]
    bins = np.column_stack([rng.integers(0, b + 1, n + 50) for b in n_bins]).astype(dtype)  # b: missing
    feature, threshold, missing_left, left = _random_tree(rng, 40, n_bins)
    value = rng.normal(size=feature.size)
    leaf_nodes = np.flatnonzero(left < 0)
    leaf_of_node = np.full(feature.size, -1, np.int32)
    leaf_of_node[leaf_nodes] = np.arange(leaf_nodes.size, dtype=np.int32)
    rows = np.sort(rng.choice(n + 50, n, replace=False)).astype(np.uint32)
    scores = rng.normal(size=n + 50)
    expected, expected_leaf = scores.copy(), np.full(n + 50, -1, np.int32)
    for r in rows:
        node = 0
        while left[node] >= 0:
            b = bins[r, feature[node]]
            goes_left = b == n_bins[feature[node]] and missing_left[node] or b <= threshold[node]
            node = left[node] + (not goes_left)
        expected[r] += value[node]
        expected_leaf[r] = leaf_of_node[node]
    leaves = np.full(n + 50, -1, np.int32) if record else None
    widths = None if dtype == np.uint8 else np.empty(feature.size, dtype)
    decisions = pack_bin_decisions(feature, threshold, missing_left, n_bins, left, widths)
    add_tree_to_rows(bins, rows, decisions, widths, None, value, leaf_of_node, scores, leaves, steps, ahead)
    np.testing.assert_array_equal(scores, expected)
    if record:
        np.testing.assert_array_equal(leaves, expected_leaf)


@pytest.mark.parametrize("n,block", [(1, 1), (15, 64), (16, 16), (17, 5), (100, 33), (5000, 1170)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_raw_walk_reaches_each_rows_leaf(n, block, dtype):
    """predict_trees (blocks of rows, 8 lanes per block refilled as rows finish) adds every
    tree's leaf value to every row in tree order, like following each tree row by row: NaN
    goes where the node sends missing values, infinities compare as numbers."""
    from smartboost._kernels.predict import predict_trees
    from smartboost.tree import PackedTrees
    rng = np.random.default_rng(n)
    n_features = 6
    X = rng.normal(size=(n, n_features)).astype(dtype)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[rng.random(X.shape) < 0.02] = np.inf
    X[rng.random(X.shape) < 0.02] = -np.inf
    trees = []
    for _ in range(4):
        feature, _, missing_left, left = _random_tree(rng, int(rng.integers(1, 40)), np.full(n_features, 2))
        threshold = np.where(left >= 0, rng.normal(size=feature.size), 0.0)
        trees.append(SimpleNamespace(n_nodes=feature.size, feature=feature, threshold=threshold,
                                     bin_threshold=np.zeros(feature.size, np.int32), missing_left=missing_left,
                                     value=rng.normal(size=feature.size), left=left,
                                     right=np.where(left >= 0, left + 1, -1).astype(np.int32),
                                     categorical_nodes=np.zeros(feature.size, bool)))
    packed = PackedTrees(trees)
    start = rng.normal(size=n)
    expected = start.copy()
    for i in range(n):
        for tree in trees:
            node = 0
            while tree.left[node] >= 0:
                x = X[i, tree.feature[node]]
                goes_left = tree.missing_left[node] if np.isnan(x) else x <= tree.threshold[node]
                node = tree.left[node] + (not goes_left)
            expected[i] += tree.value[node]
    out = start.copy()
    predict_trees(X, packed.words, packed.threshold, packed.value, packed.roots, out, block, None)
    np.testing.assert_array_equal(out, expected)


@njit
def _exp_each(x, out):
    for i in range(x.shape[0]):
        out[i] = vector_exp(x[i])


def test_vectorisable_exp_is_within_one_ulp_of_numpy():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-745.0, 709.7, 200_000), rng.uniform(-1.0, 1.0, 100_000),
                        rng.uniform(-1e-8, 1e-8, 1_000)])
    out = np.empty_like(x)
    _exp_each(x, out)
    ref = np.exp(x)
    normal = ref >= np.finfo(np.float64).tiny
    assert (np.abs(out - ref) <= np.spacing(ref))[normal].all()
    assert (np.abs(out - ref) <= np.finfo(np.float64).smallest_subnormal)[~normal].all()
    assert (out == ref).mean() > 0.85


def test_vectorisable_exp_at_special_values():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.78, 709.79, 1e4, -745.1, -745.2, -1e4, 5e-324])
    out = np.empty_like(x)
    _exp_each(x, out)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out, np.exp(x))  # nan where nan; inf and 0 beyond the range


def _tree_of(left, count):
    """A Tree with the children ``left`` (right = left + 1) and the leaves' row ``count``."""
    from smartboost.tree import Tree
    left = np.asarray(left, np.int32)
    n = left.size
    return Tree(np.where(left >= 0, 0, -1).astype(np.int32), np.zeros(n), np.zeros(n, np.int32), np.zeros(n, bool),
                left, np.where(left >= 0, left + 1, -1).astype(np.int32), np.zeros(n), np.zeros(n), np.zeros(n),
                np.asarray(count, np.int64))


def test_walk_steps_follow_where_the_rows_are():
    """The binned walk's group levels (Tree._walk_steps): the full depth when the deepest leaves
    hold the rows, the least depth leaving at most 1/WALK_STEP_COST of the rows deeper when
    only a few rows go deep, and 0 for a single leaf."""
    depth = 6
    # a chain: node 2k sends its left child (2k + 1) to a leaf at depth k + 1 and continues
    # right; the last two leaves are at depth 6
    left = np.full(2 * depth + 1, -1)
    left[0:2 * depth:2] = np.arange(1, 2 * depth, 2)
    deepest = np.arange(left.size) >= left.size - 2
    shallow_rows = np.where((left < 0) & ~deepest, 1000, 0)
    assert _tree_of(left, shallow_rows).depth() == depth
    assert _tree_of(left, shallow_rows)._walk_steps() == depth - 1
    assert _tree_of(left, np.where(deepest, 1000, 0))._walk_steps() == depth
    assert _tree_of([-1], [5])._walk_steps() == 0


def test_bound_kernel_calls_the_version_of_its_first_call():
    """BoundKernel: the first call through the dispatcher, later ones straight to the version it
    chose, also when the dispatcher holds versions for other types (where an unchecked call of
    the wrong one would read the arguments as the wrong types)."""
    from collections import namedtuple

    from smartboost._dispatch import BoundKernel

    Pair = namedtuple("Pair", ["a", "b"])

    @njit
    def weighted(pair, w):
        return (pair.a * w).sum() + pair.b

    ints = Pair(np.arange(4, dtype=np.int64), 1)
    floats = Pair(np.linspace(0.0, 1.0, 4), 0.5)
    assert weighted(ints, 2) == 13  # a version for int arguments first
    bound = BoundKernel(weighted)
    assert bound(floats, 0.5) == weighted(floats, 0.5)
    assert bound._call is not weighted  # bound to the float version's entry point
    assert bound(Pair(np.ones(4), 0.25), 2.0) == 8.25
    only = BoundKernel(njit(lambda x: x + 1))
    assert only(np.int64(1)) == 2 and only(np.int64(41)) == 42


@pytest.mark.parametrize("seed", range(6))
def test_count_window_is_lightgbms_count_test(seed):
    """The thresholds ``_count_window`` accepts are those LightGBM's scans accept: each bin holds
    ``round(h * unit)`` rows; its scan from the top counts the right side's bins and gives the
    left side the node's other rows, its upward scan (missing values right) the other way, or,
    on a feature whose first bin is its most frequent, from the top with the missing rows on the
    right side."""
    from smartboost._kernels.split import _count_prefix, _count_window
    rng = np.random.default_rng(seed)
    n_bins = int(rng.integers(2, 60))
    hist = np.zeros((n_bins + 1, 2), np.int64)
    hist[:n_bins, 1] = rng.integers(0, 1000, n_bins) * (rng.random(n_bins) < 0.7)
    unit = float(rng.uniform(0.01, 0.2))
    counts = np.floor(hist[:n_bins, 1] * unit + 0.5).astype(np.int64)
    missing = int(rng.integers(0, 40))
    n_rows = int(counts.sum()) + missing + int(rng.integers(-3, 30))  # rounding, and rows of no estimate
    c_left = np.empty(n_bins, np.int64)
    _count_prefix(hist, 0, n_bins, unit, c_left)
    scans = [(False, 0, n_bins - 1), (True, 0, n_bins), (False, missing, n_bins)]  # from the top, upward, from_top
    for min_data, (forward, extra, n_thresholds) in itertools.product((0.0, 1.0, 20.0, float(n_rows // 2)), scans):
        lo, hi = _count_window(c_left, n_thresholds, n_rows, min_data, forward, np.int64(extra))
        for t in range(n_thresholds):
            side = counts[:t + 1].sum() if forward else counts[t + 1:].sum() + extra
            valid = min_data <= 0.0 or (side >= min_data and n_rows - side >= min_data)  # no count test without it
            assert (lo <= t <= hi) == valid, (min_data, forward, t)
