"""The boosting loop: :func:`train`.

Each iteration (ALGORITHMS.md 1): gradients and hessians of every row at the current scores,
one tree grown on them, the tree's leaf values (shrinkage included) added to the training
scores through the leaf segments and to every evaluation set's scores, then evaluation and the
callbacks. A multiclass objective grows one tree per class on the same row sample; raw scores,
gradients and hessians are then held class-major, shape (n_classes, n_rows).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from typing import Any

import numpy as np

from ._common import INDEX_DTYPE
from ._config import set_verbosity, threads
from ._kernels.predict import add_leaf_values, add_tree_to_rows, assign_leaves, pack_bin_decisions
from ._params import explicit_params, resolve_params
from .booster import Booster
from .callback import CallbackEnv, EarlyStopping, EvalResult, ProgressBar, RecordEvaluation, TrainingCallback
from .dataset import Dataset
from .errors import DataError, ParameterError
from .grower import TreeGrower
from .metrics import get_metric
from .objectives import Objective, make_objective
from .sampling import SamplingContext, make_sampler, resolve_sampling_params
from .selection import FeatureSelector, resolve_selection_params
from .steps import leaf_line_search, line_search

__all__ = ["train"]


def train(params: dict[str, Any] | None, train_set: Dataset, num_boost_round: int = 100,
          valid_sets: list[Dataset] | None = None, valid_names: list[str] | None = None,
          callbacks: list[TrainingCallback] | None = None,
          init_model: Booster | str | os.PathLike | None = None) -> Booster:
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict
        Training parameters (see ``docs/parameters.md``); LightGBM, XGBoost and scikit-learn
        names are accepted. Unknown names raise :class:`~smartboost.errors.ParameterError`.
    train_set : Dataset
        Training data with labels.
    num_boost_round : int
        Number of iterations, unless ``params`` sets ``num_iterations`` (or an alias).
    valid_sets : list of Dataset, optional
        Evaluation sets, evaluated after every iteration. Build them with
        ``reference=train_set``. ``train_set`` itself may be listed (as "training").
    valid_names : list of str, optional
        Names of the evaluation sets (default ``valid_<i>``).
    callbacks : list of TrainingCallback, optional
        E.g. ``[smartboost.early_stopping(10), smartboost.log_evaluation(10)]``.
    init_model : Booster or path, optional
        Continue training this model; ``train_set`` must be binned with its edges
        (``Dataset(X, y, reference=init_model)``).

    Returns
    -------
    Booster
    """
    given = explicit_params(params)
    resolved = resolve_params(given)
    if not isinstance(train_set, Dataset):
        raise ParameterError(f"train_set must be a smartboost.Dataset, got {type(train_set).__name__}")
    train_set.check_binning_params(given)
    if "num_iterations" not in given:
        resolved["num_iterations"] = resolve_params({"num_iterations": num_boost_round})["num_iterations"]
    resolve_sampling_params(resolved, given)
    resolve_selection_params(resolved, given)
    set_verbosity(resolved["verbosity"])
    with threads(resolved["num_threads"]) as n_threads:
        trainer = _Trainer(resolved, train_set, valid_sets, valid_names, init_model, n_threads)
        booster = trainer.booster
        callbacks = list(callbacks or [])
        if resolved["early_stopping_round"] > 0:
            callbacks.append(EarlyStopping(resolved["early_stopping_round"], resolved["first_metric_only"],
                                           resolved["early_stopping_min_delta"]))
        callbacks.append(RecordEvaluation(booster.evals_result))
        if _show_progress(resolved) and not any(isinstance(c, ProgressBar) for c in callbacks):
            callbacks.append(ProgressBar())
        begin = booster.current_iteration()
        env = CallbackEnv(booster, resolved, begin - 1, begin, begin + resolved["num_iterations"])
        for callback in callbacks:
            callback.before_training(env)
        try:
            for iteration in range(env.begin_iteration, env.end_iteration):
                trainer.boost_one_iteration()
                env.iteration = iteration
                env.evaluation = trainer.evaluate()
                if any([callback.after_iteration(env) for callback in callbacks]):
                    break
        except KeyboardInterrupt:
            # the model holds every finished iteration; callbacks (a Checkpoint) see it, then Ctrl-C goes on
            env.interrupted = True
            for callback in callbacks:
                callback.after_training(env)
            raise
        for callback in callbacks:
            callback.after_training(env)
    if booster.best_iteration == 0:
        booster.best_iteration = booster.current_iteration()
    return booster


def _show_progress(params: dict[str, Any]) -> bool:
    """A progress bar by default only where someone watches: a terminal, with tqdm installed."""
    return (params["progress_bar"] and params["verbosity"] >= 1 and sys.stderr.isatty()
            and importlib.util.find_spec("tqdm") is not None)


