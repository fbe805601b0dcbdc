"""The dashboard's demo data and state helpers, checked without a browser."""

from __future__ import annotations

import numpy as np
import pytest
import pandas as pd

import metrics_core as mc
from dashboard import demo, state


def test_demo_is_deterministic_and_shaped_as_promised():
    a = demo.make_demo(n_users=400, n_items=300, list_length=30)
    b = demo.make_demo(n_users=400, n_items=300, list_length=30)
    for name in demo.MODEL_NAMES:
        pd.testing.assert_frame_equal(a.runs[name], b.runs[name])
    pd.testing.assert_frame_equal(a.qrels, b.qrels)
    assert list(a.runs) == list(demo.MODEL_NAMES)
    assert set(a.qrels["relevance"].unique()) == {0, 1, 2, 3}
    assert set(a.users["segment"]) == set(demo.SEGMENTS)
    assert list(a.item_features.columns) == ["item_id"] + [f"f{j}" for j in range(demo.N_FEATURES)]
    for run in a.runs.values():
        assert (run.groupby("user_id").size() == 30).all()
        assert run["score"].between(0, 1).all()
        assert not run.duplicated(["user_id", "item_id"]).any()
    # the popularity baseline ties many scores, the learned models almost none
    assert a.runs["popularity"]["score"].nunique() < 40
    assert a.runs["two_tower"]["score"].nunique() > 0.9 * len(a.runs["two_tower"])


def test_default_demo_size_and_quality_order():
    d = demo.make_demo()
    assert d.users.shape[0] >= 2000
    nd = {n: mc.evaluate(r, d.qrels, metrics=["ndcg@10"]).summary["ndcg@10"] for n, r in d.runs.items()}
    assert nd["popularity"] + 0.05 < nd["matrix_factorization"] < nd["two_tower"] - 0.05


def test_write_demo_files_round_trip(tmp_path):
    d = demo.make_demo(n_users=50, n_items=80, list_length=10)
    paths = demo.write_demo_files(tmp_path, d)
    back = pd.read_csv(paths["two_tower"], dtype={"user_id": str, "item_id": str})
    np.testing.assert_allclose(back["score"], d.runs["two_tower"]["score"], atol=5e-7)
    assert back["user_id"].tolist() == d.runs["two_tower"]["user_id"].tolist()


def test_model_name_strips_known_extensions():
    assert state.model_name("runs/bm25.trec.gz") == "bm25"
    assert state.model_name("two_tower.csv") == "two_tower"
    assert state.model_name("model.v2.parquet") == "model.v2"
    assert state.model_name("C:\\x\\ctr.jsonl.gz") == "ctr"


def test_blob_key_is_content_hash_plus_mapping():
    a = state.Blob.of("a.csv", b"user_id,item_id,score\n")
    b = state.Blob.of("b.csv", b"user_id,item_id,score\n")
    c = state.Blob.of("a.csv", b"user_id,item_id,score\n", {"user_id": "u"})
    assert a.key == b.key != c.key
    import hashlib
    assert a.sha256 == hashlib.sha256(b"user_id,item_id,score\n").hexdigest()


def test_per_user_reshaping_helpers_match_pandas():
    d = demo.make_demo(n_users=200, n_items=150, list_length=20, seed=3)
    evals = {n: mc.evaluate(r, d.qrels, metrics=["ndcg@10"]) for n, r in d.runs.items()}
    long = state.per_user_long(evals, "ndcg@10")
    assert len(long) == sum(e.n_users for e in evals.values())
    summ = state.distribution_summary(long)
    for n, e in evals.items():
        v = e.per_user["ndcg@10"]
        assert summ.loc[n, "mean"] == pytest.approx(e.summary["ndcg@10"], abs=1e-12)
        assert summ.loc[n, "share at 0"] == (v == 0).mean()
    worst = state.worst_users(evals["two_tower"], "ndcg@10", 15)
    v = evals["two_tower"].per_user["ndcg@10"]
    assert worst["ndcg@10"].tolist() == sorted(v)[:15]
    n_rel = d.qrels[d.qrels.relevance >= 1].groupby("user_id").size()
    assert (worst["relevant items"].to_numpy() == n_rel.loc[worst["user_id"]].to_numpy()).all()
