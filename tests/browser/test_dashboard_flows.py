"""End to end in headless Chromium: flows that once showed a Streamlit
exception (a page switch with a URL-bound control off its default; a table
selection that outlives its table)."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from dashboard_server import assert_no_exception, click_table_row, goto, wait_idle

pytestmark = pytest.mark.browser


def test_regression_row_opens_failures_with_gain_off_default(app_page, streamlit_server):
    page = app_page
    goto(page, streamlit_server + "/compare?gain=exponential&k=5")
    page.wait_for_selector('h3:has-text("Largest regressions")')
    click_table_row(page, "compare_regressions", 0)
    page.wait_for_selector('h1:has-text("Failures")')
    wait_idle(page)
    assert_no_exception(page, "Compare -> Failures")
    query = parse_qs(urlparse(page.url).query)
    assert query.get("gain") == ["exponential"] and query.get("k") == ["5"], page.url
    user = query["user"][0]
    assert page.locator(f'h3:has-text("User {user}")').count() == 1
    # the view survives a reload (the user is in the URL)
    page.reload()
    wait_idle(page)
    page.wait_for_selector(f'h3:has-text("User {user}")')
    assert_no_exception(page, "Failures after reload")


def test_failures_selection_outlives_a_shorter_table(app_page, streamlit_server):
    page = app_page
    goto(page, streamlit_server + "/failures")
    page.wait_for_selector('h3:has-text("Worst 25 users")')
    click_table_row(page, "failures_worst", 7)
    page.wait_for_selector('h3[id^="user-"]')
    chosen = page.locator('h3[id^="user-"]').inner_text()
    n_input = page.locator('.st-key-failures_n input')
    n_input.fill("5")
    n_input.press("Enter")
    page.wait_for_selector('h3:has-text("Worst 5 users")')
    wait_idle(page)
    assert_no_exception(page, "Failures with 5 users shown")
    assert page.locator('h3[id^="user-"]').inner_text() == chosen
