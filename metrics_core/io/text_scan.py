"""Facts about a large text gathered in one compiled pass: its newlines and whether it is plain ASCII.

Reading a text file checks it for NUL bytes and for valid UTF-8 and, after
parsing, counts its newlines to tell whether row ``i`` is line ``i + 2``. On a
file of hundreds of megabytes these are three passes over the bytes in
Python or Arrow; :func:`scan_text` does all three in one parallel pass
(:mod:`metrics_core.kernels.text_scan`). Smaller texts keep the plain byte
searches, so reading a small file never waits for that kernel to compile.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import text_scan
from ..kernels._jit import kernel_guard, n_threads

# Texts from this size on are scanned by the compiled kernel; below it ``bytes.count`` and
# ``bytes.find`` take a few milliseconds at most.
LARGE_TEXT_BYTES = 16 << 20


@dataclass(frozen=True)
class TextFacts:
    """``newlines``: bytes equal to ``\\n``; ``plain_ascii``: no NUL byte and no byte from 0x80 up
    (such a text is valid UTF-8 and holds no binary content)."""

    newlines: int
    plain_ascii: bool


def _bytes_facts(part: bytes) -> tuple[int, bool]:
    return part.count(b"\n"), not any(b == 0 or b >= 0x80 for b in part)


def scan_text(data: bytes) -> TextFacts | None:
    """The facts of ``data``, or None when it is smaller than :data:`LARGE_TEXT_BYTES`."""
    if len(data) < LARGE_TEXT_BYTES:
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    head = -raw.ctypes.data % 8  # bytes before the first 8-byte aligned address
    n_words = (len(raw) - head) // 8
    words = raw[head:head + 8 * n_words].view(np.uint64)
    chunks = 4 * n_threads()
    newlines = np.zeros(chunks, dtype=np.uint64)
    flags = np.zeros(chunks, dtype=np.uint64)
    with kernel_guard():  # a parallel kernel: one at a time without a thread-safe numba layer
        text_scan.scan_words(words, chunks, newlines, flags)
    edge_newlines, edge_ascii = _bytes_facts(data[:head] + data[head + 8 * n_words:])
    return TextFacts(newlines=int(newlines.sum()) + edge_newlines,
                     plain_ascii=edge_ascii and not flags.any())
