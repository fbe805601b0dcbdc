"""``metrics-core evaluate``: output shapes, per-user files, model names, trec_eval's numbers.

References: trec_eval's own expected output (out.test, out.test.a) and a
plain-Python computation of the metrics on the small fixture data.
"""

from __future__ import annotations

import _deadlines as deadlines
import csv
import io
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from metrics_core.cli import main
from metrics_core.commands.evaluate import model_names

HERE = Path(__file__).resolve().parent
FORMATS = HERE / "data" / "formats"
from _trec import TREC_EVAL_DIR as TREC

RUN = [
    ("u1", "i01", 0.9), ("u1", "i02", 0.8), ("u1", "i03", 0.7), ("u1", "i04", 0.35),
    ("u2", "i02", 0.95), ("u2", "0042", 0.6), ("u2", "i05", 0.5),
    ("u3", "i01", 0.2), ("u3", "i06", 0.1),
    ("007", "i03", 0.55), ("007", "i04", 0.45), ("007", "i05", 0.25),
]
QRELS = {
    ("u1", "i01"): 2, ("u1", "i03"): 1, ("u1", "i05"): 1,
    ("u2", "0042"): 3, ("u2", "i06"): 1, ("u2", "i02"): 0,
    ("u3", "i06"): 1,
    ("007", "i04"): 2, ("007", "i01"): 1,
}
METRICS = "p@2,recall@3,mrr,ndcg@3"


def reference(truth: dict) -> dict[str, dict[str, float]]:
    """Per-user P@2, recall@3, MRR, nDCG@3 (linear gain, ideal over all judged items), by hand."""
    out = {}
    users = sorted({u for u, _ in truth})
    for u in users:
        ranked = [i for uu, i, _ in sorted((r for r in RUN if r[0] == u), key=lambda r: -r[2])]
        rel = [truth.get((u, i), 0) for i in ranked]
        n_rel = sum(1 for (uu, _), r in truth.items() if uu == u and r >= 1)
        if n_rel == 0:
            continue
        hits = [1 if r >= 1 else 0 for r in rel]
        dcg = sum(r / math.log2(j + 2) for j, r in enumerate(rel[:3]))
        ideal = sorted((r for (uu, _), r in truth.items() if uu == u), reverse=True)
        idcg = sum(r / math.log2(j + 2) for j, r in enumerate(ideal[:3]))
        mrr = next((1 / (j + 1) for j, h in enumerate(hits) if h), 0.0)
        out[u] = {"p@2": sum(hits[:2]) / 2, "recall@3": sum(hits[:3]) / n_rel, "mrr": mrr, "ndcg@3": dcg / idcg}
    return out


def mean(per_user: dict, metric: str) -> float:
    return sum(v[metric] for v in per_user.values()) / len(per_user)


def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(map(str, argv)))
    out, err = capsys.readouterr()
    return code, out, err


RUN_FILES = ["run.csv", "run.tsv", "run.parquet", "run.jsonl", "run.trec", "run.txt", "run.csv.gz",
             "run.jsonl.gz", "run_bom.csv", "run_crlf.csv", "run_aliased.csv", "run_ws.txt", "run_rank.csv"]
QRELS_FILES = ["qrels.csv", "qrels.tsv", "qrels.parquet", "qrels.jsonl", "qrels.qrels", "qrels.tsv.gz",
               "qrels_aliased.csv", "qrels_bom_crlf.csv", "qrels_negative.qrels"]


def test_every_run_format_gives_the_reference_metrics(capsys):
    args = ["evaluate", "--qrels", FORMATS / "qrels.csv", "--metrics", METRICS, "--json"]
    for name in RUN_FILES:
        args += ["--run", FORMATS / name]
    code, out, err = cli(capsys, *args)
    assert code == 0, err
    doc = json.loads(out)
    ref = reference(QRELS)
    assert len(doc["models"]) == len(RUN_FILES)
    for model, values in doc["models"].items():
        for metric in METRICS.split(","):
            assert values[metric] == pytest.approx(mean(ref, metric), abs=1e-12), (model, metric)
    assert "note: 8 runs are named 'run'" in err
    assert "user_id <- 'qid', item_id <- 'docno', score <- 'Prediction'" in err  # the aliased file's mapping


