"""Spark's Python workers run the driver's interpreter on a local master.

Spark starts its Python workers with ``PYSPARK_PYTHON``, else ``python3`` from PATH.
These tests put a ``python3`` that cannot run anything first on PATH and leave
``PYSPARK_PYTHON`` unset, as when a virtual environment's Python is called by its
path without activating the environment: the command line, a session from
``metrics_core.spark.get_session`` (which the test suite's sessions also come from, see
``tests/_spark_cluster.py``) and ``metrics_core.spark.evaluate`` on a session the caller
built must still work.
"""

from __future__ import annotations

import _deadlines as deadlines
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from metrics_core.errors import MetricsError
from metrics_core.spark import _env

FORMATS = Path(__file__).resolve().parent / "data" / "formats"

pytestmark = pytest.mark.spark


def _env_with_wrong_python3(tmp_path: Path) -> dict:
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    wrong = fake_bin / "python3"
    wrong.write_text("#!/bin/sh\necho 'this python3 is not the one the driver runs' >&2\nexit 3\n")
    wrong.chmod(0o755)
    java = shutil.which("java")
    assert java is not None, "the Spark tests need a Java runtime on PATH"
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = os.pathsep.join([str(fake_bin), str(Path(java).resolve().parent), "/usr/bin", "/bin"])
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    return env


def test_cli_spark_engine_with_unactivated_interpreter(tmp_path):
    env = _env_with_wrong_python3(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-m", "metrics_core", "evaluate", "--engine", "spark", "--spark-master", "local[1]",
         "--qrels", str(FORMATS / "qrels.parquet"), "--run", str(FORMATS / "run.parquet"),
         "--metrics", "ndcg@3,map", "--json"],
        env=env, capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert set(json.loads(proc.stdout)["models"]["run"]) == {"ndcg@3", "map"}


def test_api_on_a_session_built_by_the_caller(tmp_path):
    env = _env_with_wrong_python3(tmp_path)
    script = textwrap.dedent("""
        import pandas as pd
        from pyspark.sql import SparkSession
        from metrics_core import spark as mcs
        spark = SparkSession.builder.master("local[1]").getOrCreate()
        run = spark.createDataFrame(pd.DataFrame(
            {"user_id": ["a", "a", "b"], "item_id": ["x", "y", "x"], "score": [2.0, 1.0, 1.0]}))
        qrels = spark.createDataFrame(pd.DataFrame(
            {"user_id": ["a", "b"], "item_id": ["y", "x"], "relevance": [1, 1]}))
        ev = mcs.evaluate(run, qrels, ["mrr@10"])
        print(repr(ev.summary["mrr@10"]))
        spark.stop()
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert float(proc.stdout.strip().splitlines()[-1]) == pytest.approx((0.5 + 1.0) / 2, abs=1e-12)


def test_get_session_workers_run_the_driver_python(tmp_path):
    """A Python job on a session from get_session, before any evaluation: its workers run the
    driver's interpreter, not the python3 first on PATH."""
    env = _env_with_wrong_python3(tmp_path)
    script = textwrap.dedent("""
        import sys
        from metrics_core import spark as mcs
        spark = mcs.get_session("local[1]", config={"spark.ui.enabled": "false"})
        workers = spark.sparkContext.parallelize(range(2), 2).map(lambda _: __import__("sys").executable).collect()
        print(sys.executable, *sorted(set(workers)))
        spark.stop()
    """)
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                          timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip().splitlines()[-1].split() == [sys.executable, sys.executable]


def _session(master: str, python: str):
    context = type("Context", (), {"master": master, "pythonExec": python})()
    return type("Session", (), {"sparkContext": context})()


def test_explicit_pyspark_python_is_kept(monkeypatch):
    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/team/python")
    session = _session("local[2]", "/opt/team/python")
    _env.use_driver_python(session)
    assert session.sparkContext.pythonExec == "/opt/team/python"
    monkeypatch.delenv("PYSPARK_PYTHON")
    session = _session("local[2]", "python3")
    _env.use_driver_python(session)
    assert session.sparkContext.pythonExec == sys.executable
    session = _session("yarn", "python3")
    _env.use_driver_python(session)
    assert session.sparkContext.pythonExec == "python3"


def test_cluster_worker_without_the_package_names_the_python(monkeypatch):
    class PythonException(Exception):
        pass

    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    with pytest.raises(MetricsError) as err:
        with _env.spark_errors("Spark evaluation"):
            raise PythonException("Traceback ...\nModuleNotFoundError: No module named 'pyarrow'\n")
    message = str(err.value)
    assert "\n" not in message
    assert "python3 from the executors' PATH" in message and "'pyarrow'" in message
    assert "--archives env.tar.gz#env" in message


def test_cluster_worker_without_metrics_core_points_to_ship_package(monkeypatch):
    class PythonException(Exception):
        pass

    monkeypatch.setenv("PYSPARK_PYTHON", "/opt/cluster/python3")
    with pytest.raises(MetricsError) as err:
        with _env.spark_errors("Spark evaluation"):
            raise PythonException("Traceback ...\nModuleNotFoundError: No module named 'metrics_core.spark'\n")
    message = str(err.value)
    assert "\n" not in message and "/opt/cluster/python3" in message
    assert "metrics_core.spark.ship_package(spark)" in message and "--archives env.tar.gz#env" in message
