"""sampling='auto': the holdout check, the rate rule, determinism, per-iteration stats, every row on small data."""

import json

import numba
import numpy as np
import pytest
from conftest import make_binary
from test_leaf_values import newton_values_over_every_row
from test_ranking import make_ranking

import smartboost as sb
from smartboost._config import threads
from smartboost._kernels.importance import holdout_extent, holdout_sums
from smartboost._params import training_params
from smartboost.errors import ParameterError
from smartboost.sampling import auto, make_sampler
from smartboost.sampling.auto import AutoSampler
from smartboost.sampling.base import fixed_point_sums, fixed_sum_unit


@pytest.fixture
def small_auto(monkeypatch):
    """'auto' adapting on test-sized data: the size limits lowered, and the ceiling (the start
    rate) raised, so that the rate has room to move on these small sets."""
    monkeypatch.setattr(auto, "AUTO_MIN_ROWS", 1000)
    monkeypatch.setattr(auto, "AUTO_MIN_FEATURES", 1)
    monkeypatch.setattr(auto, "MIN_SAMPLE_ROWS", 200)
    monkeypatch.setattr(auto, "MAX_RATE", 0.3)


def _trees(booster):
    return json.loads(booster.model_to_string())["trees"]


# -- the holdout check ---------------------------------------------------------------------------

def _holdout_reference(leaf, step, grad, hess, weight, sample_weight, in_sample):
    w = np.ones(leaf.size) if weight is None else weight
    p = w / sample_weight
    d = step[leaf]
    change = -w * d * (grad + 0.5 * hess * d)
    use = (p > 0) & (p < 1)
    return np.array([np.sum(change[use & in_sample] / p[use & in_sample]),
                     np.sum(change[use & ~in_sample] / (1 - p[use & ~in_sample]))])


def holdout_gains(leaf, step, grad, hess, weight, sample_weight, in_sample):
    """The two estimates as TrainingRows.holdout_gains sums them: integer sums in the units of
    the largest terms."""
    args = (leaf, step, grad, hess, weight, sample_weight, in_sample)
    return fixed_point_sums(holdout_extent(*args), leaf.size, lambda units: holdout_sums(*args, units))


@pytest.mark.parametrize("weighted", [False, True])
def test_holdout_gains_equal_the_formula_on_any_thread_count(weighted):
    rng = np.random.default_rng(0)
    n, leaves = 50_001, 7
    leaf = rng.integers(0, leaves, n).astype(np.int32)
    step = rng.normal(0, 0.1, leaves)
    grad, hess = rng.normal(0, 1, n), rng.uniform(0.05, 0.25, n)
    weight = rng.uniform(0.5, 2.0, n) if weighted else None
    p = np.where(rng.random(n) < 0.1, 1.0, rng.uniform(0.05, 0.6, n))  # a tenth sure rows, excluded
    sample_weight = (1.0 if weight is None else weight) / p
    in_sample = rng.random(n) < p
    expected = _holdout_reference(leaf, step, grad, hess, weight, sample_weight, in_sample)
    for n_threads in (1, 2):
        with threads(n_threads):
            got = holdout_gains(leaf, step, grad, hess, weight, sample_weight, in_sample.astype(np.uint8))
        np.testing.assert_allclose(got, expected, rtol=1e-11)


