"""Shared numba settings: compiled kernels are cached on disk (first call of a
process pays no compile cost once the cache is warm)."""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import threading

import numba as nb


def _threadsafe_layer_available() -> bool:
    """Whether numba can use a thread-safe threading layer (TBB or OpenMP).

    Streamlit runs each session's script in its own thread, so two sessions can
    call a parallel kernel at once; numba's default 'workqueue' layer aborts the
    process when that happens.
    """
    for module in ("numba.np.ufunc.tbbpool", "numba.np.ufunc.omppool"):
        try:
            importlib.import_module(module)
            return True
        except ImportError:
            continue
    return False


THREADSAFE = _threadsafe_layer_available()
if THREADSAFE:
    nb.config.THREADING_LAYER = "threadsafe"
_LOCK = threading.RLock()

if ".zip" + os.sep in __file__:  # imported from a zip, as shipped to Spark executors
    from ._zip_cache import use_shipped_kernel_cache

    use_shipped_kernel_cache()


def kernel_guard():
    """Context manager serialising kernel calls when no thread-safe layer exists."""
    return contextlib.nullcontext() if THREADSAFE else _LOCK


def njit(fn=None, **options):
    """``numba.njit`` with on-disk caching; usable bare or with options."""
    options.setdefault("cache", True)
    options.setdefault("nogil", True)
    if fn is None:
        return functools.partial(njit, **options)
    return nb.njit(**options)(fn)


@nb.njit(cache=True, inline="always")
def parallel_chunks(n, n_chunks, t):
    """Bounds [lo, hi) of chunk ``t`` when ``n`` items are cut into ``n_chunks``."""
    size = (n + n_chunks - 1) // n_chunks
    lo = min(n, t * size)
    hi = min(n, lo + size)
    return lo, hi


def n_threads() -> int:
    """Number of worker threads numba uses for parallel kernels."""
    return nb.get_num_threads()
