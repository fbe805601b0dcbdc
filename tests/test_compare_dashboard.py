"""AppTest checks of the Compare and Share pages against metrics_core called directly."""

from __future__ import annotations

import _deadlines as deadlines
import io
import re
from functools import lru_cache
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest

pytest.importorskip("streamlit")
from _apptest import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import brief_text, demo, text  # noqa: E402
from metrics_core.store import AnalysisStore  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
TIMEOUT = deadlines.SCRIPT_RUN
XSS = "<img src=x onerror=alert(1)>"


@lru_cache(maxsize=1)
def files() -> dict[str, bytes]:
    """Small demo data as uploaded files; one model carries a hostile name and two_tower
    serves only 92% of the users."""
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=7)
    names = {"popularity": "popularity", "matrix_factorization": XSS, "two_tower": "two_tower"}
    runs = dict(d.runs)
    users = runs["two_tower"]["user_id"].drop_duplicates()
    dropped = set(users.sample(frac=0.08, random_state=1))
    runs["two_tower"] = runs["two_tower"][~runs["two_tower"]["user_id"].isin(dropped)]
    out = {f"{names[n]}.csv": demo.to_csv_bytes(run) for n, run in runs.items()}
    out["qrels.csv"] = demo.to_csv_bytes(d.qrels)
    return out


def frame(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype={"user_id": str, "item_id": str})


def reference(metrics, **kw) -> dict[str, mc.Evaluation]:
    f = files()
    qrels = frame(f["qrels.csv"])
    return {name[:-4]: mc.evaluate(frame(data), qrels, metrics=metrics, **kw)
            for name, data in f.items() if name != "qrels.csv"}


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def uploaded_app(monkeypatch, tmp_path, **query) -> AppTest:
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = str(v)
    ok(at.switch_page("views/data.py").run())  # the URL seeds the bound sidebar controls on this first run
    f = files()
    at.file_uploader(key="upload_runs_0").set_value(
        [(name, data, "text/csv") for name, data in f.items() if name != "qrels.csv"])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", f["qrels.csv"], "text/csv"))
    return ok(at.run())


def frame_with(at: AppTest, column: str) -> pd.DataFrame:
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no dataframe with {column!r}")


def _served(name: str) -> set[str]:
    return set(frame(files()[f"{name}.csv"])["user_id"])


