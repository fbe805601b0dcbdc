"""The sidebar's conventions and library presets (AppTest), and the pure helpers behind
the K notice, the segments and the needs-probabilities view.

Every number is checked against ``mc.evaluate`` called directly with the same preset
or keyword, and every table helper against a pandas computation written here.
"""

from __future__ import annotations

import _deadlines as deadlines
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from _apptest import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import demo, tables  # noqa: E402
from metrics_core.metrics.presets import settings as preset_settings  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


pytestmark = pytest.mark.usefixtures("private_store")


@pytest.fixture(scope="module")
def data() -> demo.DemoData:
    return demo.make_demo()


def app(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    for key, value in query.items():
        at.query_params[key] = str(value)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def ranking_table(at: AppTest) -> pd.DataFrame:
    for df in at.dataframe:
        if "ndcg@10" in df.value.columns:
            return df.value
    raise AssertionError("no ranking table")


def reference(data, **kw) -> dict[str, dict[str, float]]:
    return {name: mc.evaluate(run, data.qrels, metrics=["ndcg@10", "map@10", "precision@10"], **kw).summary
            for name, run in data.runs.items()}


def test_the_sidebar_draws_every_convention_as_declared():
    # one widget per convention of metrics_core.metrics.conventions: its label, its choices in order and its default
    from metrics_core.metrics.conventions import CONVENTIONS

    at = app()
    for c in CONVENTIONS:
        if c.is_number:
            widget = at.number_input(key=c.name)
        else:
            widget = at.selectbox(key=c.name)
            assert list(widget.options) == list(c.choices), c.name
        assert widget.label == c.label, c.name
        assert widget.value == c.default, c.name
    top = [w.key for w in at.sidebar.selectbox]
    assert top[:2] == ["gain", "ties"], "gain and ties sit at the top of the sidebar, under K"


def test_choosing_a_preset_sets_every_convention_and_the_numbers(data):
    at = app()
    at.selectbox(key="preset").set_value("rectools").run()
    assert not at.exception
    wanted = preset_settings("rectools")
    for key, value in wanted.items():
        widget = at.selectbox(key=key) if isinstance(value, str) else at.number_input(key=key)
        assert widget.value == value, key
    table = ranking_table(at)
    ref = reference(data, preset="rectools")
    for name in data.runs:
        for metric in ("ndcg@10", "map@10", "precision@10"):
            assert table.loc[name, metric] == pytest.approx(ref[name][metric], abs=1e-12)


def test_an_explicit_convention_overrides_the_preset(data):
    at = app()
    at.selectbox(key="preset").set_value("rectools").run()
    at.selectbox(key="ideal").set_value("judged").run()
    table = ranking_table(at)
    ref = reference(data, preset="rectools", ideal="judged")
    for name in data.runs:
        assert table.loc[name, "ndcg@10"] == pytest.approx(ref[name]["ndcg@10"], abs=1e-12)
    assert any("ideal" in c.value for c in at.sidebar.caption), "the override is stated"


def test_conventions_come_back_from_the_url(data):
    at = app(ap_norm="min_k", precision_norm="min_k", missing_users="exclude")
    assert at.selectbox(key="ap_norm").value == "min_k"
    table = ranking_table(at)
    ref = reference(data, ap_norm="min_k", precision_norm="min_k", missing_users="exclude")
    for name in data.runs:
        assert table.loc[name, "map@10"] == pytest.approx(ref[name]["map@10"], abs=1e-12)
        assert table.loc[name, "precision@10"] == pytest.approx(ref[name]["precision@10"], abs=1e-12)


def test_a_value_the_url_cannot_hold_falls_back_without_a_traceback():
    at = app(ap_norm="<script>", relevance_threshold="abc")
    assert not at.exception
    assert ranking_table(at) is not None


def test_summary_file_name_carries_every_setting():
    at = app(k=5, gain="exponential", ideal="k")
    button = [b for b in at.get("download_button") if "summary" in str(b.proto.label).lower()]
    assert button, "summary download"
    label = button[0].proto.label
    assert "k = 5" in label.lower().replace("k = 5", "k = 5") or "K = 5" in label
    assert "exponential" in label and "ideal = k" in label


# ----------------------------------------------------------------------------- pure helpers

def test_k_notice_matches_a_pandas_count():
    rng = np.random.default_rng(3)
    lengths = pd.Series(rng.integers(0, 40, size=500))
    for k in (5, 20, 30, 39, 41):
        served = lengths[lengths > 0]
        share = (served < k).mean()
        notice = tables.k_exceeds_lists(lengths.to_numpy(), k)
        if share > tables.K_NOTICE_SHARE:
            assert notice is not None and f"{share:.0%}" in notice and f"median length {served.median():,.0f}" in notice
        else:
            assert notice is None
    assert tables.k_exceeds_lists([0, 0], 10) is None


def test_segments_from_attributes_or_relevant_buckets(data):
    models = {n: mc.prepare(r, data.qrels) for n, r in list(data.runs.items())[:1]}
    ids = pd.Index(data.users["user_id"].astype(str)[:50].tolist() + ["not-a-user"])
    labels, name = tables.user_segments(ids, models, data.users, "segment")
    expected = data.users.assign(user_id=data.users["user_id"].astype(str)).set_index("user_id")["segment"]
    assert name == "segment"
    for uid in ids[:50]:
        assert labels[uid] == str(expected[uid])
    assert labels["not-a-user"] == "(missing)"
    buckets, bname = tables.user_segments(ids[:50], models, None, None)
    n_rel = data.qrels[data.qrels["relevance"] >= 1].assign(user_id=lambda d: d["user_id"].astype(str)) \
        .groupby("user_id").size()
    assert bname == "relevant items"
    for uid in ids[:50]:
        n = int(n_rel.get(uid, 0))
        want = "1" if n == 1 else "2-3" if n <= 3 else "4-7" if n <= 7 else "8-15" if n <= 15 else "16+"
        if n >= 1:
            assert buckets[uid] == want


def test_needs_probabilities_blanks_and_hides():
    wide = pd.DataFrame({"auc": [0.7, 0.8], "logloss": [0.5, 3.2], "pcopc": [1.1, 827.5]}, index=["p", "raw"])
    out, dropped, raw = tables.needs_probabilities_view(wide, {"p": True, "raw": False}, ["logloss", "pcopc"])
    assert raw == ["raw"] and dropped == []
    assert np.isnan(out.loc["raw", "logloss"]) and np.isnan(out.loc["raw", "pcopc"])
    assert out.loc["p", "logloss"] == 0.5 and out.loc["raw", "auc"] == 0.8
    out, dropped, raw = tables.needs_probabilities_view(wide, {"p": False, "raw": False}, ["logloss", "pcopc"])
    assert dropped == ["logloss", "pcopc"] and list(out.columns) == ["auc"]


def test_scores_on_the_relevance_scale():
    assert tables.scores_on_relevance_scale([0.1, 0.9], [0, 1])
    assert tables.scores_on_relevance_scale([0.0, 2.5], [0, 1, 2, 3])
    assert not tables.scores_on_relevance_scale([5.0, 11.0], [0, 1, 2, 3])
    assert not tables.scores_on_relevance_scale([-0.5, 0.4], [0, 1])
    assert not tables.scores_on_relevance_scale([], [0, 1])
    # graded relevance: similarities in [0, 1] are not predicted grades
    assert not tables.scores_on_relevance_scale([0.1, 0.9], [0, 1, 2, 3])


def test_error_metrics_follow_the_choice():
    on_scale = {"a": True, "b": False}
    auto, always, never = tables.ERROR_METRICS_WHEN
    assert tables.error_metrics_shown(on_scale, auto) == on_scale
    assert tables.error_metrics_shown(on_scale, always) == {"a": True, "b": True}
    assert tables.error_metrics_shown(on_scale, never) == {"a": False, "b": False}
