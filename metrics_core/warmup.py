"""Compile every kernel once so later processes load them from numba's disk cache.

The first call of a fresh installation compiles the parallel kernels (tens of
seconds on two cores); afterwards a process loads them in about a second. Run
``python -m metrics_core.warmup`` after installing, or call :func:`warmup`
before starting a server whose first request must be quick.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd


def warmup() -> float:
    """Evaluate a tiny data set with every metric family and tie rule; returns seconds spent."""
    import metrics_core as mc

    start = time.perf_counter()
    run = pd.DataFrame({
        "user_id": ["a", "a", "a", "b", "b", "c"],
        "item_id": ["x", "y", "z", "x", "z", "y"],
        "score": [0.9, 0.5, 0.5, 0.2, 0.7, 0.4],
        "relevance": [1.0, 0.0, 2.0, 1.0, 0.0, 1.0],
    })
    shuffled = run.iloc[[3, 0, 5, 1, 4, 2]]
    qrels = run[["user_id", "item_id", "relevance"]]
    features = pd.DataFrame({"item_id": ["x", "y", "z"], "f1": [1.0, 0.0, 1.0], "f2": [0.0, 1.0, 1.0]})
    tags = pd.DataFrame({"item_id": ["x", "y", "z"], "tags": ["a|b", "b", "c"]})
    names = ["ndcg@2", "map", "mrr", "hit_ratio@2", "auc", "pr_auc", "logloss", "gauc", "pcopc",
             "accuracy", "novelty@2", "coverage@2", "personalization@2", "ils@2"]
    for ties in ("average", "trec", "input"):
        for frame in (run, shuffled):
            ranked = mc.prepare(frame.drop(columns="relevance"), qrels)
            mc.evaluate(ranked, metrics=names, ties=ties, item_features=features)
            mc.evaluate(ranked, metrics=["ils@2"], ties=ties, item_features=tags)
            mc.metric_curve(ranked, ["ndcg", "map", "r_precision"], k_max=3, ties=ties)
    ranked = mc.prepare(run)
    mc.roc_curve(ranked)
    mc.pr_curve(ranked)
    mc.calibration_curve(ranked)
    mc.ndcg_at_k(np.array([1.0, 0.0]), 2)
    return time.perf_counter() - start


if __name__ == "__main__":
    print(f"metrics_core kernels ready ({warmup():.1f} s)")
