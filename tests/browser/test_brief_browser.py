"""The decision on the first screen, in headless Chromium at 1400 x 1000.

Three models where two_tower did not serve a group of cold-start users and the reranker
is worse than the baseline for them; a baseline chosen on Compare, a snapshot shared, then
the link opened in a fresh browser context: the brief shows the title, the notes, one verdict
line per challenger with the numbers Compare shows, the coverage warning and the failure groups,
all without scrolling; a failure group opens Failures on that pair and that group with as many users
as the row counts. Screenshots: docs/screenshots/brief.png (the shared link as it opens) and
brief_row_on_failures.png (where the row leads); a segment where a challenger loses opens Compare's
segments of that attribute with the same lift, adjusted p and users (brief_segment_on_compare.png)."""

from __future__ import annotations

import re

import _deadlines as deadlines
import numpy as np
import pandas as pd
import pytest

from dashboard import demo
from dashboard.brief_text import FAILURES_GROUP

from dashboard_server import assert_no_exception, choose_option, click_table_row, goto, screenshot_dir, wait_rerun

pytestmark = pytest.mark.browser

SCREENSHOTS = screenshot_dir()
VIEW = {"width": 1400, "height": 1000}


def scenario(tmp_path):
    """popularity, two_tower (misses 40 'new' users), reranker (two_tower's lists with relevant items
    lifted, except for the 'new' users, whose lists it shuffles: better overall, worse for them)."""
    d = demo.make_demo(n_users=400, n_items=200, list_length=20, seed=21)
    users = d.users.set_index("user_id")["segment"]
    new = users.index[users == "new"]
    runs = {"popularity": d.runs["popularity"], "two_tower": d.runs["two_tower"].copy(),
            "reranker": d.runs["two_tower"].copy()}
    missing = set(new[:40])
    runs["two_tower"] = runs["two_tower"][~runs["two_tower"]["user_id"].isin(missing)]
    rng = np.random.default_rng(3)
    rr = runs["reranker"]
    worse = rr["user_id"].isin(set(new))
    rr.loc[worse, "score"] = rng.random(int(worse.sum()))
    relevant = set(map(tuple, d.qrels.loc[d.qrels["relevance"] > 0, ["user_id", "item_id"]].to_numpy()))
    lifted = np.array([(u, i) in relevant for u, i in zip(rr["user_id"], rr["item_id"])]) & ~worse.to_numpy()
    rr.loc[lifted, "score"] = rr.loc[lifted, "score"] + 1.0
    paths = {}
    for name, frame in runs.items():
        paths[name] = tmp_path / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    paths["qrels"] = tmp_path / "qrels.csv"
    d.qrels.to_csv(paths["qrels"], index=False)
    paths["users"] = tmp_path / "users.csv"
    d.users.to_csv(paths["users"], index=False)
    return paths


def uploader(page, label: str):
    return page.locator('[data-testid="stFileUploader"]', has_text=label).first.locator('input[type="file"]')


def open_page(page, title: str) -> None:
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    wait_rerun(page)


def choose(page, key: str, option: str) -> None:
    choose_option(page, page.locator(f".st-key-{key} [data-testid='stSelectbox']"), option)
    wait_rerun(page)


def table_rows(page, key: str) -> list[dict[str, str]]:
    """Header -> text of each data row of the st.dataframe with key ``key``, read from the grid's
    accessible table (the cells themselves are drawn on a canvas). A table nobody selects in carries
    no key class of its own: it is found just above its "Download CSV" button (``<key>_csv``)."""
    container = page.locator(f".st-key-{key}")
    if not container.count():
        container = page.locator(f".st-key-{key}_csv").locator("xpath=preceding-sibling::*[1]")
    grid = container.locator("table[role='grid']").first
    grid.wait_for(state="attached", timeout=deadlines.SCRIPT_RUN_MS)
    headers = [h.strip() for h in grid.locator("thead th").all_inner_texts()]
    out = []
    for row in grid.locator("tbody tr").all():
        cells = [c.strip() for c in row.locator("td").all_inner_texts()]
        out.append(dict(zip(headers[-len(cells):], cells)))
    return out


def first_row(page, key: str) -> dict[str, str]:
    return table_rows(page, key)[0]


def selected(page, key: str) -> str:
    """The option a selectbox shows."""
    box = page.locator(f".st-key-{key} [data-testid='stSelectbox']")
    return box.locator("input").input_value() or box.inner_text().strip().split("\n")[-1]


def on_first_screen(page, locator) -> bool:
    box = locator.bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= VIEW["height"]


