"""smartboost.dask: distributed training equals one machine, errors, faults, estimators.

Most tests run on a module-scoped in-process LocalCluster of 2 workers with 1 thread each (the
shards still talk to the driver over their own connections); the lost-worker test starts a
cluster of worker processes and kills one.
"""

from __future__ import annotations

import itertools
import os
import signal
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")

from reference import solve_scale_sorted  # noqa: E402

import smartboost as sb  # noqa: E402
import smartboost.dask as sbd  # noqa: E402
from smartboost._kernels.draws import draw_exact_parallel, draw_top_and_rest  # noqa: E402
from smartboost._kernels.fsum import exact_partials  # noqa: E402
from smartboost._kernels.messages import HEADER, narrow_into, widen_add  # noqa: E402
from smartboost._kernels.scale import radix_buckets  # noqa: E402
from smartboost._params import training_params  # noqa: E402
from smartboost.dask._peers import Peers  # noqa: E402
from smartboost.dask._shard import _PeerRows, Shard  # noqa: E402
from smartboost.dask._train import _driver_threads  # noqa: E402
from smartboost.sklearn import SmartBoostClassifier  # noqa: E402
from smartboost.dask._transport import _link_ends, Workers  # noqa: E402
from smartboost.errors import DataError, DistributedError, RawScoreWarning  # noqa: E402
from smartboost.sampling import auto  # noqa: E402
from smartboost.sampling.chunks import chunk_layout, exact_pieces, top_and_rest_pieces  # noqa: E402
from smartboost.sampling.distributed import (count_top_for_sum_by_radix, kth_largest_by_radix,  # noqa: E402
                                             solve_scale_by_radix, top_and_rest_by_machine)
from smartboost.sampling.goss import GOSSSampler  # noqa: E402
from smartboost.sampling.topk import count_top_for_sum, kth_largest, top_threshold  # noqa: E402


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0") as cl:
        with distributed.Client(cl) as c:
            yield c


def _data(n=3000, n_features=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    logit = X[:, 0] - 0.5 * np.nan_to_num(X[:, 1]) ** 2 + np.sin(3 * np.nan_to_num(X[:, 2]))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float64)
    return X, y


def _assert_same_model(distributed_model: sb.Booster, local_model: sb.Booster) -> None:
    assert distributed_model.num_trees() == local_model.num_trees()
    for a, b in zip(distributed_model.trees, local_model.trees):
        for name in ("feature", "bin_threshold", "missing_left", "left", "count", "value"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    np.testing.assert_allclose(distributed_model.base_score, local_model.base_score, rtol=1e-14)


# -- the scale of the importance samplers from per-machine bucket sums ------------------------


def _spread(values: np.ndarray, n_machines: int) -> tuple:
    parts = np.array_split(values, n_machines)

    def bucket_sums(prefix, prefix_shift, shift, n_buckets):
        counts, sums = np.zeros(n_buckets, np.int64), np.zeros(n_buckets)
        for part in parts:
            radix_buckets(part, prefix, prefix_shift, shift, counts, sums)
        return counts, sums

    def members(prefix, prefix_shift):
        return np.concatenate([p[(p > 0) & ((p.view(np.uint64) >> np.uint64(prefix_shift)) == np.uint64(prefix))]
                               for p in parts])
    return bucket_sums, members


CASES = ["random", "heavy", "ties", "zeros", "all_equal", "tiny", "few"]


def _case(case, n, rng):
    return {"random": rng.random(n), "heavy": rng.pareto(1.0, n), "ties": rng.integers(0, 4, n) * 0.5,
            "zeros": np.where(rng.random(n) < 0.7, 0.0, rng.random(n)), "all_equal": np.full(n, 0.3),
            "tiny": rng.random(n) * 1e-300, "few": np.r_[np.zeros(n - 5), rng.random(5)]}[case]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("rate", [0.01, 0.2, 0.9])
def test_radix_top_k_equals_one_machine(case, rate):
    rng = np.random.default_rng(8)
    n = 20_000
    values = _case(case, n, rng)
    bucket_sums, members = _spread(values, 3)
    key = np.uint64(5)
    k = max(1, int(rate * n))
    assert kth_largest_by_radix(bucket_sums, members, k, key) == tuple(kth_largest(values, k, key))
    target = rate * values.sum()
    assert count_top_for_sum_by_radix(bucket_sums, members, target, key) == count_top_for_sum(values, target, key)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("rate", [0.01, 0.2, 0.9])
def test_radix_scale_equals_the_sort_reference(case, rate):
    rng = np.random.default_rng(7)
    n = 20_000
    values = _case(case, n, rng)
    target = rate * n
    bucket_sums, members = _spread(values, 3)
    got = solve_scale_by_radix(bucket_sums, members, target, np.uint64(1))
    want = solve_scale_sorted(values, target)
    if np.isinf(want):
        assert np.isinf(got)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-9)
        np.testing.assert_allclose(np.minimum(1.0, got * values).sum(), target, rtol=1e-9)


def _machines_of(n, cuts):
    """Row ids of two machines holding alternate segments of ``range(n)`` cut at ``cuts``."""
    bounds = np.r_[0, cuts, n]
    segments = [np.arange(a, b) for a, b in itertools.pairwise(bounds)]
    return [np.concatenate(segments[0::2]), np.concatenate(segments[1::2])]


@pytest.mark.parametrize("n, cuts", [(3_000, [1000, 2000]), (41_000, [100, 5000, 20_000]),
                                     (300_000, [4688, 150_001, 150_002])])
def test_exact_count_draws_over_machines_equal_one_machine(n, cuts):
    """Uniform's and GOSS's draws, each machine drawing its pieces of the chunks (a chunk
    spanning machines carried from one to the next), keep the rows of one machine's draw with
    the same weights."""
    rng = np.random.default_rng(n)
    values = np.round(rng.exponential(size=n), 1)  # ties at the threshold
    key = np.uint64(n)
    k, k_top, k_rest = n // 7, n // 10, n // 20
    rows, rest, weight = np.empty(n, np.uint32), np.empty(n, np.uint32), np.empty(n)
    uniform = rows[:draw_exact_parallel(key, exact_pieces(key, k, n, chunk_layout(n)), rows, rest)].copy()
    threshold, ties = top_threshold(values, k_top, key)
    m = draw_top_and_rest(values, threshold, top_and_rest_pieces(values, threshold, ties, k_top, k_rest, key), key,
                          None, 9.0, rows, rest, weight)
    goss, goss_weight = rows[:m].copy(), weight[rows[:m]]
    machines = _machines_of(n, cuts)
    params = training_params({"sampling": "goss", "sample_rate": 0.15, "goss_top_rate": 0.1}, 1)
    samplers = []
    for ids in machines:
        samplers.append(GOSSSampler(params, ids.size))
        samplers[-1].row_ids, samplers[-1].total_rows = ids, n
    shares = [s.top_counts(values[ids], threshold) for s, ids in zip(samplers, machines)]
    pieces = top_and_rest_by_machine(*map(list, zip(*shares)), ties, k_rest, key, n)
    got_uniform, got_goss, got_weight = [], [], []
    for ids, sampler, share in zip(machines, samplers, pieces):
        r, t, w = np.empty(ids.size, np.uint32), np.empty(ids.size, np.uint32), np.empty(ids.size)
        drawn = r[:draw_exact_parallel(key, exact_pieces(key, k, n, sampler.chunk_layout()), r, t)]
        assert np.all(np.diff(drawn.astype(np.int64)) > 0)
        got_uniform.append(ids[drawn])
        drawn = r[:draw_top_and_rest(values[ids], threshold, share, key, None, 9.0, r, t, w)]
        np.testing.assert_array_equal(np.sort(np.r_[drawn, t[:ids.size - drawn.size]]), np.arange(ids.size))
        got_goss.append(ids[drawn])
        got_weight.append(w[drawn])
    np.testing.assert_array_equal(np.sort(np.concatenate(got_uniform)), uniform)
    order = np.argsort(np.concatenate(got_goss))
    np.testing.assert_array_equal(np.concatenate(got_goss)[order], goss)
    np.testing.assert_array_equal(np.concatenate(got_weight)[order], goss_weight)


# -- equal to one machine -----------------------------------------------------------------------


