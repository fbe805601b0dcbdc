"""Remember which contents failed to read, so the same bad bytes are not parsed again.

A server that re-reads an upload on every page view would pay for a bad file
(a decompression bomb stopped at its limit, a malformed 1 GB CSV) again and
again. :class:`FailedReads` keeps the one-line error of each failed content,
keyed by the SHA-256 of its bytes and the read settings, for a bounded number
of entries (least recently used dropped first):

    failed = FailedReads()
    df, mapping = failed.read(data, name="run.csv", kind="run")   # raises MetricsError

A second call with the same bytes and settings raises the remembered error
without parsing. Only :class:`MetricsError` is remembered (bad input), never
other exceptions. Thread-safe.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from ..errors import MetricsError
from .limits import ReadLimits
from .limits import current as current_limits


def content_key(data: bytes, *settings) -> str:
    """SHA-256 of ``data`` and of the settings that change the result of a read."""
    h = hashlib.sha256(data)
    h.update(repr(settings).encode("utf-8"))
    return h.hexdigest()


class FailedReads:
    """Bounded memo ``content key -> error message`` of failed reads."""

    def __init__(self, max_entries: int = 256):
        self.max_entries = max_entries
        self._errors: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._errors)

    def known(self, key: str) -> str | None:
        """The remembered message of ``key``, or None."""
        with self._lock:
            message = self._errors.get(key)
            if message is not None:
                self._errors.move_to_end(key)
            return message

    def remember(self, key: str, error: MetricsError) -> None:
        with self._lock:
            self._errors[key] = str(error)
            self._errors.move_to_end(key)
            while len(self._errors) > self.max_entries:
                self._errors.popitem(last=False)

    def read(self, data: bytes, *, name: str, kind: str = "auto", columns: dict | None = None,
             limits: ReadLimits | None = None):
        """:func:`metrics_core.io.read_table` of ``data``, or the remembered error of the same content."""
        from .reader import read_table

        limits = current_limits() if limits is None else limits
        key = content_key(data, name, kind, sorted((columns or {}).items()), limits)
        message = self.known(key)
        if message is not None:
            raise MetricsError(message)
        try:
            return read_table(data, name=name, kind=kind, columns=columns, limits=limits)
        except MetricsError as e:
            self.remember(key, e)
            raise
