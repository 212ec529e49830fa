"""Plots with matplotlib (the optional ``plot`` extra): metric curves, feature importance, a tree.

Every function draws on ``ax`` (a new figure when None) and returns it, so plots compose and
notebooks show them; nothing is saved or shown here.

- :func:`plot_metric`: a metric against iterations or training seconds, for one run or several
  (the papers' loss-vs-iteration and loss-vs-time figures);
- :func:`plot_importance`: split counts or gains per feature;
- :func:`plot_tree`: one tree, its splits and leaf values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .booster import Booster
from .errors import ParameterError

__all__ = ["plot_metric", "plot_importance", "plot_tree"]


def pyplot(headless: bool = False) -> Any:
    """``matplotlib.pyplot`` (with the Agg backend when ``headless``, for scripts writing files)."""
    try:
        import matplotlib
        if headless:
            matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("plots need matplotlib: pip install 'smartboost[plot]'") from None
    return plt


def _axes(ax: Any) -> Any:
    return pyplot().subplots()[1] if ax is None else ax


def plot_metric(runs: Booster | Mapping[str, Booster], metric: str | None = None, dataset: str | None = None,
                x: str = "iteration", ax: Any = None) -> Any:
    """A recorded validation metric against iterations or training seconds.

    Parameters
    ----------
    runs : Booster or mapping of label to Booster
        One trained model, or several to compare (one line each).
    metric : str, optional
        Metric name as recorded (default: the first recorded one).
    dataset : str, optional
        Evaluation set name (default: the first recorded one).
    x : {'iteration', 'seconds'}
        Horizontal axis: iterations, or cumulative training seconds (``iteration_stats``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    if x not in ("iteration", "seconds"):
        raise ParameterError(f"x must be 'iteration' or 'seconds', got {x!r}")
    runs = {"": runs} if isinstance(runs, Booster) else dict(runs)
    ax = _axes(ax)
    for label, booster in runs.items():
        history = booster.evals_result
        if not history:
            raise ParameterError(f"run {label or 0!r} recorded no evaluation; train it with valid_sets")
        name = dataset or next(iter(history))
        if name not in history:
            raise ParameterError(f"no evaluation set {name!r}; recorded: {list(history)}")
        key = metric or next(iter(history[name]))
        if key not in history[name]:
            raise ParameterError(f"no metric {key!r} on {name!r}; recorded: {list(history[name])}")
        values = np.asarray(history[name][key])
        if x == "seconds":
            position = np.cumsum(booster.iteration_stats["seconds"])[-values.size:]
        else:
            position = np.arange(1, values.size + 1)
        ax.plot(position, values, label=label or None)
    ax.set_xlabel("iteration" if x == "iteration" else "training seconds")
    ax.set_ylabel(f"{name}'s {key}")
    if len(runs) > 1:
        ax.legend()
    ax.grid(alpha=0.3)
    return ax


def plot_importance(booster: Booster, importance_type: str = "split", max_num_features: int | None = 20,
                    ax: Any = None) -> Any:
    """Horizontal bars of per-feature importance, largest on top (features never used are left out).

    Parameters
    ----------
    booster : Booster
    importance_type : {'split', 'gain'}
    max_num_features : int, optional
        Show at most this many features.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    values = booster.feature_importance(importance_type)
    order = [i for i in np.argsort(-values, kind="stable") if values[i] > 0][:max_num_features]
    ax = _axes(ax)
    names = booster.feature_name()
    ax.barh(np.arange(len(order))[::-1], values[order], tick_label=[names[i] for i in order])
    ax.set_xlabel("number of splits" if importance_type == "split" else "total gain")
    return ax


def plot_tree(booster: Booster, tree_index: int = 0, precision: int = 3, ax: Any = None,
              max_categories: int = 6) -> Any:
    """One tree: each split as ``feature <= threshold`` (missing values' side marked) or, on a
    categorical feature, ``feature in {categories}`` (the categories going left; missing and
    unseen ones go right), each leaf with its value; leaves spread left to right, depth
    downwards.

    Parameters
    ----------
    booster : Booster
    tree_index : int
        Index in ``booster.trees`` (multiclass: class ``i % num_class`` of iteration ``i // num_class``).
    precision : int
        Significant digits of thresholds and values.
    ax : matplotlib Axes, optional
    max_categories : int
        Categories shown per categorical split (the others are counted).

    Returns
    -------
    matplotlib Axes
    """
    if not 0 <= tree_index < booster.num_trees():
        raise ParameterError(f"tree_index must be in [0, {booster.num_trees()}), got {tree_index}")
    tree = booster.trees[tree_index]
    names = booster.feature_name()
    position: dict[int, tuple[float, int]] = {}
    next_leaf = [0]

    def place(node: int, depth: int) -> float:
        if tree.left[node] < 0:
            position[node] = (float(next_leaf[0]), depth)
            next_leaf[0] += 1
        else:
            x = (place(int(tree.left[node]), depth + 1) + place(int(tree.right[node]), depth + 1)) / 2
            position[node] = (x, depth)
        return position[node][0]

    place(0, 0)
    ax = _axes(ax)
    for node, (x, depth) in position.items():
        if tree.left[node] >= 0:
            for child in (int(tree.left[node]), int(tree.right[node])):
                ax.plot([x, position[child][0]], [-depth, -position[child][1]], color="0.6", zorder=1)
            feature = int(tree.feature[node])
            if tree.categorical_nodes[node]:
                left = booster.bin_mapper.categories_in(feature, tree.left_bins(node))
                shown = ", ".join(map(str, left[:max_categories]))
                more = f" +{left.size - max_categories}" if left.size > max_categories else ""
                text = f"{names[feature]} in {{{shown}{more}}}\nothers right"
            else:
                missing = "missing left" if tree.missing_left[node] else "missing right"
                text = f"{names[feature]} <= {tree.threshold[node]:.{precision}g}\n{missing}"
        else:
            text = f"{tree.value[node]:.{precision}g}"
        ax.text(x, -depth, text, ha="center", va="center", fontsize=7, zorder=2,
                bbox={"boxstyle": "round", "facecolor": "white" if tree.left[node] >= 0 else "0.9"})
    ax.set_axis_off()
    return ax
