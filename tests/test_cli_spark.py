"""``evaluate --engine spark`` prints the same numbers as the local engine.

Needs pyspark and a Java runtime; skipped with the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from metrics_core.cli import main

FORMATS = Path(__file__).resolve().parent / "data" / "formats"

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(importlib.util.find_spec("pyspark") is None, reason="pyspark is not installed"),
    pytest.mark.skipif(shutil.which("java") is None, reason="no Java runtime on PATH"),
]


def test_spark_engine_matches_local(capsys, tmp_path):
    common = ["evaluate", "--qrels", str(FORMATS / "qrels.parquet"), "--run", str(FORMATS / "run.parquet"),
              "--run", str(FORMATS / "run_rank.csv"), "--metrics", "ndcg@3,map,p@2,recall@3", "--json"]
    assert main(common + ["--per-user", str(tmp_path / "local.csv")]) == 0
    local = json.loads(capsys.readouterr().out)
    assert main(common + ["--engine", "spark", "--spark-master", "local[1]",
                          "--per-user", str(tmp_path / "spark.csv")]) == 0
    spark = json.loads(capsys.readouterr().out)
    assert set(spark["models"]) == {"run", "run_rank"}
    for model, values in local["models"].items():
        for metric, value in values.items():
            assert spark["models"][model][metric] == pytest.approx(value, abs=1e-9), (model, metric)
    assert spark["diagnostics"]["run"]["n_users_evaluated"] == local["diagnostics"]["run"]["n_users_evaluated"]
    a = pd.read_csv(tmp_path / "local.csv", dtype={"user_id": str}).sort_values(["model", "user_id"], ignore_index=True)
    b = pd.read_csv(tmp_path / "spark.csv", dtype={"user_id": str}).sort_values(["model", "user_id"], ignore_index=True)
    pd.testing.assert_frame_equal(a, b, check_exact=False, atol=1e-9)
