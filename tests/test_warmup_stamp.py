"""The kernel-cache stamp: written by a complete warm-up, current while the sources and versions
are unchanged, and what lets a restarted dashboard skip its background warm-up."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from metrics_core import warmup as warmup_mod
from metrics_core.kernels import cache_stamp
from metrics_core.kernels._jit import PARALLEL, SERIAL, LazyKernel, SizedKernel


class FakeKernel:
    def __init__(self, on_disk: bool):
        self.on_disk = on_disk

    def cached_on_disk(self, variant: str) -> bool:
        return self.on_disk


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A two-file package and a stamp file of its own, no parallel kernel."""
    src = tmp_path / "pkg"
    (src / "sub").mkdir(parents=True)
    (src / "a.py").write_text("x = 1\n")
    (src / "sub" / "b.py").write_text("y = 2\n")
    monkeypatch.setattr(cache_stamp, "PACKAGE", src)
    monkeypatch.setattr(cache_stamp, "stamp_path", lambda: tmp_path / "cache" / cache_stamp.STAMP_NAME)
    monkeypatch.setattr(SizedKernel, "instances", [])
    return src


def test_no_stamp_is_not_current(package):
    assert not cache_stamp.is_current()


def test_a_written_stamp_is_current(package):
    cache_stamp.write()
    assert cache_stamp.is_current()


