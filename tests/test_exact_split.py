"""Exact split search: ``max_bin`` up to 65535 with two-byte bins.

With a bin for every distinct value, the bin boundaries are every threshold between adjacent
values, and the histogram search is the exact greedy search of the gradient boosting overview
(its Algorithm 5). These tests check the trees against that search done directly on the raw
values, and that two-byte models train, predict, save, load and explain as one-byte ones do.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numba
import numpy as np
import pytest
import scipy.sparse as sp

import smartboost as sb
from smartboost.errors import ParameterError

_EXACT = {"objective": "regression", "boost_from_average": False, "num_leaves": 12, "learning_rate": 1.0,
          "lambda_l2": 1.0, "min_data_in_leaf": 1, "min_data_in_bin": 1, "verbosity": -1}


def _exact_data(n=2500, seed=0):
    """Features of 290 to 2,500 distinct values (missing values in one, both signs in another),
    and integer labels: the first tree's gradients ``-y`` and hessians 1 are exact in fixed point."""
    rng = np.random.default_rng(seed)
    f0 = np.round(rng.standard_normal(n) * 300) / 300
    f0[rng.random(n) < 0.05] = np.nan
    f1 = np.where(rng.random(n) < 0.1, -rng.integers(1, 241, n) / 7.0, rng.integers(1, 51, n) / 3.0)
    f2 = rng.integers(0, 2000, n).astype(float)
    f3 = rng.random(n)
    X = np.column_stack([f0, f1, f2, f3])
    z = np.nan_to_num(f0)
    y = 5.0 * (z > 0.1234) + 3.0 * (f1 < -10.0) + (f2 % 7 == 0) + np.round(4 * f3 * z) + rng.integers(0, 3, n)
    return X, y


def _gain(g, h, rows, left, l2):
    """Newton gain of sending ``left`` (a subset of ``rows``) left."""
    G, H, gl, hl = g[rows].sum(), h[rows].sum(), g[left].sum(), h[left].sum()
    return 0.5 * (gl * gl / (hl + l2) + (G - gl) ** 2 / (H - hl + l2) - G * G / (H + l2))


def _exact_best_gain(X, g, h, rows, l2):
    """The exact greedy search on the raw values of ``rows``: every threshold between adjacent
    distinct values of every feature, missing values on either side, and missing values alone
    on one side; the best gain."""
    G, H = g[rows].sum(), h[rows].sum()
    parent = G * G / (H + l2)
    best_gain = -np.inf
    for f in range(X.shape[1]):
        x = X[rows, f]
        missing = np.isnan(x)
        gm, hm = g[rows][missing].sum(), h[rows][missing].sum()
        order = np.argsort(x[~missing], kind="stable")
        xs = x[~missing][order]
        gs, hs = np.cumsum(g[rows][~missing][order]), np.cumsum(h[rows][~missing][order])
        cuts = np.flatnonzero(xs[:-1] < xs[1:])
        candidates = [(xs[k], gs[k], hs[k], False) for k in cuts]
        if missing.any():
            candidates += [(xs[k], gs[k] + gm, hs[k] + hm, True) for k in cuts]
            if xs.size:
                candidates.append((np.inf, gs[-1], hs[-1], False))
        for threshold, gl, hl, missing_left in candidates:
            gr, hr = G - gl, H - hl
            if hl < 1 or hr < 1:  # unit hessians: a side without rows
                continue
            best_gain = max(best_gain, 0.5 * (gl * gl / (hl + l2) + gr * gr / (hr + l2) - parent))
    return best_gain


def _node_rows(tree, X):
    """The rows of every node of ``tree``, by following its raw thresholds."""
    rows = {0: np.arange(X.shape[0])}
    for node in range(tree.n_nodes):
        if tree.left[node] < 0:
            continue
        x = X[rows[node], tree.feature[node]]
        left = np.where(np.isnan(x), tree.missing_left[node], x <= tree.threshold[node])
        rows[tree.left[node]], rows[tree.right[node]] = rows[node][left], rows[node][~left]
    return rows


