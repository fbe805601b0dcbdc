"""Runs uploaded together in headless Chromium, one under a 1,000-character file name (the longest the
analysis store keeps) and one under 1,204 characters: the longer is refused in one line (the others are
loaded), the sidebar, the Data page and the Overview keep their layout (nothing wider than the window), the
kept long name is cut visibly where it is shown on one line and given whole on hover. Screenshots of both
pages are saved (``dashboard_server.screenshot_dir()``) to be looked at."""

from __future__ import annotations

import pytest

from dashboard import demo
from dashboard_server import assert_no_exception, goto, open_page, screenshot_dir, wait_rerun

pytestmark = pytest.mark.browser

LONG = ("a_very_long_model_name_" * 60)[:996]  # + ".csv": 1,000 characters, kept
TOO_LONG = ("a_too_long_model_name_" * 60)[:1200]  # + ".csv": 1,204 characters, refused


def overflow(page) -> int:
    """How many pixels the page is wider than the window (0: no horizontal scrolling)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def test_long_file_names_are_cut_visibly_or_refused_alone_and_break_no_layout(app_page, streamlit_server):
    page = app_page
    d = demo.make_demo(n_users=120, n_items=80, list_length=10, seed=5)
    runs = [{"name": f"{LONG}.csv", "mimeType": "text/csv", "buffer": demo.to_csv_bytes(d.runs["popularity"])},
            {"name": f"{TOO_LONG}.csv", "mimeType": "text/csv", "buffer": demo.to_csv_bytes(d.runs["matrix_factorization"])},
            {"name": "two_tower.csv", "mimeType": "text/csv", "buffer": demo.to_csv_bytes(d.runs["two_tower"])}]
    truth = {"name": "qrels.csv", "mimeType": "text/csv", "buffer": demo.to_csv_bytes(d.qrels)}
    assert (len(runs[0]["name"]), len(runs[1]["name"])) == (1000, 1204)
    goto(page, streamlit_server + "/data")
    page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").locator(
        'input[type="file"]').set_input_files(truth)
    wait_rerun(page)
    page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").locator(
        'input[type="file"]').set_input_files(runs)
    wait_rerun(page)
    page.wait_for_selector('[data-testid="stAlertContentError"]:has-text("was not loaded")')
    assert_no_exception(page, "Data")
    refusal = page.locator('[data-testid="stAlertContentError"]:has-text("was not loaded")').inner_text()
    refusal = refusal.replace("\u200b", "")
    assert f"{TOO_LONG[:39]}… was not loaded" in refusal and "at most 1000 are kept, rename the file" in refusal, refusal
    page.wait_for_selector('button:has-text("Remove two_tower")')
    assert page.locator('button:has-text("Remove a_too_long")').count() == 0
    assert page.locator('[data-testid="stAlertContentWarning"]:has-text("could not be saved")').count() == 0
    remove = page.locator('button:has-text("Remove a_very_long")').first
    label = remove.inner_text()
    assert label.rstrip().endswith("…") and len(label) < 80, label
    box = remove.bounding_box()
    assert box["x"] + box["width"] <= 1400, box
    remove.hover()
    tip = page.locator('[data-testid="stTooltipContent"]').first
    tip.wait_for()
    assert LONG in tip.inner_text().replace("\u200b", "")  # the whole name, on hover
    page.mouse.move(5, 995)
    assert overflow(page) <= 0, overflow(page)
    shots = screenshot_dir()
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / "long_file_name_data.png"), full_page=True)

    open_page(page, "Overview")
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg')
    page.screenshot(path=str(shots / "long_file_name_overview.png"), full_page=True)
    assert_no_exception(page, "Overview")
    assert overflow(page) <= 0, overflow(page)
    for chart in page.locator('[data-testid="stPlotlyChart"]').all():
        box = chart.bounding_box()
        assert box is None or box["x"] + box["width"] <= 1400, box
    ticks = page.locator('[data-testid="stPlotlyChart"] .xtick text').all_text_contents()
    legend = page.locator('[data-testid="stPlotlyChart"] .legendtext').all_text_contents()
    assert any("…" in t for t in ticks + legend), (ticks, legend)  # the long name, cut in the chart
    assert all(len(t) <= 40 for t in ticks + legend), [t for t in ticks + legend if len(t) > 40]
