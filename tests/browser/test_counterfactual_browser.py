"""A product manager's link on a log with propensities opens on the counterfactual verdict, in headless
Chromium at 1400 x 1000.

Two runs, a ground truth and a click log with the logging policy's propensities are uploaded; the
Counterfactual page appears in the navigation, a snapshot is shared, and the link opened in a fresh
browser context shows the counterfactual verdict (the brief's line and each model's line) on the first
screen of the Brief, the numbers the Counterfactual page shows. Screenshots: docs/screenshots/counterfactual_page.png
(the page) and counterfactual.png (the shared link as it opens)."""

from __future__ import annotations

import _deadlines as deadlines
import pytest

from dashboard_server import assert_no_exception, goto, open_page, screenshot_dir, wait_charts_drawn, wait_rerun
from test_brief_browser import VIEW, on_first_screen, uploader
from test_dashboard_counterfactual import bandit

pytestmark = pytest.mark.browser


def test_a_shared_link_opens_on_the_counterfactual_verdict(browser, streamlit_server, tmp_path):
    log, runs = bandit(seed=5)
    runs = {"bm25": runs["bm25"], "dense": next(r for n, r in runs.items() if n != "bm25")}
    paths = {}
    for name, run in runs.items():
        paths[name] = tmp_path / f"{name}.csv"
        run.to_csv(paths[name], index=False)
    paths["qrels"] = tmp_path / "qrels.csv"
    log.groupby(["user_id", "item_id"], as_index=False)["click"].max().rename(
        columns={"click": "relevance"}).to_csv(paths["qrels"], index=False)
    paths["log"] = tmp_path / "clicks.csv"
    log.to_csv(paths["log"], index=False)
    context = browser.new_context(viewport=VIEW)
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        goto(page, streamlit_server + "/data")
        uploader(page, "Ranked results").set_input_files([str(paths["bm25"]), str(paths["dense"])])
        wait_rerun(page)
        uploader(page, "Ground truth").set_input_files(str(paths["qrels"]))
        wait_rerun(page)
        uploader(page, "Logged feedback").set_input_files(str(paths["log"]))
        wait_rerun(page)
        assert_no_exception(page, "Data")
        open_page(page, "Counterfactual")
        assert_no_exception(page, "Counterfactual")
        chart = page.locator('[data-testid="stPlotlyChart"]')
        chart.scroll_into_view_if_needed()
        wait_charts_drawn(page, '[data-testid="stPlotlyChart"] .js-plotly-plot')  # every estimator, both models
        assert chart.count() == 1
        shots = screenshot_dir()
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / "counterfactual_page.png"), full_page=True)
        # every table of the page (verdict, diagnostics, estimators) shows all its columns at 1400 px:
        # nothing is hidden beyond a sideways scroll
        grids = page.locator('[data-testid="stDataFrame"] .dvn-scroller')
        grids.first.wait_for()
        widths = grids.evaluate_all("es => es.map(e => [e.scrollWidth, e.clientWidth])")
        assert len(widths) == 3 and all(wide <= shown + 1 for wide, shown in widths), widths
        on_page = page.locator(".st-key-ope_verdict [data-testid='stText']").first.inner_text().strip()
        assert on_page.startswith("Counterfactual (DR): "), on_page
        open_page(page, "Share")
        page.locator(".st-key-share_title input").fill("Dense ranker: counterfactual check")
        page.get_by_role("button", name="Share: create a read-only link").click()
        wait_rerun(page)
        link = page.locator('[data-testid="stCode"]').first.inner_text().strip()
    finally:
        context.close()

    fresh = browser.new_context(viewport=VIEW)
    page = fresh.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        goto(page, streamlit_server + link[link.index("/?"):] if "/?" in link else streamlit_server + link)
        page.wait_for_selector('h1:has-text("Dense ranker: counterfactual check")')
        section = page.locator(".st-key-brief_counterfactual")
        section.wait_for()
        assert_no_exception(page, "brief")
        page.screenshot(path=str(screenshot_dir() / "counterfactual.png"))
        line = section.locator("[data-testid='stText']").first.inner_text().strip()
        assert line == on_page, (line, on_page)
        items = [t.strip() for t in section.locator("[data-testid='stMarkdownContainer'] li").all_inner_texts()]
        assert len(items) == 2 and items[0].startswith("bm25: estimated value") and \
            items[1].startswith("dense: estimated value"), items
        assert on_first_screen(page, section.locator("[data-testid='stMarkdownContainer'] li").last), "below the first screen"
    finally:
        fresh.close()
