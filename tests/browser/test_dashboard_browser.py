"""End to end in headless Chromium: every page from the sidebar, uploads,
K and gain, the summary CSV download checked against metrics_core.evaluate,
no exception anywhere, and a screenshot of each page for the README
(docs/screenshots/<page>.png)."""

from __future__ import annotations

import io
import re
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from metrics_core.io import read_table

from dashboard_server import assert_no_exception, choose_option, screenshot_dir, wait_idle

pytestmark = pytest.mark.browser

SCREENSHOTS = screenshot_dir()
OWN_PAGES = ["Brief", "Overview", "Data", "Curves", "Distributions", "Failures"]
PLOTTED = {"Overview", "Curves", "Distributions"}


def open_page(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    wait_idle(page)
    page.wait_for_selector(f'h1:has-text("{title}")')


def screenshot(page, name: str) -> None:
    """Whole page: the main area scrolls inside the app, so grow the viewport to fit it."""
    height = page.evaluate(
        "() => Math.max(...[...document.querySelectorAll('[data-testid=\"stMain\"], "
        "[data-testid=\"stAppViewContainer\"], section.main')].map(e => e.scrollHeight), 1000)")
    page.set_viewport_size({"width": 1400, "height": min(int(height) + 40, 3200)})
    page.wait_for_timeout(600)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"))
    page.set_viewport_size({"width": 1400, "height": 1000})


def uploader_input(page, label: str):
    box = page.locator('[data-testid="stFileUploader"]', has_text=label).first
    return box.locator('input[type="file"]')


def test_every_page_on_demo_data_with_screenshots(app_page, streamlit_server):
    page = app_page
    page.goto(streamlit_server)
    wait_idle(page)
    page.wait_for_selector('h1:has-text("Overview")')
    assert page.get_by_text("Demo data").first.is_visible()
    titles = [t.split("\n")[-1].strip() for t in
              page.locator('[data-testid="stSidebarNav"] a').all_inner_texts()]
    assert titles[:6] == OWN_PAGES
    for title in titles:
        open_page(page, title)
        if title in PLOTTED:
            page.wait_for_selector('[data-testid="stPlotlyChart"]')
        assert_no_exception(page, title)
        assert page.locator('[data-testid="stAlertContentError"]').count() == 0, title
        if title == "Failures":
            # select the first worst user: click the first data row of the grid (a canvas)
            grid = page.locator('[data-testid="stDataFrame"]').first
            box = grid.bounding_box()
            page.mouse.click(box["x"] + 10, box["y"] + 35 + 17)
            wait_idle(page)
            page.wait_for_selector('h3:has-text("User ")')
            assert_no_exception(page, "Failures drill-down")
        screenshot(page, "brief_demo" if title == "Brief" else title.lower())  # brief.png: a shared link


def _write_small(tmp: Path) -> tuple[demo.DemoData, dict[str, Path]]:
    d = demo.make_demo(n_users=250, n_items=150, list_length=20, seed=11)
    return d, demo.write_demo_files(tmp, d)


def test_upload_change_k_gain_and_download_summary(app_page, streamlit_server, tmp_path):
    page = app_page
    d, paths = _write_small(tmp_path)
    page.goto(streamlit_server)
    wait_idle(page)
    open_page(page, "Data")
    uploader_input(page, "Ranked results").set_input_files([str(paths[n]) for n in d.runs])
    wait_idle(page)
    uploader_input(page, "Ground truth").set_input_files(str(paths["qrels"]))
    wait_idle(page)
    uploader_input(page, "Item features").set_input_files(str(paths["item_features"]))
    wait_idle(page)
    assert_no_exception(page, "Data after upload")
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0
    assert page.get_by_text("Return to the demo data").is_visible()

    # K = 20 and exponential gain from the sidebar; the URL follows
    k_input = page.locator('[data-testid="stSidebar"] .st-key-k input')
    k_input.fill("20")
    k_input.press("Enter")
    wait_idle(page)
    gain = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Gain")
    choose_option(page, gain, "exponential")
    wait_idle(page)
    query = parse_qs(urlparse(page.url).query)
    assert query.get("k") == ["20"] and query.get("gain") == ["exponential"], page.url

    open_page(page, "Overview")
    page.wait_for_selector('[data-testid="stPlotlyChart"]')
    assert_no_exception(page, "Overview after upload")
    assert page.get_by_text("Demo data").count() == 0
    button = page.locator('[data-testid="stDownloadButton"] button', has_text="summary")
    with page.expect_download() as info:
        button.click()
    csv = pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes()))

    assert csv.columns[0] == "model"
    assert list(csv["model"]) == list(d.runs)
    metrics = list(csv.columns[1:])
    assert {"ndcg@20", "map@20", "recall@20", "auc", "gauc", "ils@20"} <= set(metrics)
    assert not any(re.search(r"@(?!20$)\d+$", m) for m in metrics), metrics
    qrels = read_table(paths["qrels"], kind="qrels")[0]
    features = pd.read_csv(paths["item_features"], dtype={"item_id": str})
    for _, row in csv.iterrows():
        run = read_table(paths[row["model"]], kind="run")[0]
        ref = mc.evaluate(run, qrels, metrics=metrics, gain="exponential", item_features=features)
        for m in metrics:
            assert np.isfinite(row[m]), (row["model"], m)
            assert row[m] == pytest.approx(ref.summary[m], rel=1e-12, abs=1e-12), (row["model"], m)
    # the exponential gain is really in effect
    lin = mc.evaluate(read_table(paths["two_tower"], kind="run")[0], qrels, metrics=["dcg@20"])
    two = csv.set_index("model").loc["two_tower"]
    assert two["dcg@20"] != pytest.approx(lin.summary["dcg@20"])

    for title in OWN_PAGES[2:]:
        open_page(page, title)
        assert_no_exception(page, f"{title} on uploaded data")

    open_page(page, "Data")
    page.get_by_text("Return to the demo data").click()
    wait_idle(page)
    assert page.get_by_text("demo data").first.is_visible()
    assert_no_exception(page, "back to demo")
