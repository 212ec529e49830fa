"""How the experiments time training runs on a shared machine: in lockstep."""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["lockstep"]


def lockstep(steps: Sequence[Callable[[], None]], iterations: Sequence[int]) -> None:
    """Run several trainings together, one iteration of each in turn, the order rotating every
    round, until run ``k`` has done ``iterations[k]``: a shared machine's drifting load then
    falls on every run alike.

    Parameters
    ----------
    steps : sequence of callable
        ``steps[k]()`` does one iteration of run ``k`` (and times it).
    iterations : sequence of int
        Iterations of each run.
    """
    for i in range(max(iterations, default=0)):
        live = [step for step, n in zip(steps, iterations, strict=True) if i < n]
        for k in range(len(live)):
            live[(i + k) % len(live)]()
