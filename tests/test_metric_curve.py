"""metric_curve (one pass for K = 1..k_max) against a plain-Python reference at each K.

The reference (tests/_ranking_reference.py) orders each list by the tie rule and sums
the formulas rank by rank; averaged ties are the mean over every order of the tied items.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from _ranking_reference import summary as reference_summary

NAMES = ["cg", "dcg", "ndcg", "map", "mrr", "precision", "recall", "f1", "hit_rate", "hit_ratio", "r_precision"]


def _data(seed: int, max_len: int = 14):
    rng = np.random.default_rng(seed)
    rows, qrows = [], []
    for u in range(40):
        n = int(rng.integers(0, max_len))
        scores = rng.integers(0, 4, size=n).astype(float)  # many ties
        for j in range(n):
            rows.append((f"u{u}", f"i{j}", scores[j]))
        for j in range(int(rng.integers(0, 9))):
            qrows.append((f"u{u}", f"i{int(rng.integers(0, 18))}", float(rng.integers(-1, 4))))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["user_id", "item_id", "relevance"]).drop_duplicates(["user_id", "item_id"])
    return run, qrels


def _reference_inputs(run, qrels):
    run_rows, truth = {}, {}
    for row, (user, item, score) in enumerate(run.itertuples(index=False)):
        run_rows.setdefault(user, []).append((score, item, row))
    for user, item, rel in qrels.itertuples(index=False):
        truth.setdefault(user, {})[item] = rel
    return run_rows, truth


@pytest.mark.parametrize("ties", ["average", "trec", "input"])
@pytest.mark.parametrize("conv", [
    dict(),
    dict(gain="exponential", ideal="retrieved", ap_norm="retrieved"),
    dict(ap_norm="min_k", relevance_threshold=2, empty_users="zero"),
])
def test_curve_matches_plain_reference_at_each_k(ties, conv):
    # averaged ties are brute-forced over every order: short lists keep tie groups small
    run, qrels = _data(3, max_len=7 if ties == "average" else 14)
    ranked = mc.prepare(run, qrels)
    k_max = 16  # beyond the longest list, so the tail past each list is covered too
    curve = mc.metric_curve(ranked, NAMES, k_max=k_max, ties=ties, **conv)
    assert list(curve["k"]) == list(range(1, k_max + 1))
    run_rows, truth = _reference_inputs(run, qrels)
    ref_conv = {"gain_kind": conv.get("gain", "linear"), "ideal": conv.get("ideal", "judged"),
                "ap_norm": conv.get("ap_norm", "relevant"), "threshold": conv.get("relevance_threshold", 1.0)}
    for k in range(1, k_max + 1):
        want = reference_summary(run_rows, truth, k, ties=ties, empty_users=conv.get("empty_users", "exclude"),
                                 **ref_conv)
        got = curve.iloc[k - 1]
        for m in NAMES:
            # r_precision has no cutoff: the same value at every K
            assert got[m] == pytest.approx(want[m], abs=1e-12), (m, k)


def test_curve_equals_evaluate_at_each_k():
    ranked = mc.prepare(*_data(5))
    curve = mc.metric_curve(ranked, NAMES, k_max=12, ties="average")
    for k in (1, 5, 12):
        want = mc.evaluate(ranked, metrics=[f"{m}@{k}" if m != "r_precision" else m for m in NAMES]).summary
        for m in NAMES:
            assert curve.iloc[k - 1][m] == pytest.approx(want[m if m == "r_precision" else f"{m}@{k}"], abs=1e-12)


def test_curve_rejects_cutoffs_and_scored_metrics():
    ranked = mc.prepare(*_data(4))
    with pytest.raises(mc.MetricsError):
        mc.metric_curve(ranked, ["ndcg@10"])
    with pytest.raises(mc.MetricsError):
        mc.metric_curve(ranked, ["auc"])


CONVENTION_CASES = [
    dict(missing_users="exclude"),
    dict(precision_norm="min_k"),
    dict(ap_norm="k", ideal="k", gain="exponential"),
    dict(missing_users="exclude", empty_users="zero", precision_norm="min_k", ties="trec"),
    dict(preset="rectools"),
    dict(preset="trec_eval"),
    dict(preset="spark_mllib"),
    dict(preset="rectools", precision_norm="k"),
]


@pytest.mark.parametrize("options", CONVENTION_CASES, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_curve_takes_the_conventions_of_evaluate(options):
    run, qrels = _data(5)
    ranked = mc.prepare(run, qrels)
    names = ["ndcg", "map", "precision", "recall", "mrr", "hit_ratio", "fbeta"]
    curve = mc.metric_curve(ranked, names, k_max=8, **options)
    for k in range(1, 9):
        summary = mc.evaluate(ranked, metrics=[f"{n}@{k}" for n in names], **options).summary
        row = curve.loc[curve["k"] == k].iloc[0]
        for n in names:
            assert row[n] == pytest.approx(summary[f"{n}@{k}"], abs=1e-12), (n, k)


def test_precision_min_k_curve_matches_a_plain_formula():
    run, qrels = _data(9)
    curve = mc.metric_curve(mc.prepare(run, qrels), ["precision"], k_max=6, precision_norm="min_k", ties="trec")
    relevant = qrels[qrels["relevance"] >= 1].groupby("user_id")["item_id"].apply(set)
    for k in range(1, 7):
        values = []
        for user, items in relevant.items():
            # trec order: score descending, then item id descending
            rows = run[run["user_id"] == user].sort_values(["score", "item_id"], ascending=[False, False])
            hits = sum(item in items for item in rows["item_id"].head(k))
            values.append(hits / min(k, len(items)))
        assert curve.loc[k - 1, "precision"] == pytest.approx(np.mean(values), abs=1e-12)
