"""The Data page's "Fuse models into a new one", used in headless Chromium at 1400 x 1000 as a searcher
would: two uploaded runs fused by CombSUM over min-max scores into "hybrid", which the Models table,
the Overview's summary CSV, Compare's verdict and the Brief then treat as any uploaded model.

The reference is written out in this test (no metrics_core code): CombSUM of the per-user min-max
normalised scores (an item missing from a run adds 0), then nDCG@K with linear gain, discount
``1 / log2(rank + 1)`` and each user's ideal DCG. The data is seeded so that every user's fused top K
has distinct scores (no tie rule is involved). Screenshot: ``fusion_data.png`` (the Data page once the
fused model is added)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dashboard_server import assert_no_exception, open_page, screenshot_dir, upload_runs_and_truth, wait_rerun
from test_brief_browser import VIEW, choose
from test_dashboard_fusion import plain_combsum_min_max
from test_summary_download_browser import download_now, ndcg

pytestmark = pytest.mark.browser

K = 10


def write_files(folder: Path) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Two runs ("bm25", "dense") scoring the same 14 of 40 items per user (30 users) with random distinct
    scores on different scales, and graded judgments (0-3, every user with a relevant item) that include
    unranked items."""
    rng = np.random.default_rng(11)
    candidates = {u: rng.choice(40, 14, replace=False) for u in range(30)}
    runs = {}
    for name, scale in (("bm25", 20.0), ("dense", 1.0)):
        rows = [(f"q{u}", f"d{i}", round(float(s), 6)) for u in range(30)
                for i, s in zip(candidates[u], rng.random(14) * scale)]
        runs[name] = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
        runs[name].to_csv(folder / f"{name}.csv", index=False)
    judged = [(f"q{u}", f"d{i}", int(g)) for u in range(30)
              for i, g in zip(rng.choice(40, 15, replace=False), [3, *rng.integers(0, 4, 14)])]
    qrels = pd.DataFrame(judged, columns=["user_id", "item_id", "relevance"])
    qrels.to_csv(folder / "qrels.csv", index=False)
    return runs, qrels


def test_a_fused_model_is_added_and_every_page_treats_it_as_an_upload(browser, streamlit_server, tmp_path):
    runs, qrels = write_files(tmp_path)
    fused = plain_combsum_min_max(list(runs.values()))
    hybrid = pd.DataFrame([(u, i, s) for (u, i), s in fused.items()], columns=["user_id", "item_id", "score"])
    for _, rows in hybrid.groupby("user_id"):  # no tie within a user's top K + 1: no tie rule involved
        top = np.sort(rows["score"].to_numpy())[::-1][: K + 1]
        assert len(set(top)) == len(top)
    want = ndcg(hybrid, qrels, K, exponential=False)

    context = browser.new_context(viewport=VIEW, accept_downloads=True)
    page = context.new_page()
    try:
        upload_runs_and_truth(page, streamlit_server, [tmp_path / "bm25.csv", tmp_path / "dense.csv"],
                              tmp_path / "qrels.csv")
        assert_no_exception(page, "Data after the upload")
        page.locator('[data-testid="stExpander"] summary', has_text="Fuse models into a new one").click()
        choose(page, "fuse_method", "CombSUM")

        page.locator(".st-key-fuse_name input").fill("hybrid")
        page.get_by_role("button", name="Add the fused model").click()
        wait_rerun(page)
        page.get_by_text("Added the fused model hybrid.").wait_for()
        assert_no_exception(page, "Data after the fusion")
        shots = screenshot_dir()
        shots.mkdir(parents=True, exist_ok=True)
        page.get_by_text("Added the fused model hybrid.").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "fusion_data.png"))

        open_page(page, "Overview")
        assert_no_exception(page, "Overview")
        label, summary = download_now(page)
        assert f"K = {K}" in label, label
        assert sorted(summary.index) == ["bm25", "dense", "hybrid"], list(summary.index)
        assert summary.loc["hybrid", f"ndcg@{K}"] == pytest.approx(want, abs=1e-12)
        for name, run in runs.items():
            assert summary.loc[name, f"ndcg@{K}"] == pytest.approx(ndcg(run, qrels, K, exponential=False), abs=1e-12)

        open_page(page, "Compare")  # bm25 the baseline, dense and hybrid its challengers
        assert_no_exception(page, "Compare")
        button = page.locator(".st-key-compare_verdict_csv button").first
        with page.expect_download() as info:
            button.click()
        verdicts = pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes()))
        assert sorted(verdicts["challenger"]) == ["dense", "hybrid"], verdicts

        open_page(page, "Brief")
        assert_no_exception(page, "Brief")
        page.get_by_text("hybrid", exact=False).first.wait_for()
    finally:
        context.close()