@pytest.mark.parametrize("max_bin", [1023, 65535])
def test_a_feature_of_1000_values_splits_where_the_exact_search_does(max_bin):
    """One feature of 1,000 distinct values: the root's threshold lies between the two adjacent
    values the brute-force search over every threshold picks, with its gain; at 255 bins the
    best of the bins' boundaries gains less."""
    rng = np.random.default_rng(3)
    values = np.sort(rng.choice(np.arange(1, 100_000), 1000, replace=False)) / 100.0
    x = np.repeat(values, 2)
    y = 2.0 * (x > values[777]) + (x > values[311]) + rng.integers(0, 2, x.size)
    order = np.argsort(x, kind="stable")
    gl, hl = np.cumsum(-y[order]), np.arange(1.0, x.size + 1)
    cuts = np.flatnonzero(x[order][:-1] < x[order][1:])
    G, H, l2 = gl[-1], float(x.size), _EXACT["lambda_l2"]
    gains = 0.5 * (gl[cuts] ** 2 / (hl[cuts] + l2) + (G - gl[cuts]) ** 2 / (H - hl[cuts] + l2) - G * G / (H + l2))
    k = cuts[np.argmax(gains)]
    below, above = x[order][k], x[order][k + 1]

    def root(bins):
        params = {**_EXACT, "num_leaves": 2, "max_bin": bins}
        return sb.train(params, sb.Dataset(x.reshape(-1, 1), y, params=params), 1).trees[0]

    tree = root(max_bin)
    assert below <= tree.threshold[0] < above
    assert tree.gain[0] == pytest.approx(gains.max(), rel=1e-12)
    assert root(255).gain[0] < gains.max() * (1 - 1e-6)


@pytest.mark.parametrize("max_bin", [4096, 65535])
def test_every_split_is_the_exact_greedy_split(max_bin):
    """With more bins than distinct values, every node of the tree splits its rows with the
    gain of the exact greedy search on their raw values (the best split, whichever of tied ones
    it is): the tree is a brute-force exact greedy tree; 63 bins find less."""
    X, y = _exact_data()
    g, h = -y, np.ones_like(y)
    train = sb.Dataset(X, y, params={"max_bin": max_bin, "min_data_in_bin": 1})
    assert train.binned.row_major.dtype == np.uint16
    tree = sb.train({**_EXACT, "max_bin": max_bin}, train, 1).trees[0]
    rows = _node_rows(tree, X)
    internal = np.flatnonzero(tree.left >= 0)
    assert internal.size == 11
    for node in internal:
        best = _exact_best_gain(X, g, h, rows[node], _EXACT["lambda_l2"])
        made = _gain(g, h, rows[node], rows[tree.left[node]], _EXACT["lambda_l2"])
        assert made == pytest.approx(best, rel=1e-9, abs=1e-9), node
        assert tree.gain[node] == pytest.approx(best, rel=1e-9, abs=1e-9), node
    coarse = sb.train({**_EXACT, "max_bin": 63}, sb.Dataset(X, y, params={"max_bin": 63, "min_data_in_bin": 1}), 1)
    assert coarse.trees[0].gain[0] < tree.gain[0]


def test_bins_take_two_bytes_only_when_a_feature_has_more_than_255():
    X, y = _exact_data()
    few = np.column_stack([np.round(X[:, 3] * 100), X[:, 1] > 0]).astype(float)  # <= 101 and 2 distinct values
    assert sb.Dataset(few, y, params={"max_bin": 65535}).binned.row_major.dtype == np.uint8
    binned = sb.Dataset(X, y, params={"max_bin": 65535, "min_data_in_bin": 1}).binned
    assert binned.row_major.dtype == binned.column_major.dtype == np.uint16
    for f in range(X.shape[1]):  # a bin per distinct value (and the zero bin of features without zeros)
        x = X[:, f]
        finite = ~np.isnan(x)
        distinct = np.unique(x[finite])
        assert binned.mapper.n_bins[f] == distinct.size + (0 if (distinct == 0).any() else 1)
        pairs = np.unique(np.column_stack([binned.row_major[finite, f], x[finite]]), axis=0)
        assert pairs.shape[0] == np.unique(binned.row_major[finite, f]).size == distinct.size  # a value per bin
        assert (binned.row_major[~finite, f] == binned.mapper.n_bins[f]).all()


