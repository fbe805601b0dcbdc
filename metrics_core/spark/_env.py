"""pyspark as an optional extra: import it lazily, start sessions, translate errors.

Nothing in :mod:`metrics_core` imports pyspark at import time. The first call
that needs Spark checks that pyspark is installed and, when a session has to
be started, that a Java runtime is on the machine; either missing gives a
one-line :class:`~metrics_core.errors.MetricsError` saying what to install.
Errors raised inside Spark tasks (a duplicate row found by the same checks as
the single-machine path, for example) come back to the driver wrapped in a
Java stack trace; :func:`spark_errors` turns them into the original one-line
``MetricsError``.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import re
import shutil
import sys

from ..errors import MetricsError
from ._local_cluster import is_local_cluster, use_private_spark_home

SHIP_ENV_HINT = (
    "ship an environment to the executors: venv-pack -o env.tar.gz, then spark-submit "
    "--archives env.tar.gz#env with PYSPARK_PYTHON=./env/bin/python"
)

INSTALL_HINT = (
    "pip install 'metrics-core[spark]' and a Java runtime 17+ "
    "(e.g. Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"
)


def require_pyspark():
    """Import and return :mod:`pyspark`, or raise a one-line MetricsError saying what to install."""
    if importlib.util.find_spec("pyspark") is None:
        raise MetricsError(f"the Spark engine needs pyspark, which is not installed: {INSTALL_HINT}")
    import pyspark

    return pyspark


def java_available() -> bool:
    """True when a ``java`` executable is found through JAVA_HOME or PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.path.isfile(os.path.join(home, "bin", "java")):
        return True
    return shutil.which("java") is not None


def is_local_master(master: str) -> bool:
    """True for masters whose Python workers run on this machine (local, local[N], local-cluster[...])."""
    return master.strip().lower().startswith("local")


def use_driver_python(session) -> None:
    """On a local master, make the Python workers run the driver's own interpreter.

    Spark starts its Python workers with ``PYSPARK_PYTHON``, else ``python3`` from PATH.
    A virtual environment's Python called by its path, without activating the
    environment, then has workers running another Python that lacks pyarrow and
    metrics_core. On a local master the workers share the driver's file system, so
    the driver's interpreter (``sys.executable``) is the right default. An explicit
    ``PYSPARK_PYTHON`` is never overridden, nor is any cluster master's setting.
    """
    if os.environ.get("PYSPARK_PYTHON"):
        return
    context = session.sparkContext
    if is_local_master(context.master):
        context.pythonExec = sys.executable


def get_session(master: str = "local[*]", app_name: str = "metrics-core", config: dict | None = None):
    """The active SparkSession, or a new one on ``master`` (checks pyspark and Java first).

    An already running session is reused as is (spark-submit creates one with
    the cluster's settings); ``master`` and ``config`` only apply to a new one.
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if not java_available():
        raise MetricsError(f"the Spark engine needs a Java runtime, none was found (JAVA_HOME, PATH): {INSTALL_HINT}")
    if is_local_master(master):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if is_local_cluster(master):  # executors' work directories outside site-packages
        use_private_spark_home()
    builder = SparkSession.builder.master(master).appName(app_name)
    settings = {"spark.ui.showConsoleProgress": "false", "spark.sql.execution.arrow.pyspark.enabled": "true"}
    settings.update(config or {})
    for key, value in settings.items():
        builder = builder.config(key, str(value))
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: bad master URL, broken Java
        raise MetricsError(f"could not start Spark on master {master!r}: {first_line(exc)}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session


_RAISED = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception): \S")
_METRICS_ERROR = re.compile(r"MetricsError: ([^\n]*)")
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([^']+)'")


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an exception's message, without Spark's error-class prefix."""
    text = str(exc).strip().split("JVM stacktrace:")[0]
    raised = [x.strip() for x in text.splitlines() if _RAISED.match(x.strip())]
    if raised:  # a Python worker's traceback: its last "SomeError: message" line says what happened
        return raised[-1]
    return next((x.strip() for x in text.splitlines() if x.strip()), type(exc).__name__)


@contextlib.contextmanager
def spark_errors(what: str = "Spark job"):
    """Re-raise errors from Spark actions as one-line MetricsErrors.

    A MetricsError raised inside a Python worker (the single-machine checks
    running on one group of users) keeps its own message; an AnalysisException
    (missing path, missing column) keeps its first line.
    """
    try:
        yield
    except MetricsError:
        raise
    except Exception as exc:
        found = _METRICS_ERROR.search(str(exc))
        missing = _MISSING_MODULE.search(str(exc))
        if missing and not found:
            python = os.environ.get("PYSPARK_PYTHON") or "python3 from the executors' PATH (PYSPARK_PYTHON is not set)"
            hint = SHIP_ENV_HINT
            if missing.group(1).split(".")[0] == "metrics_core":
                hint = f"call metrics_core.spark.ship_package(spark) before evaluating, or {SHIP_ENV_HINT}"
            raise MetricsError(
                f"{what} failed: the Spark Python workers ran {python}, which cannot import "
                f"{missing.group(1)!r}; {hint}") from None
        if found:
            raise MetricsError(found.group(1).strip()) from None
        name = type(exc).__name__
        if name in ("AnalysisException", "PythonException", "Py4JJavaError", "IllegalArgumentException",
                    "SparkRuntimeException", "PySparkRuntimeError", "PySparkValueError", "PySparkTypeError"):
            raise MetricsError(f"{what} failed: {first_line(exc)}") from None
        raise