def test_holdout_sums_over_machines_equal_one_machine():
    """Rows spread over machines: each estimate's unit from the largest term over all of them,
    and the machines' integer sums add up to one machine's sums exactly; a term that is not
    finite gives no units (the rate rule then keeps its rate)."""
    rng = np.random.default_rng(3)
    n = 40_000
    leaf = rng.integers(0, 9, n).astype(np.int32)
    step = rng.normal(0, 0.3, 9)
    grad, hess = rng.standard_cauchy(n), rng.uniform(0.01, 0.25, n)  # terms of very different sizes
    p = rng.uniform(0.02, 0.9, n)
    in_sample = (rng.random(n) < p).astype(np.uint8)
    args = (leaf, step, grad, hess, None, 1.0 / p, in_sample)
    units = np.array([fixed_sum_unit(e, n) for e in holdout_extent(*args)])
    whole = holdout_sums(*args, units)
    cuts = np.sort(rng.choice(np.arange(1, n), 4, replace=False))
    parts = [np.split(a, cuts) for a in (leaf, grad, hess, 1.0 / p, in_sample)]
    extents = [holdout_extent(lf, step, g, h, None, sw, s) for lf, g, h, sw, s in zip(*parts)]
    assert np.array_equal(np.max(extents, axis=0), holdout_extent(*args))
    sums = [holdout_sums(lf, step, g, h, None, sw, s, units) for lf, g, h, sw, s in zip(*parts)]
    assert whole.dtype == np.int64 and np.array_equal(np.sum(sums, axis=0), whole)
    grad[7] = np.nan
    assert None in [fixed_sum_unit(e, n) for e in holdout_extent(*args)]
    assert np.isnan(fixed_point_sums(holdout_extent(*args), n, lambda units: holdout_sums(*args, units))).all()


def test_holdout_estimates_agree_for_a_tree_independent_of_the_sample():
    """Both sums estimate the decrease over every row: for a tree that did not see the draw, their
    means over many draws meet the exact decrease (within 4 standard errors)."""
    rng = np.random.default_rng(1)
    n = 20_000
    leaf = rng.integers(0, 5, n).astype(np.int32)
    step = rng.normal(0, 0.2, 5)
    grad, hess = rng.normal(0.1, 1, n), np.full(n, 0.25)
    p = rng.uniform(0.05, 0.5, n)
    exact = np.sum(-step[leaf] * (grad + 0.5 * hess * step[leaf]))
    draws = np.array([holdout_gains(leaf, step, grad, hess, None, 1.0 / p, (rng.random(n) < p).astype(np.uint8))
                      for _ in range(200)])
    mean, error = draws.mean(axis=0), draws.std(axis=0) / np.sqrt(len(draws))
    assert np.all(np.abs(mean - exact) < 4 * error)


# -- the rate rule -------------------------------------------------------------------------------

def _sampler(n_rows=1_000_000):
    return AutoSampler(training_params({"sampling": "auto"}), n_rows)


def test_the_next_rate_maximises_the_decrease_per_second():
    """rho = 0.93 at the start rate 0.05: r0 = 0.05 * 0.07 / 0.93, and the best rate of
    rho(r) / (a + (1 - a) r) with rho(r) = r / (r + r0) is found here by a grid search."""
    sampler = _sampler(n_rows=10_000_000)
    assert sampler.rate == auto.MAX_RATE == 0.05 and sampler.drawn_by == "mvs"
    sampler.observe(np.array([[10.0, 9.3]]))
    grid = np.linspace(0.001, 1.0, 100_000)
    a = auto.FIXED_COST
    best = grid[np.argmax(grid / (grid + 0.05 * 0.07 / 0.93) / (a + (1 - a) * grid))]
    assert auto.MIN_RATE < best < auto.MAX_RATE and sampler.rate == pytest.approx(best, abs=1e-4)


def test_the_rate_grows_as_less_holds_out_of_the_sample_up_to_its_ceiling():
    sampler = _sampler()
    rates = []
    for rho in (0.9, 0.5, 0.2, 0.05, 0.0, 0.0, 0.0, 0.0):
        sampler.observe(np.array([[1.0, rho]]))
        rates.append(sampler.rate)
    assert all(b >= a for a, b in zip(rates, rates[1:])) and rates[-1] > rates[0]
    assert all(b <= auto.MAX_STEP * a for a, b in zip(rates, rates[1:]))  # at most MAX_STEP times the rate before
    # the rate stays at its ceiling, drawn by MVS, however little holds out of the sample
    assert rates[-1] == auto.MAX_RATE and sampler.drawn_by == "mvs" and sampler.adapts


