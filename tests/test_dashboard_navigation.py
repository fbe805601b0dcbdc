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


def test_page_choices_stay_in_the_url_on_every_page_and_seed_a_new_session():
    at = app()
    at.toggle(key="overview_ci_on").set_value(False).run()
    page(at, "distributions")
    at.selectbox(key="dist_metric").set_value("recall@10").run()
    page(at, "curves")
    at.slider(key="curves_threshold").set_value(0.2).run()
    page(at, "compare")
    at.selectbox(key="compare_baseline").set_value("two_tower").run()
    page(at, "overview")
    assert not at.exception
    wanted = {"overview_ci_on": "false", "dist_metric": "recall@10", "curves_threshold": "0.2",
              "compare_baseline": "two_tower"}
    for key, value in wanted.items():
        assert at.query_params[key] == value, (key, dict(at.query_params))
    assert at.toggle(key="overview_ci_on").value is False
    # a new session opened on that address (a reload, a copied link) shows the same choices
    fresh = app(**wanted)
    assert fresh.title[0].value == "Decision brief"  # a comparison was chosen: the address opens on the Brief
    page(fresh, "overview")
    assert fresh.toggle(key="overview_ci_on").value is False
    page(fresh, "distributions")
    assert fresh.selectbox(key="dist_metric").value == "recall@10"
    page(fresh, "curves")
    assert fresh.slider(key="curves_threshold").value == pytest.approx(0.2)
    page(fresh, "compare")
    assert fresh.selectbox(key="compare_baseline").value == "two_tower"
    # an invalid value in the URL is ignored, not an error
    odd = app(compare_baseline="no such model", curves_threshold="7", overview_ci_on="maybe")
    page(odd, "compare")
    assert odd.selectbox(key="compare_baseline").value == "popularity"


def test_chosen_metrics_follow_a_change_of_k():
    """A metric chosen at one K is the same metric at the new K, on every page, in the URL too."""
    at = app()
    page(at, "compare")
    at.multiselect(key="compare_metrics").set_value(["map@10", "recall@10"]).run()
    at.session_state["k"] = 20
    at.run()
    assert not at.exception
    assert at.multiselect(key="compare_metrics").value == ["map@20", "recall@20"]
    assert at.query_params.get("compare_metrics") == ["map@20", "recall@20"]
    assert not any("Pick at least one" in i.value for i in at.info)
    page(at, "distributions")
    at.selectbox(key="dist_metric").set_value("mrr@20").run()
    at.session_state["k"] = 5
    at.run()
    assert at.selectbox(key="dist_metric").value == "mrr@5" and at.query_params.get("dist_metric") == "mrr@5"
    page(at, "failures")
    at.selectbox(key="failures_metric").set_value("recall@5").run()
    at.session_state["k"] = 7
    at.run()
    assert at.selectbox(key="failures_metric").value == "recall@7"
    page(at, "compare")  # the remembered choice comes back at the K now in force
    assert at.multiselect(key="compare_metrics").value == ["map@7", "recall@7"]
