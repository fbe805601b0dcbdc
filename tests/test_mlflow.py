"""mc.log_mlflow and `metrics-core evaluate --mlflow` against a real local MLflow tracking store
(SQLite in a temporary folder), read back with MLflow's own client."""

from __future__ import annotations

import _cli
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.outputs.tracking import mlflow_name



def imported_mlflow():
    """MLflow, imported by the test that needs it rather than when the module is collected (every test
    worker collects every module, and importing MLflow takes about two CPU seconds)."""
    return pytest.importorskip("mlflow", reason="pip install 'metrics-core[mlflow]'")


def MlflowClient(uri: str):  # noqa: N802 - MLflow's own class, imported when first called
    imported_mlflow()
    from mlflow.tracking import MlflowClient as client

    return client(uri)

METRICS = ["ndcg@10", "p@5", "map", "auc", "coverage@10"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A SQLite tracking store; the working folder is moved there so MLflow's artifacts land in it too."""
    folder = tmp_path_factory.mktemp("mlflow")
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield folder, f"sqlite:///{folder / 'mlflow.db'}"
    finally:
        os.chdir(before)


def _data(seed=0):
    rng = np.random.default_rng(seed)
    rows = [(f"u{u}", int(i), rng.random()) for u in range(80) for i in rng.choice(30, 10, replace=False)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = run.sample(frac=0.3, random_state=seed)[["user_id", "item_id"]].assign(relevance=1)
    return run, qrels


def test_names_mlflow_accepts():
    assert mlflow_name("ndcg@10") == "ndcg_at_10"
    assert mlflow_name("p@5") == "p_at_5"
    assert mlflow_name("ndcg_cut_10") == "ndcg_cut_10"
    assert mlflow_name("val/recall@20") == "val/recall_at_20"
    assert mlflow_name("a:b(c)é") == "a_b_c__"
    imported_mlflow()
    from mlflow.utils.validation import _validate_metric_name

    for label in ("ndcg@10", "a:b(c)é", "hit@3", "r-precision"):
        _validate_metric_name(mlflow_name(label))  # MLflow's own rule raises on a name it refuses


def test_log_mlflow_reads_back(store):
    folder, uri = store
    run, qrels = _data()
    ev = mc.evaluate(run, qrels, METRICS, gain="exponential", ties="trec")
    run_id = mc.log_mlflow(ev, tracking_uri=uri, experiment="nightly", run_name="model-a", model_name="model-a")
    client = MlflowClient(uri)
    got = client.get_run(run_id)
    assert got.info.status == "FINISHED" and got.info.run_name == "model-a"
    assert client.get_experiment(got.info.experiment_id).name == "nightly"
    assert got.data.metrics == {"ndcg_at_10": ev.summary["ndcg@10"], "p_at_5": ev.summary["p@5"],
                                "map": ev.summary["map"], "auc": ev.summary["auc"],
                                "coverage_at_10": ev.summary["coverage@10"]}
    want_params = {k: str(v) for k, v in ev.conventions.items()} | {"n_users": str(ev.n_users),
                                                                    "metrics_core_version": mc.__version__}
    assert got.data.params == want_params
    assert got.data.params["gain"] == "exponential" and got.data.params["ties"] == "trec"
    listed = sorted(a.path for a in client.list_artifacts(run_id, "metrics_core"))
    assert listed == ["metrics_core/diagnostics.json", "metrics_core/per_user.parquet", "metrics_core/report.html"]
    local = Path(client.download_artifacts(run_id, "metrics_core", str(folder / "download")))
    per_user = pd.read_parquet(local / "per_user.parquet").set_index("user_id")
    pd.testing.assert_frame_equal(per_user, ev.per_user, check_index_type=False)
    html = (local / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "metrics-core: model-a" in html


def test_active_run_and_prefix(store, monkeypatch):
    _, uri = store
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    ev = mc.evaluate(*_data(1), ["ndcg@10"])
    mlflow = imported_mlflow()
    with mlflow.start_run() as active:
        mlflow.log_param("model", "two-tower")
        run_id = mc.log_mlflow(ev, prefix="val/", report=False)
    assert run_id == active.info.run_id
    got = MlflowClient(uri).get_run(run_id)
    assert got.data.metrics == {"val/ndcg_at_10": ev.summary["ndcg@10"]}
    assert got.data.params["model"] == "two-tower" and got.data.params["val/ties"] == "average"
    assert sorted(a.path for a in MlflowClient(uri).list_artifacts(run_id, "metrics_core")) == [
        "metrics_core/diagnostics.json", "metrics_core/per_user.parquet"]


def test_refusals_are_one_line(store):
    _, uri = store
    run, qrels = _data(2)
    ev = mc.evaluate(run, qrels, ["p@5", "precision@5"])
    ev.summary = {"p@5": 0.1, "p_at_5": 0.2}  # two labels, one MLflow name
    with pytest.raises(mc.MetricsError, match="'p@5' and 'p_at_5' both become the MLflow name 'p_at_5'"):
        mc.log_mlflow(ev, tracking_uri=uri)
    with pytest.raises(mc.MetricsError, match="log_mlflow takes an Evaluation"):
        mc.log_mlflow({"ndcg@10": 0.3}, tracking_uri=uri)
    ev = mc.evaluate(run, qrels, ["ndcg@10"])
    run_id = mc.log_mlflow(ev, tracking_uri=uri, report=False)
    changed = mc.evaluate(run, qrels, ["ndcg@10"], gain="exponential")
    with pytest.raises(mc.MetricsError, match=r"^MLflow \(sqlite:.*\): MlflowException: ") as info:
        mc.log_mlflow(changed, tracking_uri=uri, run_id=run_id, report=False)  # a param cannot change in a run
    assert "\n" not in str(info.value)


def test_cli_evaluate_mlflow(store):
    folder, uri = store
    run, qrels = _data(3)
    run.to_csv(folder / "two_tower.csv", index=False)
    qrels.to_csv(folder / "qrels.csv", index=False)
    # in this process (:mod:`_cli`): what is checked is what the command logs, not the process around it
    proc = _cli.run("evaluate", "--qrels", folder / "qrels.csv", "--run", folder / "two_tower.csv",
                    "--metrics", "ndcg@10,p@5", "--gain", "exponential", "--mlflow", uri, "--mlflow-experiment", "cli")
    assert proc.returncode == 0, proc.stderr
    note = [line for line in proc.stderr.splitlines() if line.startswith("note: two_tower: logged to MLflow run ")]
    assert len(note) == 1
    run_id = note[0].rsplit(" ", 1)[1]
    got = MlflowClient(uri).get_run(run_id)
    want = mc.evaluate(run, qrels, ["ndcg@10", "p@5"], gain="exponential")
    assert got.info.run_name == "two_tower"
    assert got.data.metrics == pytest.approx({"ndcg_at_10": want.summary["ndcg@10"], "p_at_5": want.summary["p@5"]},
                                             rel=1e-12)
    assert got.data.params["gain"] == "exponential" and got.data.params["preset"] == "(none)"
    assert "metrics_core/report.html" in [a.path for a in MlflowClient(uri).list_artifacts(run_id, "metrics_core")]


def test_a_store_mlflow_refuses_is_the_documented_one_line(tmp_path):
    """A ``file://`` store (MLflow's file store refuses new runs) fails when the run is created, before
    anything is logged: the same one-line MetricsError as every other MLflow error."""
    run, qrels = _data(2)
    ev = mc.evaluate(run, qrels, ["ndcg@10"])
    uri = (tmp_path / "mlruns").as_uri()
    assert uri.startswith("file://")
    with pytest.raises(mc.MetricsError, match=r"^MLflow \(file://.*\): MlflowException: ") as info:
        mc.log_mlflow(ev, tracking_uri=uri, experiment="nightly", report=False)
    assert "\n" not in str(info.value) and len(str(info.value)) < 500


def test_the_documented_example_of_log_mlflow_runs(tmp_path):
    """``mc.log_mlflow``'s docstring example (kept out of tests/test_doctests.py for MLflow's start-up cost)
    runs as a doctest, shows what it says and leaves no file in the working folder."""
    import doctest

    from metrics_core.outputs import tracking

    (example,) = [t for t in doctest.DocTestFinder().find(tracking.log_mlflow, "log_mlflow", globs={}) if t.examples]
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    report: list[str] = []
    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        runner.run(example, out=report.append)
    finally:
        os.chdir(before)
    assert runner.summarize(verbose=False).failed == 0, "".join(report)
    assert len(example.examples) >= 5
    assert not list(tmp_path.iterdir())
