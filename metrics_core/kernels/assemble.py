"""One parallel pass per user that lays a run out for every metric.

For each user (in code order) the kernel

1. reads the user's ground-truth rows, drops exact repeats of an item, reports
   an item judged twice with different relevance, and writes the user's judged
   relevances sorted descending (the ideal ranking);
2. reads the user's run rows and sorts them by score descending, ties by item
   id descending compared as strings (trec_eval's rule), skipping the sort when
   the list already arrives in that order;
3. writes a tie-group key and the input row number of each ranked row, and the relevance of each
   ranked row, found in a small per-user hash table of the ground truth; a
   second table reports an item the user's list holds twice.

Nothing is built over the whole catalogue: item ids are compared inside one
user's short lists, as 64-bit integers or as Arrow byte strings (a 64-bit hash
first, the bytes to confirm). Integer ids order ties as their decimal strings
("10" < "9", "-5" < "3"), the same order trec_eval's ``strcmp`` gives.

Rows of a user are addressed as ``start[u] + j`` (rows grouped in the input:
no permutation exists) or ``rows[start[u] + j]`` (rows grouped by a counting
sort), so grouped input, the usual case, is never copied to be grouped.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._jit import njit, parallel_chunks
from .strings import compare_bytes



@njit(inline="always")
def _mix(h):
    """MurmurHash3's 64-bit finaliser."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(inline="always")
