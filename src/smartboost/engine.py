"""The boosting loop: :func:`train`.

Each iteration (docs/concepts/boosting.md, "The boosting loop"): gradients and hessians of every row at the current scores,
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

from ._config import set_verbosity, threads
from ._interrupt import deferred_interrupts, interrupt_of, interruptible
from ._kernels.gradients import unit_exponents
from ._params import (RESETTABLE_PARAMS, TrainingParams, check_objective_params, explicit_params, is_list_like,
                      leaf_value_rows_mode, reset_training_params, training_params, with_data_defaults)
from ._rows import TrainingRows
from .binning import BinMapper, missing_right_from_top
from .booster import Booster
from .callback import (CallbackEnv, EarlyStopping, EvalResult, ProgressBar, RecordEvaluation, TrainingCallback,
                       callback_list)
from .dataset import Dataset
from .errors import DataError, ParameterError
from .grower import GrownTree, TreeGrower, check_units
from .metrics import CustomMetric, Feval, Metric, custom_metrics, evaluate_custom, metric_of_params
from .objectives import Objective, make_objective
from .selection import FeatureSelector
from .steps import to_signs
from .tree import Tree

__all__ = ["train"]


@interruptible
def train(params: dict[str, Any] | None, train_set: Dataset, num_boost_round: int = 100,
          valid_sets: list[Dataset] | None = None, valid_names: list[str] | None = None,
          callbacks: list[TrainingCallback] | None = None,
          init_model: Booster | str | os.PathLike | None = None,
          feval: Feval | list[Feval] | None = None) -> Booster:
    """Train a gradient-boosted tree model.

    Parameters
    ----------
    params : dict
        Training parameters (see ``docs/reference/parameters.md``); LightGBM, XGBoost and scikit-learn
        names are accepted. Unknown names raise :class:`~smartboost.errors.ParameterError`.
    train_set : Dataset
        Training data with labels; binned here with the binning parameters of ``params`` when
        it is not binned yet (as LightGBM's ``train`` does).
    num_boost_round : int
        Number of iterations, unless ``params`` sets ``num_iterations`` (or an alias).
    valid_sets : list of Dataset, optional
        Evaluation sets, evaluated after every iteration, binned with ``train_set``'s edges
        (``reference=train_set``, taken for a set not binned yet that has no reference).
        ``train_set`` itself may be listed (as "training").
    valid_names : list of str, optional
        Names of the evaluation sets (default ``valid_<i>``).
    callbacks : list of TrainingCallback, optional
        E.g. ``[smartboost.early_stopping(10), smartboost.log_evaluation(10)]``.
    init_model : Booster or path, optional
        Continue training this model; ``train_set`` must be binned with its edges: a Dataset
        not binned yet without a reference is binned with them here (else
        ``Dataset(X, y, reference=init_model)``).
    feval : callable or list of callable, optional
        Custom metrics, LightGBM's: ``feval(preds, eval_data)`` returns ``(eval_name,
        eval_result, is_higher_better)`` or a list of such tuples, for every evaluation set
        after every iteration. ``preds`` are the set's predictions as :meth:`Booster.predict`
        gives them (probabilities for a binary objective, shape (n_rows, n_classes) for a
        multiclass one, raw scores for a custom objective); ``eval_data`` is the set's
        :class:`Dataset` (``get_label()``, ``get_weight()``, ``get_group()``). Their values are
        recorded, logged and watched by early stopping (in their direction) after the run's
        metrics; with ``metric="None"`` they are the only ones. See docs/howto/custom-metrics.md.

    Returns
    -------
    Booster

    Raises
    ------
    TrainingInterrupted
        On Ctrl-C (SIGINT): training stops after the current iteration, the callbacks'
        ``after_training`` see the model of the finished iterations (a :class:`Checkpoint` saves
        it), then this ``KeyboardInterrupt`` goes on. A second Ctrl-C stops the iteration at once.
    """
    resolved = training_params(params, num_boost_round)
    if not isinstance(train_set, Dataset):
        raise ParameterError(f"train_set must be a smartboost.Dataset, got {type(train_set).__name__}")
    given = explicit_params(params)
    init_model = bin_training_set(train_set, given, init_model)
    resolved = with_data_defaults(resolved, given, train_set.num_data(), train_set.num_feature(),
                                  training_objective(resolved))
    callbacks = callback_list(callbacks)
    custom = custom_metrics(feval)
    set_verbosity(resolved.verbosity)
    with threads(resolved.num_threads) as n_threads:
        trainer = Trainer.local(resolved, train_set, valid_sets, valid_names, init_model, n_threads, custom)
        return run_training(trainer, callbacks)


def run_training(trainer: Trainer, callbacks: list[TrainingCallback] | None) -> Booster:
    """The boosting loop around a prepared trainer: iterations, evaluation, callbacks."""
    params = trainer.params
    booster = trainer.booster
    callbacks = list(callbacks or [])
    if params.early_stopping_round > 0:
        callbacks.append(EarlyStopping(params.early_stopping_round, params.first_metric_only,
                                       params.early_stopping_min_delta))
    callbacks.append(RecordEvaluation(booster.evals_result))
    if _show_progress(params) and not any(isinstance(c, ProgressBar) for c in callbacks):
        callbacks.append(ProgressBar())
    begin = booster.current_iteration()
    env = CallbackEnv(booster, params.as_dict(), begin - 1, begin, begin + params.num_iterations)
    for callback in callbacks:
        callback.before_training(env)
    with deferred_interrupts() as interrupts:
        try:
            for iteration in range(env.begin_iteration, env.end_iteration):
                for callback in callbacks:
                    callback.before_iteration(env)
                _apply_changed_params(trainer, env)
                trainer.boost_one_iteration()
                env.iteration = iteration
                env.evaluation = trainer.evaluate()
                if any([callback.after_iteration(env) for callback in callbacks]):
                    break
                interrupts.check()  # the safe point: a Ctrl-C during the iteration stops here
        except (KeyboardInterrupt, SystemError) as exc:
            interrupt = interrupt_of(exc)
            if interrupt is None:
                raise
            # a second Ctrl-C may have stopped an iteration midway: the model keeps the finished
            # ones, callbacks (a Checkpoint) see it, then the interrupt goes on
            booster._drop_unfinished_iteration()
            env.interrupted = True
            for callback in callbacks:
                callback.after_training(env)
            raise interrupt from None
    for callback in callbacks:
        callback.after_training(env)
    if booster.best_iteration == 0:
        booster.best_iteration = booster.current_iteration()
    return booster


def _apply_changed_params(trainer: Trainer, env: CallbackEnv) -> None:
    """Have the trainer take the parameters that callbacks changed in ``env.params`` (before an
    iteration: :func:`smartboost.reset_parameter`), refused as :meth:`Trainer.reset_params` says."""
    current = trainer.params.as_dict()
    changes = {name: value for name, value in env.params.items()
               if name not in current or value is not current[name] and value != current[name]}
    if changes:
        trainer.reset_params(changes)
        env.params.clear()  # under the canonical names alone: an alias a callback set is not a change again
        env.params.update(trainer.params.as_dict())


def _show_progress(params: TrainingParams) -> bool:
    """A progress bar by default only where someone watches: a terminal, with tqdm installed."""
    return (params.progress_bar and params.verbosity >= 1 and sys.stderr.isatty()
            and importlib.util.find_spec("tqdm") is not None)


class _EvalSet:
    """An evaluation set and its running raw scores."""

    def __init__(self, name: str, dataset: Dataset, label: np.ndarray, scores: np.ndarray, is_training: bool):
        self.name = name
        self.dataset = dataset
        self.label = label
        self.scores = scores  # (n_outputs, n_rows)
        self.is_training = is_training
        self.label_name = "label" if is_training else f"label of valid set '{name}'"  # as errors name them

    @property
    def raw(self) -> np.ndarray:
        """Raw scores as objectives and metrics take them: a vector for single-output objectives."""
        return _raw(self.scores)


def _raw(scores: np.ndarray) -> np.ndarray:
    return scores[0] if scores.shape[0] == 1 else scores


class Trainer:
    """State of one training run: the model being built, the tree grower, the evaluation sets,
    and the training rows (:class:`~smartboost._rows.TrainingRows`, or in
    :mod:`smartboost.dask` a proxy driving every worker's rows through the same calls)."""

    def __init__(self, params: TrainingParams, objective: Objective, booster: Booster, rows: Any,
                 usable: np.ndarray, valid_sets: list[Dataset] | None, valid_names: list[str] | None,
                 train_set: Dataset | None = None, custom: list[CustomMetric] | None = None,
                 from_top: np.ndarray | None = None) -> None:
        self.params = params
        self.objective = objective
        self.n_outputs = objective.num_outputs
        self.booster = booster
        self.rows = rows
        self.train_set = train_set
        self.grower, self.selector = tree_growth(params, booster, usable, from_top)
        self.leaf_value_rows = leaf_value_rows_mode(params, objective)
        self.eval_sets = self._eval_sets(valid_sets, valid_names)
        self.metrics = training_metrics(params, objective)
        self.custom_metrics = list(custom or [])
        self._evaluated: list[tuple[str, str]] | None = None  # the (set, metric) pairs of the first evaluation
        # here, before the first tree and naming the set, and once: labels do not change while training
        for eval_set in self.eval_sets:
            check_evaluation_data(self.metrics, eval_set.label, eval_set.dataset.query_starts, eval_set.label_name,
                                  f"valid set '{eval_set.name}'")
        self.previous_leaf_values = self._last_leaf_values()
        self.iteration = booster.current_iteration()  # continued training counts on
        # per output, a bound of |raw score| over every row: the start scores' largest plus each
        # tree's largest leaf value; training stops before it overflows (see _take_step)
        self._score_bound = np.abs(booster._start_scores(1)[:, 0]) + sum(
            (np.abs(tree.value).max() for tree in booster.trees), 0.0)
        booster.iteration_stats.update(seconds=[], sample_size=[], sample_rate=[], sampler=[], target_rate=[])

    @classmethod
    def local(cls, params: TrainingParams, train_set: Dataset, valid_sets: list[Dataset] | None,
              valid_names: list[str] | None, init_model: Booster | str | os.PathLike | None,
              n_threads: int, custom: list[CustomMetric] | None = None) -> Trainer:
        """The trainer of a run on one machine, over the rows of ``train_set``, with the custom
        metrics ``custom`` (:func:`~smartboost.metrics.custom_metrics`)."""
        objective = training_objective(params)
        if train_set.label is None:
            raise DataError("train_set has no label")
        label = objective.check_label(train_set.label, "label")
        objective.bind(label, train_set.query_starts)
        init = load_init_model(init_model, objective)
        if init is not None and not init.bin_mapper.same_edges(train_set.bin_mapper):
            raise DataError("train_set is binned differently from init_model; build it with "
                            "Dataset(X, y, reference=init_model)")
        booster = start_model(params, objective, label, train_set.weight, init, train_set.init_score is not None,
                              train_set.bin_mapper, train_set.feature_name)
        scores = start_scores(booster, train_set.binned, train_set.init_score)
        row_weight = tree_weight(objective, train_set.weight)
        check_start(objective, label, row_weight, scores)
        rows = TrainingRows(train_set.binned, label, row_weight, scores, objective, params, n_threads)
        binned = train_set.binned
        usable = binned.splittable_features(params.min_data_in_leaf) if params.feature_pre_filter else \
            binned.usable_features
        from_top = missing_right_from_top(binned.mapper, binned.cell_counts, binned.n_rows)
        return cls(params, objective, booster, rows, usable, valid_sets, valid_names, train_set, custom, from_top)

    def _last_leaf_values(self) -> np.ndarray | None:
        """Leaf values (Newton steps, without shrinkage) of the last iteration's trees; None for
        a new model."""
        if not self.booster.num_trees():
            return None
        return self._unshrunk(self.booster.trees[-self.n_outputs:])

    def _unshrunk(self, trees: list[Tree]) -> np.ndarray:
        """The leaf values of ``trees`` over each one's shrinkage (the run's learning rate for a
        tree of a model file that does not record it)."""
        return np.concatenate([tree.value[tree.left < 0] / (tree.shrinkage or self.params.learning_rate)
                               for tree in trees])

    def _eval_sets(self, valid_sets: list[Dataset] | None, valid_names: list[str] | None) -> list[_EvalSet]:
        if isinstance(valid_sets, Dataset):  # one set, as valid_names may be one name
            valid_sets = [valid_sets]
        elif valid_sets is not None and not is_list_like(valid_sets):
            raise ParameterError(f"valid_sets must be a list of smartboost.Dataset, got {type(valid_sets).__name__}")
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
                out.append(_EvalSet(name, dataset, self.rows.label, self.rows.scores, True))
                continue
            name = valid_names[i] if valid_names else f"valid_{i}"
            if dataset.label is None:
                raise DataError(f"valid set '{name}' has no label")
            try:
                dataset.bin_for_evaluation(self.train_set)
            except DataError as e:
                raise DataError(f"valid set '{name}': {e}") from None
            if not dataset.bin_mapper.same_edges(self.booster.bin_mapper):
                raise DataError(f"valid set '{name}' is binned differently from the training set; build it "
                                "with Dataset(X, y, reference=train_set)")
            label = self.objective.check_label(dataset.label, f"label of valid set '{name}'", training=False)
            out.append(_EvalSet(name, dataset, label, start_scores(self.booster, dataset.binned, dataset.init_score),
                                    False))
        return out

    def reset_params(self, changes: dict[str, Any]) -> None:
        """Take new values of parameters of :data:`~smartboost._params.RESETTABLE_PARAMS` for the
        next iterations, recorded in the model's parameters (the last values, as LightGBM saves).

        Raises
        ------
        ParameterError
            As :func:`~smartboost._params.reset_training_params`; or on Dask, where each worker
            holds its own tree grower, a change of anything but ``learning_rate`` (the step the
            scheduler applies).
        """
        params = reset_training_params(self.params, changes, self.objective)
        moved = [name for name in RESETTABLE_PARAMS
                 if name != "learning_rate" and getattr(params, name) != getattr(self.params, name)]
        if moved and not isinstance(self.rows, TrainingRows):
            raise ParameterError(f"{', '.join(moved)} cannot change during training on Dask (each worker grows "
                                 "the trees with the values it started with); only learning_rate can")
        self.params = params
        self.grower.reset_split_params(params)
        self.booster.params.update({name: getattr(params, name) for name in RESETTABLE_PARAMS})

    def boost_one_iteration(self) -> None:
        """Sample rows, grow one tree per output on them, and update every score."""
        start = time.perf_counter()
        sampler = self.rows.sampler
        drawn_by, target_rate = sampler.drawn_by, sampler.target_rate
        checks = sampler.checks(self.iteration)
        n = self.rows.draw_sample(self.iteration, self.previous_leaf_values)
        weight_scale = self._weight_scale(n)
        trees = []
        holdout = []  # sampling='auto' learns from every tree how much of its fit holds out of its sample
        placed = self._values_from_every_row(n)
        for k in range(self.n_outputs):
            grown = self.rows.grow_tree(k, self.grower, self.selector, self.iteration, weight_scale)
            if placed:
                self._leaf_values_from_every_row(grown, k)
            self._take_step(grown, k)
            if placed:
                self.rows.add_placed_tree(k, grown)
            else:
                self.rows.add_tree(k, grown)
            if checks:
                holdout.append(self.rows.holdout_gains(k, grown))
            trees.append(grown.tree)
            self.booster.add_tree(grown.tree)
        if checks:
            sampler.observe(np.array(holdout))
        # the samplers read the last trees' Newton values as a saved model gives them back (its
        # values over their shrinkage), so that a run resumed from a checkpoint draws the
        # samples of the uninterrupted run, under a learning-rate schedule too
        self.previous_leaf_values = self._unshrunk(trees)
        self.iteration += 1
        stats = self.booster.iteration_stats
        stats["seconds"].append(time.perf_counter() - start)
        stats["sample_size"].append(n)
        stats["sample_rate"].append(n / self.rows.n_rows)
        stats["sampler"].append(drawn_by)
        stats["target_rate"].append(target_rate)
        first = self.booster.num_trees() - self.n_outputs
        for eval_set in self.eval_sets:
            if not eval_set.is_training:
                for k in range(self.n_outputs):
                    self.booster.predict_binned(eval_set.dataset.binned, eval_set.scores[k], first + k, first + k + 1)

    def _values_from_every_row(self, n: int) -> bool:
        """Whether this iteration's trees, grown on ``n`` sampled rows, take their leaf values
        from every row (``leaf_value_rows``: always with 'all', as the sampler chooses with
        ``sampling='auto'``)."""
        if n >= self.rows.n_rows:
            return False
        if self.leaf_value_rows == "sampler":
            return self.rows.sampler.values_from_every_row(self.previous_leaf_values)
        return self.leaf_value_rows == "all"

    def _leaf_values_from_every_row(self, grown: GrownTree, k: int) -> None:
        """Give the leaves of output ``k``'s tree, grown on a sample, the Newton values of every
        training row in them (``leaf_value_rows='all'``): the rows are placed in their leaves
        (the walk the score update makes anyway), and each leaf's weighted gradient and hessian
        sums are added up as integers in units of the largest over every row, so they are the
        same on any thread count and over any split of the rows among machines."""
        self.rows.place_tree(grown)
        g_exp, h_exp = unit_exponents(*self.rows.leaf_extents(k))
        check_units(g_exp, h_exp, self.iteration)
        sums = self.rows.leaf_sums(k, grown.leaf_nodes.shape[0], g_exp, h_exp)
        self.grower.set_leaf_values(grown, sums, g_exp, h_exp)

    def _weight_scale(self, n: int) -> float:
        """Factor of the sampled rows' weights in this iteration's trees (``sample_weight_scale``).

        With 'sample', inverse-probability weights ``w / p`` are multiplied by the realised
        sampling rate ``n / N`` (a ratio of row counts: the same on any thread count and over any
        split of the rows between machines), so that they average about the rows' own weights
        and the regularisation counts the sampled rows; 1 without sampling, with 'population',
        and for a sampler that keeps the rows' own weights (trimming)."""
        n_rows = self.rows.n_rows
        if not 0 < n < n_rows or self.params.sample_weight_scale == "population" or not self.rows.sampler.inverse_probability:
            return 1.0
        return n / n_rows

    def _take_step(self, grown, k: int) -> None:
        """Scale the new tree of output ``k`` from its Newton values into the model's step: the
        objective's refit of its leaves when it has one (the quantile losses), the step rule
        (:mod:`smartboost.steps`), times ``learning_rate``; a sign tree's values become signs
        first (:func:`smartboost.steps.to_signs`)."""
        rule = self.params.step_rule
        learning_rate = self.params.learning_rate
        grown.tree.shrinkage = learning_rate
        value = grown.tree.value
        if self.objective.renews_leaves:
            value[grown.leaf_nodes] = self.rows.renewed_leaf_values(k, grown)
        smooth = 1.0 / self.objective.sigma_smooth if rule == "smooth" else 1.0
        if self.params.weak_learner == "sign":
            smooth *= to_signs(grown, self.params.lambda_l2)
        with np.errstate(over="ignore"):  # an overflow stops training below, with its reason
            if rule == "leaf_line":
                steps = self.rows.leaf_line_steps(k, grown)
                value *= learning_rate
                value[grown.leaf_nodes] = learning_rate * steps
            elif rule == "line":
                rho = self.rows.line_step(k, grown)
                if self.grower.monotone is not None:  # a negative step would reverse the monotone trees
                    rho = max(rho, 0.0)
                value *= learning_rate
                value *= rho
            else:
                value *= learning_rate
                if rule == "smooth":
                    value *= smooth
            bound = self._score_bound[k] + np.abs(value).max()
        if not np.isfinite(bound):
            raise DataError(f"training diverged at iteration {self.iteration}: the new tree's values or the raw "
                            f"scores overflow; lower learning_rate ({learning_rate:g}) or check the labels, weights "
                            "and init_score")
        self._score_bound[k] = bound

    def evaluate(self) -> list[EvalResult]:
        """Every metric on every evaluation set at the current scores: each set's metrics of the
        run, then its custom metrics' values (LightGBM's order).

        Raises
        ------
        DataError
            Custom metrics returning other names than at the first evaluation (the records, cv's
            means and early stopping follow each name from iteration to iteration).
        """
        results = [result for eval_set in self.eval_sets
                   for result in evaluate_set(eval_set, self.objective, self.metrics, self.custom_metrics)]
        self._evaluated = check_same_evaluations(self._evaluated, results, f"at iteration {self.iteration}")
        return results


def evaluate_set(eval_set: _EvalSet, objective: Objective, metrics: list[Metric],
                 custom: list[CustomMetric]) -> list[EvalResult]:
    """The ``metrics``, then the ``custom`` metrics' values (LightGBM's order), of one evaluation
    set at its current raw scores; its labels checked already (:func:`check_evaluation_data`)."""
    results = []
    prediction = objective.transform(eval_set.raw) if custom or any(m.uses_prediction for m in metrics) else None
    for metric in metrics:
        value = metric.evaluate(objective, eval_set.label, eval_set.raw, prediction, eval_set.dataset.weight,
                                eval_set.dataset.query_starts, eval_set.label_name, label_checked=True)
        results.append(EvalResult(eval_set.name, metric.name, value, metric.higher_is_better, eval_set.is_training))
    if custom:
        # LightGBM hands a multiclass feval one row per data row, (n_rows, n_classes)
        preds = prediction.T if prediction.ndim == 2 else prediction
        for value in evaluate_custom(custom, preds, eval_set.dataset, metrics):
            results.append(EvalResult(eval_set.name, value.name, value.value, value.higher_is_better,
                                      eval_set.is_training))
    return results


def model_metrics(booster: Booster, names: list[str] | None = None) -> list[Metric]:
    """The metrics ``names`` (None: those the model was trained with, its ``metric`` parameter or
    else its objective's default), shaped by the model's parameters (a quantile model's alpha,
    a ranker's label gains): how a saved model is evaluated (``Booster.eval``, ``smartboost
    evaluate``)."""
    if names is None:
        names = booster.params.get("metric")
        if names is None:
            names = [booster.objective.default_metric] if booster.objective.default_metric else []
    given = {"label_gain": getattr(booster.objective, "label_gain", None), **booster.params}
    return [metric_of_params(name, given) for name in names]


def evaluate_dataset(booster: Booster, data: Dataset, name: str, feval: Any = None) -> list[EvalResult]:
    """``Booster.eval``: the model's metrics (:func:`model_metrics`) and ``feval``'s on ``data``.

    Raises
    ------
    ParameterError
        ``data`` that is not a Dataset, or a bad ``feval`` (:func:`~smartboost.metrics.custom_metrics`).
    DataError
        ``data`` without labels, binned with other edges than the model's, or with labels or
        queries its metrics refuse.
    """
    custom = custom_metrics(feval)
    if not isinstance(data, Dataset):
        raise ParameterError(f"data must be a smartboost.Dataset, got {type(data).__name__}")
    if data.label is None:
        raise DataError(f"data '{name}' has no label")
    try:
        data.bin_for_evaluation(booster)
    except DataError as e:
        raise DataError(f"data '{name}': {e}") from None
    if not data.bin_mapper.same_edges(booster.bin_mapper):
        raise DataError(f"data '{name}' is binned differently from the model's training data; build it with "
                        "Dataset(X, y, reference=booster) (or reference=the training Dataset)")
    label_name = f"label of '{name}'"
    label = booster.objective.check_label(data.label, label_name, training=False)
    metrics = model_metrics(booster)
    check_evaluation_data(metrics, label, data.query_starts, label_name, f"'{name}'")
    eval_set = _EvalSet(name, data, label, start_scores(booster, data.binned, data.init_score), False)
    eval_set.label_name = label_name
    return evaluate_set(eval_set, booster.objective, metrics, custom)


def check_same_evaluations(expected: list[tuple[str, str]] | None, results: list[EvalResult],
                           where: str) -> list[tuple[str, str]]:
    """The ``(data_name, metric)`` pairs of ``results``, which must be ``expected`` (None: any).

    Raises
    ------
    DataError
        Other pairs, which only custom metrics can give (they name their values themselves):
        saying ``where`` they changed and how.
    """
    pairs = [(e.data_name, e.metric) for e in results]
    if expected is not None and pairs != expected:
        changed = [f"{data}'s {name}" for data, name in pairs if (data, name) not in expected]
        gone = [f"{data}'s {name}" for data, name in expected if (data, name) not in pairs]
        raise DataError(f"the custom metrics returned other names or another order {where} than before (new: "
                        f"{changed or 'none'}; missing: {gone or 'none'}); they must return the same names every time")
    return pairs


def training_metrics(params: TrainingParams, objective: Objective) -> list[Metric]:
    """The metrics a run evaluates (``params.metric``, else the objective's default metric).

    Raises
    ------
    ParameterError
        For a multiclass metric of a single-output objective, or the reverse.
    """
    names = params.metric
    if names is None:
        names = (objective.default_metric,) if objective.default_metric else ()
    given = params.as_dict()
    metrics = [metric_of_params(name, given) for name in names]
    for metric in metrics:
        if metric.multiclass != (objective.num_outputs > 1):
            kind = "a multiclass" if metric.multiclass else "a single-output"
            raise ParameterError(f"metric '{metric.name}' is {kind} metric and does not apply to objective "
                                 f"'{objective.name}'")
    return metrics


def check_evaluation_data(metrics: list[Metric], label: np.ndarray, query_starts: np.ndarray | None,
                          label_name: str, set_name: str) -> None:
    """Raise DataError when an evaluation set lacks the queries a ranking metric of ``metrics``
    needs (naming the set, ``set_name``) or has a label outside a metric's domain (naming the
    labels, ``label_name``, and the row)."""
    ranking = next((metric.name for metric in metrics if metric.ranking), None)
    if ranking is not None and query_starts is None:
        raise DataError(f"{set_name} has no queries, which metric '{ranking}' needs: build it with group= or qid=")
    for metric in metrics:
        metric.check_label(label, label_name)


def tree_growth(params: TrainingParams, booster: Booster, usable: np.ndarray,
                from_top: np.ndarray | None) -> tuple[TreeGrower, FeatureSelector]:
    """The tree grower of a run and its split selector (RGBM), for the model ``booster``, the
    features a split may use and those whose scan sending missing values right counts from the
    top (``binning.missing_right_from_top``): built alike by the boosting loop and by every Dask
    worker."""
    grower = TreeGrower(booster.bin_mapper, usable, params, feature_names=booster.feature_names, from_top=from_top)
    return grower, FeatureSelector(params, grower.usable)


def training_objective(params: TrainingParams) -> Objective:
    """The objective of a run, its parameters checked against it."""
    objective = make_objective(params.objective, params.as_dict())
    check_objective_params(params, objective)
    return objective


def bin_training_set(train_set: Dataset, given: dict[str, Any],
                     init_model: Booster | str | os.PathLike | None) -> Booster | None:
    """Bin ``train_set`` for a run with the explicit parameters ``given`` (``Dataset.bin_for_training``)
    continuing ``init_model`` (a path is loaded); returns the model (None: a new one).

    A Dataset not binned yet, without a reference, continuing a model takes the model's edges
    (LightGBM bins such data anew and starts from the model's predictions; here the trees' bin
    thresholds are read on the data's bins)."""
    if init_model is not None and not isinstance(init_model, Booster):
        init_model = Booster(model_file=init_model)
    train_set.bin_for_training(given, init_model)
    return init_model


def load_init_model(init_model: Booster | str | os.PathLike | None, objective: Objective) -> Booster | None:
    """The model a run continues (None: a new one), which must have the run's objective."""
    if init_model is None:
        return None
    booster = init_model if isinstance(init_model, Booster) else Booster(model_file=init_model)
    if booster.objective.name != objective.name or any(
            getattr(booster.objective, key) != getattr(objective, key) for key in objective.options):
        raise ParameterError(f"init_model was trained with objective {booster.objective.to_dict()}, not "
                             f"{objective.to_dict()}")
    return booster


def tree_weight(objective: Objective, weight: np.ndarray | None) -> np.ndarray | None:
    """The row weights the trees and samplers take: the training rows' ``weight``, or None (unit
    weights) for an objective whose loss holds them (``weight_in_loss``), which binds them here."""
    if not objective.weight_in_loss:
        return weight
    objective.bind_weight(weight)
    return None


def start_model(params: TrainingParams, objective: Objective, label: np.ndarray, weight: np.ndarray | None,
                init: Booster | None, has_init_score: bool, bin_mapper: BinMapper, feature_names: list[str]) -> Booster:
    """The model a run starts from: the trees and base score of ``init``, or, with
    ``boost_from_average`` and no initial scores, the constant that minimises the loss of the
    (weighted) labels, else 0.

    ``label`` and ``weight`` may be every row's, or (Dask) the distinct labels with their summed
    weights: the constant is a weighted statistic of the labels either way.
    """
    if init is not None:
        base_score, trees = init.base_score, list(init.trees)
    elif params.boost_from_average and not has_init_score:
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by check_start
            base_score, trees = objective.init_score(label, weight), []
    else:
        base_score, trees = (0.0 if objective.num_outputs == 1 else np.zeros(objective.num_outputs)), []
    return Booster._new(objective=objective, bin_mapper=bin_mapper, base_score=base_score,
                        feature_names=feature_names, params=params.as_dict(), trees=trees)


def check_start(objective: Objective, label: np.ndarray, weight: np.ndarray | None, scores: np.ndarray) -> None:
    """Raise :class:`DataError` when labels, weights or init scores are so large in magnitude
    that the start scores, or the weighted loss at them, overflow: boosting would then run on
    infinities."""
    with np.errstate(all="ignore"):
        if not np.isfinite(scores).all():
            row = int(np.argmax(~np.isfinite(scores).all(axis=0)))
            raise DataError(f"the start score overflows (row {row}): labels, weights or init_score are too large in "
                            "magnitude; rescale them")
        if not objective.has_row_loss:
            return
        loss = objective.loss(label, _raw(scores))
        weighted = loss if weight is None else weight * loss
        if np.isfinite(weighted.sum()):
            return
        row = int(np.argmax(np.where(np.isfinite(weighted), np.abs(weighted), np.inf)))
    described = f"label {label[row]:g}" + ("" if weight is None else f", weight {weight[row]:g}")
    raise DataError(f"the {objective.name} loss overflows at the start scores (row {row}: {described}): labels or "
                    "weights are too large in magnitude; rescale them")


def start_scores(booster: Booster, binned, init_score: np.ndarray | None) -> np.ndarray:
    """Raw scores, shape (n_outputs, n_rows), that boosting starts from on ``binned`` rows: the
    model's base score, plus ``init_score``, plus the trees it already has."""
    n_outputs = booster.num_model_per_iteration()
    scores = booster._start_scores(binned.n_rows)
    if init_score is not None:
        given = 1 if init_score.ndim == 1 else init_score.shape[1]
        if given != n_outputs:
            expected = f"shape ({binned.n_rows}, {n_outputs}): a column per class" if n_outputs > 1 else \
                f"one score per row, shape ({binned.n_rows},)"
            raise DataError(f"init_score has shape {init_score.shape} but objective '{booster.objective.name}' has "
                            f"{n_outputs} output{'s' if n_outputs > 1 else ''} per row; give {expected}")
        scores += init_score.T if init_score.ndim == 2 else init_score
    if booster.num_trees():
        for k in range(n_outputs):
            booster.predict_binned(binned, scores[k], k, None, n_outputs)
    return scores