def test_compare_page_matches_metrics_core_and_scipy(monkeypatch, tmp_path):
    from scipy.stats import ttest_rel, wilcoxon

    at = uploaded_app(monkeypatch, tmp_path)
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    ok(at.multiselect(key="compare_metrics").set_value(["ndcg@10", "recall@10"]).run())
    ok(at.selectbox(key="compare_correction").set_value("bh").run())
    shown = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    assert "p_wilcoxon" not in shown.columns and "p_randomization" not in shown.columns  # only the chosen test
    ev = reference(["ndcg@10", "recall@10"])
    served = {name: _served(name) for name in ("popularity", "two_tower")}
    # users counted "all" (the default): every evaluated user is paired, a missing list scores 0
    a, b = ev["popularity"].per_user["ndcg@10"], ev["two_tower"].per_user["ndcg@10"]
    assert shown.loc[("ndcg@10", "two_tower"), "n"] == len(a)
    assert shown.loc[("ndcg@10", "two_tower"), "diff"] == pytest.approx(b.mean() - a.mean(), abs=1e-12)
    verdict_rows = frame_with(at, "lift [95% CI]")
    assert len(verdict_rows) == 4 and set(verdict_rows["verdict"]) <= {"▲ better", "▼ worse",
                                                                      "– no significant difference"}
    assert all(not p.startswith(("0.0000", "1e", "2e")) for p in verdict_rows["adjusted p"])
    assert any(m.value.startswith("- two\\_tower is") for m in at.markdown)
    unserved = len(a) - len(served["two_tower"] & set(a.index.astype(str)))
    assert any(f"two\\_tower did not serve {unserved} of the {len(a)} evaluated users" in m.value
               for m in at.markdown if m.value.startswith("- "))
    # users counted "served" (sidebar): only the users every model served are paired
    ok(at.selectbox(key="users").set_value("served").run())
    shown = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    for metric in ("ndcg@10", "recall@10"):
        a, b = ev["popularity"].per_user[metric], ev["two_tower"].per_user[metric]
        both = sorted(set(a.index.astype(str)) & served["popularity"] & served["two_tower"])
        a, b = a.loc[both], b.loc[both]
        row = shown.loc[(metric, "two_tower")]
        assert row["n"] == len(both) < len(ev["popularity"].per_user)
        assert row["diff"] == pytest.approx(b.mean() - a.mean(), abs=1e-12)
        assert row["lift"] == pytest.approx(b.mean() / a.mean() - 1, abs=1e-12)
        assert row["p_value"] == pytest.approx(ttest_rel(b, a).pvalue, rel=1e-9, abs=1e-300)
    a, b = (ev[name].per_user["ndcg@10"].loc[both] for name in ("popularity", "two_tower"))
    # the chosen test only: Wilcoxon
    ok(at.selectbox(key="compare_test").set_value("wilcoxon").run())
    shown = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    assert "p_t" not in shown.columns
    assert shown.loc[("ndcg@10", "two_tower"), "p_value"] == pytest.approx(wilcoxon(b - a).pvalue, rel=1e-9)
    assert len(at.get("plotly_chart")) == 4
    # the regressions list: largest loss first, then a click opens the Failures page on that user
    ok(at.selectbox(key="compare_focus_model").set_value("two_tower").run())
    worst = next(df.value for df in at.dataframe if {"user_id", "difference"} <= set(df.value.columns))
    d = (b - a).dropna()
    assert worst["difference"].iloc[0] == pytest.approx(d.min(), abs=1e-12)
    assert (worst["difference"] < 0).all() and worst["difference"].is_monotonic_increasing
    first_user = worst["user_id"].iloc[0]
    at.session_state["compare_regressions"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    ok(at.run())
    assert at.selectbox(key="failures_model").value == "two_tower"
    assert at.selectbox(key="failures_other").value == "popularity"  # the baseline it was compared with
    assert any(f"User {first_user}" in h.value for h in at.subheader)


def test_a_row_picked_in_the_per_user_section_opens_failures_before_compare_is_drawn(monkeypatch, tmp_path):
    """A regression row picked in the per-user section alone (a fragment) asks for a run of the whole
    page (the sidebar's gain and K are part of it and stay in the URL): that run opens Failures on the
    user before anything of Compare is computed or drawn."""
    from dashboard import comparisons
    from dashboard.page import _FOCUS

    at = uploaded_app(monkeypatch, tmp_path, k=5, gain="exponential")
    ok(at.switch_page("views/compare.py").run())
    worst = next(df.value for df in at.dataframe if {"user_id", "difference"} <= set(df.value.columns))
    user = worst["user_id"].iloc[1]
    # what the section's run leaves for the whole page's run (views/compare.py, _DRILL_USER)
    at.session_state[_FOCUS] = ("two_tower", user, "popularity")
    at.session_state["mcd_compare_drill_user"] = user
    calls = []
    monkeypatch.setattr(comparisons, "comparison", lambda *a, **kw: calls.append(a) or pytest.fail("compared"))
    ok(at.run())
    assert calls == []  # nothing of Compare was computed
    assert any(f"User {user}" in h.value for h in at.subheader)
    assert at.selectbox(key="failures_model").value == "two_tower"
    assert at.selectbox(key="failures_other").value == "popularity"
    assert not any("Compare models" in t.value for t in at.title)
    assert at.query_params["k"] == "5" and at.query_params["gain"] == "exponential"
    assert at.query_params["user"] == str(user)


def test_uploads_are_a_working_copy_named_in_the_url(monkeypatch, tmp_path):
    at = uploaded_app(monkeypatch, tmp_path, k=5, gain="exponential")
    aid = at.query_params["analysis"]
    saved = AnalysisStore(tmp_path / "store").load(aid)
    assert saved.kind == "working" and saved.settings["kind"] == "working copy"
    assert {f.name: f.data for f in saved.files} == files()
    # another browser opening the same URL sees the same data and settings
    at2 = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in {"analysis": aid, "k": "5", "gain": "exponential"}.items():
        at2.query_params[key] = value
    ok(at2.run())
    table = frame_with(at2, "ndcg@5").set_index("model") if "model" in frame_with(at2, "ndcg@5").columns \
        else frame_with(at2, "ndcg@5")
    ev = reference(["ndcg@5"], gain="exponential")
    assert sorted(table.index) == sorted(ev)
    for name, e in ev.items():
        assert table.loc[name, "ndcg@5"] == pytest.approx(e.summary["ndcg@5"], abs=1e-12)
    # navigating keeps the id
    ok(at2.switch_page("views/compare.py").run())
    assert at2.query_params["analysis"] == aid
    # a change updates the same working copy (the URL keeps its id)
    ok(at.button(key="remove_popularity").click().run())
    assert at.query_params["analysis"] == aid
    changed = AnalysisStore(tmp_path / "store").load(aid)
    assert sorted(f.name for f in changed.files) == sorted(n for n in files() if n != "popularity.csv")


def test_share_snapshot_reopen_report_and_exports(monkeypatch, tmp_path):
    at = uploaded_app(monkeypatch, tmp_path, k=5, gain="exponential")
    ok(at.switch_page("views/share.py").run())
    at.text_input(key="share_title").input("Two-tower *against* [baseline](http://x/)")
    at.text_area(key="share_notes").input("line one\nline two")
    at.button[[b.label for b in at.button].index("Share: create a read-only link")].click()
    ok(at.run())
    link, delete_link = at.code[0].value, at.code[1].value
    assert "opens on the Brief" in at.success[0].value  # where the fresh session below opens
    assert link.startswith("/?") or "/?analysis=" in link
    query = parse_qs(urlparse(link).query)
    sid = query["analysis"][0]
    assert query["k"] == ["5"] and query["gain"] == ["exponential"]
    saved = AnalysisStore(tmp_path / "store").load(sid)
    assert saved.kind == "snapshot" and saved.title == "Two-tower *against* [baseline](http://x/)"
    assert saved.notes == "line one\nline two"
    assert saved.settings["view"]["k"] == "5" and saved.settings["view"]["gain"] == "exponential"
    assert {f.name: f.data for f in saved.files} == files()

    # per-user export = metrics_core per-user values of every model
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download per-user CSV" in labels and "Download per-user Parquet" in labels
    ev = reference(["ndcg@5", "recall@5"], gain="exponential")
    preview = frame_with(at, "user_id")
    assert set(preview["model"]) <= set(ev) and len(preview) == 200
    for _, row in preview.iterrows():
        pu = ev[row["model"]].per_user
        assert row["ndcg@5"] == pytest.approx(pu.loc[row["user_id"], "ndcg@5"], abs=1e-12)
        assert row["recall@5"] == pytest.approx(pu.loc[row["user_id"], "recall@5"], abs=1e-12)
    ok(at.button(key="share_build_report").click().run())
    report = at.session_state["share_report_html"].decode()
    assert XSS not in report and "&lt;img src=x onerror=alert(1)&gt;" in report
    assert f"{ev['two_tower'].summary['ndcg@5']:.4f}" in report

    # a fresh session opening only the id gets the data, the saved settings, title and notes
    at2 = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at2.query_params["analysis"] = sid
    ok(at2.run())
    # a snapshot opens on its brief: its title and notes, then the decision
    assert at2.title[0].value == text.md(saved.title)
    assert at2.text[0].value == "line one\nline two"
    assert any("than popularity on ndcg@5" in m.value.replace("\\", "") for m in at2.markdown)
    assert at2.session_state["k"] == 5 and at2.session_state["gain"] == "exponential"
    ok(at2.switch_page("views/overview.py").run())
    assert at2.title[0].value == "Overview"
    assert at2.subheader[0].value == text.md(saved.title)
    table = frame_with(at2, "ndcg@5").set_index("model") if "model" in frame_with(at2, "ndcg@5").columns \
        else frame_with(at2, "ndcg@5")
    for name, e in ev.items():
        assert table.loc[name, "ndcg@5"] == pytest.approx(e.summary["ndcg@5"], abs=1e-12)

    query = parse_qs(urlparse(delete_link).query)
    # the delete link stays on the page (never in the URL) until the user dismisses it
    ok(at.run())
    assert [c.value for c in at.code] == [link, delete_link]
    assert "delete" not in at.query_params
    assert all(query["delete"][0] not in str(v) for v in dict(at.query_params).values())
    ok(at.button(key="share_delete_saved").click().run())
    assert [c.value for c in at.code] == [link]
    ok(at.run())
    assert [c.value for c in at.code] == [link]
    # it deletes the snapshot for everyone
    at3 = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at3.query_params["analysis"] = sid
    at3.query_params["delete"] = "x" * 43
    ok(at3.switch_page("views/share.py").run())
    ok(at3.button(key="share_delete").click().run())
    assert at3.error and AnalysisStore(tmp_path / "store").exists(sid)  # a wrong token deletes nothing
    at4 = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at4.query_params["analysis"] = sid
    at4.query_params["delete"] = query["delete"][0]
    ok(at4.switch_page("views/share.py").run())
    ok(at4.button(key="share_delete").click().run())
    assert not AnalysisStore(tmp_path / "store").exists(sid)


@pytest.mark.parametrize("bad, message", [("../../etc/passwd", "malformed analysis id"),
                                          ("A" * 32, "no saved analysis")])
def test_share_bad_ids_are_messages(monkeypatch, tmp_path, bad, message):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["analysis"] = bad
    ok(at.switch_page("views/overview.py").run())
    assert any(message in e.value for e in at.error)
    ok(at.switch_page("views/curves.py").run())  # still said on the next page
    assert any(message in e.value for e in at.error)
    assert not any("http" in e.value.replace("\\", "").replace("\u200b", "") for e in at.error)


def test_many_users_show_the_normal_approximation_then_the_sign_flips(monkeypatch, tmp_path):
    """Above the foreground size the page answers with the normal approximation of the
    randomization test, says so, and shows the Monte Carlo p-values once the server has them."""
    from dashboard import background, cache, comparisons
    from metrics_core.analysis import stats

    cache.SHARED.clear()
    monkeypatch.setattr(background, "FOREGROUND_USERS", 50)
    # the sign flips not computed ahead (a choice made before the server thread has them)
    monkeypatch.setattr(comparisons, "_prefetch_sign_flips", lambda *args, **kwargs: None)
    at = uploaded_app(monkeypatch, tmp_path, users="served")
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    ok(at.selectbox(key="compare_test").set_value("randomization").run())
    ev = reference(["ndcg@10"])
    a, b = ev["popularity"].per_user["ndcg@10"], ev["two_tower"].per_user["ndcg@10"]
    both = sorted(set(a.index.astype(str)) & _served("popularity") & _served("two_tower"))  # users counted: served
    a, b = a.loc[both].to_numpy(), b.loc[both].to_numpy()
    quick = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    assert any("normal approximation" in c.value and "updates itself" in c.value for c in at.caption)
    assert quick.loc[("ndcg@10", "two_tower"), "n"] == len(both)
    assert quick.loc[("ndcg@10", "two_tower"), "p_value"] == pytest.approx(
        stats.randomization_test(a, b, n_resamples=0)[1], rel=1e-12, abs=0)
    # the difference's interval is the same under every test: queued on the server thread since the
    # baseline was chosen, it may be there already; while it is not, the note says it follows
    assert (not pd.isna(quick.loc[("ndcg@10", "two_tower"), "ci_low"])
            or any("bootstrap interval of the difference follows" in c.value for c in at.caption))
    _wait_idle(background)  # the worker finishes the queued comparisons
    ok(at.run())
    exact = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    assert not any("updates itself" in c.value for c in at.caption)
    assert exact.loc[("ndcg@10", "two_tower"), "p_value"] == pytest.approx(
        stats.randomization_test(a, b, n_resamples=comparisons.N_PERMUTATIONS, seed=0)[1], rel=1e-12, abs=0)
    assert exact.loc[("ndcg@10", "two_tower"), "ci_low"] <= exact.loc[("ndcg@10", "two_tower"), "diff"]


def test_changing_the_baseline_keeps_every_model_in_the_comparison(monkeypatch, tmp_path):
    from dashboard.verdict import challengers_after_baseline_change

    names = ["a", "b", "c", "d"]
    assert challengers_after_baseline_change(["b", "c", "d"], "a", "b", names) == ["a", "c", "d"]
    assert challengers_after_baseline_change(["c"], "a", "b", names) == ["c"]  # b was not compared: a stays out
    assert challengers_after_baseline_change(["b", "a"], "a", "b", names) == ["a"]
    at = uploaded_app(monkeypatch, tmp_path)
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    assert at.multiselect(key="compare_challengers").value == [XSS, "two_tower"]
    ok(at.selectbox(key="compare_baseline").set_value("two_tower").run())
    assert at.multiselect(key="compare_challengers").value == [XSS, "popularity"]
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    assert sorted(at.multiselect(key="compare_challengers").value) == sorted([XSS, "two_tower"])
    assert set(frame_with(at, "p_adjusted")["model"]) == {XSS, "two_tower"}


def _plain(markdown: str) -> str:
    """Markdown as the reader sees it (the page escapes every character markdown would read)."""
    return markdown.replace("\\", "")


def test_brief_tells_compares_numbers_and_opens_failures(monkeypatch, tmp_path):
    """The Brief reads Compare's decision and shows Compare's numbers; once a comparison was
    chosen the address without a page opens on the Brief; a failure group opens Failures on that
    pair and group."""
    at = uploaded_app(monkeypatch, tmp_path)
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("two_tower").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    ok(at.multiselect(key="compare_metrics").set_value(["ndcg@10", "recall@10"]).run())
    verdicts = frame_with(at, "lift [95% CI]")
    ok(at.switch_page("views/brief.py").run())
    lines = [_plain(m.value) for m in at.markdown if m.value.startswith("- ")]
    head_to_head = [x for x in lines if x.startswith("- Best two")]  # the best two challengers, once per metric
    lines = [x for x in lines if x not in head_to_head]
    assert len(lines) == len(verdicts) == 4 and len(head_to_head) == 2
    for _, row in verdicts.iterrows():
        line = next(x for x in lines if x.startswith(f"- {text.md(row['challenger']).replace(chr(92), '')}:")
                    and f" on {row['metric']}:" in x)
        assert row["lift [95% CI]"] in line and f"adjusted p {row['adjusted p']}" in line
        assert f"detectable lift {row['detectable lift']}" in line
    caption = _plain(at.caption[0].value)
    assert "Baseline popularity" in caption and "ndcg@10 and recall@10" in caption
    # coverage: two_tower did not serve every user, said on the brief
    assert any("two_tower did not serve" in _plain(w.value) for w in at.warning)
    # the address without a page now opens on the Brief
    fresh = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for key, value in at.query_params.items():
        fresh.query_params[key] = value
    ok(fresh.run())
    assert fresh.title[0].value == "Decision brief"
    # a failure group opens Failures on the pair and the group
    groups = frame_with(at, "share of loss")
    row = groups.index[groups["group"] == "not served"][0]
    at.session_state["brief_failures"] = {"selection": {"rows": [int(row)], "columns": [], "cells": []}}
    ok(at.run())
    assert at.title[0].value == "Failures"
    assert at.selectbox(key="failures_model").value == groups.loc[row, "challenger"]
    assert at.selectbox(key="failures_other").value == "popularity"
    assert at.selectbox(key="failures_metric").value == (groups.loc[row, "metric"] if "metric" in groups.columns
                                                         else "ndcg@10")
    assert at.selectbox(key="failures_group").value == brief_text.FAILURES_GROUP["not served"]
    # exactly the brief's users of that group: the same count
    caption = next(c.value for c in at.caption if re.search(r"users? match", c.value))
    assert int(re.sub(r"[^0-9]", "", caption.split(" user")[0])) == int(groups.loc[row, "users"].replace(",", ""))


def test_compare_states_each_challengers_overlap_with_the_baseline(monkeypatch, tmp_path):
    """RecTools' Intersection on Compare: each challenger's share of its top K also in the baseline's
    top K, equal to mc.intersection on the uploaded files (ties in the files' row order under
    average ties)."""
    at = uploaded_app(monkeypatch, tmp_path)
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("two_tower").run())
    caption = next(_plain(c.value) for c in at.caption if "Overlap with the baseline" in c.value)
    f = files()
    base = frame(f["two_tower.csv"])
    for name in ("popularity", XSS):
        want = mc.intersection(frame(f[f"{name}.csv"]), base, 10, ties="input")
        assert f"{_plain(text.md(name))} {100 * want:.1f}%" in caption, (name, want, caption)
    assert "ties in input order" in caption


