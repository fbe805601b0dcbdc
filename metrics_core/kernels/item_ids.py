"""Item ids inside one user's list: hashing, equality and trec_eval's tie order.

Nothing is built over the whole catalogue: ids are compared inside one user's
short lists, as 64-bit integers or as Arrow byte strings (a 64-bit hash first,
the bytes to confirm). Integer ids order ties as their decimal strings
("10" < "9", "-5" < "3"), the same order trec_eval's ``strcmp`` gives. Used by
the layout's sort-and-join kernel and by the reader's repeated-pair check.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
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
def item_hash(row, by_bytes, ints, off, data):
    """64-bit hash of a row's item id whose top bits pick a table slot: FNV-1a over its
    bytes then mixed, or Fibonacci hashing of its integer value (one multiply)."""
    if by_bytes:
        h = np.uint64(14695981039346656037)
        for j in range(off[row], off[row + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
        return _mix(h)
    return np.uint64(ints[row]) * np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always")
def same_item(a, a_ints, a_off, a_data, b, b_ints, b_off, b_data, by_bytes):
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
def decimal_compare(x, y):
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
def item_above(a, b, by_bytes, ints, off, data):
    """Whether row a's item id sorts above row b's as strings (ties are ranked by item id descending)."""
    if by_bytes:
        return compare_bytes(off, data, a, off, data, b) > 0
    return decimal_compare(ints[a], ints[b]) > 0


@njit
def table_bits(longest):
    """log2 of an open-addressing table size at least twice ``longest``."""
    bits = 3
    while (1 << bits) < 2 * longest:
        bits += 1
    return bits