@pytest.mark.parametrize("sampling", ["none", "bernoulli", "uniform", "goss", "mvs", "smart1", "smart2", "loss",
                                      "trimming", "trimming_alpha", "smart2_paper", "loss_rho", "sign_trees",
                                      "bernoulli_every_row", "mvs_every_row"])
def test_trees_equal_single_machine(client, sampling):
    X, y = _data()
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    params = {"objective": "binary", "num_leaves": 15, "min_data_in_leaf": 5, "verbosity": -1, "seed": 4,
              "sampling": sampling}
    if sampling == "trimming_alpha":
        params.update(sampling="trimming", trimming_alpha=0.2)
    elif sampling == "smart2_paper":
        params.update(sampling="smart2", sample_rate=0.3, smart_correction="paper", smart_eta=0.5)
    elif sampling == "loss_rho":  # SMART's fixed rho: the sample size follows the losses
        params.update(sampling="loss", smart_rho=0.5)
    elif sampling == "sign_trees":  # AnyBoost's {-1, +1} trees, RGBM's constant step on them
        params.update(sampling="none", boosting="gradient", weak_learner="sign", step_rule="smooth")
    elif sampling.endswith("_every_row"):  # the leaves' values summed over every shard's rows
        params.update(sampling=sampling.split("_")[0], sample_rate=0.3, leaf_value_rows="all")
    elif sampling != "none":
        params["sample_rate"] = 0.3
    chunks = (800, 700, 900, 600)
    model = sbd.train(client, params, da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,)),
                      sample_weight=da.from_array(weight, chunks=(chunks,)), num_boost_round=8)
    local = sb.train(params, sb.Dataset(X, y, weight=weight), 8)
    _assert_same_model(model, local)
    assert model.iteration_stats["sample_size"] == local.iteration_stats["sample_size"]


def test_automatic_sampling_equals_single_machine(client, monkeypatch):
    """sampling='auto': the driver's sampler chooses each rate from the holdout check summed
    over every shard's rows (integer sums), and the shards draw at it: the same samples and
    trees as one machine, with the rate moving. The rates agree to rounding only: MVS's scale
    solved over the shards can differ from one machine's in its last bits, and the sample
    weights with it."""
    monkeypatch.setattr(auto, "AUTO_MIN_ROWS", 1000)  # the workers run in this process
    monkeypatch.setattr(auto, "AUTO_MIN_FEATURES", 1)
    monkeypatch.setattr(auto, "MIN_SAMPLE_ROWS", 200)
    monkeypatch.setattr(auto, "MAX_RATE", 0.3)  # room for the rate to move on this small set
    X, y = _data()
    params = {"objective": "binary", "num_leaves": 15, "min_data_in_leaf": 5, "verbosity": -1, "seed": 4,
              "sampling": "auto"}
    chunks = (800, 700, 900, 600)
    model = sbd.train(client, params, da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,)),
                      num_boost_round=10)
    local = sb.train(params, sb.Dataset(X, y), 10)
    _assert_same_model(model, local)
    for stat in ("sample_size", "sampler"):
        assert model.iteration_stats[stat] == local.iteration_stats[stat]
    np.testing.assert_allclose(model.iteration_stats["target_rate"], local.iteration_stats["target_rate"], rtol=1e-9)
    assert len(set(local.iteration_stats["target_rate"])) > 1
    # without a sampling parameter, the default on data above the limits (every worker's rows)
    default = sbd.train(client, {k: v for k, v in params.items() if k != "sampling"},
                        da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,)), num_boost_round=10)
    assert default.model_to_string() == model.model_to_string()


@pytest.mark.parametrize("pre_filter", [True, False])
def test_features_too_rare_to_split_are_left_out_as_on_one_machine(client, pre_filter):
    # columns 4-6 hold 3, 12 and 40 non-zero rows, on both workers: the rows nearest the class
    # boundary, whose hessians are the largest, so that hessian-estimated row counts let some of
    # them split without the filter
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1200, 7))
    score = X[:, 0] + 0.5 * X[:, 1]
    X[:, 4:] = 0.0
    boundary = np.quantile(score, 0.97)
    nearest = np.argsort(np.abs(score - boundary))
    X[nearest[:3], 4], X[nearest[3:15], 5], X[nearest[15:55], 6] = 1.0, 2.0, 3.0
    y = (score > boundary).astype(float)
    params = {"objective": "binary", "num_leaves": 31, "min_data_in_leaf": 20, "min_sum_hessian_in_leaf": 0.0,
              "verbosity": -1, "feature_pre_filter": pre_filter}
    # one chunk per worker: both shards hold rows of these sparse features (default cells from each one's sums)
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y), num_boost_round=20)
    local = sb.train(params, sb.Dataset(X, y), 20)
    _assert_same_model(model, local)
    used = {int(f) for t in local.trees for f in t.feature[t.left >= 0]}
    assert bool(used & {4, 5}) != pre_filter


@pytest.mark.parametrize("sampling", ["uniform", "goss"])
def test_exact_count_draws_over_chunks_that_span_workers_equal_single_machine(client, sampling):
    """9,000 rows: two chunks of the exact-count draws, cut by the partitions of both workers."""
    X, y = _data(n=9000)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "seed": 2, "sampling": sampling,
              "sample_rate": 0.3, "sampling_freq": 2}
    chunks = (2000, 3100, 1900, 2000)
    model = sbd.train(client, params, da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,)),
                      num_boost_round=4)
    local = sb.train(params, sb.Dataset(X, y), 4)
    _assert_same_model(model, local)
    assert model.iteration_stats["sample_size"] == local.iteration_stats["sample_size"] == [2700] * 4


def _train_both(client, params, X, label, weight=None, rounds=5, chunks=(800, 700, 900, 600)):
    """The Dask model (four partitions over two workers) and one machine's; checked equal."""
    model = sbd.train(client, params, da.from_array(X, chunks=(chunks, X.shape[1])),
                      da.from_array(label, chunks=(chunks,)),
                      sample_weight=None if weight is None else da.from_array(weight, chunks=(chunks,)),
                      num_boost_round=rounds)
    local = sb.train(params, sb.Dataset(X, label, weight=weight), rounds)
    _assert_same_model(model, local)
    return model, local


@pytest.mark.parametrize("case", ["line", "leaf_line_weights_goss", "line_all_rows_weights_bernoulli"])
def test_line_search_step_rules_equal_single_machine(client, case):
    """The shards search the step together on the loss summed exactly over every shard's rows
    (steps.exact_sum): the steps, and so the trees, of one machine, bit for bit."""
    X, y = _data()
    target = np.nan_to_num(X[:, 0]) * 2 + np.abs(np.nan_to_num(X[:, 1])) + 0.1 * np.random.default_rng(2).normal(
        size=y.size)
    # the start score from row weights is a sum over labels taken in another order on Dask (equal
    # to rtol 1e-14, which a line search would carry into its steps): weighted runs start at 0
    rule, label, extra, weighted = {
        "line": ("line", y, {}, False),
        "leaf_line_weights_goss": ("leaf_line", target, {"objective": "huber", "sampling": "goss",
                                                        "sample_rate": 0.4, "boost_from_average": False}, True),
        "line_all_rows_weights_bernoulli": ("line", y, {"line_search_rows": "all", "sampling": "bernoulli",
                                                        "sample_rate": 0.5, "boost_from_average": False}, True),
    }[case]
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1, "seed": 4,
              "step_rule": rule, **extra}
    weight = np.random.default_rng(1).uniform(0.5, 2.0, y.size) if weighted else None
    _, local = _train_both(client, params, X, label, weight)
    shrinkage = sb.train({**params, "step_rule": "shrinkage"}, sb.Dataset(X, label, weight=weight), 1)
    assert not np.array_equal(local.trees[0].value, shrinkage.trees[0].value)  # the rule changed the values


