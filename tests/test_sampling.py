"""Row samplers: the scale solver, sample sizes, unbiasedness, each sampler's rule, determinism."""

import json

import numba
import numpy as np
import pytest
from conftest import make_binary
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import solve_scale_sorted

import smartboost as sb
from smartboost._config import threads
from smartboost._kernels.importance import class_norms, correct_sampled, leaf_sums
from smartboost._kernels.scale import bracket_counts, collect_bracket, quickselect_scale, scale_bracket
from smartboost._kernels.topk import quickselect_kth, rank_bracket, sum_bracket
from smartboost._params import training_params
from smartboost.errors import ParameterError
from smartboost.objectives import make_objective
from smartboost.sampling import SamplingContext, make_sampler
from smartboost.sampling.scale import solve_scale
from smartboost.sampling.topk import count_top_for_sum, kth_largest

UNBIASED = ("uniform", "bernoulli", "goss", "smart1", "smart2", "mvs", "loss")
ALL = ("none", "trimming", *UNBIASED)


def _params(**user):
    return training_params(user)


def _context(n=100_000, seed=0, iteration=0):
    """Gradients of a logistic model at random scores: a realistic spread of |g| and h."""
    rng = np.random.default_rng(seed)
    label = (rng.random(n) < 0.3).astype(float)
    scores = rng.standard_normal(n) * 2.0
    grad, hess = np.empty(n), np.empty(n)
    objective = make_objective("binary")
    objective.grad_hess(label, scores, grad, hess)
    weight = rng.choice([0.5, 1.0, 2.0], n)
    return SamplingContext(iteration, grad, hess, weight, label, scores, objective)


# -- the scale solver ---------------------------------------------------------------------------

def _solver_cases():
    rng = np.random.default_rng(0)
    yield rng.random(1000), 100.0
    yield rng.exponential(size=5000) ** 3, 50.0                   # heavy tail: many sure rows
    yield np.round(rng.random(2000), 1), 300.0                   # ties
    yield np.where(rng.random(2000) < 0.7, 0.0, rng.random(2000)), 200.0   # zeros
    yield np.ones(1000), 250.0                                   # all equal
    yield np.r_[np.zeros(10), 5.0], 0.5                          # a single non-zero
    yield np.r_[1e-12 * rng.random(500), 1e6 * rng.random(5)], 10.0   # huge dynamic range
    yield rng.random(100), 99.999                                # target just under the count


@pytest.mark.parametrize("importance, target", list(_solver_cases()))
def test_solver_equals_sorted_reference(importance, target):
    c = solve_scale(importance, target, np.uint64(7))
    assert c == pytest.approx(solve_scale_sorted(importance, target), rel=1e-9)
    assert np.minimum(1.0, c * importance).sum() == pytest.approx(target, rel=1e-9)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1e6), st.sampled_from([0.5, 1.0, 2.0])), min_size=2,
                max_size=200), st.floats(0.01, 0.99))
def test_solver_property(values, fraction):
    importance = np.array(values)
    positive = int((importance > 0).sum())
    if positive < 2:
        return
    target = fraction * (positive - 1) + 0.5
    c = solve_scale(importance, target, np.uint64(3))
    assert np.minimum(1.0, c * importance).sum() == pytest.approx(target, rel=1e-7)
    assert c == pytest.approx(solve_scale_sorted(importance, target), rel=1e-7)


def _large_solver_cases():
    """Beyond 65,536 rows, where the solver brackets the answer from a sample first."""
    rng = np.random.default_rng(5)
    n = 200_000
    yield rng.random(n), 0.1 * n                                  # no row is sure
    yield rng.exponential(size=n) ** 3, 0.1 * n                   # heavy tail: the bracket holds rows
    yield np.round(rng.exponential(size=n) ** 2, 1), 0.05 * n     # ties inside the bracket
    yield np.where(rng.random(n) < 0.9, 0.0, rng.random(n)), 0.05 * n   # mostly zeros
    yield np.where(rng.random(n) < 0.999, 0.0, 1.0 + rng.random(n)), 150.0   # 200 positive rows
    yield np.r_[np.full(n - 10, 1e-9), np.full(10, 1e9)], 20.0    # 10 sure rows, the rest tiny
    yield rng.random(n), 3.0                                      # a tiny target


@pytest.mark.parametrize("importance, target", list(_large_solver_cases()))
def test_bracketed_solver_equals_sorted_reference(importance, target):
    c = solve_scale(importance, target, np.uint64(11))
    assert c == pytest.approx(solve_scale_sorted(importance, target), rel=1e-9)
    assert np.minimum(1.0, c * importance).sum() == pytest.approx(target, rel=1e-9)


def test_bracketed_solver_edge_cases():
    n = 100_000
    assert solve_scale(np.zeros(n), 10.0, np.uint64(0)) == 0.0
    importance = np.r_[np.zeros(n - 100), np.ones(100)]
    assert solve_scale(importance, 100.0, np.uint64(0)) == np.inf


