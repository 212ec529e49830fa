"""Query-level sampling (sampling_unit='query'): whole queries, realised rates, unbiasedness, seeds."""

import numpy as np
import pytest
from test_ranking import make_ranking

import smartboost as sb
from smartboost._params import training_params
from smartboost.errors import ParameterError
from smartboost.objectives import make_objective
from smartboost.sampling import SamplingContext, make_sampler
from smartboost.sampling.queries import solve_scale_weighted
from smartboost.sampling.scale import solve_scale

QUERY_SAMPLERS = ("uniform", "bernoulli", "smart1", "smart2", "mvs")


def _params(**user):
    return training_params({"objective": "lambdarank", "sampling_unit": "query", **user})


def _context(n_queries=400, seed=0, iteration=0):
    """LambdaMART gradients at random scores: queries of 5-40 rows, some with every grade equal (g = h = 0)."""
    X, label, sizes = make_ranking(n_queries, seed=seed)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    label[starts[0]:starts[3]] = 2.0  # three queries without pairs
    rng = np.random.default_rng(seed + 1)
    scores = rng.standard_normal(label.size)
    objective = make_objective("lambdarank")
    objective.bind(label, starts)
    grad, hess = np.empty_like(scores), np.empty_like(scores)
    objective.grad_hess(label, scores, grad, hess)
    weight = rng.choice([0.5, 1.0, 2.0], label.size)
    return SamplingContext(iteration, grad, hess, weight, label, scores, objective), starts


def _draw(sampler, ctx):
    n = ctx.label.size
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    m, weight = sampler.sample(ctx, rows, rest)
    return rows[:m].astype(np.int64), rest[:n - m].astype(np.int64), weight


@pytest.mark.parametrize("sampling", QUERY_SAMPLERS)
def test_queries_are_kept_whole_with_one_weight(sampling):
    ctx, starts = _context()
    sampler = make_sampler(_params(sampling=sampling, sample_rate=0.3), ctx.label.size)
    picked, others, weight = _draw(sampler, ctx)
    assert np.all(np.diff(picked) > 0) and np.all(np.diff(others) > 0)
    np.testing.assert_array_equal(np.sort(np.r_[picked, others]), np.arange(ctx.label.size))
    kept = np.zeros(ctx.label.size, bool)
    kept[picked] = True
    ratio = np.where(kept, weight / ctx.weight, np.nan)
    n_kept = 0
    for a, b in zip(starts[:-1], starts[1:]):
        assert kept[a:b].all() or not kept[a:b].any()
        if kept[a]:
            n_kept += 1
            np.testing.assert_allclose(ratio[a:b], ratio[a], rtol=1e-15)  # the query's 1 / p
            assert ratio[a] >= 1.0
    n_queries, sizes = starts.size - 1, np.diff(starts)
    if sampling == "uniform":  # exactly max(1, round(s Q)) queries
        assert n_kept == round(0.3 * n_queries)
    elif sampling == "bernoulli":  # Binomial(Q, 0.3) queries: within 5 standard deviations
        assert abs(n_kept - 0.3 * n_queries) < 5 * np.sqrt(n_queries * 0.3 * 0.7)
    else:
        # The kept rows: expected s N (the scale solves for it), variance sum_q size_q^2 p_q (1 - p_q)
        # at most max(size) * s N; within 5 standard deviations.
        target = 0.3 * sizes.sum()
        assert abs(picked.size - target) < 5 * np.sqrt(sizes.max() * target)


@pytest.mark.parametrize("sampling", ["smart1", "smart2", "mvs"])
def test_queries_without_pairs_are_never_kept_by_importance(sampling):
    ctx, starts = _context()
    sampler = make_sampler(_params(sampling=sampling, sample_rate=0.5), ctx.label.size)
    for k in range(10):
        ctx.iteration = k
        picked, _, _ = _draw(sampler, ctx)
        assert picked.min() >= starts[3]


@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_uniform_draws_exactly_rate_times_the_queries(rate):
    ctx, starts = _context()
    sampler = make_sampler(_params(sampling="uniform", sample_rate=rate), ctx.label.size)
    picked, _, weight = _draw(sampler, ctx)
    n_queries = starts.size - 1
    k = round(rate * n_queries)
    assert np.isin(starts[:-1], picked).sum() == k
    np.testing.assert_allclose(weight[picked] / ctx.weight[picked], n_queries / k)


@pytest.mark.parametrize("sampling", QUERY_SAMPLERS)
@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_realised_rates(sampling, rate):
    """uniform/bernoulli: the share of queries is the rate; importance samplers: the expected share of rows."""
    ctx, starts = _context(n_queries=2000)
    sizes = np.diff(starts)
    sampler = make_sampler(_params(sampling=sampling, sample_rate=rate), ctx.label.size)
    query_share, row_share = [], []
    for k in range(30):
        ctx.iteration = k
        picked, _, _ = _draw(sampler, ctx)
        query_share.append(np.isin(starts[:-1], picked).mean())
        row_share.append(picked.size / ctx.label.size)
    if sampling in ("uniform", "bernoulli"):
        assert np.mean(query_share) == pytest.approx(rate, rel=0.03)
    else:
        assert np.mean(row_share) == pytest.approx(rate, rel=0.03)
        # the solved probabilities keep rate N rows in expectation, exactly
        importance = np.add.reduceat(sampler.inner.importance(ctx), starts[:-1])
        expected_rows = (sizes * np.minimum(1.0, sampler.inner.scale * importance)).sum()
        assert expected_rows == pytest.approx(rate * ctx.label.size, rel=1e-9)


