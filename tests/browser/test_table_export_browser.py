"""Streamlit's table toolbar offers no "Download as CSV" (it writes ``=tier`` as it is, a formula in a
spreadsheet): the tables keep their other tools (search, full screen), and the page's own
download buttons are the CSVs the dashboard offers, spreadsheet-safe (tests/test_spreadsheet_csv.py)."""

from __future__ import annotations

import _deadlines as deadlines
import pytest

from dashboard_server import assert_no_exception, goto

pytestmark = pytest.mark.browser


def test_no_table_offers_streamlits_csv_export(streamlit_server, app_page):
    page = app_page
    goto(page, streamlit_server)  # the Overview: the demo's ranking, intervals and scored-row tables
    tables = page.locator('[data-testid="stDataFrame"]')
    tables.nth(1).wait_for(timeout=deadlines.SCRIPT_RUN_MS)  # drawn once the run's tables reach the page
    assert tables.count() >= 2
    for i in range(tables.count()):
        table = tables.nth(i)
        table.scroll_into_view_if_needed()
        table.hover()
        toolbar = page.locator('[data-testid="stElementToolbar"]').filter(has=page.locator("button")).last
        toolbar.locator('button[aria-label="Search"], button[aria-label="Fullscreen"]').first.wait_for()
        assert page.locator('button[aria-label="Download as CSV"]').count() == 0, f"table {i}"
    assert page.get_by_text("Download summary CSV").count() == 1  # the page's own, spreadsheet-safe
    assert_no_exception(page, "overview")