def test_a_source_file_changed_since_makes_it_stale(package):
    cache_stamp.write()
    stat = (package / "sub" / "b.py").stat()
    os.utime(package / "sub" / "b.py", ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert not cache_stamp.is_current()


def test_a_new_source_file_makes_it_stale(package):
    cache_stamp.write()
    (package / "c.py").write_text("z = 3\n")
    assert not cache_stamp.is_current()


def test_another_numba_version_makes_it_stale(package, monkeypatch):
    cache_stamp.write()
    monkeypatch.setattr(cache_stamp.load_numba(), "__version__", "0.0.0")
    assert not cache_stamp.is_current()


def test_a_parallel_kernel_missing_from_disk_makes_it_stale(package, monkeypatch):
    cache_stamp.write()
    monkeypatch.setattr(SizedKernel, "instances", [FakeKernel(True), FakeKernel(False)])
    assert not cache_stamp.is_current()
    monkeypatch.setattr(SizedKernel, "instances", [FakeKernel(True)])
    assert cache_stamp.is_current()


def test_an_unwritable_cache_folder_is_no_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setattr(cache_stamp, "stamp_path", lambda: blocker / "sub" / cache_stamp.STAMP_NAME)
    cache_stamp.write()
    assert not cache_stamp.is_current()


@pytest.fixture
def calls(package, monkeypatch):
    """The warm-up's phases, recorded instead of run."""
    done = []
    monkeypatch.setattr(warmup_mod, "_exercise", lambda mc, reverse=False: done.append("exercise"))
    monkeypatch.setattr(warmup_mod, "_first_page", lambda mc: done.append("first page"))
    return done


def test_a_complete_warmup_writes_the_stamp_and_the_next_one_does_nothing(calls):
    warmup_mod.warmup(first_page=True)
    assert calls == ["first page", "exercise", "exercise"]
    assert cache_stamp.is_current()
    warmup_mod.warmup(first_page=True)
    assert calls == ["first page", "exercise", "exercise"]
    warmup_mod.warmup(force=True)
    assert calls == ["first page", "exercise", "exercise", "exercise", "exercise"]


def test_a_warmup_of_one_variant_writes_no_stamp(calls):
    warmup_mod.warmup(variants=(SERIAL,))
    assert calls == ["exercise"]
    assert not cache_stamp.is_current()


def variant_recorder(calls, monkeypatch):
    """``_exercise`` records the variant it runs under; ``_start_variant`` starts a real child
    process that records its own (a print of the variant, not a compile)."""
    from metrics_core.kernels import _jit

    monkeypatch.setattr(warmup_mod, "_exercise", lambda mc, reverse=False: calls.append(("here", _jit._FORCED_VARIANT.get(), reverse)))
    children = []

    def start(variant):
        children.append(variant)
        return subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(0)"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    monkeypatch.setattr(warmup_mod, "_start_variant", start)
    return children


def test_two_jobs_compile_the_second_variant_in_a_child_and_write_the_stamp(calls, monkeypatch):
    children = variant_recorder(calls, monkeypatch)
    warmup_mod.warmup(jobs=2)
    # the serial variant here, then the child's parallel one here too, from its last step
    assert calls == [("here", SERIAL, False), ("here", PARALLEL, True)]
    assert children == [PARALLEL]
    assert cache_stamp.is_current()


def test_a_failed_child_is_an_error_naming_its_variant_and_writes_no_stamp(calls, monkeypatch):
    monkeypatch.setattr(warmup_mod, "_exercise", lambda mc, reverse=False: None)
    monkeypatch.setattr(warmup_mod, "_start_variant", lambda variant: subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stderr.write('first\\nMemoryError: out of memory\\n'); sys.exit(1)"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    with pytest.raises(RuntimeError, match=r"^the parallel kernels' warm-up failed: MemoryError: out of memory$"):
        warmup_mod.warmup(jobs=2)
    assert not cache_stamp.is_current()


def test_the_command_line_compiles_one_variant_or_both_in_two_processes(calls, monkeypatch):
    children = variant_recorder(calls, monkeypatch)
    warmup_mod.main(["--variant", PARALLEL])
    assert calls == [("here", PARALLEL, False)] and children == []
    assert not cache_stamp.is_current()
    warmup_mod.main(["--jobs", "2"])
    assert calls == [("here", PARALLEL, False), ("here", SERIAL, False), ("here", PARALLEL, True)]
    assert children == [PARALLEL]
    assert cache_stamp.is_current()


def test_the_dashboard_starts_no_warmup_on_a_complete_cache(monkeypatch):
    from dashboard import kernel_warmup

    started = []
    monkeypatch.setattr(kernel_warmup, "_started", None)
    monkeypatch.setattr(kernel_warmup, "_cache_complete", None)
    monkeypatch.setattr(kernel_warmup.subprocess, "Popen", lambda args, **kw: started.append(args))
    monkeypatch.setattr(kernel_warmup.cache_stamp, "is_current", lambda: True)
    assert kernel_warmup.start_once() is None
    assert started == []


def test_the_dashboard_starts_its_warmup_on_a_stale_cache(monkeypatch):
    from dashboard import kernel_warmup

    started = []
    monkeypatch.setattr(kernel_warmup, "_started", None)
    monkeypatch.setattr(kernel_warmup, "_cache_complete", None)
    monkeypatch.setattr(kernel_warmup.subprocess, "Popen", lambda args, **kw: started.append(args) or "process")
    monkeypatch.setattr(kernel_warmup.cache_stamp, "is_current", lambda: False)
    assert kernel_warmup.start_once() == "process"
    assert started == [[sys.executable, "-m", "metrics_core.warmup", "--background", "--first-page",
                        "--parent", str(os.getpid())]]


def _python_called_kernels():
    """(module, name) of every serial kernel (a numba dispatcher, made on first use) that a module outside the kernel layers
    (``kernels/`` and ``layout.sort_and_join``, whose kernels call one another compiled) calls from Python:
    the off-policy lookup, the input checks, the text scan, ..."""
    import importlib
    import pkgutil

    import numba

    import metrics_core

    found = []
    for info in pkgutil.walk_packages(metrics_core.__path__, "metrics_core."):
        if info.name.startswith(("metrics_core.kernels", "metrics_core.layout.sort_and_join", "metrics_core.spark",
                                 "metrics_core.__main__")):
            continue
        module = importlib.import_module(info.name)
        found += [(module, name) for name, value in vars(module).items()
                  if isinstance(value, (LazyKernel, numba.core.registry.CPUDispatcher))]
    return found


def test_the_warmup_reaches_both_variants_of_every_parallel_kernel(monkeypatch):
    """What the stamp stands for: after a complete warm-up numba's cache holds every parallel
    kernel's two variants (a kernel the warm-up never calls would be compiled by a page), and every
    serial kernel called from Python (``mc.off_policy``'s lookup among them) was called by it."""
    import metrics_core  # noqa: F401 - every kernel module

    serial = _python_called_kernels()
    assert any(name == "probability_at_logged" for _, name in serial)  # the search sees the off-policy kernel
    def source(kernel) -> str:
        return f"{kernel.py_func.__module__}.{kernel.py_func.__qualname__}"

    kernels = {source(getattr(module, name)) for module, name in serial}
    called = set()
    for module, name in serial:  # a kernel imported by two modules is reached through either
        kernel = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _k=kernel, **kw: called.add(source(_k)) or _k(*a, **kw))
    warmup_mod.warmup(force=True, jobs=1)
    missing = [(k.py_func.__qualname__, v) for k in SizedKernel.instances for v in (SERIAL, PARALLEL)
               if not k.cached_on_disk(v)]
    assert missing == []
    assert sorted(kernels - called) == []
    assert cache_stamp.is_current()


def test_a_package_imported_from_a_zip_never_has_a_current_stamp(package, monkeypatch, tmp_path):
    """Spark executors import the package from a zip: no source times to compare, so no stamp."""
    cache_stamp.write()
    monkeypatch.setattr(cache_stamp, "PACKAGE", tmp_path / "metrics_core.zip" / "metrics_core")
    assert not cache_stamp.is_current()
    (tmp_path / "cache" / cache_stamp.STAMP_NAME).unlink()
    cache_stamp.write()
    assert not (tmp_path / "cache" / cache_stamp.STAMP_NAME).exists()


def test_the_steps_reversed_are_the_same_calls_in_the_other_order(monkeypatch):
    """A helper running the steps from the other end makes every call the forward run makes."""
    made = []

    class Recorder:
        def __getattr__(self, name):
            return lambda *args, **kwargs: made.append(name)

    monkeypatch.setattr(warmup_mod, "scan_words", lambda *a: made.append("scan_words"))
    monkeypatch.setattr(warmup_mod, "first_whole_decimal", lambda *a: made.append("first_whole_decimal"))
    monkeypatch.setattr(warmup_mod, "first_too_deep", lambda *a: made.append("first_too_deep"))
    monkeypatch.setattr(warmup_mod, "earlier_pairs", lambda *a: made.append("earlier_pairs"))
    monkeypatch.setattr(warmup_mod, "group_users", lambda *a: made.append("group_users"))
    warmup_mod._exercise(Recorder())
    forward = list(made)
    made.clear()
    warmup_mod._exercise(Recorder(), reverse=True)
    assert sorted(made) == sorted(forward)
    assert made != forward
    assert {"prepare", "metric_curve", "evaluate", "roc_curve", "off_policy", "scan_words", "group_users"} <= set(forward)
