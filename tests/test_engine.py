"""End-to-end training through the native API."""

import json
import logging

import numpy as np
import pytest
from conftest import make_binary, make_regression
from sklearn.metrics import roc_auc_score

import smartboost as sb
from smartboost.errors import ParameterError


def _split(X, y, n_train):
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def test_binary_training_learns_and_records_history():
    X, y = make_binary(n=4000, missing_rate=0.05)
    Xtr, ytr, Xte, yte = _split(X, y, 3000)
    train = sb.Dataset(Xtr, ytr)
    valid = sb.Dataset(Xte, yte, reference=train)
    booster = sb.train({"objective": "binary", "metric": ["auc", "logloss"], "verbosity": -1}, train, 40,
                       valid_sets=[train, valid], valid_names=["train", "test"])
    assert booster.num_trees() == 40 and booster.best_iteration == 40
    auc = booster.evals_result["test"]["auc"]
    assert len(auc) == 40 and auc[-1] > 0.80  # LightGBM 4.7, same settings: 0.824
    assert booster.evals_result["train"]["logloss"][-1] < booster.evals_result["train"]["logloss"][0]
    # the recorded metric is the metric of the model's predictions
    assert roc_auc_score(yte, booster.predict(Xte)) == pytest.approx(auc[-1], rel=1e-12)
    assert len(booster.iteration_stats["seconds"]) == 40


def test_regression_training_reduces_rmse(regression_data):
    X, y = regression_data
    Xtr, ytr, Xte, yte = _split(X, y, 2500)
    train = sb.Dataset(Xtr, ytr)
    valid = sb.Dataset(Xte, yte, reference=train)
    booster = sb.train({"objective": "regression", "verbosity": -1}, train, 60, valid_sets=[valid])
    rmse = booster.evals_result["valid_0"]["rmse"]
    assert rmse[-1] < 0.5 * np.std(yte) and rmse[-1] < rmse[0]
    assert booster.base_score == pytest.approx(ytr.mean())


def test_training_scores_equal_predictions_bit_for_bit(binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)
    booster = sb.train({"objective": "binary", "verbosity": -1}, train, 15, valid_sets=[train])
    raw = booster.predict(X, raw_score=True)
    binned = np.full(X.shape[0], booster.base_score)
    booster.predict_binned(train.binned, binned)
    np.testing.assert_array_equal(raw, binned)
    expected_logloss = np.mean(np.logaddexp(0, raw) - y * raw)
    assert booster.evals_result["training"]["logloss"][-1] == expected_logloss


def test_early_stopping_sets_best_iteration_and_predict_uses_it():
    X, y = make_binary(n=3000, seed=4)
    Xtr, ytr, Xte, yte = _split(X, y, 2000)
    train = sb.Dataset(Xtr, ytr)
    valid = sb.Dataset(Xte, yte, reference=train)
    params = {"objective": "binary", "learning_rate": 0.5, "num_leaves": 63, "min_data_in_leaf": 2,
              "verbosity": -1}
    booster = sb.train(params, train, 500, valid_sets=[valid], callbacks=[sb.early_stopping(5, verbose=False)])
    history = booster.evals_result["valid_0"]["logloss"]
    best = booster.best_iteration
    assert booster.num_trees() == best + 5 < 500
    assert history[best - 1] == min(history)
    assert booster.best_score["valid_0"]["logloss"] == min(history)
    np.testing.assert_array_equal(booster.predict(Xte), booster.predict(Xte, num_iteration=best))
    assert not np.array_equal(booster.predict(Xte), booster.predict(Xte, num_iteration=0))
    # saved whole or up to the best iteration, the best score is kept; cut before it, it was
    # kept too, though the score of an iteration the model no longer has
    for kept in (0, best):
        assert sb.Booster(model_str=booster.model_to_string(kept)).best_score == booster.best_score
    cut = sb.Booster(model_str=booster.model_to_string(best - 1))
    assert (cut.best_iteration, cut.best_score) == (best - 1, {})
    # the same through params, and the callback object is reusable across runs
    via_params = sb.train({**params, "early_stopping_round": 5}, train, 500, valid_sets=[valid])
    assert via_params.best_iteration == best
    callback = sb.early_stopping(5, verbose=False)
    first = sb.train(params, train, 500, valid_sets=[valid], callbacks=[callback])
    second = sb.train(params, train, 500, valid_sets=[valid], callbacks=[callback])
    assert first.best_iteration == second.best_iteration == best


