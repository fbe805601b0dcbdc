"""The HTML report opened in headless Chromium, offline: no dialog, no request, every chart drawn."""

from pathlib import Path

import pytest
from dashboard_server import local_files_only, wait_charts_drawn

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
XSS = "<img src=x onerror=alert(1)>"
QUOTED = 'say "hi" & it\'s <b>bold</b>'


@pytest.fixture(scope="module")
def report_file(tmp_path_factory):
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from test_report import make_evaluations  # noqa: E402  (shared small data with an XSS model name)

    from metrics_core.outputs.report import write_report

    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(path, make_evaluations(names=(XSS, QUOTED)), title=f"Report {XSS}", settings={"k": 5, "model": XSS})
    return path


# `browser` is the session fixture of tests/browser/conftest.py: one Playwright instance per
# process (a second sync_playwright inside the first one's event loop is refused).


def test_report_offline_no_dialog_all_charts_drawn(report_file, browser):
    context = browser.new_context(offline=True, java_script_enabled=True)
    page = context.new_page()
    dialogs, errors = [], []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    external = local_files_only(page)
    page.goto(report_file.as_uri(), wait_until="load")
    wait_charts_drawn(page)
    page.wait_for_timeout(300)
    charts = page.evaluate(
        """() => Array.from(document.querySelectorAll('.plotly-graph-div')).map(d => ({
               id: d.id,
               traces: (d.data || []).length,
               drawn: d.querySelectorAll('.scatterlayer .trace, .barlayer .trace').length,
               width: d.getBoundingClientRect().width}))""")
    assert dialogs == []
    assert external == []
    assert errors == []
    assert len(charts) == 5
    for c in charts:
        assert c["traces"] > 0 and c["drawn"] >= 1 and c["width"] > 100, c
    # the hostile model name is visible as text, in tables and in chart legends
    assert XSS in page.inner_text("#summary")
    assert XSS in page.inner_text("#comparison")
    assert XSS in page.title()
    legend = page.evaluate("() => Array.from(document.querySelectorAll('.legendtext')).map(t => t.textContent)")
    assert XSS in legend
    # quotes, apostrophes and ampersands are shown as typed (no &quot; or &amp; left visible)
    assert QUOTED in legend, legend
    assert not [t for t in legend if "&quot;" in t or "&amp;" in t or "&#" in t]
    assert page.evaluate("() => document.querySelectorAll('main img').length") == 0
    context.close()