def _attributes_csv(tenures: int = 30) -> bytes:
    """Every user of the ground truth with a ``tier`` (3 values) and a ``tenure`` in months
    (``tenures`` values; 30 by default: an attribute with many segments, about 10 users each)."""
    users = frame(files()["qrels.csv"])["user_id"].drop_duplicates().sort_values().reset_index(drop=True)
    return demo.to_csv_bytes(pd.DataFrame({"user_id": users,
                                           "tier": [("a", "b", "c")[i % 3] for i in range(len(users))],
                                           "tenure": [1 + (7 * i) % tenures for i in range(len(users))]}))


@pytest.mark.long  # every segment of a 30-valued attribute, every test, on the server thread: 79 s in a full run
def test_large_data_overlap_and_other_segments_come_from_the_server_thread(monkeypatch, tmp_path):
    """Above background.FOREGROUND_USERS the overlap is computed beside the page (it says so, then
    shows mc.intersection's value); the segments of the attributes not shown are computed on the
    server thread, and choosing one shows the same rows as compare() over its users."""
    from dashboard import background, cache

    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    at = uploaded_app(monkeypatch, tmp_path)
    at.file_uploader(key="upload_attributes_0").set_value(("attrs.csv", _attributes_csv(), "text/csv"))
    ok(at.run())
    cache.SHARED.clear()  # nothing of an earlier test: every overlap is new
    ok(at.switch_page("views/compare.py").run())
    caption = next(_plain(c.value) for c in at.caption if "Overlap with the baseline" in c.value)
    assert "being computed on the server" in caption
    _wait_idle(background)
    ok(at.run())
    caption = next(_plain(c.value) for c in at.caption if "Overlap with the baseline" in c.value)
    f = files()
    base = frame(f["popularity.csv"])
    for name in (XSS, "two_tower"):
        want = mc.intersection(frame(f[f"{name}.csv"]), base, 10, ties="input")
        assert f"{_plain(text.md(name))} {100 * want:.1f}%" in caption, (name, want, caption)
    # every attribute's segments are computed on the server thread once, as the brief's family of tests
    from scipy import stats as sps
    from statsmodels.stats.multitest import multipletests

    from dashboard import format as fmt
    _wait_idle(background)
    ok(at.run())
    ok(at.selectbox(key="compare_segment").set_value("tenure").run())
    _wait_idle(background)
    ok(at.run())
    shown = frame_with(at, "segment")
    assert sorted(set(shown["segment"]), key=int) == [str(t) for t in range(1, 31)]
    attrs = pd.read_csv(io.BytesIO(_attributes_csv()), dtype={"user_id": str})
    ev = reference(["ndcg@10"])
    per_user = {n: ev[n].per_user["ndcg@10"] for n in ("popularity", XSS, "two_tower")}
    users = per_user["popularity"].index.astype(str)
    # the family: every segment of every attribute x challenger, Holm over all of them (scipy, statsmodels)
    pvalues, keys = [], []
    for attribute in ("tier", "tenure"):
        label = attrs.set_index("user_id")[attribute].astype(str).reindex(users).to_numpy()
        for value in sorted(set(label)):
            for challenger in (XSS, "two_tower"):
                a = per_user["popularity"][label == value]
                b = per_user[challenger].reindex(a.index)
                paired = a.notna() & b.notna()
                pvalues.append(sps.ttest_rel(b[paired], a[paired]).pvalue)
                keys.append((attribute, value, challenger, int(paired.sum())))
    adjusted = dict(zip(keys, multipletests(pvalues, method="holm")[1]))
    for (attribute, value, challenger, n), p in adjusted.items():
        if attribute != "tenure":
            continue
        row = shown[(shown["segment"] == value) & (shown["challenger"] == challenger)].iloc[0]
        assert row["users paired"] == f"{n:,}"
        assert row["adjusted p"] == fmt.pvalue(p), (value, challenger)
    family = next(_plain(c.value) for c in at.caption if "adjusted over" in c.value)
    assert f"adjusted over {len(adjusted)} tests: every segment of every user attribute (tier, tenure)" in family


