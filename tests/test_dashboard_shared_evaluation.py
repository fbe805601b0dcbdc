"""Pages read ranking and scored-row metrics from the one evaluation they share; a view of it
must equal what ``mc.evaluate`` gives for the page's own metrics (per-user table, summary,
users and diagnostics), for every subset the pages ask for and under other conventions."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("streamlit")

import metrics_core as mc  # noqa: E402
from dashboard import compute, demo, metric_lists  # noqa: E402


@pytest.fixture(scope="module")
def ranked():
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=7)
    return mc.prepare(d.runs["two_tower"], d.qrels)


SUBSETS = [["ndcg@5"], ["map@5", "ndcg@5"], ["r_precision", "mrr@5", "hit_ratio@5"], ["mcc@5", "pauc@5", "fbeta@5"]]
CONVENTIONS = [{}, {"ties": "trec", "gain": "exponential"}, {"empty_users": "zero", "missing_users": "exclude"},
               {"ideal": "k", "ap_norm": "min_k", "precision_norm": "min_k", "beta": 2.0}]


@pytest.mark.parametrize("conventions", CONVENTIONS)
@pytest.mark.parametrize("subset", SUBSETS)
def test_view_of_the_shared_ranking_table_equals_a_direct_evaluation(ranked, subset, conventions):
    shared, options = compute._shared_request(subset)
    assert options == {} and set(subset) <= set(shared)
    full = mc.evaluate(ranked, metrics=shared, **conventions)
    direct = mc.evaluate(ranked, metrics=subset, **conventions)
    view = compute._view(full, subset)
    pd.testing.assert_frame_equal(view.per_user, direct.per_user)
    assert list(view.summary) == list(direct.summary)
    assert view.summary == pytest.approx(direct.summary, abs=0, nan_ok=True)
    assert view.n_users == direct.n_users and view.diagnostics == direct.diagnostics


def test_scored_metrics_are_read_from_the_table_computed_without_gain_or_ties(ranked):
    subset = ["auc", "gauc", "pr_auc", "rmse"]
    shared, options = compute._shared_request(subset)
    assert shared == metric_lists.scored_labels() and options == {"gain": "linear", "ties": "average"}
    view = compute._view(mc.evaluate(ranked, metrics=shared, **options), subset)
    direct = mc.evaluate(ranked, metrics=subset, gain="exponential", ties="trec")  # neither changes them
    assert view.summary == pytest.approx(direct.summary, abs=1e-15)


def test_mixed_kinds_or_cutoffs_are_evaluated_as_asked():
    assert compute._shared_request(["auc", "ndcg@10"]) is None
    assert compute._shared_request(["ndcg@10", "ndcg@20"]) is None
    assert compute._shared_request(["ils@10"]) is None
