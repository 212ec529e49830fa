"""Training callbacks.

A callback is a :class:`TrainingCallback` (XGBoost's design): ``before_training``,
``before_iteration``, ``after_iteration`` (return True to stop) and ``after_training``, each
given the :class:`CallbackEnv` of the run. Callbacks reset their state in ``before_training``,
so one instance can serve several runs. LightGBM-style factories (:func:`early_stopping`,
:func:`log_evaluation`, :func:`record_evaluation`, :func:`reset_parameter`) return instances.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._config import logger
from ._params import RESETTABLE_PARAMS, _float, _int, canonical_param_name, explicit_params, is_list_like
from .errors import ParameterError

if TYPE_CHECKING:
    from .booster import Booster

_NO_LIMIT = 2**63 - 1
"""The bound of the callbacks' periods and round counts (the command line saves a checkpoint
only at the end with a period of ``sys.maxsize``)."""

__all__ = ["CallbackEnv", "TrainingCallback", "Checkpoint", "EarlyStopping", "LogEvaluation", "ProgressBar",
           "RecordEvaluation", "ResetParameter", "checkpoint", "early_stopping", "log_evaluation", "progress_bar",
           "record_evaluation", "reset_parameter"]


@dataclass
class EvalResult:
    """One evaluation: ``data_name``'s ``metric`` after an iteration; in :func:`~smartboost.cv`,
    ``value`` is the mean over the folds and ``stdv`` their standard deviation (None elsewhere)."""

    data_name: str
    metric: str
    value: float
    higher_is_better: bool
    is_training: bool = False
    stdv: float | None = None


@dataclass
class CallbackEnv:
    """State of a training run handed to callbacks.

    Attributes
    ----------
    booster : Booster
        The model being trained.
    params : dict
        Resolved parameters. ``before_iteration`` may change those of
        ``smartboost._params.RESETTABLE_PARAMS`` (``learning_rate``, ``lambda_l1``, ``lambda_l2``,
        ``min_gain_to_split``) for the next iterations (:class:`ResetParameter` does); a change of
        any other is a ParameterError naming it.
    iteration : int
        0-based index of the iteration that just finished (``begin_iteration - 1`` before).
    begin_iteration, end_iteration : int
        The run trains iterations ``begin_iteration .. end_iteration - 1``.
    evaluation : list of EvalResult
        The evaluations of the last iteration.
    interrupted : bool
        True in ``after_training`` when the run was stopped by Ctrl-C (KeyboardInterrupt).
    """

    booster: Booster
    params: dict[str, Any]
    iteration: int
    begin_iteration: int
    end_iteration: int
    evaluation: list[EvalResult] = field(default_factory=list)
    interrupted: bool = False


class TrainingCallback:
    """Base class: override any of the three hooks."""

    def before_training(self, env: CallbackEnv) -> None:
        """Called once before the first iteration; reset per-run state here."""

    def before_iteration(self, env: CallbackEnv) -> None:
        """Called before every iteration (``env.iteration + 1`` is the one about to run)."""

    def after_iteration(self, env: CallbackEnv) -> bool:
        """Called after every iteration; return True to stop training."""
        return False

    def after_training(self, env: CallbackEnv) -> None:
        """Called once after the last iteration, also when Ctrl-C interrupted the run."""


def callback_list(callbacks: Any) -> list[TrainingCallback]:
    """The ``callbacks`` argument of :func:`~smartboost.train` and :func:`~smartboost.cv` as a
    list: None is none, a single callback is a list of one.

    Raises
    ------
    ParameterError
        An entry that is not a :class:`TrainingCallback` (a plain function, as LightGBM takes,
        would otherwise fail with an AttributeError once training started).
    """
    if callbacks is None:
        return []
    if isinstance(callbacks, TrainingCallback):
        return [callbacks]
    if not is_list_like(callbacks):
        raise ParameterError(f"callbacks must be a list of TrainingCallback, got {type(callbacks).__name__}")
    out = list(callbacks)
    for i, callback in enumerate(out):
        if not isinstance(callback, TrainingCallback):
            hint = (" (a function is not a callback: subclass smartboost.TrainingCallback and override "
                    "after_iteration)" if callable(callback) else "")
            raise ParameterError(f"callbacks[{i}] must be a smartboost.TrainingCallback, got "
                                 f"{type(callback).__name__}{hint}")
    return out


def _format(evaluation: list[EvalResult]) -> str:
    return "\t".join(f"{e.data_name}'s {e.metric}: {e.value:.6g}" + ("" if e.stdv is None else f" + {e.stdv:.6g}")
                     for e in evaluation)


class LogEvaluation(TrainingCallback):
    """Log the evaluations every ``period`` iterations (and at the last one) at INFO level.

    Parameters
    ----------
    period : int
        Iterations between two log lines.
    """

    def __init__(self, period: int = 1) -> None:
        self.period = _int(1, _NO_LIMIT)("log_evaluation period", period)  # NaN or '3' would never log, or fail later

    def after_iteration(self, env: CallbackEnv) -> bool:
        """Log ``[iteration]\\tvalid_0's metric: value ...``."""
        i = env.iteration + 1
        if env.evaluation and (i % self.period == 0 or i == env.end_iteration):
            logger.info("[%d]\t%s", i, _format(env.evaluation))
        return False