def _wait_idle(background) -> None:
    """Until the server thread has nothing queued (a probe of the background jobs, no timing)."""
    import time

    deadline = time.monotonic() + deadlines.SCRIPT_RUN
    while time.monotonic() < deadline:
        with background._LOCK:
            if not background._QUEUED:
                return
        time.sleep(0.05)
    raise AssertionError("the server thread did not finish its jobs")


def test_brief_shows_its_verdicts_first_and_its_segments_when_the_server_has_them(monkeypatch, tmp_path):
    """On large data the Brief comes without its segments (it says they follow), then with the
    segments metrics_core.build_brief finds over the same users and attributes (a tenure of 4 values:
    see :func:`compare_on_many_users_once_idle`)."""
    from dashboard import background, cache
    from metrics_core.brief import build as mb
    from metrics_core.brief import text as bt

    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    at = uploaded_app(monkeypatch, tmp_path)
    at.file_uploader(key="upload_attributes_0").set_value(("attrs.csv", _attributes_csv(tenures=4), "text/csv"))
    ok(at.run())
    cache.SHARED.clear()
    ok(at.switch_page("views/compare.py").run())
    ok(at.switch_page("views/brief.py").run())
    bullets = [m.value for m in at.markdown if m.value.startswith("- ")]
    # the verdicts are there at once: two challengers against the baseline, then the best two compared directly
    assert len(bullets) == 3 and bullets[2].startswith("- Best two"), bullets
    assert any("being compared on the server" in c.value for c in at.caption)
    _wait_idle(background)
    ok(at.run())
    assert not any("being compared on the server" in c.value for c in at.caption)
    note = next(_plain(c.value) for c in at.caption if "adjusted over" in c.value)
    attrs = pd.read_csv(io.BytesIO(_attributes_csv(tenures=4)), dtype={"user_id": str})
    evals = reference(["ndcg@10"])
    decision = mb.Decision(baseline="popularity", challengers=(XSS, "two_tower"), metrics=("ndcg@10",))
    want = mb.build_brief(evals, decision, attributes=attrs)
    assert note == _plain(text.md(bt.segment_note(want), limit=600))



