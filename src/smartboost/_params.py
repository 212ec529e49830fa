"""The parameter registry: one table of every training parameter, and the training boundary.

Each :class:`Param` holds the canonical name (LightGBM's where LightGBM has one), its aliases
(XGBoost's and scikit-learn's names among them), the default, the constraint and the doc line.
:func:`resolve_params` validates user parameters one by one: unknown names, values of the
wrong type or out of range, and conflicting aliases are rejected there with an error naming the
parameter. :func:`training_params` is the single boundary of training, on one machine or on
Dask: it also checks the parameters together, fills in the derived ones, and returns them as a
typed :class:`TrainingParams`, which the components read by attribute; every check across
parameters lives in this module (:func:`check_objective_params` for those that need the
objective). So no kernel ever sees a bad value. ``docs/reference/parameters.md`` is generated
from the table by :func:`parameters_markdown` (a test keeps it in sync).
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ParameterError, did_you_mean

__all__ = ["Param", "PARAMS", "RESETTABLE_PARAMS", "TrainingParams", "model_params", "param_default", "resolve_params",
           "training_params", "reset_training_params", "check_objective_params", "file_params", "parameters_markdown"]


_AS_DEFAULT = object()
"""``Param.file_default`` when a model file without the parameter means its default."""


@dataclass(frozen=True)
class Param:
    """One training parameter.

    Parameters
    ----------
    name : str
        Canonical name.
    default : object
        Value used when the parameter is not given.
    check : callable
        ``check(name, value) -> value``: validates and normalises a user value, raising
        :class:`~smartboost.errors.ParameterError` with a message naming ``name``.
    doc : str
        One-line description (the generated docs use it).
    aliases : tuple of str
        Other accepted names.
    group : str
        Section of the generated parameter reference.
    constraint : str
        Human-readable constraint, for the docs.
    fallback : str or None
        When this parameter is not given and the ``fallback`` parameter is, it takes that value
        (``huber_delta`` takes ``alpha``, the parameter LightGBM shares between Huber and quantile).
    saved_at_default : bool
        Whether model files record the parameter at its default value. Parameters added after
        models were first saved are recorded only when set otherwise, so that the files of
        models that do not use them stay the same byte for byte (:func:`model_params`).
    file_default : object
        The value of a parameter that a model file does not record (:attr:`unrecorded`): its
        default, unless the default has changed since such files were written; then the value
        those files were trained with, and files record every other value.
    """

    name: str
    default: Any
    check: Callable[[str, Any], Any]
    doc: str
    aliases: tuple[str, ...] = ()
    group: str = "core"
    constraint: str = ""
    fallback: str | None = None
    saved_at_default: bool = True
    file_default: Any = _AS_DEFAULT
    names: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", (self.name, *self.aliases))

    @property
    def unrecorded(self) -> Any:
        """The value a model file means by leaving the parameter out."""
        return self.default if self.file_default is _AS_DEFAULT else self.file_default


# ----------------------------------------------------------------------------------------------
# Value checkers. Each returns the normalised value or raises ParameterError naming the parameter.


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


_INT32_MAX = 2**31 - 1

_MAX_CLASSES = 1 << 16
"""The most classes a multiclass model may have: its scores and gradients take ``num_class``
values per row (and each iteration grows a tree per class), so a larger count is a mistake that
would exhaust memory before it failed."""

_MIN_RATE = 1e-9
"""The smallest row-sampling rate: sampled rows carry weights ``1 / rate``, which must stay far
from overflowing in the fixed-point gradients."""


def is_list_like(value: Any) -> bool:
    """Whether ``value`` is a collection of items: iterable, and not a text (whose characters
    would be taken for the items)."""
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes))


def _int(low: int | None = None, high: int | None = None) -> Callable[[str, Any], int]:
    """An integer in [low, high]; an unset bound is int32's, as every count and size is one."""
    low = -_INT32_MAX - 1 if low is None else low
    high = _INT32_MAX if high is None else high

    def check(name: str, value: Any) -> int:
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not _is_int(value):
            raise ParameterError(f"parameter '{name}' must be an integer, got {value!r}")
        value = int(value)
        if not low <= value <= high:
            raise ParameterError(f"parameter '{name}' must be in {_range_text(low, high)}, got {value}")
        return value

    return check


def _float(low: float | None = None, high: float | None = None, *, low_open: bool = False,
           high_open: bool = False) -> Callable[[str, Any], float]:
    def check(name: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError(f"parameter '{name}' must be a number, got {value!r}")
        value = float(value)
        bad = not math.isfinite(value)
        if low is not None:
            bad |= value <= low if low_open else value < low
        if high is not None:
            bad |= value >= high if high_open else value > high
        if bad:
            text = _range_text(low, high, low_open=low_open, high_open=high_open)
            raise ParameterError(f"parameter '{name}' must be a finite number in {text}, got {value}")
        return value

    return check


def _bool(name: str, value: Any) -> bool:
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if isinstance(value, bool) or (_is_int(value) and value in (0, 1)):
        return bool(value)
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):  # numpy 2's name, 1's
        return bool(value)
    raise ParameterError(f"parameter '{name}' must be true or false, got {value!r}")


def _choice(*options: str, aliases: Mapping[str, str] | None = None) -> Callable[[str, Any], str]:
    table = {o: o for o in options} | dict(aliases or {})

    def check(name: str, value: Any) -> str:
        if isinstance(value, str) and value.lower() in table:
            return table[value.lower()]
        raise ParameterError(f"parameter '{name}' must be one of {sorted(table)}, got {value!r}")

    return check


def _range_text(low: Any, high: Any, *, low_open: bool = False, high_open: bool = False) -> str:
    lo = "(-inf" if low is None else ("(" if low_open else "[") + str(low)
    hi = "inf)" if high is None else str(high) + (")" if high_open else "]")
    return f"{lo}, {hi}"


def _optional(check: Callable[[str, Any], Any]) -> Callable[[str, Any], Any]:
    """Accept None (meaning "derive it") besides what ``check`` accepts."""
    def optional_check(name: str, value: Any) -> Any:
        return None if value is None else check(name, value)

    return optional_check


def _mvs_lambda(name: str, value: Any) -> float | str:
    if isinstance(value, str) and value.lower() == "adaptive":
        return "adaptive"
    return _float(0.0)(name, value)


_SAMPLING_NAMES = ("none", "uniform", "bernoulli", "trimming", "goss", "smart1", "smart2", "mvs", "loss", "auto")
_SAMPLING_ALIASES = {"bagging": "uniform", "sgb": "uniform", "subsample": "uniform", "gradient_based": "mvs",
                     "weight_trimming": "trimming", "smart": "smart2"}


def _num_leaves(name: str, value: Any) -> int:
    value = _int(0, 1 << 17)(name, value)
    if value == 1:
        raise ParameterError(f"parameter '{name}' must be at least 2 (or 0 for no limit), got 1")
    return value


