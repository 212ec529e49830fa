"""Where the time of a training iteration goes, for the benchmarks' ``--phases`` options."""

from __future__ import annotations

import importlib
import time
from collections import defaultdict


class PhaseTimer:
    """Wall and process CPU seconds spent in the steps of an iteration (``--phases``), by
    wrapping the library's methods for the duration of a run.

    A tree grown in one compiled call (``_kernels.grow.grow_tree``) is one step, "tree growth";
    with ``split_growth`` trees are grown by the Python loop instead (the same trees), whose
    histogram, partition and split-scan calls are timed one by one, Python between them in
    "rest".
    """

    STEPS = (("gradients", "_rows", "TrainingRows", "compute_gradients"),
             ("row sample", "_rows", "TrainingRows", "draw_sample"),
             ("fixed point", "grower", "NodeRows", "units"),
             ("fixed point", "grower", "NodeRows", "to_fixed_point"),
             ("column copy", "grower", "NodeRows", "use_features"),
             ("histograms", "grower", "NodeRows", "histogram"),
             ("partitions", "grower", "NodeRows", "partition"),
             ("split scans", "grower", None, "find_best_split"),
             ("split scans", "grower", None, "subtract_and_find_splits"),
             ("tree growth", "grower", None, "grow_tree"),
             ("score update", "_rows", "TrainingRows", "add_tree"))

    def __init__(self, split_growth: bool = False):
        self.seconds = defaultdict(float)
        self.cpu = defaultdict(float)
        self._saved = []
        if split_growth:
            grower = importlib.import_module("smartboost.grower").TreeGrower
            self._saved.append((grower, "_pool", grower._pool))
            grower._pool = lambda self, source, n_root: None
        for phase, module, owner, name in self.STEPS:
            target = importlib.import_module(f"smartboost.{module}")
            target = getattr(target, owner) if owner else target
            original = getattr(target, name, None)
            if original is None:  # an older source without this step
                continue
            self._saved.append((target, name, original))
            setattr(target, name, self._timed(phase, original))

    def _timed(self, phase, fn):
        def timed(*a, **k):
            start, cpu = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                self.seconds[phase] += time.perf_counter() - start
                self.cpu[phase] += time.process_time() - cpu
        return timed

    def split(self, iterations: int, total: float, clock: str) -> dict[str, float]:
        """Milliseconds per iteration of each step (``clock``: "wall" or "cpu"); "row sample"
        without the gradients inside it; "rest": the iteration's other time."""
        ms = {phase: 1e3 * s / iterations for phase, s in (self.seconds if clock == "wall" else self.cpu).items()}
        ms["row sample"] = ms.get("row sample", 0.0) - ms.get("gradients", 0.0)
        ms["rest"] = 1e3 * total / iterations - sum(ms.values())
        return ms

    def restore(self):
        for target, name, original in self._saved:
            setattr(target, name, original)
