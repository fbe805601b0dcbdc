"""The Curves page's tables against scikit-learn and plain formulas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import precision_recall_curve

import metrics_core as mc
from dashboard import curve_tables


def test_pr_curve_recall_over_all_relevant_counts_unretrieved_items():
    rng = np.random.default_rng(3)
    rows = []
    for u in range(30):
        for i in range(8):
            rows.append((f"u{u}", f"i{i}", float(rng.random()), int(rng.random() < 0.3)))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score", "relevance"])
    # the ground truth also holds relevant items the run never retrieved
    extra = pd.DataFrame({"user_id": [f"u{u}" for u in range(30)], "item_id": "never", "relevance": 1})
    qrels = pd.concat([run[["user_id", "item_id", "relevance"]], extra], ignore_index=True)
    ranked = mc.prepare(run[["user_id", "item_id", "score"]], qrels)
    retrieved = int(run["relevance"].sum())
    everything = retrieved + 30
    scaled = mc.pr_curve(ranked, recall_over="all_relevant")
    precision, recall, thresholds = precision_recall_curve(run["relevance"], run["score"])
    # at each threshold t: TP(score >= t) / every relevant item
    for t in thresholds[::7]:
        tp = int(((run["score"] >= t) & (run["relevance"] == 1)).sum())
        row = scaled[np.isclose(scaled["threshold"], t)]
        assert row["recall"].iloc[0] == pytest.approx(tp / everything, abs=1e-12)
    assert scaled["recall"].max() == pytest.approx(retrieved / everything)
    with pytest.raises(mc.MetricsError):
        mc.pr_curve(ranked, recall_over="everything")


def test_score_range_and_bin_counts():
    assert curve_tables.score_range(np.array([5.0, 11.0, np.nan])) == (5.0, 11.0)
    assert curve_tables.score_range(np.array([2.0, 2.0])) == (1.5, 2.5)
    curves = {"m": pd.DataFrame({"bin": [0, 2], "mean_predicted": [0.1, 0.7], "fraction_positive": [0, 1],
                                 "count": [10, 3]})}
    counts = curve_tables.calibration_counts(curves, 3)
    assert counts.loc["[0.00, 0.33)", "m"] == 10 and counts.loc["[0.67, 1.00]", "m"] == 3