def _objective(name: str, value: Any) -> Any:
    """A registered objective name (canonicalised), or a function ``fn(label, raw) -> (grad, hess)``."""
    from .objectives import canonical_objective_name

    if callable(value):
        return value
    if not isinstance(value, str):
        raise ParameterError(f"parameter '{name}' must be an objective name or a function, got {value!r}")
    return canonical_objective_name(value)


def _label_gain(name: str, value: Any) -> tuple[float, ...]:
    """A gain table: a list of numbers (or LightGBM's comma-separated text), checked by ``metrics.label_gains``."""
    from .metrics import label_gains

    return tuple(float(v) for v in label_gains(value, name))


def _sampling_unit(name: str, value: Any) -> str:
    """'row' or 'query'; true/false too, for LightGBM's ``bagging_by_query``."""
    if isinstance(value, str) and value.lower() not in ("true", "false"):
        return _choice("row", "query", aliases={"rows": "row", "queries": "query"})(name, value)
    return "query" if _bool(name, value) else "row"


def _metric(name: str, value: Any) -> tuple[str, ...] | None:
    """A metric list: None (the objective's default), () (no metric), or canonical names."""
    from .metrics import canonical_metric_name

    if value is None or value == "":
        return None
    if isinstance(value, str):
        items = [v.strip() for v in value.split(",") if v.strip()]
    elif isinstance(value, Iterable):
        items = list(value)
    else:
        raise ParameterError(f"parameter '{name}' must be a metric name or a list of them, got {value!r}")
    if any(isinstance(v, str) and v.lower() in ("none", "null", "na", "custom") for v in items):
        if len(items) > 1:
            raise ParameterError(f"parameter '{name}': 'None' cannot be combined with other metrics")
        return ()
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise ParameterError(f"parameter '{name}' must hold metric names, got {item!r}")
        canonical = canonical_metric_name(item)
        if canonical not in out:
            out.append(canonical)
    return tuple(out)


def _parsed_text(name: str, value: Any) -> Any:
    """A list given as text (XGBoost's ``"(1,0,-1)"``, ``"[[0,1],[2,3]]"``, or LightGBM's
    comma-separated ``"1,0,-1"``) as Python lists; any other value as it is."""
    if not isinstance(value, str):
        return value
    text = value.strip().replace("(", "[").replace(")", "]")
    if not text.startswith("["):
        text = f"[{text}]"
    try:
        return json.loads(text)
    except ValueError:
        raise ParameterError(f"parameter '{name}' could not be read as a list: {value!r}") from None


def _feature_ref(name: str, value: Any) -> int | str:
    """A feature given by index (>= 0) or by name."""
    if isinstance(value, str):
        return value
    if _is_int(value) and value >= 0:
        return int(value)
    raise ParameterError(f"parameter '{name}' must name features by index (>= 0) or by name, got {value!r}")


def _categorical_feature(name: str, value: Any) -> str | tuple[int | str, ...]:
    """'auto', or the categorical features: a list of indices or names (LightGBM's text forms too:
    ``"0,3,5"``, ``"name:carrier,dest"``)."""
    if isinstance(value, str):
        text = value.strip()
        if text.lower() == "auto":
            return "auto"
        if text.startswith("name:"):
            return tuple(n.strip() for n in text[5:].split(",") if n.strip())
        items = [v.strip() for v in text.split(",") if v.strip()]
        return tuple(int(v) if v.isdigit() else v for v in items)
    if _is_int(value):  # one feature (the command line's --categorical_feature 3)
        return (_feature_ref(name, value),)
    if isinstance(value, Iterable) and not isinstance(value, Mapping):
        return tuple(_feature_ref(name, v) for v in value)
    raise ParameterError(f"parameter '{name}' must be 'auto' or a list of feature indices or names, got {value!r}")


def _monotone_constraints(name: str, value: Any) -> tuple[int, ...] | dict[str, int] | None:
    """One of -1/0/+1 per feature (a list, or XGBoost's text ``"(1,0,-1)"``), or a dict from
    feature names (or indices) to directions; None: no constraint."""
    value = _parsed_text(name, value)
    if value is None:
        return None
    items = value.items() if isinstance(value, Mapping) else enumerate(value) \
        if isinstance(value, Iterable) else None
    if items is None:
        raise ParameterError(f"parameter '{name}' must be a list of -1/0/1 per feature or a dict of feature names "
                             f"to -1/0/1, got {value!r}")
    out = {}
    for key, direction in items:
        if isinstance(direction, float) and direction.is_integer():
            direction = int(direction)
        if not _is_int(direction) or direction not in (-1, 0, 1):
            raise ParameterError(f"parameter '{name}': the constraint of feature {key!r} must be -1, 0 or 1, got "
                                 f"{direction!r}")
        out[_feature_ref(name, key) if isinstance(value, Mapping) else key] = int(direction)
    return out if isinstance(value, Mapping) else tuple(out.values())


def _interaction_constraints(name: str, value: Any) -> tuple[tuple[int | str, ...], ...] | None:
    """Groups of features that may interact (lists of indices or names, or XGBoost's text
    ``"[[0,1],[2,3]]"``); None: no constraint."""
    value = _parsed_text(name, value)
    if value is None:
        return None
    if not isinstance(value, Iterable) or isinstance(value, (str, Mapping)) or not all(
            isinstance(group, Iterable) and not isinstance(group, (str, Mapping)) for group in value):
        raise ParameterError(f"parameter '{name}' must be a list of feature groups (lists of indices or names), got "
                             f"{value!r}")
    groups = tuple(tuple(dict.fromkeys(_feature_ref(name, f) for f in group)) for group in value)
    if not groups or any(not group for group in groups):
        raise ParameterError(f"parameter '{name}' must hold non-empty feature groups, got {value!r}")
    return groups


# ----------------------------------------------------------------------------------------------
# The table.