class RecordEvaluation(TrainingCallback):
    """Record every evaluation into ``result[data_name][metric]`` (a list per metric); in
    :func:`~smartboost.cv`, as LightGBM records them there, the means over the folds into
    ``result[data_name][metric + "-mean"]`` and their standard deviations into ``"-stdv"``.

    Parameters
    ----------
    result : dict
        Filled in place; cleared before training.
    """

    def __init__(self, result: dict[str, dict[str, list[float]]]) -> None:
        if not isinstance(result, dict):
            raise ParameterError("record_evaluation needs a dict to fill")
        self.result = result

    def before_training(self, env: CallbackEnv) -> None:
        """Clear the result dict."""
        self.result.clear()

    def after_iteration(self, env: CallbackEnv) -> bool:
        """Append this iteration's values."""
        for e in env.evaluation:
            metrics = self.result.setdefault(e.data_name, {})
            if e.stdv is None:
                metrics.setdefault(e.metric, []).append(e.value)
            else:
                metrics.setdefault(f"{e.metric}-mean", []).append(e.value)
                metrics.setdefault(f"{e.metric}-stdv", []).append(e.stdv)
        return False


class EarlyStopping(TrainingCallback):
    """Stop when a validation metric has not improved for ``stopping_rounds`` iterations.

    Every (validation set, metric) pair is watched, the training set excluded, custom metrics
    (``feval``) included in the direction they return; the first one that stalls stops the run
    (LightGBM's rule). The booster's ``best_iteration`` and
    ``best_score`` are then those of that pair's best iteration; trees after it are kept and
    :meth:`Booster.predict` ignores them by default.

    Parameters
    ----------
    stopping_rounds : int
        Iterations without improvement before stopping.
    first_metric_only : bool
        Watch only the first metric.
    min_delta : float
        Smallest change that counts as an improvement.
    verbose : bool
        Log the best iteration when stopping.
    """

    def __init__(self, stopping_rounds: int, first_metric_only: bool = False, min_delta: float = 0.0,
                 verbose: bool = True) -> None:
        # checked here: a NaN would make every comparison false (never stop, or stop at once)
        self.stopping_rounds = _int(1, _NO_LIMIT)("stopping_rounds", stopping_rounds)
        self.first_metric_only = first_metric_only
        self.min_delta = _float(0.0)("min_delta", min_delta)
        self.verbose = verbose

    def before_training(self, env: CallbackEnv) -> None:
        """Forget any previous run."""
        self._best_value: dict[tuple[str, str], float] = {}
        self._best_iteration: dict[tuple[str, str], int] = {}
        self._best_evaluation: dict[tuple[str, str], list[EvalResult]] = {}

    def after_iteration(self, env: CallbackEnv) -> bool:
        """Update the best values; return True when a watched metric stalled."""
        watched = [e for e in env.evaluation if not e.is_training]
        if self.first_metric_only and watched:
            first = watched[0].metric
            watched = [e for e in watched if e.metric == first]
        if not watched:
            raise ParameterError("early stopping needs a validation set (valid_sets, other than the training set) "
                                 "and a metric to watch")
        for e in watched:
            key = (e.data_name, e.metric)
            best = self._best_value.get(key)
            improved = best is None or (e.value > best + self.min_delta if e.higher_is_better
                                        else e.value < best - self.min_delta)
            if improved:
                self._best_value[key] = e.value
                self._best_iteration[key] = env.iteration
                self._best_evaluation[key] = list(env.evaluation)
            elif env.iteration - self._best_iteration[key] >= self.stopping_rounds:
                self._set_best(env, key)
                if self.verbose:
                    logger.info("Early stopping, best iteration is:\n[%d]\t%s", self._best_iteration[key] + 1,
                                _format(self._best_evaluation[key]))
                return True
        return False

    def after_training(self, env: CallbackEnv) -> None:
        """Without a stop, the best iteration is that of the first watched pair."""
        if self._best_iteration and env.booster.best_iteration == 0:
            self._set_best(env, next(iter(self._best_iteration)))

    def _set_best(self, env: CallbackEnv, key: tuple[str, str]) -> None:
        env.booster.best_iteration = self._best_iteration[key] + 1
        env.booster.best_score = {}
        for e in self._best_evaluation[key]:
            env.booster.best_score.setdefault(e.data_name, {})[e.metric] = e.value