def test_a_shared_link_opens_on_the_decision(browser, streamlit_server, tmp_path):
    paths = scenario(tmp_path)
    context = browser.new_context(viewport=VIEW, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        goto(page, streamlit_server + "/data")
        uploader(page, "Ranked results").set_input_files([str(paths[n]) for n in ("popularity", "two_tower",
                                                                                   "reranker")])
        wait_rerun(page)
        uploader(page, "Ground truth").set_input_files(str(paths["qrels"]))
        wait_rerun(page)
        uploader(page, "User attributes").set_input_files(str(paths["users"]))
        wait_rerun(page)
        assert_no_exception(page, "Data")
        open_page(page, "Compare")
        choose(page, "compare_baseline", "two_tower")
        compare_lines = page.locator('[data-testid="stMarkdownContainer"] li').all_inner_texts()
        assert_no_exception(page, "Compare")
        open_page(page, "Share")
        page.locator(".st-key-share_title input").fill("Reranker: ship or not?")
        page.locator(".st-key-share_notes textarea").fill("Decide by Friday. Cold-start matters.")
        page.get_by_role("button", name="Share: create a read-only link").click()
        wait_rerun(page)
        link = page.locator('[data-testid="stCode"]').first.inner_text().strip()
    finally:
        context.close()

    fresh = browser.new_context(viewport=VIEW, accept_downloads=True)
    page = fresh.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        goto(page, streamlit_server + link[link.index("/?"):] if "/?" in link else streamlit_server + link)
        page.wait_for_selector('h1:has-text("Reranker: ship or not?")')
        assert_no_exception(page, "brief")
        page.wait_for_timeout(500)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "brief.png"))
        notes = page.get_by_text("Decide by Friday. Cold-start matters.")
        lines = page.locator('[data-testid="stMarkdownContainer"] li')
        texts = lines.all_inner_texts()
        assert len(texts) == 2 and all("than two_tower on ndcg@10" in t for t in texts), texts
        assert "reranker: ▲ better than two_tower" in texts[1], texts
        # the numbers are Compare's: its sentence holds the same lift and interval
        for text in texts:
            lift = text.split(": ", 2)[2].split(", adjusted p")[0]
            assert any(lift in line for line in compare_lines), (lift, compare_lines)
        coverage = page.get_by_text("two_tower did not serve 40 of the 400 evaluated users")
        failures = page.locator(".st-key-brief_failures")
        for what in (notes, lines.first, lines.last, coverage.first, failures):
            assert on_first_screen(page, what), "below the first screen at 1400 x 1000"
        # the reranker wins overall and loses for the new users: the brief names that segment
        note = page.get_by_text("1 segment row where a challenger that does not lose overall is significantly worse")
        assert note.count() == 1 and on_first_screen(page, note)
        losses = page.locator('[data-testid="stDataFrame"]').first
        assert on_first_screen(page, losses)
        # a failure group opens Failures on that pair and group, with as many users as the row counts
        row = first_row(page, "brief_failures")
        assert set(row) >= {"challenger", "group", "users"}, row
        click_table_row(page, "brief_failures", 0)
        page.wait_for_selector('h1:has-text("Failures")')
        assert_no_exception(page, "Failures from the brief")
        box = page.locator(".st-key-failures_other [data-testid='stSelectbox']")
        other = box.locator("input").input_value() or box.inner_text().strip().split("\n")[-1]
        assert other == "two_tower", other
        assert "failures_other=two_tower" in page.url or "failures_other" not in page.url, page.url
        assert selected(page, "failures_model") == row["challenger"]
        assert selected(page, "failures_group") == FAILURES_GROUP[row["group"]]
        matching = page.get_by_text(re.compile(r"^[0-9,]+ users? match")).first.inner_text()
        assert matching.split(" user")[0] == row["users"], (matching, row)
        page.screenshot(path=str(SCREENSHOTS / "brief_row_on_failures.png"))
        # a segment where a challenger loses opens Compare's segments of that attribute: the same row
        open_page(page, "Brief")
        loss = first_row(page, "brief_segments")
        attribute, value = loss["segment"].split(": ", 1)
        click_table_row(page, "brief_segments", 0)
        page.wait_for_selector('h1:has-text("Compare")')
        assert_no_exception(page, "Compare from the brief")
        page.locator(".st-key-compare_segments_csv").wait_for(timeout=deadlines.SCRIPT_RUN_MS)
        assert selected(page, "compare_segment") == attribute
        same = [r for r in table_rows(page, "compare_segments")
                if r["segment"] == value and r["challenger"] == loss["challenger"]]
        assert len(same) == 1, (loss, table_rows(page, "compare_segments"))
        assert (same[0]["lift [95% CI]"], same[0]["adjusted p"], same[0]["users paired"]) == (
            loss["lift [95% CI]"], loss["adjusted p"], loss["users"]), (same, loss)
        page.locator(".st-key-compare_segments_csv").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / "brief_segment_on_compare.png"))
    finally:
        fresh.close()