PARAMS: tuple[Param, ...] = (
    # core
    Param("objective", "regression", _objective,
          "Loss to minimise: 'regression' (squared error), 'huber', 'fair', 'regression_l1' (absolute error), "
          "'quantile', 'mape', 'poisson', 'gamma', 'tweedie' (log link), 'binary' (logistic, labels 0/1 or "
          "-1/+1), 'cross_entropy' (logistic, labels in [0, 1]), 'cross_entropy_lambda' (labels in [0, 1], "
          "p = 1 - exp(-w log(1 + e^F)) with w the row weight), 'multiclass' (softmax, labels "
          "0..num_class-1), 'multiclassova' (one binary logistic model per class), the margin losses "
          "'exponential', 'smart_logistic', 'logistic_log2', 'squared_margin', 'regularized_logistic', "
          "'sigmoid_margin', 'hinge', 'gaussian_margin' (docs: "
          "objectives/margin.py), 'lambdarank' and 'rank_pairwise' (queries from the Dataset's group or qid), "
          "or a function fn(label, raw) -> (grad, hess).",
          ("objective_type", "app", "application", "loss"), "core", "a registered objective name"),
    Param("num_class", 1, _int(1, _MAX_CLASSES),
          "Number of classes of a multiclass objective (>= 2 there, 1 otherwise); each iteration grows "
          "one tree per class.",
          ("num_classes",), "core", "[1, 65536]"),
    Param("huber_delta", 1.0, _float(0.0, low_open=True),
          "huber: residual size where the loss turns from squared to linear; when not given, `alpha` if that "
          "is given (LightGBM's name for it).",
          (), "core", "> 0", fallback="alpha"),
    Param("fair_c", 1.0, _float(0.0, low_open=True),
          "fair objective and metric: the residual scale c of the Fair loss c |r| - c^2 log(1 + |r| / c), "
          "squared within about c of the label and linear beyond.",
          (), "core", "> 0", saved_at_default=False),
    Param("alpha", 0.9, _float(0.0, low_open=True),
          "quantile: the quantile level, in (0, 1) (the objective checks it); also the quantile metric's. "
          "huber: the delta when huber_delta is not given (LightGBM shares alpha between both).",
          ("quantile_alpha",), "core", "> 0", saved_at_default=False),
    Param("tweedie_variance_power", 1.5, _float(1.0, 2.0, high_open=True),
          "tweedie objective and metric: the power p of Var(y) = phi mu^p (1: Poisson, towards 2: gamma).",
          (), "core", "[1, 2)", saved_at_default=False),
    Param("poisson_max_delta_step", 0.7, _float(0.0, low_open=True),
          "poisson: the hessian is e^(F + poisson_max_delta_step), which keeps Newton steps of leaves with "
          "small means bounded (LightGBM's safeguard).",
          (), "core", "> 0", saved_at_default=False),
    Param("logistic_mu", 0.0, _float(0.0),
          "regularized_logistic: the penalty mu F^2 / 2 on the score (RGBM's regularised logistic loss).",
          ("mu",), "core", ">= 0"),
    Param("gaussian_c", 1.0, _float(0.0, low_open=True),
          "gaussian_margin: the width c of the loss exp(-c M (M + s)) of the margin M (docs: objectives/margin.py).",
          (), "core", "> 0", saved_at_default=False),
    Param("gaussian_s", 2.0, _float(),
          "gaussian_margin: the shift s of exp(-c M (M + s)); the loss peaks at M = -s/2 and rows of smaller margin "
          "are given up.",
          (), "core", "finite", saved_at_default=False),
    Param("sigmoid", 1.0, _float(0.0, low_open=True),
          "binary, multiclassova: the scale s of the raw score F in the log-odds, p = 1 / (1 + exp(-s F)) "
          "(LightGBM's; the start score is the log-odds / s). lambdarank, rank_pairwise: sigma of the "
          "pairwise logistic rho = 1 / (1 + exp(sigma (s_i - s_j))).",
          ("lambdarank_sigma",), "core", "> 0"),
    Param("lambdarank_truncation_level", 30, _int(1),
          "lambdarank: pairs count when one document ranks in the top this many; also the k of |delta NDCG@k|.",
          ("truncation_level",), "core", ">= 1"),
    Param("scale_pos_weight", 1.0, _float(0.0, low_open=True),
          "binary: multiplies the gradients and hessians of the positive rows (class weights, LightGBM's and "
          "XGBoost's; e.g. negatives / positives for imbalanced classes); multiclassova: of each class's "
          "rows in that class's model. The start score and the metrics do not take it.",
          (), "core", "> 0", saved_at_default=False),
    Param("is_unbalance", False, _bool,
          "binary: weigh the rarer class's gradients and hessians by the ratio of the training row counts "
          "(majority / minority), as LightGBM's is_unbalance (not with scale_pos_weight); multiclassova: "
          "each class's model by its own counts.",
          ("unbalance", "unbalanced_sets"), "core", "bool", saved_at_default=False),
    Param("lambdarank_norm", True, _bool,
          "lambdarank: scale each query's lambdas by log2(1 + S) / S, S their total (LightGBM's normalisation).",
          (), "core", "bool"),
    Param("label_gain", None, _optional(_label_gain),
          "lambdarank objective and ndcg metrics: the gain of relevance grade i is label_gain[i] (a list, or "
          "comma-separated text); default 2^i - 1 for grades 0-31. Labels must index it.",
          (), "core", "non-empty, finite, >= 0, non-decreasing"),
    Param("num_iterations", 100, _int(1),
          "Number of boosting iterations (trees per class). The `num_boost_round` argument of `train` is used "
          "unless this is given.",
          ("num_iteration", "n_iter", "num_tree", "num_trees", "num_round", "num_rounds", "nrounds",
           "num_boost_round", "n_estimators", "max_iter"), "core", ">= 1"),
    Param("learning_rate", 0.1, _float(0.0, low_open=True),
          "Shrinkage applied to every tree's leaf values.",
          ("shrinkage_rate", "eta"), "core", "> 0"),
    Param("num_threads", 0, _int(-1),
          "Threads for training and prediction; 0 or -1 use every core numba sees. Results do not "
          "depend on this value.",
          ("num_thread", "nthread", "nthreads", "n_jobs"), "core", ">= -1"),
    Param("seed", 0, _int(0, 2**63 - 1),
          "Master seed; every random choice (binning subsample, samplers) draws from its own "
          "stream derived from it.",
          ("random_seed", "random_state"), "core", ">= 0"),
    Param("verbosity", 1, _int(),
          "< 0: errors only, 0: warnings, 1: info, >= 2: debug. Everything goes through the "
          "'smartboost' logger.",
          ("verbose",), "core", "integer"),
    # tree
    Param("num_leaves", 31, _num_leaves,
          "Maximum number of leaves per tree; 0 means no limit (then `max_depth` must be set).",
          ("num_leaf", "max_leaves", "max_leaf", "max_leaf_nodes"), "tree", "0 or >= 2"),
    Param("max_depth", -1, _int(),
          "Maximum depth of a tree; <= 0 means no limit. `max_depth=1` grows stumps.",
          (), "tree", "integer"),
    Param("grow_policy", "leafwise",
          _choice("leafwise", "depthwise", aliases={"lossguide": "leafwise", "leaf": "leafwise",
                                                    "depth": "depthwise", "level": "depthwise"}),
          "'leafwise': split the leaf with the largest gain next (LightGBM). 'depthwise': split "
          "level by level (XGBoost's default).",
          ("tree_growth", "growth"), "tree", "leafwise | depthwise"),
    Param("min_data_in_leaf", 20, _int(0),
          "Minimum number of (sampled) rows in a leaf, estimated from hessians as LightGBM does.",
          ("min_data_per_leaf", "min_data", "min_child_samples", "min_samples_leaf"), "tree", ">= 0"),
    Param("feature_pre_filter", True, _bool,
          "Leave out of the split search every feature with fewer than `min_data_in_leaf` training rows "
          "outside its most populated bin: any split of it would leave one side with fewer rows (LightGBM's "
          "feature_pre_filter; here it follows `min_data_in_leaf` without rebuilding the Dataset). False "
          "searches them, where hessian-estimated row counts may still let a few rows make a leaf.",
          (), "tree", "bool"),
    Param("min_sum_hessian_in_leaf", 1e-3, _float(0.0),
          "Minimum sum of (weighted) hessians in a leaf.",
          ("min_sum_hessian_per_leaf", "min_sum_hessian", "min_hessian", "min_child_weight"),
          "tree", ">= 0"),
    Param("lambda_l1", 0.0, _float(0.0),
          "L1 regularisation of leaf values (soft-thresholds G).",
          ("reg_alpha", "l1_regularization"), "tree", ">= 0"),
    Param("lambda_l2", 0.0, _float(0.0),
          "L2 regularisation of leaf values (lambda in -G/(H + lambda)).",
          ("reg_lambda", "lambda", "l2_regularization"), "tree", ">= 0"),
    Param("min_gain_to_split", 0.0, _float(0.0),
          "Minimum gain (gamma) of a split; gain = 1/2 [GL^2/(HL+l) + GR^2/(HR+l) - G^2/(H+l)].",
          ("min_split_gain", "gamma", "min_split_loss"), "tree", ">= 0"),
    # categorical features (docs/howto/categorical.md)
    Param("categorical_feature", "auto", _categorical_feature,
          "Categorical features: 'auto' (a DataFrame's category, string and object columns, and arrow "
          "dictionary columns) or a list of indices or names (also the text '0,3' or 'name:carrier,dest'). "
          "Set where the Dataset is built; training checks that it agrees.",
          ("cat_feature", "categorical_column", "cat_column", "categorical_features"), "categorical",
          "'auto' or features", saved_at_default=False),
    Param("max_cat_to_onehot", 4, _int(1),
          "A categorical split in a node with at most this many categories holding rows is one-vs-rest "
          "(one category left); with more, categories are sorted by their gradient statistics and cut.",
          (), "categorical", ">= 1", saved_at_default=False),
    Param("max_cat_threshold", 4, _int(1),
          "Most categories on the left side of a sorted (many-vs-many) categorical split (LightGBM: 32). Few "
          "keep the split search from picking the categories whose gradients are extreme by chance, which "
          "many-category features (ids, tail numbers) otherwise overfit (docs: howto/categorical.md).",
          (), "categorical", ">= 1", saved_at_default=False, file_default=32),
    Param("cat_smooth", 10.0, _float(0.0),
          "Sorted categorical splits: categories are ordered by sum_g / (sum_h + cat_smooth), and only "
          "categories holding at least cat_smooth (estimated) rows take part.",
          (), "categorical", ">= 0", saved_at_default=False),
    Param("cat_l2", 10.0, _float(0.0),
          "Sorted categorical splits: L2 regularisation added to lambda_l2 in their gain.",
          (), "categorical", ">= 0", saved_at_default=False),
    Param("min_data_per_group", 100, _int(1),
          "Sorted categorical splits: fewest (estimated) rows between two cut points tried, and on the right "
          "side.",
          (), "categorical", ">= 1", saved_at_default=False),
    # constraints (docs/howto/constraints.md)
    Param("monotone_constraints", None, _monotone_constraints,
          "Monotone constraints: one of -1 (decreasing), 0, +1 (increasing) per feature, as a list, the text "
          "'(1,0,-1)', or a dict of feature names to directions. LightGBM's 'basic' method: per-node output "
          "bounds.",
          ("mc", "monotone_constraint", "monotonic_cst"), "constraints", "-1 \\| 0 \\| 1 per feature",
          saved_at_default=False),
    Param("monotone_constraints_method", "intermediate",
          _choice("basic", "intermediate"),
          "How monotone constraints bound the leaves (LightGBM's methods): 'intermediate' bounds each new leaf by "
          "its neighbours' outputs and updates the leaves the new ones touch; 'basic' cuts both children at the "
          "midpoint of their outputs (more constrained). docs/howto/constraints.md.",
          ("monotone_constraining_method", "mc_method"), "constraints", "'basic' \\| 'intermediate'",
          saved_at_default=False),
    Param("interaction_constraints", None, _interaction_constraints,
          "Feature groups that may interact: no root-to-leaf path uses two features that no single group "
          "holds; features in no group are not used (LightGBM's rule). Lists of indices or names, or the "
          "text '[[0,1],[2,3]]'.",
          (), "constraints", "non-empty groups", saved_at_default=False),
    # binning
    Param("max_bin", 255, _int(2, 65535),
          "Maximum number of value bins per feature (a missing-value bin is added). Bins take one byte while every "
          "feature has at most 255 (always with max_bin <= 255), else two. A feature with at most max_bin - 1 distinct non-zero values "
          "gives each a bin of its own (with min_data_in_bin=1 and every row in the binning sample): the split "
          "search is then exact (docs/concepts/boosting.md). A categorical feature has at most 255 bins.",
          ("max_bins",), "binning", "[2, 65535]"),
    Param("bin_construct_sample_cnt", 200_000, _int(1),
          "Rows sampled (with the seed) to compute the bin edges.",
          ("subsample_for_bin",), "binning", ">= 1"),
    Param("min_data_in_bin", 3, _int(1),
          "Fewest sampled rows a bin is closed with; zero always gets a bin of its own (docs/concepts/boosting.md).",
          (), "binning", ">= 1"),
    # sampling
    Param("sampling", None, _optional(_choice(*_SAMPLING_NAMES, aliases=_SAMPLING_ALIASES)),
          "Row sampler: 'none', 'uniform' (exactly s N rows), 'bernoulli', 'trimming', 'goss', 'smart1', "
          "'smart2', 'mvs', 'loss', or 'auto' (MVS at a rate chosen every iteration, every row below 100,000 rows "
          "or 20 features; docs/concepts/sampling.md). Default: 'uniform' when sample_rate < 1; 'auto' when no "
          "sampling parameter is given, the training data have at least 100,000 rows and 20 features and the "
          "objective's leaf values are Newton steps (not quantile, L1 or MAPE refits), else 'none'.",
          ("sampling_method", "data_sample_strategy", "sample_strategy"), "sampling",
          " \\| ".join(_SAMPLING_NAMES)),
    Param("sample_rate", 1.0, _float(_MIN_RATE, 1.0),
          "Target fraction of rows per tree; every sampler reaches it in expectation.",
          ("subsample", "bagging_fraction", "sampling_rate", "sample_fraction"), "sampling", "[1e-9, 1]"),
    Param("sampling_freq", 1, _int(0),
          "Draw a new sample every this many iterations (the others reuse it); 0 turns sampling off "
          "(LightGBM's bagging_freq=0).",
          ("bagging_freq", "subsample_freq"), "sampling", ">= 0"),
    Param("sample_weight_scale", "sample", _choice("sample", "population"),
          "Scale of the sampled rows' weights w/p in the tree: 'sample' multiplies them by the realised sampling "
          "rate |S|/N, so that they average about the rows' own weights and lambda_l1, lambda_l2, "
          "min_sum_hessian_in_leaf and min_gain_to_split count the sampled rows (as LightGBM's bagging); "
          "'population' keeps w/p, whose sums estimate sums over every row (the regularisation then weighs about "
          "sample_rate times less). Trimming keeps the rows' own weights either way (docs/concepts/sampling.md).",
          (), "sampling", "sample \\| population", saved_at_default=False),
    Param("leaf_value_rows", "auto", _choice("auto", "sample", "all"),
          "Rows a sampled tree's leaf values are computed from. 'sample': the Newton values of the sampled rows "
          "(the papers' samplers, LightGBM's bagging and GOSS); 'all': the tree's splits come from the sample and "
          "each leaf's Newton value from every training row in it (placed by the walk that updates their scores), "
          "which removes the sample's noise from the values; 'auto': sampling='auto' takes them from every row "
          "where its sample gives the leaves few rows, the other samplers from the sample "
          "(docs/concepts/sampling.md).",
          (), "sampling", "auto \\| sample \\| all", saved_at_default=False),
    Param("sampling_unit", "row", _sampling_unit,
          "'row': the sampler draws rows. 'query' (ranking objectives): it draws whole queries, each kept with "
          "all its rows and one weight; uniform/bernoulli draw queries at sample_rate, the importance samplers "
          "give a query the sum of its rows' importance and keep sample_rate of the rows in expectation "
          "(docs/concepts/sampling.md).",
          ("bagging_by_query",), "sampling", "row \\| query"),
    Param("smart_rho", None, _optional(_float(0.0, low_open=True)),
          "smart1/smart2/loss: p_i = min(1, rho * importance) with this rho, instead of solving for sample_rate "
          "(SMART's fixed rho: the sample size follows the gradients).",
          (), "sampling", "> 0"),
    Param("smart_eta", 0.5, _float(0.0),
          "smart2: strength of the improved diagonal approximation; 0 switches it off, 1 is the paper's "
          "formula (0.5: the best across the datasets of docs/papers.md).",
          (), "sampling", ">= 0"),
    Param("smart_correction", "scaled", _choice("scaled", "paper"),
          "smart2: form of the correction. 'scaled': g + eta (leaf mean of l'(y~) - l'(y~_i)), eta scaling both "
          "terms; 'paper': g - l'(y~_i) + eta (leaf mean of l'(y~)), SMART's Section 3.2 for every eta "
          "(docs/concepts/sampling.md).",
          (), "sampling", "scaled \\| paper", saved_at_default=False),
    Param("mvs_eta", 0.0, _float(0.0),
          "mvs: strength of smart2's improved diagonal approximation applied to the sampled rows' gradients "
          "('scaled' form of smart_correction); 0 is plain MVS. It pays where the sampled trees' leaves hold few "
          "rows, as with 255 leaves (docs/concepts/sampling.md).",
          (), "sampling", ">= 0", saved_at_default=False),
    Param("mvs_lambda", "adaptive", _mvs_lambda,
          "mvs: lambda in sqrt(g^2 + lambda h^2), or 'adaptive' (squared mean absolute leaf value of the "
          "previous tree).",
          ("mvs_reg",), "sampling", ">= 0 or 'adaptive'"),
    Param("goss_top_rate", None, _optional(_float(_MIN_RATE, 1.0, high_open=True)),
          "goss: fraction of rows kept for their large gradients (default: 2/3 of sample_rate).",
          ("top_rate",), "sampling", "[1e-9, 1)"),
    Param("goss_other_rate", None, _optional(_float(_MIN_RATE, 1.0, high_open=True)),
          "goss: fraction of rows drawn from the rest (LightGBM's other_rate); sample_rate becomes "
          "top + other.",
          ("other_rate",), "sampling", "[1e-9, 1)"),
    Param("trimming_alpha", None, _optional(_float(0.0, 1.0, high_open=True)),
          "trimming: keep the largest-hessian rows until they hold 1 - alpha of the total (instead of "
          "sample_rate).",
          (), "sampling", "[0, 1)"),
    # candidate selection (RGBM, docs/concepts/rgbm.md)
    Param("selection_type", 0, _int(0, 3),
          "Random-then-greedy candidate splits: 0 every split, 1 selection_t random (feature, threshold) pairs, "
          "2 one random feature, 3 selection_t random features, drawn per tree or per node (selection_scope); "
          "the best split is chosen among them.",
          ("rgbm_type",), "selection", "0 | 1 | 2 | 3"),
    Param("selection_t", None, _optional(_int(1)),
          "Type 1: the number of (feature, threshold) pairs drawn; Type 3: the number of features drawn.",
          ("rgbm_t",), "selection", ">= 1"),
    Param("selection_scope", "tree", _choice("tree", "node"),
          "Draw the candidates once per tree (histograms then cover only their features) or at every node.",
          (), "selection", "tree | node"),
    Param("colsample_bytree", 1.0, _float(0.0, 1.0, low_open=True),
          "Fraction of the features drawn per tree (Type 3 with t = fraction x F).",
          ("feature_fraction", "sub_feature"), "selection", "(0, 1]"),
    Param("colsample_bynode", 1.0, _float(0.0, 1.0, low_open=True),
          "Fraction of the features drawn per node (Type 3, per-node scope).",
          ("feature_fraction_bynode",), "selection", "(0, 1]"),
    # boosting: the direction of a step and its size (docs/concepts/boosting.md, "The boosting loop")
    Param("boosting", "newton", _choice("newton", "gradient", aliases={"gbdt": "newton", "gbm": "gradient"}),
          "'newton': trees fit Newton steps, leaf values -G/(H + lambda_l2) (XGBoost, LightGBM). 'gradient': "
          "the classic first-order GBM, trees fit the negative gradients by least squares (every hessian "
          "taken as 1 inside the tree).",
          ("boosting_type", "boost"), "boosting", "newton | gradient"),
    Param("weak_learner", "tree", _choice("tree", "sign"),
          "'tree': leaves output their fitted values. 'sign' (with boosting='gradient'): every leaf outputs -sign(G), "
          "+1 or -1, and splits maximise the tree's correlation with the negative gradients, the sum of its leaves' "
          "|G| (AnyBoost's {-1, +1} base classifiers; with max_depth=1, RGBM's normalised stump); the step rule "
          "sizes the step (docs/concepts/boosting.md).",
          (), "boosting", "tree | sign", saved_at_default=False),
    Param("step_rule", "shrinkage", _choice("shrinkage", "line", "leaf_line", "smooth"),
          "Size of each tree's step, always times learning_rate: 'shrinkage' the tree as fitted; 'line' "
          "the tree scaled by the line-search minimiser of the training loss; 'leaf_line' each leaf's own "
          "minimiser (Friedman's TreeBoost); 'smooth' the tree times 1/sigma, sigma the loss's smoothness "
          "constant (RGBM's rule, with boosting='gradient'; for sign trees, 1/sigma times the tree's correlation "
          "with the negative gradients over the rows, RGBM's step on its normalised stump).",
          (), "boosting", "shrinkage | line | leaf_line | smooth"),
    Param("line_search_rows", "sample", _choice("sample", "all"),
          "Rows the line searches minimise over: the tree's sample (with its weights) or every row.",
          (), "boosting", "sample | all"),
    # learning control
    Param("progress_bar", True, _bool,
          "Show a tqdm progress bar (iteration, elapsed, ETA, latest validation metric) when verbosity >= 1, "
          "stderr is a terminal and tqdm is installed.",
          (), "learning control", "bool"),
    Param("boost_from_average", True, _bool,
          "Start from the loss-minimising constant (mean, log-odds) instead of 0; off when the "
          "training Dataset has an init_score.",
          (), "learning control", "bool"),
    Param("metric", None, _metric,
          "Metrics evaluated on validation sets: a name, a comma-separated list or a list; "
          "'None' disables evaluation. Default: the objective's metric.",
          ("metrics", "metric_types", "eval_metric"), "learning control", "registered metric names"),
    Param("early_stopping_round", 0, _int(0),
          "Stop when the monitored validation metric has not improved for this many rounds; 0 is off.",
          ("early_stopping_rounds", "early_stopping", "n_iter_no_change"), "learning control", ">= 0"),
    Param("early_stopping_min_delta", 0.0, _float(0.0),
          "Minimum improvement that counts for early stopping.",
          ("min_delta",), "learning control", ">= 0"),
    Param("first_metric_only", False, _bool,
          "Early stopping watches only the first metric (else every metric; any may trigger).",
          (), "learning control", "bool"),
)

