"""Hit or miss on the Failures page follows the relevance threshold in force."""

from __future__ import annotations

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import tables

RUN = pd.DataFrame({"user_id": ["u"] * 4, "item_id": ["a", "b", "c", "d"], "score": [4.0, 3.0, 2.0, 1.0]})
TRUTH = pd.DataFrame({"user_id": ["u"] * 3, "item_id": ["a", "b", "c"], "relevance": [1, 2, 3]})


@pytest.mark.parametrize("threshold", [1, 2, 3])
def test_hits_are_the_items_at_or_above_the_threshold_the_evaluation_used(threshold):
    ev = mc.evaluate(RUN, TRUTH, metrics=["precision@4"], relevance_threshold=threshold)
    used = tables.relevance_threshold(ev.conventions)
    assert used == threshold
    relevance = pd.Series([1, 2, 3, 0])
    labels = tables.hit_or_miss(relevance, used)
    expected = ["hit" if r >= threshold else "miss" for r in [1, 2, 3, 0]]  # plain Python reference
    assert labels.tolist() == expected
    # the hits agree with the library's own precision at this threshold
    assert labels.eq("hit").sum() / 4 == pytest.approx(ev.summary["precision@4"])


def test_threshold_defaults_to_the_declared_convention():
    assert tables.relevance_threshold({}) == 1.0
    assert tables.relevance_threshold({"relevance_threshold": 0.5}) == 0.5
