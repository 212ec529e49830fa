"""Plots draw what they say (matplotlib's Agg backend, nothing shown)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost.errors import ParameterError
from smartboost.plotting import plot_importance, plot_metric, plot_tree

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def boosters():
    X, y = make_binary(n=2000, seed=30)
    train = sb.Dataset(X, y, feature_name=[f"f{i}" for i in range(X.shape[1])])
    valid = sb.Dataset(X[:500], y[:500], reference=train)
    return {rate: sb.train({"objective": "binary", "num_leaves": 7, "sample_rate": rate, "metric": ["auc", "logloss"],
                            "verbosity": -1}, train, 12, valid_sets=[valid], valid_names=["valid"])
            for rate in (1.0, 0.5)}


def test_metric_curves_against_iterations_and_seconds(boosters):
    ax = plot_metric({f"rate {r}": b for r, b in boosters.items()}, metric="logloss", x="seconds")
    lines = ax.get_lines()
    assert len(lines) == 2 and [t.get_text() for t in ax.get_legend().get_texts()] == ["rate 1.0", "rate 0.5"]
    booster = boosters[1.0]
    np.testing.assert_allclose(lines[0].get_xdata(), np.cumsum(booster.iteration_stats["seconds"]))
    np.testing.assert_allclose(lines[0].get_ydata(), booster.evals_result["valid"]["logloss"])
    single = plot_metric(booster)  # first recorded metric against iterations
    assert single.get_ylabel() == "valid's auc" and list(single.get_lines()[0].get_xdata()) == list(range(1, 13))
    with pytest.raises(ParameterError, match="no metric 'rmse'"):
        plot_metric(booster, metric="rmse")


def test_importance_bars_are_sorted(boosters):
    booster = boosters[1.0]
    ax = plot_importance(booster, max_num_features=3)
    bars = sorted(ax.patches, key=lambda p: -p.get_y())  # top bar first
    widths = [p.get_width() for p in bars]
    assert len(bars) == 3 and widths == sorted(booster.feature_importance("split"), reverse=True)[:3]


def test_tree_has_a_box_per_node(boosters):
    booster = boosters[1.0]
    ax = plot_tree(booster, tree_index=2)
    tree = booster.trees[2]
    texts = [t.get_text() for t in ax.texts]
    assert len(texts) == tree.left.size
    assert sum("<=" in t for t in texts) == int((tree.left >= 0).sum())
    with pytest.raises(ParameterError, match="tree_index"):
        plot_tree(booster, tree_index=12)