@pytest.mark.parametrize("case", ["quantile", "l1_goss_weights", "mape_line_weights"])
def test_leaf_refit_of_quantile_losses_equals_single_machine(client, case):
    """The quantile losses refit every leaf to the weighted quantile of its rows' residuals: the
    driver gathers each leaf's rows from the shards in the order of one machine (by row id) and
    refits them with one machine's code; the trees are one machine's, bit for bit."""
    X, _ = _data()
    rng = np.random.default_rng(2)
    target = np.round(np.nan_to_num(X[:, 0]) * 2 + np.abs(np.nan_to_num(X[:, 1])) + rng.normal(size=X.shape[0]), 1)
    extra, weighted = {"quantile": ({"objective": "quantile", "alpha": 0.3}, False),
                       "l1_goss_weights": ({"objective": "regression_l1", "sampling": "goss", "sample_rate": 0.4}, True),
                       "mape_line_weights": ({"objective": "mape", "sampling": "bernoulli", "sample_rate": 0.5,
                                              "step_rule": "line"}, True)}[case]
    params = {"num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1, "seed": 4, **extra}
    _train_both(client, params, X, target, rng.uniform(0.5, 2.0, target.size) if weighted else None)


@pytest.mark.parametrize("sampling", [{}, {"sampling": "goss", "sample_rate": 0.5}])
def test_weights_inside_the_loss_equal_single_machine(client, sampling):
    """cross_entropy_lambda's loss reads each row's weight: every shard binds its own rows' weights
    and grows the trees on unit weights, as one machine does; the trees are one machine's."""
    X, _ = _data()
    rng = np.random.default_rng(3)
    label = 1.0 / (1.0 + np.exp(-np.nan_to_num(X[:, 0]) + 0.3 * rng.normal(size=X.shape[0])))
    weight = rng.uniform(0.5, 3.0, label.size)
    params = {"objective": "cross_entropy_lambda", "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1,
              "seed": 4, "boost_from_average": False, **sampling}
    _, local = _train_both(client, params, X, label, weight)
    unit = sb.train(params, sb.Dataset(X, label), 5)
    assert not np.array_equal(local.trees[0].value, unit.trees[0].value)  # the weights were read


def test_exact_sum_over_machines_equals_one_machine():
    """Partial sums of any split of the values, gathered, round to math.fsum of them all."""
    import math

    from smartboost.steps import exact_sum
    rng = np.random.default_rng(0)
    values = rng.normal(size=100_001) * 10.0 ** rng.integers(-12, 12, 100_001)
    parts = np.array_split(values, 3)
    for i, part in enumerate(parts):
        got = exact_sum(part, lambda mine, i=i: np.concatenate(
            [exact_partials(p) if j != i else mine for j, p in enumerate(parts)]))
        assert got == math.fsum(values) == exact_sum(values[::-1])
    assert exact_sum(np.array([1.0, np.inf, 2.0])) == np.inf and np.isnan(exact_sum(np.array([np.inf, -np.inf])))
    assert exact_sum(np.array([1e308, 1e308, -1.0])) == np.inf


def test_two_byte_bins_equal_single_machine(client):
    """max_bin above 255: every shard bins into two bytes with the driver's edges, and the trees
    (their histograms summed over the shards) are those of one machine."""
    X, y = _data()
    X[:, 0] = np.round(X[:, 0] * 200)  # a few hundred distinct values, zero among them
    params = {"objective": "binary", "num_leaves": 15, "max_bin": 4000, "min_data_in_bin": 1, "verbosity": -1,
              "sampling": "mvs", "sample_rate": 0.5}
    chunks = (800, 700, 900, 600)
    model = sbd.train(client, params, da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,)),
                      num_boost_round=6)
    local_set = sb.Dataset(X, y, params=params)
    assert local_set.binned.row_major.dtype == np.uint16 and local_set.bin_mapper.n_bins.max() > 2000
    local = sb.train(params, local_set, 6)
    _assert_same_model(model, local)
    np.testing.assert_array_equal(model.predict(X), local.predict(X))


@pytest.mark.parametrize("num_leaves", [0, 11])  # 11: the leaf budget runs out inside a level
def test_shards_grow_trees_without_the_driver_one_exchange_per_level(client, monkeypatch, num_leaves):
    """The driver sends a fixed number of steps per iteration, none per split; the shards
    exchange histograms among themselves once per depth-wise level, and grow the trees of one
    machine."""
    X, y = _data()
    params = {"objective": "binary", "grow_policy": "depthwise", "max_depth": 5, "num_leaves": num_leaves,
              "min_data_in_leaf": 5, "verbosity": -1, "sampling": "mvs", "sample_rate": 0.5}
    steps, exchanges = [], []
    run, reduce_scatter = Workers._run, Peers.reduce_scatter
    monkeypatch.setattr(Workers, "_run", lambda self, step, messages, together: steps.append(step) or run(
        self, step, messages, together))
    monkeypatch.setattr(Peers, "reduce_scatter", lambda self, parts, what: (
        exchanges.append((self.rank, self.context, what)) or reduce_scatter(self, parts, what)))
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y), num_boost_round=4)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 4))
    assert steps.count("grow") == 4 and not {"split", "split_many", "root_histogram"} & set(steps)
    per_iteration = "|".join(steps[steps.index("gradients"):]).split("|gradients")
    assert len(per_iteration) == 4 and len({len(s) for s in per_iteration[1:]}) == 1  # the same steps every time
    for it, tree in enumerate(model.trees):
        levels = [w for r, context, w in exchanges if r == 0 and context.startswith(f"iteration {it},")]
        depth = int(_depths(tree).max())
        assert levels.count("split histograms") == depth  # one exchange per level that splits
        assert levels.count("split histograms") < int((tree.left >= 0).sum()) or depth == 1
        assert {r for r, context, _ in exchanges if context.startswith(f"iteration {it},")} == {0, 1}


def _one_chunk_per_worker(c, *arrays, bounds=None):
    """Dask arrays of one row chunk per worker, each held by its worker (chunk ``i`` is rows
    ``bounds[i]:bounds[i + 1]``; default: equal chunks). Every scatter gets a key of its own
    (``hash=False``): tests scatter the same data again, and a content-hashed key may be released
    by an earlier test's futures while this one still needs it ("lost dependencies")."""
    workers = sorted(c.scheduler_info()["workers"])
    if bounds is None:
        bounds = np.linspace(0, arrays[0].shape[0], len(workers) + 1).astype(int)
    out = []
    for a in arrays:
        futures = [c.scatter(a[bounds[i]:bounds[i + 1]], workers=[w], hash=False) for i, w in enumerate(workers)]
        out.append(da.concatenate([da.from_delayed(f, shape=(bounds[i + 1] - bounds[i],) + a.shape[1:], dtype=a.dtype)
                                   for i, f in enumerate(futures)]))
    return out


def _depths(tree) -> np.ndarray:
    depth = np.zeros(tree.left.size, np.int64)
    for node in range(tree.left.size):
        if tree.left[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    return depth


@pytest.mark.parametrize("through_threads", [False, True])
def test_three_workers_reduce_scatter_and_equal_single_machine(monkeypatch, through_threads):
    """Three shards sum their histograms by reduce-scatter and all-gather (two swap them whole),
    with every message written at once or, when it could fill the socket buffers, through the
    link's thread; they draw GOSS's or uniform's rows over a chunk that spans all three, and
    search the line steps together."""
    if through_threads:
        init = Peers.__init__

        def no_direct_writes(self, *args):
            init(self, *args)
            self._inline = 0
        monkeypatch.setattr(Peers, "__init__", no_direct_writes)
    sizes = set()
    all_reduce = Peers.all_reduce
    monkeypatch.setattr(Peers, "all_reduce", lambda self, flat, what: (
        sizes.add((self.size, self._inline > 0)) or all_reduce(self, flat, what)))
    X, y = _data()
    params = {"objective": "regression", "num_leaves": 15, "min_data_in_leaf": 5, "verbosity": -1,
              "grow_policy": "depthwise" if through_threads else "leafwise", "max_depth": 5, "sample_rate": 0.5,
              "sampling": "uniform" if through_threads else "goss",
              "step_rule": "leaf_line" if through_threads else "line"}
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=False, dashboard_address=":0") as cl:
        with distributed.Client(cl) as c:
            model = sbd.train(c, params, *_one_chunk_per_worker(c, X, y), num_boost_round=4)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 4))
    assert {s for s in sizes if s[0] > 1} == {(3, not through_threads)}  # (one: the shards' warm-up trees)


@pytest.mark.parametrize("grow_policy", ["leafwise", "depthwise"])
def test_ties_between_the_shards_features_go_to_the_lowest_feature_as_on_one_machine(client, grow_policy):
    """Each shard scans its own share of the features; the second half of the columns repeats
    the first, so every best split ties between a feature of each share, and the agreement must
    take the lower feature, as one machine's scan does."""
    X, y = _data(n_features=3)
    X = np.hstack([X, X])
    params = {"objective": "binary", "num_leaves": 15, "max_depth": 4, "min_data_in_leaf": 5, "verbosity": -1,
              "grow_policy": grow_policy}
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y), num_boost_round=4)
    local = sb.train(params, sb.Dataset(X, y), 4)
    _assert_same_model(model, local)
    used = np.concatenate([tree.feature[tree.left >= 0] for tree in model.trees])
    assert used.size and used.max() < 3


@pytest.mark.parametrize("n_workers", [2, 3, 5])
def test_feature_shares_cut_the_built_features_into_one_run_per_worker(n_workers):
    """Each worker's share is a run of consecutive built features of about equal cells; the
    shares partition the built features (some empty when workers outnumber features), and each
    worker's cell runs are exactly its features' cells."""
    from types import SimpleNamespace

    from smartboost.grower import NodeRows
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=500), rng.integers(0, 3, 500), rng.normal(size=500), rng.normal(size=500)])
    data = sb.Dataset(X, rng.normal(size=500), params={"max_bin": 63}).binned
    offsets, n_bins = data.histogram_layout.offsets, data.mapper.n_bins
    for built in (np.ones(4, bool), np.array([True, False, True, True]), np.array([False, True, False, False])):
        shares = []
        for rank in range(n_workers):
            rows = _PeerRows(NodeRows(data, 1), SimpleNamespace(size=n_workers, rank=rank))
            share = rows.feature_share(built)
            cells = {c for f in np.flatnonzero(share) for c in range(offsets[f], offsets[f] + n_bins[f] + 1)}
            assert {c for w, a, b in rows._runs if w == rank for c in range(a, b)} == cells
            shares.append(share)
        assert (np.sum(shares, axis=0) == built).all()  # every built feature in exactly one share
        owners = [rank for f in np.flatnonzero(built) for rank in range(n_workers) if shares[rank][f]]
        assert owners == sorted(owners)  # runs of consecutive features, in rank order


@pytest.mark.parametrize("draws", [{"colsample_bytree": 0.5}, {"colsample_bynode": 0.5},
                                   {"selection_type": 1, "selection_t": 25, "selection_scope": "node"}],
                         ids=["features per tree", "features per node", "thresholds per node"])
def test_rgbm_draws_equal_single_machine(client, draws):
    """RGBM's draws over the shards' feature shares: the tree's built features (cut into the
    shares), and each node's candidates (read by each shard within its share only)."""
    X, y = _data(n_features=8)
    params = {"objective": "binary", "num_leaves": 15, "min_data_in_leaf": 5, "verbosity": -1, "seed": 2, **draws}
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y), num_boost_round=5)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 5))


@pytest.mark.parametrize("method", ["basic", "intermediate"])
def test_constraints_equal_single_machine(client, method):
    """Monotone and interaction constraints over the shards: the intermediate method scans
    leaves again when their bounds narrow, so its trees sum whole histograms instead of shares."""
    X, y = _data()
    params = {"objective": "binary", "num_leaves": 15, "min_data_in_leaf": 5, "verbosity": -1,
              "monotone_constraints": [1, 0, 0, -1, 0, 0], "monotone_constraints_method": method,
              "interaction_constraints": [[0, 1, 2], [2, 3, 4, 5]]}
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y), num_boost_round=5)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 5))


@pytest.mark.parametrize("grow_policy", ["leafwise", "depthwise"])
def test_categories_are_global_across_workers_and_equal_single_machine(client, grow_policy):
    """Each worker holds other categories (the rows sorted by them); the bins are those of one
    machine, and so are the categorical splits, done by the workers' partitions."""
    rng = np.random.default_rng(3)
    n = 3000
    names = np.array([f"k{i:02d}" for i in range(30)], dtype=object)
    city = np.sort(rng.integers(0, 30, n))
    code = rng.integers(0, 6, n).astype(np.float64)
    x = rng.normal(size=n)
    y = rng.normal(size=30)[city] + (code == 2) + 0.5 * x + 0.1 * rng.normal(size=n)
    frame = pd.DataFrame({"x": x, "city": names[city], "code": code})
    frame.loc[rng.random(n) < 0.05, "city"] = None
    params = {"objective": "regression", "num_leaves": 15, "min_data_in_leaf": 5, "min_data_per_group": 10,
              "cat_smooth": 1.0, "verbosity": -1, "categorical_feature": ["city", "code"], "grow_policy": grow_policy,
              "max_depth": 4}
    model = sbd.train(client, params, dd.from_pandas(frame, npartitions=3),
                      dd.from_pandas(pd.Series(y, name="y"), npartitions=3), num_boost_round=5)
    local = sb.train(params, sb.Dataset(frame, y, params=params), 5)
    _assert_same_model(model, local)
    assert any(tree.categorical_nodes.any() for tree in model.trees)
    for a, b in zip(model.trees, local.trees):
        np.testing.assert_array_equal(a.left_sets, b.left_sets)
    assert all(np.array_equal(model.bin_mapper.categories[f].values, local.bin_mapper.categories[f].values)
               for f in (1, 2))
    np.testing.assert_allclose(model.predict(frame), local.predict(frame), rtol=1e-12)  # base scores: see above


def test_driver_kernels_use_one_thread_when_a_shard_shares_its_host():
    from multiprocessing.connection import Client, Listener
    with Listener(("127.0.0.1", 0)) as listener, Client(listener.address) as conn:
        assert _link_ends(conn) == ("127.0.0.1", "127.0.0.1")
    assert _driver_threads([("127.0.0.1", "127.0.0.1")], 0) == 1
    assert _driver_threads([("192.0.2.1", "10.255.255.1"), ("192.0.2.1", "192.0.2.1")], 4) == 1
    assert _driver_threads([("192.0.2.1", "192.0.2.7"), ("192.0.2.1", "192.0.2.8")], 4) == 4  # other hosts


def test_dataframe_regression_and_multiclass_equal_single_machine(client):
    X, y = _data(seed=2)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    ddf = dd.from_pandas(frame, npartitions=3)
    target = pd.Series(y + np.nan_to_num(X[:, 0]), name="y")
    params = {"objective": "regression", "num_leaves": 7, "verbosity": -1}
    model = sbd.train(client, params, ddf, dd.from_pandas(target, npartitions=3), num_boost_round=5)
    _assert_same_model(model, sb.train(params, sb.Dataset(frame, target), 5))
    assert model.feature_name() == list(frame.columns)
    classes = np.digitize(np.nan_to_num(X[:, 0]), [-0.5, 0.5]).astype(np.float64)
    params = {"objective": "multiclass", "num_class": 3, "num_leaves": 7, "verbosity": -1}
    model = sbd.train(client, params, da.from_array(X, chunks=(1000, 6)), da.from_array(classes, chunks=1000),
                      num_boost_round=3)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, classes), 3))
    # init scores a column per class: a 2-D dask array (with dask arrays), a DataFrame (with frames)
    start = np.stack([np.nan_to_num(X[:, j]) for j in range(3)], axis=1)
    local = sb.train(params, sb.Dataset(X, classes, init_score=start), 3)
    arrays = (da.from_array(X, chunks=(1000, 6)), da.from_array(classes, chunks=1000),
              da.from_array(start, chunks=(1000, 3)))
    frames = (ddf, dd.from_pandas(pd.Series(classes), npartitions=3),
              dd.from_pandas(pd.DataFrame(start), npartitions=3))
    for X_parts, y_parts, start_parts in (arrays, frames):
        model = sbd.train(client, params, X_parts, y_parts, init_score=start_parts, num_boost_round=3)
        _assert_same_model(model, local)


def _ranking_data():
    """60 queries of 5-29 rows: their ids, features, grades 0-3, and the rows where queries start."""
    rng = np.random.default_rng(3)
    sizes = rng.integers(5, 30, 60)
    qid = np.repeat(np.arange(sizes.size), sizes)
    X = rng.normal(size=(qid.size, 5))
    y = np.clip(np.round(X[:, 0] + rng.normal(scale=0.5, size=qid.size) + 1), 0, 3)
    return qid, X, y, np.flatnonzero(np.diff(qid)) + 1


def test_ranking_equals_single_machine_and_queries_must_stay_in_partitions(client):
    qid, X, y, cut = _ranking_data()
    chunks = tuple(np.diff(np.r_[0, cut[[20, 40]], qid.size]))  # partitions end where queries do
    params = {"objective": "lambdarank", "num_leaves": 7, "verbosity": -1, "metric": "ndcg@5"}
    dX, dy, dq = (da.from_array(a, chunks=(chunks,) + a.shape[1:]) for a in (X, y, qid))
    model = sbd.train(client, params, dX, dy, qid=dq, num_boost_round=4)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y, qid=qid), 4))
    bad = (qid.size // 2, qid.size - qid.size // 2)
    assert qid[bad[0] - 1] == qid[bad[0]]  # this cut splits a query
    with pytest.raises(DataError, match="spans two partitions"):
        sbd.train(client, params, *(da.from_array(a, chunks=(bad,) + a.shape[1:]) for a in (X, y)),
                  qid=da.from_array(qid, chunks=(bad,)), num_boost_round=1)
    # ids repeated in a later partition, not next to their first rows: each partition took
    # them as a query of its own (one machine refuses such a qid)
    again = np.r_[qid[:cut[30]], qid[:qid.size - cut[30]]]
    with pytest.raises(DataError, match=r"query 0 spans two partitions \(0 and 1\)"):
        sbd.train(client, params, *(da.from_array(a, chunks=((cut[30], qid.size - cut[30]),) + a.shape[1:])
                                    for a in (X, y)), qid=da.from_array(again, chunks=((cut[30], qid.size - cut[30]),)),
                  num_boost_round=1)


@pytest.mark.parametrize("sampling", ["uniform", "bernoulli", "mvs", "smart1", "smart2", "loss", "auto"])
def test_whole_query_sampling_equals_single_machine(client, monkeypatch, sampling):
    """sampling_unit='query': each shard draws its queries by their global ids (uniform's exact
    count carried over the shards; the importance samplers' scale solved over every shard's
    queries, auto's at the rate the driver chose), the queries of one machine."""
    monkeypatch.setattr(auto, "AUTO_MIN_ROWS", 500)  # the workers run in this process
    monkeypatch.setattr(auto, "AUTO_MIN_FEATURES", 1)
    monkeypatch.setattr(auto, "MIN_SAMPLE_ROWS", 100)
    monkeypatch.setattr(auto, "MAX_RATE", 0.3)  # room for the rate to move on this small set
    qid, X, y, cut = _ranking_data()
    chunks = tuple(np.diff(np.r_[0, cut[[10, 20, 40]], qid.size]))
    params = {"objective": "lambdarank", "num_leaves": 7, "verbosity": -1, "metric": "ndcg@5", "seed": 1,
              "sampling": sampling, "sampling_unit": "query", **({} if sampling == "auto" else {"sample_rate": 0.5})}
    dX, dy, dq = (da.from_array(a, chunks=(chunks,) + a.shape[1:]) for a in (X, y, qid))
    rounds = 10 if sampling == "auto" else 4  # auto: the rate moves at the checks of iterations 0, 4 and 8
    model = sbd.train(client, params, dX, dy, qid=dq, num_boost_round=rounds)
    local = sb.train(params, sb.Dataset(X, y, qid=qid), rounds)
    _assert_same_model(model, local)
    assert model.iteration_stats["sample_size"] == local.iteration_stats["sample_size"]
    assert len(set(local.iteration_stats["sample_size"])) > 1  # whole queries of differing sizes
    if sampling == "auto":
        assert len(set(local.iteration_stats["target_rate"])) > 1
        np.testing.assert_allclose(model.iteration_stats["target_rate"], local.iteration_stats["target_rate"],
                                   rtol=1e-9)


def test_a_worker_whose_sample_is_empty_leaves_the_trees_one_machines(client):
    """A worker with 3 of 3,000 rows draws none of them at some iterations (bernoulli 0.3): its
    rows add nothing, and the fixed-point units are still those of every row together (a worker's
    own unit for no rows, 1, made the trees coarser than one machine's from the second on)."""
    X, y = _data()
    params = {"objective": "regression", "num_leaves": 7, "verbosity": -1, "seed": 4, "sampling": "bernoulli",
              "sample_rate": 0.3}
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y, bounds=[0, 3, X.shape[0]]),
                      num_boost_round=8)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 8))


def test_a_worker_holding_one_class_trains_and_a_single_class_over_all_is_refused(client):
    """A binary objective needs both classes over every worker's rows, not on each worker (a
    partition of sorted data holds one)."""
    X, y = _data()
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1}
    model = sbd.train(client, params, *_one_chunk_per_worker(client, X, y, bounds=[0, 100, X.shape[0]]),
                      num_boost_round=3)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 3))
    with pytest.raises(DataError, match="single class"):
        sbd.train(client, params, *_one_chunk_per_worker(client, X[:1000], np.zeros(1000)), num_boost_round=1)


def test_eval_set_early_stopping_and_predict(client):
    X, y = _data()
    Xv, yv = _data(seed=9)
    dX, dy = da.from_array(X, chunks=1000), da.from_array(y, chunks=1000)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "metric": "auc", "early_stopping_round": 3,
              "learning_rate": 0.5}
    model = sbd.train(client, params, dX, dy, eval_set=[(da.from_array(Xv, chunks=1000), yv)], num_boost_round=200)
    train_set = sb.Dataset(X, y)
    local = sb.train(params, train_set, 200, valid_sets=[sb.Dataset(Xv, yv, reference=train_set)])
    assert model.best_iteration == local.best_iteration < 200
    assert model.evals_result["valid_0"]["auc"] == local.evals_result["valid_0"]["auc"]
    out = sbd.predict(model, da.from_array(Xv, chunks=700))
    assert isinstance(out, da.Array)
    np.testing.assert_array_equal(out.compute(), model.predict(Xv))
    frame = dd.from_pandas(pd.DataFrame(Xv), npartitions=2)
    for data in (da.from_array(Xv, chunks=700), frame):  # an iteration range, as Booster.predict's
        ranged = sbd.predict(model, data, raw_score=True, start_iteration=2, num_iteration=3).compute()
        np.testing.assert_array_equal(np.asarray(ranged),
                                      model.predict(Xv, raw_score=True, start_iteration=2, num_iteration=3))
    with pytest.raises(sb.ParameterError, match="start_iteration must be in"):  # at once, not at compute()
        sbd.predict(model, frame, start_iteration=10_000)
    traffic = model.iteration_stats["bytes"]
    splits = [int((tree.left >= 0).sum()) for tree in model.trees]
    assert len(traffic) == model.current_iteration() == len(splits)


def test_custom_metrics_on_the_driver_equal_the_local_runs(client):
    """``feval`` (train) and ``eval_metric`` (the estimators, names and functions) are computed on
    the driver's evaluation sets: the same values and early stopping as the local runs."""
    X, y = _data()
    Xv, yv = _data(seed=9)
    dX, dy = da.from_array(X, chunks=1000), da.from_array(y, chunks=1000)

    def error_rate(preds, eval_data):
        return "error_rate", float(np.mean((preds > 0.5) != eval_data.get_label())), False

    def brier(y_true, y_pred):
        return "brier", float(np.mean((y_pred - y_true) ** 2)), False

    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "metric": "None", "early_stopping_round": 3,
              "learning_rate": 0.5}
    model = sbd.train(client, params, dX, dy, eval_set=[(Xv, yv)], num_boost_round=200, feval=error_rate)
    train_set = sb.Dataset(X, y)
    local = sb.train(params, train_set, 200, valid_sets=[sb.Dataset(Xv, yv, reference=train_set)], feval=error_rate)
    assert model.best_iteration == local.best_iteration
    assert model.evals_result["valid_0"]["error_rate"] == local.evals_result["valid_0"]["error_rate"]
    estimator = sbd.DaskSmartBoostClassifier(client=client, n_estimators=5, num_leaves=7, verbosity=-1)
    estimator.fit(dX, dy, eval_set=[(Xv, yv)], eval_metric=["auc", brier])
    local_estimator = SmartBoostClassifier(n_estimators=5, num_leaves=7, verbosity=-1)
    local_estimator.fit(X, y, eval_set=[(Xv, yv)], eval_metric=["auc", brier])
    assert estimator.evals_result_ == local_estimator.evals_result_
    assert set(estimator.evals_result_["valid_0"]) == {"auc", "logloss", "brier"}
    with pytest.raises(sb.ParameterError, match="feval must be a function"):
        sbd.train(client, params, dX, dy, feval="auc")
    with pytest.raises(sb.ParameterError, match="eval_metric"):
        estimator.fit(dX, dy, eval_set=[(Xv, yv)], eval_metric=[3])


