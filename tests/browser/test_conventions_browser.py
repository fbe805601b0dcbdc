"""A library preset chosen in the sidebar of a real browser changes the numbers, stays in
the URL across pages and a reload, and the summary CSV matches ``mc.evaluate`` with the
same preset (computed here on the same demo data)."""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from dashboard_server import assert_no_exception, choose_option, goto, wait_idle, wait_rerun

pytestmark = pytest.mark.browser


def summary_csv(page) -> pd.DataFrame:
    button = page.locator('[data-testid="stDownloadButton"] button', has_text="summary")
    with page.expect_download() as info:
        button.click()
    return pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes())).set_index("model")


def test_preset_from_the_sidebar_sets_the_numbers_and_the_url(app_page, streamlit_server):
    page = app_page
    goto(page, streamlit_server + "/")
    page.wait_for_selector('h3:has-text("Ranking metrics")')
    before = summary_csv(page)
    page.locator('[data-testid="stSidebar"] [data-testid="stExpander"]', has_text="Conventions").click()
    box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Library preset")
    choose_option(page, box, "rectools")
    wait_rerun(page)
    wait_idle(page)
    assert_no_exception(page, "Overview with the rectools preset")
    query = parse_qs(urlparse(page.url).query)
    assert query.get("preset") == ["rectools"], page.url
    assert query.get("ideal") == ["k"], page.url  # RecTools' NDCG ideal, set by the preset

    after = summary_csv(page)
    d = demo.make_demo()
    for name, run in d.runs.items():
        ref = mc.evaluate(run, d.qrels, metrics=["ndcg@10", "map@10", "precision@10"], preset="rectools").summary
        plain = mc.evaluate(run, d.qrels, metrics=["ndcg@10"]).summary
        for metric, value in ref.items():
            assert after.loc[name, metric] == pytest.approx(value, abs=1e-12), (name, metric)
        assert before.loc[name, "ndcg@10"] == pytest.approx(plain["ndcg@10"], abs=1e-12)
        assert after.loc[name, "ndcg@10"] != pytest.approx(plain["ndcg@10"], abs=1e-6)

    # another page and a reload keep the preset
    page.locator('[data-testid="stSidebarNav"] a', has_text="Distributions").first.click()
    wait_rerun(page)
    page.wait_for_selector('h1:has-text("Distributions")')
    page.reload()
    wait_idle(page)
    assert parse_qs(urlparse(page.url).query).get("preset") == ["rectools"], page.url
    assert_no_exception(page, "Distributions after reload")


def test_explain_page_states_each_librarys_value(app_page, streamlit_server):
    page = app_page
    goto(page, streamlit_server + "/explain")
    page.wait_for_selector('h3:has-text("From one library to another")')
    assert_no_exception(page, "Explain")
    sentence = page.locator('[data-testid="stText"]').first.inner_text()
    d = demo.make_demo()
    model = demo.MODEL_NAMES[0]
    values = {p: mc.evaluate(d.runs[model], d.qrels, metrics=["ndcg@10"], preset=p).summary["ndcg@10"]
              for p in ("trec_eval", "rectools")}
    # the path starts from this dashboard: the sidebar's conventions (the defaults here), the Overview's number
    values["this dashboard"] = mc.evaluate(d.runs[model], d.qrels, metrics=["ndcg@10"]).summary["ndcg@10"]
    assert sentence.startswith(f"rectools reports {values['rectools']:.4f} and this dashboard "
                               f"{values['this dashboard']:.4f}"), sentence
    button = page.locator('[data-testid="stDownloadButton"] button', has_text="Download this explanation")
    with page.expect_download() as info:
        button.click()
    doc = Path(info.value.path()).read_text()
    assert f"{values['rectools'] - values['this dashboard']:+.4f}" in doc and "steps add up to" in doc