class Checkpoint(TrainingCallback):
    """Save the model every ``period`` iterations, at the end, and when the run is interrupted.

    Each save writes a temporary file and renames it over ``path``, so the file is always a
    complete model. Continue an interrupted run with
    ``train(params, Dataset(X, y, reference=path), remaining, init_model=path)``: iterations
    keep their numbers, so the resumed run draws the same row samples and ends with the same
    model as an uninterrupted one (smart2 excepted: its gradient correction restarts two
    iterations after the resume). With ``sampling_freq = k > 1``, use a period that is a
    multiple of ``k``.

    Parameters
    ----------
    path : str or path-like
        Model file to (over)write.
    period : int
        Iterations between two saves.
    verbose : bool
        Log where the model is when the run is interrupted.

    Attributes
    ----------
    saved_iterations : int or None
        Iterations of the model this run saved last (None before its first save).
    """

    def __init__(self, path: str | os.PathLike, period: int = 10, verbose: bool = True) -> None:
        self.period = _int(1, _NO_LIMIT)("checkpoint period", period)
        self.path = os.fspath(path)
        self.verbose = verbose
        self.saved_iterations: int | None = None

    def before_training(self, env: CallbackEnv) -> None:
        """Nothing saved by this run yet."""
        self.saved_iterations = None

    def _save(self, env: CallbackEnv) -> None:
        env.booster.save_model(self.path)
        self.saved_iterations = env.booster.current_iteration()

    def after_iteration(self, env: CallbackEnv) -> bool:
        """Save every ``period`` iterations."""
        if (env.iteration + 1) % self.period == 0:
            self._save(env)
        return False

    def after_training(self, env: CallbackEnv) -> None:
        """Save the final (or interrupted) model and say where it is."""
        self._save(env)
        if env.interrupted and self.verbose:
            logger.warning("training interrupted: the model of %d iterations is saved in %s; continue with "
                           "train(..., init_model=%r)", env.booster.current_iteration(), self.path, self.path)


class ProgressBar(TrainingCallback):
    """A tqdm progress bar: iterations, elapsed time, ETA and the latest validation metric.

    :func:`smartboost.train` adds one by itself when ``progress_bar`` is on (the default),
    ``verbosity >= 1``, tqdm is installed and stderr is a terminal, so it stays silent in CI,
    in pipes and in log files.

    Parameters
    ----------
    file : file-like, optional
        Where to draw (default: stderr).
    """

    def __init__(self, file: Any = None) -> None:
        from tqdm.auto import tqdm  # the optional extra: pip install 'smartboost[progress]'

        self._tqdm = tqdm
        self.file = file

    def before_training(self, env: CallbackEnv) -> None:
        """Open the bar."""
        self.bar = self._tqdm(total=env.end_iteration - env.begin_iteration, unit="it", desc="smartboost",
                              file=self.file, dynamic_ncols=True)

    def after_iteration(self, env: CallbackEnv) -> bool:
        """Advance, showing the first validation metric."""
        watched = [e for e in env.evaluation if not e.is_training] or env.evaluation
        if watched:
            self.bar.set_postfix_str(f"{watched[0].data_name}'s {watched[0].metric}: {watched[0].value:.6g}",
                                     refresh=False)
        self.bar.update(1)
        return False

    def after_training(self, env: CallbackEnv) -> None:
        """Close the bar."""
        self.bar.close()


