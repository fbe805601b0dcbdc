"""mc.explain and ``metrics-core explain``: values side by side, and steps that add up to the difference."""

from __future__ import annotations

import itertools
import json

import pytest

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.metrics.presets import PRESETS

from test_presets_libraries import make_data


@pytest.mark.parametrize("metric", ["ndcg@5", "map@3", "precision@3"])
def test_steps_add_up_to_the_difference_for_every_pair(metric):
    run, qrels = make_data(4)
    ex = mc.explain(run, qrels, metric=metric)
    assert [row for row in ex.values.index if ":" not in row] == [p.name for p in PRESETS]
    variants = [row for row in ex.values.index if ":" in row]
    # a library name fixing its own conventions for the metric has a row of its own
    assert variants == (["spark_mllib:meanAveragePrecision", "ms_recommenders:map"] if metric == "map@3" else [])
    for source, target in itertools.permutations(["trec_eval", "rectools", "sklearn", "spark_mllib",
                                                  "torchmetrics", "ranx"], 2):
        path = ex.path(source, target)
        assert path.start == ex.values.loc[source, "value"]
        assert path.end == ex.values.loc[target, "value"]
        assert path.start + path.steps["change"].sum() == pytest.approx(path.end, abs=1e-12)
        assert list(path.steps["convention"]) == [c.name for c in mc.conventions.CONVENTIONS
                                                  if c.name in set(path.steps["convention"])]


def test_each_step_is_evaluate_with_the_conventions_so_far():
    run, qrels = make_data(5)
    ex = mc.explain(run, qrels, metric="ndcg@5", presets=["trec_eval", "rectools"])
    settings = dict(mc.conventions.defaults(), **dict(PRESETS[0].settings))
    for step in ex.steps.to_dict("records"):
        settings[step["convention"]] = step["to"]
        want = mc.evaluate(run, qrels, metrics=["ndcg@5"], **settings).summary["ndcg@5"]
        assert step["value"] == want
    # every preset's value is what evaluate gives under that preset
    for name, row in ex.values.iterrows():
        assert row["value"] == mc.evaluate(run, qrels, metrics=["ndcg@5"], preset=name).summary["ndcg@5"]
    assert ex.values.loc["trec_eval", "library_metric"] == "ndcg"
    assert any("gain: linear -> binary" in line for line in ex.describe())


def test_paths_sharing_steps_evaluate_each_step_under_its_own_conventions(monkeypatch):
    """An explanation keeps the values it computed, so a later path reuses them: every step of every path
    between four presets (graded relevance, so the gain matters) is still ``mc.evaluate`` under that step's
    conventions, and walking the same path again evaluates nothing."""
    from metrics_core.analysis import explain as explain_module

    run, qrels = make_data(6)
    presets = ["trec_eval", "rectools", "sklearn", "torchmetrics"]
    ex = mc.explain(run, qrels, metric="ndcg@5", presets=presets)
    expected: dict = {}
    for source, target in itertools.permutations(presets, 2):
        path = ex.path(source, target)
        settings = dict(mc.Settings(source))
        for step in path.steps.to_dict("records"):
            settings[step["convention"]] = step["to"]
            key = tuple(settings.items())
            if key not in expected:
                expected[key] = mc.evaluate(run, qrels, metrics=["ndcg@5"], **settings).summary["ndcg@5"]
            assert step["value"] == expected[key], (source, target, step["convention"])
    evaluated = []
    real = explain_module._evaluate
    monkeypatch.setattr(explain_module, "_evaluate", lambda *a, **kw: evaluated.append(1) or real(*a, **kw))
    again = ex.path("sklearn", "rectools")
    assert evaluated == [] and len(again.steps) >= 2
    assert again.steps.equals(ex.path("sklearn", "rectools").steps)


def test_explain_refuses_unknown_presets_and_metrics():
    run, qrels = make_data(0)
    with pytest.raises(mc.MetricsError, match="unknown preset"):
        mc.explain(run, qrels, presets=["trec_eval", "nope"])
    with pytest.raises(mc.MetricsError, match="unknown metric"):
        mc.explain(run, qrels, metric="ndgc@5")


