"""Learning to rank: queries in the data, NDCG and MAP, gain tables, the LambdaMART and RankNet gradients, training."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import smartboost as sb
import smartboost.metrics
from smartboost.errors import DataError, ParameterError
from smartboost.metrics import canonical_metric_name, get_metric
from smartboost.objectives import make_objective
from smartboost.objectives.ranking import rank_by_score


def make_ranking(n_queries=60, seed=0, n_features=5):
    """Queries of 5-40 documents, grades 0-4 from a noisy function of the features."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(5, 41, n_queries)
    X = rng.standard_normal((sizes.sum(), n_features))
    signal = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.standard_normal(sizes.sum())
    y = np.clip(np.round(signal + 1), 0, 4)
    return X, y, sizes


def test_group_and_qid_give_the_same_queries():
    X, y, sizes = make_ranking(10)
    qid = np.repeat(np.arange(10) * 7 + 3, sizes)
    a, b = sb.Dataset(X, y, group=sizes), sb.Dataset(X, y, qid=qid)
    np.testing.assert_array_equal(a.query_starts, b.query_starts)
    assert a.num_queries() == 10 and a.query_starts[-1] == len(y)


@pytest.mark.parametrize("kwargs, match", [
    ({"group": [3, 3]}, "sum to 6 but the data has 7 rows"),
    ({"group": [3, 0, 4]}, "query 1 has 0"),
    ({"qid": [1, 1, 2, 2, 1, 3, 3]}, "row 4 has 1 after 2"),
    ({"qid": ["a", "a", "b", "b", "a", "c", "c"]}, "contiguous"),
    ({"group": [7], "qid": [0] * 7}, "not both"),
    ({"qid": [0, 0, 0, 1, 1, 1, np.nan]}, r"missing value \(nan\) at row 6"),
    ({"qid": np.array([None] * 7, object)}, r"missing value \(None\) at row 0"),
    ({"qid": np.array([0, 0, 0, 1, 1, 1, pd.NA], object)}, r"missing value \(<NA>\) at row 6"),
    ({"qid": np.array([1, 1, "a", "a", 1, 2, 2], object)}, "contiguous"),  # not orderable: no TypeError
    ({"qid": np.array([[0], [0], [0], [1], [1], [1, 2], [1]], object)}, "numbers or texts, got list at row 0"),
])
def test_bad_queries_are_reported(kwargs, match):
    with pytest.raises(DataError, match=match):
        sb.Dataset(np.zeros((7, 2)), np.zeros(7), **kwargs)


def test_qid_of_mixed_types_gives_its_queries():
    qid = np.array([7, 7, "a", "a", "a", 2.5, 2.5], object)
    assert sb.Dataset(np.zeros((7, 2)), np.zeros(7), qid=qid).query_starts.tolist() == [0, 2, 5, 7]


def test_ndcg_matches_a_hand_computed_value():
    label = np.array([3, 2, 0, 1, 0, 0, 1, 0], float)
    score = np.array([0.1, 0.5, 0.3, 0.2, 1.0, 2.0, 0.0, 1.0])
    starts = np.array([0, 4, 6, 8])
    # query 0 ranks grades 2, 0, 1 (gains 3, 0, 1) against the ideal 3, 2, 1 (gains 7, 3, 1);
    # query 1 has no relevant document (counts 1); query 2 puts its relevant document second.
    q0 = (3 + 0 + 1 / 2) / (7 + 3 / math.log2(3) + 1 / 2)
    expected = (q0 + 1 + 1 / math.log2(3)) / 3
    assert get_metric("ndcg@3")(label, score, None, None, starts) == pytest.approx(expected, rel=1e-12)
    assert get_metric("ndcg@1")(label, score, None, None, starts) == pytest.approx((3 / 7 + 1 + 0) / 3)
    with pytest.raises(DataError, match="needs queries"):
        get_metric("ndcg@3")(label, score, None)
    # a cut-off beyond int64 is the whole list (it failed to compile in the kernel)
    for base in ("ndcg", "map"):
        assert get_metric(f"{base}@{10**20}")(label, score, None, None, starts) == \
            get_metric(base)(label, score, None, None, starts)
    with pytest.raises(ParameterError, match="unknown metric 'ndcg@²'"):
        get_metric("ndcg@²")


