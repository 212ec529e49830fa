"""Where the time of a training iteration goes, for the benchmarks' ``--phases`` options."""

from __future__ import annotations

import importlib
import time
from collections import defaultdict


class PhaseTimer:
    """Wall and process CPU seconds spent in the steps of an iteration (``--phases``), by
    wrapping the library's methods for the duration of a run.

    A tree is grown in one compiled call (``_kernels.grow.grow_tree``): its histograms, partitions
    and split scans are one step, "tree growth".
    """

    STEPS = (("gradients", "_rows", "TrainingRows", "compute_gradients"),
             ("row sample", "_rows", "TrainingRows", "draw_sample"),
             ("fixed point", "grower", "NodeRows", "units"),
             ("fixed point", "grower", "NodeRows", "to_fixed_point"),
             ("column copy", "grower", "NodeRows", "use_features"),
             ("tree growth", "grower", None, "grow_tree"),
             ("score update", "_rows", "TrainingRows", "add_tree"))

    def __init__(self):
        self.seconds = defaultdict(float)
        self.cpu = defaultdict(float)
        self._saved = []
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
