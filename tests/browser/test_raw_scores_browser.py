"""Uploaded raw scores (5 to 11, not probabilities) in a real browser: no metric that needs
probabilities appears as a number (Overview table and summary CSV), the Curves threshold
slider spans the model's own scores."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from dashboard import demo
from dashboard_server import assert_no_exception, open_page, upload_runs_and_truth, wait_idle

pytestmark = pytest.mark.browser


def test_raw_scores_hide_probability_metrics(app_page, streamlit_server, tmp_path):
    page = app_page
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=8)
    paths = []
    for name, run in d.runs.items():
        path = tmp_path / f"{name}.csv"
        path.write_bytes(demo.to_csv_bytes(run.assign(score=5 + 6 * run["score"])))
        paths.append(path)
    (tmp_path / "qrels.csv").write_bytes(demo.to_csv_bytes(d.qrels))
    upload_runs_and_truth(page, streamlit_server, paths, tmp_path / "qrels.csv")
    open_page(page, "Overview")
    page.wait_for_selector('h3:has-text("Scored-row metrics")')
    assert_no_exception(page, "Overview on raw scores")
    assert page.get_by_text("Needs probabilities").count() >= 1
    with page.expect_download() as info:
        page.locator('[data-testid="stDownloadButton"] button', has_text="summary").click()
    csv = pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes()))
    assert not {"logloss", "brier", "ece", "pcopc", "accuracy"} & set(csv.columns), list(csv.columns)
    assert {"auc", "gauc", "ndcg@10"} <= set(csv.columns)

    open_page(page, "Curves")
    page.wait_for_selector('h3:has-text("Confusion matrix")')
    assert_no_exception(page, "Curves on raw scores")
    first = list(d.runs)[0]
    scores = 5 + 6 * d.runs[first]["score"]
    low, high = page.locator('.st-key-curves_threshold [data-testid="stSliderTickBar"] p').all_inner_texts()
    assert float(low) == pytest.approx(scores.min(), abs=0.01) and float(high) == pytest.approx(scores.max(), abs=0.01)
