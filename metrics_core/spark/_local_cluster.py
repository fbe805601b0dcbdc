"""A Spark home for ``local-cluster[N,C,M]`` masters with a pip-installed pyspark.

``local-cluster`` starts a standalone master and N workers inside the driver's
JVM; each worker launches its executor as a new JVM from ``$SPARK_HOME/bin``
and ``$SPARK_HOME/jars`` and gives it a working directory under
``$SPARK_HOME/work``. A pip-installed pyspark is such a home (spark-submit
exports SPARK_HOME as pyspark's own directory), but the executors' ``work``
directories would then be written inside site-packages. :func:`use_private_spark_home`
points SPARK_HOME at a temporary directory linking pyspark's ``bin`` and
``jars`` instead. It takes effect only for a JVM started afterwards (a JVM's
environment is fixed at launch, and pyspark keeps one JVM per process).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

_created: list[str] = []


def is_local_cluster(master: str) -> bool:
    return master.strip().lower().startswith("local-cluster")


def use_private_spark_home() -> str | None:
    """Set SPARK_HOME to a temporary Spark home built from the installed pyspark (once per process).

    An existing SPARK_HOME is kept; without pyspark nothing is done. Returns SPARK_HOME.
    """
    if os.environ.get("SPARK_HOME") or importlib.util.find_spec("pyspark") is None:
        return os.environ.get("SPARK_HOME")
    pyspark_dir = Path(importlib.util.find_spec("pyspark").origin).parent
    home = tempfile.mkdtemp(prefix="mc-spark-home-")
    for part in ("bin", "jars"):
        os.symlink(pyspark_dir / part, os.path.join(home, part))
    os.environ["SPARK_HOME"] = home
    if not _created:
        atexit.register(remove_private_spark_home)
    _created.append(home)
    return home


def is_private(home: str | None) -> bool:
    """True when ``home`` is a Spark home made by :func:`use_private_spark_home` in this process."""
    return home in _created


def remove_private_spark_home() -> None:
    """Delete the temporary Spark homes (executor work directories and logs included)."""
    for home in _created:
        if os.environ.get("SPARK_HOME") == home:
            del os.environ["SPARK_HOME"]
        shutil.rmtree(home, ignore_errors=True)
    _created.clear()