class _EvalSet:
    """An evaluation set and its running raw scores."""

    def __init__(self, name: str, dataset: Dataset, label: np.ndarray, scores: np.ndarray, is_training: bool):
        self.name = name
        self.dataset = dataset
        self.label = label
        self.scores = scores  # (n_outputs, n_rows)
        self.is_training = is_training

    @property
    def raw(self) -> np.ndarray:
        """Raw scores as objectives and metrics take them: a vector for single-output objectives."""
        return _raw(self.scores)


def _raw(scores: np.ndarray) -> np.ndarray:
    return scores[0] if scores.shape[0] == 1 else scores


class _Trainer:
    """State of one training run: scores, gradients, the tree grower, the model being built."""

    def __init__(self, params: dict[str, Any], train_set: Dataset, valid_sets: list[Dataset] | None,
                 valid_names: list[str] | None, init_model: Booster | str | os.PathLike | None,
                 n_threads: int) -> None:
        self.params = params
        self.objective = make_objective(params["objective"], params)
        self.n_outputs = self.objective.num_outputs
        if train_set.label is None:
            raise DataError("train_set has no label")
        self.label = self.objective.check_label(train_set.label, "label")
        self.objective.bind_queries(self.label, train_set.query_starts)
        self.train_set = train_set
        init = _load_init_model(init_model, train_set, self.objective)
        if init is not None:
            base_score, trees = init.base_score, list(init.trees)
        elif params["boost_from_average"] and train_set.init_score is None:
            base_score, trees = self.objective.init_score(self.label, train_set.weight), []
        else:
            base_score, trees = (0.0 if self.n_outputs == 1 else np.zeros(self.n_outputs)), []
        self.booster = Booster._new(objective=self.objective, bin_mapper=train_set.bin_mapper,
                                    base_score=base_score, feature_names=train_set.feature_name,
                                    params=params, trees=trees)
        self.scores = self._start_scores(train_set)
        self.eval_sets = self._eval_sets(valid_sets, valid_names)
        metric_names = params["metric"]
        if metric_names is None:
            metric_names = (self.objective.default_metric,) if self.objective.default_metric else ()
        self.metrics = [get_metric(m, params["label_gain"]) for m in metric_names]
        for metric in self.metrics:
            if metric.multiclass != (self.n_outputs > 1):
                kind = "a multiclass" if metric.multiclass else "a single-output"
                raise ParameterError(f"metric '{metric.name}' is {kind} metric and does not apply to objective "
                                     f"'{self.objective.name}'")
        n = train_set.num_data()
        self.n_rows = n
        self.grad = np.empty((self.n_outputs, n))
        self.hess = np.empty((self.n_outputs, n))
        # what the sampler sees: the gradients, or per-row norms of the per-class gradients
        if self.n_outputs == 1:
            self.row_grad, self.row_hess = self.grad[0], self.hess[0]
        else:
            self.row_grad, self.row_hess = np.empty(n), np.empty(n)
        self.weight = np.ones(n) if train_set.weight is None else train_set.weight
        self.rows = np.empty(n, INDEX_DTYPE)
        self.out_of_sample = np.empty(n, INDEX_DTYPE)
        self.grower = TreeGrower(train_set.binned, params, n_threads)
        self.selector = FeatureSelector(params, train_set.binned.usable_features)
        self._check_boosting_params()
        self.unit_hess = np.ones(n) if params["boosting"] == "gradient" else None
        self.sampler = make_sampler(params, n)
        if self.n_outputs > 1 and not self.sampler.supports_multiclass:
            raise ParameterError(f"sampling='{self.sampler.name}' does not support multiclass objectives")
        self.sample: tuple[np.ndarray, np.ndarray] | None = None   # (rows, rest), kept when sampling_freq > 1
        self.sample_weight = self.weight
        self.previous_leaf = np.zeros(n, np.int32) if self.sampler.needs_previous_leaves else np.zeros(0, np.int32)
        self.previous_leaf_values = self._last_leaf_values()
        self.iteration = self.booster.current_iteration()  # continued training counts on
        self.booster.iteration_stats.update(seconds=[], sample_size=[], sample_rate=[])

    def _check_boosting_params(self) -> None:
        objective, rule = self.objective, self.params["step_rule"]
        if objective.first_order_only and self.params["boosting"] == "newton":
            raise ParameterError(f"objective '{objective.name}' has no usable second derivative; train it with "
                                 "boosting='gradient'")
        if rule == "smooth" and self.params["boosting"] != "gradient":
            raise ParameterError("step_rule='smooth' (1/sigma) is the step of first-order boosting; use it with "
                                 "boosting='gradient' (Newton steps are already scaled by the hessian)")
        if rule == "smooth" and objective.sigma_smooth is None:
            raise ParameterError(f"step_rule='smooth' needs a smooth loss; objective '{objective.name}' has no "
                                 "smoothness constant")
        if rule in ("line", "leaf_line") and (self.n_outputs > 1 or objective.name == "custom"):
            raise ParameterError(f"step_rule='{rule}' needs a single-output built-in objective, not "
                                 f"'{objective.name}'")

    def _last_leaf_values(self) -> np.ndarray | None:
        """Leaf values (Newton steps, without shrinkage) of the last iteration's trees, as the
        training loop records them; None for a new model."""
        if not self.booster.num_trees():
            return None
        last = self.booster.trees[-self.n_outputs:]
        return np.concatenate([tree.value[tree.left < 0] for tree in last]) / self.params["learning_rate"]

    def _start_scores(self, dataset: Dataset) -> np.ndarray:
        scores = self.booster._start_scores(dataset.num_data())
        if dataset.init_score is not None:
            if self.n_outputs > 1:
                raise DataError("init_score is not supported with multiclass objectives yet")
            scores[0] += dataset.init_score
        if self.booster.num_trees():
            for k in range(self.n_outputs):
                self.booster.predict_binned(dataset.binned, scores[k], k, None, self.n_outputs)
        return scores

    def _eval_sets(self, valid_sets: list[Dataset] | None, valid_names: list[str] | None) -> list[_EvalSet]:
        valid_sets = list(valid_sets or [])
        if isinstance(valid_names, str):
            valid_names = [valid_names]
        if valid_names is not None and len(valid_names) != len(valid_sets):
            raise ParameterError(f"valid_names has {len(valid_names)} names for {len(valid_sets)} valid_sets")
        out = []
        for i, dataset in enumerate(valid_sets):
            if not isinstance(dataset, Dataset):
                raise ParameterError(f"valid_sets[{i}] must be a smartboost.Dataset, got {type(dataset).__name__}")
            if dataset is self.train_set:
                name = valid_names[i] if valid_names else "training"
                out.append(_EvalSet(name, dataset, self.label, self.scores, True))
                continue
            name = valid_names[i] if valid_names else f"valid_{i}"
            if dataset.label is None:
                raise DataError(f"valid set '{name}' has no label")
            if not dataset.bin_mapper.same_edges(self.train_set.bin_mapper):
                raise DataError(f"valid set '{name}' is binned differently from the training set; build it "
                                "with Dataset(X, y, reference=train_set)")
            label = self.objective.check_label(dataset.label, f"label of valid set '{name}'", training=False)
            out.append(_EvalSet(name, dataset, label, self._start_scores(dataset), False))
        return out

    def boost_one_iteration(self) -> None:
        """Sample rows, grow one tree per output on them, and update every score."""
        start = time.perf_counter()
        self.objective.grad_hess(self.label, _raw(self.scores), _raw(self.grad), _raw(self.hess))
        n = self._draw_sample()
        rows = self.rows[:n]
        sorted_rows = rows.copy() if self.n_outputs > 1 else rows
        leaf_values = []
        for k in range(self.n_outputs):
            if k:
                rows[:] = sorted_rows  # the grower partitioned them
            hess = self.hess[k] if self.unit_hess is None else self.unit_hess
            grown = self.grower.grow(rows, self.grad[k], hess, self.sample_weight, self.params["learning_rate"],
                                     self.selector, self.iteration)
            self._apply_step_rule(grown, rows, self.scores[k])
            add_leaf_values(self.scores[k], rows, grown.leaf_start, grown.leaf_end, grown.leaf_values)
            if self.previous_leaf.size:
                assign_leaves(rows, grown.leaf_start, grown.leaf_end, self.previous_leaf)
            if n < self.n_rows:
                self._update_out_of_sample(grown, self.n_rows - n, self.scores[k])
            leaf_values.append(grown.leaf_values)
            self.booster.add_tree(grown.tree)
        self.previous_leaf_values = np.concatenate(leaf_values) / self.params["learning_rate"]
        self.iteration += 1
        stats = self.booster.iteration_stats
        stats["seconds"].append(time.perf_counter() - start)
        stats["sample_size"].append(n)
        stats["sample_rate"].append(n / self.n_rows)
        first = self.booster.num_trees() - self.n_outputs
        for eval_set in self.eval_sets:
            if not eval_set.is_training:
                for k in range(self.n_outputs):
                    self.booster.predict_binned(eval_set.dataset.binned, eval_set.scores[k], first + k, first + k + 1)

    def _apply_step_rule(self, grown, rows: np.ndarray, scores: np.ndarray) -> None:
        """Rescale the new tree's values by the step rule (see :mod:`smartboost.steps`)."""
        rule = self.params["step_rule"]
        if rule == "shrinkage":
            return
        value = grown.tree.value
        if rule == "smooth":
            value *= 1.0 / self.objective.sigma_smooth
            return
        learning_rate = self.params["learning_rate"]
        fitted = grown.leaf_values / learning_rate
        if rule == "leaf_line":  # over the tree's own rows, leaf by leaf
            for j, (start, end) in enumerate(zip(grown.leaf_start, grown.leaf_end)):
                leaf_rows = rows[start:end]
                gamma = leaf_line_search(self.objective, self.label[leaf_rows], scores[leaf_rows],
                                         self.sample_weight[leaf_rows], fitted[j])
                value[grown.leaf_nodes[j]] = learning_rate * gamma
            return
        direction = np.zeros(self.n_rows)
        add_leaf_values(direction, rows, grown.leaf_start, grown.leaf_end, fitted)
        if self.params["line_search_rows"] == "sample":
            on, weight = rows, self.sample_weight[rows]
        else:
            on, weight = slice(None), self.weight
            n_out = self.n_rows - rows.shape[0]
            if n_out:
                self._update_out_of_sample(grown, n_out, direction, record_leaves=False)
                direction[self.out_of_sample[:n_out]] /= learning_rate
        value *= line_search(self.objective, self.label[on], scores[on], direction[on], weight)

    def _draw_sample(self) -> int:
        """This iteration's rows (sorted) in ``self.rows[:n]``, their weights in ``self.sample_weight``."""
        if self.n_outputs > 1:
            np.sqrt(np.einsum("ki,ki->i", self.grad, self.grad), out=self.row_grad)
            np.sqrt(np.einsum("ki,ki->i", self.hess, self.hess), out=self.row_hess)
        ctx = SamplingContext(self.iteration, self.row_grad, self.row_hess, self.weight, self.label,
                              _raw(self.scores), self.objective,
                              self.previous_leaf if self.previous_leaf.size else None, self.previous_leaf_values)
        freq = self.params["sampling_freq"]
        if self.sample is None or freq <= 1 or self.iteration % freq == 0:
            n, self.sample_weight = self.sampler.sample(ctx, self.rows, self.out_of_sample)
            if freq > 1:
                self.sample = (self.rows[:n].copy(), self.out_of_sample[:self.n_rows - n].copy())
        else:
            n = self.sample[0].shape[0]
            self.rows[:n] = self.sample[0]
            self.out_of_sample[:self.n_rows - n] = self.sample[1]
        self.sampler.correct_gradients(ctx, self.rows[:n])
        return n

    def _update_out_of_sample(self, grown, n_out: int, scores: np.ndarray, record_leaves: bool = True) -> None:
        """Add the new tree to the ``scores`` of the rows it was not grown on (walking it on their bins)."""
        tree = grown.tree
        leaf_of_node = np.full(tree.n_nodes, -1, np.int32)
        leaf_of_node[grown.leaf_nodes] = np.arange(grown.leaf_nodes.size, dtype=np.int32)
        decisions = pack_bin_decisions(tree.feature, tree.bin_threshold, tree.missing_left,
                                       self.train_set.bin_mapper.n_bins, tree.left)
        add_tree_to_rows(self.train_set.binned.row_major, self.out_of_sample[:n_out], decisions, tree.value,
                         leaf_of_node, scores, self.previous_leaf if record_leaves else self.previous_leaf[:0])

    def evaluate(self) -> list[EvalResult]:
        """Every metric on every evaluation set at the current scores."""
        results = []
        for eval_set in self.eval_sets:
            prediction = self.objective.transform(eval_set.raw)
            for metric in self.metrics:
                value = metric(eval_set.label, self.objective.metric_score(eval_set.raw), prediction,
                               eval_set.dataset.weight, eval_set.dataset.query_starts)
                results.append(EvalResult(eval_set.name, metric.name, value, metric.higher_is_better,
                                          eval_set.is_training))
        return results


def _load_init_model(init_model: Booster | str | os.PathLike | None, train_set: Dataset,
                     objective: Objective) -> Booster | None:
    if init_model is None:
        return None
    booster = init_model if isinstance(init_model, Booster) else Booster(model_file=init_model)
    if booster.objective.name != objective.name or any(
            getattr(booster.objective, key) != getattr(objective, key) for key in objective.options):
        raise ParameterError(f"init_model was trained with objective {booster.objective.to_dict()}, not "
                             f"{objective.to_dict()}")
    if not booster.bin_mapper.same_edges(train_set.bin_mapper):
        raise DataError("train_set is binned differently from init_model; build it with "
                        "Dataset(X, y, reference=init_model)")
    return booster
