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


def _brute_force_best_f1(scores, labels):
    """Every distinct score as a threshold, F1 by scikit-learn; the highest threshold of the best."""
    from sklearn.metrics import f1_score

    best = None
    for t in sorted(set(scores), reverse=True):
        f1 = f1_score(labels, (np.asarray(scores) >= t).astype(int), zero_division=0)
        if best is None or f1 > best[1] + 1e-15:
            best = (t, f1)
    return best


def test_best_f1_threshold_matches_a_brute_force_search():
    rng = np.random.default_rng(11)
    for trial in range(20):
        n = int(rng.integers(5, 80))
        labels = (rng.random(n) < 0.3).astype(int)
        if labels.sum() == 0:
            labels[0] = 1
        # logits with ties: rounding makes repeated scores
        scores = np.round(rng.normal(-3 + 2 * labels, 1.5), 1)
        got = curve_tables.best_f1_threshold(scores, labels)
        want = _brute_force_best_f1(list(scores), labels)
        assert got[0] == want[0] and got[1] == pytest.approx(want[1], abs=1e-12)
    assert curve_tables.best_f1_threshold([0.1, 0.2], [0, 0]) is None


def test_opening_threshold_probabilities_logits_and_no_positive():
    value, why = curve_tables.opening_threshold([0.1, 0.7, 0.9], [0, 1, 1], probabilistic=True)
    assert value == 0.5 and "probabilities" in why
    # probabilities that all lie above 0.5: the slider's range starts at the lowest score
    assert curve_tables.opening_threshold([0.6, 0.9], [0, 1], probabilistic=True)[0] == 0.6
    # raw logits: many negatives far below, few positives around 0; the middle of the range
    # would predict nearly every row positive
    scores = np.r_[np.linspace(-9.5, -1, 90), np.linspace(-0.5, 0.2, 10)]
    labels = np.r_[np.zeros(90), np.ones(10)]
    value, why = curve_tables.opening_threshold(scores, labels, probabilistic=False)
    assert value == pytest.approx(-0.5) and "highest F1 (1.0000)" in why
    value, why = curve_tables.opening_threshold([-2.0, 4.0], [0, 0], probabilistic=False)
    assert value == 1.0 and "no row is positive" in why
