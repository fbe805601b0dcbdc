"""Hand memory the server no longer uses back to the operating system.

A long-running dashboard server allocates and frees large arrays for every
upload. By default glibc raises its mmap threshold after the first large block
is freed, so later large arrays come from the heap, where freed pages are only
returned by an explicit trim; Arrow's memory pool (mimalloc or jemalloc) keeps
freed pages for reuse. :func:`return_large_blocks_on_free` fixes the threshold
at start-up, so a freed array of 128 KiB or more is unmapped at once, and
:func:`release_freed_memory` asks both allocators to give back what they hold.
Both do nothing where the allocator is not glibc's.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_MMAP_THRESHOLD = -3  # mallopt parameter numbers from glibc's malloc.h
MMAP_THRESHOLD_BYTES = 128 * 1024


def _libc():
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None


def return_large_blocks_on_free() -> bool:
    """Serve every block of 128 KiB or more by its own mapping, returned to the system when
    freed (glibc's default threshold grows up to 32 MiB). True when the setting took."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES))


def release_freed_memory() -> None:
    """Ask Arrow's memory pool and the C allocator to give freed pages back to the system."""
    try:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()
    except (ImportError, AttributeError):
        pass
    libc = _libc()
    trim = getattr(libc, "malloc_trim", None)
    if trim is not None:
        trim(0)