def compare_on_many_users_once_idle(monkeypatch, tmp_path):
    """Compare on data above the foreground size (10 users), with user attributes, popularity as the
    baseline, after the server thread has finished what the page queued (the cache emptied before).
    The tenure has 4 values here, not 30: these tests check which comparisons the server thread has
    ready, not segments of about 10 users (with ties, scipy's Wilcoxon test enumerates every sign
    assignment of 13 users or fewer with a statistic computed in Python: with 30 tenures, most of
    the CPU these tests spent)."""
    from dashboard import background, cache

    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    at = uploaded_app(monkeypatch, tmp_path, users="served")
    at.file_uploader(key="upload_attributes_0").set_value(("attrs.csv", _attributes_csv(tenures=4), "text/csv"))
    ok(at.run())
    cache.SHARED.clear()
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    _wait_idle(background)
    return at


def test_on_many_users_the_other_tests_are_ready_before_they_are_chosen(monkeypatch, tmp_path):
    """Above the foreground size, Compare computes the other tests' rows, matrix and segments on the
    server thread; choosing the Wilcoxon test then shows scipy's p-values from those rows."""
    from scipy import stats as sps

    from dashboard import background, cache

    at = compare_on_many_users_once_idle(monkeypatch, tmp_path)
    ready = {k for k in cache.SHARED.keys() if k.startswith("compare|") and "|wilcoxon|0|0|" in k}
    # the table's one metric x (popularity as baseline), the matrix's three baselines, the shown attribute's segments
    assert any("'ndcg@10'|popularity|wilcoxon" in k for k in ready)
    for base in ("popularity", XSS, "two_tower"):
        assert any(f"|{base}|wilcoxon|0|0|" in k for k in ready), base
    before = set(cache.SHARED.keys())
    ok(at.selectbox(key="compare_test").set_value("wilcoxon").run())
    # (the segments of every attribute under the new test, the analysis' one family, are started on the
    # server thread by the click; the brief that holds them is assembled from the rows already computed)
    computed_in_click = {k for k in set(cache.SHARED.keys()) - before
                         if "|wilcoxon|0|0|" in k and not k.startswith("brief|")}
    assert not computed_in_click, [re.sub(r"[0-9a-f]{20,}", "#", k)[:400] for k in computed_in_click]
    shown = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    ev = reference(["ndcg@10"])
    a, b = ev["popularity"].per_user["ndcg@10"], ev["two_tower"].per_user["ndcg@10"]
    both = sorted(set(a.index.astype(str)) & _served("popularity") & _served("two_tower"))
    want = sps.wilcoxon(b.loc[both].to_numpy(), a.loc[both].to_numpy(), zero_method="wilcox").pvalue
    assert shown.loc[("ndcg@10", "two_tower"), "p_value"] == pytest.approx(want, rel=1e-9)


