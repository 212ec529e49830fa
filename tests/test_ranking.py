"""Learning to rank: queries in the data, NDCG, the LambdaMART and RankNet gradients, training."""

from __future__ import annotations

import math

import numpy as np
import pytest

import smartboost as sb
from smartboost.errors import DataError
from smartboost.metrics import get_metric
from smartboost.objectives import make_objective


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
])
def test_bad_queries_are_reported(kwargs, match):
    with pytest.raises(DataError, match=match):
        sb.Dataset(np.zeros((7, 2)), np.zeros(7), **kwargs)


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


def _reference_lambdas(label, score, starts, truncation, sigma, ndcg_weighted):
    """Brute force, without normalisation: every pair within the truncation, straight from the formulas."""
    g, h = np.zeros_like(score), np.zeros_like(score)
    gain = 2.0 ** label - 1
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
                rho = 1 / (1 + math.exp(sigma * (score[i] - score[j])))
                g[i] -= sigma * w * rho
                g[j] += sigma * w * rho
                h[i] += sigma ** 2 * w * rho * (1 - rho)
                h[j] += sigma ** 2 * w * rho * (1 - rho)
    return g, h


@pytest.mark.parametrize("name", ["lambdarank", "rank_pairwise"])
@pytest.mark.parametrize("truncation", [3, 100])
def test_lambdas_equal_the_brute_force_reference(name, truncation):
    X, y, sizes = make_ranking(12, seed=1)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    score = np.random.default_rng(2).standard_normal(len(y))
    objective = make_objective(name, {"sigmoid": 1.5, "lambdarank_truncation_level": truncation,
                                      "lambdarank_norm": False})
    objective.bind_queries(y, starts)
    g, h = np.empty_like(score), np.empty_like(score)
    objective.grad_hess(y, score, g, h)
    expected_g, expected_h = _reference_lambdas(y, score, starts, truncation, 1.5, name == "lambdarank")
    np.testing.assert_allclose(g, expected_g, atol=1e-12)
    np.testing.assert_allclose(h, expected_h, atol=1e-12)


@pytest.mark.parametrize("params", [{"objective": "lambdarank"}, {"objective": "rank_pairwise"},
                                    {"objective": "lambdarank", "sampling": "mvs", "sample_rate": 0.5}])
def test_ranking_training_improves_test_ndcg(params):
    X, y, sizes = make_ranking(120, seed=3)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    cut = int(starts[90])
    train = sb.Dataset(X[:cut], y[:cut], group=sizes[:90])
    test = sb.Dataset(X[cut:], y[cut:], group=sizes[90:], reference=train)
    booster = sb.train({**params, "num_leaves": 7, "metric": ["ndcg@5", "ndcg@10"], "verbosity": -1}, train, 30,
                       valid_sets=[test])
    history = booster.evals_result["valid_0"]
    random_order = get_metric("ndcg@10")(y[cut:], np.zeros(len(y) - cut), None, None, starts[90:] - cut)
    assert history["ndcg@10"][-1] > random_order + 0.1
    assert history["ndcg@5"][-1] > history["ndcg@5"][0]


def test_ranking_misuse_is_reported(tmp_path):
    X, y, sizes = make_ranking(10)
    with pytest.raises(DataError, match="needs queries"):
        sb.train({"objective": "lambdarank", "verbosity": -1}, sb.Dataset(X, y), 1)
    with pytest.raises(DataError, match=r"relevance grade in \[0, 31\] for a ranking objective; row 2 has -1"):
        sb.train({"objective": "lambdarank", "verbosity": -1}, sb.Dataset(X, np.r_[0, 1, -1, y[3:]], group=sizes), 1)
    booster = sb.train({"objective": "lambdarank", "sigmoid": 2.0, "verbosity": -1}, sb.Dataset(X, y, group=sizes), 3)
    booster.save_model(tmp_path / "r.json")
    assert sb.Booster(model_file=tmp_path / "r.json").objective.sigmoid == 2.0