def test_map_matches_a_hand_computed_value():
    label = np.array([1, 0, 2, 0, 1, 0, 0, 0, 1, 0], float)
    score = np.array([0.9, 0.8, 0.7, 0.1, 0.5, 1.0, 2.0, 0.5, 0.5, 0.2])
    starts = np.array([0, 5, 7, 10])
    # query 0 ranks its relevant documents (grades 1, 2, 1: all relevant alike) 1st, 3rd and 4th:
    # precisions 1, 2/3, 3/4 over R = 3; query 1 has none (counts 1); query 2 ties its relevant
    # document with an irrelevant one placed before it in row order: precision 1/2 at position 2.
    def value(k):
        return get_metric(f"map@{k}" if k else "map")(label, score, None, None, starts)

    assert value(None) == pytest.approx(((1 + 2 / 3 + 3 / 4) / 3 + 1 + 1 / 2) / 3, rel=1e-12)
    assert value(4) == pytest.approx(value(None), rel=1e-12)
    assert value(2) == pytest.approx((1 / 2 + 1 + 1 / 2) / 3, rel=1e-12)  # divided by min(R, k) = 2
    assert value(1) == pytest.approx((1 + 1 + 0) / 3, rel=1e-12)


def _reference_map(label, score, starts, k):
    """Brute force AP@k per query: rank, walk the top k, divide by min(R, k); no relevant: 1."""
    values = []
    for q in range(len(starts) - 1):
        rows = np.arange(starts[q], starts[q + 1])
        ranked = sorted(rows, key=lambda i: (-score[i], i))[:k]
        relevant = int((label[rows] > 0).sum())
        if relevant == 0:
            values.append(1.0)
            continue
        precisions = [np.mean(label[ranked[:p + 1]] > 0) for p in range(len(ranked)) if label[ranked[p]] > 0]
        values.append(sum(precisions) / min(relevant, k))
    return np.mean(values)


@pytest.mark.parametrize("k", [1, 3, 10, None])
def test_map_equals_the_brute_force_reference(k):
    rng = np.random.default_rng(4)
    sizes = rng.integers(1, 25, 80)
    label = rng.choice([0, 0, 0, 1, 2, 4], sizes.sum()).astype(float)
    label[: sizes[0]] = 0  # a query without relevant documents
    score = np.round(rng.standard_normal(sizes.sum()), 1)  # many ties
    starts = np.concatenate([[0], np.cumsum(sizes)])
    name = f"map@{k}" if k else "map"
    expected = _reference_map(label, score, starts, k or len(label))
    assert get_metric(name)(label, score, None, None, starts) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("name, canonical", [("map@5", "map@5"), ("MAP@05", "map@5"), ("map", "map"),
                                             ("mean_average_precision@3", "map@3"), ("NDCG@10", "ndcg@10"),
                                             ("lambdarank@3", "ndcg@3"), ("ndcg", "ndcg")])
def test_ranking_metric_names(name, canonical):
    assert canonical_metric_name(name) == canonical


@pytest.mark.parametrize("name", ["map@0", "map@x", "map@", "ndcg@-1", "mapp@3"])
def test_bad_ranking_metric_names(name):
    with pytest.raises(ParameterError, match="unknown metric"):
        canonical_metric_name(name)


# -- the gain table -----------------------------------------------------------------------------

def test_linear_gain_table_gives_the_linear_gain_ndcg():
    from sklearn.metrics import ndcg_score

    rng = np.random.default_rng(5)
    sizes = rng.integers(3, 30, 40)
    label = rng.integers(0, 5, sizes.sum()).astype(float)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    label[starts[:-1]] = 3  # every query has a relevant document (scikit-learn scores such queries 0, not 1)
    score = rng.standard_normal(sizes.sum())  # no ties: scikit-learn averages tied gains
    for k in (1, 5, 10):
        # scikit-learn's ndcg_score: gain = grade, discount 1 / log2(1 + rank)
        expected = np.mean([ndcg_score([label[a:b]], [score[a:b]], k=k) for a, b in zip(starts[:-1], starts[1:])])
        linear = get_metric(f"ndcg@{k}", [0, 1, 2, 3, 4])(label, score, None, None, starts)
        assert linear == pytest.approx(expected, rel=1e-12)
        assert get_metric(f"ndcg@{k}")(label, score, None, None, starts) != pytest.approx(expected, rel=1e-6)


