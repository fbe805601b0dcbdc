"""A saved analysis survives a restart of the Streamlit server: the link opened on a new
server process gives exactly the same summary CSV (same data, same K and gain)."""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import urlparse

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from metrics_core.io import read_table

from dashboard_server import REPO_ROOT, assert_no_exception, start_server, stop_process, wait_idle

pytestmark = pytest.mark.browser

APP = REPO_ROOT / "dashboard" / "app.py"


def open_page(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    wait_idle(page)
    page.wait_for_selector(f'h1:has-text("{title}")')


def uploader_input(page, label: str):
    return page.locator('[data-testid="stFileUploader"]', has_text=label).first.locator('input[type="file"]')


def download_summary(page) -> bytes:
    open_page(page, "Overview")
    page.wait_for_selector('[data-testid="stPlotlyChart"]')
    assert_no_exception(page, "Overview")
    button = page.locator('[data-testid="stDownloadButton"] button', has_text="summary")
    with page.expect_download() as info:
        button.click()
    return Path(info.value.path()).read_bytes()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(120_000)
    return context, page


def test_saved_analysis_reopens_after_server_restart(browser, tmp_path):
    d = demo.make_demo(n_users=150, n_items=120, list_length=15, seed=3)
    paths = demo.write_demo_files(tmp_path / "files", d)
    env = {"METRICS_CORE_STORE_DIR": str(tmp_path / "store")}

    proc, url = start_server(APP, extra_env=env, log_path=tmp_path / "first.log")
    try:
        context, page = new_page(browser)
        page.goto(url)
        wait_idle(page)
        open_page(page, "Data")
        k_input = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"] input')
        k_input.fill("5")
        k_input.press("Enter")
        wait_idle(page)
        page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Gain").click()
        page.get_by_role("option", name="exponential").click()
        wait_idle(page)
        uploader_input(page, "Ranked results").set_input_files([str(paths[n]) for n in d.runs])
        wait_idle(page)
        uploader_input(page, "Ground truth").set_input_files(str(paths["qrels"]))
        wait_idle(page)
        assert_no_exception(page, "Data after upload")
        open_page(page, "Share")
        page.get_by_role("button", name="Save analysis and create link").click()
        wait_idle(page)
        link = page.locator('[data-testid="stCode"]').first.inner_text().strip()
        assert "?analysis=" in link, link
        before = download_summary(page)
        context.close()
    finally:
        stop_process(proc)

    proc, url2 = start_server(APP, extra_env=env, log_path=tmp_path / "second.log")
    try:
        context, page = new_page(browser)
        parts = urlparse(link)
        page.goto(f"{url2}{parts.path}?{parts.query}")
        wait_idle(page)
        assert_no_exception(page, "Share opened from the link")
        aid = parts.query.split("=", 1)[1]
        assert page.get_by_text(f"Showing saved analysis {aid}").count() + \
            page.locator("code", has_text=aid).count() >= 1
        after = download_summary(page)
        context.close()
        # Once app.py has run (st.navigation), a new visitor of the link gets the sidebar
        # controls set to the saved K and gain, and the same summary again.
        context, page = new_page(browser)
        page.goto(url2)
        wait_idle(page)
        page.goto(f"{url2}{parts.path}?{parts.query}")
        wait_idle(page)
        assert_no_exception(page, "Share opened from the link (second visitor)")
        k_input = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"] input')
        assert k_input.input_value() == "5"
        again = download_summary(page)
        context.close()
    finally:
        stop_process(proc)

    assert again == before

    assert after == before
    csv = pd.read_csv(io.BytesIO(after))
    assert list(csv["model"]) == list(d.runs)
    assert "ndcg@5" in csv.columns  # K = 5 came back from the saved settings
    qrels = read_table(paths["qrels"], kind="qrels")[0]
    for _, row in csv.iterrows():
        run = read_table(paths[row["model"]], kind="run")[0]
        ref = mc.evaluate(run, qrels, metrics=["ndcg@5", "recall@5"], gain="exponential")
        assert row["ndcg@5"] == pytest.approx(ref.summary["ndcg@5"], abs=1e-12)
        assert row["recall@5"] == pytest.approx(ref.summary["recall@5"], abs=1e-12)


def test_malformed_link_is_a_message(browser, streamlit_server):
    context, page = new_page(browser)
    try:
        page.goto(f"{streamlit_server}/share?analysis=..%2F..%2Fetc%2Fpasswd")
        wait_idle(page)
        assert_no_exception(page, "malformed id")
        assert page.get_by_text("malformed analysis id").count() >= 1
    finally:
        context.close()
