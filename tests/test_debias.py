"""Popularity debiasing against RecTools 0.19 itself: the same rows kept and the same debiased metrics."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import MetricsError


def _data(seed=0):
    rng = np.random.default_rng(seed)
    n_users, n_items = 300, 40
    pop = 1.0 / np.arange(1, n_items + 1) ** 1.2  # a few very popular items
    rows = set()
    for u in range(n_users):
        for i in rng.choice(n_items, size=rng.integers(1, 6), replace=False, p=pop / pop.sum()):
            rows.add((f"u{u}", str(i) if i % 3 else f"{i}.5"))  # ids "12" and "12.5" as text
    qrels = pd.DataFrame(sorted(rows), columns=["user_id", "item_id"]).assign(relevance=1)
    reco = pd.DataFrame([(f"u{u}", str(i), float(rng.random())) for u in range(n_users) for i in range(12)],
                        columns=["user_id", "item_id", "score"])
    return qrels, reco


@pytest.mark.parametrize("iqr_coef,seed", [(1.5, 0), (0.5, 7), (0.0, 42)])
def test_same_rows_as_rectools(iqr_coef, seed):
    from rectools import Columns
    from rectools.metrics.debias import DebiasConfig, debias_interactions

    qrels, _ = _data()
    ref = debias_interactions(qrels.rename(columns={"user_id": Columns.User, "item_id": Columns.Item}),
                              DebiasConfig(iqr_coef=iqr_coef, random_state=seed))
    got = mc.debias(qrels, iqr_coef=iqr_coef, seed=seed)
    assert len(got) < len(qrels)
    pd.testing.assert_frame_equal(got[["user_id", "item_id"]].reset_index(drop=True),
                                  ref[[Columns.User, Columns.Item]].set_axis(["user_id", "item_id"], axis=1)
                                  .reset_index(drop=True))


def test_debiased_metrics_equal_rectools():
    from rectools import Columns
    from rectools.metrics import MAP, NDCG, Precision, Recall
    from rectools.metrics.debias import DebiasConfig

    qrels, reco = _data(1)
    config = DebiasConfig(iqr_coef=1.5, random_state=3)
    reco_rt = reco.sort_values(["user_id", "score"], ascending=[True, False]).copy()
    reco_rt[Columns.Rank] = reco_rt.groupby("user_id").cumcount() + 1
    reco_rt = reco_rt.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    inter = qrels.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    debiased = mc.debias(qrels, iqr_coef=1.5, seed=3)
    ev = mc.evaluate(reco, debiased, metrics=["NDCG@10", "MAP@10", "Precision@5", "Recall@10"], preset="rectools")
    for label, metric in (("NDCG@10", NDCG(k=10, debias_config=config)), ("MAP@10", MAP(k=10, debias_config=config)),
                          ("Precision@5", Precision(k=5, debias_config=config)),
                          ("Recall@10", Recall(k=10, debias_config=config))):
        assert ev.summary[label] == pytest.approx(metric.calc(reco_rt, inter), abs=1e-12), label


def test_debias_refuses_unseeded_and_bad_input():
    qrels, _ = _data()
    with pytest.raises(MetricsError, match="needs a seed"):
        mc.debias(qrels, seed=None)
    with pytest.raises(MetricsError, match="user_id and item_id"):
        mc.debias(qrels.rename(columns={"item_id": "x"}))


def test_explain_reads_the_debiased_ground_truth():
    from rectools import Columns
    from rectools.metrics import NDCG
    from rectools.metrics.debias import DebiasConfig

    qrels, reco = _data(2)
    ex = mc.explain(reco, qrels, metric="ndcg@10", presets=["rectools", "trec_eval"],
                    debias={"iqr_coef": 1.5, "seed": 5})
    reco_rt = reco.sort_values(["user_id", "score"], ascending=[True, False]).copy()
    reco_rt[Columns.Rank] = reco_rt.groupby("user_id").cumcount() + 1
    reco_rt = reco_rt.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    inter = qrels.rename(columns={"user_id": Columns.User, "item_id": Columns.Item})
    ref = NDCG(k=10, debias_config=DebiasConfig(iqr_coef=1.5, random_state=5)).calc(reco_rt, inter)
    assert ex.values.loc["rectools", "value"] == pytest.approx(ref, abs=1e-12)
