"""Plots draw what they say (matplotlib's Agg backend, nothing shown)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
from conftest import make_binary

import smartboost as sb
from smartboost.errors import DataError, ParameterError
from smartboost.plotting import plot_importance, plot_metric, plot_shap_summary, plot_shap_waterfall, plot_tree

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


def _labels_top_first(ax):
    ticks = sorted(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())), reverse=True)
    return [label for _, label in ticks]


def test_shap_summary_bars_and_beeswarm(boosters):
    booster = boosters[1.0]
    X, _ = make_binary(n=300, seed=31)
    contributions = booster.predict(X, pred_contrib=True)
    mean_abs = np.abs(contributions[:, :-1]).mean(axis=0)
    ax = plot_shap_summary(booster, X, kind="bar", max_num_features=4)
    bars = sorted(ax.patches, key=lambda p: -p.get_y())  # top bar first
    np.testing.assert_allclose([p.get_width() for p in bars], np.sort(mean_abs)[::-1][:4])
    assert _labels_top_first(ax) == [f"f{i}" for i in np.argsort(-mean_abs)[:4]]
    swarm = plot_shap_summary(contributions, X)  # contributions given: the names are X's (Column_i)
    dots = swarm.collections
    assert len(dots) == X.shape[1]
    top = np.argsort(-mean_abs)[0]
    np.testing.assert_allclose(np.sort(dots[0].get_offsets()[:, 0]), np.sort(contributions[:, top]))
    assert _labels_top_first(swarm)[0] == f"Column_{top}"
    with pytest.raises(ParameterError, match="kind"):
        plot_shap_summary(booster, X, kind="violin")


def test_shap_waterfall_goes_from_the_expected_value_to_the_raw_score(boosters):
    booster = boosters[1.0]
    X, _ = make_binary(n=5, seed=32)
    ax = plot_shap_waterfall(booster, X[2], max_num_features=3)
    bars = sorted(ax.patches, key=lambda p: p.get_y())  # bottom bar first
    contributions = booster.predict(X[2:3], pred_contrib=True)[0]
    assert len(bars) == 4  # three features and the rest
    assert bars[0].get_x() == pytest.approx(contributions[-1])  # starts at E[f(x)]
    end = bars[-1].get_x() + bars[-1].get_width()
    assert end == pytest.approx(booster.predict(X[2:3], raw_score=True)[0], rel=1e-9)
    widths = [abs(b.get_width()) for b in bars[1:]]
    assert widths == sorted(widths)  # the largest on top


def test_max_num_features_zero_or_negative_shows_every_feature(boosters):
    # a negative bound sliced off the least important features; None or <= 0 is all (LightGBM)
    booster = boosters[1.0]
    X, _ = make_binary(n=50, seed=33)
    used = int((booster.feature_importance() > 0).sum())
    for limit in (None, 0, -1):
        assert len(plot_importance(booster, max_num_features=limit).patches) == used
        assert len(plot_shap_summary(booster, X, kind="bar", max_num_features=limit).patches) == X.shape[1]
        assert len(plot_shap_waterfall(booster, X[0], max_num_features=limit).patches) == X.shape[1]
    with pytest.raises(ParameterError, match="max_num_features"):
        plot_importance(booster, max_num_features=2.5)


def test_plot_arguments_of_the_wrong_kind_are_parameter_errors(boosters):
    booster = boosters[1.0]
    X, _ = make_binary(n=20, seed=34)
    with pytest.raises(ParameterError, match="booster must be a smartboost.Booster"):
        plot_importance(None)
    with pytest.raises(ParameterError, match="runs must be"):
        plot_metric([booster])
    with pytest.raises(ParameterError, match=r"runs\['b'\] must be"):
        plot_metric({"a": booster, "b": "model.json"})
    with pytest.raises(ParameterError, match="tree_index"):
        plot_tree(booster, tree_index=1.5)
    with pytest.raises(ParameterError, match="precision"):
        plot_tree(booster, precision=-1)
    with pytest.raises(ParameterError, match="class_index"):
        plot_shap_summary(booster, X, class_index=0.5)
    with pytest.raises(DataError, match="contributions must have shape"):
        plot_shap_summary(np.zeros(20), X)  # was an IndexError
    with pytest.raises(DataError, match="x_row must be one row"):
        plot_shap_waterfall(booster, X[:2])  # was 'data has 2 * n_features features'
