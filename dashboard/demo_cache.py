"""The bundled demo's tables and prepared models, kept on disk beside numba's kernel cache.

Building the demo (:func:`dashboard.demo.make_demo`) takes about a third of a second of CPU
and preparing its three models more; a restarted server reads both back in a few
milliseconds instead. The files live in the kernels' cache folder
(:func:`metrics_core.kernels.cache_stamp.folder`: ``NUMBA_CACHE_DIR`` when set), so a fresh
installation, whose kernel cache is empty, starts without them too.

Each file is named after a digest of everything its content depends on: the demo module's
source, the package's and the dashboard's sources (sizes and modification times, as for the kernel
stamp) and the Python, NumPy and pandas versions. Any change gives a new name, so a stale file is never read
(it is replaced: older files of the same kind are removed). A file that cannot be read or
written is recomputed, never an error: the cache only saves time.

:func:`result` keeps what the engine computed from the demo the same way (the Overview's
evaluations, bootstrap intervals and metric curves, each under its full cache key), so a
restarted server draws the Overview without loading a kernel (its charts too, read back without
validating them again: :mod:`dashboard.stored_figure`); the numbers are those
``metrics_core`` computed from the demo files with the current code, and any change of the demo
module or of a package source (a kernel included) makes them computed again. At most
:data:`MAX_RESULTS` result files are kept (the least recently used are removed).
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import hashlib
import os
import pickle
import sys
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import numpy as np
import pandas as pd

from metrics_core.kernels import cache_stamp

from . import demo, stored_figure

T = TypeVar("T")
#: the engine's results of the demo's first page (the Overview at the default settings) shipped with the
#: dashboard: made by ``python -m dashboard.demo_bundle`` and checked against the engine by
#: ``tests/test_demo_bundle.py`` (every entry recomputed, same numbers), so they cannot drift from it
BUNDLE = Path(__file__).resolve().parent / "demo_first_page.pkl.gz"
PREFIX = "dashboard-demo-"
#: the most result files (:func:`result`) kept on disk, about 0.3 MB each for the demo's 2,400 users
MAX_RESULTS = 64
RESULT = "result-"


@functools.lru_cache(maxsize=1)
def _digest() -> str:
    """What the demo's tables and prepared models depend on (see the module's docstring): read once
    per process, so that what this process computes is filed under the sources it imported."""
    parts = [Path(demo.__file__).read_bytes(), cache_stamp.fingerprint().encode(), _dashboard_sources().encode(),
             f"{sys.version}|{np.__version__}|{pd.__version__}".encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:32]


def _dashboard_sources() -> str:
    """The dashboard's own sources (path, size, modification time), which compute what is kept."""
    folder = Path(__file__).resolve().parent
    return "|".join(f"{p.relative_to(folder)}:{p.stat().st_size}:{p.stat().st_mtime_ns}"
                    for p in sorted(folder.rglob("*.py")))


@functools.lru_cache(maxsize=1)
def bundled() -> dict:
    """The shipped results (:data:`BUNDLE`): ``kind`` -> value, as :func:`cached` files them; empty
    when the file is absent or cannot be read (the results are then computed, as always)."""
    if os.environ.get("METRICS_CORE_DEMO_BUNDLE", "1") == "0":  # the bundle's own check recomputes everything
        return {}
    try:
        with gzip.open(BUNDLE, "rb") as f:
            value = pickle.load(f)
    except Exception:  # noqa: BLE001 - absent or from another library version: computed instead
        return {}
    return value if isinstance(value, dict) else {}


_recording: dict | None = None


@contextlib.contextmanager
def recording() -> Iterator[dict]:
    """Collect every value :func:`cached` returns in this block (``kind`` -> value), each computed
    by the engine (neither the files on disk nor the bundle are read, nor a file written), for
    :mod:`dashboard.demo_bundle` to write or check the bundle with."""
    global _recording
    _recording, previous = {}, _recording
    try:
        yield _recording
    finally:
        _recording = previous


def cached(kind: str, compute: Callable[[], T]) -> T:
    """``compute()``, read from the file of ``kind`` (e.g. ``data``, ``ranked-popularity``) when
    one for the current sources is there, else from the shipped :data:`BUNDLE` (a fresh install's
    first page, drawn without compiling a kernel), else computed and written for the next server."""
    if _recording is not None:
        _recording[kind] = value = compute()
        return value
    return _cached(kind, compute)


def _cached(kind: str, compute: Callable[[], T]) -> T:
    where = cache_stamp.folder()
    if where is not None:
        try:
            path = where / f"{PREFIX}{kind}-{_digest()}.pkl"
            with open(path, "rb") as f:
                return stored_figure.restored(pickle.load(f))
        except Exception:  # noqa: BLE001 - absent, unreadable or from another version: computed below
            pass
    if kind in bundled():
        return bundled()[kind]
    value = compute()
    if where is not None:
        _write(where, kind, path, value)
    return value


def result_kind(key: str) -> str:
    """The ``kind`` :func:`result` files the result of ``key`` under."""
    return RESULT + hashlib.sha256(key.encode()).hexdigest()[:32]


def shipped(key: str) -> bool:
    """Whether the result of ``key`` is in the shipped :data:`BUNDLE` (read without a kernel)."""
    return result_kind(key) in bundled()


def result(key: str, compute: Callable[[], T]) -> T:
    """``compute()`` of an engine result of the demo, kept on disk under ``key`` (every input of the
    result other than the demo and the code: metrics, options, model), like :func:`cached`. The
    files of other keys beyond the :data:`MAX_RESULTS` most recently used are removed."""
    kind = result_kind(key)
    value = cached(kind, compute)
    where = cache_stamp.folder()
    if where is not None:
        _keep_newest(where, kind)
    return value


def _keep_newest(where: Path, kind: str) -> None:
    """Mark the file of ``kind`` as used now and remove the least recently used result files
    beyond :data:`MAX_RESULTS`."""
    try:
        files = list(where.glob(f"{PREFIX}{RESULT}*.pkl"))
        for path in files:
            if path.name.startswith(f"{PREFIX}{kind}-"):
                os.utime(path)
        if len(files) <= MAX_RESULTS:
            return
        files.sort(key=lambda f: f.stat().st_mtime_ns, reverse=True)
        for old in files[MAX_RESULTS:]:
            old.unlink(missing_ok=True)
    except OSError:  # another server removed a file meanwhile, or the folder is read-only
        pass


def _write(where: Path, kind: str, path: Path, value) -> None:
    """Write ``value`` to ``path`` whole (a temporary file, then a rename) and remove the files of
    ``kind`` for other sources; nothing when the folder cannot be written."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(stored_figure.stored(value), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        for old in where.glob(f"{PREFIX}{kind}-*.pkl"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass
