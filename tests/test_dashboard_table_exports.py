"""Every table of the Data, Distributions and Failures pages has its own "Download CSV" button (Streamlit's
toolbar export is off), and the bytes it serves are spreadsheet-safe.

The bytes are those the browser would fetch: the button's deferred callable, taken from Streamlit's media
file manager. Safety is checked cell by cell against the OWASP rule written out here (a text cell starting
with = + - @ tab or carriage return must start with an apostrophe), on uploads whose file names, user ids
and item ids all start like formulas.
"""

from __future__ import annotations

import csv
import io

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("streamlit")
from streamlit.runtime.media_file_manager import MediaFileManager  # noqa: E402

from dashboard import demo, exports  # noqa: E402
from test_dashboard_pages import app, page  # noqa: E402

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def cells(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))


def unsafe_cells(rows: list[list[str]]) -> list[str]:
    """Cells a spreadsheet would run: formula-like text (numbers such as -0.5 are numbers)."""
    def is_number(cell: str) -> bool:
        try:
            float(cell)
        except ValueError:
            return False
        return True
    return [c for row in rows for c in row if c.startswith(FORMULA_START) and not is_number(c)]


@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


@pytest.fixture
def deferred(monkeypatch):
    """Every deferred download's callable, by file id (what runs when the browser asks for the file)."""
    found: dict[str, object] = {}
    original = MediaFileManager.add_deferred

    def add_deferred(self, data_callable, *args, **kwargs):
        file_id = original(self, data_callable, *args, **kwargs)
        found[file_id] = data_callable
        return file_id
    monkeypatch.setattr(MediaFileManager, "add_deferred", add_deferred)
    return found


def test_table_csv_neutralises_text_keeps_numbers_and_a_meaningful_index():
    table = pd.DataFrame({"user_id": ["=tier", "+SUM(1)good", "@tier1", "plain", "-x", "\tcmd"],
                          "value": [-0.5, 0.1 + 0.2, 1e-300, 2.0, np.nan, -3.0]},
                         index=pd.Index(["=m", "b", "c", "d", "e", "f"], name="@model"))
    rows = cells(exports.table_csv(table))
    assert rows[0] == ["'@model", "user_id", "value"]
    assert [r[0] for r in rows[1:]] == ["'=m", "b", "c", "d", "e", "f"]
    assert [r[1] for r in rows[1:]] == ["'=tier", "'+SUM(1)good", "'@tier1", "plain", "'-x", "'\tcmd"]
    assert [float(r[2]) if r[2] else None for r in rows[1:]] == [-0.5, 0.1 + 0.2, 1e-300, 2.0, None, -3.0]
    assert not unsafe_cells(rows)
    plain = cells(exports.table_csv(pd.DataFrame({"a": ["x"]})))  # a default index is not written
    assert plain == [["a"], ["x"]]
    nested = pd.DataFrame([[1.0, 2.0]], columns=pd.MultiIndex.from_tuples([("=m", "mean"), ("b", "sd")]))
    assert cells(exports.table_csv(nested))[0] == ["'=m / mean", "b / sd"]
    assert exports.file_name("failures_worst") == "failures_worst.csv"


def hostile_upload(at) -> dict[str, str]:
    """Runs named like formulas, with user ids and item ids that start like formulas."""
    d = demo.make_demo(n_users=120, n_items=80, list_length=10, seed=3)

    def hostile(frame: pd.DataFrame) -> pd.DataFrame:
        return frame.assign(user_id="@" + frame["user_id"].astype(str), item_id="+" + frame["item_id"].astype(str))
    names = dict(zip(d.runs, ["=evil", "-SUM(1)"] + [f"m{i}" for i in range(len(d.runs))]))
    page(at, "data")
    at.file_uploader(key="upload_runs_0").set_value(
        [(f"{names[n]}.csv", demo.to_csv_bytes(hostile(run)), "text/csv") for n, run in d.runs.items()])
    at.file_uploader(key="upload_truth_0").set_value(("qrels.csv", demo.to_csv_bytes(hostile(d.qrels)), "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return names


@pytest.mark.parametrize("view, expected", [
    ("data", "'=evil.csv"),          # the files listing
    ("distributions", "'=evil"),     # a model's row
    ("failures", "'@u"),             # a user's row (the worst users), prefix of the id
])
def test_every_table_of_the_page_downloads_spreadsheet_safe_bytes(deferred, view, expected):
    at = app()
    hostile_upload(at)
    deferred.clear()
    page(at, view)
    buttons = [b for b in at.get("download_button") if b.proto.label == exports.LABEL]
    assert len(buttons) == len(at.dataframe) > 0, (len(buttons), len(at.dataframe))
    found = False
    for button in buttons:
        data = deferred[button.proto.deferred_file_id]()
        rows = cells(data)
        assert len(rows) > 1, button.proto.label
        assert not unsafe_cells(rows), (button.key, unsafe_cells(rows)[:5])
        found |= any(c.startswith(expected) for row in rows for c in row)
    assert found, expected