def _item_hash(row, by_bytes, ints, off, data):
    """64-bit hash of a row's item id whose top bits pick a table slot: FNV-1a over its
    bytes then mixed, or Fibonacci hashing of its integer value (one multiply)."""
    if by_bytes:
        h = np.uint64(14695981039346656037)
        for j in range(off[row], off[row + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
        return _mix(h)
    return np.uint64(ints[row]) * np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always")
def _same_item(a, a_ints, a_off, a_data, b, b_ints, b_off, b_data, by_bytes):
    if by_bytes:
        return compare_bytes(a_off, a_data, a, b_off, b_data, b) == 0
    return a_ints[a] == b_ints[b]


@njit(inline="always")
def _magnitude_digits(x):
    """(|x| as uint64, number of decimal digits, 10**(digits - 1)) of an int64."""
    ux = np.uint64(0) - np.uint64(x) if x < 0 else np.uint64(x)
    digits = 1
    top = np.uint64(1)
    while digits < 20 and ux // top >= np.uint64(10):
        top *= np.uint64(10)
        digits += 1
    return ux, digits, top


@njit(inline="always")
def _decimal_compare(x, y):
    """-1, 0 or 1 as ``str(x)`` sorts below, equal to or above ``str(y)`` byte-wise (int64 ids)."""
    if x == y:
        return 0
    if (x < 0) != (y < 0):
        return -1 if x < 0 else 1  # "-" sorts below every digit
    ux, dx, px = _magnitude_digits(x)
    uy, dy, py = _magnitude_digits(y)
    for _ in range(min(dx, dy)):
        a = (ux // px) % np.uint64(10)
        b = (uy // py) % np.uint64(10)
        if a != b:
            return -1 if a < b else 1
        px //= np.uint64(10)
        py //= np.uint64(10)
    return -1 if dx < dy else 1


@njit(inline="always")
def _item_above(a, b, by_bytes, ints, off, data):
    """Whether row a's item id sorts above row b's as strings (ties are ranked by item id descending)."""
    if by_bytes:
        return compare_bytes(off, data, a, off, data, b) > 0
    return _decimal_compare(ints[a], ints[b]) > 0


@njit(inline="always")
def _insertion_sort_desc(k, p, lo, hi):
    for x in range(lo + 1, hi):
        kv = k[x]
        pv = p[x]
        y = x - 1
        while y >= lo and k[y] < kv:
            k[y + 1] = k[y]
            p[y + 1] = p[y]
            y -= 1
        k[y + 1] = kv
        p[y + 1] = pv


@njit
def _sort_desc(k, p, k2, p2, m):
    """Sort keys ``k[:m]`` descending carrying ``p`` along (insertion sort in blocks of 32,
    then merges between (k, p) and the scratch (k2, p2)); the result is in (k, p)."""
    block = 32
    for lo in range(0, m, block):
        _insertion_sort_desc(k, p, lo, min(m, lo + block))
    sk, sp, dk, dp = k, p, k2, p2
    swapped = False
    width = block
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(m, lo + width)
            hi = min(m, lo + 2 * width)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if sk[j] > sk[i]:
                    dk[o] = sk[j]
                    dp[o] = sp[j]
                    j += 1
                else:
                    dk[o] = sk[i]
                    dp[o] = sp[i]
                    i += 1
                o += 1
            while i < mid:
                dk[o] = sk[i]
                dp[o] = sp[i]
                i += 1
                o += 1
            while j < hi:
                dk[o] = sk[j]
                dp[o] = sp[j]
                j += 1
                o += 1
        sk, sp, dk, dp = dk, dp, sk, sp
        swapped = not swapped
        width *= 2
    if swapped:
        for j in range(m):
            k[j] = k2[j]
            p[j] = p2[j]


@njit
def _sort_packed(keys, key_bits, idx, packed, keys2, m):
    """Sort ``keys[:m]`` descending with their positions in ``idx`` (m <= 4096).

    Each key becomes an order-preserving unsigned integer whose low bits are
    replaced by the entry's position, so one in-place integer sort orders key
    and payload together; a final insertion pass restores exact order among
    keys that differed only in the replaced bits. ``key_bits`` is ``keys``
    viewed as uint64.
    """
    bits = 1
    while (1 << bits) < m:
        bits += 1
    low = np.uint64((1 << bits) - 1)
    sign = np.uint64(0x8000000000000000)
    for j in range(m):
        b = key_bits[j]
        ascending = ~b if b & sign else b | sign
        packed[j] = (~ascending & ~low) | np.uint64(j)
    part = packed[:m]
    part.sort()
    for j in range(m):
        e = np.int64(packed[j] & low)
        idx[j] = e
        keys2[j] = keys[e]
    for j in range(m):
        keys[j] = keys2[j]
    _insertion_sort_desc(keys, idx, 0, m)


@njit
def _order_ties(k, p, m, rows, by_bytes, ints, off, data):
    """Within each run of equal keys, order entries by item id descending (insertion sort)."""
    j = 0
    while j < m:
        e = j + 1
        while e < m and k[e] == k[j]:
            e += 1
        for x in range(j + 1, e):
            v = p[x]
            y = x - 1
            while y >= j and _item_above(rows[v], rows[p[y]], by_bytes, ints, off, data):
                p[y + 1] = p[y]
                y -= 1
            p[y + 1] = v
        j = e


@njit
def _table_bits(longest):
    """log2 of an open-addressing table size at least twice ``longest``."""
    bits = 3
    while (1 << bits) < 2 * longest:
        bits += 1
    return bits


@njit(parallel=True)
def rank_and_join(chunks, offsets, q_offsets,
                  r_rows, r_grouped, r_start, score, r_ints, r_off, r_data,
                  q_rows_in, q_grouped, q_start, q_rel_raw, q_code_in, q_ints, q_off, q_data, by_bytes,
                  out_tie, out_row, out_local, local_rows, out_code, out_ideal,
                  q_keep, kept):
    """The whole layout in one pass per user; users ``chunks[t]:chunks[t+1]`` go to thread t.

    ``offsets`` / ``q_offsets`` are the output CSR offsets (user u has
    ``offsets[u+1] - offsets[u]`` run rows starting at input position
    ``r_start[u]``, likewise for the ground truth). ``q_code_in`` codes each
    ground-truth row's relevance (1, 2, ...; 0 is kept for "unjudged").

    Fills, per ranked position: ``out_tie``, a tie-group key (0 or 1,
    alternating from one run of equal scores to the next within a user, so
    equal neighbours mean tied scores); the input run row (``out_row``, or with
    ``local_rows`` its index within the user's rows, ``out_local``: one byte
    per row when no list is longer than 256); ``out_code``, the relevance code
    of the row's judgment (0 when unjudged). Per truth position:
    ``q_keep`` (False for a
    dropped exact repeat, which keeps its slot); ``kept[u]`` counts the user's
    kept judgments, whose relevances come first, sorted descending, in the
    user's slice of ``out_ideal``. The outputs are allocated by the caller
    (NumPy asks the kernel for huge pages; numba's allocator does not, and
    first-touch page faults then dominate).

    One open-addressing table per user holds the judged items (entry ``j``,
    the user's j-th truth row) and the run's unjudged items (entry ``-2 - i``,
    ranked position i): each run row is looked up once, and an item met twice
    in the run is a duplicate.

    Returns ``(dup, conflict)``: the first ranked position repeating an item of
    the same user (or -1), and the first truth position judging an item again
    with another relevance (or -1).
    """
    n_chunks = chunks.shape[0] - 1
    dup = np.full(n_chunks, -1, dtype=np.int64)
    bad = np.full(n_chunks, -1, dtype=np.int64)
    for t in nb.prange(n_chunks):
        lo = chunks[t]
        hi = chunks[t + 1]
        longest = 1
        longest_q = 1
        for u in range(lo, hi):
            longest = max(longest, offsets[u + 1] - offsets[u])
            longest_q = max(longest_q, q_offsets[u + 1] - q_offsets[u])
        bits = _table_bits(longest + longest_q)
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
        key_bits = keys.view(np.uint64)
        packed = np.empty(min(longest, 4096), dtype=np.uint64)
        keys2 = np.empty(longest, dtype=np.float64)
        rows = np.empty(longest, dtype=np.int64)
        idx = np.empty(longest, dtype=np.int64)
        tmp = np.empty(longest, dtype=np.int64)
        for u in range(lo, hi):
            # ---- ground truth: dedupe, conflicts, ideal gains
            qa = q_offsets[u]
            ql = q_offsets[u + 1] - qa
            n_slots = 0
            n_kept = 0
            for j in range(ql):
                src = q_start[u] + j if q_grouped else q_rows_in[q_start[u] + j]
                q_src[j] = src
                rv = q_rel_raw[src]
                q_val[j] = rv
                h = _item_hash(src, by_bytes, q_ints, q_off, q_data)
                q_hash[j] = h
                q_seen[j] = False
                slot = h >> shift
                repeat = False
                while table[slot] >= 0:
                    p = table[slot]
                    if q_hash[p] == h and _same_item(q_src[p], q_ints, q_off, q_data,
                                                     src, q_ints, q_off, q_data, by_bytes):
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
            kept[u] = n_kept
            if n_kept > 32:
                g = np.sort(gains[:n_kept])
                for j in range(n_kept):
                    out_ideal[qa + j] = g[n_kept - 1 - j]
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
            # ---- run: sort by score (ties by item id), then join
            ra = offsets[u]
            m = offsets[u + 1] - ra
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
                if m <= 4096:
                    _sort_packed(keys, key_bits, idx, packed, keys2, m)
                else:
                    _sort_desc(keys, idx, keys2, tmp, m)
                tied = False
                for j in range(1, m):
                    if keys[j] == keys[j - 1]:
                        tied = True
                        break
            if tied:
                _order_ties(keys, idx, m, rows, by_bytes, r_ints, r_off, r_data)
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
                h = _item_hash(src, by_bytes, r_ints, r_off, r_data)
                r_hash[i] = h
                slot = h >> shift
                code = 0
                while table[slot] != -1:
                    p = table[slot]
                    if p >= 0:
                        if q_hash[p] == h and _same_item(src, r_ints, r_off, r_data,
                                                         q_src[p], q_ints, q_off, q_data, by_bytes):
                            if q_seen[p]:
                                if dup[t] < 0:
                                    dup[t] = ra + i
                            q_seen[p] = True
                            code = q_code_in[q_src[p]]
                            break
                    else:
                        e = -2 - p
                        if r_hash[e] == h and _same_item(src, r_ints, r_off, r_data,
                                                         rows[idx[e]], r_ints, r_off, r_data, by_bytes):
                            if dup[t] < 0:
                                dup[t] = ra + i
                            break
                    slot = (slot + np.uint64(1)) & mask
                if table[slot] == -1:
                    table[slot] = -2 - i
                    slots[n_slots] = slot
                    n_slots += 1
                out_code[ra + i] = code
            for x in range(n_slots):
                table[slots[x]] = -1
    first_dup = -1
    first_bad = -1
    for t in range(n_chunks):
        if dup[t] >= 0 and (first_dup < 0 or dup[t] < first_dup):
            first_dup = dup[t]
        if bad[t] >= 0 and (first_bad < 0 or bad[t] < first_bad):
            first_bad = bad[t]
    return first_dup, first_bad


@njit(parallel=True)
def relevance_codes(rel, out):
    """Code relevance values as 1 + (value - min) when all are integers spanning at most 254 values.

    Fills ``out`` (uint8) and returns ``(min, max)``, or ``(NaN, NaN)`` (``out``
    then unusable) for other values: :func:`numpy.unique` codes those.
    """
    n = rel.shape[0]
    if n == 0:
        return 0.0, -1.0
    lo = rel[0]
    hi = rel[0]
    integral = True
    for i in range(n):
        v = rel[i]
        lo = min(lo, v)
        hi = max(hi, v)
        if v != np.floor(v):
            integral = False
    if not integral or hi - lo > 253.0:
        return np.nan, np.nan
    for i in nb.prange(n):
        out[i] = np.uint8(rel[i] - lo + 1.0)
    return lo, hi


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


@njit(parallel=True)
def changes_bytes(off, data, out):
    """``out[i]`` = 1 where string ``i`` differs from the one before (position 0 always)."""
    n = off.shape[0] - 1
    if n > 0:
        out[0] = 1
    for i in nb.prange(1, n):
        out[i] = 1 if _differs_bytes(off, data, i) else 0


@njit(parallel=True)
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


@njit(parallel=True)
def gather_ranked(values, offsets, start, local, perm, grouped, out):
    """``out[i] = values[input row of ranked position i]`` from one-byte local rows."""
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        for i in range(offsets[u], offsets[u + 1]):
            r = start[u] + local[i]
            out[i] = values[r] if grouped else values[perm[r]]


@njit(parallel=True)
def count_at_least(offsets, values, threshold, out):
    """``out[u]`` = number of ``values[offsets[u]:offsets[u+1]]`` that are >= threshold."""
    for u in nb.prange(offsets.shape[0] - 1):
        c = 0
        for j in range(offsets[u], offsets[u + 1]):
            if values[j] >= threshold:
                c += 1
        out[u] = c


@njit(parallel=True)
def first_of_pair(bounds, chunks, off, data, rel, out):
    """``out[i]`` = first row of the same segment with row i's item, or -1 for a first occurrence.

    Segments ``bounds[s]:bounds[s+1]`` are one user's rows; items are Arrow
    strings (``off``/``data``) compared by hash, then bytes. With ``rel`` (one
    value per row, or empty) a repeat whose value differs from the first
    occurrence's gets ``-2 - first`` instead, so callers tell exact repeats from
    conflicts. Segments ``chunks[t]:chunks[t+1]`` go to thread t.
    """
    with_rel = rel.shape[0] > 0
    for t in nb.prange(chunks.shape[0] - 1):
        longest = 1
        for s in range(chunks[t], chunks[t + 1]):
            longest = max(longest, bounds[s + 1] - bounds[s])
        bits = _table_bits(longest)
        shift = np.uint64(64 - bits)
        mask = np.uint64((1 << bits) - 1)
        table = np.full(1 << bits, -1, dtype=np.int64)
        hashes = np.empty(longest, dtype=np.uint64)
        slots = np.empty(longest, dtype=np.int64)
        for s in range(chunks[t], chunks[t + 1]):
            a = bounds[s]
            n_slots = 0
            for i in range(a, bounds[s + 1]):
                h = _item_hash(i, True, bounds, off, data)  # (bounds: unused integer ids)
                hashes[i - a] = h
                slot = h >> shift
                first = -1
                while table[slot] >= 0:
                    p = table[slot]
                    if hashes[p - a] == h and compare_bytes(off, data, p, off, data, i) == 0:
                        first = p
                        break
                    slot = (slot + np.uint64(1)) & mask
                if first < 0:
                    table[slot] = i
                    slots[n_slots] = slot
                    n_slots += 1
                    out[i] = -1
                elif with_rel and rel[first] != rel[i]:
                    out[i] = -2 - first
                else:
                    out[i] = first
            for x in range(n_slots):
                table[slots[x]] = -1