def test_the_rate_keeps_its_floors():
    sampler = _sampler(n_rows=1_500_000)
    for _ in range(20):
        sampler.observe(np.array([[1.0, 1.0]]))  # everything holds: as few rows as allowed
    assert sampler.rate == pytest.approx(max(auto.MIN_RATE, auto.MIN_SAMPLE_ROWS / 1_500_000))


@pytest.mark.parametrize("n_rows, low, high", [(100_000, 0.2, 0.2), (150_000, 2 / 15, 0.2), (200_000, 0.1, 0.2),
                                               (300_000, 1 / 15, 2 / 15), (400_000, 0.05, 0.1),
                                               (600_000, 1 / 30, 1 / 15), (800_000, 0.025, 0.05),
                                               (1_000_000, 0.02, 0.05), (10_000_000, 0.02, 0.05)])
def test_the_rate_bounds_keep_a_sample_of_at_least_min_sample_rows(n_rows, low, high):
    """Between MIN_RATE and MAX_RATE, and at least MIN_SAMPLE_ROWS rows (at most MAX_FLOOR_RATE
    of them); the ceiling rises to CEILING_ROOM times MIN_SAMPLE_ROWS rows (at most
    MAX_FLOOR_RATE of them) where that is more; the first draw is at the ceiling."""
    sampler = _sampler(n_rows)
    assert (sampler.min_rate, sampler.max_rate, sampler.rate) == pytest.approx((low, high, high))


@pytest.mark.parametrize("n_rows, checked", [(100_000, False), (100_001, True), (200_000, True), (800_000, True),
                                             (10_000_000, True)])
def test_trees_are_checked_only_where_the_rate_can_move(n_rows, checked):
    """Up to MIN_SAMPLE_ROWS / MAX_FLOOR_RATE rows the bounds meet and a check could not change
    the rate; above, every CHECK_EVERY-th iteration is checked."""
    sampler = _sampler(n_rows)
    assert [sampler.checks(i) for i in range(2 * auto.CHECK_EVERY)] == [
        checked and i % auto.CHECK_EVERY == 0 for i in range(2 * auto.CHECK_EVERY)]


# -- training ------------------------------------------------------------------------------------

@pytest.mark.parametrize("lowered", ["AUTO_MIN_ROWS", "AUTO_MIN_FEATURES"])
def test_below_the_size_limits_auto_trains_the_model_of_no_sampling(binary_data, monkeypatch, lowered):
    """Below either limit (the other lowered to the data's size) every iteration uses every row."""
    X, y = binary_data
    monkeypatch.setattr(auto, lowered, 1)
    train = sb.Dataset(X, y)
    params = {"objective": "binary", "verbosity": -1}
    booster = sb.train({**params, "sampling": "auto"}, train, 5)
    assert _trees(booster) == _trees(sb.train(params, train, 5))
    assert booster.iteration_stats["sampler"] == ["none"] * 5
    assert booster.iteration_stats["target_rate"] == [1.0] * 5


@pytest.fixture
def default_limits(monkeypatch):
    """The size limits of sampling='auto' (and of its default) lowered to test-sized data: 1,000
    rows and 6 features."""
    monkeypatch.setattr(auto, "AUTO_MIN_ROWS", 1000)
    monkeypatch.setattr(auto, "AUTO_MIN_FEATURES", 6)
    monkeypatch.setattr(auto, "MIN_SAMPLE_ROWS", 200)


def test_auto_is_the_default_on_data_above_the_size_limits(binary_data, default_limits):
    """No sampling parameter given, data at both limits: the model of sampling='auto', byte for
    byte (its file names the sampler); one row or one feature fewer: the model of sampling='none'."""
    X, y = binary_data
    params = {"objective": "binary", "num_leaves": 15, "verbosity": -1}
    default = sb.train(params, sb.Dataset(X, y), 5)
    assert default.model_to_string() == sb.train({**params, "sampling": "auto"}, sb.Dataset(X, y), 5).model_to_string()
    assert default.model_to_string() == sb.train({**params, "sampling": None}, sb.Dataset(X, y), 5).model_to_string()
    assert json.loads(default.model_to_string())["params"]["sampling"] == "auto"
    assert set(default.iteration_stats["sampler"]) == {"mvs"}
    for small in (sb.Dataset(X[:999], y[:999]), sb.Dataset(X[:, :5], y)):
        model = sb.train(params, small, 5)
        assert model.model_to_string() == sb.train({**params, "sampling": "none"}, small, 5).model_to_string()
        assert model.iteration_stats["sampler"] == ["none"] * 5