def test_on_many_users_the_randomization_test_is_ready_before_it_is_chosen(monkeypatch, tmp_path):
    """Above the foreground size, the sign flips of what the page shows under the randomization test
    (table, shown attribute's segments, matrix) are computed on the server thread once Compare is
    shown: choosing the test then shows the Monte Carlo p-values and the interval at once, nothing
    pending, and computes no sign flip in the click."""
    from dashboard import background, cache, comparisons
    from metrics_core.analysis import stats

    # fewer sign flips than the page's 10,000: what is checked is where and when they are computed
    monkeypatch.setattr(comparisons, "N_PERMUTATIONS", 2_000)
    at = compare_on_many_users_once_idle(monkeypatch, tmp_path)
    before = set(cache.SHARED.keys())
    ok(at.selectbox(key="compare_test").set_value("randomization").run())
    flips = f"|randomization|0|{comparisons.N_PERMUTATIONS}|"
    in_click = {k for k in set(cache.SHARED.keys()) - before if flips in k and not k.startswith("brief|")}
    assert not in_click, [re.sub(r"[0-9a-f]{20,}", "#", k)[:300] for k in in_click]
    assert not any("updates itself" in c.value for c in at.caption)
    shown = frame_with(at, "p_adjusted").set_index(["metric", "model"])
    ev = reference(["ndcg@10"])
    a, b = ev["popularity"].per_user["ndcg@10"], ev["two_tower"].per_user["ndcg@10"]
    both = sorted(set(a.index.astype(str)) & _served("popularity") & _served("two_tower"))
    a, b = a.loc[both].to_numpy(), b.loc[both].to_numpy()
    assert shown.loc[("ndcg@10", "two_tower"), "p_value"] == pytest.approx(
        stats.randomization_test(a, b, n_resamples=comparisons.N_PERMUTATIONS, seed=0)[1], rel=1e-12, abs=0)
    [(low, high)] = stats.bootstrap_ci_many([b - a], n_resamples=comparisons.N_RESAMPLES, seed=0)
    assert shown.loc[("ndcg@10", "two_tower"), ["ci_low", "ci_high"]].tolist() == pytest.approx([low, high])
    # queued once per models: a later change of the page (another metric) queues no sign flips
    ok(at.selectbox(key="compare_test").set_value("t").run())
    ok(at.multiselect(key="compare_metrics").set_value(["ndcg@10", "recall@10"]).run())
    _wait_idle(background)
    assert not [k for k in cache.SHARED.keys() if flips in k and "'recall@10'" in k]


