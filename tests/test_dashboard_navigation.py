"""AppTest: page switches and selections never end in an exception, and the
URL keeps what the view needs (analysis id, bound controls, selected user)."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("streamlit")

from dashboard import tables  # noqa: E402
from test_dashboard_pages import app, page  # noqa: E402



@pytest.fixture(autouse=True)
def private_store(monkeypatch, tmp_path):
    """Uploads are saved as working copies: keep them in a temporary store."""
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "store"))


def test_regression_click_switches_page_with_gain_off_default():
    at = app(gain="exponential", k=5)
    page(at, "compare")
    at.session_state["compare_regressions"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Failures"
    user = at.query_params["user"]
    assert user and any(h.value == f"User {user}" for h in at.subheader)
    assert at.session_state["gain"] == "exponential" and at.session_state["k"] == 5


def test_failures_selection_past_the_end_of_a_shorter_table():
    at = app()
    page(at, "failures")
    at.session_state["failures_worst"] = {"selection": {"rows": [7], "columns": [], "cells": []}}
    at.run()
    chosen = [h.value for h in at.subheader if h.value.startswith("User ")]
    assert len(chosen) == 1
    at.number_input(key="failures_n").set_value(5).run()
    assert not at.exception, [e.value for e in at.exception]
    assert [h.value for h in at.subheader if h.value.startswith("User ")] == chosen


def test_selected_value_ignores_rows_past_the_end():
    t = pd.DataFrame({"user_id": ["a", "b", "c"]})
    assert tables.selected_value(t, "user_id", [1]) == "b"
    assert tables.selected_value(t, "user_id", [3]) is None
    assert tables.selected_value(t, "user_id", [-1]) is None
    assert tables.selected_value(t, "user_id", []) is None