class _Collect(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_log_evaluation_and_record_evaluation(binary_data):
    X, y = binary_data
    train = sb.Dataset(X, y)
    recorded = {}
    handler = _Collect()
    logging.getLogger("smartboost").addHandler(handler)
    try:
        sb.train({"objective": "binary", "metric": "auc"}, train, 6, valid_sets=[train],
                 callbacks=[sb.log_evaluation(3), sb.record_evaluation(recorded)])
        sb.train({"objective": "binary", "metric": "auc", "verbosity": 0}, train, 6, valid_sets=[train],
                 callbacks=[sb.log_evaluation(3)])
    finally:
        logging.getLogger("smartboost").removeHandler(handler)
    evaluations = [m for m in handler.messages if "training's" in m]  # not the compile notice of a cold cache
    assert len(evaluations) == 2  # the second run is silenced by verbosity=0
    assert evaluations[0].startswith("[3]\ttraining's auc: ")
    assert list(recorded) == ["training"] and len(recorded["training"]["auc"]) == 6


def test_the_first_compilation_of_a_kernel_is_announced_once(monkeypatch):
    """Numba signals a compilation on a cache miss only: the notice shows before the first
    kernel of smartboost compiles, once per process, and not for other packages' functions."""
    import numba

    from smartboost._config import compile_notice, logger
    monkeypatch.setattr(compile_notice, "shown", False)

    def twice(x):
        return 2 * x

    def thrice(x):
        return 3 * x

    twice.__module__ = "smartboost._notice_check"  # a function of smartboost's, for the notice
    handler = _Collect()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        numba.njit(thrice)(1)
        assert handler.messages == []
        kernel = numba.njit(twice)
        kernel(1)
        kernel(1.0)  # a second compilation
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert len(handler.messages) == 1 and handler.messages[0].startswith("compiling the kernels")


def test_runs_stepped_in_turn_over_one_dataset_grow_what_train_grows(binary_data):
    """The benchmarks' lockstep runs (experiments.sampling.iteration_cost, bench_ranking) share
    one Dataset and interleave their iterations: training must not leave state behind in it."""
    from smartboost._config import threads
    from smartboost._params import training_params
    from smartboost.engine import Trainer
    from smartboost.experiments.timing import lockstep

    X, y = binary_data
    train = sb.Dataset(X, y)
    base = {"objective": "binary", "num_leaves": 15, "verbosity": -1}
    runs = [{}, {"sampling": "mvs", "sample_rate": 0.3}, {"sampling": "smart2", "sample_rate": 0.3},
            {"colsample_bytree": 0.5}]
    with threads(0) as n_threads:
        trainers = [Trainer.local(training_params({**base, **run}, 8), train, None, None, None, n_threads)
                    for run in runs]
        lockstep([t.boost_one_iteration for t in trainers], [8] * len(trainers))
    for run, trainer in zip(runs, trainers):
        alone = sb.train({**base, **run}, train, 8)
        np.testing.assert_array_equal(trainer.booster.predict(X, raw_score=True), alone.predict(X, raw_score=True))


def test_lockstep_takes_turns_in_a_rotating_order_until_each_run_is_done():
    from smartboost.experiments.timing import lockstep

    calls = []
    lockstep([lambda k=k: calls.append(k) for k in range(3)], [2, 3, 1])
    assert calls == [0, 1, 2, 1, 0, 1]  # round 0: 0 1 2; round 1: 0 and 1 left, from 1; round 2: 1


def test_lockstep_retires_a_run_whose_step_says_it_is_done():
    from smartboost.experiments.timing import lockstep

    calls = []

    def step(k):
        calls.append(k)
        return not (k == 0 and calls.count(0) == 2)  # run 0 is done after its second iteration

    lockstep([lambda k=k: step(k) for k in range(2)], [4, 4])
    assert calls == [0, 1, 1, 0, 1, 1]


def test_train_in_lockstep_stops_each_run_at_its_time_budget(binary_data):
    from smartboost.experiments.timing import train_in_lockstep

    train = sb.Dataset(*binary_data)
    seen = []
    trainers = train_in_lockstep([{"objective": "binary", "verbosity": -1, "num_threads": 1}] * 2, train, None,
                                 10_000, lambda k, trainer: seen.append(k), seconds=0.05)
    for k, trainer in enumerate(trainers):
        seconds = trainer.booster.iteration_stats["seconds"]
        assert sum(seconds) >= 0.05 and sum(seconds[:-1]) < 0.05  # stopped right after the budget
        assert seen.count(k) == len(seconds) < 10_000


def test_custom_callback_can_stop_training(binary_data):
    class StopAt(sb.TrainingCallback):
        def after_iteration(self, env):
            return env.iteration + 1 >= 3

    booster = sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(*binary_data), 50,
                       callbacks=[StopAt()])
    assert booster.num_trees() == 3