def test_two_sessions_share_compares_figures_and_a_new_setting_or_content_builds_anew(monkeypatch, tmp_path):
    """The Compare page's charts are built once per content and settings on the server and shared by
    sessions (``dashboard.compute.cached_figure``): a second session opening the same comparison builds
    none; another K (other table content) or another baseline (other figure arguments and rows) builds
    them anew; each is counted here by wrapping the figure builders."""
    from dashboard import cache
    from metrics_core.outputs.plot import compare_figures

    built: list[str] = []
    for name in ("lift_forest", "win_tie_loss", "pair_scatter", "pair_differences"):
        original = getattr(compare_figures, name)
        monkeypatch.setattr(compare_figures, name,
                            lambda *a, _f=original, _n=name, **k: built.append(_n) or _f(*a, **k))
    cache.SHARED.clear()
    first = uploaded_app(monkeypatch, tmp_path)
    ok(first.switch_page("views/compare.py").run())
    assert sorted(built) == ["lift_forest", "pair_differences", "pair_scatter", "win_tie_loss"], built
    second = uploaded_app(monkeypatch, tmp_path)  # another session, the same files
    built.clear()
    ok(second.switch_page("views/compare.py").run())
    assert built == []  # every chart from the first session's build
    assert [c.proto.spec for c in second.get("plotly_chart")] == [c.proto.spec for c in first.get("plotly_chart")]
    ok(second.number_input(key="k").set_value(5).run())  # other metrics: other tables, other charts
    assert sorted(built) == ["lift_forest", "pair_differences", "pair_scatter", "win_tie_loss"], built
    built.clear()
    ok(first.number_input(key="k").set_value(5).run())  # the first session at that K: shared again
    assert built == []
    ok(first.selectbox(key="compare_baseline").set_value("two_tower").run())  # other rows and names
    assert {"lift_forest", "win_tie_loss"} <= set(built)


def _chart_data(spec: str, title_start: str) -> list[dict]:
    """The traces of the chart whose title starts with ``title_start``, arrays decoded (plotly writes a
    numpy array as its dtype and base64 bytes)."""
    import base64
    import json

    import numpy as np

    def decoded(value):
        if isinstance(value, dict) and "bdata" in value:
            return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).astype(float)
        return value
    figure = json.loads(spec)
    if not figure["layout"].get("title", {}).get("text", "").startswith(title_start):
        return []
    return [{k: decoded(v) for k, v in trace.items()} for trace in figure["data"]]


def test_per_user_charts_follow_the_users_counted_and_the_conventions(monkeypatch, tmp_path):
    """The per-user scatter and histogram of differences are cached by the models, settings and metric, not
    by their data: after each change of the users counted or of the gain they draw the pairs that
    metrics_core's evaluation of the files gives under the new setting (each user's point and each
    difference), never a chart of the setting before."""
    import numpy as np

    at = uploaded_app(monkeypatch, tmp_path)
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    ok(at.multiselect(key="compare_metrics").set_value(["ndcg@10"]).run())
    ok(at.selectbox(key="compare_focus_model").set_value("two_tower").run())
    served = _served("popularity") & _served("two_tower") & _served(XSS)

    def check(gain: str, users: str) -> dict[str, tuple[float, float]]:
        ev = reference(["ndcg@10"], gain=gain)
        a, b = (ev[n].per_user["ndcg@10"] for n in ("popularity", "two_tower"))
        a.index, b.index = a.index.astype(str), b.index.astype(str)
        ids = sorted(set(a.index) & set(b.index) & (served if users == "served" else set(a.index)))
        expected = {u: (float(a[u]), float(b[u])) for u in ids}
        specs = [c.proto.spec for c in at.get("plotly_chart")]
        points = [t for s in specs for t in _chart_data(s, "Per-user ndcg@10") if t.get("mode") == "markers"]
        drawn = {u: (float(x), float(y)) for t in points for u, x, y in zip(t["customdata"], t["x"], t["y"])}
        assert drawn.keys() == expected.keys()
        assert np.allclose([drawn[u] for u in ids], [expected[u] for u in ids], rtol=0, atol=1e-12)
        bars = [t for s in specs for t in _chart_data(s, "Per-user differences") if t["type"] == "histogram"]
        assert len(bars) == 1
        assert np.allclose(np.sort(bars[0]["x"]), np.sort([y - x for x, y in expected.values()]), rtol=0, atol=1e-12)
        return expected

    linear_all = check("linear", "all")
    ok(at.selectbox(key="users").set_value("served").run())
    linear_served = check("linear", "served")
    ok(at.selectbox(key="gain").set_value("exponential").run())
    exponential_served = check("exponential", "served")
    ok(at.selectbox(key="users").set_value("all").run())
    check("exponential", "all")
    ok(at.selectbox(key="gain").set_value("linear").run())  # back: the first charts again
    assert check("linear", "all") == linear_all
    # every change drew other pairs: the checks above could tell a stale chart from the right one
    assert len(linear_served) < len(linear_all)
    assert exponential_served.keys() == linear_served.keys() and exponential_served != linear_served


