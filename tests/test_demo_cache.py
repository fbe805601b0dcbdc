"""The demo's disk cache: a restarted server reads back what the first one built, exactly; a
change of the sources gives a new file; a file that cannot be read or written costs time only."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo, demo_cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_cache.cache_stamp, "folder", lambda: tmp_path)
    return tmp_path


def small_demo() -> demo.DemoData:
    return demo.make_demo(n_users=40, n_items=60, list_length=10)


def refuse():
    raise AssertionError("computed although a current file is on disk")


def assert_same_demo(a: demo.DemoData, b: demo.DemoData) -> None:
    assert list(a.runs) == list(b.runs)
    for name in a.runs:
        pd.testing.assert_frame_equal(a.runs[name], b.runs[name])
    for field in ("qrels", "item_features", "users"):
        pd.testing.assert_frame_equal(getattr(a, field), getattr(b, field))
    assert a.params == b.params


def test_the_second_call_reads_what_the_first_wrote(folder):
    built = demo_cache.cached("data", small_demo)
    assert len(list(folder.glob(f"{demo_cache.PREFIX}data-*.pkl"))) == 1
    assert_same_demo(demo_cache.cached("data", refuse), built)
    assert_same_demo(built, small_demo())


def test_other_sources_compute_anew_and_replace_the_old_file(folder, monkeypatch):
    demo_cache.cached("data", small_demo)
    monkeypatch.setattr(demo_cache, "_digest", lambda: "changed")
    calls = []
    demo_cache.cached("data", lambda: calls.append(1) or small_demo())
    assert calls == [1]
    assert [p.name for p in folder.glob(f"{demo_cache.PREFIX}data-*.pkl")] == [f"{demo_cache.PREFIX}data-changed.pkl"]


def test_a_source_file_touched_changes_the_digest(folder, monkeypatch, tmp_path):
    before = demo_cache._digest()
    monkeypatch.setattr(demo_cache.cache_stamp, "fingerprint", lambda: "other sources")
    assert demo_cache._digest() != before


def test_a_damaged_file_is_computed_again(folder):
    demo_cache.cached("data", small_demo)
    path = next(folder.glob(f"{demo_cache.PREFIX}data-*.pkl"))
    path.write_bytes(path.read_bytes()[:100])
    assert_same_demo(demo_cache.cached("data", small_demo), small_demo())
    assert_same_demo(demo_cache.cached("data", refuse), small_demo())  # rewritten whole


def test_an_unwritable_folder_only_costs_the_computation(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(demo_cache.cache_stamp, "folder", lambda: blocker / "sub")
    assert_same_demo(demo_cache.cached("data", small_demo), small_demo())
    monkeypatch.setattr(demo_cache.cache_stamp, "folder", lambda: None)
    assert_same_demo(demo_cache.cached("data", small_demo), small_demo())


@pytest.mark.parametrize("touch", [False, True], ids=["fresh", "lazy-parts-built"])
def test_a_prepared_model_read_back_evaluates_exactly_as_the_original(touch):
    """A Ranked survives the pickle round trip the cache makes: the same numbers, per user, for
    ranking, scored-row and beyond-accuracy metrics (also once its lazily built parts exist)."""
    d = small_demo()
    ranked = mc.prepare(d.runs["two_tower"], d.qrels, name="two_tower")
    if touch:
        ranked.row, ranked.item, ranked.score, ranked.q_rel  # noqa: B018 - builds the lazy parts
    again = pickle.loads(pickle.dumps(ranked, protocol=pickle.HIGHEST_PROTOCOL))
    metrics = ["ndcg@5", "map@10", "mrr", "auc", "logloss", "coverage@5", "novelty@5", "ils@5"]
    a = mc.evaluate(ranked, metrics=metrics, item_features=d.item_features)
    b = mc.evaluate(again, metrics=metrics, item_features=d.item_features)
    assert a.summary == pytest.approx(b.summary, nan_ok=True, rel=0, abs=0)
    pd.testing.assert_frame_equal(a.per_user, b.per_user)
    assert np.array_equal(again.row, ranked.row) and list(again.item_ids) == list(ranked.item_ids)