def test_every_qrels_format_gives_the_reference_metrics(capsys):
    ref = reference(QRELS)
    for name in QRELS_FILES:
        code, out, err = cli(capsys, "evaluate", "--qrels", FORMATS / name, "--run", FORMATS / "run.csv",
                             "--metrics", METRICS, "--json")
        assert code == 0, err
        values = json.loads(out)["models"]["run"]
        for metric in METRICS.split(","):
            assert values[metric] == pytest.approx(mean(ref, metric), abs=1e-12), (name, metric)


def test_qrels_omitted_when_the_run_has_labels(capsys):
    code, out, err = cli(capsys, "evaluate", "--run", FORMATS / "run_labels.jsonl", "--metrics", METRICS, "--json")
    assert code == 0, err
    truth = {(u, i): QRELS.get((u, i), 0) for u, i, _ in RUN}
    ref = reference(truth)
    for metric in METRICS.split(","):
        assert json.loads(out)["models"]["run_labels"][metric] == pytest.approx(mean(ref, metric), abs=1e-12)


def test_json_shape_and_diagnostics(capsys):
    code, out, _ = cli(capsys, "evaluate", "--qrels", FORMATS / "qrels.csv", "--run", FORMATS / "run.csv",
                       "--metrics", "ndcg@3,map", "--json")
    doc = json.loads(out)
    assert code == 0 and set(doc) == {"models", "diagnostics"}
    assert list(doc["models"]["run"]) == ["ndcg@3", "map"]
    assert set(doc["diagnostics"]) == {"run"}
    assert doc["diagnostics"]["run"]["n_users_evaluated"] == 4


def test_warnings_go_to_stderr(capsys, tmp_path):
    # u4 exists only in this ground truth: a diagnostics warning, the JSON on stdout stays clean
    qrels = tmp_path / "qrels_extra_user.csv"
    qrels.write_text((FORMATS / "qrels.csv").read_text() + "u4,i01,1\n")
    code, out, err = cli(capsys, "evaluate", "--qrels", qrels, "--run", FORMATS / "run.csv",
                         "--metrics", "ndcg@3", "--json")
    assert code == 0
    assert "warning: run: 1 user(s) of the ground truth are missing from the run" in err
    assert json.loads(out)["diagnostics"]["run"]["users_only_in_truth"] == 1


def test_csv_output_one_row_per_model(capsys):
    code, out, _ = cli(capsys, "evaluate", "--qrels", FORMATS / "qrels.csv", "--run", FORMATS / "run.csv",
                       "--run", FORMATS / "run_rank.csv", "--metrics", METRICS, "--csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert code == 0 and rows[0] == ["model"] + METRICS.split(",")
    assert [r[0] for r in rows[1:]] == ["run", "run_rank"]
    ref = reference(QRELS)
    assert float(rows[1][1]) == pytest.approx(mean(ref, "p@2"), abs=1e-15)


def test_table_output_is_aligned(capsys):
    code, out, _ = cli(capsys, "evaluate", "--qrels", FORMATS / "qrels.csv", "--run", FORMATS / "run.csv",
                       "--metrics", METRICS)
    lines = out.splitlines()
    ref = reference(QRELS)
    assert code == 0 and lines[0].split() == ["model"] + METRICS.split(",")
    assert set(lines[1]) <= {"-", " "}
    assert lines[2].split() == ["run"] + [f"{mean(ref, m):.4f}" for m in METRICS.split(",")]
    assert len({len(line) for line in lines}) == 1  # right-aligned numbers: equal widths


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_per_user_file(capsys, tmp_path, ext):
    target = tmp_path / f"per_user.{ext}"
    code, _, err = cli(capsys, "evaluate", "--qrels", FORMATS / "qrels.csv", "--run", FORMATS / "run.csv",
                       "--run", FORMATS / "run_rank.csv", "--metrics", METRICS, "--per-user", target)
    assert code == 0, err
    df = pd.read_parquet(target) if ext == "parquet" else pd.read_csv(target, dtype={"user_id": str})
    assert list(df.columns) == ["model", "user_id"] + METRICS.split(",")
    ref = reference(QRELS)
    assert len(df) == 2 * len(ref)
    assert sorted(df["model"].unique()) == ["run", "run_rank"]
    for row in df.to_dict("records"):
        for metric in METRICS.split(","):
            assert row[metric] == pytest.approx(ref[row["user_id"]][metric], abs=1e-12), (row, metric)


def test_model_names():
    assert model_names(["runs/bm25.trec.gz"]) == (["bm25"], [])
    names, notes = model_names(["a/bm25.v1.run", "b/bm25.v2.run"])
    assert names == ["bm25.v1", "bm25.v2"] and "2 runs are named 'bm25'" in notes[0]
    assert model_names(["a/bm25.csv", "b/bm25.csv"])[0] == ["a/bm25", "b/bm25"]
    assert model_names(["x.csv", "x.csv"])[0] == ["x", "x#2"]
    assert model_names(["x.csv", "x.tsv"])[0] == ["x.csv", "x.tsv"]


# trec_eval measure -> our metric name
TREC_MEASURES = {
    "P_5": "p@5", "P_10": "p@10", "P_15": "p@15", "P_20": "p@20", "P_30": "p@30", "P_100": "p@100",
    "P_200": "p@200", "P_500": "p@500", "P_1000": "p@1000", "map": "map", "Rprec": "r_precision",
    "recip_rank": "mrr", "ndcg": "ndcg", "ndcg_cut_10": "ndcg@10", "recall_10": "recall@10",
    "map_cut_10": "map@10", "success_10": "hit_rate@10",
}


def _trec_expected() -> dict[str, str]:
    out = {}
    for fname in ("out.test", "out.test.a"):
        for line in (TREC / fname).read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] == "all" and parts[0] in TREC_MEASURES:
                out[parts[0]] = parts[2]
    return out