def test_bytes_per_iteration_count_every_exchange_between_the_shards(client, monkeypatch):
    """``iteration_stats["bytes"]`` counts the driver's steps and what the shards send each
    other: per exchange of a histogram, each of W shards sends the (W - 1) / W of it that the
    others scan (two int64 values a cell, narrowed to fewer bytes), one message per peer, and
    the shares of two shards make up the whole histogram."""
    X, y = _data()
    sent_by, shares, narrowed = [], [], []
    send, reduce_scatter, send_narrow = Peers._send, Peers.reduce_scatter, Peers._send_narrow
    monkeypatch.setattr(Peers, "_send", lambda self, j, array: (
        sent_by.append((self.context, array.nbytes)) or send(self, j, array)))
    monkeypatch.setattr(Peers, "_send_narrow", lambda self, j, values: (
        self.rank == 0 and narrowed.append((self.context, _narrowed(values).size)), send_narrow(self, j, values)))
    monkeypatch.setattr(Peers, "reduce_scatter", lambda self, parts, what: (
        shares.append((self.rank, self.context, what, [p.size for p in parts])) or reduce_scatter(self, parts, what)))
    model = sbd.train(client, {"objective": "binary", "num_leaves": 7, "verbosity": -1},
                      *_one_chunk_per_worker(client, X, y), num_boost_round=5)
    hist_cells = sb.Dataset(X, y, reference=model).binned.histogram_layout.n_cells
    for it, sent in enumerate(model.iteration_stats["bytes"]):
        here = f"iteration {it},"
        mine = [(what, sizes) for rank, context, what, sizes in shares if rank == 0 and context.startswith(here)]
        n_splits = int((model.trees[it].left >= 0).sum())
        assert [what for what, _ in mine].count("split histograms") == n_splits  # leaf-wise: one per split
        assert mine[0][0] == "root histogram" and sum(mine[0][1]) == 2 * hist_cells  # two shares of one histogram
        assert 0 < min(mine[0][1])  # each shard scans a share
        peer_bytes = sum(n for context, n in sent_by if context.startswith(here))
        histogram_values = sum(sizes[1] for _, sizes in mine)  # the int64 values shard 0 sends of the histograms
        assert histogram_values < 2 * hist_cells * len(mine)  # less than whole histograms
        narrowed_bytes = sum(n for context, n in narrowed if context.startswith(here))  # histograms, and sums
        assert histogram_values < narrowed_bytes < 6 * histogram_values  # narrowed: 5 bytes a cell or fewer
        assert peer_bytes <= sent <= peer_bytes + 65_536  # plus the driver's few steps and the units


@given(st.lists(st.integers(-2**63, 2**63 - 1), min_size=1, max_size=50), st.integers(0, 63))
def test_narrowed_messages_give_back_every_int64(values, shift):
    """A narrowed message holds the values in the fewest bytes of 1, 2, 3, 4, 5, 6 and 8 that
    hold every one (a shift spreads them over every width), and widening it gives them back bit
    for bit."""
    values = np.array(values, np.int64) >> shift
    message = _narrowed(values)
    width = int(message[0])
    assert width in (1, 2, 3, 4, 5, 6, 8) and message.size == HEADER + width * values.size
    narrower = {2: 1, 3: 2, 4: 3, 5: 4, 6: 5, 8: 6}.get(width)  # the next width down (7 bytes: none)
    assert width == 1 or not all(-2 ** (8 * narrower - 1) <= int(v) < 2 ** (8 * narrower - 1) for v in values)
    out = np.arange(values.size, dtype=np.int64)
    widen_add(message[HEADER:], width, out)
    np.testing.assert_array_equal(out - np.arange(values.size), values)


def _narrowed(values: np.ndarray) -> np.ndarray:
    message = np.empty(HEADER + 8 * values.size, np.uint8)
    return message[:narrow_into(values, message)]


# -- bad input and faults -------------------------------------------------------------------------


def test_misaligned_data_and_local_arrays_are_refused(client):
    X, y = _data(n=400)
    dX = da.from_array(X, chunks=200)
    with pytest.raises(DataError, match="row chunks"):
        sbd.train(client, {"objective": "binary"}, dX, da.from_array(y, chunks=100))
    with pytest.raises(DataError, match="dask array"):
        sbd.train(client, {"objective": "binary"}, X, y)
    bad = y.copy()
    bad[250] = np.nan
    with pytest.raises(DataError, match="partition 1: y contains nan at row 50"):
        sbd.train(client, {"objective": "binary"}, dX, da.from_array(bad, chunks=200))
    bad[250] = 5.0  # the row counted from the worker's first row, without its partition
    with pytest.raises(DataError, match=r"partition 1: label must be an integer class in \[0, 3\) .*row 50 has 5"):
        sbd.train(client, {"objective": "multiclass", "num_class": 3}, dX, da.from_array(bad, chunks=200))
    weight = np.ones(400)
    weight[250] = -1.0  # refused by Dataset; was taken here
    with pytest.raises(DataError, match=r"partition 1: sample_weight contains a negative value \(-1.0\) at row 50"):
        sbd.train(client, {"objective": "binary"}, dX, da.from_array(y, chunks=200),
                  sample_weight=da.from_array(weight, chunks=200))