@pytest.mark.parametrize("k", [1, 7, 20_000, 150_000, 200_000])
def test_kth_largest_equals_sorted_reference(k):
    rng = np.random.default_rng(k)
    values = np.round(rng.exponential(size=200_000), 2)   # many ties
    value, greater = kth_largest(values, k, np.uint64(3))
    descending = np.sort(values)[::-1]
    assert value == descending[k - 1]
    assert greater == np.count_nonzero(values > value)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.just(0.0), st.floats(1e-6, 1e6), st.sampled_from([0.5, 1.0, 2.0])), min_size=1,
                max_size=300), st.floats(0.0, 1.0), st.integers(0, 2**32))
def test_selections_equal_sorted_references(values, fraction, key):
    """The quickselects below the bracket (k-th largest, fewest largest values reaching a sum)
    on ties, zeros and spread values, against a sort."""
    values = np.array(values)
    descending = np.sort(values)[::-1]
    k = 1 + int(fraction * (values.size - 1))
    value, greater = kth_largest(values, k, np.uint64(key))
    assert value == descending[k - 1] and greater == np.count_nonzero(values > value)
    target = fraction * values.sum()
    count = count_top_for_sum(values, target, np.uint64(key))
    top_sums = np.r_[0.0, np.cumsum(descending)]  # top_sums[m]: the m largest together
    slack = 1e-12 * values.sum()  # sums taken in another order round differently
    assert top_sums[count] >= target - slack
    assert count == 0 or top_sums[count - 1] < target + slack


def test_quickselects_leave_their_input_unchanged():
    """The brackets run two searches on one sample: a search that reordered or overwrote its
    input would hand the second one other values."""
    values = np.round(np.random.default_rng(6).exponential(size=5000), 2) + 0.01  # ties, all > 0
    before = values.copy()
    quickselect_scale(values, 1000.0, 0, 0.0, np.uint64(1))
    quickselect_kth(values, 700, np.uint64(2))
    count_top_for_sum(values, 0.3 * values.sum(), np.uint64(3))
    np.testing.assert_array_equal(values, before)


def test_brackets_hold_the_answer():
    """The sample's brackets hold the exact answer on a large input (else every draw would take
    the slow path over every row, unseen by the results)."""
    importance = np.random.default_rng(9).exponential(size=400_000) ** 2
    descending = np.sort(importance)[::-1]
    for share in (0.02, 0.1, 0.5):
        target = share * importance.size
        mu = 1.0 / solve_scale_sorted(importance, target)
        lo, hi = scale_bracket(importance, target, np.uint64(4))
        assert lo <= mu < hi
        k = int(target)
        lo, hi = rank_bracket(importance, k, np.uint64(5))
        assert lo <= descending[k - 1] <= hi
        count = np.searchsorted(np.cumsum(descending), share * importance.sum()) + 1
        lo, hi = sum_bracket(importance, share, np.uint64(6))
        assert lo <= descending[count - 1] < hi


@pytest.mark.parametrize("share", [0.002, 0.02, 0.5])
def test_collect_bracket_keeps_the_values_inside_in_row_order(share):
    """Both of its loops: the branch per value (few inside) and the branch-free writes."""
    values = np.round(np.random.default_rng(8).exponential(size=300_003), 3)
    lo, hi = np.quantile(values, [0.5 - share / 2, 0.5 + share / 2])
    inside = values[(values >= lo) & (values < hi)]
    got = collect_bracket(values, lo, hi, bracket_counts(values, lo, hi)[0][1])
    np.testing.assert_array_equal(got, inside)


@pytest.mark.parametrize("importance, target", list(_large_solver_cases()))
def test_bracketed_top_for_sum_equals_sorted_reference(importance, target):
    """The fewest largest values reaching a share of the total, past the bracket's threshold."""
    for share in (0.05, 0.5, 0.95):
        total = importance.sum()
        count = count_top_for_sum(importance, share * total, np.uint64(12))
        top_sums = np.r_[0.0, np.cumsum(np.sort(importance)[::-1])]
        slack = 1e-12 * total
        assert top_sums[count] >= share * total - slack
        assert count == 0 or top_sums[count - 1] < share * total + slack


def test_solver_does_not_depend_on_the_thread_count():
    importance = np.random.default_rng(2).exponential(size=300_000) ** 3
    with threads(1):
        one = solve_scale(importance, 30_000.0, np.uint64(4))
    assert solve_scale(importance, 30_000.0, np.uint64(4)) == one


def test_solver_edge_cases():
    assert solve_scale(np.zeros(10), 3.0, np.uint64(0)) == 0.0
    assert solve_scale(np.r_[np.zeros(5), np.ones(3)], 3.0, np.uint64(0)) == np.inf
    assert solve_scale(np.r_[np.zeros(5), np.ones(3)], 5.0, np.uint64(0)) == np.inf


# -- sample sizes and unbiasedness ---------------------------------------------------------------

