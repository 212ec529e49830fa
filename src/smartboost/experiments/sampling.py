"""The sampling papers' experiments, run with smartboost.

- :func:`smart_table`: SMART's Table 2 shape. For each sampler, the first iteration at which the
  test logloss reaches a target (the no-sampling run's best plus a tolerance), the average
  sample rate up to it (ASRI) and the training seconds to reach it.
- :func:`mvs_figure`: the MVS paper's Figure 1 shape. Test error (1 - AUC and logloss) against
  the sample rate for several samplers, mean and spread over seeds.
- :func:`iteration_cost`: seconds per iteration at a sample rate, against no sampling.

Each returns its rows as dicts, and markdown through :func:`markdown_table`; plots need
matplotlib (``pip install 'smartboost[plot]'``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import Dataset, train
from ..metrics import get_metric
from ..plotting import pyplot

__all__ = ["SamplerSpec", "Curve", "run_curve", "smart_table", "mvs_figure", "iteration_cost",
           "markdown_table", "plot_curves", "plot_mvs_figure", "DEFAULT_SAMPLERS"]


@dataclass(frozen=True)
class SamplerSpec:
    """A named sampler configuration (extra parameters on top of the experiment's)."""

    label: str
    params: dict[str, Any] = field(default_factory=dict)


DEFAULT_SAMPLERS = (
    SamplerSpec("none", {"sampling": "none"}),
    SamplerSpec("uniform", {"sampling": "uniform"}),
    SamplerSpec("bernoulli", {"sampling": "bernoulli"}),
    SamplerSpec("trimming", {"sampling": "trimming"}),
    SamplerSpec("goss", {"sampling": "goss"}),
    SamplerSpec("smart1", {"sampling": "smart1"}),
    SamplerSpec("smart2", {"sampling": "smart2"}),
    SamplerSpec("mvs (lambda=1)", {"sampling": "mvs", "mvs_lambda": 1.0}),
    SamplerSpec("mvs-adaptive", {"sampling": "mvs", "mvs_lambda": "adaptive"}),
    SamplerSpec("loss", {"sampling": "loss"}),
)


@dataclass
class Curve:
    """One training run's test metrics and cost, per iteration."""

    label: str
    logloss: np.ndarray
    auc: np.ndarray
    seconds: np.ndarray      # cumulative training seconds (evaluation excluded)
    sample_rate: np.ndarray  # realised |S| / N per iteration


def run_curve(spec: SamplerSpec, params: dict[str, Any], train_set: Dataset, valid_set: Dataset,
              num_boost_round: int) -> Curve:
    """Train one configuration, evaluating test logloss and AUC after every iteration."""
    run_params = {**params, **spec.params, "metric": ["logloss", "auc"], "verbosity": -1}
    if spec.params.get("sampling", "none") == "none":
        run_params.pop("sample_rate", None)
    booster = train(run_params, train_set, num_boost_round, valid_sets=[valid_set], valid_names=["test"])
    stats = booster.iteration_stats
    return Curve(spec.label, np.array(booster.evals_result["test"]["logloss"]),
                 np.array(booster.evals_result["test"]["auc"]), np.cumsum(stats["seconds"]),
                 np.array(stats["sample_size"]) / train_set.num_data())


def smart_table(train_set: Dataset, valid_set: Dataset, params: dict[str, Any], num_boost_round: int,
                samplers: Sequence[SamplerSpec] = DEFAULT_SAMPLERS, tolerance: float = 0.002
                ) -> tuple[list[dict[str, Any]], list[Curve]]:
    """SMART's table: iterations, ASRI and seconds for each sampler to reach a target test logloss.

    The target is the best test logloss of the no-sampling run (the first sampler, which should be
    ``none``) plus ``tolerance``.

    Returns
    -------
    rows : list of dict
        One per sampler: ``sampler``, ``target``, ``iteration`` (1-based, None when never
        reached), ``ASRI``, ``seconds``, ``speed-up`` (against the first sampler),
        ``best logloss``, ``best iteration``.
    curves : list of Curve
    """
    curves = [run_curve(spec, params, train_set, valid_set, num_boost_round) for spec in samplers]
    target = float(curves[0].logloss.min()) + tolerance
    rows = []
    base_seconds = None
    for curve in curves:
        reached = np.flatnonzero(curve.logloss <= target)
        if reached.size:
            k = int(reached[0])
            seconds = float(curve.seconds[k])
            base_seconds = seconds if base_seconds is None else base_seconds
            row = {"iteration": k + 1, "ASRI": float(curve.sample_rate[:k + 1].mean()), "seconds": seconds}
        else:
            row = {"iteration": None, "ASRI": float(curve.sample_rate.mean()), "seconds": None}
        speed_up = base_seconds / row["seconds"] if row["seconds"] and base_seconds else None
        rows.append({"sampler": curve.label, "target": target, **row, "speed-up": speed_up,
                     "best logloss": float(curve.logloss.min()), "best iteration": int(curve.logloss.argmin()) + 1})
    return rows, curves


def mvs_figure(train_set: Dataset, X_test: np.ndarray, y_test: np.ndarray, params: dict[str, Any],
               num_boost_round: int, samplers: Sequence[SamplerSpec], rates: Sequence[float],
               seeds: Sequence[int]) -> list[dict[str, Any]]:
    """Test error against sample rate: mean and standard deviation over seeds.

    Each (sampler, rate, seed) trains ``num_boost_round`` trees; a rate of 1.0 is no sampling.

    Returns
    -------
    list of dict
        ``sampler``, ``rate``, ``1-AUC mean``, ``1-AUC std``, ``logloss mean``, ``logloss std``.
    """
    auc, logloss = get_metric("auc"), get_metric("logloss")
    rows = []
    for spec in samplers:
        for rate in rates:
            errors = []
            for seed in seeds:
                run = {**params, "seed": seed, "verbosity": -1}
                run.update(spec.params if rate < 1.0 else {"sampling": "none"})
                if rate < 1.0:
                    run["sample_rate"] = rate
                booster = train(run, train_set, num_boost_round)
                raw = booster.predict(X_test, raw_score=True)
                errors.append((1.0 - auc(y_test, raw, raw), logloss(y_test, raw, raw)))
            e = np.array(errors)
            rows.append({"sampler": spec.label, "rate": rate, "1-AUC mean": e[:, 0].mean(), "1-AUC std": e[:, 0].std(),
                         "logloss mean": e[:, 1].mean(), "logloss std": e[:, 1].std()})
    return rows


def iteration_cost(train_set: Dataset, params: dict[str, Any], rates: Sequence[float], sampling: str,
                   num_boost_round: int, skip: int = 5) -> list[dict[str, Any]]:
    """Median training seconds per iteration at each sample rate, against no sampling.

    The first ``skip`` iterations (tree shapes still changing) are left out.
    """
    rows = []
    base = None
    for rate in (1.0, *rates):
        run = {**params, "verbosity": -1, **({"sampling": sampling, "sample_rate": rate} if rate < 1.0 else {})}
        booster = train(run, train_set, num_boost_round)
        seconds = float(np.median(booster.iteration_stats["seconds"][skip:]))
        base = seconds if base is None else base
        rows.append({"sampling": sampling if rate < 1.0 else "none", "rate": rate, "ms per iteration": seconds * 1e3,
                     "ratio to none": seconds / base})
    return rows


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        return f"{value:.4g}" if abs(value) < 1e4 else f"{value:.0f}"
    return str(value)


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """Rows of dicts with the same keys as a markdown table."""
    if not rows:
        return ""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_cell(row[k]) for k in keys) + " |" for row in rows]
    return "\n".join(lines)


