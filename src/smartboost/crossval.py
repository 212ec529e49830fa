"""Cross-validation: :func:`cv`, LightGBM's ``cv`` contract.

The folds are subsets of the training :class:`Dataset` (:meth:`Dataset.subset`: its bins, not
binned again), one model per fold, all boosted together by the training loop of
:func:`smartboost.train`: after every iteration each fold's model is evaluated on its held-out
rows (and, with ``eval_train_metric``, its own training rows), and the callbacks see the mean
over the folds. A fold's model is exactly the model ``train`` makes on the fold's subset with
the held-out subset as its validation set.

Folds, unless given (``folds``): whole queries when the objective ranks (the queries, in an
order shuffled with ``seed`` when ``shuffle``, then largest first, each to the fold with the
fewest rows so far, as scikit-learn's ``GroupKFold`` balances them: a query is never split);
otherwise, for a binary or multiclass objective with ``stratified``, each class's rows (shuffled
when ``shuffle``) dealt to the folds in turn, so each fold holds each class in proportion; else
``nfold`` contiguous blocks of the rows (of a permutation when ``shuffle``). The same ``seed``
gives the same folds.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import numpy as np

from ._config import set_verbosity, threads
from ._interrupt import interruptible
from ._params import _int, canonical_param_name, explicit_params, is_list_like, training_params, with_data_defaults
from .booster import Booster
from .callback import Checkpoint, EarlyStopping, EvalResult, TrainingCallback, callback_list
from .dataset import Dataset
from .engine import Trainer, bin_training_set, check_same_evaluations, run_training, training_objective
from .errors import DataError, ParameterError
from .metrics import Feval, custom_metrics

__all__ = ["CVBooster", "cv"]


class CVBooster:
    """The models of a cross-validation, one per fold (``cv(..., return_cvbooster=True)``).

    Attributes
    ----------
    boosters : list of Booster
        Fold ``i``'s model, trained on every row outside fold ``i``.
    best_iteration : int
        The iteration of the best mean validation score under early stopping, else the last.
    best_score : dict
        ``{"valid": {metric: mean}}`` at ``best_iteration`` (under early stopping).
    evals_result : dict
        ``{data_name: {metric + "-mean": [...], metric + "-stdv": [...]}}``, one entry per iteration.
    """

    def __init__(self, boosters: list[Booster]) -> None:
        self.boosters = boosters
        self.best_iteration = 0
        self.best_score: dict[str, dict[str, float]] = {}
        self.evals_result: dict[str, dict[str, list[float]]] = {}

    def current_iteration(self) -> int:
        """Boosting iterations of every fold's model."""
        return self.boosters[0].current_iteration()

    def _drop_unfinished_iteration(self) -> None:
        """Keep the iterations every fold finished (training interrupted midway)."""
        finished = min(b.current_iteration() for b in self.boosters)
        for booster in self.boosters:
            del booster.trees[finished * booster.num_model_per_iteration():]
            booster.__dict__.pop("_packed", None)

    def predict(self, data: Any, **kwargs: Any) -> list[np.ndarray]:
        """Every fold model's :meth:`Booster.predict` of ``data``, in fold order."""
        return [booster.predict(data, **kwargs) for booster in self.boosters]


