"""The Overview's "Download summary CSV" holds the numbers of the settings its label names, built in
the same run from the tables the page shows; until that run has built them, the place holds a
disabled button (never the previous run's file under the new settings).

The file's bytes are taken from Streamlit's media storage as the browser would fetch them; the
numbers are checked against the plain-Python reference (``_ranking_reference``, independent of
metrics_core's kernels) with the same gain, and against the linear-gain numbers they must differ from.
"""

from __future__ import annotations

import io
from pathlib import Path

import _deadlines as deadlines
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage  # noqa: E402
from streamlit.testing.v1 import AppTest  # noqa: E402

import _ranking_reference as ref  # noqa: E402
from dashboard import demo  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
DATA = demo.make_demo(n_users=150, n_items=100, list_length=12, seed=17)


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


@pytest.fixture
def media(monkeypatch):
    """Every file put in Streamlit's media storage, by file id."""
    stored: dict[str, bytes] = {}
    original = MemoryMediaFileStorage.load_and_get_id

    def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):
        file_id = original(self, path_or_data, mimetype, kind, filename)
        if isinstance(path_or_data, bytes):
            stored[file_id] = path_or_data
        return file_id
    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", load_and_get_id)
    return stored


def summary_buttons(at: AppTest) -> list:
    return [b for b in at.get("download_button") if "summary" in str(b.proto.label).lower()]


def downloaded(at: AppTest, media: dict) -> tuple[str, pd.DataFrame]:
    (button,) = summary_buttons(at)
    file_id = button.proto.url.rsplit("/", 1)[-1].split(".")[0]
    return button.proto.label, pd.read_csv(io.BytesIO(media[file_id])).set_index("model")


def expected(gain: str) -> pd.Series:
    """ndcg@10 of each model by the plain-Python reference (the dashboard's default conventions)."""
    truth: dict = {}
    for user, item, rel in DATA.qrels[["user_id", "item_id", "relevance"]].itertuples(index=False):
        truth.setdefault(str(user), {})[str(item)] = float(rel)
    means = {}
    for name, run in DATA.runs.items():
        rows: dict = {}
        for row, (user, item, score) in enumerate(run[["user_id", "item_id", "score"]].itertuples(index=False)):
            rows.setdefault(str(user), []).append((float(score), str(item), row))
        means[name] = ref.summary(rows, truth, 10, gain_kind=gain)["ndcg"]
    return pd.Series(means)


def test_the_summary_file_holds_the_numbers_of_the_settings_it_names(media):
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.switch_page("views/data.py").run()
    at.file_uploader(key="upload_runs_0").set_value(
        [(f"{name}.csv", demo.to_csv_bytes(run), "text/csv") for name, run in DATA.runs.items()])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(DATA.qrels), "text/csv"))
    at.run()
    at.switch_page("views/overview.py").run()
    assert not at.exception, [e.value for e in at.exception]

    label, linear = downloaded(at, media)
    assert "gain = linear" in label
    assert sorted(linear.index) == sorted(DATA.runs)  # the uploaded models, not the demo's
    for name, value in expected("linear").items():
        assert linear.loc[name, "ndcg@10"] == pytest.approx(value, abs=1e-12)

    at.selectbox(key="gain").set_value("exponential").run()
    assert not at.exception, [e.value for e in at.exception]
    label, exponential = downloaded(at, media)
    assert "gain = exponential" in label
    reference = expected("exponential")
    assert (reference - expected("linear")).abs().max() > 1e-6  # the data tells the two gains apart
    for name, value in reference.items():
        assert exponential.loc[name, "ndcg@10"] == pytest.approx(value, abs=1e-12)
    # the file holds the table the page shows, column for column
    shown = next(df.value for df in at.dataframe if "ndcg@10" in df.value.columns)
    for column in shown.columns:
        pd.testing.assert_series_equal(exponential.loc[shown.index, column], shown[column], check_names=False,
                                       rtol=1e-12, atol=1e-15)
    # once the run has built the tables, no disabled stand-in is left
    assert not [b for b in at.button if "summary" in str(b.label).lower()]
