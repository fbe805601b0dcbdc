"""Small layout kernels around the one-pass layout of :mod:`.assemble`.

The ranked layout is CSR: ``offsets[u]:offsets[u + 1]`` are user ``u``'s rows,
sorted by score descending, ties broken by item id string descending (trec_eval's
rule). Here: grouping rows by user code when the input is not grouped, the
input-order permutation of tie groups (``ties="input"``) and the finite check.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._jit import njit


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


@njit(parallel=True)
def input_order_within_ties(offsets, score, row):
    """Permutation of ranked positions that orders each tie group by input row."""
    n = score.shape[0]
    pos = np.arange(n)
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1]
        j = a
        while j < b:
            e = j + 1
            while e < b and score[e] == score[j]:
                e += 1
            if e - j > 1:
                seg_rows = row[j:e].copy()
                order = np.argsort(seg_rows)
                for x in range(e - j):
                    pos[j + x] = j + order[x]
            j = e
    return pos


@njit
def first_non_finite(values):
    """Index of the first NaN or infinite value, or -1 (one pass, no temporary array)."""
    for i in range(values.shape[0]):
        if not np.isfinite(values[i]):
            return i
    return -1
