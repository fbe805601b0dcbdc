"""The unit (users, queries, sessions) and the family of segment tests are settings of the analysis
on the dashboard: read from the address (so a saved view or a shared link carries them), shown in
the sidebar and on Compare, and used by the Brief's sentences, tables and family sentence."""

from __future__ import annotations

import re
from pathlib import Path

import _deadlines as deadlines
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


def test_the_brief_names_the_rows_and_the_family_the_address_chose():
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params["unit"] = "queries"
    at.query_params["compare_family"] = "attribute"
    at.query_params["compare_correction"] = "bonferroni"
    at.run()
    at.switch_page("views/brief.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="unit").value == "queries"
    lines = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert lines and all("queries compared" in line for line in lines[:1])
    shown = " ".join([*lines, *(c.value for c in at.caption)])
    assert not re.search(r"\busers?\b", shown.replace("Users counted", "")), shown
    assert "each query attribute apart" in shown and "Bonferroni correction" in shown
    failures = next(df.value for df in at.dataframe if "share of loss" in df.value.columns)
    assert "queries" in failures.columns and "users" not in failures.columns
