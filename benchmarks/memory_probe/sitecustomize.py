"""What holds a server's memory: a probe the load test puts in the dashboard server it starts.

Python imports ``sitecustomize`` at start-up from the first folder of ``sys.path`` that has one; the
load test (``benchmarks/load_test.py --probe``) puts this folder first in the server's ``PYTHONPATH``
and sets ``MC_MEMORY_PROBE_DIR``. Nothing happens without that variable.

A thread then waits for request files in that folder (``<label>.request``, written by the load test)
and answers each with ``<label>.json``: resident memory, glibc's heap (``mallinfo2``: bytes in use,
free but held, in mmapped blocks), the blocks Python's allocator holds, the number of live objects by
type (``gc``), the cache's entries and bytes, Streamlit's sessions, and, when ``PYTHONTRACEMALLOC``
is set, a tracemalloc snapshot (``<label>.tracemalloc``) the load test compares between readings.
A thread is used rather than a signal: Streamlit's main thread sits in its event loop.
"""

from __future__ import annotations

import os

_DIR = os.environ.get("MC_MEMORY_PROBE_DIR")


def _rss_parts() -> dict:
    """Resident memory by kind (MiB): anonymous (heaps, arrays), file-backed (code and shared
    libraries loaded), shared memory."""
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("RssAnon:", "RssFile:", "RssShmem:")):
                out[line.split(":")[0]] = int(line.split()[1]) / 1024
    return out


def _rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _mallinfo() -> dict:
    import ctypes
    import ctypes.util

    class MallInfo2(ctypes.Structure):
        _fields_ = [(name, ctypes.c_size_t) for name in
                    ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
                     "fordblks", "keepcost")]
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallinfo2.restype = MallInfo2
        m = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    mib = 2 ** 20
    return {"heap_mib": m.arena / mib, "in_use_mib": m.uordblks / mib, "free_held_mib": m.fordblks / mib,
            "mmapped_mib": m.hblkhd / mib, "mmapped_blocks": m.hblks}


def _python_arenas() -> dict:
    """Python's small-object allocator (``sys._debugmallocstats``, written to the C stderr, read
    back from a temporary file): arenas held and bytes in used blocks, MiB."""
    import re
    import sys
    import tempfile

    with tempfile.TemporaryFile() as tmp:
        sys.stderr.flush()
        saved = os.dup(2)
        try:
            os.dup2(tmp.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode(errors="replace")
    def number(label: str) -> int:
        found = re.search(re.escape(label) + r"\s*=\s*([\d,]+)", text)
        return int(found.group(1).replace(",", "")) if found else 0
    mib = 2 ** 20
    return {"arenas": number("# arenas allocated current"),
            "arena_mib": number("# bytes in allocated blocks") / mib + number("# bytes in available blocks") / mib
            + number("# bytes lost to pool headers") / mib + number("# bytes lost to quantization") / mib
            + number("# bytes lost to arena alignment") / mib,
            "used_mib": number("# bytes in allocated blocks") / mib}


def _arrow() -> dict:
    import sys

    pa = sys.modules.get("pyarrow")
    if pa is None:
        return {}
    pool = pa.default_memory_pool()
    return {"backend": pool.backend_name, "allocated_mib": pool.bytes_allocated() / 2 ** 20}


def _live_objects(top: int = 40) -> dict:
    import gc
    import sys
    from collections import Counter

    gc.collect()
    counts, sizes = Counter(), Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        name = f"{kind.__dict__.get('__module__', '') or ''}.{kind.__qualname__}".lstrip(".")
        counts[name] += 1
        try:
            sizes[name] += sys.getsizeof(obj)
        except TypeError:
            pass
    return {name: [counts[name], sizes[name]] for name, _ in sizes.most_common(top)}


def _dashboard_state() -> dict:
    import sys

    out: dict = {}
    cache = sys.modules.get("dashboard.cache")
    if cache is not None:
        shared = cache.SHARED
        out["cache_entries"] = len(shared)
        total = shared.total_bytes
        out["cache_mib"] = (total() if callable(total) else total) / 2 ** 20
        out["cache_keys"] = [k[:60] for k in shared.keys()][:40]
    try:
        from streamlit.runtime import Runtime

        runtime = Runtime.instance()
        mgr = runtime._session_mgr
        out["sessions_active"] = len(mgr.list_active_sessions())
        out["sessions_all"] = len(mgr.list_sessions())
        by_kind: dict = {}
        for family, stats in runtime._stats_mgr.get_stats().items():  # Streamlit's own accounting
            for stat in stats:
                size = getattr(stat, "byte_length", None)
                if size is not None:
                    kind = f"{family}:{getattr(stat, 'category_name', '')}"
                    by_kind[kind] = by_kind.get(kind, 0) + size / 2 ** 20
        out["streamlit_mib"] = by_kind
    except Exception as exc:  # noqa: BLE001 - a diagnostic: say what failed instead
        out["streamlit"] = f"{type(exc).__name__}: {exc}"
    return out


def _answer(label: str) -> None:
    import json
    import sys
    import tracemalloc

    report = {"label": label, "rss_mib": _rss_mib(), "malloc": _mallinfo(),
              "python_blocks": sys.getallocatedblocks(), "objects": _live_objects(),
              "dashboard": _dashboard_state()}
    report["rss_after_gc_mib"] = _rss_mib()
    report["rss_parts"] = _rss_parts()
    report["pymalloc"] = _python_arenas()
    report["arrow"] = _arrow()
    report["modules"] = sorted(sys.modules)
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        report["traced_mib"] = {"current": current / 2 ** 20, "peak": peak / 2 ** 20}
        tracemalloc.take_snapshot().dump(os.path.join(_DIR, f"{label}.tracemalloc"))
    tmp = os.path.join(_DIR, f"{label}.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(report, fh, indent=1, default=str)
    os.replace(tmp, os.path.join(_DIR, f"{label}.json"))


def _serve() -> None:
    import time

    while True:
        for name in sorted(os.listdir(_DIR)):
            if name.endswith(".request"):
                os.remove(os.path.join(_DIR, name))
                try:
                    _answer(name[: -len(".request")])
                except Exception as exc:  # noqa: BLE001 - the probe must not end the server
                    with open(os.path.join(_DIR, name[: -len(".request")] + ".json"), "w") as fh:
                        fh.write('{"error": %r}' % f"{type(exc).__name__}: {exc}")
        time.sleep(0.2)


if _DIR and os.path.isdir(_DIR):
    import threading

    threading.Thread(target=_serve, name="memory-probe", daemon=True).start()
