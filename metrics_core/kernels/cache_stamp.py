"""Whether numba's disk cache already holds every kernel: a stamp that
:mod:`metrics_core.warmup` writes once it has compiled (or loaded) them all.

numba keeps a cached kernel valid while its source file keeps its size and modification
time and numba its version. The stamp is a digest of the same facts for every source file
of the package (path, size, modification time) and of the Python, NumPy and numba versions,
so it stops matching exactly when a later call could have to compile again. It lives in the
cache folder of the kernels package (``NUMBA_CACHE_DIR`` when set, else ``__pycache__``).

A process that finds a current stamp and every parallel kernel's index files on disk
(:func:`is_current`) has nothing to compile: the dashboard then starts no background
warm-up, which would otherwise load every kernel once more beside the first page. The
stamp only saves work: a kernel missing from the cache is compiled on its first call as
always, so a wrong answer here costs time, never a result.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np

from ._jit import PARALLEL, SERIAL, SizedKernel, load_numba, parallel_chunks

PACKAGE = Path(__file__).resolve().parents[1]
STAMP_NAME = "metrics_core-warmup.stamp"


def fingerprint() -> str:
    """Digest of what numba's cache validity depends on: every source file's path, size and
    modification time under the package, and the Python, NumPy and numba versions."""
    digest = hashlib.sha256(f"{sys.version}|{np.__version__}|{load_numba().__version__}".encode())
    for path in sorted(PACKAGE.rglob("*.py")):
        stat = path.stat()
        digest.update(f"|{path.relative_to(PACKAGE)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def folder() -> Path | None:
    """The kernels' numba cache folder (None when numba has none)."""
    try:
        return Path(parallel_chunks._cache._cache_path)
    except AttributeError:
        return None


def stamp_path() -> Path | None:
    """Where the stamp is kept: in :func:`folder`."""
    where = folder()
    return None if where is None else where / STAMP_NAME


def write() -> None:
    """Record that every kernel is in the cache now (nothing when the folder is not writable, or
    the package is imported from a zip, as on Spark executors: its sources have no times there)."""
    path = stamp_path()
    if path is None or not PACKAGE.is_dir():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(fingerprint())
        os.replace(tmp, path)  # whole or absent, also when two warm-ups finish at once
    except OSError:
        pass


def is_current() -> bool:
    """Whether the stamp matches the sources and versions now and both variants of every parallel
    kernel have an index on disk (numba would then load every kernel instead of compiling)."""
    path = stamp_path()
    try:
        if path is None or not PACKAGE.is_dir() or path.read_text() != fingerprint():
            return False
    except OSError:
        return False
    return all(kernel.cached_on_disk(variant) for kernel in SizedKernel.instances for variant in (SERIAL, PARALLEL))
