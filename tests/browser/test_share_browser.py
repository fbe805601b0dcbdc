"""The URL is the analysis, in headless Chromium.

Three models and a ground truth uploaded, K = 5 and exponential gain, a baseline
chosen on Compare and a user selected on Failures; then a reload, the address
copied into a new browser context and a walk through every page all show the same
data, settings and choices, and the summary CSV is identical. A shared snapshot
opens on its brief (title, notes, the decision) on another server process started
afterwards on the same store (what a restart of the server leaves: the store alone).

The first part runs on the browser tests' shared server; only the second process is
started here."""

from __future__ import annotations

import _deadlines as deadlines
import io
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from metrics_core.io import read_table

from dashboard_server import (SERVER_SCRIPT, REPO_ROOT, assert_no_exception, choose_option, click_table_row, goto,
                              start_server, stop_process, wait_rerun)

pytestmark = pytest.mark.browser

APP = SERVER_SCRIPT
PAGES = ["Overview", "Data", "Curves", "Distributions", "Failures", "Compare", "Share"]


def open_page(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    wait_rerun(page)
    page.wait_for_selector(f'h1:has-text("{title}")')


def uploader_input(page, label: str):
    return page.locator('[data-testid="stFileUploader"]', has_text=label).first.locator('input[type="file"]')


def download_summary(page) -> bytes:
    if page.locator('h1:has-text("Overview")').count() == 0:  # an address with Compare's choices opens on the Brief
        open_page(page, "Overview")
    page.wait_for_selector('h1:has-text("Overview")')
    assert_no_exception(page, "Overview")
    with page.expect_download() as info:
        page.locator(".st-key-overview_download button", has_text="Download summary").first.click()
    return Path(info.value.path()).read_bytes()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    return context, page


def query(page) -> dict:
    return parse_qs(urlparse(page.url).query)


def selectbox_value(page, key: str) -> str:
    box = page.locator(f".st-key-{key} [data-testid='stSelectbox']")
    return box.locator("input").input_value() or box.inner_text().strip().split("\n")[-1]


def choose(page, key: str, option: str) -> None:
    choose_option(page, page.locator(f".st-key-{key} [data-testid='stSelectbox']"), option)
    wait_rerun(page)


def check_view(page, where: str, aid: str, baseline: str, user: str) -> None:
    """Every page shows the uploaded data with K=5, exponential gain and the choices."""
    q = query(page)
    assert q.get("analysis") == [aid] and q.get("k") == ["5"] and q.get("gain") == ["exponential"], (where, page.url)
    assert page.get_by_text("Demo data").count() == 0, where
    for title in PAGES:
        open_page(page, title)
        assert_no_exception(page, f"{where}: {title}")
        q = query(page)
        assert q.get("analysis") == [aid] and q.get("k") == ["5"], (where, title, page.url)
        assert q.get("compare_baseline") == [baseline] and q.get("user") == [user], (where, title, page.url)
        if title == "Compare":
            assert selectbox_value(page, "compare_baseline") == baseline, where
        if title == "Failures":
            assert page.locator('h3[id^="user-"]').inner_text().replace("\u200b", "") == f"User {user}", where
    open_page(page, "Overview")


def test_the_url_is_the_analysis(browser, streamlit_server, streamlit_store_dir, tmp_path):
    d = demo.make_demo(n_users=150, n_items=120, list_length=15, seed=3)
    paths = demo.write_demo_files(tmp_path / "files", d)
    base = streamlit_server
    context, page = new_page(browser)
    try:
        goto(page, base + "/data")
        # the page's own order is runs first, then the truth: nothing red meanwhile
        uploader_input(page, "Ranked results").set_input_files([str(paths[n]) for n in d.runs])
        wait_rerun(page)
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0
        assert page.locator('[data-testid="stAlertContentInfo"]', has_text="Waiting for a ground truth").count() == 1
        uploader_input(page, "Ground truth").set_input_files(str(paths["qrels"]))
        wait_rerun(page)
        assert_no_exception(page, "Data after upload")
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0
        k_input = page.locator('[data-testid="stSidebar"] .st-key-k input')
        k_input.fill("5")
        k_input.press("Enter")
        wait_rerun(page)
        gain = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Gain")
        choose_option(page, gain, "exponential")
        wait_rerun(page)
        aid = query(page)["analysis"][0]

        open_page(page, "Compare")
        choose(page, "compare_baseline", "two_tower")
        open_page(page, "Failures")
        click_table_row(page, "failures_worst", 2)
        user = query(page)["user"][0]
        open_page(page, "Overview")
        before = download_summary(page)

        page.reload()
        wait_rerun(page)
        check_view(page, "after reload", aid, "two_tower", user)
        assert download_summary(page) == before
        address = page.url
        context.close()

        context, page = new_page(browser)
        goto(page, address)
        check_view(page, "copied address in a new browser", aid, "two_tower", user)
        assert download_summary(page) == before

        open_page(page, "Share")
        page.locator(".st-key-share_title input").fill("Two-tower at K=5")
        page.locator(".st-key-share_notes textarea").fill("exponential gain; look at new users")
        page.get_by_role("button", name="Share: create a read-only link").click()
        wait_rerun(page)
        link = page.locator('[data-testid="stCode"]').first.inner_text().strip()
    finally:
        context.close()

    csv = pd.read_csv(io.BytesIO(before))
    assert list(csv["model"]) == list(d.runs)
    qrels = read_table(paths["qrels"], kind="qrels")[0]
    for _, row in csv.iterrows():
        ref = mc.evaluate(read_table(paths[row["model"]], kind="run")[0], qrels, metrics=["ndcg@5"],
                          gain="exponential")
        assert row["ndcg@5"] == pytest.approx(ref.summary["ndcg@5"], abs=1e-12)

    # a server process that never saw the snapshot, on the same store: it knows it from the store alone
    proc, base2 = start_server(APP, extra_env={"METRICS_CORE_STORE_DIR": str(streamlit_store_dir)},
                               log_path=tmp_path / "second.log")
    try:
        context, page = new_page(browser)
        parts = urlparse(link)
        goto(page, f"{base2}{parts.path}?{parts.query}")
        # a snapshot opens on its brief: the title, the notes, then the decision against the baseline
        page.wait_for_selector('h1:has-text("Two-tower at K=5")')
        assert page.get_by_text("exponential gain; look at new users").count() == 1
        assert page.get_by_text("than two_tower on ndcg@5").count() >= 1
        open_page(page, "Overview")
        assert page.get_by_role("heading", name="Two-tower at K=5").count() == 1
        assert download_summary(page) == before
        context.close()
    finally:
        stop_process(proc)


def test_malformed_link_is_a_message(browser, streamlit_server):
    context, page = new_page(browser)
    try:
        goto(page, f"{streamlit_server}/share?analysis=..%2F..%2Fetc%2Fpasswd")
        assert_no_exception(page, "malformed id")
        assert page.get_by_text("malformed analysis id").count() >= 1
    finally:
        context.close()