def test_sample_weights_equal_duplicated_rows():
    X, y = make_regression(n=200, seed=5)  # < 255 distinct values, one bin each: both sets get the same bins
    w = np.where(np.arange(200) % 3 == 0, 2.0, 1.0)
    params = {"objective": "regression", "min_data_in_leaf": 0, "num_leaves": 8, "verbosity": -1}
    one_bin_each = {"min_data_in_bin": 1}
    weighted = sb.train(params, sb.Dataset(X, y, weight=w, params=one_bin_each), 20)
    repeat = np.where(w == 2.0, 2, 1)
    duplicated = sb.train(params, sb.Dataset(np.repeat(X, repeat, axis=0), np.repeat(y, repeat), params=one_bin_each),
                          20)
    np.testing.assert_allclose(weighted.predict(X), duplicated.predict(X), rtol=1e-9, atol=1e-9)


def test_zero_weight_rows_are_ignored():
    X, y = make_binary(n=1000, seed=6)
    w = np.ones(1000)
    w[500:] = 0.0
    y_noise = y.copy()
    y_noise[500:] = 1 - y_noise[500:]
    params = {"objective": "binary", "min_data_in_leaf": 0, "verbosity": -1}
    a = sb.train(params, sb.Dataset(X, y_noise, weight=w), 10)
    b = sb.train(params, sb.Dataset(X, y, weight=w), 10)
    np.testing.assert_allclose(a.predict(X[:500]), b.predict(X[:500]), rtol=1e-9)


_SCALED_BY_WEIGHT = ("lambda_l1", "lambda_l2", "min_gain_to_split", "min_sum_hessian_in_leaf", "cat_l2")
"""The parameters that are absolute sums of weighted hessians (or gains), which a uniform factor
of the weights scales."""


