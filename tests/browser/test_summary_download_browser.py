"""The Overview's "Download summary CSV", clicked in Chromium as soon as the page has settled, holds
the numbers of the state its label names: right after files are uploaded from the Overview's sidebar
(not the demo's numbers), and right after the gain is switched to exponential there (not the linear
ones under a label saying exponential).

The reference is nDCG@K written out in this test (no metrics_core code): gain ``rel`` (linear) or
``2**rel - 1`` (exponential), discount ``1 / log2(rank + 1)``, ideal DCG from each user's own grades,
mean over users. Every user has a relevant item and a list of distinct scores, so no tie rule and no
missing-user convention is involved. Page-level logic (the disabled stand-in until the tables are
built) is tested without a browser in ``tests/test_dashboard_summary_download.py``.
"""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import pandas as pd
import pytest

from dashboard_server import assert_no_exception, choose_option, goto, wait_idle

pytestmark = pytest.mark.browser

MODELS = ("alpha", "beta")


def write_files(folder: Path) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Two runs of 40 users x 12 items with distinct scores, and graded judgments (0-3) that
    include items no run ranks."""
    rng = random.Random(42)
    runs = {}
    for m, model in enumerate(MODELS):
        rows = []
        for u in range(40):
            items = rng.sample(range(60), 12)
            for rank, item in enumerate(items):
                rows.append({"user_id": f"u{u}", "item_id": f"i{item}", "score": round(1 - rank / 20 - m / 1000, 6)})
        runs[model] = pd.DataFrame(rows)
        runs[model].to_csv(folder / f"{model}.csv", index=False)
    judged = []
    for u in range(40):
        for item in rng.sample(range(60), 15):
            judged.append({"user_id": f"u{u}", "item_id": f"i{item}", "relevance": rng.choice([0, 1, 2, 3])})
        judged.append({"user_id": f"u{u}", "item_id": f"i{60 + u}", "relevance": 2})  # never ranked
    qrels = pd.DataFrame(judged).drop_duplicates(["user_id", "item_id"])
    qrels.to_csv(folder / "qrels.csv", index=False)
    return runs, qrels


def ndcg(run: pd.DataFrame, qrels: pd.DataFrame, k: int, exponential: bool) -> float:
    grades = {(r.user_id, r.item_id): r.relevance for r in qrels.itertuples()}
    by_user: dict[str, list[int]] = {}
    for r in qrels.itertuples():
        by_user.setdefault(r.user_id, []).append(r.relevance)

    def gain(g: float) -> float:
        return 2.0 ** g - 1 if exponential else float(g)
    values = []
    for user, rows in run.groupby("user_id"):
        ranked = rows.sort_values("score", ascending=False)["item_id"][:k]
        dcg = sum(gain(grades.get((user, item), 0)) / math.log2(i + 2) for i, item in enumerate(ranked))
        ideal = sorted(by_user[user], reverse=True)[:k]
        idcg = sum(gain(g) / math.log2(i + 2) for i, g in enumerate(ideal))
        values.append(dcg / idcg)
    return sum(values) / len(values)


def download_now(page) -> tuple[str, pd.DataFrame]:
    """Click the summary download at once; return the button's label and the file."""
    button = page.locator('[data-testid="stDownloadButton"] button', has_text="summary")
    label = button.inner_text()
    with page.expect_download() as info:
        button.click()
    return label, pd.read_csv(io.BytesIO(Path(info.value.path()).read_bytes())).set_index("model")


def test_summary_csv_clicked_once_settled_holds_the_state_its_label_names(app_page, streamlit_server, tmp_path):
    page = app_page
    runs, qrels = write_files(tmp_path)
    goto(page, streamlit_server + "/overview")  # the demo's Overview
    page.locator('[data-testid="stSidebar"] [data-testid="stExpander"] summary', has_text="Add files").click()
    inputs = page.locator('[data-testid="stSidebar"] [data-testid="stFileUploader"]')
    inputs.filter(has_text="Ranked results").first.locator('input[type="file"]').set_input_files(
        [str(tmp_path / f"{m}.csv") for m in MODELS])
    inputs.filter(has_text="Ground truth").first.locator('input[type="file"]').set_input_files(str(tmp_path / "qrels.csv"))
    page.wait_for_function("() => document.querySelectorAll('[data-testid=\"stFileChipIconSpinner\"]').length === 0")
    wait_idle(page)
    assert_no_exception(page, "Overview after the upload")
    label, linear = download_now(page)
    assert "gain = linear" in label, label
    assert sorted(linear.index) == sorted(MODELS), list(linear.index)  # the files uploaded, not the demo
    (k,) = [int(c.split("@")[1]) for c in linear.columns if c.startswith("ndcg@")]
    assert f"K = {k}" in label, label
    for model in MODELS:
        assert linear.loc[model, f"ndcg@{k}"] == pytest.approx(ndcg(runs[model], qrels, k, False), abs=1e-12), model

    gain = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]', has_text="Gain")
    choose_option(page, gain, "exponential")
    wait_idle(page)
    assert_no_exception(page, "Overview after switching the gain")
    label, exponential = download_now(page)
    assert "gain = exponential" in label, label
    for model in MODELS:
        want = ndcg(runs[model], qrels, k, True)
        assert want != pytest.approx(ndcg(runs[model], qrels, k, False), abs=1e-6)  # the gains differ here
        assert exponential.loc[model, f"ndcg@{k}"] == pytest.approx(want, abs=1e-12), model