def test_partitions_of_other_lengths_than_x_are_refused(client):
    """A DataFrame's partition lengths are unknown to the driver: a label of other partition
    lengths reached the kernels (a double free, or rows read past the label's end)."""
    X, y = _data(n=200)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=2)
    with pytest.raises(DataError, match="partition 0: y has 120 entries but the data has 100 rows"):
        sbd.train(client, {"objective": "binary"}, frame, da.from_array(y, chunks=((120, 80),)))
    with pytest.raises(DataError, match="partition 0: sample_weight has 120 entries"):
        sbd.train(client, {"objective": "binary"}, frame, da.from_array(y, chunks=100),
                  sample_weight=da.from_array(np.ones(200), chunks=((120, 80),)))
    with pytest.raises(DataError, match="partition 0: qid has 120 entries but X has 100 rows"):
        sbd.train(client, {"objective": "lambdarank"}, frame, da.from_array(np.zeros(200), chunks=100),
                  qid=da.from_array(np.arange(200) // 10, chunks=((120, 80),)))


def test_empty_partitions_are_left_out(client):
    """Partitions without rows (a filtered DataFrame's) were an error, "partition 1: X has no
    rows"; they hold nothing to train on and the model is that of the other rows."""
    X, y = _data(n=600)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "sampling": "trimming", "sample_rate": 0.5}
    chunks = (0, 200, 0, 400, 0)
    model = sbd.train(client, params, da.from_array(X, chunks=(chunks, 6)), da.from_array(y, chunks=(chunks,)),
                      num_boost_round=3)
    _assert_same_model(model, sb.train(params, sb.Dataset(X, y), 3))
    frame, label = dd.from_pandas(pd.DataFrame(X), npartitions=3), dd.from_pandas(pd.Series(y), npartitions=3)
    keep = lambda part: part[part.index >= 200]  # noqa: E731 (the first partition ends empty)
    model = sbd.train(client, params, frame.map_partitions(keep), label.map_partitions(keep), num_boost_round=3)
    _assert_same_model(model, sb.train(params, sb.Dataset(X[200:], y[200:]), 3))
    with pytest.raises(DataError, match="partition 0: y has 200 entries but X has 0 rows"):
        sbd.train(client, params, frame.map_partitions(keep), label, num_boost_round=1)
    with pytest.raises(DataError, match="X has no rows"):
        sbd.train(client, params, frame.map_partitions(lambda part: part.iloc[:0]),
                  label.map_partitions(lambda part: part.iloc[:0]), num_boost_round=1)


def test_callbacks_are_checked_as_in_local_training(client):
    X, y = _data(n=400)
    dX, dy = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    # a function was taken, then failed with an AttributeError once training started
    with pytest.raises(sb.ParameterError, match=r"callbacks\[0\] must be a smartboost.TrainingCallback, got function"):
        sbd.train(client, {"objective": "binary"}, dX, dy, callbacks=[lambda env: None])
    recorded = {}
    sbd.train(client, {"objective": "binary", "metric": "auc", "verbosity": -1}, dX, dy, num_boost_round=2,
              eval_set=[(X, y)], callbacks=sb.record_evaluation(recorded))  # one callback, not in a list
    assert len(recorded["valid_0"]["auc"]) == 2


def test_feature_names_eval_sets_client_and_timeout_are_checked(client):
    """Feature names of another count, or repeated, made every shard fail to load the model and
    die ("lost the connection to worker"); eval_set entries that are not pairs, fewer eval
    weights than eval sets, a client that is not one and a timeout that is not a number were
    raw ValueError, IndexError, AttributeError and TypeError."""
    X, y = _data(n=400)
    dX, dy = da.from_array(X, chunks=200), da.from_array(y, chunks=200)
    params = {"objective": "binary", "verbosity": -1}
    with pytest.raises(DataError, match="feature_name has 2 names but the data has 6 features"):
        sbd.train(client, params, dX, dy, feature_name=["a", "b"], num_boost_round=1)
    with pytest.raises(DataError, match="feature names must be unique"):
        sbd.train(client, params, dX, dy, feature_name=list("aabcde"), num_boost_round=1)
    model = sbd.train(client, params, dX, dy, feature_name=list("abcdef"), num_boost_round=1)  # the shards live on
    assert model.feature_name() == list("abcdef")
    assert sbd.train(client, params, dX, dy, feature_name="auto", num_boost_round=1).feature_name()[0] == "Column_0"
    with pytest.raises(sb.ParameterError, match=r"eval_set\[0\] must be an \(X, y\) pair"):
        sbd.train(client, params, dX, dy, eval_set=[X], num_boost_round=1)
    with pytest.raises(sb.ParameterError, match="eval_sample_weight has 1 entries for 2 eval sets"):
        sbd.train(client, params, dX, dy, eval_set=[(X, y), (X, y)], eval_sample_weight=[np.ones(400)])
    with pytest.raises(sb.ParameterError, match="client must be a distributed.Client"):
        sbd.train("localhost:8786", params, dX, dy)
    with pytest.raises(sb.ParameterError, match="'timeout' must be a number"):
        sbd.train(client, params, dX, dy, timeout="5")


def test_a_step_slower_than_the_timeout_stops_training(client, monkeypatch):
    X, y = _data(n=400)
    original = Shard.op_gradients

    def slow(self):
        time.sleep(5.0)
        return original(self)

    # a timeout every other step meets on a loaded machine (0.2 s once timed out the connection
    # step, which waits twice the timeout), and a step that takes more than three times it
    monkeypatch.setattr(Shard, "op_gradients", slow)
    start = time.perf_counter()
    with pytest.raises(DistributedError, match="did not answer step 'gradients' within 1.5 s"):
        sbd.train(client, {"objective": "binary", "verbosity": -1}, da.from_array(X, chunks=200),
                  da.from_array(y, chunks=200), timeout=1.5)
    assert time.perf_counter() - start < 30


def test_a_stalled_exchange_between_shards_names_both_workers_and_the_exchange(client, monkeypatch):
    X, y = _data(n=2000)
    dX, dy = _one_chunk_per_worker(client, X, y)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1}
    sbd.train(client, params, dX, dy, num_boost_round=2)  # kernels loaded: setup steps stay under the timeout
    original = _PeerRows.split_many

    def stalled(self, requests):
        if self.peers.rank == 1 and self.peers.context.startswith("iteration 2,"):
            time.sleep(6.0)
        return original(self, requests)

    monkeypatch.setattr(_PeerRows, "split_many", stalled)
    start = time.perf_counter()
    with pytest.raises(DistributedError, match=r"waited more than 2 s for worker \S+ in the exchange of split "
                                               r"histograms \(iteration 2, tree of output 0"):
        sbd.train(client, params, dX, dy, num_boost_round=5, timeout=2.0)
    assert time.perf_counter() - start < 30


def test_a_worker_killed_in_the_middle_of_a_tree_stops_training_at_once(tmp_path):
    X, y = _data(n=2000)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1}
    stamp = tmp_path / "killed_at"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl:
        with distributed.Client(cl) as c:
            victim = sorted(c.scheduler_info()["workers"])[1]

            def arm():  # on the victim: die in the first exchange of a split in iteration 3
                from smartboost.dask import _shard
                split_many = _shard._PeerRows.split_many

                def dying(self, requests):
                    if self.peers.context.startswith("iteration 3,"):
                        stamp.write_text(repr(time.time()))
                        os.kill(os.getpid(), signal.SIGKILL)
                    return split_many(self, requests)
                _shard._PeerRows.split_many = dying

            c.run(arm, workers=[victim])
            with pytest.raises(DistributedError, match="lost the connection to worker") as info:
                sbd.train(c, params, *_one_chunk_per_worker(c, X, y), num_boost_round=20, timeout=60)
            # the lost link is seen at once, not after the timeout (timed from the kill: starting the
            # workers and the first iterations take what a loaded machine gives them)
            assert time.time() - float(stamp.read_text()) < 30
            assert victim in str(info.value)
            assert "grow" in str(info.value) or "split histograms (iteration 3" in str(info.value)


class _KillWorker(sb.TrainingCallback):
    def __init__(self, client, at):
        self.client, self.at = client, at
        self.killed_at = None

    def after_iteration(self, env):
        if env.iteration == self.at:
            pids = self.client.run(os.getpid)
            self.killed_at = time.perf_counter()
            os.kill(pids[sorted(pids)[0]], signal.SIGKILL)
        return False


def test_a_lost_worker_gives_a_clear_error_and_training_resumes_from_the_checkpoint(tmp_path):
    X, y = _data(n=2000)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1}
    path = tmp_path / "model.json"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cl:
        with distributed.Client(cl) as c:
            dX, dy = da.from_array(X, chunks=500), da.from_array(y, chunks=500)
            kill = _KillWorker(c, at=4)
            with pytest.raises(DistributedError, match="lost the connection to worker") as info:
                sbd.train(c, params, dX, dy, num_boost_round=50, timeout=60,
                          callbacks=[sb.checkpoint(path, period=2), kill])
            assert time.perf_counter() - kill.killed_at < 30  # seen at once, not after the timeout
            assert f"init_model='{path}'" in "\n".join(info.value.__notes__)
            c.wait_for_workers(2, timeout=60)
            resumed = sbd.train(c, params, dX, dy, num_boost_round=5, init_model=str(path))
    assert resumed.current_iteration() == sb.Booster(model_file=path).current_iteration() + 5
    uninterrupted = sb.train(params, sb.Dataset(X, y), resumed.current_iteration())
    np.testing.assert_allclose(resumed.predict(X), uninterrupted.predict(X), rtol=1e-12)


# -- estimators -----------------------------------------------------------------------------------


@pytest.mark.parametrize("class_weight", ["balanced", {"yes": 3.0}])
def test_dask_classifier_weighs_classes_as_the_local_one(client, class_weight):
    # class_weight was silently ignored on Dask
    X, y = _data()
    labels = np.where(y > 0, "yes", "no")
    weight = np.random.default_rng(2).uniform(0.5, 2.0, len(y))
    local = sb.sklearn.SmartBoostClassifier(n_estimators=5, num_leaves=7, class_weight=class_weight).fit(
        X, labels, sample_weight=weight)
    arrays = (da.from_array(X, chunks=1000), lambda v: da.from_array(v, chunks=1000))
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frames = (dd.from_pandas(frame, npartitions=3), lambda v: dd.from_pandas(pd.Series(v), npartitions=3))
    for data, chunked in (arrays, frames):
        model = sbd.DaskSmartBoostClassifier(client=client, n_estimators=5, num_leaves=7, class_weight=class_weight)
        model.fit(data, chunked(labels), sample_weight=chunked(weight))
        same_kind = X if isinstance(data, da.Array) else frame  # a frame's model has its feature names
        np.testing.assert_allclose(model.to_local().predict_proba(same_kind), local.predict_proba(X), rtol=1e-12)
    with pytest.raises(sb.ParameterError, match="class_weight is for SmartBoostClassifier"):
        sbd.DaskSmartBoostRegressor(client=client, class_weight="balanced").fit(da.from_array(X, chunks=1000),
                                                                               da.from_array(y, chunks=1000))