class _FoldTrainers:
    """The fold models' trainers, driven by :func:`~smartboost.engine.run_training` as one:
    every fold boosts an iteration, then the evaluations are averaged over the folds."""

    def __init__(self, trainers: list[Trainer]) -> None:
        self.trainers = trainers
        self.params = trainers[0].params
        self.booster = CVBooster([t.booster for t in trainers])
        self.results: dict[str, list[float]] = defaultdict(list)

    def reset_params(self, changes: dict[str, Any]) -> None:
        """:meth:`Trainer.reset_params` of every fold's trainer."""
        for trainer in self.trainers:
            trainer.reset_params(changes)
        self.params = self.trainers[0].params

    def boost_one_iteration(self) -> None:
        """One iteration of every fold's model."""
        for trainer in self.trainers:
            trainer.boost_one_iteration()

    def evaluate(self) -> list[EvalResult]:
        """Each (data, metric) pair's mean over the folds; records means and standard deviations."""
        per_fold = [trainer.evaluate() for trainer in self.trainers]
        first_fold = check_same_evaluations(None, per_fold[0], "")
        for k, evaluations in enumerate(per_fold[1:], 1):  # the means pair the folds' values up by position
            check_same_evaluations(first_fold, evaluations, f"in fold {k} of cv")
        out = []
        for j, first in enumerate(per_fold[0]):
            values = np.array([evaluations[j].value for evaluations in per_fold])
            mean, stdv = float(np.mean(values)), float(np.std(values))
            self.results[f"{first.data_name} {first.metric}-mean"].append(mean)
            self.results[f"{first.data_name} {first.metric}-stdv"].append(stdv)
            out.append(EvalResult(first.data_name, first.metric, mean, first.higher_is_better, first.is_training,
                                  stdv))
        return out


