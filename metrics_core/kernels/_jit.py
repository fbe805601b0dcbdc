"""Shared numba settings: compiled kernels are cached on disk (first call of a
process pays no compile cost once the cache is warm)."""

from __future__ import annotations

import functools

import numba as nb


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