def test_dask_estimators_take_callbacks_in_fit(client):
    X, y = _data()
    history = {}
    sbd.DaskSmartBoostRegressor(client=client, n_estimators=3).fit(
        da.from_array(X, chunks=1000), da.from_array(y, chunks=1000), eval_set=[(da.from_array(X, chunks=1000),
                                                                                 da.from_array(y, chunks=1000))],
        callbacks=[sb.record_evaluation(history)])
    assert [len(values) for values in history["valid_0"].values()] == [3]


def test_estimators_fit_on_dask_and_predict_dask_collections(client):
    X, y = _data()
    dX, dy = da.from_array(X, chunks=1000), da.from_array(y, chunks=1000)
    labels = np.where(y > 0, "yes", "no")
    model = sbd.DaskSmartBoostClassifier(client=client, n_estimators=5, num_leaves=7).fit(
        dX, da.from_array(labels, chunks=1000))
    local = sb.sklearn.SmartBoostClassifier(n_estimators=5, num_leaves=7).fit(X, labels)
    assert list(model.classes_) == ["no", "yes"]
    np.testing.assert_array_equal(model.predict(dX).compute(), local.predict(X))
    np.testing.assert_allclose(model.predict_proba(dX).compute(), local.predict_proba(X))
    np.testing.assert_array_equal(model.to_local().predict(X), local.predict(X))
    assert model.get_params()["client"] is client and "timeout" in model.get_params()
    regressor = sbd.DaskSmartBoostRegressor(client=client, n_estimators=3, lambda_l2=1.0).fit(dX, dy)
    assert isinstance(regressor.predict(dX), da.Array)
    assert regressor.booster_.params["lambda_l2"] == 1.0
    frame = dd.from_pandas(pd.DataFrame(X, columns=list("abcdef")), npartitions=2)
    ranker = sbd.DaskSmartBoostRanker(client=client, n_estimators=3, num_leaves=5).fit(
        frame, dd.from_pandas(pd.Series(y), npartitions=2),
        qid=dd.from_pandas(pd.Series(np.arange(y.size) // 10), npartitions=2))
    assert list(ranker.feature_names_in_) == list("abcdef")
    assert ranker.predict(frame).compute().shape == (y.size,)


def test_estimators_predict_take_lightgbms_prediction_arguments(client):
    """The Dask estimators' predict and predict_proba take raw_score, start_iteration,
    num_iteration, pred_leaf and pred_contrib (LightGBM's dask estimators do) and give, on
    arrays and frames, what the local estimator gives; bad ones fail before any block runs."""
    X, y = _data()
    labels = np.where(y > 0, "yes", "no")
    dX, frame = da.from_array(X, chunks=1000), dd.from_pandas(pd.DataFrame(X), npartitions=2)
    model = sbd.DaskSmartBoostClassifier(client=client, n_estimators=6, num_leaves=7).fit(
        dX, da.from_array(labels, chunks=1000))
    local = model.to_local()
    for kwargs in ({"start_iteration": 2, "num_iteration": 3}, {"raw_score": True, "num_iteration": 2},
                   {"pred_leaf": True, "start_iteration": 1}, {"pred_contrib": True}):
        for method in ("predict", "predict_proba"):
            expected = getattr(local, method)(X, **kwargs)
            on_array = getattr(model, method)(dX, **kwargs)
            assert isinstance(on_array, da.Array) and on_array.dtype == expected.dtype
            same = np.testing.assert_array_equal if expected.dtype.kind == "U" else np.testing.assert_allclose
            same(on_array.compute(), expected)
            same(np.asarray(getattr(model, method)(frame, **kwargs).compute()), expected)
    regressor = sbd.DaskSmartBoostRegressor(client=client, n_estimators=4, num_leaves=5).fit(dX, da.from_array(
        y, chunks=1000))
    np.testing.assert_array_equal(regressor.predict(dX, pred_leaf=True, num_iteration=2).compute(),
                                  regressor.to_local().predict(X, pred_leaf=True, num_iteration=2))
    with pytest.raises(sb.ParameterError, match="start_iteration"):
        regressor.predict(dX, start_iteration=100)


def test_classifier_labels_as_a_frame_column_and_missing_labels(client):
    """A one-column DataFrame y failed with an AttributeError ('DataFrame' has no 'ravel'), and
    NaN labels became a class, refused as "labels not in classes_ [0.0, 1.0, nan]: [nan]"."""
    X, y = _data(n=400)
    frame = dd.from_pandas(pd.DataFrame(X), npartitions=2)
    model = sbd.DaskSmartBoostClassifier(client=client, n_estimators=2, num_leaves=5, verbosity=-1)
    model.fit(frame, dd.from_pandas(pd.DataFrame({"label": y}), npartitions=2))
    local = sb.sklearn.SmartBoostClassifier(n_estimators=2, num_leaves=5, verbosity=-1).fit(X, y)
    np.testing.assert_array_equal(model.predict(frame).compute().to_numpy(), local.predict(X))
    with pytest.raises(DataError, match="y must be one column, got a DataFrame of 2 columns"):
        model.fit(frame, dd.from_pandas(pd.DataFrame({"a": y, "b": y}), npartitions=2))
    for labels in (np.where(np.arange(400) == 250, np.nan, y), np.where(np.arange(400) == 250, None, y.astype(str))):
        with pytest.raises(DataError, match=r"y contains a missing label \(NaN or None\)"):
            model.fit(frame, dd.from_pandas(pd.Series(labels), npartitions=2))
    with pytest.raises(DataError, match=r"X must be 2-dimensional, got shape \(400,\)"):
        sbd.predict(model.booster_, da.from_array(X[:, 0], chunks=200))  # an IndexError in map_blocks


def test_classifier_of_a_custom_objective_warns_and_gives_raw_scores(client):
    def logloss(label, raw):
        p = 1.0 / (1.0 + np.exp(-raw))
        return p - label, p * (1.0 - p)

    X, y = _data()
    dX, labels = da.from_array(X, chunks=1000), np.where(y > 0, "yes", "no")
    model = sbd.DaskSmartBoostClassifier(client=client, n_estimators=3, num_leaves=7, objective=logloss).fit(
        dX, da.from_array(labels, chunks=1000))
    raw = model.decision_function(dX).compute()
    # predict_proba read the raw scores as probabilities of 'yes', as the local classifier did
    with pytest.warns(RawScoreWarning, match=r"DaskSmartBoostClassifier.predict_proba: .*returns the raw scores"):
        np.testing.assert_array_equal(model.predict_proba(dX).compute(), raw)
    with pytest.warns(RawScoreWarning, match=r"DaskSmartBoostClassifier.predict: .*as if they were log-odds"):
        np.testing.assert_array_equal(model.predict(dX).compute(), np.where(raw > 0, "yes", "no"))


def test_learning_rate_schedule_equals_single_machine_and_split_parameters_stay(client):
    """The scheduler scales each tree by the learning rate: a schedule applies on Dask as on one
    machine; the workers' growers keep the split parameters they started with, so a change of
    those is refused."""
    X, y = _data()
    params = {"objective": "binary", "num_leaves": 7, "min_data_in_leaf": 5, "verbosity": -1}
    Xd, yd = da.from_array(X, chunks=(1500, X.shape[1])), da.from_array(y, chunks=(1500,))
    schedule = [0.3, 0.1, 0.05]
    model = sbd.train(client, params, Xd, yd, num_boost_round=3,
                      callbacks=[sb.reset_parameter(learning_rate=schedule)])
    local = sb.train(params, sb.Dataset(X, y), 3, callbacks=[sb.reset_parameter(learning_rate=schedule)])
    _assert_same_model(model, local)
    with pytest.raises(sb.ParameterError, match="lambda_l2 cannot change during training on Dask"):
        sbd.train(client, params, Xd, yd, num_boost_round=3, callbacks=[sb.reset_parameter(lambda_l2=[0, 1, 1])])
