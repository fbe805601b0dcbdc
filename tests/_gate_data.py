"""Runs with a known effect for the regression gate's tests: a baseline, the same with noise, a real drop."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd


def write_runs(folder: Path, users: int = 400, items: int = 60, seed: int = 0) -> Path:
    """qrels and three runs in ``folder``: the baseline ranks relevant items high; ``noise`` is the
    baseline with tiny score noise (no real change); ``drop`` loses most of the relevance boost."""
    rng = np.random.default_rng(seed)
    rows = [(f"u{u}", f"i{i}", rng.random()) for u in range(users) for i in rng.choice(items, 20, replace=False)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = run.sample(frac=0.2, random_state=seed)[["user_id", "item_id"]].assign(relevance=1)
    joined = run.merge(qrels, how="left", on=["user_id", "item_id"]).fillna({"relevance": 0})
    baseline = joined.assign(score=joined["score"] + 0.8 * joined["relevance"])
    noise = baseline.assign(score=baseline["score"] + rng.normal(0, 1e-3, len(baseline)))
    drop = baseline.assign(score=baseline["score"] - 0.6 * baseline["relevance"])
    for name, frame in (("baseline", baseline), ("noise", noise), ("drop", drop)):
        frame[["user_id", "item_id", "score"]].to_parquet(folder / f"{name}.parquet", index=False)
    qrels.to_parquet(folder / "qrels.parquet", index=False)
    return folder