@pytest.mark.parametrize("given", [{"sampling": "none"}, {"sample_rate": 1.0}, {"bagging_freq": 1},
                                   {"leaf_value_rows": "sample"}, {"objective": "regression_l1"},
                                   {"objective": "quantile"}, {"step_rule": "leaf_line"}])
def test_no_default_sampling_where_a_sampling_parameter_is_given_or_leaves_are_refit(binary_data, default_limits,
                                                                                       given):
    """Any sampling parameter (under any name) keeps the sampler it resolves to; objectives and
    step rules whose leaf values are not Newton steps of every row keep every row."""
    X, y = binary_data
    model = sb.train({"objective": "binary", "verbosity": -1, **given}, sb.Dataset(X, y), 3)
    assert json.loads(model.model_to_string())["params"]["sampling"] == "none"
    assert model.iteration_stats["sampler"] == ["none"] * 3


def test_the_default_follows_the_data_in_cv_and_the_estimators(binary_data, default_limits):
    """cv decides on its smallest fold's training rows (every fold trains alike); the
    scikit-learn estimators' sampling parameters at their defaults give way to the data's default."""
    from smartboost.sklearn import SmartBoostClassifier

    X, y = binary_data
    params = {"objective": "binary", "verbosity": -1}
    folds = [(np.arange(1000, 3000), np.arange(1000)), (np.arange(1001, 3000), np.arange(1001))]
    boosters = sb.cv(params, sb.Dataset(X, y), 2, folds=folds, return_cvbooster=True)["cvbooster"].boosters
    assert [b.iteration_stats["sampler"] for b in boosters] == [["mvs"] * 2] * 2
    folds = [(np.arange(1000, 3000), np.arange(1000)), (np.arange(2001, 3000), np.arange(2001))]
    boosters = sb.cv(params, sb.Dataset(X, y), 2, folds=folds, return_cvbooster=True)["cvbooster"].boosters
    assert [b.iteration_stats["sampler"] for b in boosters] == [["none"] * 2] * 2
    assert set(SmartBoostClassifier(n_estimators=3).fit(X, y).booster_.iteration_stats["sampler"]) == {"mvs"}
    for named in ({"sampling": "none"}, {"sample_rate": 1.0, "sampling": None}, {"subsample": 1.0}):
        model = SmartBoostClassifier(n_estimators=3, **named).fit(X, y)
        expected = "mvs" if named == {"sample_rate": 1.0, "sampling": None} else "none"  # the named defaults
        assert set(model.booster_.iteration_stats["sampler"]) == {expected}


def _auto_run(X, y, iterations=40, **params):
    train = sb.Dataset(X[:6000], y[:6000])
    valid = sb.Dataset(X[6000:], y[6000:], reference=train)
    return sb.train({"objective": "binary", "sampling": "auto", "num_leaves": 15, "metric": "auc", "verbosity": -1,
                     **params}, train, iterations, valid_sets=[valid])


def test_auto_records_its_sampler_and_rate_at_every_iteration(small_auto):
    X, y = make_binary(n=8000, seed=11)
    booster = _auto_run(X, y)
    stats = booster.iteration_stats
    assert len(stats["sampler"]) == len(stats["target_rate"]) == len(stats["sample_rate"]) == 40
    assert set(stats["sampler"]) <= {"mvs", "none"}
    assert stats["sampler"][0] == "mvs" and stats["target_rate"][0] == auto.MAX_RATE
    target, realised = np.array(stats["target_rate"]), np.array(stats["sample_rate"])
    assert stats["sampler"] == ["mvs"] * 40  # above the size limit every iteration samples
    # MVS draws its target in expectation: each realised rate within 5 standard deviations
    assert np.all(np.abs(realised - target) < 5 * np.sqrt(target / 6000))
    assert np.all(target <= auto.MAX_RATE)
    assert len(set(target.round(6))) > 3  # the rate moves
    # only after the iterations whose trees are checked, every CHECK_EVERY-th
    assert np.all(np.flatnonzero(np.diff(target)) % auto.CHECK_EVERY == 0)
    assert booster.evals_result["valid_0"]["auc"][-1] > 0.8


