"""Spark sessions for the tests: ``local[2]`` and a ``local-cluster`` with separate executor JVMs.

A local cluster's executors run from ``$SPARK_HOME``; with a pip-installed pyspark
:func:`metrics_core.spark._local_cluster.use_private_spark_home` makes a temporary one, and
``conftest.py`` calls it before the first JVM of the test process starts (see that module).
"""

from __future__ import annotations

import _deadlines as deadlines
import os

from metrics_core.spark._local_cluster import is_private

LOCAL = "local[2]"
CLUSTER = "local-cluster[2,1,1024]"  # 2 workers x 1 core x 1 GiB: two executor JVMs
EXECUTORS = 2
# The tests' JVMs live seconds to minutes and run little JVM code: the client compiler alone
# (no C2 tier) and the serial collector spend about a third less CPU than the defaults, on the
# driver and on the local cluster's executors. The results do not depend on the JIT tier.
TEST_JVM_OPTIONS = "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:+UseSerialGC"


def use_test_jvm_options() -> None:
    """Start every JVM of the test process and of the commands it runs with :data:`TEST_JVM_OPTIONS`
    (pyspark passes ``PYSPARK_SUBMIT_ARGS`` to spark-submit when it launches the driver), unless the
    environment already sets ``PYSPARK_SUBMIT_ARGS``."""
    os.environ.setdefault(
        "PYSPARK_SUBMIT_ARGS",
        f"--driver-java-options '{TEST_JVM_OPTIONS}' "
        f"--conf 'spark.executor.extraJavaOptions={TEST_JVM_OPTIONS}' pyspark-shell")


def start_session(master: str, app_name: str, shuffle_partitions: int = 3):
    """A SparkSession on ``master`` bound to the loopback interface, quiet, without UI.

    Started by :func:`metrics_core.spark.get_session`, as the command line and users start
    one: on a local master its Python workers run the driver's interpreter (``PYSPARK_PYTHON``
    when set, else ``sys.executable``), whatever ``python3`` comes first on PATH. Executors of
    a local cluster keep numba's cache of the shipped kernels in the temporary Spark home, not
    in the user's cache directory.
    """
    from metrics_core import spark as mcs

    config = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": str(shuffle_partitions),
        "spark.default.parallelism": "2",
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        # a failing task fails its job at once: a bad input's error is what the tests look at, and a
        # local cluster would otherwise run the task three more times before giving it
        "spark.task.maxFailures": "1",
    }
    home = os.environ.get("SPARK_HOME")
    if master.startswith("local-cluster") and is_private(home):
        config["spark.executorEnv.NUMBA_CACHE_DIR"] = os.path.join(home, "numba-cache")
    return mcs.get_session(master, app_name, config=config)


def wait_for_executors(context, count: int = EXECUTORS, timeout: float = deadlines.BACKGROUND) -> None:
    """Block until ``count`` executors have registered with the driver (their JVMs take seconds to start)."""
    import time

    deadline = time.monotonic() + timeout
    while context._jsc.sc().getExecutorMemoryStatus().size() < count + 1:  # the driver counts as one
        if time.monotonic() > deadline:
            raise TimeoutError(f"{count} executors did not register within {timeout:.0f} s")
        time.sleep(0.2)


def module_session(master: str, app_name: str):
    """A session for a test module: on the local cluster, metrics_core is shipped to the executors
    (before any task: a Python worker keeps what it has imported) and both executors are up."""
    from metrics_core import spark as mcs

    session = start_session(master, app_name)
    if master == CLUSTER:
        mcs.ship_package(session)
        wait_for_executors(session.sparkContext)
    return session
