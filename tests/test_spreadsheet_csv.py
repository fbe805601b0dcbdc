"""CSV for spreadsheets: formula-leading text cells neutralised (OWASP rule), numbers untouched.

Reference: a plain-Python rule written here (prefix ``'`` when a string's
first character is one of ``= + - @ \\t \\r``).
"""

from __future__ import annotations

import csv
import io
import random

import pandas as pd
import pyarrow as pa
import pytest

from metrics_core.io.spreadsheet import neutralise_frame, spreadsheet_csv

DANGEROUS = "=+-@\t\r"


def reference_cell(v):
    return "'" + v if isinstance(v, str) and v[:1] in DANGEROUS and v != "" else v


@pytest.mark.parametrize("seed", range(10))
def test_neutralise_frame_matches_the_rule(seed):
    rng = random.Random(seed)
    alphabet = list("=+-@\t\rab1 ,\"'")
    words = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4))) for _ in range(30)]
    numbers = [rng.choice([-1.5, 0.0, 2.0, -3.0]) for _ in range(30)]
    df = pd.DataFrame({"text": pd.Series(words, dtype="str"), "obj": pd.Series(words, dtype=object),
                       "cat": pd.Series(words).astype("category"),
                       "arrow": pd.Series(words, dtype=pd.ArrowDtype(pa.string())), "num": numbers,
                       "=name": numbers})
    out, changed = neutralise_frame(df)
    for col, ref_col in zip(out.columns, ["text", "obj", "cat", "arrow", "num", "'=name"]):
        assert col == ref_col
    for col in ["text", "obj", "cat", "arrow"]:
        assert out[col].astype(object).tolist() == [reference_cell(w) for w in words]
    assert out["num"].tolist() == numbers  # numbers are never formulas
    expected = 4 * sum(reference_cell(w) != w for w in words) + 1
    assert changed == expected
    assert df["text"].tolist() == words  # the input is not modified


def test_spreadsheet_csv_round_trip():
    df = pd.DataFrame({"model": ["=HYPERLINK(\"http://x\")", "bm25"], "user_id": ["@u", "-7"], "v": [-0.5, 1.0]})
    text = spreadsheet_csv(df).decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["model", "user_id", "v"], ["'=HYPERLINK(\"http://x\")", "'@u", "-0.5"],
                    ["bm25", "'-7", "1.0"]]


def test_streamlits_table_export_is_off_in_the_dashboard():
    """Streamlit's table toolbar would write ``=tier`` as it is: its export is off in the settings read
    from the repository root and in the server itself (tests/browser/test_table_export_browser.py
    checks the toolbar), so the dashboard's only CSVs are its own spreadsheet-safe downloads."""
    import importlib
    import tomllib
    from pathlib import Path

    from streamlit import config

    root = Path(__file__).resolve().parents[1]
    assert tomllib.loads((root / ".streamlit" / "config.toml").read_text())["client"]["disableDataExport"] is True
    config.set_option("client.disableDataExport", False, "test")
    try:
        importlib.reload(importlib.import_module("dashboard.serve"))
        assert config.get_option("client.disableDataExport") is True
    finally:
        config.set_option("client.disableDataExport", False, "test")


def test_widgets_given_their_links_values_log_no_duplication_warning():
    """Every page sets a widget's state from its shared link before drawing it (dashboard.url), so
    Streamlit's log line about a widget with a default whose state was also set is off, in the settings
    read from the repository root and in the server itself."""
    import importlib
    import tomllib
    from pathlib import Path

    from streamlit import config

    option = "global.disableWidgetStateDuplicationWarning"
    root = Path(__file__).resolve().parents[1]
    assert tomllib.loads((root / ".streamlit" / "config.toml").read_text())["global"][
        "disableWidgetStateDuplicationWarning"] is True
    config.set_option(option, False, "test")
    try:
        importlib.reload(importlib.import_module("dashboard.serve"))
        assert config.get_option(option) is True
    finally:
        config.set_option(option, False, "test")
