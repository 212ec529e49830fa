"""Plots with matplotlib (the optional ``plot`` extra): metric curves, feature importance, a tree.

Every function draws on ``ax`` (a new figure when None) and returns it, so plots compose and
notebooks show them; nothing is saved or shown here.

- :func:`plot_metric`: a metric against iterations or training seconds, for one run or several
  (the papers' loss-vs-iteration and loss-vs-time figures);
- :func:`plot_importance`: split counts or gains per feature;
- :func:`plot_tree`: one tree, its splits and leaf values;
- :func:`plot_shap_summary`: SHAP values of many rows, per feature (a beeswarm, or mean |SHAP| bars);
- :func:`plot_shap_waterfall`: one row's prediction built up from the expected value, feature by feature.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._data import dense_rows, issparse, to_features
from ._params import _int, _optional
from .booster import Booster
from .errors import DataError, ParameterError

__all__ = ["plot_metric", "plot_importance", "plot_tree", "plot_shap_summary", "plot_shap_waterfall"]


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


def _booster(value: Any, name: str = "booster") -> Booster:
    """``value``, checked to be a :class:`Booster` (anything else fails on a missing method)."""
    if not isinstance(value, Booster):
        raise ParameterError(f"{name} must be a smartboost.Booster (a fitted estimator's is its booster_), "
                             f"got {type(value).__name__}")
    return value


def _feature_limit(max_num_features: Any) -> int | None:
    """``max_num_features`` as a slice bound: None or <= 0 shows every feature, as in LightGBM
    (a negative bound would silently drop the least important ones)."""
    limit = _optional(_int())("max_num_features", max_num_features)
    return None if limit is None or limit <= 0 else limit


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
    if not isinstance(runs, (Booster, Mapping)):
        raise ParameterError(f"runs must be a smartboost.Booster or a mapping of label to Booster, "
                             f"got {type(runs).__name__}")
    runs = {"": runs} if isinstance(runs, Booster) else {label: _booster(booster, f"runs[{label!r}]")
                                                         for label, booster in runs.items()}
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
        Show at most this many features (None or <= 0: all).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    values = _booster(booster).feature_importance(importance_type)
    order = [i for i in np.argsort(-values, kind="stable") if values[i] > 0][:_feature_limit(max_num_features)]
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
    tree_index = _int()("tree_index", tree_index)
    if not 0 <= tree_index < _booster(booster).num_trees():
        raise ParameterError(f"tree_index must be in [0, {booster.num_trees()}), got {tree_index}")
    precision = _int(0)("precision", precision)
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


def _class_block(contributions: np.ndarray, n_features: int, class_index: int | None) -> np.ndarray:
    """Output ``class_index``'s block, shape (n_rows, n_features + 1), of ``pred_contrib``'s layout."""
    class_index = _optional(_int())("class_index", class_index)
    n_outputs, remainder = divmod(contributions.shape[1], n_features + 1) if contributions.ndim == 2 else (0, 0)
    if remainder or n_outputs == 0:
        raise DataError(f"contributions must have shape (n_rows, K * (n_features + 1)) = (n_rows, K * "
                        f"{n_features + 1}) as predict(pred_contrib=True) returns them, got {contributions.shape}")
    if n_outputs == 1 and class_index in (None, 0):
        return contributions
    if class_index is None or not 0 <= class_index < n_outputs:
        raise ParameterError(f"the contributions are of {n_outputs} classes: give class_index in [0, {n_outputs})")
    return contributions[:, class_index * (n_features + 1):(class_index + 1) * (n_features + 1)]


def _explained(explained: Booster | np.ndarray, X: Any,
               class_index: int | None) -> tuple[np.ndarray, np.ndarray, list[str], dict[int, np.ndarray]]:
    """``(contributions of one output with the expected value last, dense X, feature names, the
    texts of X's text columns)``: a text column of the dense X holds indexes into its texts."""
    features = to_features(X, "X")
    matrix, columns = features.matrix, features.names
    values = dense_rows(matrix, 0, matrix.shape[0]).astype(np.float64)
    if isinstance(explained, Booster):
        contributions = explained.predict(X, pred_contrib=True)
        names = explained.feature_name()
    else:
        try:
            contributions = np.asarray(explained, np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"contributions must be a Booster or a numeric matrix: {exc}") from None
        names = columns or [f"Column_{i}" for i in range(values.shape[1])]
    block = _class_block(contributions, values.shape[1], class_index)
    if block.shape[0] != values.shape[0]:
        raise DataError(f"contributions have {block.shape[0]} rows but X has {values.shape[0]}")
    return block, values, names, features.vocabularies


def plot_shap_summary(explained: Booster | np.ndarray, X: Any, kind: str = "beeswarm",
                      max_num_features: int | None = 20, class_index: int | None = None, ax: Any = None) -> Any:
    """SHAP values of many rows, the features by decreasing mean |SHAP value|, top first.

    Parameters
    ----------
    explained : Booster or ndarray
        A model (its ``predict(X, pred_contrib=True)`` is plotted), or such contributions,
        shape (n_rows, K * (n_features + 1)).
    X : array-like, DataFrame or scipy sparse matrix, shape (n_rows, n_features)
        The rows explained (their values color the beeswarm).
    kind : {'beeswarm', 'bar'}
        ``'beeswarm'``: one dot per row and feature at its SHAP value, colored from the
        feature's low values (blue) to its high ones (red), missing ones grey, spread vertically
        where dots crowd; ``'bar'``: the mean |SHAP value| of each feature.
    max_num_features : int, optional
        Show at most this many features (None or <= 0: all).
    class_index : int, optional
        The class whose contributions to show (multiclass models).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    if kind not in ("beeswarm", "bar"):
        raise ParameterError(f"kind must be 'beeswarm' or 'bar', got {kind!r}")
    contributions, values, names, _ = _explained(explained, X, class_index)
    shap_values = contributions[:, :-1]
    importance = np.abs(shap_values).mean(axis=0)
    order = np.argsort(-importance, kind="stable")[:_feature_limit(max_num_features)]
    ax = _axes(ax)
    positions = np.arange(len(order))[::-1]  # the most important feature on top
    if kind == "bar":
        ax.barh(positions, importance[order], tick_label=[names[i] for i in order])
        ax.set_xlabel("mean |SHAP value|")
        return ax
    plt = pyplot()
    jitter = np.random.default_rng(0)
    for position, feature in zip(positions, order):
        x = shap_values[:, feature]
        column = values[:, feature]
        known = ~np.isnan(column)
        low, high = (np.nanpercentile(column, 5), np.nanpercentile(column, 95)) if known.any() else (0.0, 1.0)
        scaled = np.clip((column - low) / (high - low), 0.0, 1.0) if high > low else np.full_like(column, 0.5)
        # spread crowded dots: the vertical offset grows with the number of dots near the same value
        bins = np.digitize(x, np.linspace(x.min(), x.max(), 51)) if x.max() > x.min() else np.zeros(x.size, int)
        crowd = np.bincount(bins)[bins] / max(1, x.size)
        offset = (jitter.random(x.size) - 0.5) * np.minimum(0.8, 8.0 * crowd)
        colors = plt.get_cmap("coolwarm")(np.where(known, scaled, 0.5))
        colors[~known] = (0.6, 0.6, 0.6, 1.0)
        ax.scatter(x, position + offset, c=colors, s=6, linewidths=0)
    ax.set_yticks(positions, [names[i] for i in order])
    ax.axvline(0.0, color="0.5", linewidth=0.8, zorder=0)
    ax.set_xlabel("SHAP value (raw score)")
    mappable = plt.cm.ScalarMappable(cmap="coolwarm")
    colorbar = ax.figure.colorbar(mappable, ax=ax, ticks=[0.0, 1.0])
    colorbar.ax.set_yticklabels(["low", "high"])
    colorbar.set_label("feature value")
    return ax


def plot_shap_waterfall(booster: Booster, x_row: Any, max_num_features: int = 10, class_index: int | None = None,
                        precision: int = 3, ax: Any = None) -> Any:
    """One row's raw score built up from the expected value: a bar per feature from the running
    total, largest |SHAP value| on top (positive red, negative blue), the smaller ones together.

    Parameters
    ----------
    booster : Booster
    x_row : array-like, shape (n_features,) or (1, n_features)
        The row (a DataFrame or Series row too).
    max_num_features : int
        Features shown on their own (<= 0: all); the others form one bar.
    class_index : int, optional
        The class to explain (multiclass models).
    precision : int
        Significant digits of the values written.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    row = x_row.to_frame().T.infer_objects() if hasattr(x_row, "to_frame") else x_row
    if not (hasattr(row, "columns") or issparse(row)):
        row = np.asarray(row)
        row = row.reshape(1, -1) if row.ndim == 1 else row
    if getattr(row, "ndim", 2) == 2 and row.shape[0] != 1:  # not reshaped: several rows would read as one long row
        raise DataError(f"x_row must be one row, shape (n_features,) or (1, n_features), got shape {row.shape}")
    contributions, values, names, texts = _explained(_booster(booster), row, class_index)
    shap_values, expected = contributions[0, :-1], contributions[0, -1]
    order = np.argsort(-np.abs(shap_values), kind="stable")
    limit = _feature_limit(max_num_features)
    precision = _int(0)("precision", precision)
    shown, rest = order[:limit], order[len(order) if limit is None else limit:]
    labels = [f"{names[i]} = {texts[i][int(values[0, i])]}" if i in texts and values[0, i] == values[0, i]
              else f"{names[i]} = {values[0, i]:.{precision}g}" for i in shown]
    steps = list(shap_values[shown])
    if rest.size:
        labels.append(f"{rest.size} other features")
        steps.append(float(shap_values[rest].sum()))
    ax = _axes(ax)
    # each bar starts where the one below it ends, the bottom one at the expected value
    start = expected + np.concatenate([[0.0], np.cumsum(steps[::-1])])[:-1][::-1]
    positions = np.arange(len(steps))[::-1]
    ax.barh(positions, steps, left=start, color=["tab:red" if s > 0 else "tab:blue" for s in steps],
            tick_label=labels)
    for position, left, step in zip(positions, start, steps):
        ax.text(left + step, position, f" {step:+.{precision}g} ", va="center", ha="left" if step > 0 else "right",
                fontsize=7)
    total = expected + float(np.sum(steps))
    ax.axvline(expected, color="0.5", linestyle=":", linewidth=0.8)
    ax.axvline(total, color="0.2", linestyle="--", linewidth=0.8)
    ax.set_xlabel(f"raw score: E[f(x)] = {expected:.{precision}g}, f(x) = {total:.{precision}g}")
    return ax
