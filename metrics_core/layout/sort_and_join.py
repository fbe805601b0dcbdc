"""Sort each user's list and join its ground truth: the layout in one parallel pass per user.

For each user (in code order) :func:`rank_and_join` runs three phases:

1. :func:`_join_truth`: read the user's ground-truth rows, drop exact repeats of
   an item, report an item judged twice with different relevance, and
   :func:`_write_ideal` writes the user's judged relevances sorted descending
   (the ideal ranking);
2. :func:`_sort_run`: read the user's run rows and sort them by score
   descending, ties by item id descending compared as strings (trec_eval's
   rule), skipping the sort when the list already arrives in that order;
3. :func:`_join_run`: write a tie-group key and the input row number of each
   ranked row, and the relevance code of each ranked row, found in a small
   per-user hash table of the ground truth; the same table reports an item the
   user's list holds twice.

Rows of a user are addressed as ``start[u] + j`` (rows grouped in the input:
no permutation exists) or ``rows[start[u] + j]`` (rows grouped by a counting
sort), so grouped input, the usual case, is never copied to be grouped. The
phases are inlined into the one compiled loop (``inline="always"``), so naming
them costs nothing at run time.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels._jit import nb, njit
from ..kernels.item_ids import item_above, item_hash, same_item, table_bits
from ..kernels.sorting import sort_desc, sorted_desc


class RunSide(NamedTuple):
    """The run's input columns as the kernel reads them.

    ``rows``/``grouped``/``start``: where each user's rows are; ``score`` per
    input row; ``ids`` the item ids of the input rows: an int64 array (integer
    ids) or the Arrow ``(offsets, data)`` buffers of their strings (see
    :mod:`metrics_core.kernels.item_ids`; the kernel is compiled once per form).
    """

    rows: np.ndarray
    grouped: bool
    start: np.ndarray
    score: np.ndarray
    ids: np.ndarray | tuple[np.ndarray, np.ndarray]


class TruthSide(NamedTuple):
    """The ground truth's input columns: like :class:`RunSide`, with the raw relevance of each
    row and its relevance code (1, 2, ...; 0 is kept for "unjudged")."""

    rows: np.ndarray
    grouped: bool
    start: np.ndarray
    relevance: np.ndarray
    code: np.ndarray
    ids: np.ndarray | tuple[np.ndarray, np.ndarray]


class LayoutArrays(NamedTuple):
    """The outputs, allocated by the caller (NumPy asks the kernel for huge pages; numba's
    allocator does not, and first-touch page faults then dominate).

    Per ranked position: ``tie`` (0 or 1, alternating from one run of equal
    scores to the next within a user, so equal neighbours mean tied scores),
    the input run row (``row``) or, with ``local_rows``, its index within the
    user's rows (``local``: one byte per row when no list is longer than
    256), ``code`` (the relevance code of the row's judgment, 0 when
    unjudged). Per truth position: ``q_keep`` (False for a dropped exact
    repeat, which keeps its slot) and ``ideal`` (the user's kept relevances
    first, sorted descending); ``kept[u]`` counts user u's kept judgments.
    """

    tie: np.ndarray
    row: np.ndarray
    local: np.ndarray
    local_rows: bool
    code: np.ndarray
    ideal: np.ndarray
    q_keep: np.ndarray
    kept: np.ndarray


def rank_and_join(chunks: np.ndarray, offsets: np.ndarray, q_offsets: np.ndarray, run: RunSide, truth: TruthSide,
                  out: LayoutArrays) -> tuple[int, int]:
    """The whole layout in one pass per user; users ``chunks[t]:chunks[t+1]`` go to thread t.

    ``offsets`` / ``q_offsets`` are the output CSR offsets (user u has
    ``offsets[u+1] - offsets[u]`` run rows starting at input position
    ``run.start[u]``, likewise for the ground truth). Fills ``out``.

    Returns ``(dup, conflict)``: the first ranked position repeating an item of
    the same user (or -1), and the first truth position judging an item again
    with another relevance (or -1).
    """
    return _rank_and_join(chunks, offsets, q_offsets, *run, *truth, *out)


@njit
def _order_ties(k, p, m, rows, ids):
    """Within each run of equal keys, order entries by item id descending (insertion sort)."""
    j = 0
    while j < m:
        e = j + 1
        while e < m and k[e] == k[j]:
            e += 1
        for x in range(j + 1, e):
            v = p[x]
            y = x - 1
            while y >= j and item_above(ids, rows[v], rows[p[y]]):
                p[y + 1] = p[y]
                y -= 1
            p[y + 1] = v
        j = e


@njit(inline="always")
def _join_truth(t, u, qa, ql, q_rows_in, q_grouped, q_start, q_rel_raw, q_ids,
                table, shift, mask, slots, q_hash, q_seen, q_src, q_val, gains, q_keep, bad):
    """Phase 1: enter user u's judged items in the hash table (entry ``j``: the user's j-th truth
    row), dropping exact repeats and recording the first conflicting one in ``bad[t]``.

    Returns ``(slots used, judgments kept)``; the kept relevances are ``gains[:kept]``.
    """
    n_slots = 0
    n_kept = 0
    for j in range(ql):
        src = q_start[u] + j if q_grouped else q_rows_in[q_start[u] + j]
        q_src[j] = src
        rv = q_rel_raw[src]
        q_val[j] = rv
        h = item_hash(q_ids, src)
        q_hash[j] = h
        q_seen[j] = False
        slot = h >> shift
        repeat = False
        while table[slot] >= 0:
            p = table[slot]
            if q_hash[p] == h and same_item(q_ids, q_src[p], q_ids, src):
                repeat = True
                if q_val[p] != rv and bad[t] < 0:
                    bad[t] = qa + j
                break
            slot = (slot + np.uint64(1)) & mask
        q_keep[qa + j] = not repeat
        if not repeat:
            table[slot] = j
            slots[n_slots] = slot
            n_slots += 1
            gains[n_kept] = rv
            n_kept += 1
    return n_slots, n_kept


@njit(inline="always")
def _write_ideal(qa, n_kept, gains, out_ideal):
    """Phase 1 (end): the kept relevances sorted descending into ``out_ideal[qa:qa + n_kept]``."""
    if n_kept > 32:
        g = sorted_desc(gains, np.int64(n_kept))  # int64, not the literal 0 numba first infers: one compile
        for j in range(n_kept):
            out_ideal[qa + j] = g[j]
    elif n_kept > 0:  # short lists: insertion sort in place, no allocation
        for x in range(1, n_kept):
            v = gains[x]
            y = x - 1
            while y >= 0 and gains[y] < v:
                gains[y + 1] = gains[y]
                y -= 1
            gains[y + 1] = v
        for j in range(n_kept):
            out_ideal[qa + j] = gains[j]


@njit(inline="always")
def _sort_run(u, m, r_rows, r_grouped, r_start, score, r_ids,
              rows, keys, idx, keys2, tmp):
    """Phase 2: user u's ``m`` run rows in ranked order: ``rows[idx[i]]`` is the input row at
    rank i and ``keys[i]`` its score (score descending, ties by item id descending)."""
    in_order = True
    tied = False
    for j in range(m):
        src = r_start[u] + j if r_grouped else r_rows[r_start[u] + j]
        rows[j] = src
        keys[j] = score[src]
        idx[j] = j
        if j > 0:
            if keys[j] > keys[j - 1]:
                in_order = False
            elif keys[j] == keys[j - 1]:
                tied = True
    if not in_order:
        sort_desc(keys, idx, keys2, tmp, m)  # stable: equal scores keep input order
        tied = False
        for j in range(1, m):
            if keys[j] == keys[j - 1]:
                tied = True
                break
    if tied:
        _order_ties(keys, idx, m, rows, r_ids)


@njit(inline="always")
def _join_run(t, ra, m, r_ids, q_ids, q_code_in,
              rows, keys, idx, r_hash, table, shift, mask, slots, n_slots, q_hash, q_seen, q_src,
              out_tie, out_row, out_local, local_rows, out_code, dup):
    """Phase 3: write each ranked row's tie key, input row and relevance code.

    Each run row is looked up once in the table of phase 1; an unjudged item
    is entered as ``-2 - i`` (ranked position i), so an item met twice in the
    run is found either way and recorded in ``dup[t]``. Returns the slots used.
    """
    tie = 0
    for i in range(m):
        src = rows[idx[i]]
        if i > 0 and keys[i] != keys[i - 1]:
            tie = 1 - tie
        out_tie[ra + i] = tie
        if local_rows:
            out_local[ra + i] = idx[i]
        else:
            out_row[ra + i] = src
        h = item_hash(r_ids, src)
        r_hash[i] = h
        slot = h >> shift
        code = 0
        while table[slot] != -1:
            p = table[slot]
            if p >= 0:
                if q_hash[p] == h and same_item(r_ids, src, q_ids, q_src[p]):
                    if q_seen[p]:
                        if dup[t] < 0:
                            dup[t] = ra + i
                    q_seen[p] = True
                    code = q_code_in[q_src[p]]
                    break
            else:
                e = -2 - p
                if r_hash[e] == h and same_item(r_ids, src, r_ids, rows[idx[e]]):
                    if dup[t] < 0:
                        dup[t] = ra + i
                    break
            slot = (slot + np.uint64(1)) & mask
        if table[slot] == -1:
            table[slot] = -2 - i
            slots[n_slots] = slot
            n_slots += 1
        out_code[ra + i] = code
    return n_slots


@njit(parallel=True, work="score",
      writes=("out_tie", "out_row", "out_local", "out_code", "out_ideal", "q_keep", "kept"))
def _rank_and_join(chunks, offsets, q_offsets,
                   r_rows, r_grouped, r_start, score, r_ids,
                   q_rows_in, q_grouped, q_start, q_rel_raw, q_code_in, q_ids,
                   out_tie, out_row, out_local, local_rows, out_code, out_ideal, q_keep, kept):
    """The compiled loop of :func:`rank_and_join`: the fields of ``RunSide``, ``TruthSide``
    and ``LayoutArrays`` in their declared order."""
    n_chunks = chunks.shape[0] - 1
    dup = np.full(n_chunks, -1, dtype=np.int64)
    bad = np.full(n_chunks, -1, dtype=np.int64)
    for t in nb.prange(n_chunks):
        lo = chunks[t]
        hi = chunks[t + 1]
        # scratch space of this thread, sized for its longest lists
        longest = 1
        longest_q = 1
        for u in range(lo, hi):
            longest = max(longest, offsets[u + 1] - offsets[u])
            longest_q = max(longest_q, q_offsets[u + 1] - q_offsets[u])
        bits = table_bits(longest + longest_q)
        shift = np.uint64(64 - bits)
        mask = np.uint64((1 << bits) - 1)
        table = np.full(1 << bits, -1, dtype=np.int64)
        slots = np.empty(longest + longest_q, dtype=np.int64)
        r_hash = np.empty(longest, dtype=np.uint64)
        q_hash = np.empty(longest_q, dtype=np.uint64)
        q_seen = np.zeros(longest_q, dtype=np.bool_)
        q_src = np.empty(longest_q, dtype=np.int64)
        q_val = np.empty(longest_q, dtype=np.float64)
        gains = np.empty(longest_q, dtype=np.float64)
        keys = np.empty(longest, dtype=np.float64)
        keys2 = np.empty(longest, dtype=np.float64)
        rows = np.empty(longest, dtype=np.int64)
        idx = np.empty(longest, dtype=np.int64)
        tmp = np.empty(longest, dtype=np.int64)
        for u in range(lo, hi):
            qa = q_offsets[u]
            n_slots, n_kept = _join_truth(t, u, qa, q_offsets[u + 1] - qa, q_rows_in, q_grouped, q_start, q_rel_raw,
                                          q_ids, table, shift, mask, slots, q_hash, q_seen, q_src, q_val, gains,
                                          q_keep, bad)
            kept[u] = n_kept
            _write_ideal(qa, n_kept, gains, out_ideal)
            ra = offsets[u]
            m = offsets[u + 1] - ra
            _sort_run(u, m, r_rows, r_grouped, r_start, score, r_ids, rows, keys, idx, keys2, tmp)
            n_slots = _join_run(t, ra, m, r_ids, q_ids, q_code_in,
                                rows, keys, idx, r_hash, table, shift, mask, slots, n_slots, q_hash, q_seen, q_src,
                                out_tie, out_row, out_local, local_rows, out_code, dup)
            for x in range(n_slots):  # empty the table for the next user
                table[slots[x]] = -1
    first_dup = -1
    first_bad = -1
    for t in range(n_chunks):
        if dup[t] >= 0 and (first_dup < 0 or dup[t] < first_dup):
            first_dup = dup[t]
        if bad[t] >= 0 and (first_bad < 0 or bad[t] < first_bad):
            first_bad = bad[t]
    return first_dup, first_bad
