"""Kernels over Arrow string buffers: join and order string item ids without a global hash table.

A string column is its Arrow ``offsets`` (int64) and ``data`` (uint8) buffers:
string ``i`` is ``data[offsets[i]:offsets[i + 1]]``. Each string gets a 64-bit
hash once (in parallel); joining the run to the ground truth, finding duplicate
(user, item) rows and ordering tied scores by item id then happen inside each
user's short list, comparing hashes and confirming every match byte by byte, so
ids stay exact (ties are then ordered by ``layout.order_ties``). No table over the whole catalogue is built (with a million
distinct items such tables are what makes id encoding slow).
"""

from __future__ import annotations

import numba as nb
import numpy as np
import pyarrow as pa

from ._jit import njit, parallel_chunks


def arrow_buffers(array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets as int64, data as uint8) of a string / large_string Arrow array without nulls."""
    arr = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    if pa.types.is_string(arr.type):
        offsets_type = np.int32
    elif pa.types.is_large_string(arr.type):
        offsets_type = np.int64
    else:
        raise TypeError(f"not a string array: {arr.type}")
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=offsets_type)[arr.offset:arr.offset + len(arr) + 1]
    offsets = offsets.astype(np.int64, copy=False)  # large_string: no copy
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


@njit(parallel=True)
def hash_strings(offsets, data):
    """64-bit FNV-1a of each string's bytes, mixed by MurmurHash3's finaliser."""
    n = offsets.shape[0] - 1
    out = np.empty(n, dtype=np.uint64)
    for i in nb.prange(n):
        h = np.uint64(14695981039346656037)
        for j in range(offsets[i], offsets[i + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xFF51AFD7ED558CCD)
        h ^= h >> np.uint64(33)
        h *= np.uint64(0xC4CEB9FE1A85EC53)
        h ^= h >> np.uint64(33)
        out[i] = h
    return out


@njit(inline="always")
def compare_bytes(off_a, data_a, i, off_b, data_b, j):
    """-1, 0 or 1 as string i of A is below, equal to or above string j of B (byte order, strcmp)."""
    a0, a1 = off_a[i], off_a[i + 1]
    b0, b1 = off_b[j], off_b[j + 1]
    la, lb = a1 - a0, b1 - b0
    m = la if la < lb else lb
    for x in range(m):
        ca, cb = data_a[a0 + x], data_b[b0 + x]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1


@njit(parallel=True)
def sort_rows_by_hash(offsets, rows, hashes):
    """Sort each user's segment of ``rows`` (row ids) by ``hashes[row]``, in place."""
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1]
        if b - a < 2:
            continue
        seg = rows[a:b].copy()
        keys = hashes[seg]
        order = np.argsort(keys)
        for j in range(b - a):
            rows[a + j] = seg[order[j]]


@njit(parallel=True)
def truth_conflicts(q_offsets, q_rows, q_hash, off, data, rel):
    """Repeated (user, item) judgments in the ground truth (rows sorted by hash per user).

    Returns (keep mask over positions, first position repeating an item with another
    relevance or -1). Exact repeats (same relevance) are dropped.
    """
    n = q_rows.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    n_users = q_offsets.shape[0] - 1
    bad = np.full(n_users, -1, dtype=np.int64)
    for u in nb.prange(n_users):
        a = q_offsets[u]
        b = q_offsets[u + 1]
        for j in range(a + 1, b):
            y = q_rows[j]
            x_pos = j - 1
            while x_pos >= a and q_hash[q_rows[x_pos]] == q_hash[y]:
                x = q_rows[x_pos]
                if keep[x_pos] and compare_bytes(off, data, x, off, data, y) == 0:
                    keep[j] = False
                    if rel[x] != rel[y] and bad[u] < 0:
                        bad[u] = j
                    break
                x_pos -= 1
    first = -1
    for u in range(n_users):
        if bad[u] >= 0 and (first < 0 or bad[u] < first):
            first = bad[u]
    return keep, first


@njit(parallel=True)
def join_relevance_hashed(offsets, perm, r_hash, r_off, r_data, q_offsets, q_rows, q_hash, q_off, q_data,
                          q_rel, n_threads):
    """Relevance of each ranked position (run row ``perm[i]``) from the user's ground truth.

    ``q_rows`` is sorted by hash within each user: a binary search finds the
    equal-hash range and the bytes confirm the match. Also returns the first
    ranked position whose (user, item) repeats an earlier row of the run, or -1.
    """
    n = perm.shape[0]
    rel = np.zeros(n, dtype=np.float64)
    judged = np.zeros(n, dtype=np.bool_)
    n_users = offsets.shape[0] - 1
    dup = np.full(n_threads, -1, dtype=np.int64)
    for t in nb.prange(n_threads):
        lo, hi = parallel_chunks(n_users, n_threads, t)
        longest = 1
        for u in range(lo, hi):
            longest = max(longest, offsets[u + 1] - offsets[u])
        size = 1
        while size < 2 * longest:
            size *= 2
        mask = np.uint64(size - 1)
        table = np.full(size, -1, dtype=np.int64)  # open addressing: ranked position per slot
        used = np.empty(longest, dtype=np.int64)
        for u in range(lo, hi):
            a = offsets[u]
            m = offsets[u + 1] - a
            qa = q_offsets[u]
            qb = q_offsets[u + 1]
            n_used = 0
            for i in range(a, a + m):
                r = perm[i]
                h = r_hash[r]
                # duplicate (user, item) rows: a per-user hash set, matches confirmed by bytes
                slot = h & mask
                while table[slot] >= 0:
                    other = table[slot]
                    if r_hash[perm[other]] == h and compare_bytes(r_off, r_data, perm[other], r_off, r_data, r) == 0:
                        if dup[t] < 0 or i < dup[t]:
                            dup[t] = i
                        break
                    slot = (slot + np.uint64(1)) & mask
                if table[slot] < 0:
                    table[slot] = i
                    used[n_used] = slot
                    n_used += 1
                # ground-truth lookup: binary search on the user's hash-sorted rows
                lo_q = qa
                hi_q = qb
                while lo_q < hi_q:
                    mid = (lo_q + hi_q) >> 1
                    if q_hash[q_rows[mid]] < h:
                        lo_q = mid + 1
                    else:
                        hi_q = mid
                while lo_q < qb and q_hash[q_rows[lo_q]] == h:
                    if compare_bytes(r_off, r_data, r, q_off, q_data, q_rows[lo_q]) == 0:
                        rel[i] = q_rel[lo_q]
                        judged[i] = True
                        break
                    lo_q += 1
            for x in range(n_used):
                table[used[x]] = -1
    first = -1
    for t in range(n_threads):
        if dup[t] >= 0 and (first < 0 or dup[t] < first):
            first = dup[t]
    return rel, judged, first
