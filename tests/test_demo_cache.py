"""The demo's disk cache: a restarted server reads back what the first one built, exactly; a
change of the sources gives a new file; a file that cannot be read or written costs time only."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo, demo_cache


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_cache.cache_stamp, "folder", lambda: tmp_path)
    digest = demo_cache._digest  # read once per process: each test starts as a new server
    digest.cache_clear()
    yield tmp_path
    digest.cache_clear()


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
    assert demo_cache._digest() == before  # read once per process: the sources this process imported
    demo_cache._digest.cache_clear()  # a restarted server
    assert demo_cache._digest() != before


def test_a_result_is_read_back_under_its_key_only(folder):
    first = demo_cache.result("evaluate|a", lambda: {"ndcg@10": 0.25})
    assert demo_cache.result("evaluate|a", refuse) == first == {"ndcg@10": 0.25}
    assert demo_cache.result("evaluate|b", lambda: {"ndcg@10": 0.5}) == {"ndcg@10": 0.5}
    assert len(list(folder.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl"))) == 2


def test_a_changed_source_computes_a_result_again(folder, monkeypatch):
    """A kernel or the demo module changed: the stamp's fingerprint (or the demo's source) differs,
    so the result kept by the previous code is not read, and its file is replaced."""
    demo_cache.result("evaluate|a", lambda: 1)
    monkeypatch.setattr(demo_cache.cache_stamp, "fingerprint", lambda: "a kernel was edited")
    demo_cache._digest.cache_clear()
    assert demo_cache.result("evaluate|a", lambda: 2) == 2
    assert demo_cache.result("evaluate|a", refuse) == 2
    assert len(list(folder.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl"))) == 1


def test_a_changed_demo_module_computes_a_result_again(folder, monkeypatch, tmp_path):
    demo_cache.result("evaluate|a", lambda: 1)
    edited = tmp_path / "demo_edited.py"
    edited.write_bytes(Path(demo.__file__).read_bytes() + b"\n# another seed\n")
    monkeypatch.setattr(demo, "__file__", str(edited))
    demo_cache._digest.cache_clear()
    assert demo_cache.result("evaluate|a", lambda: 2) == 2


def test_only_the_most_recently_used_results_are_kept(folder, monkeypatch):
    monkeypatch.setattr(demo_cache, "MAX_RESULTS", 3)
    paths = {}
    for i in range(3):
        demo_cache.result(f"key{i}", lambda i=i: i)
        paths[i] = max(folder.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl"), key=lambda p: p.stat().st_mtime_ns)
    for i, path in paths.items():  # last used in the order key0, key1, key2, long ago
        os.utime(path, ns=(i + 1, i + 1))
    assert demo_cache.result("key0", refuse) == 0  # used again: now the most recent
    demo_cache.result("key3", lambda: 3)  # a fourth: the least recently used one (key1) is removed
    assert len(list(folder.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl"))) == 3
    assert [demo_cache.result(f"key{i}", refuse) for i in (0, 2, 3)] == [0, 2, 3]
    recomputed = []
    assert demo_cache.result("key1", lambda: recomputed.append(1) or 1) == 1
    assert recomputed == [1]


def drawn(figure) -> dict:
    """A figure's specification without its empty entries (which draw nothing)."""
    def prune(value):
        if isinstance(value, dict):
            kept = {k: prune(v) for k, v in value.items()}
            return {k: v for k, v in kept.items() if v not in ({}, None)}
        return [prune(v) for v in value] if isinstance(value, list) else value
    return prune(figure.to_dict())


def test_a_demo_figure_is_kept_on_disk_and_a_restarted_server_draws_it_without_building(folder, monkeypatch):
    from dashboard import cache, compute
    from metrics_core.outputs.plot.figures import metric_vs_k

    long = pd.DataFrame([(m, metric, k, (k * 7 % 11) / 11) for m in ("a", "b") for metric in ("ndcg", "map")
                         for k in range(1, 6)], columns=["model", "metric", "k", "value"])
    colors = {"a": "#2563eb", "b": "#dc2626"}
    files = lambda: list(folder.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl"))  # noqa: E731
    monkeypatch.setattr(compute, "showing_demo", lambda: True)
    cache.SHARED.clear()
    first = compute.cached_figure("metric_vs_k", long, metric_vs_k, colors)
    assert len(files()) == 1
    cache.SHARED.clear()  # a restarted server: nothing in memory
    again = compute.cached_figure("metric_vs_k", long, lambda *_: refuse(), colors)
    # the same figure (an empty layout entry such as the absent title is not kept by pickle)
    assert drawn(again) == drawn(first) == drawn(metric_vs_k(long, colors))
    # a figure of uploaded data stays in memory only
    monkeypatch.setattr(compute, "showing_demo", lambda: False)
    compute.cached_figure("metric_vs_k", long.assign(value=long["value"] / 2), metric_vs_k, colors)
    assert len(files()) == 1
    cache.SHARED.clear()


def test_a_demo_figure_is_read_back_without_validating_it_again_unless_another_plotly_built_it(folder):
    import plotly
    from plotly.basedatatypes import BaseFigure

    from dashboard import stored_figure
    from metrics_core.outputs.plot.figures import summary_bars

    cis = pd.DataFrame([("a", "ndcg@10", 0.3, 0.25, 0.35), ("b", "ndcg@10", 0.4, 0.3, 0.5)],
                       columns=["model", "metric", "value", "ci_low", "ci_high"])
    built = summary_bars(cis, "ndcg@10", {"a": "#2563eb", "b": "#dc2626"})
    demo_cache.result("figure", lambda: built)
    [path] = folder.glob(f"{demo_cache.PREFIX}{demo_cache.RESULT}*.pkl")
    with open(path, "rb") as f:
        kept = pickle.load(f)
    assert isinstance(kept, stored_figure.StoredFigure) and kept.plotly_version == plotly.__version__
    again = demo_cache.result("figure", refuse)
    assert type(again) is type(built) and again is not built and again._validate is False
    assert again.to_dict() == built.to_dict() and drawn(again) == drawn(built)
    # what plotly itself would rebuild from a pickle
    assert again.to_dict() == pickle.loads(pickle.dumps(built)).to_dict()
    # anything else is written and read as it is
    assert stored_figure.stored(cis) is cis and stored_figure.restored(cis) is cis
    # kept by another plotly: validated as it is rebuilt (a value this plotly refuses is refused)
    odd = {**kept.properties, "layout": {**kept.properties["layout"], "height": "tall"}}
    assert isinstance(stored_figure.restored(stored_figure.StoredFigure(kept.figure_class, odd, plotly.__version__)),
                      BaseFigure)
    with pytest.raises(ValueError, match="height"):
        stored_figure.restored(stored_figure.StoredFigure(kept.figure_class, odd, "0.0.0"))
