"""Hand memory the server no longer uses back to the operating system.

A long-running dashboard server allocates and frees large arrays for every
upload. By default glibc raises its mmap threshold after the first large block
is freed, so later large arrays come from the heap, where freed pages are only
returned by an explicit trim; Arrow's memory pool (mimalloc or jemalloc) keeps
freed pages for reuse. :func:`return_large_blocks_on_free` fixes the threshold
at start-up, so a freed array of 128 KiB or more is unmapped at once,
:func:`limit_arenas` keeps the many server threads' small blocks in a few heaps, and
:func:`release_freed_memory` asks both allocators to give back what they hold (the
cache's sweeper calls it once expired entries or closed sessions were released, and
again on the next pass, for what other threads freed after them).
Both do nothing where the allocator is not glibc's.
"""

from __future__ import annotations

import ctypes
import ctypes.util

_M_MMAP_THRESHOLD = -3  # mallopt parameter numbers from glibc's malloc.h
_M_ARENA_MAX = -8
MMAP_THRESHOLD_BYTES = 128 * 1024
#: glibc's malloc arenas at most (its default is 8 per core): every server thread (Tornado, one per
#: script run, the cache's worker) that allocates at once gets an arena of its own, whose freed pages
#: stay with it; a few arenas keep what many viewers' runs freed in fewer, trimmable heaps
MAX_ARENAS = 2


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


def limit_arenas(arenas: int = MAX_ARENAS) -> bool:
    """Let glibc's malloc use at most ``arenas`` arenas (``MALLOC_ARENA_MAX`` set from inside the
    process, before the sessions' threads allocate). True when the setting took."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    return bool(mallopt(_M_ARENA_MAX, int(arenas)))


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
