"""API misuse raises MetricsError with a clear one-line message; absurd cutoffs work.

References for the cutoffs: the plain formulas (a list shorter than k has the
same DCG/NDCG as without a cutoff; P@k = hits / k).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import MetricsError
from metrics_core.metrics.registry import MAX_K

RUN = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3"], "item_id": ["a", "b", "b", "c", "a"],
                    "score": [0.9, 0.5, 0.7, 0.1, 1.0]})
QRELS = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["a", "b"], "relevance": [1, 1]})


def one_line(excinfo, *fragments):
    text = str(excinfo.value)
    assert "\n" not in text and text
    for f in fragments:
        assert f in text, (f, text)


@pytest.mark.parametrize("metrics,fragment", [
    (None, "metrics is None"), (42, "got int"), ([None], "got None"), (["ndcg@10", 3], "got 3"),
    ([], "no metric requested"), (["ndcg@0"], "whole number >= 1"), (["ndcg@1.5"], "whole number >= 1"),
    ([f"ndcg@{MAX_K + 1}"], "2^62"), (["ndcg@10^12"], "cannot read metric name"),
])
def test_bad_metrics_argument(metrics, fragment):
    with pytest.raises(MetricsError) as e:
        mc.evaluate(RUN, QRELS, metrics)
    one_line(e, fragment)


def test_duplicate_column_names():
    run = RUN.rename(columns={"score": "item_id"})
    with pytest.raises(MetricsError) as e:
        mc.evaluate(run, QRELS)
    one_line(e, "run", "'item_id' appears more than once")
    qrels = QRELS.rename(columns={"item_id": "user_id"})
    with pytest.raises(MetricsError) as e:
        mc.evaluate(RUN, qrels)
    one_line(e, "qrels", "'user_id' appears more than once")


def test_run_that_is_not_a_frame():
    with pytest.raises(MetricsError) as e:
        mc.evaluate([1, 2, 3], QRELS)
    one_line(e, "a DataFrame (pandas or polars), a polars LazyFrame, a pyarrow Table", "got list")


@pytest.mark.parametrize("n_bins", [0, -3, 2.5, "10", True, 10**9])
def test_calibration_curve_bins(n_bins):
    ranked = mc.prepare(RUN, QRELS)
    with pytest.raises(MetricsError) as e:
        mc.calibration_curve(ranked, n_bins=n_bins)
    one_line(e, "n_bins")


def test_calibration_curve_valid_bins_still_work():
    ranked = mc.prepare(RUN, QRELS)
    table = mc.calibration_curve(ranked, n_bins=2)
    assert table["count"].sum() == 4  # rows of users in the ground truth: u1 (2) and u2 (2)


@pytest.mark.parametrize("call", [
    lambda: mc.ndcg_at_k(["a"]), lambda: mc.ndcg_at_k([1, 0], k=0), lambda: mc.ndcg_at_k([1, 0], k="3"),
    lambda: mc.dcg_at_k([1, float("nan")]), lambda: mc.ndcg_at_k([1, 0], gain="square"),
    lambda: mc.ndcg_at_k([1, 0], ideal_relevances=["x"]), lambda: mc.precision_at_k([1], k=MAX_K + 1),
    lambda: mc.average_precision_at_k([1, 0], ap_norm="bogus"),
])
def test_single_list_misuse(call):
    with pytest.raises(MetricsError) as e:
        call()
    one_line(e)


def test_metric_curve_k_max_is_bounded():
    ranked = mc.prepare(RUN, QRELS)
    for bad in (0, 10**9, 2.0):
        with pytest.raises(MetricsError) as e:
            mc.metric_curve(ranked, ["ndcg"], k_max=bad)
        one_line(e, "k_max")


def test_huge_cutoffs_are_reported_as_given_and_computed_from_the_formulas():
    labels = ["ndcg@1000000000", "p@1000000000000", f"recall@{MAX_K}", "map@1000000000000",
              "hit_rate@1000000000000", "ndcg"]
    ev = mc.evaluate(RUN, QRELS, labels)
    assert list(ev.summary) == labels
    # u1: relevant a at rank 1; u2: relevant b at rank 1 -> every list-based metric is 1
    assert ev.summary["ndcg@1000000000"] == ev.summary["ndcg"] == 1.0
    assert ev.summary["p@1000000000000"] == pytest.approx((1 / 1e12 + 1 / 1e12) / 2)
    assert ev.summary[f"recall@{MAX_K}"] == 1.0
    assert ev.summary["map@1000000000000"] == 1.0
    assert ev.summary["hit_rate@1000000000000"] == 1.0


def test_huge_cutoff_on_single_list_functions():
    rel = [0, 2, 1]
    dcg = 2 / math.log2(3) + 1 / math.log2(4)
    idcg = 2 + 1 / math.log2(3)
    assert mc.ndcg_at_k(rel, k=10**12) == pytest.approx(dcg / idcg)
    assert mc.precision_at_k([1, 0, 1], k=10**12) == pytest.approx(2 / 1e12)


def test_prepared_run_with_a_second_positional_argument_is_refused():
    import pandas as pd

    import metrics_core as mc

    run = pd.DataFrame({"user_id": ["a", "a"], "item_id": ["x", "y"], "score": [1.0, 0.5], "relevance": [1, 0]})
    ranked = mc.prepare(run)
    with pytest.raises(mc.MetricsError, match="pass no qrels"):
        mc.evaluate(ranked, ["ndcg@1"])
    assert mc.evaluate(ranked, metrics=["ndcg@1"]).summary["ndcg@1"] == 1.0