@pytest.mark.parametrize("params", [
    {"objective": "binary", "min_sum_hessian_in_leaf": 0.0},
    {"objective": "regression", "lambda_l1": 0.5, "lambda_l2": 2.0, "min_gain_to_split": 1.0,
     "min_sum_hessian_in_leaf": 1.0},
    {"objective": "binary", "lambda_l2": 1.0, "monotone_constraints": [1, 0, 0, 1, 0, 0, 0],
     "monotone_constraints_method": "intermediate"},
    {"objective": "binary", "max_cat_to_onehot": 2, "cat_smooth": 0.0, "cat_l2": 5.0, "sampling": "goss",
     "sample_rate": 0.5},
])
def test_uniform_weights_and_the_absolute_parameters_scaled_alike_grow_the_trees_of_unit_weights(params):
    """As :func:`test_uniform_weights_of_any_scale_grow_the_trees_of_unit_weights`, with the
    parameters that are absolute sums of weighted hessians (or gains) scaled as the weights, on
    regularised, constrained and categorical runs with GOSS: the trees of weights 1, their gains
    scaled by the weights."""
    X, y = make_binary(n=1500, seed=8, missing_rate=0.05)
    X = np.column_stack([X, np.random.default_rng(8).integers(0, 6, 1500)])  # a categorical feature
    if params["objective"] == "regression":
        y = 3 * np.nan_to_num(X[:, 0]) + y
    base = {"num_leaves": 15, "min_data_in_leaf": 5, "min_sum_hessian_in_leaf": 1e-3, "verbosity": -1, **params}

    def grown(scale):
        scaled = {name: value * scale if name in _SCALED_BY_WEIGHT else value for name, value in base.items()}
        data = sb.Dataset(X, y, weight=np.full(1500, scale), categorical_feature=[6])
        return sb.train(scaled, data, 4).trees

    reference = grown(1.0)
    assert sum(int((tree.left >= 0).sum()) for tree in reference) > 20
    for scale in (1e-300, 1e-200, 1e-120, 1e-50, 1e50, 1e200):
        for tree, expected in zip(grown(scale), reference, strict=True):
            np.testing.assert_array_equal(tree.feature, expected.feature)
            np.testing.assert_array_equal(tree.threshold, expected.threshold)
            np.testing.assert_array_equal(tree.left, expected.left)
            # values apart by the rounding of the weighted rows to 2**-30 of the largest (in a leaf of
            # 20 rows, about 1e-8 of a leaf value of 1)
            leaves = tree.left < 0
            np.testing.assert_allclose(tree.value[leaves], expected.value[leaves], rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(tree.gain, expected.gain * scale, rtol=1e-6)


def test_weights_below_the_least_normal_float_are_a_data_error():
    X, y = make_binary(n=100, seed=9)
    with pytest.raises(sb.DataError, match=r"weight: the largest weight is 1e-310, below the least normal float"):
        sb.Dataset(X, y, weight=np.full(100, 1e-310))
    weight = np.full(100, 1e-310)
    weight[0] = 1e-300  # lighter rows beside it are fine
    sb.Dataset(X, y, weight=weight)


def test_init_score_offsets_training():
    X, y = make_regression(n=500, seed=7)
    offset = np.full(500, 100.0)
    params = {"objective": "regression", "verbosity": -1}
    booster = sb.train(params, sb.Dataset(X, y + 100.0, init_score=offset), 30)
    assert booster.base_score == 0.0  # as LightGBM: no boosting from the average on top of init scores
    plain = sb.train({**params, "boost_from_average": False}, sb.Dataset(X, y), 30)
    np.testing.assert_allclose(booster.predict(X), plain.predict(X), atol=1e-8)


def test_continued_training_equals_one_long_run(tmp_path):
    X, y = make_binary(n=2000, seed=8)
    params = {"objective": "binary", "verbosity": -1}
    train = sb.Dataset(X, y, params={"max_bin": 15})
    full = sb.train(params, train, 20)
    first = sb.train(params, train, 12)
    path = tmp_path / "first.json"
    first.save_model(path)
    full = json.loads(full.model_to_string())
    assert full.pop("params")["num_iterations"] == 20
    # with the model as the reference, or data not binned yet, which take its edges (not the
    # default 255 bins)
    for data in (sb.Dataset(X, y, reference=first), sb.Dataset(X, y)):
        resumed = sb.train(params, data, 8, init_model=str(path))
        assert resumed.num_trees() == 20
        resumed = json.loads(resumed.model_to_string())
        assert resumed.pop("params")["num_iterations"] == 8
        assert resumed == full
    with pytest.raises(sb.DataError, match="binned differently from init_model"):
        sb.train(params, sb.Dataset(X, y).construct(), 8, init_model=first)


@pytest.mark.parametrize("policy, leaves, depth", [("leafwise", 7, -1), ("leafwise", 64, 3),
                                                  ("depthwise", 0, 4), ("depthwise", 5, 6)])
def test_growth_policies_respect_limits(policy, leaves, depth):
    X, y = make_regression(n=3000, seed=9)
    booster = sb.train({"grow_policy": policy, "num_leaves": leaves, "max_depth": depth, "min_data_in_leaf": 1,
                        "verbosity": -1}, sb.Dataset(X, y), 5)
    for tree in booster.trees:
        if leaves:
            assert tree.n_leaves <= leaves
        if depth > 0:
            assert tree.depth() <= depth
    expected = min(leaves or np.inf, 2 ** depth if depth > 0 else np.inf)
    assert booster.trees[0].n_leaves == expected


def test_depthwise_fills_levels_in_order():
    X, y = make_regression(n=5000, seed=10)
    tree = sb.train({"grow_policy": "depthwise", "num_leaves": 6, "max_depth": 8, "min_data_in_leaf": 1,
                     "verbosity": -1}, sb.Dataset(X, y), 1).trees[0]
    # levels 1 and 2 are complete (4 leaves) before level 3 gets nodes: 2 more splits, 4 nodes
    depth = np.zeros(tree.n_nodes, int)
    for node in range(tree.n_nodes):
        if tree.left[node] >= 0:
            depth[tree.left[node]] = depth[tree.right[node]] = depth[node] + 1
    assert (depth == 2).sum() == 4 and (depth == 3).sum() == 4


def test_stumps():
    X, y = make_regression(n=1000, seed=11)
    booster = sb.train({"max_depth": 1, "verbosity": -1}, sb.Dataset(X, y), 10)
    assert all(t.n_nodes == 3 for t in booster.trees)


def test_no_possible_split_gives_single_leaf_trees():
    X = np.ones((100, 3))
    y = np.arange(100.0)
    booster = sb.train({"verbosity": -1}, sb.Dataset(X, y), 3)
    assert all(t.n_nodes == 1 for t in booster.trees)
    np.testing.assert_allclose(booster.predict(X), y.mean())


def test_feature_importance():
    X, y = make_regression(n=2000, seed=12)
    X[:, 4] = 0.0
    booster = sb.train({"verbosity": -1}, sb.Dataset(X, y), 10)
    split = booster.feature_importance("split")
    gain = booster.feature_importance("gain")
    assert split.sum() == sum(int((t.left >= 0).sum()) for t in booster.trees)
    assert split[4] == 0 and gain[4] == 0 and gain[0] == gain.max()


# -- checkpoints and resumption -------------------------------------------------------------

@pytest.mark.parametrize("sampling", [None, "mvs", "goss", "bernoulli"])
def test_interrupted_run_resumed_from_its_checkpoint_equals_one_run(tmp_path, sampling):
    X, y = make_binary(n=3000, seed=8)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "seed": 5}
    if sampling:
        params.update(sampling=sampling, sample_rate=0.3)
    whole = sb.train(params, sb.Dataset(X, y), 12)
    path = tmp_path / "ckpt.json"

    class Interrupt(sb.TrainingCallback):
        def after_iteration(self, env):
            if env.iteration == 6:
                raise KeyboardInterrupt
            return False

    with pytest.raises(KeyboardInterrupt):
        sb.train(params, sb.Dataset(X, y), 12, callbacks=[sb.checkpoint(path, period=5), Interrupt()])
    saved = sb.Booster(model_file=path)
    assert saved.current_iteration() == 7  # the interrupt kept every finished iteration
    resumed = sb.train(params, sb.Dataset(X, y, reference=saved), 5, init_model=path)
    strip = lambda b: {k: v for k, v in json.loads(b.model_to_string()).items() if k != "params"}  # noqa: E731
    assert strip(resumed) == strip(whole)


