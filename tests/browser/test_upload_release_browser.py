"""Uploads released from Streamlit's upload storage, in a real server and browser.

Once the dashboard has taken the files in, it drops Streamlit's copy of their bytes
(``dashboard.sources.release_upload``); every later run of the session gets placeholders from the
uploaders. Here: the uploaders keep listing the files' names, the runs that follow (other pages,
a changed control, a file removed from the uploader) show no exception, and the Overview's
summary CSV still has every uploaded model with the numbers ``metrics_core.evaluate`` gives.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

import metrics_core as mc
from dashboard import demo
from dashboard_server import assert_no_exception, open_page, upload_runs_and_truth, wait_idle, wait_rerun

pytestmark = pytest.mark.browser


def uploaded_names(page) -> list[str]:
    """The file names the "Ranked results" uploader lists (in full: the chip may shorten them)."""
    box = page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first
    return sorted(chip.get_attribute("title") for chip in box.locator('[data-testid="stFileChipName"]').all())


def summary_csv(page) -> pd.DataFrame:
    with page.expect_download() as info:
        page.locator('[data-testid="stDownloadButton"] button', has_text="summary").click()
    return pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes())).set_index("model")


def test_released_uploads_keep_their_names_and_their_numbers(app_page, streamlit_server, tmp_path):
    page = app_page
    d = demo.make_demo(n_users=200, n_items=150, list_length=15, seed=21)
    files = demo.write_demo_files(tmp_path, d)
    paths = [files[name] for name in d.runs]
    upload_runs_and_truth(page, streamlit_server, paths, files["qrels"])
    assert_no_exception(page, "after the upload")
    assert uploaded_names(page) == sorted(p.name for p in paths)

    open_page(page, "Overview")
    open_page(page, "Data")
    assert_no_exception(page, "Data, opened again")
    assert uploaded_names(page) == sorted(p.name for p in paths)

    # a changed control reruns the page with the uploaders' placeholders
    k = page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"] input').first
    k.fill("5")
    k.press("Enter")
    wait_rerun(page)
    assert_no_exception(page, "K changed")

    # a file removed from the uploader: its model stays (removing a model is done on the Data page)
    box = page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first
    box.locator('[data-testid="stFileChipDeleteBtn"] button').first.click()
    wait_rerun(page)
    wait_idle(page)
    assert_no_exception(page, "a file removed from the uploader")
    assert len(uploaded_names(page)) == len(paths) - 1

    open_page(page, "Overview")
    page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"] input').first.fill("10")
    page.locator('[data-testid="stSidebar"] [data-testid="stNumberInput"] input').first.press("Enter")
    wait_rerun(page)
    csv = summary_csv(page)
    assert sorted(csv.index) == sorted(d.runs)
    for name, run in d.runs.items():
        expected = mc.evaluate(run, d.qrels, metrics=["ndcg@10"]).summary["ndcg@10"]
        assert csv.loc[name, "ndcg@10"] == pytest.approx(expected, abs=1e-12), name
