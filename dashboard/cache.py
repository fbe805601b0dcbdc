"""A server-wide cache bounded in bytes and in time, for the bytes of stored files
(:mod:`dashboard.file_bytes`) and everything the dashboard computes: parsed files,
prepared models, evaluations, curves, bootstrap intervals and comparisons.

Entries are keyed by content (SHA-256 of the file plus the options that shape
the result) and shared by every session. The least recently used entries are
dropped when the total size passes ``max_bytes``; an entry older than
``ttl_seconds`` since its last use is dropped when next looked at or when anything is added. A
:class:`~metrics_core.errors.MetricsError` is remembered like a result, so a
file that failed to read is not read again on every rerun: only its type and
message are kept (never the exception, whose traceback and context would keep
the frames of the failed read, and the arrays they hold, alive), and it is
raised again as a new exception. Every entry counts what it holds: its value
(:func:`nbytes`) or message, its key and a fixed overhead.

Limits come from the environment (stated on the Data page):
``METRICS_CORE_DASHBOARD_CACHE_MB`` (default 1024) and
``METRICS_CORE_DASHBOARD_CACHE_TTL`` (seconds, default 3600).
"""

from __future__ import annotations

import os
import sys
import threading
import time
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd
import pyarrow as pa

from metrics_core.errors import MetricsError
from metrics_core.formats import plural

from dashboard import memory

_DERIVED: "weakref.WeakKeyDictionary[Any, dict[str, Any]]" = weakref.WeakKeyDictionary()
_DERIVED_LOCK = threading.Lock()