def test_two_byte_models_predict_save_load_and_continue_as_one_byte_ones(tmp_path):
    X, y = _exact_data(seed=1)
    params = {"objective": "regression", "num_leaves": 15, "max_bin": 1023, "verbosity": -1}
    train = sb.Dataset(X[:2000], y[:2000], params=params)
    valid = sb.Dataset(X[2000:], y[2000:], reference=train)
    assert valid.binned.row_major.dtype == np.uint16
    booster = sb.train(params, train, 10, valid_sets=[train, valid], valid_names=["train", "valid"])
    # raw and binned prediction: the same leaves, the same scores bit for bit
    raw = booster.predict(X, raw_score=True)
    binned = np.full(X.shape[0], booster.base_score)
    booster.predict_binned(sb.Dataset(X, reference=booster).binned, binned)
    np.testing.assert_array_equal(raw, binned)
    leaves = booster.predict(X, pred_leaf=True)
    assert leaves.shape == (X.shape[0], 10)
    contributions = booster.predict(X, pred_contrib=True)
    np.testing.assert_allclose(contributions.sum(axis=1), raw, rtol=1e-9, atol=1e-9)
    rmse = np.sqrt(np.mean((raw[2000:] - y[2000:]) ** 2))
    assert booster.evals_result["valid"]["rmse"][-1] == pytest.approx(rmse, rel=1e-9)
    # the model file round trip
    path = tmp_path / "wide.json"
    booster.save_model(path)
    document = json.loads(path.read_text())
    assert document["bin_mapper"]["max_bin"] == 1023 and max(map(len, document["bin_mapper"]["edges"])) > 254
    loaded = sb.Booster(model_file=path)
    assert loaded.model_to_string() == booster.model_to_string()
    assert loaded.bin_mapper.bin_dtype == np.uint16
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), raw)
    # continued training bins with the loaded edges and walks the two-byte bins
    more = sb.train(params, sb.Dataset(X[:2000], y[:2000], reference=loaded), 5, init_model=loaded)
    assert more.num_trees() == 15
    np.testing.assert_array_equal(more.predict(X, raw_score=True, num_iteration=10), raw)


@pytest.mark.parametrize("max_bin", [1, 65536, 1e6, 2.5, "many", True])
def test_bad_max_bin_values_are_refused(max_bin):
    X, y = _exact_data(n=200)
    with pytest.raises(ParameterError, match="max_bin"):
        sb.Dataset(X, y, params={"max_bin": max_bin})
    with pytest.raises(ParameterError, match="max_bin"):
        sb.train({"max_bin": max_bin}, sb.Dataset(X, y), 1)