def test_auto_is_deterministic_on_any_thread_count(small_auto):
    X, y = make_binary(n=8000, seed=12)

    def run(**params):
        booster = _auto_run(X, y, iterations=25, **params)
        return _trees(booster), booster.iteration_stats["target_rate"], booster.iteration_stats["sampler"]

    first = run(seed=3)
    assert first == run(seed=3)
    assert first[0] != run(seed=4)[0]
    if numba.config.NUMBA_NUM_THREADS >= 2:
        assert run(seed=3, num_threads=1) == run(seed=3, num_threads=2)


def test_auto_with_multiclass_and_whole_queries(small_auto):
    rng = np.random.default_rng(13)
    X = rng.standard_normal((6000, 5))
    classes = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(6000), [-0.5, 0.5])
    booster = sb.train({"objective": "multiclass", "num_class": 3, "sampling": "auto", "verbosity": -1},
                       sb.Dataset(X, classes), 15)
    assert booster.num_trees() == 45 and "mvs" in booster.iteration_stats["sampler"]
    assert (booster.predict(X).argmax(axis=1) == classes).mean() > 0.7
    Xr, yr, sizes = make_ranking(120, seed=3)
    ranker = sb.train({"objective": "lambdarank", "sampling": "auto", "sampling_unit": "query", "verbosity": -1},
                      sb.Dataset(Xr, yr, group=sizes), 10)
    rates = np.array(ranker.iteration_stats["sample_rate"])
    assert "mvs" in ranker.iteration_stats["sampler"] and np.all((rates > 0) & (rates <= 1))


def _context_after(n_leaves, n_rows=1_000_000):
    """A sampling context whose last tree had ``n_leaves`` leaves."""
    from smartboost.objectives import make_objective
    from smartboost.sampling.base import SamplingContext
    ones = np.ones(n_rows)
    return SamplingContext(5, ones, ones, ones, ones, ones, make_objective("binary"),
                           np.zeros(n_rows, np.int32), np.zeros(n_leaves))


def test_auto_corrects_the_gradients_where_the_sample_gives_each_leaf_few_rows():
    """The rate times the rows over the last tree's leaves, against CORRECT_ROWS_PER_LEAF: at the
    start rate (50,000 of 1,000,000 rows) trees of 255 leaves (196 rows each) are corrected,
    trees of 15 (3,333) are not; nor is the first tree, nor a multiclass objective."""
    sampler = _sampler()
    assert sampler.rate == 0.05 and sampler.gradient_history == 2 and sampler.needs_previous_leaves
    assert sampler._corrects(_context_after(255)) and not sampler._corrects(_context_after(15))
    limit = int(0.05 * 1_000_000 / auto.CORRECT_ROWS_PER_LEAF)
    assert sampler._corrects(_context_after(limit + 1)) and not sampler._corrects(_context_after(limit))
    ctx = _context_after(255)
    ctx.previous_leaf_values = None
    assert not sampler._corrects(ctx) and sampler.correction_totals(ctx) is None
    multiclass = AutoSampler(training_params({"sampling": "auto", "objective": "multiclass", "num_class": 3}),
                             1_000_000)
    assert multiclass.gradient_history == 0 and not multiclass._corrects(_context_after(255))
    assert multiclass._samplers["mvs"]._corrected.size == 0  # no buffer for a correction never made
    assert _sampler(n_rows=50_000).gradient_history == 0  # below the size limit: every row, no history
    few_features = make_sampler(training_params({"sampling": "auto"}), 1_000_000, n_features=auto.AUTO_MIN_FEATURES - 1)
    assert not few_features.adapts and few_features.rate == 1.0 and few_features.gradient_history == 0
    assert make_sampler(training_params({"sampling": "auto"}), 1_000_000, n_features=auto.AUTO_MIN_FEATURES).adapts