class ResetParameter(TrainingCallback):
    """Change parameters before every iteration (LightGBM's ``reset_parameter``), e.g. a
    learning-rate schedule.

    The new values are checked as training parameters are (a bad one is a ParameterError
    naming it) and apply from the iteration they are given for; the model records the last
    ones. A run's ``i``-th iteration (from 0, counted from the run's first: a run continuing
    ``init_model`` starts again at 0, as LightGBM's) takes ``values[i]`` of a list, or
    ``values(i)`` of a callable.

    Parameters
    ----------
    **schedules : list or callable
        Per parameter (any of its names), a list of one value per iteration of the run (as many
        as ``num_boost_round``), or a function of the iteration index. Only the parameters that
        can change between iterations are taken: ``learning_rate``, ``lambda_l1``, ``lambda_l2``
        and ``min_gain_to_split`` (only ``learning_rate`` on Dask).

    Raises
    ------
    ParameterError
        An unknown parameter, one that cannot change during training, or a schedule that is
        neither a list nor callable; at the start of training, a list whose length is not the
        run's number of iterations.
    """

    def __init__(self, **schedules: list | Callable[[int], Any]) -> None:
        for key, values in schedules.items():
            name = canonical_param_name(key)
            if name not in RESETTABLE_PARAMS:
                raise ParameterError(f"reset_parameter: parameter '{key}' cannot change during training; those that "
                                     f"can: {', '.join(RESETTABLE_PARAMS)}")
            if not (callable(values) or is_list_like(values)):
                raise ParameterError(f"reset_parameter: '{key}' must be a list (a value per iteration) or a function "
                                     f"of the iteration, got {type(values).__name__}")
        self.schedules = {key: values if callable(values) else list(values) for key, values in schedules.items()}

    def before_training(self, env: CallbackEnv) -> None:
        """Check that every list has a value per iteration of the run."""
        n_iterations = env.end_iteration - env.begin_iteration
        for key, values in self.schedules.items():
            if isinstance(values, list) and len(values) != n_iterations:
                raise ParameterError(f"reset_parameter: '{key}' has {len(values)} values for the {n_iterations} "
                                     "iterations of the run (num_boost_round)")

    def before_iteration(self, env: CallbackEnv) -> None:
        """Set the values of the iteration about to run in ``env.params``."""
        i = env.iteration + 1 - env.begin_iteration
        given = {key: values[i] if isinstance(values, list) else values(i) for key, values in self.schedules.items()}
        env.params.update(explicit_params(given))


def reset_parameter(**schedules: list | Callable[[int], Any]) -> ResetParameter:
    """LightGBM-style factory of :class:`ResetParameter`."""
    return ResetParameter(**schedules)


def progress_bar(file: Any = None) -> ProgressBar:
    """Factory of :class:`ProgressBar`."""
    return ProgressBar(file)


def checkpoint(path: str | os.PathLike, period: int = 10) -> Checkpoint:
    """Factory of :class:`Checkpoint`."""
    return Checkpoint(path, period)


def early_stopping(stopping_rounds: int, first_metric_only: bool = False, verbose: bool = True,
                   min_delta: float = 0.0) -> EarlyStopping:
    """LightGBM-style factory of :class:`EarlyStopping`."""
    return EarlyStopping(stopping_rounds, first_metric_only=first_metric_only, min_delta=min_delta,
                         verbose=verbose)


def log_evaluation(period: int = 1) -> LogEvaluation:
    """LightGBM-style factory of :class:`LogEvaluation`."""
    return LogEvaluation(period)


def record_evaluation(eval_result: dict[str, dict[str, list[float]]]) -> RecordEvaluation:
    """LightGBM-style factory of :class:`RecordEvaluation`."""
    return RecordEvaluation(eval_result)
