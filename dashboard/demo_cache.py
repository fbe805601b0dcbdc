"""The bundled demo's tables and prepared models, kept on disk beside numba's kernel cache.

Building the demo (:func:`dashboard.demo.make_demo`) takes about a third of a second of CPU
and preparing its three models more; a restarted server reads both back in a few
milliseconds instead. The files live in the kernels' cache folder
(:func:`metrics_core.kernels.cache_stamp.folder`: ``NUMBA_CACHE_DIR`` when set), so a fresh
installation, whose kernel cache is empty, starts without them too.

Each file is named after a digest of everything its content depends on: the demo module's
source, the package's sources (sizes and modification times, as for the kernel stamp) and the
Python, NumPy and pandas versions. Any change gives a new name, so a stale file is never read
(it is replaced: older files of the same kind are removed). A file that cannot be read or
written is recomputed, never an error: the cache only saves time.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from pathlib import Path
from typing import Callable, TypeVar

import numpy as np
import pandas as pd

from metrics_core.kernels import cache_stamp

from . import demo

T = TypeVar("T")
PREFIX = "dashboard-demo-"


def _digest() -> str:
    """What the demo's tables and prepared models depend on (see the module's docstring)."""
    parts = [Path(demo.__file__).read_bytes(), cache_stamp.fingerprint().encode(),
             f"{sys.version}|{np.__version__}|{pd.__version__}".encode()]
    return hashlib.sha256(b"\0".join(parts)).hexdigest()[:32]


def cached(kind: str, compute: Callable[[], T]) -> T:
    """``compute()``, read from the file of ``kind`` (e.g. ``data``, ``ranked-popularity``) when
    one for the current sources is there, else computed and written for the next server."""
    where = cache_stamp.folder()
    if where is None:
        return compute()
    try:
        path = where / f"{PREFIX}{kind}-{_digest()}.pkl"
        with open(path, "rb") as f:
            return pickle.load(f)
    except Exception:  # noqa: BLE001 - absent, unreadable or from another version: computed below
        pass
    value = compute()
    _write(where, kind, path, value)
    return value


def _write(where: Path, kind: str, path: Path, value) -> None:
    """Write ``value`` to ``path`` whole (a temporary file, then a rename) and remove the files of
    ``kind`` for other sources; nothing when the folder cannot be written."""
    try:
        where.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        for old in where.glob(f"{PREFIX}{kind}-*.pkl"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass
