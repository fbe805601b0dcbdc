"""The browser benchmark's page switch (``benchmarks.browser_actions.Driver.go``) on a stand-in page:
a sidebar click that shows nothing is clicked again, and a page that never comes is an error that
names what the page showed instead."""

from __future__ import annotations

import pytest

from benchmarks import browser_actions
from benchmarks.browser_actions import _DONE, _NAVIGATING, _WHY, Driver


class PlaywrightTimeout(Exception):
    """Named as Playwright's timeout is (the driver looks for "Timeout" in the name)."""


class StandInPage:
    """Shows the page clicked in the sidebar from the ``shows_after``-th click on (never with None)."""

    def __init__(self, shows_after: int | None):
        self.shows_after, self.clicks, self.shown = shows_after, 0, False
        self.first = self

    def on(self, _event, _handler):
        pass

    def locator(self, _selector, has_text=None):
        return self

    def click(self):
        self.clicks += 1
        self.shown = self.shows_after is not None and self.clicks >= self.shows_after

    def evaluate(self, script, arg=None):
        if script == _WHY:
            return {"state": "notRunning", "headings": ["Overview"], "selector": arg["selector"]}
        return False  # the watch, and "no second run since"

    def wait_for_function(self, script, arg=None, polling=None, timeout=None):
        assert script in (_NAVIGATING, _DONE)
        if not self.shown:
            raise PlaywrightTimeout(f"waited {timeout} ms")

    def wait_for_timeout(self, _ms):
        pass


@pytest.mark.parametrize("shows_after", [1, 2, browser_actions.NAV_CLICKS])
def test_a_lost_sidebar_click_is_clicked_again(shows_after):
    page = StandInPage(shows_after)
    driver = Driver(page, timeout_ms=5_000)
    driver.go("Share")
    assert page.clicks == shows_after
    assert driver.current == "Share"
    driver.go("Share")  # already shown: nothing clicked
    assert page.clicks == shows_after


def test_a_page_that_never_comes_names_what_was_shown():
    page = StandInPage(None)
    driver = Driver(page, timeout_ms=5_000)
    with pytest.raises(TimeoutError, match=r"^page Share not shown within 5 s: .*'headings': \['Overview'\]"):
        driver.go("Share")
    assert page.clicks == browser_actions.NAV_CLICKS
    assert driver.current is None
