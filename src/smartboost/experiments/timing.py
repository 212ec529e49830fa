"""How the experiments time training runs on a shared machine: in lockstep."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._config import threads as thread_count
from .._params import training_params
from ..dataset import Dataset
from ..engine import Trainer

__all__ = ["lockstep", "train_in_lockstep"]


def lockstep(steps: Sequence[Callable[[], bool | None]], iterations: Sequence[int]) -> None:
    """Run several trainings together, one iteration of each in turn, the order rotating every
    round, until run ``k`` has done ``iterations[k]``: a shared machine's drifting load then
    falls on every run alike.

    Parameters
    ----------
    steps : sequence of callable
        ``steps[k]()`` does one iteration of run ``k`` (and times it); a run whose step returns
        False is finished early (a time budget spent) and not called again.
    iterations : sequence of int
        Iterations of each run (at most).
    """
    finished = [False] * len(steps)
    for i in range(max(iterations, default=0)):
        live = [k for k, n in enumerate(iterations) if i < n and not finished[k]]
        if not live:
            return
        for j in range(len(live)):
            k = live[(i + j) % len(live)]
            if steps[k]() is False:
                finished[k] = True


def train_in_lockstep(runs: Sequence[dict[str, Any]], train_set: Dataset, valid_sets: list[Dataset] | None,
                      iterations: int, after: Callable[[int, Trainer], None] | None = None,
                      seconds: float | None = None, warm_up: int = 3) -> list[Trainer]:
    """Train one run per parameter set in :func:`lockstep`, as :func:`~smartboost.train` would.

    Each run's iterations are timed by the trainer (``booster.iteration_stats["seconds"]``);
    ``after`` and the evaluation sets' scores run outside that time.

    Parameters
    ----------
    runs : sequence of dict
        Complete training parameters of each run (``num_threads`` is read from the first).
    train_set : Dataset
    valid_sets : list of Dataset or None
        Evaluation sets of every run (their scores follow each run's trees).
    iterations : int
        Iterations of every run (at most, with ``seconds``).
    after : callable, optional
        ``after(k, trainer)`` after each iteration of run ``k``.
    seconds : float, optional
        A time budget: run ``k`` stops once its training seconds reach it.
    warm_up : int
        Iterations of every run trained first, in lockstep, and thrown away: they compile (or
        load) each configuration's kernels outside the timing.

    Returns
    -------
    list of Trainer
        The runs' trainers; ``trainer.booster`` is each model.
    """
    with thread_count(runs[0].get("num_threads", 0)) as n_threads:
        def trainers(rounds: int) -> list[Trainer]:
            resolved = [training_params(run, rounds) for run in runs]
            return [Trainer.local(r, train_set, valid_sets, None, None, n_threads) for r in resolved]

        if warm_up:
            warming = trainers(warm_up)
            lockstep([t.boost_one_iteration for t in warming], [warm_up] * len(warming))
        live = trainers(iterations)

        def step(k: int) -> bool:
            trainer = live[k]
            trainer.boost_one_iteration()
            if after is not None:
                after(k, trainer)
            return seconds is None or sum(trainer.booster.iteration_stats["seconds"]) < seconds

        lockstep([lambda k=k: step(k) for k in range(len(live))], [iterations] * len(live))
    return live
