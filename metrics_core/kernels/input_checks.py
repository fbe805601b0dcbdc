"""Checks of input rows: repeated (user, item) pairs (a compiled kernel), non-finite numbers and
ids to trim (NumPy expressions: nothing to compile or load for them)."""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .item_ids import item_hash, same_item, table_bits


@njit(parallel=True, work="out", writes=("out",))
def first_of_pair(bounds, chunks, off, data, rel, out):
    """``out[i]`` = first row of the same segment with row i's item, or -1 for a first occurrence.

    Segments ``bounds[s]:bounds[s+1]`` are one user's rows; items are Arrow
    strings (``off``/``data``) compared by hash, then bytes. With ``rel`` (one
    value per row, or empty) a repeat whose value differs from the first
    occurrence's gets ``-2 - first`` instead, so callers tell exact repeats from
    conflicts. Segments ``chunks[t]:chunks[t+1]`` go to thread t.
    """
    with_rel = rel.shape[0] > 0
    ids = (off, data)
    for t in nb.prange(chunks.shape[0] - 1):
        longest = 1
        for s in range(chunks[t], chunks[t + 1]):
            longest = max(longest, bounds[s + 1] - bounds[s])
        bits = table_bits(np.int64(longest))  # int64: no extra compile for numba's first guess, literal 1
        shift = np.uint64(64 - bits)
        mask = np.uint64((1 << bits) - 1)
        table = np.full(1 << bits, -1, dtype=np.int64)
        hashes = np.empty(longest, dtype=np.uint64)
        slots = np.empty(longest, dtype=np.int64)
        for s in range(chunks[t], chunks[t + 1]):
            a = bounds[s]
            n_slots = 0
            for i in range(a, bounds[s + 1]):
                h = item_hash(ids, i)
                hashes[i - a] = h
                slot = h >> shift
                first = -1
                while table[slot] >= 0:
                    p = table[slot]
                    if hashes[p - a] == h and same_item(ids, p, ids, i):
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


#: the checks below read their input in pieces of this many values (temporaries that stay in cache)
CHECK_PIECE = 1 << 16
_FIRST_PRINTABLE, _PRINTABLE_SPAN = 0x21, 0x7E - 0x21  # '!' .. '~'


def first_non_finite(values: np.ndarray) -> int:
    """Index of the first NaN or infinite value of a 1-D numeric array, or -1.

    A NumPy expression over pieces of :data:`CHECK_PIECE` values (a temporary of one
    byte per value of a piece), no compiled kernel: the check costs a process that
    reads a small file nothing to compile or load, and runs at NumPy's vectorised speed
    on large ones. Integer and boolean arrays have no non-finite value; ``-0.0`` is finite.
    """
    if values.dtype.kind in "biu":
        return -1
    for lo in range(0, values.shape[0], CHECK_PIECE):
        finite = np.isfinite(values[lo:lo + CHECK_PIECE])
        if not finite.all():
            return lo + int(np.argmin(finite))
    return -1


def first_untrimmed(off: np.ndarray, data: np.ndarray) -> int:
    """Index of the first string that is empty or may have whitespace at either end, or -1.

    String ``i`` is ``data[off[i]:off[i + 1]]`` (Arrow's offsets and bytes). Its first and
    last bytes must be printable, non-space ASCII (``!`` to ``~``); any other byte there
    (ASCII whitespace and control bytes, or a byte of a multi-byte UTF-8 character, which
    may be Unicode whitespace) makes the string a candidate for trimming. Two bytes read
    per string, as a NumPy expression over pieces of :data:`CHECK_PIECE` strings (no
    compiled kernel to compile or load). A byte ``b`` is printable when the unsigned byte
    ``b - 0x21`` (wrapping below ``!``) is at most ``0x7E - 0x21``.
    """
    n = off.shape[0] - 1
    if n <= 0:
        return -1
    if data.shape[0] == 0:
        return 0  # every string is empty
    codes = data.view(np.uint8)
    first = np.empty(min(n, CHECK_PIECE), dtype=np.uint8)
    last = np.empty_like(first)
    for lo in range(0, n, CHECK_PIECE):
        bounds = off[lo:lo + CHECK_PIECE + 1]
        start, stop = bounds[:-1], bounds[1:]
        m = start.shape[0]
        # 'clip' keeps the reads of empty strings inside the data; an empty string is flagged anyway
        head = np.take(codes, start, mode="clip", out=first[:m])
        tail = np.take(codes, stop - 1, mode="clip", out=last[:m])
        head -= _FIRST_PRINTABLE
        tail -= _FIRST_PRINTABLE
        bad = head > _PRINTABLE_SPAN
        bad |= tail > _PRINTABLE_SPAN
        bad |= stop <= start
        if bad.any():
            return lo + int(np.argmax(bad))
    return -1


_ZERO, _NINE, _DOT, _MINUS = 48, 57, 46, 45


@njit
def first_whole_decimal(off, data):
    """Index of the first string that writes a whole number with a zero fraction, or -1.

    Such a string is ``-?(0|[1-9][0-9]*)\\.0+`` (``7.0``, ``-12.00``, ``0.0``). A
    string whose last byte is not ``0`` is passed over after reading that byte, so
    the usual id column costs one byte per string.
    """
    for i in range(off.shape[0] - 1):
        a, b = off[i], off[i + 1]
        if b - a < 3 or data[b - 1] != _ZERO:
            continue
        j = b - 1
        while j > a and data[j] == _ZERO:
            j -= 1
        if data[j] != _DOT:
            continue
        start = a + 1 if data[a] == _MINUS else a
        if start == j or (data[start] == _ZERO and j - start > 1):
            continue  # no integer part, or a leading zero ("07.0")
        digits = True
        for x in range(start, j):
            if data[x] < _ZERO or data[x] > _NINE:
                digits = False
                break
        if digits:
            return i
    return -1