def test_command_line_trains_two_byte_models(tmp_path):
    from sklearn.datasets import dump_svmlight_file

    X, y = _exact_data(n=1500, seed=2)
    dump_svmlight_file(np.nan_to_num(X), y, str(tmp_path / "train.svm"))
    model = tmp_path / "model.json"
    out = subprocess.run([sys.executable, "-m", "smartboost.cli", "train", str(tmp_path / "train.svm"), "-o",
                          str(model), "--objective", "regression", "--max_bin", "65535", "--min_data_in_bin", "1",
                          "--num_iterations", "5"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    booster = sb.Booster(model_file=model)
    assert booster.bin_mapper.max_bin == 65535 and booster.bin_mapper.n_bins.max() > 1000
    params = {"objective": "regression", "max_bin": 65535, "min_data_in_bin": 1, "verbosity": -1}
    direct = sb.train(params, sb.Dataset(np.nan_to_num(X), y, params=params), 5)
    np.testing.assert_array_equal(booster.predict(np.nan_to_num(X)), direct.predict(np.nan_to_num(X)))
    bad = subprocess.run([sys.executable, "-m", "smartboost.cli", "train", str(tmp_path / "train.svm"), "-o",
                          str(model), "--max_bin", "70000"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 1 and "max_bin" in bad.stderr and "Traceback" not in bad.stderr


def test_sparse_input_trains_the_dense_inputs_model():
    """Mostly-zero features of hundreds of distinct values (sparse in the histogram layout, on
    two-byte bins) from a CSR matrix give the trees of the same dense matrix."""
    X, y = _exact_data(seed=4)
    rng = np.random.default_rng(4)
    X[rng.random(X.shape) < 0.85] = 0.0
    X = np.nan_to_num(X)
    params = {"objective": "regression", "num_leaves": 15, "max_bin": 65535, "min_data_in_bin": 1,
              "verbosity": -1}
    dense_set = sb.Dataset(X, y, params=params)
    assert dense_set.binned.row_major.dtype == np.uint16
    assert dense_set.binned.histogram_layout.default_cells.size == X.shape[1]  # every feature sparse
    assert dense_set.bin_mapper.n_bins.max() > 255
    dense = sb.train(params, dense_set, 8)
    sparse = sb.train(params, sb.Dataset(sp.csr_matrix(X), y, params=params), 8)
    assert sparse.model_to_string() == dense.model_to_string()
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


def test_categorical_features_beside_two_byte_bins():
    """A categorical feature keeps at most 255 bins (its split sets are 256 bits) while a
    numeric one has thousands: categorical and numeric splits in the same trees, raw and binned
    predictions equal, and the model file round trip."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    n = 3000
    codes = rng.integers(0, 400, n)  # more categories than a categorical feature's bins
    x = rng.integers(0, 2500, n) / 10.0
    y = (codes % 7 == 3) * 2.0 + (codes < 40) + (x > 123.4) + 0.1 * rng.standard_normal(n)
    frame = pd.DataFrame({"code": pd.Categorical(codes), "x": x})
    params = {"objective": "regression", "num_leaves": 15, "max_bin": 65535, "min_data_in_bin": 1,
              "min_data_per_group": 5, "verbosity": -1}
    train = sb.Dataset(frame, y, params=params)
    assert train.binned.row_major.dtype == np.uint16
    assert train.bin_mapper.n_bins[0] == 255 and train.bin_mapper.n_bins[1] > 1000
    booster = sb.train(params, train, 10)
    assert any(t.categorical_nodes.any() for t in booster.trees)
    assert any((t.feature[~t.categorical_nodes & (t.left >= 0)] == 1).any() for t in booster.trees)
    raw = booster.predict(frame, raw_score=True)
    binned = np.full(n, booster.base_score)
    booster.predict_binned(sb.Dataset(frame, reference=booster).binned, binned)
    np.testing.assert_array_equal(raw, binned)
    loaded = sb.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(frame, raw_score=True), raw)


def test_the_scikit_learn_estimator_takes_max_bin_65535():
    from smartboost.sklearn import SmartBoostRegressor

    X, y = _exact_data(seed=6)
    model = SmartBoostRegressor(n_estimators=5, num_leaves=15, max_bin=65535, min_data_in_bin=1).fit(X, y)
    assert model.booster_.bin_mapper.bin_dtype == np.uint16
    params = {"objective": "regression", "num_leaves": 15, "max_bin": 65535, "min_data_in_bin": 1,
              "verbosity": -1}
    direct = sb.train(params, sb.Dataset(X, y, params=params), 5)
    np.testing.assert_array_equal(model.predict(X), direct.predict(X))
    with pytest.raises(ParameterError, match="max_bin"):
        SmartBoostRegressor(max_bin=65536).fit(X, y)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs 2 numba threads")
@pytest.mark.parametrize("sampling", [None, "goss"])  # goss: sampled trees on compact rows
def test_thread_count_does_not_change_a_two_byte_model(sampling):
    X, y = _exact_data(n=30_000, seed=7)
    params = {"objective": "regression", "num_leaves": 31, "max_bin": 65535, "min_data_in_bin": 1,
              "verbosity": -1, **({"sampling": sampling, "sample_rate": 0.3} if sampling else {})}
    models = []
    for threads in (1, 2):
        booster = sb.train({**params, "num_threads": threads}, sb.Dataset(X, y, params=params), 8)
        assert booster.bin_mapper.bin_dtype == np.uint16
        document = json.loads(booster.model_to_string())
        assert document.pop("params")["num_threads"] == threads
        models.append(document)
    assert models[0] == models[1]
