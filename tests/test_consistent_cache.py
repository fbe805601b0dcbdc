"""numba's disk cache stays consistent when processes compile one function at once.

With numba's own saver, two processes compiling two argument types of one function at the same time can
leave an index that names, for one type, the data file holding the other type's code; every later process
then runs the wrong code (in a full test run ranx scored queries against other queries' lists this way).
These tests build that state, and the interleaving that makes it, and check what the package's kernels
(:mod:`metrics_core.kernels.consistent_cache`) do with them.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from numba.core import caching

from metrics_core.kernels import consistent_cache

REPO = Path(__file__).resolve().parents[1]

#: a kernel made with the package's ``njit``, in a module of its own (the package's ``__init__`` is not run)
KERNEL_MODULE = f'''
import sys, types
if "metrics_core" not in sys.modules:
    _package = types.ModuleType("metrics_core")
    _package.__path__ = [{str(REPO / "metrics_core")!r}]
    sys.modules["metrics_core"] = _package
from metrics_core.kernels._jit import njit

@njit
def twice(x):
    return x + x
'''

CALLS = """
import probe_kernel
print(repr(probe_kernel.twice(3)), repr(probe_kernel.twice(1.5)))
d = probe_kernel.twice.dispatcher()
print(sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values()))
"""


def _run(folder: Path, script: str = CALLS, cache: str = "cache") -> list[str]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(folder / cache), "PYTHONPATH": str(folder)}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=folder,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.split("\n")


def _index(folder: Path) -> Path:
    (index,) = (folder / "cache").rglob("probe_kernel.twice-*.nbi")
    return index


def test_a_version_compiled_for_other_types_is_compiled_again(tmp_path):
    (tmp_path / "probe_kernel.py").write_text(KERNEL_MODULE)
    assert _run(tmp_path)[:2] == ["6 3.0", "0 2"]  # both compiled, both saved
    # the state the race leaves: the index names, for each argument type, the other type's data file
    index = _index(tmp_path)
    with open(index, "rb") as f:
        version = pickle.load(f)
        stamp, overloads = pickle.loads(f.read())
    assert len(overloads) == 2
    (k1, n1), (k2, n2) = overloads.items()
    with open(index, "wb") as f:
        pickle.dump(version, f, protocol=-1)
        f.write(pickle.dumps((stamp, {k1: n2, k2: n1})))
    # numba's loader would run the float version for 3 (answering 6.0): each is compiled again instead
    assert _run(tmp_path)[:2] == ["6 3.0", "0 2"]
    assert _run(tmp_path)[:2] == ["6 3.0", "2 0"]  # and saved under its own name: the next process loads both


NAME = """
import probe_kernel
probe_kernel.twice(3)
(compiled,) = probe_kernel.twice.dispatcher().overloads.values()
print(compiled.fndesc.mangled_name)
"""


def test_two_processes_compiling_the_same_kernel_name_it_apart(tmp_path):
    """numba names a compiled function by an id from a counter starting at 1 in every process: two processes
    compiling in the same order would give one name to what may be two bodies (the linker then merges them
    in a process loading both). Each process of the package takes random ids."""
    (tmp_path / "probe_kernel.py").write_text(KERNEL_MODULE)
    first, second = (_run(tmp_path, NAME, cache=f"cache{i}")[0] for i in (1, 2))
    assert "probe_kernel" in first and "twice" in first
    assert first != second


def _cache_file(folder: Path) -> consistent_cache.ConsistentCacheFile:
    return consistent_cache.ConsistentCacheFile(str(folder), "f-1.py311", "stamp")


def test_a_save_read_between_another_saves_read_and_write_waits_for_it(tmp_path):
    """Process A has read the index and is about to write it when B saves: B must wait for A (an index
    written by A from its older read would drop B's entry), and both entries end in the index."""
    a, b = _cache_file(tmp_path), _cache_file(tmp_path)
    b_saving = threading.Thread(target=b.save, args=(("int64",), "int data"))
    read_once = []

    def read_then_let_b_save():
        overloads = caching.IndexDataCacheFile._load_index(a)
        if not read_once:
            read_once.append(True)
            b_saving.start()
            b_saving.join(timeout=1.0)  # B finishes at once unless it waits for A's lock
            assert b_saving.is_alive(), "B saved while A held the index"
        return overloads

    a._load_index = read_then_let_b_save
    a.save(("float64",), "float data")
    b_saving.join()
    reader = _cache_file(tmp_path)
    assert reader.load(("float64",)) == "float data"
    assert reader.load(("int64",)) == "int data"


def test_two_keys_never_share_a_data_file(tmp_path):
    cache = _cache_file(tmp_path)
    names = {consistent_cache.data_name(cache, (key,)) for key in ("int64", "float64", "unicode_type")}
    assert len(names) == 3 and all(n.startswith("f-1.py311.") and n.endswith(".nbc") for n in names)
    assert consistent_cache.data_name(_cache_file(tmp_path), ("int64",)) in names  # the same in every process


@pytest.mark.parametrize("stored, matches", [("int64", True), ("float64", False)])
def test_a_loaded_version_must_carry_the_keys_signature(tmp_path, stored, matches):
    from numba.core import types
    from numba.core.typing.templates import Signature

    cache = _cache_file(tmp_path)
    data = ("library", "fndesc", "environment", Signature(types.int64, (getattr(types, stored),), None))
    cache.save(((types.int64,), "cpu"), data)
    loaded = _cache_file(tmp_path).load(((types.int64,), "cpu"))
    assert (loaded is not None) == matches


def _write_probe(folder: Path) -> None:
    (folder / "probe_kernel.py").write_text(KERNEL_MODULE)


OTHER_SOURCES = """
import probe_kernel  # the package as the probe sets it up
from metrics_core.kernels import kernel_sources
kernel_sources.digest = lambda: "the text of a helper in another file changed"
""" + CALLS


def test_a_kernel_compiles_again_when_a_source_it_may_call_changed(tmp_path):
    """numba checks only the defining file before loading a saved version; a package kernel's cache
    is also stamped with the digest of every kernel source, so a changed helper elsewhere means a
    new compile, and an unchanged one a load."""
    _write_probe(tmp_path)
    assert _run(tmp_path)[:2] == ["6 3.0", "0 2"]  # compiled and saved
    assert _run(tmp_path)[:2] == ["6 3.0", "2 0"]  # loaded
    assert _run(tmp_path, OTHER_SOURCES)[:2] == ["6 3.0", "0 2"]  # another module's text: compiled again
    assert _run(tmp_path, OTHER_SOURCES)[:2] == ["6 3.0", "2 0"]  # and saved for that text


def _defines_kernels(text: str) -> bool:
    return any(line.lstrip().startswith(("@njit", "@nb.njit", "@numba.njit")) or "= njit(" in line
               or "overload(" in line or "LazyKernel, options" in line for line in text.splitlines())


def test_every_module_defining_a_kernel_is_in_the_kernel_sources_digest():
    from metrics_core.kernels import kernel_sources

    package = REPO / "metrics_core"
    defining = {".".join(path.relative_to(REPO).with_suffix("").parts) for path in package.rglob("*.py")
                if _defines_kernels(path.read_text(encoding="utf-8"))}
    assert "metrics_core.layout.sort_and_join" in defining and "metrics_core.kernels.ranking" in defining
    assert defining - set(kernel_sources.module_names()) == set()
