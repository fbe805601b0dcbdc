"""Ship the metrics_core package the driver runs to the executors of a Spark application.

Executors import metrics_core themselves: every task unpickles functions and
classes of :mod:`metrics_core.spark` by module name. When the executors'
Python has the dependencies (numpy, pandas, pyarrow, numba) but not this
version of metrics_core, :func:`ship_package` zips the package the driver
imported and adds it with ``SparkContext.addPyFile``; Spark copies the zip to
every executor and puts it first on their Python path, ahead of any installed
copy. The same zip works with ``spark-submit --py-files``.

The zip also carries the driver's compiled kernels (numba's cache files from
the package's ``__pycache__`` directories): executors with the driver's CPU
load them instead of compiling (:mod:`metrics_core.kernels._zip_cache`).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zipfile
from pathlib import Path

from ..errors import MetricsError
from ..kernels._zip_cache import CACHE_SUFFIXES
from . import _env

#: zips built by this process, by content hash: shipping the same code twice adds the same file
_BUILT: dict[str, str] = {}


def _package_files(root: Path) -> tuple[list[Path], list[Path]]:
    """(the package's sources and data files, numba's cache files of its kernels); no bytecode."""
    sources, kernels = [], []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if "__pycache__" not in path.relative_to(root).parts:
            sources.append(path)
        elif path.suffix in CACHE_SUFFIXES:
            kernels.append(path)
    return sources, kernels


def package_zip() -> str:
    """Path of a zip holding the imported metrics_core package (``metrics_core/...`` inside) and the
    compiled kernels found beside its sources.

    The name carries a hash of the sources, so a changed package never reuses
    the name of a zip Spark has already distributed, and executors keep the
    kernels they compile for one version apart from another's.
    """
    import metrics_core

    root = Path(metrics_core.__file__).resolve().parent
    if not root.is_dir():
        raise MetricsError(f"metrics_core is imported from {root}, not from a directory: ship that archive instead")
    sources, kernels = _package_files(root)
    digest = hashlib.sha256()
    for path in sources:
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    key = digest.hexdigest()[:16]
    if key in _BUILT and os.path.exists(_BUILT[key]):
        return _BUILT[key]
    target = os.path.join(tempfile.mkdtemp(prefix="metrics-core-ship-"), f"metrics_core-{key}.zip")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sources + kernels:
            archive.write(path, str(Path("metrics_core") / path.relative_to(root)))
    _BUILT[key] = target
    return target


def ship_package(spark, compile_kernels: bool = True) -> str:
    """Send the metrics_core package this driver runs to every executor; returns the zip's path.

    ``spark``: a SparkSession or SparkContext. Call it before the first
    evaluation (an executor's Python worker keeps the modules it has imported).
    ``compile_kernels``: compile every kernel on the driver first (about a
    second when numba's cache is warm) so that the zip carries all of them.
    """
    _env.require_pyspark()
    context = getattr(spark, "sparkContext", spark)
    if not hasattr(context, "addPyFile"):
        raise MetricsError(f"ship_package needs a SparkSession or SparkContext, got {type(spark).__name__}")
    if compile_kernels:
        from ..warmup import warmup

        warmup()
    path = package_zip()
    with _env.spark_errors("shipping metrics_core to the executors"):
        context.addPyFile(path)
    return path