def test_auto_takes_the_leaf_values_from_every_row_where_it_would_correct():
    """With leaf_value_rows='auto' (the trainer sets chooses_leaf_values) the leaves that the
    sample gives few rows take their values from every row, and nothing is corrected: no
    gradient history is kept; the other samplers never choose."""
    sampler = _sampler()
    sampler.chooses_leaf_values = True
    assert sampler.gradient_history == 0
    assert sampler.values_from_every_row(np.zeros(255)) and not sampler.values_from_every_row(np.zeros(15))
    assert not sampler.values_from_every_row(None)
    assert not sampler._corrects(_context_after(255)) and sampler.correction_totals(_context_after(255)) is None
    multiclass = AutoSampler(training_params({"sampling": "auto", "objective": "multiclass", "num_class": 3}),
                             1_000_000)
    multiclass.chooses_leaf_values = True  # three trees of 255 leaves per iteration: 65 rows a leaf
    assert multiclass.values_from_every_row(np.zeros(3 * 255))
    assert not multiclass.values_from_every_row(np.zeros(3 * 15))
    mvs = make_sampler(training_params({"sampling": "mvs", "sample_rate": 0.1}), 1_000_000)
    assert not mvs.values_from_every_row(np.zeros(255))


def test_auto_corrects_as_mvs_eta_does_and_takes_values_as_leaf_value_rows_all_does(small_auto, monkeypatch):
    """With the rate held at 0.3, where the sample gives the leaves few rows: auto's trees take
    their leaf values from every row from the second on (the first has no last tree to count the
    leaves of), and with leaf_value_rows='sample' they are MVS's with mvs_eta = auto.ETA (the
    correction needs two iterations of history); where it gives them many rows, plain MVS's."""
    X, y = make_binary(n=6000, seed=14)
    train = sb.Dataset(X, y)
    params = {"objective": "binary", "num_leaves": 15, "verbosity": -1}
    monkeypatch.setattr(AutoSampler, "observe", lambda self, holdout: None)
    monkeypatch.setattr(auto, "MAX_RATE", 0.3)
    mvs = {"sampling": "mvs", "sample_rate": 0.3}
    corrected_mvs = _trees(sb.train({**params, **mvs, "mvs_eta": auto.ETA}, train, 6))
    plain_mvs = _trees(sb.train({**params, **mvs}, train, 6))
    monkeypatch.setattr(auto, "CORRECT_ROWS_PER_LEAF", 10_000)  # 1,800 sampled rows over 15 leaves: few
    corrected = _trees(sb.train({**params, "sampling": "auto", "leaf_value_rows": "sample"}, train, 6))
    booster = sb.train({**params, "sampling": "auto"}, train, 6)
    every_row = _trees(booster)
    monkeypatch.setattr(auto, "CORRECT_ROWS_PER_LEAF", 100)
    plain = _trees(sb.train({**params, "sampling": "auto"}, train, 6))
    assert corrected == corrected_mvs and plain == plain_mvs
    assert every_row[0] == plain_mvs[0] and every_row[1] != plain_mvs[1]
    for iteration in (1, 5):
        expected, got = newton_values_over_every_row(booster, X, y, iteration, lambda_l2=0.0)
        np.testing.assert_allclose(got / 0.1, expected, rtol=1e-6, atol=1e-9)
    assert plain[:2] == corrected[:2] and plain[2:] != corrected[2:]


@pytest.mark.parametrize("params, match", [
    ({"sampling": "auto", "sample_rate": 0.3}, "chooses the rate"),
    ({"sampling": "auto", "sampling_freq": 3}, "new sample at every iteration"),
    ({"sampling": "auto", "mvs_lambda": 1.0}, "applies to sampling=mvs"),
])
def test_bad_auto_parameters(params, match):
    with pytest.raises(ParameterError, match=match):
        training_params(params)
