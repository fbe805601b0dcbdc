"""Hostile names and ids in headless Chromium: uploaded model names, file
names, user ids and the ``?analysis=`` value are shown as text on every page,
never as links, images or HTML, and the browser never contacts another host;
the summary CSV neutralises formula-leading cells."""

from __future__ import annotations

import _deadlines as deadlines
import io
from pathlib import Path

import pandas as pd
import pytest

from dashboard import demo
from dashboard_server import assert_no_exception, click_table_row, goto, wait_rerun

pytestmark = pytest.mark.browser

TRAP = "127.0.0.1:9"  # nothing listens there: any request or link to it is a failure
HOSTILE_USER = f"![x](http://{TRAP}/p.png)"
# File names cannot hold '/', and browsers percent-encode '"' in uploaded file names.
HOSTILE_MODELS = {
    "popularity": f"[Session expired](https:{TRAP})",
    "matrix_factorization": "<img src=x onerror=alert(1)>",
    "two_tower": "=HYPERLINK(A1)",
}
PAGES = ["Brief", "Overview", "Data", "Curves", "Distributions", "Failures", "Compare", "Explain", "Share"]


def hostile_files() -> list[dict]:
    d = demo.make_demo(n_users=120, n_items=80, list_length=10, seed=5)
    first = d.runs["popularity"]["user_id"].iloc[0]
    rename = lambda f: f.assign(user_id=f["user_id"].replace({first: HOSTILE_USER}))  # noqa: E731
    files = [{"name": f"{HOSTILE_MODELS[n]}.csv", "mimeType": "text/csv",
              "buffer": demo.to_csv_bytes(rename(run))} for n, run in d.runs.items()]
    qrels = rename(d.qrels)
    mine = qrels["user_id"] == HOSTILE_USER  # relevant items no model retrieves: ndcg 0, first row
    qrels.loc[mine, "item_id"] = [f"unseen{i}" for i in range(int(mine.sum()))]
    truth = {"name": f"![truth](https:{TRAP}).csv", "mimeType": "text/csv",
             "buffer": demo.to_csv_bytes(qrels)}
    return files, truth


def assert_inert(page, where: str) -> None:
    assert_no_exception(page, where)
    for selector in (f'a[href*="{TRAP}"]', f'img[src*="{TRAP}"]', 'img[src="x"]', "img[onerror]"):
        found = page.locator(selector)
        assert found.count() == 0, f"{where}: {selector} in the DOM: " + found.first.evaluate(
            "e => (e.closest('[data-testid]') || e).outerHTML.slice(0, 400)")


def open_page(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    wait_rerun(page)
    page.wait_for_selector(f'h1:has-text("{title}")')


def test_hostile_names_ids_and_analysis_value_stay_text(browser, streamlit_server, tmp_path):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    outside, dialogs = [], []
    page.on("request", lambda r: outside.append(r.url) if not (
        r.url.startswith(streamlit_server) or r.url.startswith(("data:", "blob:"))) else None)
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        goto(page, streamlit_server + "/data")
        runs, truth = hostile_files()
        page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").locator(
            'input[type="file"]').set_input_files(truth)
        wait_rerun(page)
        page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").locator(
            'input[type="file"]').set_input_files(runs)
        wait_rerun(page)
        page.wait_for_timeout(1500)  # the toast naming the models
        assert_inert(page, "Data after upload")
        for title in PAGES:
            open_page(page, title)
            if title in ("Overview", "Curves", "Distributions", "Compare"):
                page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
            assert_inert(page, title)
        # the hostile user, found by the id search (its text is shown as typed, never as markdown)
        open_page(page, "Failures")
        search = page.locator(".st-key-failures_search input")
        search.fill(HOSTILE_USER)
        search.press("Enter")
        wait_rerun(page)
        assert_inert(page, "Failures searched with the hostile id")
        click_table_row(page, "failures_worst", 0)
        page.wait_for_selector('h3[id^="user-"]')
        assert page.locator('h3[id^="user-"]').inner_text().replace("\u200b", "") == f"User {HOSTILE_USER}"
        assert_inert(page, "Failures with the hostile user")

        open_page(page, "Overview")
        with page.expect_download() as info:
            page.locator(".st-key-overview_download button", has_text="Download summary").first.click()
        csv = pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes()), dtype={"model": str})
        assert "'" + HOSTILE_MODELS["two_tower"] in set(csv["model"])
        assert not any(str(m).startswith(("=", "+", "-", "@")) for m in csv["model"])

        for path in ("/share", "/", "/compare"):
            goto(page, f"{streamlit_server}{path}?analysis=[x](http://{TRAP}/)")
            assert_inert(page, f"{path} with a hostile analysis value")
        assert not outside, outside
        assert not dialogs, dialogs
    finally:
        context.close()


