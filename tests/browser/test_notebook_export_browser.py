"""The example notebooks exported to HTML by nbconvert, opened offline in headless Chromium: every
``mc.plot`` figure of every notebook is drawn (its traces in the SVG), as wide as the page's output
area and as high as its layout, with one plotly.js for the page, no request leaving the file and no
script error."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import _notebooks as nbs  # noqa: E402
from dashboard_server import local_files_only, wait_charts_drawn  # noqa: E402

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("exported")
    pages = {}
    for name in nbs.JOURNEYS:
        nb = nbs.execute(name, folder)
        pages[name] = (nbs.export_html(nb, folder / f"{name}.html"), nbs.figure_cells(nb))
    return pages


@pytest.mark.parametrize("name", nbs.JOURNEYS)
def test_every_figure_is_drawn_offline(name, exported, browser, tmp_path):
    path, figures = exported[name]
    context = browser.new_context(offline=True, viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    # nbconvert's page asks for require.js and MathJax from CDNs: offline they fail, harmlessly
    external = local_files_only(page)
    page.goto(path.as_uri(), wait_until="load")
    wait_charts_drawn(page, "div.mc-plot")
    charts = page.evaluate(
        """() => Array.from(document.querySelectorAll('div.mc-plot')).map(d => ({
               traces: (d.data || []).length,
               drawn: d.querySelectorAll('.scatterlayer .trace, .barlayer .trace, .boxlayer .trace').length,
               width: d.getBoundingClientRect().width, height: d.getBoundingClientRect().height,
               layoutHeight: (d.layout || {}).height}))""")
    page.screenshot(path=str(tmp_path / f"{name}.png"), full_page=True)
    context.close()
    assert errors == []
    assert not [u for u in external if "plot.ly" in u]  # the page's own plotly.js drew every figure
    assert len(charts) == len(figures)
    for chart, cell in zip(charts, figures):
        traces = len(nbs.outputs(cell)[nbs.PLOTLY_MIMETYPE]["data"])
        assert chart["traces"] == traces and chart["drawn"] >= 1, (chart, cell.source)
        assert chart["width"] > 800 and abs(chart["height"] - (chart["layoutHeight"] or 450)) <= 1, chart
