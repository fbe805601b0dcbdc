"""Spark sessions for the tests: ``local[2]`` and a ``local-cluster`` with separate executor JVMs.

``local-cluster[N,C,M]`` starts a standalone master and N workers inside the
driver's JVM; each worker launches its executor as a new JVM from
``$SPARK_HOME/bin`` and ``$SPARK_HOME/jars`` and gives it a working directory
under ``$SPARK_HOME/work``. A pip-installed pyspark is such a home (spark-submit
exports SPARK_HOME as pyspark's own directory), but its ``work`` directory would
then be written inside site-packages. :func:`use_private_spark_home` points
SPARK_HOME at a temporary directory linking pyspark's ``bin`` and ``jars``
instead; it must run before the first JVM of the test process starts (the
JVM's environment is fixed at launch), so ``conftest.py`` calls it at startup.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

LOCAL = "local[2]"
CLUSTER = "local-cluster[2,1,1024]"  # 2 workers x 1 core x 1 GiB: two executor JVMs
EXECUTORS = 2

_created: list[str] = []


def use_private_spark_home() -> str | None:
    """Set SPARK_HOME to a temporary Spark home built from the installed pyspark (once per process).

    Kept as is when SPARK_HOME is already set; nothing is done without pyspark.
    """
    if os.environ.get("SPARK_HOME") or importlib.util.find_spec("pyspark") is None:
        return os.environ.get("SPARK_HOME")
    pyspark_dir = Path(importlib.util.find_spec("pyspark").origin).parent
    home = tempfile.mkdtemp(prefix="mc-spark-home-")
    for part in ("bin", "jars"):
        os.symlink(pyspark_dir / part, os.path.join(home, part))
    os.environ["SPARK_HOME"] = home
    _created.append(home)
    return home


def remove_private_spark_home() -> None:
    """Delete the temporary Spark home (executor work directories and logs included)."""
    for home in _created:
        if os.environ.get("SPARK_HOME") == home:
            del os.environ["SPARK_HOME"]
        shutil.rmtree(home, ignore_errors=True)
    _created.clear()


def start_session(master: str, app_name: str, shuffle_partitions: int = 3):
    """A SparkSession on ``master`` bound to the loopback interface, quiet, without UI.

    Executors of a local cluster keep numba's cache of the shipped kernels in the
    temporary Spark home, not in the user's cache directory.
    """
    from pyspark.sql import SparkSession

    builder = SparkSession.builder.master(master).appName(app_name)
    home = os.environ.get("SPARK_HOME")
    if master.startswith("local-cluster") and home in _created:
        builder = builder.config("spark.executorEnv.NUMBA_CACHE_DIR", os.path.join(home, "numba-cache"))
    session = (
        builder
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.default.parallelism", "2")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def wait_for_executors(context, count: int = EXECUTORS, timeout: float = 180.0) -> None:
    """Block until ``count`` executors have registered with the driver (their JVMs take seconds to start)."""
    import time

    deadline = time.monotonic() + timeout
    while context._jsc.sc().getExecutorMemoryStatus().size() < count + 1:  # the driver counts as one
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} executors did not register within {timeout:.0f} s")
        time.sleep(0.2)
