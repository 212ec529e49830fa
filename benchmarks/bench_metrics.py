"""AUC: smartboost's kernel against scikit-learn's ``roc_auc_score``, same inputs, one process.

The project writes its own AUC only because it is measured faster here and tested equal
(``tests/test_objectives_metrics.py``). Usage: ``python benchmarks/bench_metrics.py``.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.metrics import roc_auc_score

from smartboost.metrics import get_metric


def _best_of(fn, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main() -> None:
    auc = get_metric("auc")
    rng = np.random.default_rng(0)
    print("| rows | weights | smartboost ms | sklearn ms | ratio | equal |\n|---|---|---|---|---|---|")
    for n in (10_000, 100_000, 1_000_000):
        y = (rng.random(n) < 0.3).astype(np.float64)
        score = rng.standard_normal(n) + y
        for weighted in (False, True):
            w = rng.random(n) if weighted else None
            auc(y[:10], score[:10], score[:10], None if w is None else w[:10])  # compile / load
            ours_s, ours = _best_of(lambda: auc(y, score, score, w))
            ref_s, ref = _best_of(lambda: roc_auc_score(y, score, sample_weight=w))
            print(f"| {n:,} | {weighted} | {ours_s * 1e3:.2f} | {ref_s * 1e3:.2f} | {ours_s / ref_s:.2f} | "
                  f"{abs(ours - ref) < 1e-12} |")


if __name__ == "__main__":
    main()