def test_cli_explain_json_and_preset_option(tmp_path, capsys):
    run, qrels = make_data(1)
    run_path, qrels_path = tmp_path / "run.csv", tmp_path / "qrels.csv"
    run.to_csv(run_path, index=False)
    qrels.to_csv(qrels_path, index=False)
    code = main(["explain", "--run", str(run_path), "--qrels", str(qrels_path), "--metric", "ndcg@5",
                 "--presets", "trec_eval,rectools,sklearn", "--from", "sklearn", "--to", "rectools", "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc["values"]) == {"trec_eval", "rectools", "sklearn"}
    steps = doc["path"]["steps"]
    assert doc["path"]["start"] + sum(s["change"] for s in steps) == pytest.approx(doc["path"]["end"], abs=1e-12)
    want = mc.evaluate(run, qrels, metrics=["ndcg@5"], preset="rectools").summary["ndcg@5"]
    assert doc["values"]["rectools"]["value"] == pytest.approx(want, abs=1e-12)

    code = main(["evaluate", "--run", str(run_path), "--qrels", str(qrels_path), "--metrics", "ndcg_cut_5,P_5",
                 "--preset", "trec_eval", "--ties", "average", "--json", "-q"])
    assert code == 0
    got = json.loads(capsys.readouterr().out)["models"]["run"]
    want = mc.evaluate(run, qrels, metrics=["ndcg@5", "precision@5"], preset="trec_eval", ties="average").summary
    assert list(got) == ["ndcg_cut_5", "P_5"]  # reported under the names typed, as pytrec_eval reports them
    assert got["ndcg_cut_5"] == pytest.approx(want["ndcg@5"], abs=1e-12)
    assert got["P_5"] == pytest.approx(want["precision@5"], abs=1e-12)


def test_cli_explain_bad_preset_is_one_line(tmp_path, capsys):
    run, qrels = make_data(1)
    run_path, qrels_path = tmp_path / "run.csv", tmp_path / "qrels.csv"
    run.to_csv(run_path, index=False)
    qrels.to_csv(qrels_path, index=False)
    code = main(["explain", "--run", str(run_path), "--qrels", str(qrels_path), "--presets", "trec_eval,nope"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown preset" in err and "Traceback" not in err


def test_ms_recommenders_map_and_map_at_k_are_two_rows():
    """Microsoft Recommenders answers map@k with two functions: ``map_at_k`` (divides by min(k, R), what its
    users report) is the ``ms_recommenders`` row, ``map`` (divides by R) the ``ms_recommenders:map`` row;
    either ends the path. Checked against the library on data where R exceeds k for some users."""
    import numpy as np
    import pandas as pd
    from recommenders.evaluation import python_evaluation as pe

    rng = np.random.default_rng(11)
    run = pd.DataFrame([(u, f"i{i}", float(10 - r)) for u in range(30)
                        for r, i in enumerate(rng.choice(40, 10, replace=False))],
                       columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame([(u, f"i{i}", 1) for u in range(30) for i in rng.choice(40, int(rng.integers(1, 25)),
                                                                                   replace=False)],
                         columns=["user_id", "item_id", "relevance"])
    cols = dict(col_user="user_id", col_item="item_id", col_prediction="score", col_rating="relevance")
    ex = mc.explain(run, qrels, metric="map@10", presets=["rectools", "ms_recommenders"], source="rectools",
                    target="ms_recommenders")
    assert ex.values.loc["ms_recommenders", "library_metric"] == "map_at_k"
    assert ex.values.loc["ms_recommenders:map", "library_metric"] == "map"
    assert ex.values.loc["ms_recommenders:map", "conventions"] == "ap_norm=relevant"
    at_k, by_r = pe.map_at_k(qrels, run, k=10, **cols), pe.map(qrels, run, k=10, **cols)
    assert abs(at_k - by_r) > 1e-3  # the two functions differ on this data
    assert ex.values.loc["ms_recommenders", "value"] == pytest.approx(at_k, abs=1e-9)
    assert ex.values.loc["ms_recommenders:map", "value"] == pytest.approx(by_r, abs=1e-9)
    assert ex.end == pytest.approx(at_k, abs=1e-9)
    assert ex.path("rectools", "ms_recommenders:map").end == pytest.approx(by_r, abs=1e-9)
    with pytest.raises(mc.MetricsError, match="not a name of ms_recommenders"):
        ex.path("rectools", "ms_recommenders:map_at_k")


def test_cli_explain_names_each_library_function(tmp_path, capsys):
    run, qrels = make_data(2)
    run.to_csv(tmp_path / "run.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    code = main(["explain", "--run", str(tmp_path / "run.csv"), "--qrels", str(tmp_path / "qrels.csv"),
                 "--metric", "map@3", "--presets", "rectools,ms_recommenders", "--to", "ms_recommenders:map",
                 "--json"])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["values"]["ms_recommenders"]["library_metric"] == "map_at_k"
    assert doc["values"]["ms_recommenders:map"]["conventions"] == "ap_norm=relevant"
    assert doc["path"]["to"] == "ms_recommenders:map"
    assert doc["path"]["end"] == doc["values"]["ms_recommenders:map"]["value"]
