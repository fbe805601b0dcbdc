"""Grouping rows by user: where runs of equal ids start, and a counting sort by user code."""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit, parallel_chunks


@njit(inline="always")
def _differs(values, i):
    return values[i] != values[i - 1]


@njit(inline="always")
def _differs_bytes(off, data, i):
    a0 = off[i]
    b0 = off[i - 1]
    length = off[i + 1] - a0
    if length != a0 - b0:
        return True
    for x in range(length):
        if data[a0 + x] != data[b0 + x]:
            return True
    return False


@njit(parallel=True, work="out", writes=("out",))
def changes_bytes(off, data, out):
    """``out[i]`` = 1 where string ``i`` differs from the one before (position 0 always)."""
    n = off.shape[0] - 1
    if n > 0:
        out[0] = 1
    for i in nb.prange(1, n):
        out[i] = 1 if _differs_bytes(off, data, i) else 0


@njit(parallel=True, work="n")
def heads(values, off, data, by_bytes, n, n_chunks):
    """Positions where a value differs from the one before (position 0 always), in two
    parallel passes (count per chunk, then fill) without a per-row mask.

    Values are ``values[i]`` or, with ``by_bytes``, string ``i`` of Arrow buffers.
    """
    counts = np.zeros(n_chunks + 1, dtype=np.int64)
    for t in nb.prange(n_chunks):
        lo, hi = parallel_chunks(n, n_chunks, t)
        c = 0
        for i in range(max(lo, 1), hi):
            if _differs_bytes(off, data, i) if by_bytes else _differs(values, i):
                c += 1
        counts[t + 1] = c
    total = 1 if n > 0 else 0
    for t in range(n_chunks):
        counts[t + 1] += counts[t]
    out = np.empty(counts[n_chunks] + total, dtype=np.int64)
    if n > 0:
        out[0] = 0
    for t in nb.prange(n_chunks):
        lo, hi = parallel_chunks(n, n_chunks, t)
        w = counts[t] + total
        for i in range(max(lo, 1), hi):
            if _differs_bytes(off, data, i) if by_bytes else _differs(values, i):
                out[w] = i
                w += 1
    return out


@njit
def group_by_user(user_codes, n_users):
    """Counting sort of rows by user code: returns (offsets, row permutation). O(n)."""
    n = user_codes.shape[0]
    counts = np.zeros(n_users + 1, dtype=np.int64)
    for i in range(n):
        counts[user_codes[i] + 1] += 1
    for u in range(n_users):
        counts[u + 1] += counts[u]
    offsets = counts.copy()
    fill = counts[:-1].copy()
    perm = np.empty(n, dtype=np.int64)
    for i in range(n):
        u = user_codes[i]
        perm[fill[u]] = i
        fill[u] += 1
    return offsets, perm