_BY_NAME: dict[str, Param] = {}
for _p in PARAMS:
    for _n in _p.names:
        assert _n not in _BY_NAME, f"duplicate parameter name {_n}"
        _BY_NAME[_n] = _p

def canonical_param_name(name: str) -> str:
    """Return the canonical name of a parameter or alias, or raise naming close matches."""
    param = _BY_NAME.get(name)
    if param is None:
        raise ParameterError(f"unknown parameter '{name}'{did_you_mean(name, _BY_NAME)}")
    return param.name


def resolve_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate user parameters and return every parameter under its canonical name.

    Parameters
    ----------
    params : mapping or None
        User parameters, under canonical names or aliases.

    Returns
    -------
    dict
        Canonical name -> validated value, defaults filled in.

    Raises
    ------
    ParameterError
        Unknown name, bad value, or two aliases of one parameter given different values.
    """
    given = explicit_params(params)
    out = {p.name: p.default for p in PARAMS}
    out.update(given)
    for p in PARAMS:
        if p.fallback is not None and p.name not in given and p.fallback in given:
            out[p.name] = p.check(p.fallback, given[p.fallback])
    return out


def param_default(name: str) -> Any:
    """The default value of a parameter (canonical name or alias)."""
    return _BY_NAME[canonical_param_name(name)].default


def model_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """Resolved parameters as model files record them: without the parameters that are not
    ``saved_at_default`` and whose value is the one a file means by leaving them out
    (:func:`file_params` fills them in again)."""
    return {name: value for name, value in params.items()
            if name not in _BY_NAME or _BY_NAME[name].saved_at_default or value != _BY_NAME[name].unrecorded}


def file_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a model file records, with the value it means for each one it leaves out
    whose default has changed (``Param.file_default``); the others are left to their defaults."""
    given = {_BY_NAME[name].name for name in params if isinstance(name, str) and name in _BY_NAME}
    return {**{p.name: p.file_default for p in PARAMS if p.file_default is not _AS_DEFAULT and p.name not in given},
            **params}