@interruptible
def cv(params: dict[str, Any] | None, train_set: Dataset, num_boost_round: int = 100, *, nfold: int = 5,
       stratified: bool = True, shuffle: bool = True, folds: Any = None, metrics: str | list[str] | None = None,
       callbacks: list[TrainingCallback] | None = None, seed: int = 0, return_cvbooster: bool = False,
       eval_train_metric: bool = False, init_model: Booster | str | os.PathLike | None = None,
       feval: Feval | list[Feval] | None = None) -> dict[str, Any]:
    """Cross-validate: train one model per fold and record the mean and standard deviation of
    every metric over the folds after every iteration (LightGBM's ``cv``).

    Parameters
    ----------
    params : dict
        Training parameters, as for :func:`smartboost.train` (``early_stopping_round`` watches
        the mean validation metric).
    train_set : Dataset
        Every row; the folds are its subsets (its bins are kept).
    num_boost_round : int
        Iterations, unless ``params`` sets ``num_iterations``.
    nfold : int
        Number of folds (without ``folds``).
    stratified : bool
        Deal each class's rows over the folds (binary and multiclass objectives; ignored
        otherwise).
    shuffle : bool
        Shuffle the rows (or queries) with ``seed`` before making the folds.
    folds : scikit-learn splitter or iterable of (train_idx, test_idx), optional
        The folds themselves: a splitter's ``split(X, y, groups)`` is called with the labels
        and, with queries, each row's query number as groups (``GroupKFold`` then keeps
        queries whole). Each side is non-empty, inside the rows, and takes every query whole.
    metrics : str or list of str, optional
        Metrics to evaluate, instead of ``params``'s.
    callbacks : list of TrainingCallback, optional
        They see the means over the folds (e.g. :func:`smartboost.early_stopping`).
    seed : int
        Seed of the folds (the models' own randomness follows the ``seed`` parameter).
    return_cvbooster : bool
        Also return the fold models, as ``result["cvbooster"]`` (a :class:`CVBooster`).
    eval_train_metric : bool
        Also evaluate each fold's model on its own training rows (``"train <metric>-mean"``).
    init_model : Booster or path, optional
        Every fold continues this model (``train_set`` binned with its edges; a Dataset not
        binned yet without a reference is binned with them here).
    feval : callable or list of callable, optional
        Custom metrics, as for :func:`smartboost.train`, evaluated on every fold's held-out
        subset (``eval_data``) and averaged over the folds like the built-in metrics
        (``"valid <eval_name>-mean"``).

    Returns
    -------
    dict
        ``{"valid <metric>-mean": [...], "valid <metric>-stdv": [...], ...}``, one entry per
        iteration; under early stopping (a callback or ``early_stopping_round``) cut at the best
        iteration, as LightGBM does.
    """
    params = dict(params or {})
    if metrics is not None:
        params = {key: value for key, value in params.items() if canonical_param_name(key) != "metric"}
        params["metric"] = metrics
    resolved = training_params(params, num_boost_round)
    if not isinstance(train_set, Dataset):
        raise ParameterError(f"train_set must be a smartboost.Dataset, got {type(train_set).__name__}")
    if train_set.label is None:  # before the folds, which stratify by it
        raise DataError("train_set has no label")
    given = explicit_params(params)
    init_model = bin_training_set(train_set, given, init_model)
    if folds is None:
        nfold = _int(2)("nfold", nfold)  # numpy integers too
    seed = _int(0, 2**63 - 1)("seed", seed)  # the folds' generator takes a non-negative integer only
    callbacks = callback_list(callbacks)
    custom = custom_metrics(feval)
    if any(isinstance(c, Checkpoint) for c in callbacks):  # it saves one model; it failed at its first save
        raise ParameterError("a checkpoint callback saves one model, and cv trains one per fold: leave it out, and "
                             "save the fold models of cv(..., return_cvbooster=True)['cvbooster'].boosters")
    set_verbosity(resolved.verbosity)
    objective = training_objective(resolved)
    if folds is None and objective.task != "ranking" and nfold > train_set.num_data():
        raise ParameterError(f"nfold={nfold} is more than the {train_set.num_data()} rows of train_set: a fold would "
                             "be empty")
    fold_rows = list(_folds(train_set, objective, nfold, stratified, shuffle, folds, seed))
    if not fold_rows:
        raise ParameterError("folds gave no fold")
    # every fold trains with the same parameters: the data defaults follow the smallest fold
    resolved = with_data_defaults(resolved, given, min(len(train) for train, _ in fold_rows), train_set.num_feature(),
                                  objective)
    with threads(resolved.num_threads) as n_threads:
        trainers = []
        for k, (train_rows, test_rows) in enumerate(fold_rows):
            try:
                fold_train, fold_valid = train_set.subset(np.sort(train_rows)), train_set.subset(np.sort(test_rows))
                valid_sets = [fold_train, fold_valid] if eval_train_metric else [fold_valid]
                valid_names = ["train", "valid"] if eval_train_metric else ["valid"]
                trainers.append(Trainer.local(resolved, fold_train, valid_sets, valid_names, init_model,
                                              n_threads, custom))
            except DataError as exc:  # a fold's rows (one class, no weight): say which fold
                raise DataError(f"fold {k} of cv ({len(train_rows)} training rows, {len(test_rows)} held out): "
                                f"{exc}") from None
        folded = _FoldTrainers(trainers)
        begin = folded.booster.current_iteration()  # the iterations of init_model, which the lists do not hold
        cvbooster = run_training(folded, callbacks)
    results = dict(folded.results)
    if resolved.early_stopping_round > 0 or any(isinstance(c, EarlyStopping) for c in callbacks):
        results = {key: values[:cvbooster.best_iteration - begin] for key, values in results.items()}
        for booster in cvbooster.boosters:
            booster.best_iteration = cvbooster.best_iteration
    if return_cvbooster:
        results["cvbooster"] = cvbooster
    return results


