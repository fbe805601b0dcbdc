"""The sidebar's "Users counted" in a real browser: under each setting the Overview's summary
CSV, Compare's comparison CSV and verdict, and the Share page's HTML report give the same
NDCG@10 of the model that did not serve every user, equal to metrics_core's per-user values
averaged here over the users that setting counts."""

from __future__ import annotations

import io
import re

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from dashboard_server import assert_no_exception, choose_option, open_page, upload_runs_and_truth, wait_idle, wait_rerun

pytestmark = pytest.mark.browser


def _download(page, label: str) -> bytes:
    with page.expect_download() as info:
        page.get_by_role("button", name=re.compile(re.escape(label))).first.click()
    with open(info.value.path(), "rb") as fh:
        return fh.read()


def test_overview_compare_and_report_count_the_same_users(app_page, streamlit_server, tmp_path):
    page = app_page
    d = demo.make_demo(n_users=400, n_items=250, list_length=20, seed=5)
    runs = dict(d.runs)
    users = sorted(d.qrels["user_id"].astype(str).unique())
    dropped = set(users[:40])
    runs["two_tower"] = runs["two_tower"][~runs["two_tower"]["user_id"].astype(str).isin(dropped)]
    paths = []
    for name, run in runs.items():
        paths.append(tmp_path / f"{name}.csv")
        paths[-1].write_bytes(demo.to_csv_bytes(run))
    (tmp_path / "qrels.csv").write_bytes(demo.to_csv_bytes(d.qrels))
    per_user = {n: mc.evaluate(r, d.qrels, metrics=["ndcg@10"]).per_user["ndcg@10"] for n, r in runs.items()}
    everyone = per_user["popularity"].index.astype(str)
    counted = {"all": list(everyone), "served": [u for u in everyone if u not in dropped]}

    upload_runs_and_truth(page, streamlit_server, paths, tmp_path / "qrels.csv")
    assert "two_tower: 40 (10.0%) users of the ground truth are missing from the run" in page.inner_text("body")

    for users in ("all", "served"):
        if users == "served":
            box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Users counted")
            choose_option(page, box, "served")
            wait_rerun(page)
            assert "users=served" in page.url
        ids = counted[users]
        expected = {n: float(v.set_axis(v.index.astype(str)).loc[ids].mean()) for n, v in per_user.items()}
        said = f"{len(ids):,} users ("

        open_page(page, "Overview")
        assert_no_exception(page, f"Overview, users {users}")
        body = page.inner_text("body")
        assert f"Users counted: {said}" in body and "two_tower served 360" in body
        assert "two_tower did not serve 40 of the 400 evaluated users" in body
        summary = pd.read_csv(io.BytesIO(_download(page, "Download summary CSV"))).set_index("model")
        for name, value in expected.items():
            assert summary.loc[name, "ndcg@10"] == pytest.approx(value, abs=1e-12)

        open_page(page, "Compare")
        page.wait_for_selector('h3:has-text("Verdict")')
        assert_no_exception(page, f"Compare, users {users}")
        sentence = next(s for s in page.locator('[data-testid="stMarkdownContainer"] li').all_inner_texts()
                        if s.startswith("two_tower "))
        assert f"Users: {said}" in sentence and "two_tower did not serve 40 of the 400 evaluated users" in sentence
        page.get_by_text("Full statistics").click()
        wait_idle(page)
        comparison = pd.read_csv(io.BytesIO(_download(page, "Download comparison CSV")))
        row = comparison[(comparison["model"] == "two_tower") & (comparison["metric"] == "ndcg@10")].iloc[0]
        assert row["n"] == len(ids)
        assert row["model_mean"] == pytest.approx(expected["two_tower"], abs=1e-12)
        assert row["baseline_mean"] == pytest.approx(expected["popularity"], abs=1e-12)

        open_page(page, "Share")
        page.get_by_role("button", name="Build HTML report").click()
        wait_rerun(page)
        report = _download(page, "Download HTML report").decode("utf-8")
        assert f"{said}" in report and "two_tower did not serve 40 of the 400 evaluated users" in report
        cells = re.search(r"<table id='summary'>.*?</table>", report, re.S).group(0)
        two_tower = re.search(r"<th class='l'>two_tower</th><td>([\d.]+)", cells).group(1)
        assert two_tower == f"{expected['two_tower']:.4f}"
        compared = re.search(r"<table id='comparison'>.*?</table>", report, re.S).group(0)
        assert f"<td class='l'>two_tower</td><td>{len(ids)}</td>" in compared
