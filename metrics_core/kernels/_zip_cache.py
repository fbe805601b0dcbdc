"""numba's disk cache for kernels imported from a zip (metrics_core shipped to Spark executors).

numba caches a kernel of a zipped module in a directory named after the zip's
full path. Spark copies an application's files into a new temporary directory
on every executor, so each executor of each job would compile every kernel
again (about a minute of CPU). :class:`ShippedKernelLocator` keys the cache by
the zip's file name instead (:func:`metrics_core.spark.ship_package` names it
after a hash of the package) and seeds it with the compiled kernels the zip
carries (``metrics_core/**/__pycache__/*.nbi|*.nbc``, the driver's own cache):
executors whose CPU matches the driver's load them, the others compile once
per machine and package version. A cached kernel is used only when the hash
of its source file matches, as for numba's own locators.
"""

from __future__ import annotations

import functools
import hashlib
import os
import uuid
import zipfile
from pathlib import PurePosixPath

import numba
from numba.core import caching
from numba.misc.appdirs import AppDirs

LOCATOR = f"{__name__}.ShippedKernelLocator"
CACHE_SUFFIXES = (".nbi", ".nbc")


def split_zip_path(py_file: str) -> tuple[str, str] | None:
    """``(zip path, path inside the zip)`` of a module file inside a ``.zip``, else None."""
    parts = py_file.replace(os.sep, "/").split("/")
    for i, part in enumerate(parts):
        if part.endswith(".zip") and i + 1 < len(parts):
            return "/".join(parts[: i + 1]), "/".join(parts[i + 1:])
    return None


def _extract(archive: zipfile.ZipFile, name: str, target: str) -> None:
    """Copy one member to ``target`` atomically (other executors may be seeding the same directory)."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = f"{target}.tmp.{uuid.uuid4().hex[:16]}"
    with archive.open(name) as source, open(partial, "wb") as out:
        out.write(source.read())
    os.replace(partial, target)


@functools.lru_cache(maxsize=None)
def seeded_cache_root(zip_path: str) -> str:
    """This zip's cache directory, with the compiled kernels it carries copied in (once per process).

    A kernel is copied whole, data files first and its index last, and only when
    the directory has no index for it yet: an index numba wrote here is never
    paired with data files from the zip.
    """
    base = numba.config.CACHE_DIR or AppDirs(appname="numba", appauthor=False).user_cache_dir
    root = os.path.join(base, "metrics_core-shipped", os.path.splitext(os.path.basename(zip_path))[0])
    with zipfile.ZipFile(zip_path) as archive:
        names = [n for n in archive.namelist() if "__pycache__" in n.split("/") and n.endswith(CACHE_SUFFIXES)]
        for index in (n for n in names if n.endswith(".nbi")):
            target = os.path.join(root, *index.split("/"))
            if os.path.exists(target):
                continue
            stem = index[: -len(".nbi")]
            for data in (n for n in names if n.startswith(stem + ".") and n.endswith(".nbc")):
                _extract(archive, data, os.path.join(root, *data.split("/")))
            _extract(archive, index, target)
    return root


@functools.lru_cache(maxsize=None)
def zipped_source_hash(zip_path: str, internal: str) -> bytes:
    """SHA-256 of a zipped source file: the same stamp numba gives the unzipped file."""
    with zipfile.ZipFile(zip_path) as archive:
        return hashlib.sha256(archive.read(internal)).digest()


class ShippedKernelLocator(caching._CacheLocator):
    """Cache location of a metrics_core kernel imported from a zip: ``<cache>/metrics_core-shipped/<zip name>/``
    then the module's directory inside the zip and ``__pycache__``, as numba lays out an unzipped package."""

    def __init__(self, py_func, zip_path: str, internal: str):
        self._lineno = py_func.__code__.co_firstlineno
        self._zip_path, self._internal = zip_path, internal
        self._cache_path = os.path.join(seeded_cache_root(zip_path), *PurePosixPath(internal).parent.parts,
                                        "__pycache__")

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        return zipped_source_hash(self._zip_path, self._internal)

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        where = split_zip_path(py_file)
        if where is None or not where[1].startswith("metrics_core/"):
            return None
        try:
            self = cls(py_func, *where)
            self.ensure_cache_path()
        except OSError:  # no writable cache directory: numba's next locator decides
            return None
        return self


def use_shipped_kernel_cache() -> None:
    """Put :class:`ShippedKernelLocator` first among numba's cache locators (this process only)."""
    current = numba.config.CACHE_LOCATOR_CLASSES or ",".join(c.__name__ for c in caching.CacheImpl._locator_classes)
    if LOCATOR in current.split(","):
        return
    value = f"{LOCATOR},{current}"
    os.environ["NUMBA_CACHE_LOCATOR_CLASSES"] = value  # numba re-reads its settings from the environment
    numba.config.CACHE_LOCATOR_CLASSES = value
