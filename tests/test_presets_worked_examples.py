"""The RecBole and torchmetrics presets against worked examples from their published source.

Both libraries need torch, which the test environment does not install; the
expected values below are computed by hand from their code:

* RecBole, ``recbole/evaluator/metrics.py`` (RUCAIBox/RecBole, ``NDCG.metric_info``,
  ``MAP.metric_info``, ``Precision.metric_info``, ``Recall.metric_info``): ``pos_index``
  marks the relevant items of the top-k list, ``pos_len`` is the number of relevant
  items of the user; NDCG's IDCG sums ``1/log2(i+1)`` for ``i <= min(pos_len, k)``,
  MAP divides the sum of precisions at hits by ``min(pos_len, k)``, precision is
  hits / k, recall hits / pos_len. RecBole scores every item, so lists are complete.
* torchmetrics, ``src/torchmetrics/functional/retrieval/ndcg.py`` (Lightning-AI/torchmetrics):
  the docstring example ``retrieval_normalized_dcg(preds=[.1, .2, .3, 4, 70],
  target=[10, 0, 0, 1, 5]) = 0.6957`` (graded linear gain, ideal from the target
  sorted, tied predictions averaged).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

import metrics_core as mc

TOL = 1e-12


def test_recbole_preset_worked_example():
    # user 1: top 5 = [rel, -, rel, -, -], 3 relevant items (one never retrieved)
    # user 2: top 5 = [-, -, -, -, rel], 1 relevant item
    run = pd.DataFrame({"user_id": [1] * 5 + [2] * 5, "item_id": list("abcde") + list("abcde"),
                        "score": [5, 4, 3, 2, 1] * 2})
    qrels = pd.DataFrame({"user_id": [1, 1, 1, 2], "item_id": ["a", "c", "z", "e"], "relevance": [1, 1, 1, 1]})
    ev = mc.evaluate(run, qrels, metrics=["NDCG@5", "MAP@5", "Precision@5", "Recall@5"], preset="recbole")
    # NDCG@5: user 1 dcg = 1/log2(2) + 1/log2(4) = 1.5, idcg = 1 + 1/log2(3) + 1/log2(4) (min(3, 5) = 3 terms);
    #         user 2 dcg = 1/log2(6), idcg = 1
    ndcg = (1.5 / (1.5 + 1 / math.log2(3)) + 1 / math.log2(6)) / 2
    # MAP@5: user 1 (P@1 + P@3) / min(3, 5) = (1 + 2/3) / 3; user 2 P@5 / min(1, 5) = 1/5
    map5 = ((1 + 2 / 3) / 3 + 1 / 5) / 2
    assert ev.summary["NDCG@5"] == pytest.approx(ndcg, abs=TOL)
    assert ev.summary["MAP@5"] == pytest.approx(map5, abs=TOL)
    assert ev.summary["Precision@5"] == pytest.approx((2 / 5 + 1 / 5) / 2, abs=TOL)
    assert ev.summary["Recall@5"] == pytest.approx((2 / 3 + 1) / 2, abs=TOL)


def test_torchmetrics_preset_worked_example():
    run = pd.DataFrame({"user_id": [1] * 5, "item_id": list("abcde"), "score": [0.1, 0.2, 0.3, 4, 70]})
    qrels = pd.DataFrame({"user_id": [1] * 5, "item_id": list("abcde"), "relevance": [10, 0, 0, 1, 5]})
    ev = mc.evaluate(run, qrels, metrics=["retrieval_normalized_dcg"], preset="torchmetrics")
    assert round(ev.summary["retrieval_normalized_dcg"], 4) == 0.6957  # the docstring's printed value
    dcg = 5 + 1 / math.log2(3) + 10 / math.log2(6)
    idcg = 10 + 5 / math.log2(3) + 1 / math.log2(4)
    assert ev.summary["retrieval_normalized_dcg"] == pytest.approx(dcg / idcg, abs=TOL)


def test_torchmetrics_preset_averages_tied_predictions():
    # _tie_average_dcg: a tie group's gain is its mean target times the sum of its discounts
    run = pd.DataFrame({"user_id": [1] * 3, "item_id": list("abc"), "score": [0.5, 0.5, 0.2]})
    qrels = pd.DataFrame({"user_id": [1] * 3, "item_id": list("abc"), "relevance": [2, 0, 1]})
    ev = mc.evaluate(run, qrels, metrics=["RetrievalNormalizedDCG@2"], preset="torchmetrics")
    dcg = (2 + 0) / 2 * (1 + 1 / math.log2(3))
    idcg = 2 + 1 / math.log2(3)
    assert ev.summary["RetrievalNormalizedDCG@2"] == pytest.approx(dcg / idcg, abs=TOL)
