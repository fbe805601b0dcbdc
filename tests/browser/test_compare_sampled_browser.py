"""Compare's section for runs scored on sampled negatives (1+N protocol), in Chromium: two uploaded
1+N runs (one model name holding a markdown link), the catalogue size typed into the section's
field; the page shows the sampled and corrected table, the reversal warning with the name as text,
and keeps the size in its address."""

from __future__ import annotations

import _deadlines as deadlines
import pytest

from dashboard_server import (assert_no_exception, open_page, screenshot_dir, upload_runs_and_truth, wait_idle,
                              wait_rerun)
from test_compare_sampled_dashboard import HOSTILE, N, _one_plus_n_files

pytestmark = pytest.mark.browser

VIEW = {"width": 1400, "height": 1000}


def test_the_sampled_section_says_which_order_may_reverse(browser, streamlit_server, tmp_path):
    files = _one_plus_n_files()
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    runs = [tmp_path / name for name in files if name != "qrels.csv"]
    context = browser.new_context(viewport=VIEW)
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        upload_runs_and_truth(page, streamlit_server, runs, tmp_path / "qrels.csv")
        open_page(page, "Compare")
        wait_idle(page)
        page.locator('[data-testid="stExpander"] summary', has_text="Runs scored on sampled negatives").click()
        field = page.locator(".st-key-compare_sampled_items input")
        field.fill(str(N))
        field.press("Enter")
        wait_rerun(page)
        warning = page.locator('[data-testid="stAlert"]', has_text="may reverse under full ranking").first
        warning.wait_for(timeout=deadlines.SCRIPT_RUN_MS)
        assert HOSTILE in warning.inner_text()  # the model's name as text, not a link
        assert warning.locator("a").count() == 0
        section = page.locator('[data-testid="stExpander"]', has_text="Runs scored on sampled negatives")
        assert section.locator('[data-testid="stDataFrame"]').count() == 1  # the sampled and corrected table
        assert f"compare_sampled_items={N}" in page.url
        assert_no_exception(page, "Compare with sampled negatives")
        shots = screenshot_dir()
        shots.mkdir(parents=True, exist_ok=True)
        warning.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "compare_sampled.png"))
    finally:
        context.close()
