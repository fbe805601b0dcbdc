"""The "In a pipeline" and "In CI" sections of docs/workflows.md, run as written on small generated files:
every code block of the two sections is taken from the page and executed in a fresh folder."""

from __future__ import annotations

import _deadlines as deadlines
import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from _gate_data import write_runs

REPO = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```(python|bash)\n(.*?)```", re.DOTALL)


def section_blocks(title: str) -> list[tuple[str, str]]:
    """``(language, code)`` of every fenced block under the heading ``## {title}`` of docs/workflows.md."""
    text = (REPO / "docs" / "workflows.md").read_text(encoding="utf-8")
    start = text.index(f"## {title}\n")
    end = text.find("\n#", start + 4)
    return BLOCK.findall(text[start:end if end > 0 else None])


def _env(**extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.update(extra)
    return env


def run_block(language: str, code: str, cwd: Path, after: str = "", **env: str) -> subprocess.CompletedProcess:
    """A python block as a script (``after`` appended), a bash block with ``metrics-core`` run as
    ``python -m metrics_core`` of this repository."""
    if language == "python":
        script = cwd / "block.py"
        script.write_text(code + after, encoding="utf-8")
        cmd = [sys.executable, str(script)]
    else:
        cmd = ["bash", "-e", "-c", re.sub(r"(?m)^metrics-core ", f"'{sys.executable}' -m metrics_core ", code)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=_env(**env), timeout=deadlines.SUBPROCESS)


@pytest.fixture
def folder(tmp_path) -> Path:
    """predictions.parquet (a run as good as the baseline), baseline.parquet and qrels.parquet."""
    (tmp_path / "data").mkdir()
    data = write_runs(tmp_path / "data")
    work = tmp_path / "work"
    work.mkdir()
    for name, source in (("predictions", "noise"), ("baseline", "baseline"), ("qrels", "qrels"), ("drop", "drop")):
        shutil.copy(data / f"{source}.parquet", work / f"{name}.parquet")
    return work


def test_in_a_notebook(folder):
    """The block runs as written; what a notebook would show is the library's numbers, escaped."""
    pytest.importorskip("plotly", reason="pip install 'metrics-core[dashboard]'")
    import metrics_core as mc
    import pandas as pd
    from metrics_core.brief import build as mb
    from metrics_core.brief import text as bt
    from metrics_core import formats as fmt

    blocks = section_blocks("In a notebook")
    assert [language for language, _ in blocks] == ["python"]
    shown = run_block(*blocks[0], folder, after="\nprint(evaluations['predictions']._repr_html_())\n"
                                                "print(brief._repr_html_())\n"
                                                "print(len(mc.plot.lift_forest(table).data))\n")
    assert shown.returncode == 0, shown.stderr
    qrels = pd.read_parquet(folder / "qrels.parquet")
    evals = {n: mc.evaluate(pd.read_parquet(folder / f"{n}.parquet"), qrels, ["ndcg@10", "recall@10"])
             for n in ("baseline", "predictions")}
    for metric, value in evals["predictions"].summary.items():
        assert f"<td>{metric}</td><td class='n'>{fmt.metric(value)}</td>" in shown.stdout
    brief = mb.build_brief(evals, mc.Decision("baseline", ("predictions",), ("ndcg@10",)), title="Nightly")
    assert all(html.escape(line, quote=True) in shown.stdout for line in bt.verdict_lines(brief))
    assert shown.stdout.split()[-1] == "1"


@pytest.mark.long  # the README's pipeline in subprocesses, MLflow included: 52 s in a full run
def test_in_a_pipeline(folder):
    pytest.importorskip("mlflow", reason="pip install 'metrics-core[mlflow]'")
    pytest.importorskip("polars", reason="pip install -r requirements/dev.txt")
    from mlflow.tracking import MlflowClient

    blocks = section_blocks("In a pipeline")[:2]
    assert [language for language, _ in blocks] == ["python", "bash"]
    python = run_block(*blocks[0], folder, after="\nprint(run_id)\n")
    assert python.returncode == 0, python.stderr
    bash = run_block(*blocks[1], folder)
    assert bash.returncode == 0, bash.stderr
    client = MlflowClient(f"sqlite:///{folder / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("nightly")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert set(runs) == {"two-tower", "predictions"}
    assert runs["two-tower"].info.run_id == python.stdout.split()[-1]
    assert set(runs["two-tower"].data.metrics) == {"ndcg_at_10", "recall_at_20", "coverage_at_10"}
    assert runs["two-tower"].data.metrics["ndcg_at_10"] == runs["predictions"].data.metrics["ndcg_at_10"]


def test_publish_in_a_pipeline(folder, tmp_path):
    """The publish blocks save snapshots in the store the environment names, with the decision the
    dashboard reads, and print the links to them."""
    from urllib.parse import parse_qs, urlsplit

    from metrics_core.store import AnalysisStore

    blocks = section_blocks("In a pipeline")[2:]
    assert [language for language, _ in blocks] == ["bash", "python"]
    # the bash block sets METRICS_CORE_STORE_DIR itself; the Python block is given the same store
    shell = run_block(*blocks[0], folder, METRICS_CORE_STORE_DIR="elsewhere")
    assert shell.returncode == 0, shell.stderr
    python = run_block(*blocks[1], folder, METRICS_CORE_STORE_DIR=str(folder / "store"))
    assert python.returncode == 0, python.stderr
    shell_link = shell.stdout.splitlines()[0].removeprefix("link: ")
    python_link, delete_link = python.stdout.splitlines()
    store = AnalysisStore(folder / "store")
    try:
        for link, metrics in ((shell_link, ["ndcg@10", "recall@10"]), (python_link, ["ndcg@10"])):
            assert link.startswith("https://metrics.example.org/?analysis="), link
            saved = store.load(parse_qs(urlsplit(link).query)["analysis"][0])
            assert saved.kind == "snapshot" and saved.title == "Nightly two-tower"
            view = saved.settings["view"]
            assert (view["compare_baseline"], view["compare_challengers"], view["compare_metrics"]) == (
                "baseline", ["predictions"], metrics)
            assert sorted(f.name for f in saved.files) == ["baseline.parquet", "predictions.parquet", "qrels.parquet"]
        assert not (folder / "elsewhere").exists()
        query = parse_qs(urlsplit(delete_link).query)
        store.delete_snapshot(query["analysis"][0], query["delete"][0])
    finally:
        store.close()


@pytest.mark.long  # the README's CI commands in subprocesses: 61 s in a full run
def test_in_ci(folder):
    blocks = section_blocks("In CI")
    assert [language for language, _ in blocks] == ["bash", "bash", "python"]
    gate, segments, python = blocks
    pd.DataFrame({"user_id": [f"u{u}" for u in range(400)],
                  "locale": [("en", "de", "fr")[u % 3] for u in range(400)]}).to_csv(folder / "users.csv", index=False)
    shell = run_block(*gate, folder)
    assert shell.returncode == 0, shell.stdout + shell.stderr
    assert len(shell.stdout.splitlines()) == 3 and shell.stdout.count("PASS ") == 3
    assert (folder / "check.xml").read_text(encoding="utf-8").startswith("<?xml")
    shell = run_block(*segments, folder)
    assert shell.returncode == 0, shell.stdout + shell.stderr
    assert [line.split(" [")[1].split("]")[0] for line in shell.stdout.splitlines()] == [
        "locale=en", "locale=de", "locale=fr"]
    test = run_block(*python, folder, after="\ntest_no_regression()\n")
    assert test.returncode == 0, test.stderr
    # the same blocks on a run that lost quality: the gate stops it
    (folder / "predictions.parquet").unlink()
    shutil.copy(folder / "drop.parquet", folder / "predictions.parquet")
    shell = run_block(*gate, folder)
    assert shell.returncode == 1 and "FAIL ndcg@10 not worse than baseline by more than 1%" in shell.stdout
    shell = run_block(*segments, folder)
    assert shell.returncode == 1 and shell.stdout.count("FAIL ") == 3
    test = run_block(*python, folder, after="\ntest_no_regression()\n")
    assert test.returncode == 1 and "AssertionError: 1 of 3 condition(s) failed" in test.stderr