@pytest.mark.parametrize("query, message", [
    ("k=inf", "k must be a whole number from 1 to 1,000; got 'inf'"),
    ("k=1e999", "k must be a whole number from 1 to 1,000; got '1e999'"),
    ("beta=1e308", "beta must be a finite number greater than 0 and at most 1e+100; got '1e308'"),
])
def test_numbers_in_the_address_that_metrics_core_refuses_show_a_message(browser, streamlit_server, query,
                                                                          message):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        for path in ("/", "/curves", "/compare"):
            goto(page, f"{streamlit_server}{path}?{query}")
            assert_no_exception(page, f"{path}?{query}")
            alerts = page.locator('[data-testid="stAlert"]').all_inner_texts()
            assert any(message in a.replace("\u200b", "") for a in alerts), (path, alerts)
            key = query.split("=")[0]
            assert f"{query}" not in page.url  # dropped from the address
            if key == "k":
                assert page.locator(".st-key-k input").input_value() == "10"
    finally:
        context.close()


def test_a_deeply_nested_json_line_is_one_message_and_the_server_lives(browser, streamlit_server, tmp_path):
    """A 40 KB JSON-lines run whose extra field nests 20,000 arrays (it ended the process inside
    pyarrow's reader): uploaded to the real server, it is one message naming the file and the
    limit; the server keeps answering, other files of the analysis still work, and its address
    opened in a new browser shows the same message instead of ending the server."""
    import urllib.request

    d = demo.make_demo(n_users=60, n_items=50, list_length=8, seed=2)
    row = d.runs["popularity"].iloc[0]
    deep = ('{"user_id": "%s", "item_id": "%s", "score": 1.0, "extra": ' % (row["user_id"], row["item_id"])
            + "[" * 20_000 + "]" * 20_000 + "}\n")
    bomb = {"name": "nested.jsonl", "mimeType": "application/json", "buffer": deep.encode()}
    good = {"name": "popularity.csv", "mimeType": "text/csv", "buffer": demo.to_csv_bytes(d.runs["popularity"])}
    truth = {"name": "qrels.csv", "mimeType": "text/csv", "buffer": demo.to_csv_bytes(d.qrels)}
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        goto(page, streamlit_server + "/data")
        page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").locator(
            'input[type="file"]').set_input_files(truth)
        wait_rerun(page)
        page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").locator(
            'input[type="file"]').set_input_files([good, bomb])
        wait_rerun(page)
        assert_no_exception(page, "Data after the nested upload")
        alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts()).replace("\u200b", "")
        assert "nested.jsonl" in alerts and "100" in alerts, alerts
        with urllib.request.urlopen(streamlit_server + "/_stcore/health", timeout=30) as answer:
            assert answer.read().decode().strip() == "ok"
        address = page.url
    finally:
        context.close()
    again = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = again.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        goto(page, address)
        open_page(page, "Data")
        assert_no_exception(page, "the stored analysis opened again")
        alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts()).replace("\u200b", "")
        assert "nested.jsonl" in alerts, alerts
        with urllib.request.urlopen(streamlit_server + "/_stcore/health", timeout=30) as answer:
            assert answer.read().decode().strip() == "ok"
    finally:
        again.close()
