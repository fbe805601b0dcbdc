"""A segment where a challenger loses, selected on the Brief, opens Compare on that attribute's
segments, where the same row carries the same lift, adjusted p and count (one family of segment
tests on every surface; Compare shows them without building the brief). Reference for the loss itself: the new users' nDCG@10 means computed here
with metrics_core's plain per-user evaluation are lower for the reranker than for two_tower."""

from __future__ import annotations

import io
from pathlib import Path

import _deadlines as deadlines
import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from dashboard import demo  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def _scenario() -> dict[str, bytes]:
    """two_tower, and a reranker that lifts the relevant items of every user but the 'new' ones,
    whose lists it shuffles: better overall, worse for the new users."""
    d = demo.make_demo(n_users=300, n_items=150, list_length=15, seed=21)
    segment = d.users.set_index("user_id")["segment"]
    new = set(segment.index[segment == "new"])
    rr = d.runs["two_tower"].copy()
    worse = rr["user_id"].isin(new)
    rr.loc[worse, "score"] = np.random.default_rng(3).random(int(worse.sum()))
    relevant = set(map(tuple, d.qrels.loc[d.qrels["relevance"] > 0, ["user_id", "item_id"]].to_numpy()))
    lifted = np.array([(u, i) in relevant for u, i in zip(rr["user_id"], rr["item_id"])]) & ~worse.to_numpy()
    rr.loc[lifted, "score"] += 1.0
    return {"two_tower.csv": demo.to_csv_bytes(d.runs["two_tower"]), "reranker.csv": demo.to_csv_bytes(rr),
            "qrels.csv": demo.to_csv_bytes(d.qrels), "users.csv": d.users.to_csv(index=False).encode()}


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def _table(at: AppTest, column: str) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if column in df.value.columns)


def test_a_segment_loss_on_the_brief_opens_the_same_row_on_compare(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    files = _scenario()
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["compare_baseline"] = "two_tower"
    _ok(at.run())
    _ok(at.switch_page("views/data.py").run())
    at.file_uploader(key="upload_runs_0").set_value(
        [(n, files[n], "text/csv") for n in ("two_tower.csv", "reranker.csv")])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", files["qrels.csv"], "text/csv"))
    at.file_uploader(key="upload_attributes_0").set_value(("users.csv", files["users.csv"], "text/csv"))
    _ok(at.run())
    # Compare first: its segment rows come alone (the brief's cache entry), without building the brief
    from metrics_core.brief import build

    built = []
    monkeypatch.setattr(build, "build_brief", lambda *a, _built=build.build_brief, **k: built.append(1) or _built(*a, **k))
    _ok(at.switch_page("views/compare.py").run())
    assert built == [] and any({"segment", "users paired"} <= set(df.value.columns) for df in at.dataframe)
    _ok(at.switch_page("views/brief.py").run())
    assert built  # the Brief page builds it
    losses = _table(at, "lift [95% CI]")
    assert len(losses) >= 1 and losses.iloc[0]["challenger"] == "reranker", losses
    loss = losses.iloc[0]
    attribute, value = loss["segment"].split(": ", 1)
    assert (attribute, value) == ("segment", "new")
    import metrics_core as mc
    qrels = pd.read_csv(io.BytesIO(files["qrels.csv"]), dtype={"user_id": str, "item_id": str})
    new = set(pd.read_csv(io.BytesIO(files["users.csv"]), dtype=str).query("segment == 'new'")["user_id"])
    means = {m: mc.evaluate(pd.read_csv(io.BytesIO(files[f"{m}.csv"]), dtype={"user_id": str, "item_id": str}),
                            qrels, metrics=["ndcg@10"]).per_user["ndcg@10"].loc[lambda s: s.index.isin(new)].mean()
             for m in ("two_tower", "reranker")}
    assert means["reranker"] < means["two_tower"]

    at.session_state["brief_segments"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    _ok(at.run())
    assert any("Compare" in t.value for t in at.title), [t.value for t in at.title]
    assert at.selectbox(key="compare_segment").value == attribute
    segment_tables = [df.value for df in at.dataframe if {"segment", "users paired"} <= set(df.value.columns)]
    assert len(segment_tables) == 1, ([list(df.value.columns) for df in at.dataframe], [c.value for c in at.caption])
    rows = segment_tables[0]
    same = rows[(rows["segment"] == value) & (rows["challenger"] == loss["challenger"])]
    assert len(same) == 1, rows
    assert (same.iloc[0]["lift [95% CI]"], same.iloc[0]["adjusted p"], same.iloc[0]["users paired"]) == (
        loss["lift [95% CI]"], loss["adjusted p"], loss["users"])