@pytest.mark.parametrize("sampling", ("trimming", *UNBIASED))
@pytest.mark.parametrize("rate", [0.1, 0.3])
def test_realised_sample_rate_within_one_percent(sampling, rate):
    n = 100_000
    sampler = make_sampler(_params(sampling=sampling, sample_rate=rate), n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    sizes = [sampler.sample(_context(n, seed=k, iteration=k), rows, rest)[0] for k in range(20)]
    assert np.mean(sizes) / n == pytest.approx(rate, rel=0.01)


@pytest.mark.parametrize("sampling", ALL)
def test_samples_and_rests_are_sorted_complements(sampling):
    n = 3000
    sampler = make_sampler(_params(sampling=sampling, **({} if sampling == "none" else {"sample_rate": 0.3})), n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    m, _ = sampler.sample(_context(n, seed=9), rows, rest)
    picked, others = rows[:m].astype(np.int64), rest[:n - m].astype(np.int64)
    assert np.all(np.diff(picked) > 0) and np.all(np.diff(others) > 0)
    np.testing.assert_array_equal(np.sort(np.r_[picked, others]), np.arange(n))


def _weighted_sum_z_scores(sampling, drop_weights=False, n=2000, draws=400):
    """z-scores of the Monte Carlo mean of sum_{i in S} v_i (g_i, h_i) against sum_i w_i (g_i, h_i)."""
    ctx = _context(n, seed=1)
    sampler = make_sampler(_params(sampling=sampling, sample_rate=0.2), n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    sums = np.empty((draws, 2))
    for k in range(draws):
        ctx.iteration = k
        m, weight = sampler.sample(ctx, rows, rest)
        picked = rows[:m]
        v = ctx.weight[picked] if drop_weights else weight[picked]
        sums[k] = (v @ ctx.grad[picked], v @ ctx.hess[picked])
    truth = np.array([ctx.weight @ ctx.grad, ctx.weight @ ctx.hess])
    standard_error = sums.std(axis=0, ddof=1) / np.sqrt(draws)
    return np.abs(sums.mean(axis=0) - truth) / standard_error


@pytest.mark.parametrize("sampling", UNBIASED)
def test_weighted_sums_are_unbiased(sampling):
    assert np.all(_weighted_sum_z_scores(sampling) < 3.0)


@pytest.mark.parametrize("sampling", UNBIASED)
def test_unbiasedness_check_fails_without_the_weights(sampling):
    assert np.any(_weighted_sum_z_scores(sampling, drop_weights=True) > 3.0)


@pytest.mark.parametrize("sampling", ALL[1:])
def test_unit_weights_left_unread_draw_what_weights_of_one_draw(sampling):
    """``unit_weight`` (data without weights) lets the kernels skip reading ``weight``: the same
    rows and weights as an explicit array of ones; and real weights change the draw."""
    n = 3000
    ctx = _context(n, seed=4)
    draws = {}
    for label, weight, unit in (("unread", np.ones(n), True), ("ones", np.ones(n), False),
                                ("weighted", ctx.weight, False)):
        ctx.weight, ctx.unit_weight = weight, unit
        sampler = make_sampler(_params(sampling=sampling, sample_rate=0.3), n)
        rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
        m, w = sampler.sample(ctx, rows, rest)
        draws[label] = (rows[:m].copy(), w[rows[:m]].copy())
    np.testing.assert_array_equal(draws["unread"][0], draws["ones"][0])
    np.testing.assert_array_equal(draws["unread"][1], draws["ones"][1])
    if sampling not in ("uniform", "bernoulli"):  # draws that read the importances
        assert not np.array_equal(draws["weighted"][0], draws["ones"][0])


# -- each sampler's rule -----------------------------------------------------------------------

def test_goss_keeps_the_top_gradients_and_reweights_the_rest():
    n = 10_000
    ctx = _context(n, seed=2)
    sampler = make_sampler(_params(sampling="goss", goss_top_rate=0.1, goss_other_rate=0.05), n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    m, weight = sampler.sample(ctx, rows, rest)
    picked = rows[:m]
    assert m == 1000 + 500 and np.all(np.diff(picked.astype(np.int64)) > 0)
    np.testing.assert_array_equal(np.sort(np.r_[picked, rest[:n - m]]), np.arange(n))  # rest: the others
    score = ctx.weight * np.abs(ctx.grad)
    top = np.argsort(-score, kind="stable")[:1000]
    assert np.isin(top, picked).all()
    ratio = weight[picked] / ctx.weight[picked]
    is_top = np.isin(picked, top)
    np.testing.assert_allclose(ratio[is_top], 1.0)
    np.testing.assert_allclose(ratio[~is_top], (1 - 0.1) / 0.05)


@pytest.mark.parametrize("alpha", [0.1, 0.5])
def test_trimming_keeps_the_top_hessian_mass(alpha):
    n = 5000
    ctx = _context(n, seed=3)
    sampler = make_sampler(_params(sampling="trimming", trimming_alpha=alpha), n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    m, weight = sampler.sample(ctx, rows, rest)
    mass = ctx.weight * ctx.hess
    kept = np.zeros(n, bool)
    kept[rows[:m]] = True
    assert mass[kept].sum() >= (1 - alpha) * mass.sum()
    assert mass[kept].sum() - mass[kept].min() < (1 - alpha) * mass.sum()  # the fewest rows that reach it
    assert mass[kept].min() >= mass[~kept].max()
    np.testing.assert_array_equal(weight[rows[:m]], ctx.weight[rows[:m]])


@pytest.mark.parametrize("sampling", ["smart1", "smart2", "mvs", "loss"])
def test_rows_of_zero_importance_are_never_sampled(sampling):
    n = 4000
    ctx = _context(n, seed=4)
    dead = np.arange(0, n, 3)
    ctx.label[dead] = 1.0
    ctx.scores[dead] = 800.0  # a confident correct prediction: g, h and the loss are exactly 0
    ctx.objective.grad_hess(ctx.label, ctx.scores, ctx.grad, ctx.hess)
    assert not ctx.grad[dead].any() and not ctx.hess[dead].any() and not ctx.objective.loss(ctx.label, ctx.scores)[dead].any()
    sampler = make_sampler(_params(sampling=sampling, sample_rate=0.5), n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    for k in range(10):
        ctx.iteration = k
        m, _ = sampler.sample(ctx, rows, rest)
        assert not np.isin(dead, rows[:m]).any()


@pytest.mark.parametrize("lam", ["adaptive", 1.0])
def test_mvs_importance_of_gradients_whose_squares_overflow(lam):
    # g^2 (and adaptive lambda = mean|g|^2) overflow beyond 1e154: adaptive lambda raised a raw
    # OverflowError, and the norms were inf; they are hypot(g, sqrt(lambda) h), as large as g
    n = 2000
    ctx = _context(n, seed=5)
    ctx.grad *= 1e200
    sampler = make_sampler(_params(sampling="mvs", sample_rate=0.5, mvs_lambda=lam), n)
    importance = sampler.importance(ctx)
    root = np.mean(np.abs(ctx.grad)) if lam == "adaptive" else 1.0
    np.testing.assert_allclose(importance, ctx.weight * np.hypot(ctx.grad, root * ctx.hess), rtol=1e-12)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    m, weight = sampler.sample(ctx, rows, rest)
    assert 0.45 * n < m < 0.55 * n and np.isfinite(weight[rows[:m]]).all()


@pytest.mark.parametrize("n_classes", [2, 3, 7])
@pytest.mark.parametrize("n", [1, 1023, 1025, 3001])
def test_class_norms_are_numpys_row_norms_bit_for_bit(n_classes, n):
    # what the samplers of a multiclass objective draw by: squares added in class order, as
    # numpy's einsum adds them (squares that overflow give inf, as there)
    values = np.random.default_rng(n).standard_normal((n_classes, n))
    values *= np.random.default_rng(n + 1).choice([1e-200, 1.0, 1e160], size=values.shape)
    out = np.full(n, np.nan)
    class_norms(values, out)
    np.testing.assert_array_equal(out, np.sqrt(np.einsum("ki,ki->i", values, values)))


# -- through training --------------------------------------------------------------------------

def _trees(booster):
    model = json.loads(booster.model_to_string())
    return model["trees"], model["base_score"]


@pytest.mark.parametrize("sampling", ALL)
def test_sample_rate_one_equals_no_sampling(sampling, binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)
    base = sb.train({"objective": "binary", "verbosity": -1}, train, 8)
    extra = {"smart_eta": 0.0} if sampling == "smart2" else {}
    sampled = sb.train({"objective": "binary", "verbosity": -1, "sampling": sampling, "sample_rate": 1.0, **extra},
                       train, 8)
    assert _trees(sampled) == _trees(base)


@pytest.mark.parametrize("params", [
    {"sampling": "mvs", "sample_rate": 0.3},
    {"sampling": "smart2", "sample_rate": 0.3, "step_rule": "leaf_line", "boosting": "gradient"},
    {"sampling": "bernoulli", "sample_rate": 0.3, "selection_type": 3, "selection_t": 2},
    {"sampling": "uniform", "sample_rate": 0.3, "line_search_rows": "all", "step_rule": "line"},
])
def test_compact_sampled_trees_equal_trees_on_the_rows_in_place(params, binary_data, monkeypatch):
    """Sampled trees copy their rows' bins into a compact array (grower.NodeRows): same models."""
    from smartboost import grower
    X, y = binary_data
    train = sb.Dataset(X, y)
    models = []
    for fraction in (0.0, 1.0):
        monkeypatch.setattr(grower, "COMPACT_ROWS_FRACTION", fraction)
        models.append(_trees(sb.train({"objective": "binary", "verbosity": -1, **params}, train, 6)))
    assert models[0] == models[1]


def test_smart2_with_eta_zero_is_the_uncorrected_sampler(binary_data, monkeypatch):
    X, y = binary_data
    train = sb.Dataset(X, y)
    params = {"objective": "binary", "verbosity": -1, "sampling": "smart2", "sample_rate": 0.3}
    eta_zero = sb.train({**params, "smart_eta": 0.0}, train, 10)
    corrected = sb.train({**params, "smart_eta": 0.5}, train, 10)
    from smartboost.sampling.importance import Smart2Sampler
    monkeypatch.setattr(Smart2Sampler, "correct_gradients", lambda self, ctx, rows, totals=None: None)
    uncorrected = sb.train({**params, "smart_eta": 0.5}, train, 10)
    assert _trees(eta_zero) == _trees(uncorrected)
    # the correction needs two iterations of history: the first two trees agree, later ones not
    assert _trees(corrected)[0][:2] == _trees(uncorrected)[0][:2]
    assert _trees(corrected)[0][2:] != _trees(uncorrected)[0][2:]


def test_mvs_eta_corrects_mvs_as_smart2_is_corrected(binary_data, monkeypatch):
    """mvs_eta: smart2's correction (scaled form) of MVS's sampled gradients; 0, the default, is
    plain MVS; the corrected gradients follow the formula."""
    X, y = binary_data
    train = sb.Dataset(X, y)
    params = {"objective": "binary", "verbosity": -1, "sampling": "mvs", "sample_rate": 0.3}
    plain = sb.train(params, train, 8)
    assert _trees(sb.train({**params, "mvs_eta": 0.0}, train, 8)) == _trees(plain)
    corrected = sb.train({**params, "mvs_eta": 0.5}, train, 8)
    assert _trees(corrected)[0][:2] == _trees(plain)[0][:2] and _trees(corrected)[0][2:] != _trees(plain)[0][2:]
    from smartboost.sampling.importance import MVSSampler
    rng = np.random.default_rng(6)
    n, n_leaves = 400, 5
    grad, old_grad = rng.standard_normal(n), rng.standard_normal(n)
    leaf = rng.integers(0, n_leaves, n).astype(np.int32)
    rows = np.sort(rng.choice(n, 120, replace=False)).astype(np.uint32)
    sampler = MVSSampler(_params(sampling="mvs", sample_rate=0.3, mvs_eta=0.4), n)
    assert sampler.gradient_history == 2 and sampler.needs_previous_leaves
    ctx = SamplingContext(5, grad, np.ones(n), np.ones(n), np.zeros(n), np.zeros(n), make_objective("binary"),
                          leaf, np.zeros(n_leaves), None, True, (rng.standard_normal(n), old_grad))
    means = np.bincount(leaf, old_grad, n_leaves) / np.bincount(leaf, minlength=n_leaves)
    np.testing.assert_allclose(sampler.correct_gradients(ctx, rows),
                               grad[rows] + 0.4 * (means[leaf[rows]] - old_grad[rows]), rtol=0, atol=1e-14)
    monkeypatch.setattr(MVSSampler, "correct_gradients", lambda self, ctx, rows, totals=None: None)
    assert _trees(sb.train({**params, "mvs_eta": 0.5}, train, 8)) == _trees(plain)


def test_correct_sampled_matches_the_formula_in_sample_order():
    rng = np.random.default_rng(3)
    n = 5000
    grad, old_grad = rng.standard_normal(n), rng.standard_normal(n)
    leaf = rng.integers(0, 7, n).astype(np.int32)
    means = rng.standard_normal(7)
    rows = np.sort(rng.choice(n, n // 3, replace=False)).astype(np.uint32)
    out = np.full(n, np.nan)
    correct_sampled(rows, grad, old_grad, leaf, means, 0.5, out)
    np.testing.assert_allclose(out[:rows.size], grad[rows] + 0.5 * (means[leaf[rows]] - old_grad[rows]), rtol=0,
                               atol=1e-15)
    assert np.isnan(out[rows.size:]).all()  # only the first len(rows) slots are written


@pytest.mark.parametrize("eta", [0.0, 0.4, 1.0])
def test_smart2_paper_correction_is_sections_formula(eta):
    """smart_correction='paper': g - l'(y~_i) + eta * leaf mean of l'(y~), eta scaling the mean only."""
    from smartboost.sampling.importance import Smart2Sampler
    rng = np.random.default_rng(5)
    n, n_leaves = 400, 6
    grad, old_grad = rng.standard_normal(n), rng.standard_normal(n)
    leaf = rng.integers(0, n_leaves, n).astype(np.int32)
    rows = np.sort(rng.choice(n, 150, replace=False)).astype(np.uint32)
    params = _params(sampling="smart2", sample_rate=0.3, smart_eta=eta, smart_correction="paper")
    sampler = Smart2Sampler(params, n)
    ctx = SamplingContext(5, grad, np.ones(n), np.ones(n), np.zeros(n), np.zeros(n), make_objective("binary"),
                          leaf, np.zeros(n_leaves), None, True, (rng.standard_normal(n), old_grad))
    got = sampler.correct_gradients(ctx, rows)
    means = np.bincount(leaf, old_grad, n_leaves) / np.bincount(leaf, minlength=n_leaves)
    np.testing.assert_allclose(got, grad[rows] - old_grad[rows] + eta * means[leaf[rows]], rtol=0, atol=1e-14)


def test_smart2_correction_forms_agree_at_eta_one_only(binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)
    params = {"objective": "binary", "verbosity": -1, "sampling": "smart2", "sample_rate": 0.3}
    for eta, same in ((1.0, True), (0.5, False)):
        scaled = sb.train({**params, "smart_eta": eta}, train, 6)
        paper = sb.train({**params, "smart_eta": eta, "smart_correction": "paper"}, train, 6)
        assert (_trees(scaled) == _trees(paper)) is same


@pytest.mark.parametrize("sampling", ["smart1", "loss"])
def test_fixed_rho_keeps_rows_with_min_one_rho_importance(sampling):
    ctx = _context(20_000)
    params = _params(sampling=sampling, smart_rho=0.7)
    sampler = make_sampler(params, 20_000)
    rows, rest = np.empty(20_000, np.uint32), np.empty(20_000, np.uint32)
    n, weight = sampler.sample(ctx, rows, rest)
    importance = sampler.importance(ctx)
    p = np.minimum(1.0, 0.7 * importance)
    assert sampler.scale == 0.7
    assert abs(n - p.sum()) < 4 * np.sqrt((p * (1 - p)).sum())
    np.testing.assert_allclose(weight[rows[:n]], ctx.weight[rows[:n]] / p[rows[:n]], rtol=1e-12)


@pytest.mark.parametrize("n", [0, 5, 100_003])
def test_leaf_sums_are_the_per_leaf_sums_and_counts_for_any_thread_count(n):
    rng = np.random.default_rng(n)
    leaf = rng.integers(0, 9, n).astype(np.int32)
    values = rng.standard_normal(n)
    got = leaf_sums(leaf, values, 10)  # leaf 9 holds no row
    np.testing.assert_allclose(got[0], np.bincount(leaf, values, 10), rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[1], np.bincount(leaf, minlength=10))
    with threads(1):
        one = leaf_sums(leaf, values, 10)
    np.testing.assert_array_equal(got, one)


def test_smart2_keeps_the_uncorrected_gradients_of_two_iterations_back(binary_data, monkeypatch):
    """The correction reads l'(y~) at the scores of two iterations back: the gradients that run
    computed then, before their own correction."""
    from smartboost._rows import TrainingRows
    X, y = binary_data
    seen, computed = [], []
    original = TrainingRows.compute_gradients

    def record(self, rows=None):
        original(self, rows)
        computed.append(self.row_grad.copy())
        seen.append([g.copy() for g in self.sampling_context(0, None).past_grad])

    monkeypatch.setattr(TrainingRows, "compute_gradients", record)
    sb.train({"objective": "binary", "verbosity": -1, "sampling": "smart2", "sample_rate": 0.3}, sb.Dataset(X, y), 5)
    assert [len(past) for past in seen] == [0, 1, 2, 2, 2]
    for t in range(1, 5):
        for back, past in enumerate(seen[t], start=1):
            np.testing.assert_array_equal(past, computed[t - back])


@pytest.mark.parametrize("sampling", ("trimming", *UNBIASED))
def test_sampled_training_learns_and_records_sample_sizes(sampling):
    X, y = make_binary(n=6000, seed=5)
    train = sb.Dataset(X[:5000], y[:5000])
    valid = sb.Dataset(X[5000:], y[5000:], reference=train)
    booster = sb.train({"objective": "binary", "sampling": sampling, "sample_rate": 0.3, "metric": "auc",
                        "verbosity": -1}, train, 30, valid_sets=[valid])
    sizes = booster.iteration_stats["sample_size"]
    assert len(sizes) == 30
    if sampling in ("uniform", "goss", "trimming"):  # exact counts: round(0.3 * 5000) rows every iteration
        np.testing.assert_array_equal(sizes, 1500)
    else:
        # Independent draws of expected size 1,500 each (the scale solves for it): the variance of
        # one, sum p_i (1 - p_i), is at most sum p_i = 1,500, so the mean of 30 has a standard
        # deviation of at most sqrt(1500 / 30); 5 of them bound it.
        assert abs(np.mean(sizes) - 1500) < 5 * np.sqrt(1500 / 30)
    np.testing.assert_array_equal(booster.iteration_stats["sample_rate"], np.array(sizes) / 5000)
    assert booster.evals_result["valid_0"]["auc"][-1] > 0.78


@pytest.mark.parametrize("sampling", UNBIASED)
def test_sampling_is_deterministic_and_seeded(sampling, binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)

    def run(seed, threads=0):
        booster = sb.train({"objective": "binary", "sampling": sampling, "sample_rate": 0.3, "seed": seed,
                            "num_threads": threads, "verbosity": -1}, train, 5)
        return _trees(booster)

    assert run(1) == run(1)
    assert run(1) != run(2)
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert run(1, threads=1) == run(1, threads=2)


def test_sampling_freq_reuses_the_sample(binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)
    booster = sb.train({"objective": "binary", "sampling": "bernoulli", "sample_rate": 0.3, "sampling_freq": 3,
                        "verbosity": -1}, train, 7)
    sizes = booster.iteration_stats["sample_size"]
    assert sizes[0] == sizes[1] == sizes[2] and sizes[3] == sizes[4] == sizes[5] and sizes[0] != sizes[3]


@pytest.mark.parametrize("scale", ["sample", "population"])
@pytest.mark.parametrize("sampling", ["bernoulli", "goss", "mvs", "trimming"])
def test_leaf_values_weigh_the_regularisation_against_the_scaled_weights(sampling, scale):
    """One tree, checked leaf by leaf against the Newton values computed here from the sample the
    sampler draws again: ``-sum(k v g) / (sum(k v h) + lambda_l2)`` with the sampling weights
    ``v`` times ``k = |S| / N`` ('sample', the default) or 1 ('population', and trimming, whose
    weights are the rows' own). A large lambda_l2 makes the two scales far apart."""
    n = 4000
    X, y = make_binary(n=n, seed=7)
    weight = np.random.default_rng(7).uniform(0.5, 2.0, n)
    params = {"objective": "binary", "sampling": sampling, "sample_rate": 0.3, "lambda_l2": 20.0,
              "learning_rate": 1.0, "boost_from_average": False, "num_leaves": 8, "min_data_in_leaf": 5, "seed": 1,
              "verbosity": -1}
    if scale != "sample":
        params["sample_weight_scale"] = scale
    booster = sb.train(params, sb.Dataset(X, y, weight=weight), 1)
    scores = np.zeros(n)
    grad, hess = np.empty(n), np.empty(n)
    objective = make_objective("binary")
    objective.grad_hess(y, scores, grad, hess)
    ctx = SamplingContext(0, grad, hess, weight, y, scores, objective)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    m, sample_weight = make_sampler(_params(**params), n).sample(ctx, rows, rest)
    sampled = rows[:m].astype(np.int64)
    assert booster.iteration_stats["sample_size"] == [m]
    k = m / n if scale == "sample" and sampling != "trimming" else 1.0
    v = k * sample_weight[sampled]
    leaf = booster.predict(X[sampled], pred_leaf=True)[:, 0]
    values = booster.predict(X[sampled], raw_score=True)
    assert np.unique(leaf).size >= 4
    for j in np.unique(leaf):
        at = leaf == j
        expected = -np.sum(v[at] * grad[sampled][at]) / (np.sum(v[at] * hess[sampled][at]) + 20.0)
        np.testing.assert_allclose(values[at], expected, rtol=1e-6)


def test_sample_weight_scale_changes_sampled_models_only(binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)

    def run(**extra):
        return _trees(sb.train({"objective": "binary", "lambda_l2": 5.0, "verbosity": -1, **extra}, train, 3))

    assert run() == run(sample_weight_scale="population")
    sampled = {"sampling": "mvs", "sample_rate": 0.3}
    assert run(**sampled) != run(**sampled, sample_weight_scale="population")
    assert run(**sampled) == run(**sampled, sample_weight_scale="sample")


# -- parameters -----------------------------------------------------------------------------

def test_sample_rate_alone_means_uniform_sampling():
    assert _params(subsample=0.5).sampling == "uniform"
    assert _params().sampling == "none"
    assert _params(bagging_fraction=0.5, bagging_freq=0).sampling == "none"  # LightGBM: bagging off
    assert _params(sampling="gradient_based", sample_rate=0.2).sampling == "mvs"


def test_goss_rates():
    p = _params(sampling="goss", sample_rate=0.3)
    assert p.goss_top_rate == pytest.approx(0.2)
    p = _params(sampling="goss", top_rate=0.2, other_rate=0.1)
    assert p.sample_rate == pytest.approx(0.3)


@pytest.mark.parametrize("params, match", [
    ({"sampling": "none", "sample_rate": 0.5}, "choose a sampler"),
    ({"sampling": "mvs", "sample_rate": 0.5, "smart_eta": 0.1}, "smart_eta.*smart2"),
    ({"sampling": "smart2", "sample_rate": 0.5, "mvs_eta": 0.1}, "mvs_eta.*mvs"),
    ({"sampling": "mvs", "sample_rate": 0.5, "mvs_eta": -0.1}, "mvs_eta"),
    ({"sampling": "smart1", "sample_rate": 0.5, "smart_correction": "paper"}, "smart_correction.*smart2"),
    ({"sampling": "mvs", "smart_rho": 1.0}, "smart_rho.*smart1 or smart2 or loss"),
    ({"sampling": "uniform", "smart_rho": 2.0}, "smart_rho.*smart1 or smart2"),
    ({"sampling": "smart1", "smart_rho": 2.0, "sample_rate": 0.3}, "either smart_rho"),
    ({"sampling": "goss", "sample_rate": 0.2, "goss_top_rate": 0.3}, "goss_top_rate"),
    ({"sampling": "goss", "sample_rate": 0.5, "top_rate": 0.2, "other_rate": 0.1}, "give two of the three"),
    ({"sampling": "trimming", "trimming_alpha": 0.1, "sample_rate": 0.3}, "either trimming_alpha"),
    ({"sampling": "mvs", "bagging_freq": 0}, "sampling_freq=0"),
    ({"sampling": "random"}, "sampling"),
    ({"sample_rate": 0.0}, "sample_rate"),
    ({"mvs_lambda": "sometimes"}, "mvs_lambda"),
])
def test_bad_sampling_parameters(params, match):
    with pytest.raises(ParameterError, match=match):
        _params(**params)


@pytest.mark.parametrize("share", [0.0, 0.01, 0.1, 0.5, 0.99, 1.0])
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 100_003])
@pytest.mark.parametrize("layout", ["random", "kept first", "kept last", "runs"])
def test_compact_splits_the_rows_in_order_at_any_share(n, share, layout):
    """compact's rows and rest are the kept and the other row ids in increasing order, with its
    branch-free writes (kept shares between BRANCH_FREE_SHARE and one minus it) and without,
    where a chunk's kept rows come first, last or in runs of that share (the writes past a filled
    region)."""
    from smartboost._kernels.draws import compact
    k = int(round(share * n))
    keep = np.zeros(n, np.uint8)
    if layout == "random":
        keep[np.random.default_rng(n).permutation(n)[:k]] = 1
    elif layout == "kept first":
        keep[:k] = 1
    elif layout == "kept last":
        keep[n - k:] = 1
    else:  # in every 97 rows, the first share of them
        keep[np.arange(n) % 97 < share * 97] = 1
    rows, rest = np.full(n + 1, 7, np.uint32), np.full(n + 1, 7, np.uint32)
    kept = compact(keep, rows, rest)
    assert kept == keep.sum()
    np.testing.assert_array_equal(rows[:kept], np.flatnonzero(keep))
    np.testing.assert_array_equal(rest[:n - kept], np.flatnonzero(keep == 0))


@pytest.mark.parametrize("n, k", [(1, 1), (10, 3), (63, 5), (65, 65), (100, 0), (100_000, 12_345)])
def test_parallel_exact_draw_keeps_exactly_k_rows(n, k):
    """The chunked selection sampling of uniform: k rows, sorted, and the rest their complement."""
    from smartboost._kernels.draws import draw_exact_parallel
    from smartboost.sampling.chunks import chunk_layout, exact_pieces
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    key = np.uint64(n * 7919 + k)
    assert draw_exact_parallel(key, exact_pieces(key, k, n, chunk_layout(n)), rows, rest) == k
    assert np.all(np.diff(rows[:k].astype(np.int64)) > 0) and np.all(np.diff(rest[:n - k].astype(np.int64)) > 0)
    np.testing.assert_array_equal(np.sort(np.concatenate([rows[:k], rest[:n - k]])), np.arange(n))


def test_parallel_exact_draw_is_uniform_over_rows():
    """Every group of 1,000 rows (across the 10 chunks of 4,100 rows) is drawn as often as the
    others, within 4 standard errors over 300 draws of 10% of 41,000 rows."""
    from smartboost._kernels.draws import draw_exact_parallel
    from smartboost.sampling.chunks import chunk_layout, draw_chunks, exact_pieces
    n, k, draws = 41_000, 4_100, 300
    assert draw_chunks(n) == (10, 4_100) and draw_chunks(4_000) == (1, 4_000)
    hits = np.zeros(n)
    rows, rest = np.empty(n, np.uint32), np.empty(n, np.uint32)
    for d in range(draws):
        key = np.uint64(d)
        hits[rows[:draw_exact_parallel(key, exact_pieces(key, k, n, chunk_layout(n)), rows, rest)]] += 1
    p = k / n
    per_group = hits.reshape(41, 1000).sum(axis=1)  # groups cross the chunk boundaries
    expected, sd = 1000 * draws * p, np.sqrt(1000 * draws * p * (1 - p))
    assert np.all(np.abs(per_group - expected) < 4 * sd)


@pytest.mark.parametrize("n", [3_000, 41_000, 300_000])
def test_goss_draw_over_chunks(n):
    """GOSS's chunked draw: exactly the top count (ties to the lowest row ids) and the rest
    count, sorted, the rest their complement; the rest drawn evenly over groups that cross the
    chunk boundaries."""
    from smartboost._kernels.draws import draw_top_and_rest
    from smartboost.sampling.chunks import top_and_rest_pieces
    from smartboost.sampling.topk import top_threshold
    rng = np.random.default_rng(n)
    values = np.round(rng.exponential(size=n), 1)  # many ties at the threshold
    k_top, k_rest = n // 10, n // 20
    rows, rest, weight = np.empty(n, np.uint32), np.empty(n, np.uint32), np.empty(n)
    hits = np.zeros(n)
    draws = 60
    for d in range(draws):
        key = np.uint64(d)
        threshold, ties = top_threshold(values, k_top, key)
        pieces = top_and_rest_pieces(values, threshold, ties, k_top, k_rest, key)
        m = draw_top_and_rest(values, threshold, pieces, key, None, 9.0, rows, rest, weight)
        assert m == k_top + k_rest
        picked = rows[:m].astype(np.int64)
        assert np.all(np.diff(picked) > 0)
        np.testing.assert_array_equal(np.sort(np.r_[picked, rest[:n - m]]), np.arange(n))
        top = np.flatnonzero((values > threshold) | ((values == threshold) & (np.cumsum(values == threshold) <= ties)))
        assert top.size == k_top and np.isin(top, picked).all()
        np.testing.assert_array_equal(weight[top], 1.0)
        others = np.setdiff1d(picked, top)
        np.testing.assert_array_equal(weight[others], 9.0)
        hits[others] += 1
    eligible = np.ones(n, bool)
    eligible[top] = False
    groups = 30
    per_group = np.add.reduceat(hits, np.arange(0, n, n // groups)[:groups])
    size = np.add.reduceat(eligible.astype(float), np.arange(0, n, n // groups)[:groups])
    p = k_rest / (n - k_top)
    expected, sd = size * draws * p, np.sqrt(size * draws * p * (1 - p))
    assert np.all(np.abs(per_group - expected) < 4.5 * sd)