def _weighted_sum_z_scores(sampling, drop_weights=False, draws=300):
    """z-scores of the Monte Carlo means of sampled weighted sums of g over the relevant rows (the G
    of a split on relevance) and of h, against the full sums. (Over all rows of a query g sums to 0.)"""
    ctx, _ = _context()
    sampler = make_sampler(_params(sampling=sampling, sample_rate=0.2), ctx.label.size)
    side = ctx.label >= 2
    sums = np.empty((draws, 2))
    for k in range(draws):
        ctx.iteration = k
        picked, _, weight = _draw(sampler, ctx)
        v = ctx.weight[picked] if drop_weights else weight[picked]
        sums[k] = (v @ (ctx.grad[picked] * side[picked]), v @ ctx.hess[picked])
    truth = np.array([ctx.weight @ (ctx.grad * side), ctx.weight @ ctx.hess])
    assert truth[0] < 0.0 < truth[1]
    standard_error = sums.std(axis=0, ddof=1) / np.sqrt(draws)
    return np.abs(sums.mean(axis=0) - truth) / standard_error


@pytest.mark.parametrize("sampling", QUERY_SAMPLERS)
def test_weighted_sums_are_unbiased(sampling):
    assert np.all(_weighted_sum_z_scores(sampling) < 3.0)


@pytest.mark.parametrize("sampling", QUERY_SAMPLERS)
def test_unbiasedness_check_fails_without_the_weights(sampling):
    assert np.any(_weighted_sum_z_scores(sampling, drop_weights=True) > 3.0)


@pytest.mark.parametrize("sampling", QUERY_SAMPLERS)
def test_draws_are_deterministic_by_seed(sampling):
    ctx, _ = _context()

    def picked(seed, iteration=0):
        ctx.iteration = iteration
        return _draw(make_sampler(_params(sampling=sampling, sample_rate=0.3, seed=seed), ctx.label.size), ctx)[0]

    np.testing.assert_array_equal(picked(1), picked(1))
    assert not np.array_equal(picked(1), picked(2))
    assert not np.array_equal(picked(1), picked(1, iteration=1))


def _scale_by_bisection(importance, size, target):
    lo, hi = 0.0, 1.0
    while (size * np.minimum(1.0, hi * importance)).sum() < target:
        hi *= 2.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if (size * np.minimum(1.0, mid * importance)).sum() < target else (lo, mid)
    return hi


def test_weighted_scale_solver():
    rng = np.random.default_rng(7)
    importance = np.r_[rng.exponential(size=300) ** 3, np.zeros(20), np.full(30, 0.5)]  # heavy tail, zeros, ties
    size = rng.integers(1, 200, importance.size)
    for target in (10.0, 1000.0, 0.5 * size[importance > 0].sum()):
        c = solve_scale_weighted(importance, size, target)
        assert (size * np.minimum(1.0, c * importance)).sum() == pytest.approx(target, rel=1e-9)
        assert c == pytest.approx(_scale_by_bisection(importance, size, target), rel=1e-9)
    ones = np.ones(importance.size, np.int64)  # one row per query: the row solver's answer
    assert solve_scale_weighted(importance, ones, 50.0) == pytest.approx(solve_scale(importance, 50.0, np.uint64(0)))
    assert solve_scale_weighted(np.zeros(4), np.ones(4), 1.0) == 0.0
    assert solve_scale_weighted(np.r_[0.0, 1.0, 2.0], np.r_[5, 2, 3], 5.0) == np.inf


@pytest.mark.parametrize("sampling", ["uniform", "mvs", "smart2"])
def test_lambdamart_trains_on_whole_queries(sampling):
    X, y, sizes = make_ranking(120, seed=3)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cut = int(starts[90])
    train = sb.Dataset(X[:cut], y[:cut], group=sizes[:90])
    test = sb.Dataset(X[cut:], y[cut:], group=sizes[90:], reference=train)
    params = {"objective": "lambdarank", "num_leaves": 7, "sampling": sampling, "sample_rate": 0.5,
              "sampling_unit": "query", "verbosity": -1}
    booster = sb.train(params, train, 30, valid_sets=[test])
    ndcg = booster.evals_result["valid_0"]["ndcg@10"]
    assert ndcg[-1] > ndcg[0]
    assert 0.3 < np.mean(booster.iteration_stats["sample_rate"]) < 0.7
    again = sb.train({**params, "bagging_by_query": True}, train, 30)  # LightGBM's name, same run
    np.testing.assert_array_equal(again.predict(X), booster.predict(X))
    rows = sb.train({**params, "sampling_unit": "row"}, train, 30)
    assert not np.array_equal(rows.predict(X), booster.predict(X))


@pytest.mark.parametrize("params, match", [
    ({"sampling": "goss", "sample_rate": 0.3}, "sampling='goss' has none"),
    ({"sampling": "trimming", "sample_rate": 0.3}, "sampling='trimming' has none"),
    ({}, "sampling='none' has none"),
    ({"sampling_unit": "page"}, "sampling_unit"),
])
def test_bad_query_sampling_parameters(params, match):
    with pytest.raises(ParameterError, match=match):
        _params(**params)


def test_query_sampling_needs_a_ranking_objective():
    X, y, sizes = make_ranking(10)
    with pytest.raises(ParameterError, match="needs a ranking objective"):
        sb.train({"objective": "regression", "sampling_unit": "query", "sample_rate": 0.5, "verbosity": -1},
                 sb.Dataset(X, y, group=sizes), 2)