def test_trec_eval_fixtures_print_trec_evals_numbers(capsys):
    expected = _trec_expected()
    assert set(expected) == set(TREC_MEASURES)
    metrics = ",".join(TREC_MEASURES[m] for m in expected)
    code, out, err = cli(capsys, "evaluate", "--qrels", TREC / "qrels.test", "--run", TREC / "results.test",
                         "--metrics", metrics, "--ties", "trec")
    assert code == 0, err
    header, _, row = out.splitlines()
    printed = dict(zip(header.split(), row.split()))
    assert printed["model"] == "results"
    for measure, value in expected.items():
        assert printed[TREC_MEASURES[measure]] == value, measure
    code, out, _ = cli(capsys, "evaluate", "--qrels", TREC / "qrels.test", "--run", TREC / "results.test",
                       "--metrics", metrics, "--ties", "trec", "--json")
    values = json.loads(out)["models"]["results"]
    for measure, value in expected.items():
        assert f"{values[TREC_MEASURES[measure]]:.4f}" == value, measure


def test_python_dash_m_runs_and_fails_cleanly(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "evaluate", "--run", str(tmp_path / "nope.csv"),
                           "--qrels", str(FORMATS / "qrels.csv"), "--metrics", "ndcg@10"],
                          capture_output=True, text=True, cwd=HERE.parent, timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {tmp_path / 'nope.csv'}: no such file; check the path\n"
    assert proc.stdout == ""


def test_item_features_for_ils(capsys, tmp_path):
    features = tmp_path / "features.csv"
    features.write_text("item_id,tags\ni01,a|b\ni02,b\ni03,a|c\ni04,c\ni05,a\n0042,b|c\n")
    code, out, err = cli(capsys, "evaluate", "--qrels", FORMATS / "qrels.csv", "--run", FORMATS / "run.csv",
                         "--metrics", "ils@3", "--item-features", features, "--json")
    assert code == 0, err
    # Jaccard over the top-3 pairs, by hand: u1 (1/2+1/3+0)/3, u2 (1/2+0+0)/3, 007 (1/2+1/2+0)/3;
    # u3's items i01, i06: i06 has no features, so u3 has no ILS value
    expected = ((1 / 2 + 1 / 3) / 3 + (1 / 2) / 3 + 1 / 3) / 3
    assert json.loads(out)["models"]["run"]["ils@3"] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("argv, named", [
    (["evaluate", "--run", "r.csv"], "evaluate"),
    (["--progress", "compare", "--help"], "compare"),
    (["--help"], None),
    (["--version"], None),
    (["evalute", "--run", "r.csv"], None),
    ([], None),
])
def test_the_named_command_is_the_first_argument_that_is_not_an_option(argv, named):
    from metrics_core.cli import named_command

    assert named_command(argv) == named


def test_help_and_a_misspelt_command_still_offer_every_command(capsys):
    from metrics_core.cli import COMMANDS

    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(f"    {name} " in listed or f"    {name}\n" in listed for name in COMMANDS), listed
    assert main(["evalute", "--run", "r.csv"]) == 2
    said = capsys.readouterr().err
    assert "invalid choice: 'evalute'" in said and all(f"'{name}'" in said for name in COMMANDS)
