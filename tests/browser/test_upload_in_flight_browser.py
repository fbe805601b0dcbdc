"""A file still uploading when the user leaves the Data page is not lost: the uploaders live
in the sidebar of every page, so the transfer carries on and the model appears on the page
the user went to. The upload is slowed to 1 MB/s through Chromium's DevTools protocol."""

from __future__ import annotations

import _deadlines as deadlines
import pytest

from dashboard import demo
from dashboard_server import assert_no_exception, goto, wait_idle

pytestmark = pytest.mark.browser


def test_upload_in_progress_survives_leaving_the_data_page(app_page, streamlit_server, tmp_path):
    page = app_page
    d = demo.make_demo(n_users=3000, n_items=2000, list_length=100, seed=1)
    big = tmp_path / "slow_model.csv"
    big.write_bytes(demo.to_csv_bytes(d.runs["two_tower"]))  # about 6 MB: 6 s at 1 MB/s
    (tmp_path / "qrels.csv").write_bytes(demo.to_csv_bytes(d.qrels))
    goto(page, streamlit_server + "/data")
    page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").first.locator(
        'input[type="file"]').set_input_files(str(tmp_path / "qrels.csv"))
    wait_idle(page)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions",
             {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": 1_000_000})
    page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first.locator(
        'input[type="file"]').set_input_files(str(big))
    page.wait_for_timeout(1500)  # still in transit
    page.locator('[data-testid="stSidebarNav"] a', has_text="Overview").first.click()
    page.wait_for_selector('h1:has-text("Overview")')
    cdp.send("Network.emulateNetworkConditions",
             {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
    page.wait_for_function("() => document.querySelector('[data-testid=\"stMain\"]').innerText.includes('slow_model')",
                           timeout=deadlines.SCRIPT_RUN_MS)
    wait_idle(page)
    assert_no_exception(page, "Overview after the upload finished")
    main = page.locator('[data-testid="stMain"]').inner_text()
    assert "Demo data" not in main
    assert "analysis=" in page.url