@pytest.mark.parametrize("gains, match", [
    ([0, 1, -3], "entry 2 is -3"),
    ([0, 1, float("nan")], "entry 2 is nan"),
    ([0, float("inf")], "entry 1 is inf"),
    ([0, 3, 1], "must not decrease.*entry 2 is 1"),
    ([], "non-empty"),
    ("0,1,x", "list of numbers"),
])
def test_bad_gain_tables_are_parameter_errors(gains, match):
    X, y, sizes = make_ranking(10)
    with pytest.raises(ParameterError, match=f"label_gain.*{match}"):
        sb.train({"objective": "lambdarank", "label_gain": gains, "verbosity": -1}, sb.Dataset(X, y, group=sizes), 1)


def test_labels_beyond_the_gain_table_are_reported():
    X, y, sizes = make_ranking(10)
    row = int(np.argmax(y >= 3))
    bad = f"row {row} has {y[row]:g}"
    train = sb.Dataset(X, y, group=sizes)
    with pytest.raises(DataError, match=rf"relevance grade in \[0, 2\] \(label_gain has 3 entries\); {bad}"):
        sb.train({"objective": "lambdarank", "label_gain": "0,1,3", "verbosity": -1}, train, 1)
    with pytest.raises(DataError, match=bad):  # the metric alone checks too
        get_metric("ndcg@5", [0, 1, 3])(y, np.zeros(len(y)), None, None, train.query_starts)
    with pytest.raises(DataError, match=bad):  # with any objective
        sb.train({"objective": "regression", "metric": "ndcg@5", "label_gain": [0, 1, 3], "verbosity": -1}, train,
                 1, valid_sets=[train])


def test_gain_table_drives_objective_and_metric_and_is_saved(tmp_path):
    linear = [0.0, 1.0, 2.0, 3.0, 4.0]
    X, y, sizes = make_ranking(60, seed=6)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    train = sb.Dataset(X, y, group=sizes)
    params = {"objective": "lambdarank", "num_leaves": 7, "metric": "ndcg@10", "verbosity": -1}
    booster = sb.train({**params, "label_gain": linear}, train, 5, valid_sets=[train])
    raw = booster.predict(X, raw_score=True)
    # the recorded metric used the table
    recorded = booster.evals_result["training"]["ndcg@10"][-1]
    assert recorded == pytest.approx(get_metric("ndcg@10", linear)(y, raw, None, None, starts), rel=1e-12)
    assert recorded != pytest.approx(get_metric("ndcg@10")(y, raw, None, None, starts), rel=1e-6)
    # so did the objective's lambdas: the trees differ from the default table's
    default = sb.train(params, train, 5)
    assert not np.allclose(default.predict(X, raw_score=True), raw)
    # the table is saved with the objective options; continuing needs the same table
    booster.save_model(tmp_path / "m.json")
    loaded = sb.Booster(model_file=tmp_path / "m.json")
    assert loaded.objective.label_gain == tuple(linear) and default.objective.label_gain is None
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), raw)
    sb.train({**params, "label_gain": linear}, sb.Dataset(X, y, group=sizes, reference=loaded), 1,
             init_model=loaded)
    with pytest.raises(ParameterError, match="init_model was trained with objective"):
        sb.train(params, sb.Dataset(X, y, group=sizes, reference=loaded), 1, init_model=loaded)


def _reference_lambdas(label, score, starts, truncation, sigma, ndcg_weighted, gain_table=None):
    """Brute force, without normalisation: every pair within the truncation, straight from the formulas."""
    g, h = np.zeros_like(score), np.zeros_like(score)
    gain = 2.0 ** label - 1 if gain_table is None else np.asarray(gain_table)[label.astype(int)]
    for q in range(len(starts) - 1):
        rows = np.arange(starts[q], starts[q + 1])
        order = rows[np.argsort(-score[rows], kind="stable")]
        position = {row: p for p, row in enumerate(order)}
        ideal_gains = np.sort(gain[rows])[::-1][:truncation]
        ideal = sum(v / math.log2(2 + p) for p, v in enumerate(ideal_gains))
        for i in rows:
            for j in rows:
                if label[i] <= label[j] or min(position[i], position[j]) >= truncation:
                    continue
                w = 1.0
                if ndcg_weighted:
                    if ideal == 0:
                        continue
                    w = abs(gain[i] - gain[j]) * abs(1 / math.log2(2 + position[i]) - 1 / math.log2(2 + position[j]))
                    w /= ideal
                rho = expit(-sigma * (score[i] - score[j]))
                g[i] -= sigma * w * rho
                g[j] += sigma * w * rho
                h[i] += sigma ** 2 * w * rho * (1 - rho)
                h[j] += sigma ** 2 * w * rho * (1 - rho)
    return g, h


