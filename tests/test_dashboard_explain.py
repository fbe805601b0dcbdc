"""The Explain page: every library's value of a metric (checked against ``mc.evaluate`` with
that preset, called directly) and the path between two libraries (its steps add up to the
difference); the Markdown download keeps user strings as text."""

from __future__ import annotations

import _deadlines as deadlines
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

import metrics_core as mc  # noqa: E402
from dashboard import demo, explain_tables, text  # noqa: E402

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")


pytestmark = pytest.mark.usefixtures("private_store")


@pytest.fixture(scope="module")
def small():
    return demo.make_demo(n_users=300, n_items=200, list_length=20, seed=4)


def test_values_are_each_presets_evaluate_and_steps_add_up(small):
    run = small.runs["two_tower"]
    explanation = mc.explain(mc.prepare(run, small.qrels), metric="ndcg@5")
    table = explain_tables.values_table(explanation, mc.presets())
    for preset, row in table.iterrows():
        ref = mc.evaluate(run, small.qrels, metrics=["ndcg@5"], preset=preset).summary["ndcg@5"]
        assert row["value"] == pytest.approx(ref, abs=1e-12), preset
    for source, target in (("trec_eval", "rectools"), ("sklearn", "spark_mllib"), ("ranx", "ranx")):
        path = explanation.path(source, target)
        steps = explain_tables.steps_table(path)
        assert steps["change"].sum() == pytest.approx(path.end - path.start, abs=1e-12)
        assert path.start == pytest.approx(table.loc[source, "value"], abs=1e-12)
        assert path.end == pytest.approx(table.loc[target, "value"], abs=1e-12)
        if len(steps):
            assert steps["value"].iloc[-1] == pytest.approx(path.end, abs=1e-12)
            assert all("→" in s for s in steps["step"])


def test_this_dashboard_is_a_row_and_an_end_of_the_path(small):
    run = small.runs["two_tower"]
    mine = {"gain": "exponential", "ideal": "k", "ties": "trec"}
    explanation = mc.explain(mc.prepare(run, small.qrels), metric="ndcg@5",
                             settings={explain_tables.THIS_DASHBOARD: mine})
    table = explain_tables.values_table(explanation, mc.presets())
    assert table.index[0] == explain_tables.THIS_DASHBOARD
    ref = mc.evaluate(run, small.qrels, metrics=["ndcg@5"], **mine).summary["ndcg@5"]
    assert table.loc[explain_tables.THIS_DASHBOARD, "value"] == pytest.approx(ref, abs=1e-12)
    assert table.loc[explain_tables.THIS_DASHBOARD, "notes"] == "conventions: gain=exponential, ideal=k, ties=trec"
    for other in ("rectools", "sklearn"):
        for source, target in ((explain_tables.THIS_DASHBOARD, other), (other, explain_tables.THIS_DASHBOARD)):
            path = explanation.path(source, target)
            assert path.start == pytest.approx(table.loc[source, "value"], abs=1e-12)
            assert path.end == pytest.approx(table.loc[target, "value"], abs=1e-12)
            assert explain_tables.steps_table(path)["change"].sum() == pytest.approx(path.end - path.start,
                                                                                     abs=1e-12)
    # the path to sklearn changes gain back to linear and ideal to retrieved, ties to average
    steps = explanation.path(explain_tables.THIS_DASHBOARD, "sklearn").steps
    assert {"gain", "ideal", "ties"} <= set(steps["convention"])
    doc = explain_tables.markdown("m", explanation.path(explain_tables.THIS_DASHBOARD, "rectools"), mc.presets())
    assert "this dashboard: " + text.md("gain=exponential, ideal=k, ties=trec") + "." in doc


def test_explain_refuses_bad_settings(small):
    ranked = mc.prepare(small.runs["two_tower"], small.qrels)
    with pytest.raises(mc.MetricsError, match="gain must be one of"):
        mc.explain(ranked, metric="ndcg@5", settings={"mine": {"gain": "cubic"}})
    with pytest.raises(mc.MetricsError, match="is a preset's name"):
        mc.explain(ranked, metric="ndcg@5", settings={"rectools": {}})
    with pytest.raises(mc.MetricsError, match="unknown preset"):
        mc.explain(ranked, metric="ndcg@5", settings={"mine": {}}).path("mine", "nosuch")


def test_markdown_keeps_user_strings_as_text(small):
    explanation = mc.explain(mc.prepare(small.runs["popularity"], small.qrels), metric="map@10")
    doc = explain_tables.markdown("![x](http://attacker/p.png)", explanation.path("trec_eval", "rectools"),
                                  mc.presets())
    assert "![x](http" not in doc and "attacker" in doc
    assert "steps add up to" in doc and "| library | its name | value |" in doc


def test_page_shows_the_values_and_the_path():
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.run()
    at.switch_page("views/explain.py").run()
    assert not at.exception and not at.error
    d = demo.make_demo()
    values = at.dataframe[0].value
    # trec_eval without -c leaves a topic the run does not answer out; ranx scores it 0
    missing = next(c.value for c in at.caption if "missing from the run" in c.value).replace("\\", "")
    counted, left_out = missing.split("it is left out for")
    assert "ranx" in counted and "trec_eval" not in counted
    assert "trec_eval" in left_out and "ranx" not in left_out
    for preset in ("trec_eval", "rectools", "sklearn"):
        ref = mc.evaluate(d.runs[demo.MODEL_NAMES[0]], d.qrels, metrics=["ndcg@10"], preset=preset).summary
        assert values.loc[preset, "value"] == pytest.approx(ref["ndcg@10"], abs=1e-12)
    # "this dashboard" is the Overview's number under the sidebar's conventions, and the default start
    ref = mc.evaluate(d.runs[demo.MODEL_NAMES[0]], d.qrels, metrics=["ndcg@10"]).summary["ndcg@10"]
    assert values.loc[explain_tables.THIS_DASHBOARD, "value"] == pytest.approx(ref, abs=1e-12)
    assert at.selectbox(key="explain_from").value == explain_tables.THIS_DASHBOARD
    steps = at.dataframe[1].value
    end = values.loc["rectools", "value"]
    assert np.isclose(steps["change"].sum(), end - ref, atol=1e-12)
    at.selectbox(key="gain").set_value("exponential").run()
    assert not at.exception and not at.error
    mine = at.dataframe[0].value.loc[explain_tables.THIS_DASHBOARD, "value"]
    ref = mc.evaluate(d.runs[demo.MODEL_NAMES[0]], d.qrels, metrics=["ndcg@10"], gain="exponential").summary
    assert mine == pytest.approx(ref["ndcg@10"], abs=1e-12) and mine != pytest.approx(values.loc[
        explain_tables.THIS_DASHBOARD, "value"], abs=1e-6)
    at.selectbox(key="explain_from").set_value("sklearn").run()
    at.selectbox(key="explain_to").set_value("spark_mllib").run()
    steps = at.dataframe[1].value
    sentence = at.text[0].value
    assert sentence.startswith("spark_mllib reports") and "sklearn" in sentence
    start, end = values.loc["sklearn", "value"], values.loc["spark_mllib", "value"]
    assert np.isclose(steps["change"].sum(), end - start, atol=1e-12)
