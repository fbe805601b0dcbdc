"""The dashboard's demo data and state helpers, checked without a browser."""

from __future__ import annotations

import numpy as np
import pytest
import pandas as pd

import metrics_core as mc
from dashboard import demo, sources, state, triage


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
    assert sources.model_name("runs/bm25.trec.gz") == "bm25"
    assert sources.model_name("two_tower.csv") == "two_tower"
    assert sources.model_name("model.v2.parquet") == "model.v2"
    assert sources.model_name("C:\\x\\ctr.jsonl.gz") == "ctr"


def test_blob_key_is_content_hash_plus_mapping():
    a = sources.Blob.of("a.csv", b"user_id,item_id,score\n")
    b = sources.Blob.of("b.csv", b"user_id,item_id,score\n")
    c = sources.Blob.of("a.csv", b"user_id,item_id,score\n", {"user_id": "u"})
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


def test_failures_table_on_real_evaluations_matches_pandas():
    """The Failures page's table, fed as the page feeds it (list lengths and relevant counts
    of the prepared run), against counts taken from the input frames with pandas."""
    d = demo.make_demo(n_users=200, n_items=150, list_length=20, seed=3)
    evals = {n: mc.evaluate(r, d.qrels, metrics=["ndcg@10", "hit_rate@10"]) for n, r in d.runs.items()}
    ranked = evals["two_tower"].ranked
    ids = ranked.user_ids.astype(str)
    table = triage.triage_table({n: e.per_user for n, e in evals.items()}, "two_tower", "ndcg@10", "hit_rate@10",
                                pd.Series(ranked.list_lengths, index=ids),
                                pd.Series(ranked.n_relevant(1), index=ids)).set_index("user_id")
    v = evals["two_tower"].per_user["ndcg@10"]
    assert sorted(table.index) == sorted(v.index.astype(str))
    assert np.array_equal(table.loc[v.index.astype(str), "ndcg@10"].to_numpy(), v.to_numpy())
    n_rel = d.qrels[d.qrels.relevance >= 1].groupby("user_id").size()
    lengths = d.runs["two_tower"].groupby("user_id").size()
    users = table.index.to_numpy()
    assert (table["relevant items"].to_numpy() == n_rel.reindex(users).to_numpy()).all()
    assert (table["list length"].to_numpy() == lengths.reindex(users, fill_value=0).to_numpy()).all()