def explicit_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Validate user parameters and return only those given, under canonical names."""
    if params is None:
        return {}
    if not isinstance(params, Mapping):
        raise ParameterError(f"params must be a dict, got {type(params).__name__}")
    out: dict[str, Any] = {}
    source: dict[str, str] = {}
    for key, value in params.items():
        if not isinstance(key, str):
            raise ParameterError(f"parameter names must be strings, got {key!r}")
        name = canonical_param_name(key)
        value = _BY_NAME[name].check(key, value)
        if name in out and out[name] != value:
            raise ParameterError(
                f"parameter '{name}' given twice with different values: "
                f"'{source[name]}'={out[name]!r} and '{key}'={value!r}")
        out[name] = value
        source[name] = key
    return out


def _cell(text: str) -> str:
    """``text`` for a markdown table cell: a bare ``|`` would end the cell."""
    return re.sub(r"(?<!\\)\|", r"\\|", text)


def _as_dict(self: Any) -> dict[str, Any]:
    """The parameters as a dict of canonical names (what a model file stores)."""
    return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


TrainingParams = dataclasses.make_dataclass("TrainingParams", [(p.name, Any) for p in PARAMS], frozen=True,
                                            slots=True, namespace={"as_dict": _as_dict})
TrainingParams.__module__ = __name__
TrainingParams.__doc__ = """The parameters of one training run: every registry entry under its
canonical name, as an attribute, checked one by one and together (:func:`training_params`);
``dataclasses.asdict`` gives them as a dict (a model file's ``params``)."""


def training_params(params: Mapping[str, Any] | None, num_boost_round: int | None = None) -> TrainingParams:
    """The parameters of a training run, checked one by one and together, with the derived ones
    (the sampler, GOSS's top rate) filled in.

    Parameters
    ----------
    params : mapping or None
        User parameters, under canonical names or aliases.
    num_boost_round : int, optional
        Iterations, unless ``params`` sets ``num_iterations`` (or an alias).

    Returns
    -------
    TrainingParams

    Raises
    ------
    ParameterError
        A bad value, or a combination that makes no sense.
    """
    given = explicit_params(params)
    resolved = resolve_params(given)
    if num_boost_round is not None and "num_iterations" not in given:
        resolved["num_iterations"] = _BY_NAME["num_iterations"].check("num_boost_round", num_boost_round)
    if resolved["num_leaves"] == 0 and resolved["max_depth"] <= 0:
        raise ParameterError("num_leaves=0 (no leaf limit) needs a depth limit: set max_depth > 0")
    _resolve_sampling(resolved, given)
    _check_selection(resolved, given)
    return TrainingParams(**resolved)


_SAMPLER_OWN_PARAMS = {
    "smart_rho": ("smart1", "smart2", "loss"),
    "smart_eta": ("smart2",),
    "smart_correction": ("smart2",),
    "mvs_lambda": ("mvs",),
    "mvs_eta": ("mvs",),
    "goss_top_rate": ("goss",),
    "goss_other_rate": ("goss",),
    "trimming_alpha": ("trimming",),
}

GOSS_DEFAULT_TOP_SHARE = 2.0 / 3.0
"""Without ``goss_top_rate``, GOSS keeps this share of ``sample_rate`` as top rows (LightGBM's
defaults, top 0.2 and other 0.1, have the same 2:1 ratio)."""

GOSS_DEFAULT_TOP_RATE = 0.2
"""LightGBM's ``top_rate`` default, used when only ``goss_other_rate`` is given."""


def _resolve_sampling(params: dict[str, Any], given: dict[str, Any]) -> None:
    """Check the sampling parameters together and fill in the derived ones, in place."""
    from .sampling import SAMPLERS  # the samplers' capabilities; sampling imports this module

    sampling = params["sampling"]
    if params["sampling_freq"] == 0:  # LightGBM's bagging_freq=0: no sampling
        if sampling not in (None, "none"):
            raise ParameterError(f"sampling='{sampling}' with sampling_freq=0 (which turns sampling off); "
                                 "use sampling_freq >= 1")
        sampling = "none"
    if sampling is None:
        sampling = "uniform" if params["sample_rate"] < 1.0 else "none"
    params["sampling"] = sampling
    for name, samplers in _SAMPLER_OWN_PARAMS.items():
        if name in given and sampling not in samplers:
            raise ParameterError(f"parameter '{name}' applies to sampling={' or '.join(samplers)}, not '{sampling}'")
    if sampling == "none":
        if given.get("sample_rate", 1.0) < 1.0 and params["sampling_freq"] != 0:
            raise ParameterError("sample_rate < 1 with sampling='none'; choose a sampler (e.g. sampling='mvs')")
        params["sample_rate"] = 1.0
    if sampling == "auto":
        if "sample_rate" in given:
            raise ParameterError("sampling='auto' chooses the rate of every iteration; drop sample_rate (or choose a "
                                 "sampler, e.g. sampling='mvs')")
        if params["sampling_freq"] != 1:
            raise ParameterError("sampling='auto' draws a new sample at every iteration; drop sampling_freq")
    if params["smart_rho"] is not None and "sample_rate" in given:
        raise ParameterError("give either smart_rho (p = min(1, rho * importance)) or sample_rate, not both")
    if sampling == "trimming" and params["trimming_alpha"] is not None and "sample_rate" in given:
        raise ParameterError("give either trimming_alpha or sample_rate for trimming, not both")
    if sampling == "goss":
        _resolve_goss(params, given)
    if params["sampling_unit"] == "query" and not SAMPLERS[sampling].supports_queries:
        able = ", ".join(name for name, cls in SAMPLERS.items() if cls.supports_queries)
        raise ParameterError(f"sampling_unit='query' draws whole queries with a sampler's rule; sampling="
                             f"'{sampling}' has none (use sample_rate < 1 with one of: {able})")


def with_data_defaults(params: TrainingParams, given: Mapping[str, Any], n_rows: int, n_features: int,
                       objective: Any) -> TrainingParams:
    """``params`` with the defaults that follow the training data: ``sampling='auto'`` where none of
    the sampling parameters was given and ``sampling='auto'`` would sample (at least
    :data:`~smartboost.sampling.auto.AUTO_MIN_ROWS` rows and
    :data:`~smartboost.sampling.auto.AUTO_MIN_FEATURES` features) with leaf values from every row
    (:func:`leaf_value_rows_mode`); below, a model is the one of ``sampling='none'``, byte for byte.

    Parameters
    ----------
    params : TrainingParams
        The run's parameters (:func:`training_params`).
    given : mapping
        The parameters the user gave, under canonical names (:func:`explicit_params`).
    n_rows, n_features : int
        The training data's rows (every machine's) and features.
    objective : Objective
        The run's objective.

    Returns
    -------
    TrainingParams
    """
    from .sampling.auto import AUTO_MIN_FEATURES, AUTO_MIN_ROWS

    # a sampling parameter given as None (the default of those that have one) leaves it to the data
    if (params.sampling != "none" or n_rows < AUTO_MIN_ROWS or n_features < AUTO_MIN_FEATURES
            or any(_BY_NAME[name].group == "sampling" and value is not None for name, value in given.items())):
        return params
    sampled = dataclasses.replace(params, sampling="auto")
    return sampled if leaf_value_rows_mode(sampled, objective) == "sampler" else params


def _resolve_goss(params: dict[str, Any], given: dict[str, Any]) -> None:
    top = params["goss_top_rate"]
    other = params["goss_other_rate"]
    if other is not None:
        top = GOSS_DEFAULT_TOP_RATE if top is None else top
        if "sample_rate" in given and abs(given["sample_rate"] - (top + other)) > 1e-12:
            raise ParameterError(f"sample_rate={given['sample_rate']} differs from goss_top_rate + goss_other_rate "
                                 f"= {top + other}; give two of the three")
        params["sample_rate"] = top + other
    elif top is None:
        top = GOSS_DEFAULT_TOP_SHARE * params["sample_rate"]
    if not top < params["sample_rate"] <= 1.0:
        raise ParameterError(f"goss needs goss_top_rate ({top:g}) < sample_rate ({params['sample_rate']:g}) <= 1: the "
                             "rest of the sample is drawn from the other rows")
    params["goss_top_rate"] = top


def _check_selection(params: dict[str, Any], given: dict[str, Any]) -> None:
    """Check the candidate-selection parameters together."""
    by_tree, by_node = params["colsample_bytree"], params["colsample_bynode"]
    if by_tree < 1.0 and by_node < 1.0:
        raise ParameterError("give colsample_bytree or colsample_bynode, not both")
    if min(by_tree, by_node) < 1.0 and ("selection_type" in given or "selection_t" in given):
        raise ParameterError("colsample_bytree/colsample_bynode set the selection; drop selection_type and "
                             "selection_t, or the colsample parameter")
    if params["selection_type"] == 1 and params["selection_t"] is None:
        raise ParameterError("selection_type=1 needs selection_t (the number of (feature, threshold) pairs per draw)")
    if params["selection_type"] == 3 and params["selection_t"] is None:
        raise ParameterError("selection_type=3 needs selection_t (the number of features per draw)")


def check_objective_params(params: TrainingParams, objective: Any) -> None:
    """Checks of the parameters that need the objective (``boosting``, ``step_rule``, sampling).

    Parameters
    ----------
    params : TrainingParams
    objective : Objective
    """
    from .sampling import SAMPLERS

    rule = params.step_rule
    if params.scale_pos_weight != 1.0 or params.is_unbalance:
        if "scale_pos_weight" not in objective.options:
            raise ParameterError(f"scale_pos_weight and is_unbalance weigh the classes of objective 'multiclassova' "
                                 f"or 'binary', not '{objective.name}'; give the rows weights instead")
        if params.scale_pos_weight != 1.0 and params.is_unbalance:
            raise ParameterError("give either is_unbalance (weights from the class counts) or scale_pos_weight, "
                                 "not both")
    if objective.first_order_only and params.boosting == "newton":
        raise ParameterError(f"objective '{objective.name}' has no usable second derivative; train it with "
                             "boosting='gradient'")
    if params.weak_learner == "sign":
        if params.boosting != "gradient":
            raise ParameterError("weak_learner='sign' fits the negative gradients' signs: use it with "
                                 "boosting='gradient'")
        if rule == "leaf_line":
            raise ParameterError("weak_learner='sign' takes step_rule 'shrinkage', 'line' or 'smooth' (leaf_line "
                                 "would replace every leaf's sign by a value of its own)")
        if params.lambda_l1 > 0.0:
            raise ParameterError("weak_learner='sign' leaves have no soft threshold: lambda_l1 must be 0")
        if objective.renews_leaves:
            raise ParameterError(f"weak_learner='sign' with objective '{objective.name}', which refits every "
                                 "leaf's value: the refit would replace the signs")
    if rule == "smooth" and params.boosting != "gradient":
        raise ParameterError("step_rule='smooth' (1/sigma) is the step of first-order boosting; use it with "
                             "boosting='gradient' (Newton steps are already scaled by the hessian)")
    if rule == "smooth" and objective.sigma_smooth is None:
        raise ParameterError(f"step_rule='smooth' needs a smooth loss; objective '{objective.name}' has no "
                             "smoothness constant")
    if _monotone(params):
        if params.weak_learner == "sign":
            raise ParameterError("weak_learner='sign' leaves output signs, which cannot be clamped to keep "
                                 "monotone_constraints; use weak_learner='tree'")
        if rule == "leaf_line":
            raise ParameterError("step_rule='leaf_line' sets every leaf's value on its own, which breaks "
                                 "monotone_constraints; use 'shrinkage' or 'line' (one factor for the whole tree)")
        if objective.renews_leaves:
            raise ParameterError(f"objective '{objective.name}' refits every leaf to a quantile of its rows, which "
                                 "breaks monotone_constraints; use a smooth objective (e.g. 'huber' instead of "
                                 "'regression_l1')")
    if params.leaf_value_rows == "all" and (reason := _leaf_values_kept(params, objective)):
        raise ParameterError(f"leaf_value_rows='all' recomputes every leaf's Newton value from every row, but "
                             f"{reason}; use leaf_value_rows='sample'")
    if rule in ("line", "leaf_line") and objective.weight_in_loss:
        raise ParameterError(f"step_rule='{rule}' searches the loss of a subset of the rows, but the loss of "
                             f"objective '{objective.name}' reads every training row's weight; use 'shrinkage'")
    if rule in ("line", "leaf_line") and (objective.num_outputs > 1 or objective.name == "custom"):
        raise ParameterError(f"step_rule='{rule}' needs a single-output built-in objective, not "
                             f"'{objective.name}'")
    if objective.num_outputs > 1 and (refusal := SAMPLERS[params.sampling].multiclass_refusal(params)):
        raise ParameterError(refusal)


RESETTABLE_PARAMS = ("learning_rate", "lambda_l1", "lambda_l2", "min_gain_to_split")
"""The parameters that may change between two iterations of a run (``smartboost.reset_parameter``):
the boosting loop and the tree grower read them afresh for every tree. The others shape what a run
builds once (bins, samplers and their state, feature draws, constraints, the objective) or what
the model means."""


def reset_training_params(params: TrainingParams, changes: Mapping[str, Any], objective: Any) -> TrainingParams:
    """``params`` with the values ``changes`` gives parameters of :data:`RESETTABLE_PARAMS` (under
    any of their names), checked as at the start of a run.

    Raises
    ------
    ParameterError
        A name that is unknown or not one of :data:`RESETTABLE_PARAMS`, a bad value, or a value
        the other parameters exclude (:func:`check_objective_params`).
    """
    given = explicit_params(changes)
    fixed = [name for name in given if name not in RESETTABLE_PARAMS]
    if fixed:
        raise ParameterError(f"parameter{'s' if len(fixed) > 1 else ''} {', '.join(map(repr, fixed))} cannot change "
                             f"during training; those that can: {', '.join(RESETTABLE_PARAMS)}")
    new = dataclasses.replace(params, **given)
    check_objective_params(new, objective)
    return new


def _monotone(params: TrainingParams) -> bool:
    """Whether ``monotone_constraints`` constrains any feature."""
    monotone = params.monotone_constraints
    return monotone is not None and any(monotone.values() if isinstance(monotone, Mapping) else monotone)


def _leaf_values_kept(params: TrainingParams, objective: Any) -> str | None:
    """Why a sampled tree's leaf values cannot be recomputed from every row (None: they can)."""
    if _monotone(params) and params.monotone_constraints_method == "intermediate":
        # a leaf's bounds are its neighbours' values from the sample: recomputed neighbours can
        # cross them (the basic method's midpoint bounds nest, so values within them keep the order)
        return ("monotone_constraints_method='intermediate' bounds each leaf by its neighbours' values from the "
                "sample, which those from every row can cross ('basic' keeps the order)")
    if objective.renews_leaves:
        return f"objective '{objective.name}' refits every leaf to a quantile of its rows"
    if params.step_rule == "leaf_line":
        return "step_rule='leaf_line' sets every leaf's value by its own line search"
    if params.weak_learner == "sign":
        return "weak_learner='sign' leaves output signs"
    return None


def leaf_value_rows_mode(params: TrainingParams, objective: Any) -> str:
    """How a sampled tree's leaf values are computed: 'all' (the Newton values of every row in
    each leaf), 'sample' (of its sampled rows), or 'sampler' (``sampling='auto'`` chooses at each
    iteration, :meth:`~smartboost.sampling.base.Sampler.values_from_every_row`), from
    ``leaf_value_rows`` and what the objective and step rule allow."""
    mode = params.leaf_value_rows
    if mode == "auto":
        return "sampler" if params.sampling == "auto" and _leaf_values_kept(params, objective) is None else "sample"
    return mode


def parameters_markdown() -> str:
    """Render the registry as the markdown parameter reference (``docs/reference/parameters.md``).

    Regenerate the file with ``python -m smartboost._params > docs/reference/parameters.md``;
    ``tests/test_params.py`` checks that the committed file equals this output.
    """
    lines = ["# Parameters", "",
             "Generated from `smartboost._params.PARAMS` by "
             "`python -m smartboost._params > docs/reference/parameters.md`; do not edit by hand.", "",
             "Names follow LightGBM; XGBoost and scikit-learn names are accepted as aliases. "
             "Unknown names and out-of-range values raise `ParameterError`.", ""]
    for group in dict.fromkeys(p.group for p in PARAMS):
        lines += [f"## {group.capitalize()}", "", "| name | default | constraint | aliases | description |",
                  "|---|---|---|---|---|"]
        for p in (p for p in PARAMS if p.group == group):
            aliases = ", ".join(f"`{a}`" for a in p.aliases)
            lines.append(f"| `{p.name}` | `{p.default!r}` | {_cell(p.constraint)} | {aliases} | {_cell(p.doc)} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - docs generator
    print(parameters_markdown(), end="")
