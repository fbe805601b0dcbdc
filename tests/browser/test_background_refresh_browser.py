"""Resampling that runs on the server never blocks a click, and the page updates itself: with a
foreground size below the data's users, Compare first shows the randomization test's normal
approximation and the Overview t intervals, each saying so, then the exact results appear
without any click."""

from __future__ import annotations

import _deadlines as deadlines
import pytest

from dashboard import demo
from dashboard_server import (SERVER_SCRIPT, REPO_ROOT, assert_no_exception, goto, start_server, stop_process,
                              wait_idle)

pytestmark = pytest.mark.browser

NOTE = "The page updates itself"
WATCH = """text => { window.__seen = false; new MutationObserver(() => {
    if (document.body.innerText.includes(text)) window.__seen = true;
}).observe(document.body, {subtree: true, childList: true, characterData: true}); }"""


# installed before a page's scripts run: every caption text carrying NOTE, as it appears
NOTES_SEEN = """window.__notes = [];
new MutationObserver(() => {
  for (const c of document.querySelectorAll('[data-testid="stCaptionContainer"]'))
    if (c.textContent.includes(%r) && !window.__notes.includes(c.textContent)) window.__notes.push(c.textContent);
}).observe(document, {subtree: true, childList: true, characterData: true});""" % NOTE


def saw_then_lost(page, text: str, timeout_ms: int = deadlines.SCRIPT_RUN_MS) -> None:
    """The text (recorded by the observer of ``WATCH``) appeared, then left the page by itself."""
    page.wait_for_function("() => window.__seen === true", timeout=timeout_ms)
    page.wait_for_function(f"() => !document.body.innerText.includes({text!r})", timeout=timeout_ms)


def test_pages_show_the_approximation_then_update_themselves(browser, tmp_path):
    proc, url = start_server(SERVER_SCRIPT, log_path=tmp_path / "server.log",
                             extra_env={"METRICS_CORE_STORE_DIR": str(tmp_path / "store"),
                                        "METRICS_CORE_DASHBOARD_FOREGROUND_USERS": "50"})
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        d = demo.make_demo(n_users=1500, n_items=300, list_length=20, seed=5)
        for name, run in d.runs.items():
            (tmp_path / f"{name}.csv").write_bytes(demo.to_csv_bytes(run))
        (tmp_path / "qrels.csv").write_bytes(demo.to_csv_bytes(d.qrels))
        goto(page, url + "/data")
        page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first.locator(
            'input[type="file"]').set_input_files([str(tmp_path / f"{n}.csv") for n in d.runs])
        wait_idle(page)
        page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").first.locator(
            'input[type="file"]').set_input_files(str(tmp_path / "qrels.csv"))
        wait_idle(page)
        # Compare opened under the randomization test from the start: had it been shown under another
        # test first, that first run would have queued the sign flips on the server thread ahead
        assert "/data?" in page.url, page.url
        # what the page's captions said, recorded from the first render on (the sign flips and the interval
        # are two jobs of the server thread: the note may lose its first part before a later look)
        page.add_init_script(NOTES_SEEN)
        page.goto(page.url.replace("/data?", "/compare?", 1) + "&compare_test=randomization")
        page.wait_for_function("() => window.__notes.some(t => t.includes('normal approximation'))",
                               timeout=deadlines.SCRIPT_RUN_MS)
        # no click: the page reruns by itself once the sign flips and bootstraps are done
        page.wait_for_selector(f'[data-testid="stCaptionContainer"]:has-text("{NOTE}")', state="detached",
                               timeout=deadlines.SCRIPT_RUN_MS)
        wait_idle(page)
        assert_no_exception(page, "Compare after the update")
        assert page.locator('[data-testid="stMarkdownContainer"] li', has_text="adjusted p").count() == 2

        page.evaluate(WATCH, "these are t intervals")
        page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").first.click()  # intervals on (small data)
        saw_then_lost(page, "these are t intervals")
        wait_idle(page)
        assert_no_exception(page, "Overview after the update")
        log = (tmp_path / "server.log").read_text(errors="replace")
        assert "Traceback" not in log, log[-2000:]
    finally:
        context.close()
        stop_process(proc)
