"""Every convention value is checked once per evaluation: at the entry point (``mc.evaluate`` and
``mc.metric_curve`` keywords, the command line's options, the dashboard's controls), which builds one
frozen :class:`metrics_core.Settings` and passes that object down; nothing below checks or rebuilds it.
The dashboard's controls become one such object (:func:`dashboard.controls.evaluation_settings`), which
every evaluation and curve of the page receives; a page's own keyword (the scored-row table's linear
gain) is checked once where the page adds it, and the same controls on a rerun check nothing.

A spy wraps :meth:`metrics_core.metrics.conventions.Convention.check` (the one validator of a value) and
counts its calls per convention and value. The declared defaults and a preset's values are checked once
per process, on first use (they are data, not user input): each test uses them once before spying.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import _deadlines as deadlines
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.metrics import conventions
from metrics_core.metrics.conventions import Convention

APP = str(Path(__file__).resolve().parents[1] / "dashboard" / "app.py")
RUN = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2", "u3"], "item_id": ["a", "b", "c", "a", "c", "a"],
                    "score": [0.9, 0.8, 0.1, 0.7, 0.7, 0.5]})
QRELS = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u3"], "item_id": ["b", "c", "c", "b"],
                      "relevance": [1, 2, 3, 1]})
METRICS = ["ndcg@2", "map@3", "bpref", "precision@2", "auc"]


@pytest.fixture
def checks(monkeypatch) -> Counter:
    """Calls of the validator, by ``(convention, repr(value))``, from the moment the fixture is used."""
    for preset in (None, "rectools"):
        conventions.Settings(preset)  # the declared defaults and the preset's values: checked on first use
    counted: Counter = Counter()
    original = Convention.check

    def spy(self, value):
        counted[(self.name, repr(value))] += 1
        return original(self, value)

    monkeypatch.setattr(Convention, "check", spy)
    return counted


def names(counted: Counter) -> Counter:
    return Counter({name: n for (name, _), n in counted.items()})


def test_evaluate_checks_each_keyword_once(checks):
    ev = mc.evaluate(RUN, QRELS, METRICS, gain="binary", ties="input", relevance_threshold=2, beta=0.5)
    assert names(checks) == Counter(gain=1, ties=1, relevance_threshold=1, beta=1)
    assert ev.conventions["relevance_threshold"] == 2.0 and ev.conventions["gain"] == "binary"


def test_a_preset_and_progress_check_only_the_keywords(checks):
    mc.evaluate(RUN, QRELS, METRICS, preset="rectools", ap_norm="k", progress=True)
    assert names(checks) == Counter(ap_norm=1)


def test_settings_given_are_not_checked_again(checks):
    settings = mc.Settings(gain="exponential", ideal="k")
    assert names(checks) == Counter(gain=1, ideal=1)
    checks.clear()
    by_object = mc.evaluate(RUN, QRELS, METRICS, settings=settings)
    curve = mc.metric_curve(by_object.ranked, ["ndcg", "precision"], k_max=3, settings=settings)
    assert not checks  # passed down as built
    by_keywords = mc.evaluate(RUN, QRELS, METRICS, gain="exponential", ideal="k")
    assert by_object.summary == by_keywords.summary
    assert curve["ndcg"].iloc[1] == pytest.approx(by_keywords.summary["ndcg@2"], abs=1e-15)


def test_keywords_beside_settings_change_it_and_only_they_are_checked(checks):
    settings = mc.Settings(gain="exponential")
    checks.clear()
    ev = mc.evaluate(RUN, QRELS, ["ndcg@2"], settings=settings, ideal="retrieved", gain="exponential")
    assert names(checks) == Counter(ideal=1)  # gain is already the settings' own value
    assert ev.conventions["ideal"] == "retrieved" and ev.conventions["gain"] == "exponential"


def test_explain_checks_each_named_value_once(checks):
    explanation = mc.explain(RUN, QRELS, "ndcg@2", presets=["rectools"], settings={"mine": {"gain": "exponential"}})
    assert max(checks.values()) == 1, {key: n for key, n in checks.items() if n > 1}
    assert checks[("gain", "'exponential'")] == 1
    # the path from the named settings to the preset, one convention at a time: the same numbers as evaluate
    assert explanation.start == pytest.approx(mc.evaluate(RUN, QRELS, ["ndcg@2"], gain="exponential")
                                              .summary["ndcg@2"], abs=1e-15)
    assert explanation.end == pytest.approx(mc.evaluate(RUN, QRELS, ["ndcg@2"], preset="rectools")
                                            .summary["ndcg@2"], abs=1e-15)


def test_replace_without_a_change_is_the_same_object():
    settings = mc.Settings(preset="rectools", ap_norm="k")
    assert settings.replace() is settings
    assert settings.replace(ap_norm="k", gain=None) is settings
    changed = settings.replace(ap_norm="relevant")
    assert changed is not settings and changed.ap_norm == "relevant" and settings.ap_norm == "k"
    assert changed.preset == "rectools" and changed.explicit() == {"ap_norm": "relevant"}


def test_settings_are_frozen_hashable_and_travel_whole():
    import copy
    import pickle

    settings = mc.Settings(preset="trec_eval", beta=2)
    with pytest.raises(AttributeError):
        settings.beta = 3.0
    again = pickle.loads(pickle.dumps(settings))  # as Spark ships it to its tasks
    assert again == settings and hash(again) == hash(settings) and again.given == settings.given
    assert again.preset == "trec_eval" and copy.deepcopy(settings).explicit() == {"beta": 2.0}


def test_bad_settings_are_one_line():
    with pytest.raises(mc.MetricsError, match="^settings must be a metrics_core Settings .* got dict"):
        mc.evaluate(RUN, QRELS, ["ndcg@2"], settings={"gain": "binary"})
    with pytest.raises(mc.MetricsError, match="preset='trec_eval' differs from the settings' preset 'rectools'"):
        mc.evaluate(RUN, QRELS, ["ndcg@2"], preset="trec_eval", settings=mc.Settings(preset="rectools"))
    with pytest.raises(mc.MetricsError, match="gain must be one of linear, exponential, binary; got 'log'"):
        mc.Settings(gain="log")
    with pytest.raises(mc.MetricsError, match="unknown convention 'gian'; did you mean 'gain'"):
        mc.Settings(gian="linear")


def test_the_command_line_checks_each_option_once(checks, tmp_path: Path, capsys):
    run, qrels = tmp_path / "run.csv", tmp_path / "qrels.csv"
    RUN.to_csv(run, index=False)
    QRELS.to_csv(qrels, index=False)
    code = main(["evaluate", "--run", str(run), "--run", str(run), "--qrels", str(qrels), "--metrics",
                 ",".join(METRICS), "--gain", "binary", "--ties", "input", "--relevance-threshold", "2", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    # two runs, one check of each option
    assert names(checks) == Counter(gain=1, ties=1, relevance_threshold=1)
    doc = json.loads(out)
    reference = mc.evaluate(RUN, QRELS, METRICS, gain="binary", ties="input", relevance_threshold=2).summary
    for values in doc["models"].values():
        assert {m: values[m] for m in METRICS} == pytest.approx(reference, abs=1e-12)


def test_the_command_line_names_the_option_of_a_bad_value(capsys):
    assert main(["evaluate", "--run", "x.csv", "--metrics", "ndcg@2", "--beta", "0"]) != 0
    assert "--beta: beta must be a finite number greater than 0" in capsys.readouterr().err


#: the Overview's own keywords for its scored-row table: checked once per run at most, when a run draws that
#: table with controls not seen before (which run does depends on when the server thread delivers the shared
#: evaluations)
PAGE_KEYWORDS = {("gain", "'linear'"), ("ties", "'average'")}


def run_once(at, checks: Counter) -> Counter:
    """One run of the app; the checks it made (each value at most once)."""
    checks.clear()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not checks or max(checks.values()) == 1, {key: n for key, n in checks.items() if n > 1}
    return Counter(checks)


@pytest.mark.usefixtures("private_store")
def test_a_run_of_the_dashboard_checks_each_value_once(checks):
    from streamlit.testing.v1 import AppTest

    from dashboard import controls, url_numbers

    for cached in (controls._sidebar_settings, controls._page_values, controls._settings_of, url_numbers.problem):
        cached.cache_clear()
    at = AppTest.from_file(APP, default_timeout=deadlines.SCRIPT_RUN)
    at.query_params.update({"gain": "binary", "ties": "input", "ap_norm": "k"})
    first = run_once(at, checks)  # the Overview of the demo data: its tables and curves
    assert at.dataframe, "the Overview drew no table"
    for key in (("gain", "'binary'"), ("ties", "'input'"), ("ap_norm", "'k'")):
        assert first[key] == 1, key
    assert set(names(first)) == {c.name for c in conventions.CONVENTIONS}  # every control, once
    again = run_once(at, checks)  # the same controls: the same settings, nothing of the sidebar checked
    assert set(again) <= PAGE_KEYWORDS, dict(again)
    at.selectbox(key="preset").set_value("rectools")
    run_once(at, checks)  # the controls take RecTools' values: each checked once
    assert at.session_state["ideal"] == "k" and at.session_state["gain"] == "binary"  # RecTools' ideal
    run_once(at, checks)  # the address now holds them too: each number's text checked once
    last = run_once(at, checks)  # the preset's values in the controls and in the address: read, not checked
    assert set(last) <= PAGE_KEYWORDS, dict(last)