def derived(obj: Any, name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, a fact about the immutable ``obj`` (a prepared model: its scores and grades never
    change), computed once per ``obj`` and ``name`` and forgotten with ``obj`` (held weakly, beside
    the byte-bounded cache, which holds ``obj`` itself)."""
    with _DERIVED_LOCK:
        facts = _DERIVED.setdefault(obj, {})
        if name in facts:
            return facts[name]
    value = compute()
    with _DERIVED_LOCK:
        return facts.setdefault(name, value)


MB_ENV = "METRICS_CORE_DASHBOARD_CACHE_MB"
TTL_ENV = "METRICS_CORE_DASHBOARD_CACHE_TTL"
DEFAULT_MB = 1024
DEFAULT_TTL = 3600


def env_number(name: str, default: float) -> float:
    try:
        value = float(os.environ.get(name, "").strip() or default)
    except ValueError:
        return default
    return value if value > 0 else default


def nbytes(obj: Any, _seen: set | None = None, _depth: int = 0) -> int:
    """Approximate memory held by ``obj``: numpy buffers, pandas frames (deep),
    bytes and strings, and the attributes of plain objects, each counted once."""
    seen = _seen if _seen is not None else set()
    if id(obj) in seen or _depth > 6:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes) if obj.base is None or id(obj.base) not in seen else 0
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        usage = obj.memory_usage(deep=True, index=True)
        return int(usage.sum() if isinstance(usage, pd.Series) else usage)
    if isinstance(obj, pd.Index):
        return int(obj.memory_usage(deep=True))
    if isinstance(obj, (pa.Array, pa.ChunkedArray, pa.Table, pa.RecordBatch)):
        return int(obj.get_total_buffer_size())  # whole buffers, also those a slice shares
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return len(obj)
    if isinstance(obj, str):
        return sys.getsizeof(obj)
    if isinstance(obj, dict):
        return sum(nbytes(k, seen, _depth + 1) + nbytes(v, seen, _depth + 1) for k, v in obj.items())
    if isinstance(obj, (list, tuple, set, frozenset)):
        return sum(nbytes(v, seen, _depth + 1) for v in obj)
    attrs = getattr(obj, "__dict__", None)
    if attrs is None and hasattr(obj, "__slots__"):
        attrs = {s: getattr(obj, s, None) for s in obj.__slots__}
    if attrs:
        return sum(nbytes(v, seen, _depth + 1) for v in attrs.values())
    return 0


#: bytes of an entry besides its value: the entry object, its key's slot and the ordering links
ENTRY_OVERHEAD_BYTES = 512


def entry_overhead(key: str) -> int:
    """Bytes an entry costs besides its value or message."""
    return sys.getsizeof(key) + ENTRY_OVERHEAD_BYTES


@dataclass
class _Failure:
    """What is kept of a :class:`MetricsError`: its type and message, no traceback or context."""

    kind: type
    message: str

    @classmethod
    def of(cls, exc: MetricsError) -> "_Failure":
        return cls(type(exc), str(exc))

    def error(self) -> MetricsError:
        """A new exception like the one remembered."""
        try:
            exc = self.kind(self.message)
        except Exception:  # noqa: BLE001 - a subclass with another constructor: its message as a MetricsError
            exc = MetricsError(self.message)
        return exc if isinstance(exc, MetricsError) else MetricsError(self.message)

    def nbytes(self) -> int:
        return sys.getsizeof(self.message)


@dataclass
class _Entry:
    value: Any
    error: _Failure | None
    size: int
    used: float


class ByteBudgetCache:
    """Least-recently-used cache holding at most ``max_bytes``, each entry until ``ttl_seconds``
    after its last use."""

    def __init__(self, max_bytes: int, ttl_seconds: float, clock: Callable[[], float] = time.monotonic):
        self.max_bytes = int(max_bytes)
        self.ttl_seconds = float(ttl_seconds)
        self._clock = clock
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}

    @property
    def total_bytes(self) -> int:
        with self._lock:
            return sum(e.size for e in self._entries.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def keys(self) -> list[str]:
        """The keys held now (least recently used first)."""
        with self._lock:
            return list(self._entries)

    def size_of(self, key: str) -> int | None:
        """The bytes counted for ``key`` (its value and the entry itself), or None when it is not held."""
        with self._lock:
            self._expire()
            entry = self._entries.get(key)
            return None if entry is None else entry.size

    def __contains__(self, key: str) -> bool:
        with self._lock:
            self._expire()
            return key in self._entries

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def _expire(self) -> None:
        """Drop the entries unused for longer than ``ttl_seconds``. The entries are kept in the
        order of their last use (a lookup or a store moves an entry to the end and stamps it), so
        the expired ones are at the front: the scan stops at the first entry still in use."""
        now = self._clock()
        while self._entries:
            key, entry = next(iter(self._entries.items()))
            if now - entry.used <= self.ttl_seconds:
                return
            del self._entries[key]

    def _lookup(self, key: str) -> _Entry | None:
        with self._lock:
            self._expire()
            entry = self._entries.get(key)
            if entry is not None:
                entry.used = self._clock()
                self._entries.move_to_end(key)
            return entry

    def _store(self, key: str, entry: _Entry) -> None:
        with self._lock:
            self._expire()
            entry.used = self._clock()  # stored now: its place at the end matches its stamp
            self._entries[key] = entry
            self._entries.move_to_end(key)
            total = sum(e.size for e in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                _, dropped = self._entries.popitem(last=False)
                total -= dropped.size
            if total > self.max_bytes:  # a single entry larger than the budget is not kept
                self._entries.pop(key, None)

    def get_or_compute(self, key: str, compute: Callable[[], Any],
                       size: Callable[[Any], int] | None = None) -> Any:
        """The cached value of ``key``, computing it once (other callers of the same key
        wait); a cached :class:`MetricsError` is raised again without recomputing.
        ``size(value)`` counts the bytes the entry holds of its own (default :func:`nbytes`;
        pass it when the value refers to objects cached under another key)."""
        entry = self._lookup(key)
        if entry is None:
            with self._lock:
                key_lock = self._key_locks.setdefault(key, threading.Lock())
            with key_lock:
                entry = self._lookup(key)
                if entry is None:
                    entry = self._computed(key, compute, size)
                    self._store(key, entry)
            with self._lock:
                self._key_locks.pop(key, None)
        if entry.error is not None:
            raise entry.error.error()
        return entry.value

    def _computed(self, key: str, compute: Callable[[], Any], size: Callable[[Any], int] | None) -> _Entry:
        """The entry for ``key``: the value with its size, or what is kept of a MetricsError."""
        overhead = entry_overhead(key)
        try:
            value = compute()
        except MetricsError as exc:
            failure = _Failure.of(exc)  # the exception, its traceback and context are dropped here
            return _Entry(None, failure, failure.nbytes() + overhead, self._clock())
        return _Entry(value, None, (size or nbytes)(value) + overhead, self._clock())


    def sweep(self) -> int:
        """Drop expired entries now (also when no session looks any more); returns how many."""
        with self._lock:
            before = len(self._entries)
            self._expire()
            return before - len(self._entries)


def start_sweeper(cache: "ByteBudgetCache", interval: float | None = None,
                  also: Callable[[], int] | None = None, stop: threading.Event | None = None) -> threading.Thread:
    """A daemon thread that expires ``cache``'s entries every ``interval`` seconds (default:
    a quarter of the time to live, between 1 s and 60 s), calls ``also`` (another
    clean-up returning how many things it released), then returns freed memory; until ``stop``
    is set (never by default)."""
    every = interval if interval is not None else min(60.0, max(1.0, cache.ttl_seconds / 4))
    stop = stop or threading.Event()

    def run() -> None:
        trim_next = False  # what ``also`` releases may be freed after this pass (on another thread)
        while not stop.wait(every):
            released = cache.sweep()
            if also is not None:
                try:
                    released += also()
                except Exception:  # noqa: BLE001 - the sweeper must outlive any clean-up failure
                    pass
            if released or trim_next:
                import gc

                gc.collect()
                memory.release_freed_memory()
            trim_next = bool(released)

    thread = threading.Thread(target=run, name="metrics-core-cache-sweeper", daemon=True)
    thread.start()
    return thread


SHARED = ByteBudgetCache(int(env_number(MB_ENV, DEFAULT_MB) * 2**20), env_number(TTL_ENV, DEFAULT_TTL))


def _close_expired_sessions() -> int:
    from dashboard.sessions import close_expired_sessions

    return close_expired_sessions()


memory.return_large_blocks_on_free()  # once per server process, before any upload is read
memory.limit_arenas()
_SWEEPER = start_sweeper(SHARED, also=_close_expired_sessions)


def limits_text() -> str:
    """The cache limits in one sentence (for the Data page)."""
    return (f"Stored files' bytes, parsed files, prepared models and computed results are kept on the server up to "
            f"{SHARED.max_bytes / 2**20:,.0f} MB in total for "
            f"{plural(round(SHARED.ttl_seconds / 60), 'minute')} "
            f"after their last use ({MB_ENV}, {TTL_ENV}).")
