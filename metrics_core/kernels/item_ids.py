"""Item ids inside one user's list: hashing, equality and trec_eval's tie order.

Nothing is built over the whole catalogue: ids are compared inside one user's
short lists, as 64-bit integers or as Arrow byte strings (a 64-bit hash first,
the bytes to confirm). Integer ids order ties as their decimal strings
("10" < "9", "-5" < "3"), the same order trec_eval's ``strcmp`` gives. Used by
the layout's sort-and-join kernel and by the reader's repeated-pair check.

A kernel receives a column of ids as one argument ``ids``: an int64 array
(integer ids) or the tuple ``(offsets, data)`` of an Arrow string column (see
:mod:`.strings`). :func:`item_hash`, :func:`same_item` and :func:`item_above`
pick their code from that argument's type when a kernel is compiled, so a
kernel compiled for string ids holds no integer-id code and the other way
round: a first call compiles only the form it is given.
"""

from __future__ import annotations

import numpy as np

from ._jit import bind_globals, njit, when_loaded
from .interpreted import python_implementation
from .strings import compare_bytes

_FIBONACCI = np.uint64(0x9E3779B97F4A7C15)


@njit(inline="always")
def _mix(h):
    """MurmurHash3's 64-bit finaliser."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


def _integer_ids(ids) -> bool:
    """Whether ``ids`` is an int64 array (else Arrow string buffers): a numba type when a kernel is
    compiled, the argument itself when it runs as Python (:mod:`.interpreted`)."""
    if isinstance(ids, (np.ndarray, tuple)):
        return isinstance(ids, np.ndarray)
    from numba import types

    return isinstance(ids, types.Array)


def item_hash(ids, row):
    """64-bit hash of row ``row``'s item id whose top bits pick a table slot: FNV-1a over its
    bytes then mixed, or Fibonacci hashing of its integer value (one multiply). Compiled only."""
    raise NotImplementedError("item_hash runs inside compiled kernels only")


def _item_hash(ids, row):
    if _integer_ids(ids):
        return lambda ids, row: np.uint64(ids[row]) * _FIBONACCI

    def by_bytes(ids, row):
        off, data = ids
        h = np.uint64(14695981039346656037)
        for j in range(off[row], off[row + 1]):
            h = (h ^ np.uint64(data[j])) * np.uint64(1099511628211)
        return _mix(h)
    return by_bytes


def same_item(a_ids, a, b_ids, b):
    """Whether row ``a`` of ``a_ids`` and row ``b`` of ``b_ids`` hold the same item id
    (both of one form). Compiled only."""
    raise NotImplementedError("same_item runs inside compiled kernels only")


def _same_item(a_ids, a, b_ids, b):
    if _integer_ids(a_ids):
        return lambda a_ids, a, b_ids, b: a_ids[a] == b_ids[b]
    return lambda a_ids, a, b_ids, b: compare_bytes(a_ids[0], a_ids[1], a, b_ids[0], b_ids[1], b) == 0


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


def item_above(ids, a, b):
    """Whether row a's item id sorts above row b's as strings (ties are ranked by item id
    descending). Compiled only."""
    raise NotImplementedError("item_above runs inside compiled kernels only")


def _item_above(ids, a, b):
    if _integer_ids(ids):
        return lambda ids, a, b: decimal_compare(ids[a], ids[b]) > 0
    return lambda ids, a, b: compare_bytes(ids[0], ids[1], a, ids[0], ids[1], b) > 0


@njit
def table_bits(longest):
    """log2 of an open-addressing table size at least twice ``longest``."""
    bits = 3
    while (1 << bits) < 2 * longest:
        bits += 1
    return bits


# run as Python (:mod:`.interpreted`), each stub picks its code from the arguments as the overload does from their types
python_implementation(item_hash, chooses=True)(_item_hash)
python_implementation(same_item, chooses=True)(_same_item)
python_implementation(item_above, chooses=True)(_item_above)


def _register_overloads(numba) -> None:
    """Give numba the compiled forms of :func:`item_hash`, :func:`same_item` and :func:`item_above`
    (when numba is loaded: the kernels calling them are compiled after).

    :func:`item_hash` runs once per row of every list: its form is inlined into the calling
    kernel (as a call per row it cost the layout pass a sixth of its time at 10M rows, a quarter
    on lists already in score order; inlined, it compiles in no measurable extra time). numba's
    pedantic check then warns that a variable of the inlined loop "is not in scope"
    (``NumbaIRAssumptionWarning``): the check looks at the inliner's renamed variables and the
    compiled code is right (the layout tests compare its outputs with the plain-Python pass's),
    so that warning, for this function only, is not shown. The other two run once per match or
    tie and stay calls (inlined too, they add about 4 CPU s of compile time for nothing
    measurable)."""
    import warnings

    from numba.core.errors import NumbaIRAssumptionWarning
    from numba.extending import overload

    warnings.filterwarnings("ignore", message=r"variable '_item_hash__locals__", category=NumbaIRAssumptionWarning)
    for function, implementation, inline in ((item_hash, _item_hash, "always"), (same_item, _same_item, "never"),
                                             (item_above, _item_above, "never")):
        bind_globals(implementation)  # the kernels its compiled forms call
        overload(function, inline=inline)(implementation)


when_loaded(_register_overloads)
