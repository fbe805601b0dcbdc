"""Compiled kernels that lay a run out once: grouped by user, sorted by score.

The ranked layout is CSR: ``offsets[u]:offsets[u + 1]`` are user ``u``'s rows,
sorted by score descending, ties broken by item id string descending (trec_eval's
rule). Every metric at every cutoff then reads these arrays without sorting again.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._jit import njit, parallel_chunks
from .strings import compare_bytes


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


@njit
def offsets_from_sorted(user_codes, n_users):
    """CSR offsets for rows already grouped by non-decreasing user code."""
    counts = np.zeros(n_users + 1, dtype=np.int64)
    for i in range(user_codes.shape[0]):
        counts[user_codes[i] + 1] += 1
    for u in range(n_users):
        counts[u + 1] += counts[u]
    return counts


@njit(parallel=True)
def sort_within_users(offsets, perm, score, n_threads):
    """Reorder ``perm`` in place so each user's rows run by score descending.

    A list already in that order is left as it is (run files usually are).
    Returns (users whose rows moved, users with tied scores); ties are ordered
    afterwards by :func:`order_ties`, only when there are any.
    """
    n_users = offsets.shape[0] - 1
    moved = np.zeros(n_threads, dtype=np.int64)
    tied = np.zeros(n_threads, dtype=np.int64)
    for t in nb.prange(n_threads):
        lo, hi = parallel_chunks(n_users, n_threads, t)
        longest = 1
        for u in range(lo, hi):
            longest = max(longest, offsets[u + 1] - offsets[u])
        neg = np.empty(longest, dtype=np.float64)
        rows = np.empty(longest, dtype=np.int64)
        for u in range(lo, hi):
            a = offsets[u]
            m = offsets[u + 1] - a
            if m < 2:
                continue
            in_order = True
            for j in range(1, m):
                if score[perm[a + j]] > score[perm[a + j - 1]]:
                    in_order = False
                    break
            if not in_order:
                moved[t] += 1
                for j in range(m):
                    rows[j] = perm[a + j]
                    neg[j] = -score[rows[j]]
                order = np.argsort(neg[:m])
                for j in range(m):
                    perm[a + j] = rows[order[j]]
            for j in range(1, m):
                if score[perm[a + j]] == score[perm[a + j - 1]]:
                    tied[t] += 1
                    break
    return moved.sum(), tied.sum()


@njit(inline="always")
def _item_below(x, y, by_bytes, item, item_key, off, data):
    """Whether row x's item id sorts below row y's: by byte string, or by ``item_key[item[row]]``."""
    if by_bytes:
        return compare_bytes(off, data, x, off, data, y) < 0
    return item_key[item[x]] < item_key[item[y]]


@njit(parallel=True)
def order_ties(offsets, perm, score, by_bytes, item, item_key, off, data):
    """Within each run of equal scores, order rows by item id descending (trec_eval's rule).

    Ids compare as byte strings (``off``/``data`` Arrow buffers, ``by_bytes``) or
    through an order-preserving key per item code. Ids are unique within a user,
    so the result does not depend on the order the rows arrived in.
    """
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        m = offsets[u + 1] - a
        j = 0
        while j < m:
            e = j + 1
            s0 = score[perm[a + j]]
            while e < m and score[perm[a + e]] == s0:
                e += 1
            for x in range(j + 1, e):
                r = perm[a + x]
                y = x - 1
                while y >= j and _item_below(perm[a + y], r, by_bytes, item, item_key, off, data):
                    perm[a + y + 1] = perm[a + y]
                    y -= 1
                perm[a + y + 1] = r
            j = e


@njit(parallel=True)
def join_relevance(run_offsets, run_items, q_offsets, q_items, q_rel, n_items, n_threads):
    """Look up each run row's ground-truth relevance, user by user, in O(rows).

    Returns ``(rel, judged, dup_row)``: relevance per run row (0.0 when
    unjudged), whether it was judged, and the position of the first duplicate
    (user, item) row of the run, or -1. Each thread stamps a private
    item-indexed table with the user it is working on, so no hashing is needed.
    """
    n = run_items.shape[0]
    rel = np.zeros(n, dtype=np.float64)
    judged = np.zeros(n, dtype=np.bool_)
    n_users = run_offsets.shape[0] - 1
    dup = np.full(n_threads, -1, dtype=np.int64)
    for t in nb.prange(n_threads):
        lo, hi = parallel_chunks(n_users, n_threads, t)
        stamp_q = np.full(n_items, -1, dtype=np.int64)
        where_q = np.zeros(n_items, dtype=np.int64)
        stamp_r = np.full(n_items, -1, dtype=np.int64)
        for u in range(lo, hi):
            for j in range(q_offsets[u], q_offsets[u + 1]):
                it = q_items[j]
                stamp_q[it] = u
                where_q[it] = j
            for i in range(run_offsets[u], run_offsets[u + 1]):
                it = run_items[i]
                if stamp_r[it] == u:
                    if dup[t] < 0:
                        dup[t] = i
                stamp_r[it] = u
                if stamp_q[it] == u:
                    rel[i] = q_rel[where_q[it]]
                    judged[i] = True
    first = -1
    for t in range(n_threads):
        if dup[t] >= 0 and (first < 0 or dup[t] < first):
            first = dup[t]
    return rel, judged, first


@njit(parallel=True)
def qrels_conflicts(q_offsets, q_items, q_rel, n_items, n_threads):
    """First ground-truth row that repeats a (user, item) with another relevance, or -1;
    and a keep-mask that drops exact repeats (same relevance)."""
    n = q_items.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    n_users = q_offsets.shape[0] - 1
    bad = np.full(n_threads, -1, dtype=np.int64)
    for t in nb.prange(n_threads):
        lo, hi = parallel_chunks(n_users, n_threads, t)
        stamp = np.full(n_items, -1, dtype=np.int64)
        where = np.zeros(n_items, dtype=np.int64)
        for u in range(lo, hi):
            for j in range(q_offsets[u], q_offsets[u + 1]):
                it = q_items[j]
                if stamp[it] == u:
                    keep[j] = False
                    if q_rel[where[it]] != q_rel[j] and bad[t] < 0:
                        bad[t] = j
                else:
                    stamp[it] = u
                    where[it] = j
    first = -1
    for t in range(n_threads):
        if bad[t] >= 0 and (first < 0 or bad[t] < first):
            first = bad[t]
    return keep, first


@njit(parallel=True)
def sort_desc_within_users(offsets, values):
    """Copy of ``values`` with each user's segment sorted descending (ideal gains)."""
    out = values.copy()
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1]
        if b - a > 1:
            seg = np.sort(out[a:b])
            m = b - a
            for j in range(m):
                out[a + j] = seg[m - 1 - j]
    return out


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
def is_identity(perm):
    """Whether ``perm`` is 0, 1, 2, ... (rows already grouped and sorted: no gather needed)."""
    for i in range(perm.shape[0]):
        if perm[i] != i:
            return False
    return True


@njit
def first_non_finite(values):
    """Index of the first NaN or infinite value, or -1 (one pass, no temporary array)."""
    for i in range(values.shape[0]):
        if not np.isfinite(values[i]):
            return i
    return -1