@pytest.mark.parametrize("name", ["lambdarank", "rank_pairwise"])
@pytest.mark.parametrize("truncation", [3, 100])
@pytest.mark.parametrize("gain_table", [None, (0.0, 1.0, 2.0, 3.0, 4.0), (0.0, 0.0, 1.0, 5.0, 5.0, 9.0)])
@pytest.mark.parametrize("spread", [1.0, 300.0])  # 300: exp(sigma (s - s_top)) underflows within queries
def test_lambdas_equal_the_brute_force_reference(name, truncation, gain_table, spread):
    X, y, sizes = make_ranking(12, seed=1)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    score = spread * np.random.default_rng(2).standard_normal(len(y))
    objective = make_objective(name, {"sigmoid": 1.5, "lambdarank_truncation_level": truncation,
                                      "lambdarank_norm": False, "label_gain": gain_table})
    objective.bind(y, starts)
    g, h = np.empty_like(score), np.empty_like(score)
    objective.grad_hess(y, score, g, h)
    expected_g, expected_h = _reference_lambdas(y, score, starts, truncation, 1.5, name == "lambdarank", gain_table)
    np.testing.assert_allclose(g, expected_g, atol=1e-12)
    np.testing.assert_allclose(h, expected_h, atol=1e-12)


@pytest.mark.parametrize("name", ["lambdarank", "rank_pairwise"])
@pytest.mark.parametrize("truncation", [3, 100])
def test_document_loss_shares_add_up_to_the_brute_force_pairwise_loss(name, truncation):
    """sampling='loss' for ranking: half of each pair's w_ij log(1 + exp(-sigma (s_high - s_low))) to each document."""
    _, y, sizes = make_ranking(12, seed=3)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    score = np.random.default_rng(4).standard_normal(len(y))
    objective = make_objective(name, {"sigmoid": 1.5, "lambdarank_truncation_level": truncation})
    objective.bind(y, starts)
    gain = 2.0 ** y - 1
    expected = np.zeros_like(score)
    for q in range(len(sizes)):
        rows = np.arange(starts[q], starts[q + 1])
        order = rows[np.argsort(-score[rows], kind="stable")]
        position = {row: p for p, row in enumerate(order)}
        ideal = sum(v / math.log2(2 + p) for p, v in enumerate(np.sort(gain[rows])[::-1][:truncation]))
        for i in rows:
            for j in rows:
                if y[i] <= y[j] or min(position[i], position[j]) >= truncation or (name == "lambdarank" and not ideal):
                    continue
                w = (abs(gain[i] - gain[j]) * abs(1 / math.log2(2 + position[i]) - 1 / math.log2(2 + position[j]))
                     / ideal if name == "lambdarank" else 1.0)
                pair = w * np.logaddexp(0.0, -1.5 * (score[i] - score[j]))
                expected[i] += pair / 2
                expected[j] += pair / 2
    np.testing.assert_allclose(objective.sampling_loss(y, score), expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("unit", ["row", "query"])
def test_loss_sampling_trains_lambdamart(unit):
    X, y, sizes = make_ranking(120, seed=5)
    params = {"objective": "lambdarank", "sampling": "loss", "sample_rate": 0.3, "sampling_unit": unit,
              "num_leaves": 7, "verbosity": -1}
    train = sb.Dataset(X, y, group=sizes)
    booster = sb.train({**params, "metric": "ndcg@10"}, train, 15, valid_sets=[train])
    rates = booster.iteration_stats["sample_rate"]
    assert 0.15 < np.mean(rates) < 0.45
    history = booster.evals_result["training"]["ndcg@10"]
    assert history[-1] > history[0]


@pytest.mark.parametrize("n", [1, 2, 7, 60, 500])
@pytest.mark.parametrize("start", ["identity", "reversed", "shuffled", "nearly sorted"])
def test_rank_by_score_is_the_stable_sort(n, start):
    rng = np.random.default_rng(n)
    score = np.round(rng.standard_normal(n), 1)  # ties: ranked by index
    stable = np.argsort(-score, kind="stable")
    order = {"identity": np.arange(n), "reversed": np.arange(n)[::-1], "shuffled": rng.permutation(n),
             "nearly sorted": stable.copy()}[start].astype(np.int32)
    if start == "nearly sorted" and n > 2:
        order[[0, n // 2]] = order[[n // 2, 0]]
    rank_by_score(score, order)  # "reversed" and "shuffled" at n = 500 take the merge sort
    np.testing.assert_array_equal(order, stable)


def test_lambdas_do_not_depend_on_the_last_ranking():
    _, y, sizes = make_ranking(30, seed=4)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    rng = np.random.default_rng(0)
    first, second = rng.standard_normal((2, len(y)))
    used, fresh = (make_objective("lambdarank", {}) for _ in range(2))
    used.bind(y, starts)
    fresh.bind(y, starts)
    g, h, g_fresh, h_fresh = np.empty((4, len(y)))
    used.grad_hess(y, first, g, h)   # leaves first's ranking behind
    used.grad_hess(y, second, g, h)
    fresh.grad_hess(y, second, g_fresh, h_fresh)
    np.testing.assert_array_equal(g, g_fresh)
    np.testing.assert_array_equal(h, h_fresh)


@pytest.mark.parametrize("params", [{"objective": "lambdarank"}, {"objective": "rank_pairwise"},
                                    {"objective": "lambdarank", "sampling": "mvs", "sample_rate": 0.5}])
def test_ranking_training_improves_test_ndcg(params):
    X, y, sizes = make_ranking(120, seed=3)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cut = int(starts[90])
    train = sb.Dataset(X[:cut], y[:cut], group=sizes[:90])
    test = sb.Dataset(X[cut:], y[cut:], group=sizes[90:], reference=train)
    booster = sb.train({**params, "num_leaves": 7, "metric": ["ndcg@5", "ndcg@10", "map@3", "map"], "verbosity": -1},
                       train, 30, valid_sets=[test])
    history = booster.evals_result["valid_0"]
    assert list(history) == ["ndcg@5", "ndcg@10", "map@3", "map"]
    random_order = np.zeros(len(y) - cut)
    for name in ("ndcg@10", "map"):
        assert history[name][-1] > get_metric(name)(y[cut:], random_order, None, None, starts[90:] - cut) + 0.05
    assert history["ndcg@5"][-1] > history["ndcg@5"][0]


def test_ranking_misuse_is_reported(tmp_path):
    X, y, sizes = make_ranking(10)
    with pytest.raises(DataError, match="needs queries"):
        sb.train({"objective": "lambdarank", "verbosity": -1}, sb.Dataset(X, y), 1)
    with pytest.raises(DataError, match=r"relevance grade in \[0, 31\] \(label_gain has 32 entries\); row 2 has -1"):
        sb.train({"objective": "lambdarank", "verbosity": -1}, sb.Dataset(X, np.r_[0, 1, -1, y[3:]], group=sizes), 1)
    train = sb.Dataset(X, y, group=sizes)
    # found at the first evaluation, as "metric 'ndcg@10' needs queries" of no set in particular
    with pytest.raises(DataError, match="valid set 'unranked' has no queries, which metric 'ndcg@10' needs"):
        sb.train({"objective": "lambdarank", "verbosity": -1}, train, 1,
                 valid_sets=[sb.Dataset(X, y, reference=train)], valid_names=["unranked"])
    # a metric's label rule names the set, before the first tree (the objective takes any label)
    with pytest.raises(DataError, match=r"valid set 'graded' must be an integer relevance grade.*row 1 has 0.5"):
        sb.train({"objective": "regression", "metric": "ndcg", "verbosity": -1}, train, 1,
                 valid_sets=[sb.Dataset(X, np.r_[0, 0.5, y[2:]], group=sizes, reference=train)], valid_names=["graded"])
    booster = sb.train({"objective": "lambdarank", "sigmoid": 2.0, "verbosity": -1}, sb.Dataset(X, y, group=sizes), 3)
    booster.save_model(tmp_path / "r.json")
    assert sb.Booster(model_file=tmp_path / "r.json").objective.sigmoid == 2.0


def test_metric_labels_are_checked_once_per_evaluation_set(monkeypatch):
    # the labels do not change while training: checking them at every evaluation cost 1.5 ms a
    # metric on a million rows
    X, y, sizes = make_ranking(10)
    calls = []
    check = smartboost.metrics.check_relevance
    monkeypatch.setattr(smartboost.metrics, "check_relevance", lambda *args: calls.append(1) or check(*args))
    train = sb.Dataset(X, y, group=sizes)
    booster = sb.train({"objective": "lambdarank", "metric": ["ndcg@3", "ndcg@5"], "verbosity": -1}, train, 4,
                       valid_sets=[sb.Dataset(X, y, group=sizes, reference=train)])
    assert len(booster.evals_result["valid_0"]["ndcg@3"]) == 4 and len(calls) == 2
