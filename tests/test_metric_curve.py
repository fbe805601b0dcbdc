"""metric_curve (one pass for K = 1..k_max) equals evaluate() at each K separately."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

NAMES = ["cg", "dcg", "ndcg", "map", "mrr", "precision", "recall", "f1", "hit_rate", "hit_ratio", "r_precision"]


def _data(seed: int):
    rng = np.random.default_rng(seed)
    rows, qrows = [], []
    for u in range(40):
        n = int(rng.integers(0, 14))
        scores = rng.integers(0, 4, size=n).astype(float)  # many ties
        for j in range(n):
            rows.append((f"u{u}", f"i{j}", scores[j]))
        for j in range(int(rng.integers(0, 9))):
            qrows.append((f"u{u}", f"i{int(rng.integers(0, 18))}", float(rng.integers(-1, 4))))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["user_id", "item_id", "relevance"]).drop_duplicates(["user_id", "item_id"])
    return mc.prepare(run, qrels)


@pytest.mark.parametrize("ties", ["average", "trec", "input"])
@pytest.mark.parametrize("conv", [
    dict(),
    dict(gain="exponential", ideal="retrieved", ap_norm="retrieved"),
    dict(ap_norm="min_k", relevance_threshold=2, empty_users="zero"),
])
def test_curve_equals_evaluate_at_each_k(ties, conv):
    ranked = _data(3)
    k_max = 16  # beyond the longest list, so the tail past each list is covered too
    curve = mc.metric_curve(ranked, NAMES, k_max=k_max, ties=ties, **conv)
    assert list(curve["k"]) == list(range(1, k_max + 1))
    for k in range(1, k_max + 1):
        want = mc.evaluate(ranked, metrics=[f"{m}@{k}" if m != "r_precision" else m for m in NAMES],
                           ties=ties, **conv).summary
        got = curve.iloc[k - 1]
        for m in NAMES:
            label = m if m == "r_precision" else f"{m}@{k}"
            assert got[m] == pytest.approx(want[label], abs=1e-12), (m, k)


def test_curve_rejects_cutoffs_and_scored_metrics():
    ranked = _data(4)
    with pytest.raises(mc.MetricsError):
        mc.metric_curve(ranked, ["ndcg@10"])
    with pytest.raises(mc.MetricsError):
        mc.metric_curve(ranked, ["auc"])