def _tier_attributes_csv(tiers: int) -> bytes:
    """Every user of the ground truth with a ``tier`` of ``tiers`` values (user i: the (i mod tiers)-th letter)."""
    users = frame(files()["qrels.csv"])["user_id"].drop_duplicates().sort_values().reset_index(drop=True)
    return demo.to_csv_bytes(pd.DataFrame({"user_id": users,
                                           "tier": ["abcdef"[i % tiers] for i in range(len(users))]}))


def test_other_attributes_of_the_same_users_give_other_segment_rows(monkeypatch, tmp_path):
    """The segment rows are cached by the models, the decision and the attributes file's content: after
    another attributes file replaces the first (same column, same users, other labels), Compare shows
    the new file's segments with scipy's paired t-test p-values adjusted by Holm over them."""
    from scipy import stats as sps
    from statsmodels.stats.multitest import multipletests

    from dashboard import format as fmt

    at = uploaded_app(monkeypatch, tmp_path)
    ev = reference(["ndcg@10"])
    per_user = {n: ev[n].per_user["ndcg@10"] for n in ("popularity", XSS, "two_tower")}
    users = per_user["popularity"].index.astype(str)
    for tiers in (3, 2):
        data = _tier_attributes_csv(tiers)
        at.file_uploader(key="upload_attributes_0").set_value((f"attrs{tiers}.csv", data, "text/csv"))
        ok(at.run())
        ok(at.switch_page("views/compare.py").run())
        ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
        ok(at.multiselect(key="compare_metrics").set_value(["ndcg@10"]).run())
        shown = frame_with(at, "segment")
        label = pd.read_csv(io.BytesIO(data), dtype={"user_id": str}).set_index("user_id")["tier"].reindex(users)
        expected = []
        for value in sorted(set(label)):
            for challenger in (XSS, "two_tower"):
                a = per_user["popularity"][label.to_numpy() == value]
                b = per_user[challenger].reindex(a.index)
                paired = a.notna() & b.notna()
                expected.append((value, challenger, int(paired.sum()), sps.ttest_rel(b[paired], a[paired]).pvalue))
        adjusted = multipletests([p for *_, p in expected], method="holm")[1]
        assert sorted(set(shown["segment"])) == list("abcdef"[:tiers])
        for (value, challenger, n, _), p in zip(expected, adjusted):
            row = shown[(shown["segment"] == value) & (shown["challenger"] == challenger)].iloc[0]
            assert row["users paired"] == f"{n:,}"
            assert row["adjusted p"] == fmt.pvalue(p), (tiers, value, challenger)
        ok(at.switch_page("views/data.py").run())


def test_loading_a_third_model_changes_the_served_users_of_the_pair_compared(monkeypatch, tmp_path):
    """Under "Users counted: served" the users paired are those every loaded model served: a third
    model that served fewer users changes the baseline/challenger rows, which must not be read from
    what the page cached for two models."""
    from scipy.stats import ttest_rel

    f = files()
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["users"] = "served"
    ok(at.run())
    ok(at.switch_page("views/data.py").run())
    pair = [(name, f[name], "text/csv") for name in ("popularity.csv", f"{XSS}.csv")]
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", f["qrels.csv"], "text/csv"))
    ok(at.file_uploader(key="upload_runs_0").set_value(pair).run())
    ok(at.switch_page("views/compare.py").run())
    ok(at.selectbox(key="compare_baseline").set_value("popularity").run())
    ev = reference(["ndcg@10"])

    def expected(models: tuple[str, ...]) -> tuple[int, float, float]:
        a, b = ev["popularity"].per_user["ndcg@10"], ev[XSS].per_user["ndcg@10"]
        both = sorted(set(a.index.astype(str)).intersection(*(_served(name) for name in models)))
        a, b = a.loc[both], b.loc[both]
        return len(both), b.mean() - a.mean(), ttest_rel(b, a).pvalue

    def shown_row() -> pd.Series:
        return frame_with(at, "p_adjusted").set_index(["metric", "model"]).loc[("ndcg@10", XSS)]

    lifts = []
    for models in (("popularity", XSS), ("popularity", XSS, "two_tower")):
        if len(models) == 3:  # the third model, whose users differ, added on the Data page
            ok(at.switch_page("views/data.py").run())
            ok(at.file_uploader(key="upload_runs_0").set_value(
                [*pair, ("two_tower.csv", f["two_tower.csv"], "text/csv")]).run())
            ok(at.switch_page("views/compare.py").run())
            assert at.selectbox(key="compare_baseline").value == "popularity"
            # the same pair as before: only the third model differs
            ok(at.multiselect(key="compare_challengers").set_value([XSS]).run())
        n, diff, p_value = expected(models)
        row = shown_row()
        assert row["n"] == n
        assert row["diff"] == pytest.approx(diff, abs=1e-12)
        assert row["p_value"] == pytest.approx(p_value, rel=1e-9, abs=1e-300)
        # the Brief reads the same pair's rows: the same lift
        verdict_row = frame_with(at, "lift [95% CI]").iloc[0]
        lifts.append(verdict_row["lift [95% CI]"])
        ok(at.switch_page("views/brief.py").run())
        lines = [_plain(m.value) for m in at.markdown if m.value.startswith("- ")]
        assert any(line.startswith(f"- {_plain(text.md(XSS))}:") and " on ndcg@10:" in line
                   and verdict_row["lift [95% CI]"] in line for line in lines)
    assert n < len(ev["popularity"].per_user) and lifts[0] != lifts[1]  # the third model left users out