def _folds(train_set: Dataset, objective: Any, nfold: int, stratified: bool, shuffle: bool, folds: Any,
           seed: int) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """``(train rows, test rows)`` of every fold (see the module docstring)."""
    n = train_set.num_data()
    starts = train_set.query_starts
    query_of_row = None if starts is None else np.repeat(np.arange(starts.size - 1), np.diff(starts))
    if folds is not None:
        if hasattr(folds, "split"):
            try:
                pairs = list(folds.split(np.zeros((n, 1)), train_set.label, query_of_row))
            except (TypeError, ValueError) as exc:  # e.g. GroupKFold without groups
                hint = ("; train_set has no queries to give it as groups: pass folds=list(splitter.split(X, y, "
                        "groups))" if query_of_row is None else "")
                raise ParameterError(f"folds.split(X, y, groups) failed: {exc}{hint}") from None
        elif is_list_like(folds):
            pairs = list(folds)
        else:
            raise ParameterError(f"folds must be a scikit-learn splitter or a list of (train_idx, test_idx) pairs, got "
                                 f"{type(folds).__name__}")
        for i, pair in enumerate(pairs):
            if isinstance(pair, (str, bytes)) or not hasattr(pair, "__len__") or len(pair) != 2:
                raise ParameterError(f"folds[{i}] must be a (train_idx, test_idx) pair, got {type(pair).__name__}")
        return [tuple(_fold_rows(side, f"folds[{i}]'s {name}", n, starts, query_of_row)
                      for side, name in zip(pair, ("train_idx", "test_idx"))) for i, pair in enumerate(pairs)]
    rng = np.random.default_rng(seed)
    if objective.task == "ranking":
        if starts is None:
            raise ParameterError("cv of a ranking objective needs the queries of train_set: build it with group= or "
                                 "qid=")
        if starts.size - 1 < nfold:
            raise ParameterError(f"cv of a ranking objective needs at least nfold={nfold} queries in train_set")
        sizes = np.diff(starts)
        order = rng.permutation(sizes.size) if shuffle else np.arange(sizes.size)
        order = order[np.argsort(-sizes[order], kind="stable")]
        fold_of_query = np.empty(sizes.size, np.int64)
        load = np.zeros(nfold, np.int64)
        for q in order:
            fold_of_query[q] = np.argmin(load)
            load[fold_of_query[q]] += sizes[q]
        fold_of_row = fold_of_query[query_of_row]
    elif stratified and objective.task in ("binary", "multiclass"):
        fold_of_row = np.empty(n, np.int64)
        position = 0
        for cls in np.unique(train_set.label):
            rows = np.flatnonzero(train_set.label == cls)
            rows = rng.permutation(rows) if shuffle else rows
            fold_of_row[rows] = (position + np.arange(rows.size)) % nfold
            position += rows.size
    else:
        order = rng.permutation(n) if shuffle else np.arange(n)
        fold_of_row = np.empty(n, np.int64)
        for k, block in enumerate(np.array_split(order, nfold)):
            fold_of_row[block] = k
    return [(np.flatnonzero(fold_of_row != k), np.flatnonzero(fold_of_row == k)) for k in range(nfold)]


def _fold_rows(indices: Any, name: str, n: int, starts: np.ndarray | None,
               query_of_row: np.ndarray | None) -> np.ndarray:
    """One side of a given fold as row indices (a boolean mask: its true rows), checked: a
    non-empty 1-D array of integers in ``[0, n)`` that takes each query whole (a query split
    between a fold's training and held-out rows would be scored on rows its model saw, and
    LightGBM refuses such folds too)."""
    rows = np.asarray(indices)
    if rows.dtype == np.bool_ and rows.shape == (n,):
        rows = np.flatnonzero(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ParameterError(f"{name} must be a 1-dimensional array of row indices (or a boolean mask of the "
                             f"{n} rows), got {rows.dtype} of shape {rows.shape}")
    if rows.size == 0:
        raise ParameterError(f"{name} is empty: a fold needs training and held-out rows")
    bad = (rows < 0) | (rows >= n)
    if bad.any():
        raise ParameterError(f"{name} holds {rows[np.argmax(bad)]}, outside the rows [0, {n}) of train_set")
    if query_of_row is not None:
        sizes = np.diff(starts)
        taken = np.bincount(query_of_row[np.unique(rows)], minlength=sizes.size)
        split = np.flatnonzero((taken > 0) & (taken < sizes))
        if split.size:
            q = int(split[0])
            raise ParameterError(f"{name} takes {taken[q]} of the {sizes[q]} rows of query {q} (rows {starts[q]} to "
                                 f"{starts[q + 1] - 1}): folds must keep queries whole (GroupKFold does, given the "
                                 "query of each row as groups)")
    return rows