def test_a_run_resumed_under_a_learning_rate_schedule_equals_one_run(tmp_path):
    """The samplers read the last trees' steps before shrinkage (mvs's adaptive lambda): each
    tree records its own learning rate, so a resumed run divides by the rate the schedule gave
    that tree, not by the new run's rate."""
    X, y = make_binary(n=3000, seed=8)
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, "seed": 5, "sampling": "mvs",
              "sample_rate": 0.3, "learning_rate": 0.3}
    rate = lambda i: 0.3 * 0.8 ** i  # noqa: E731
    whole = sb.train(params, sb.Dataset(X, y), 12, callbacks=[sb.reset_parameter(learning_rate=rate)])
    first = sb.train(params, sb.Dataset(X, y), 7, callbacks=[sb.reset_parameter(learning_rate=rate)])
    assert [tree.shrinkage for tree in first.trees] == [rate(i) for i in range(7)]
    path = tmp_path / "first.json"
    first.save_model(path)
    resumed = sb.train(params, sb.Dataset(X, y), 5, init_model=path,
                       callbacks=[sb.reset_parameter(learning_rate=lambda i: rate(i + 7))])
    trees = lambda b: json.loads(b.model_to_string())["trees"]  # noqa: E731
    assert trees(resumed) == trees(whole)


def test_checkpoint_writes_every_period(tmp_path):
    X, y = make_binary(n=1000, seed=9)
    path = tmp_path / "ckpt.json"
    seen = []

    class Watch(sb.TrainingCallback):
        def after_iteration(self, env):
            seen.append(sb.Booster(model_file=path).num_trees() if path.exists() else 0)
            return False

    sb.train({"objective": "binary", "verbosity": -1}, sb.Dataset(X, y), 7,
             callbacks=[sb.checkpoint(path, period=3), Watch()])
    assert seen == [0, 0, 3, 3, 3, 6, 6]
    assert sb.Booster(model_file=path).num_trees() == 7


def test_progress_bar_shows_iterations_and_the_validation_metric():
    import io

    X, y = make_binary(n=1000, seed=10)
    out = io.StringIO()
    train = sb.Dataset(X, y)
    sb.train({"objective": "binary", "metric": "auc", "verbosity": -1}, train, 7,
             valid_sets=[sb.Dataset(X, y, reference=train)], callbacks=[sb.progress_bar(file=out)])
    text = out.getvalue()
    assert "7/7" in text and "valid_0's auc:" in text