def plot_curves(curves: Sequence[Curve], path: str, title: str) -> None:
    """Test logloss against iterations and against training seconds, one line per run (PNG)."""
    plt = pyplot(headless=True)
    fig, (by_iteration, by_time) = plt.subplots(1, 2, figsize=(12, 4.5))
    for curve in curves:
        by_iteration.plot(np.arange(1, curve.logloss.size + 1), curve.logloss, label=curve.label)
        by_time.plot(curve.seconds, curve.logloss, label=curve.label)
    low = min(float(c.logloss.min()) for c in curves)
    for ax, xlabel in ((by_iteration, "iteration"), (by_time, "training seconds")):
        ax.set_xlabel(xlabel)
        ax.set_ylabel("test logloss")
        ax.set_ylim(low - 0.005, low + 0.08)
        ax.grid(alpha=0.3)
    by_time.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_mvs_figure(rows: Sequence[dict[str, Any]], path: str, title: str) -> None:
    """1 - AUC and logloss against sample rate, mean with a +-1 std band per sampler (PNG)."""
    plt = pyplot(headless=True)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for label in dict.fromkeys(r["sampler"] for r in rows):
        mine = [r for r in rows if r["sampler"] == label]
        rates = np.array([r["rate"] for r in mine])
        for ax, key in zip(axes, ("1-AUC", "logloss")):
            mean = np.array([r[f"{key} mean"] for r in mine])
            std = np.array([r[f"{key} std"] for r in mine])
            ax.plot(rates, mean, marker="o", label=label)
            ax.fill_between(rates, mean - std, mean + std, alpha=0.15)
    for ax, key in zip(axes, ("1 - AUC", "logloss")):
        ax.set_xscale("log")
        ax.set_xlabel("sample rate")
        ax.set_ylabel(f"test {key}")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
