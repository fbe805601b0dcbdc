"""An address naming the page an analysis opens on (``/overview`` of the demo, ``/brief`` of an
analysis with a comparison chosen), opened in a fresh browser, shows that page: Streamlit serves
its default page at the root only, and would say "Page not found"."""

from __future__ import annotations

import pytest

from dashboard_server import assert_no_exception, goto

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("path, heading", [
    ("/overview", "Overview"),
    ("/brief?compare_baseline=popularity", "Decision brief"),
    ("/", None),
])
def test_an_address_naming_the_opening_page_shows_it(streamlit_server, app_page, path, heading):
    page = app_page
    goto(page, streamlit_server + path)
    page.wait_for_timeout(1000)
    assert page.locator('[data-testid="stDialog"]').count() == 0, page.locator('[data-testid="stDialog"]').first.inner_text()
    assert page.get_by_text("Page not found").count() == 0
    assert_no_exception(page, path)
    if heading:
        assert page.locator("h1, h2").filter(has_text=heading).count() >= 1, page.locator("h1, h2").all_inner_texts()