def test_progress_bar_appears_only_on_a_terminal(monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    X, y = make_binary(n=500, seed=11)
    shown = []
    for stderr, params in ((Terminal(), {"verbosity": 1}), (io.StringIO(), {"verbosity": 1}),
                           (Terminal(), {"verbosity": -1}), (Terminal(), {"verbosity": 1, "progress_bar": False})):
        monkeypatch.setattr(sys, "stderr", stderr)
        sb.train({"objective": "binary", **params}, sb.Dataset(X, y), 3)
        shown.append("3/3" in stderr.getvalue())
    assert shown == [True, False, False, False]


def _rare_features(n=600, seed=0):
    """Four informative columns and three rare ones: 3, 12 and 40 rows outside their most
    populated bin, each rare value placed where it would help the fit."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 7))
    y = X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    X[:, 4:] = 0.0
    top = np.argsort(-y)
    X[top[:3], 4] = 1.0
    X[top[3:15], 5] = 2.0
    X[top[15:55], 6] = 3.0
    return X, y


@pytest.mark.parametrize("min_data_in_leaf", [5, 20, 60])
def test_pre_filter_leaves_out_features_no_split_could_give_enough_rows(min_data_in_leaf):
    X, y = _rare_features()
    y = (y > np.quantile(y, 0.97)).astype(float)  # hessian-estimated row counts differ from the rows
    params = {"objective": "binary", "num_leaves": 31, "min_data_in_leaf": min_data_in_leaf, "verbosity": -1,
              "min_sum_hessian_in_leaf": 0.0}
    filtered = sb.train(params, sb.Dataset(X, y), 30)
    # reference: the columns that fail the rule made constant, so that nothing can split on them
    outside = np.array([X.shape[0] - np.unique(X[:, f], return_counts=True)[1].max() for f in range(X.shape[1])])
    blanked = X.copy()
    blanked[:, outside < min_data_in_leaf] = 0.0
    reference = sb.train(params, sb.Dataset(blanked, y), 30)
    assert [t.feature.tolist() for t in filtered.trees] == [t.feature.tolist() for t in reference.trees]
    np.testing.assert_array_equal(filtered.predict(X), reference.predict(blanked))
    used = {int(f) for t in filtered.trees for f in t.feature[t.left >= 0]}
    assert not used & set(np.flatnonzero(outside < min_data_in_leaf).tolist())


def test_pre_filter_can_be_turned_off():
    X, y = _rare_features()
    # binary labels: hessian-estimated row counts let the three rare rows of column 4 make a leaf
    # when the filter is off (its rows carry large hessians in a node of small ones)
    labels = (y > np.quantile(y, 0.97)).astype(float)
    params = {"objective": "binary", "num_leaves": 31, "min_data_in_leaf": 20, "verbosity": -1,
              "min_sum_hessian_in_leaf": 0.0}
    on = sb.train(params, sb.Dataset(X, labels), 60)
    off = sb.train({**params, "feature_pre_filter": False}, sb.Dataset(X, labels), 60)
    assert on.params["feature_pre_filter"] is True and off.params["feature_pre_filter"] is False
    used = [{int(f) for t in model.trees for f in t.feature[t.left >= 0]} for model in (on, off)]
    assert not used[0] & {4, 5} and 4 in used[1]


@pytest.mark.parametrize("scale", [1e-300, 1e-120, 1e50, 1e200])
def test_uniform_weights_of_any_scale_grow_the_trees_of_unit_weights(scale):
    """Split scores scale with the cube of the weights: scanned in floats they underflowed below
    weights of about 1e-100 (other trees, then none) and overflowed near 1e200. The scans read
    sums in the tree's own units, so only the rounding of the fixed-point sums differs."""
    X, y = make_binary(n=3000, seed=11)
    params = {"objective": "binary", "num_leaves": 15, "min_sum_hessian_in_leaf": 0, "min_data_in_leaf": 5,
              "verbosity": -1}

    def trees(weight):
        booster = sb.train(params, sb.Dataset(X, y, weight=np.full(3000, weight)), 5)
        return booster, [(t.feature.tolist(), t.bin_threshold.tolist()) for t in booster.trees]

    unit, unit_trees = trees(1.0)
    scaled, scaled_trees = trees(scale)
    assert scaled_trees == unit_trees and len(unit_trees[0][0]) > 1
    np.testing.assert_allclose(scaled.predict(X[:200], raw_score=True), unit.predict(X[:200], raw_score=True),
                               rtol=0, atol=1e-8)


def test_train_bins_an_unbinned_dataset_with_its_binning_parameters():
    """LightGBM's lazy Dataset: binning parameters given to train (or cv) bin a Dataset not binned
    yet, and its evaluation sets with its edges (with reference=train_set or without one), as the
    same parameters given to the Dataset do; a Dataset binned already refuses other ones."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((600, 4))
    X[:, 3] = rng.integers(0, 6, 600)
    y = (X[:, 0] + 0.3 * X[:, 3] + 0.5 * rng.standard_normal(600) > 0).astype(float)
    Xv, yv = X[:200].copy(), y[:200]
    Xv[:, :3] += 0.01
    binning = {"max_bin": 7, "min_data_in_bin": 1, "bin_construct_sample_cnt": 300, "seed": 3,
               "categorical_feature": [3]}
    params = {"objective": "binary", "num_leaves": 7, "verbosity": -1, **binning}

    def run(train_set, valid_set):
        history = {}
        booster = sb.train(params, train_set, 5, valid_sets=[valid_set],
                           callbacks=[sb.record_evaluation(history)])
        return booster, history["valid_0"]["logloss"]

    given = sb.Dataset(X, y, params=binning)
    expected, expected_history = run(given, sb.Dataset(Xv, yv, reference=given))
    assert expected.bin_mapper.n_bins[:3].max() == 7 and expected.bin_mapper.categorical.tolist() == [0, 0, 0, 1]
    for with_reference in (True, False):
        lazy = sb.Dataset(X, y)
        booster, history = run(lazy, sb.Dataset(Xv, yv, reference=lazy) if with_reference else sb.Dataset(Xv, yv))
        assert booster.bin_mapper.same_edges(expected.bin_mapper)
        assert booster.bin_mapper.categorical.tolist() == [0, 0, 0, 1]
        np.testing.assert_array_equal(booster.predict(Xv, raw_score=True), expected.predict(Xv, raw_score=True))
        assert history == expected_history
        with pytest.raises(ParameterError, match="'max_bin'=15 differs from the Dataset's"):
            sb.train({**params, "max_bin": 15}, lazy, 1)
    cv_params = {**params, "metric": "binary_logloss"}
    lazy_cv = sb.cv(cv_params, sb.Dataset(X, y), 3, nfold=3, seed=1)
    given_cv = sb.cv(cv_params, sb.Dataset(X, y, params=binning), 3, nfold=3, seed=1)
    assert lazy_cv == given_cv


@pytest.mark.parametrize("weighted, missing", [(False, False), (True, False), (False, True), (True, True)])
def test_trees_equal_lightgbm_at_its_default_min_data_in_leaf(weighted, missing):
    """min_data_in_leaf=20 (LightGBM's default) accepts the thresholds LightGBM accepts: each
    bin's rows estimated from its hessian and rounded on its own, the side the scan adds bins
    to counted, the other side the node's other rows. On data both bin alike (integer features,
    63 bins) the trees equal LightGBM's; with one estimate for the whole side they differed by
    0.5-1.1 in raw score after 10 trees. With missing values (15%) too: the scan sending them
    right counts from the top where the first bin is the most frequent (every feature here);
    counted from the bottom, 4 of 6 such runs differed by 0.15-1.1."""
    pytest.importorskip("lightgbm")
    from conftest import train_beside_lightgbm

    for seed in range(3):
        rng = np.random.default_rng(seed)
        X = rng.integers(0, 40, (3000, 5)).astype(float)
        y = (X[:, 0] + X[:, 1] * 0.5 + rng.normal(0, 8, 3000) > 30).astype(float)
        if missing:
            X[rng.random(X.shape) < 0.15] = np.nan
        weight = rng.uniform(0.5, 2, 3000) if weighted else None
        params = {"objective": "binary", "learning_rate": 0.3, "num_leaves": 15, "min_data_in_leaf": 20,
                  "min_sum_hessian_in_leaf": 1e-3, "verbosity": -1}
        runs = train_beside_lightgbm(params, X, y, weight, {"max_bin": 63, "min_data_in_bin": 1, "verbose": -1}, 10)
        np.testing.assert_allclose(runs.ours.predict(X, raw_score=True), runs.theirs.predict(X, raw_score=True),
                                   atol=1e-6)
