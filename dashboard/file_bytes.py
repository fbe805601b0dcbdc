"""The bytes of stored files: one copy per server, whatever the number of sessions showing them.

A file the analysis store holds is named by the SHA-256 of its bytes. Sessions keep only that
name (:class:`dashboard.sources.Blob`); the bytes live in the server-wide cache
(:data:`dashboard.cache.SHARED`) under ``bytes|<sha256>``, counted against its budget like the
frames and models parsed from them, and are read from the store again when the cache dropped
them. Fifty viewers of a snapshot with a 69 MB file hold it once, and it is freed with the
cache's other entries when nobody used it for the cache's time to live.

A failure to read the store is not remembered (the cache remembers a
:class:`~metrics_core.errors.MetricsError` as a result): the next use asks the store again.
"""

from __future__ import annotations

from typing import Callable

from . import cache

PREFIX = "bytes|"


class _NotRead(Exception):
    """Carries a store's failure through the cache, which would otherwise remember it."""

    def __init__(self, error: Exception):
        super().__init__(str(error))
        self.error = error


def key(sha256: str) -> str:
    """The cache key of a content."""
    return PREFIX + sha256


def shared(sha256: str, read: Callable[[], bytes]) -> bytes:
    """The server's copy of the content ``sha256``, calling ``read()`` only when no session holds
    it yet (concurrent callers of one digest wait for a single read)."""
    def compute() -> bytes:
        try:
            data = read()
        except Exception as exc:  # noqa: BLE001 - raised again below, not remembered
            raise _NotRead(exc) from None
        return data if isinstance(data, bytes) else bytes(data)
    try:
        return cache.SHARED.get_or_compute(key(sha256), compute, size=len)
    except _NotRead as failed:
        raise failed.error from None


def keep(sha256: str, data: bytes) -> bytes:
    """Hand ``data`` (whose SHA-256 the caller computed) to the server-wide copy and return the
    copy to use: ``data`` itself, or the bytes another session brought first."""
    return shared(sha256, lambda: data)


def held(sha256: str) -> bool:
    """Whether the server holds the content now (for tests and the memory probe)."""
    return key(sha256) in cache.SHARED
