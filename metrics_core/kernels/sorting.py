"""A stable descending sort written out for the kernels.

NumPy's sorts inside a numba kernel (``np.sort``, ``ndarray.sort``) compile
numba's generic quicksort, about a second of compile time per element type on a
fresh installation. The sorts here compile in a fraction of that, carry a
payload along with the keys, and are stable: equal keys keep their order, so
every caller gets one defined result.

Two algorithms give that one result:

* up to :data:`PACKED_MAX` keys (every ranked list of a usual run), each key
  becomes one unsigned integer that orders as the float does, its lowest bits
  replaced by the entry's position; one quicksort of those integers (written
  here, a single array, no payload to move) orders keys and positions together,
  and an insertion pass restores exact order among keys that differed only in
  the replaced bits. Every packed integer is distinct, so the quicksort's lack
  of stability cannot show: equal keys come out in position order. ``-0.0``
  packs as ``0.0`` (they compare equal), and the keys themselves are gathered
  from the input, bit for bit;
* longer lists, and lists holding a NaN (which compares as nothing), go
  through a merge sort (insertion-sorted blocks of :data:`BLOCK` keys, then
  merges), O(m log m) whatever the keys.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

BLOCK = 32  # runs of this many keys are insertion-sorted before merging
PACKED_MAX = 4096  # lists up to this length are sorted as packed integers (at most 12 bits of each key replaced)
_SMALL_RUN = 16  # the quicksort leaves runs shorter than this to an insertion sort
_SIGN = np.uint64(0x8000000000000000)


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


@njit(inline="always")
def _insertion_sort_u64(a, lo, hi):
    for x in range(lo + 1, hi):
        v = a[x]
        y = x - 1
        while y >= lo and a[y] > v:
            a[y + 1] = a[y]
            y -= 1
        a[y + 1] = v


@njit
def _quicksort_u64(a, m, pending):
    """Sort ``a[:m]`` (distinct uint64) ascending: median-of-three quicksort, the smaller part
    first, insertion sort below :data:`_SMALL_RUN` entries. ``pending`` (int64, at least ``m``
    entries when ``m >= _SMALL_RUN``) holds the bounds of the parts left for later: two per
    level, at most log2(m) levels; no allocation, so threads sorting at once share no allocator."""
    top = 0
    lo = 0
    hi = m - 1
    while True:
        while hi - lo >= _SMALL_RUN:
            mid = (lo + hi) >> 1
            if a[mid] < a[lo]:
                a[mid], a[lo] = a[lo], a[mid]
            if a[hi] < a[mid]:
                a[hi], a[mid] = a[mid], a[hi]
                if a[mid] < a[lo]:
                    a[mid], a[lo] = a[lo], a[mid]
            pivot = a[mid]
            i = lo  # a[lo] <= pivot <= a[hi]: both scans stop inside [lo, hi]
            j = hi
            while True:
                i += 1
                while a[i] < pivot:
                    i += 1
                j -= 1
                while a[j] > pivot:
                    j -= 1
                if i >= j:
                    break
                a[i], a[j] = a[j], a[i]
            if j - lo < hi - j:  # [lo, j] <= pivot <= [j + 1, hi]; keep the larger part for later
                pending[top] = j + 1
                pending[top + 1] = hi
                hi = j
            else:
                pending[top] = lo
                pending[top + 1] = j
                lo = j + 1
            top += 2
        _insertion_sort_u64(a, lo, hi + 1)
        if top == 0:
            return
        top -= 2
        lo = pending[top]
        hi = pending[top + 1]


@njit
def _packed_sort_desc(k, p, k2, p2, m):
    """:func:`sort_desc` for ``m <= PACKED_MAX`` keys without NaN (module docstring)."""
    bits = 1
    while (1 << bits) < m:
        bits += 1
    low = np.uint64((1 << bits) - 1)
    packed = k2.view(np.uint64)
    key_bits = k.view(np.uint64)
    for j in range(m):
        b = key_bits[j] if k[j] != 0.0 else np.uint64(0)  # -0.0 == 0.0: one packed value
        ascending = ~b if b & _SIGN else b | _SIGN  # orders as the floats do
        packed[j] = (~ascending & ~low) | np.uint64(j)  # descending, then position
    _quicksort_u64(packed, m, p2)  # p2 is free until the gather below
    for j in range(m):  # packed[j] is read before k2[j] (the same memory) is written
        e = np.int64(packed[j] & low)
        k2[j] = k[e]
        p2[j] = p[e]
    for j in range(m):
        k[j] = k2[j]
        p[j] = p2[j]
    _insertion_sort_desc(k, p, 0, m)  # keys equal but for the replaced bits; stable


@njit
def _merge_sort_desc(k, p, k2, p2, m):
    """:func:`sort_desc` by insertion sort in blocks, then merges between (k, p) and the scratch (k2, p2)."""
    for lo in range(0, m, BLOCK):
        _insertion_sort_desc(k, p, lo, min(m, lo + BLOCK))
    sk, sp, dk, dp = k, p, k2, p2
    swapped = False
    width = BLOCK
    while width < m:
        for lo in range(0, m, 2 * width):
            mid = min(m, lo + width)
            hi = min(m, lo + 2 * width)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if sk[j] > sk[i]:  # the left run wins ties: stable
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
def sort_desc(k, p, k2, p2, m):
    """Sort keys ``k[:m]`` (float64) descending, stable, carrying ``p`` (int64) along, with the
    scratch arrays ``k2`` (float64, contiguous) and ``p2`` of at least ``m`` entries; the result
    is in (k, p), entries past ``m`` untouched. Packed quicksort up to :data:`PACKED_MAX` keys,
    merge sort beyond or when a key is NaN (module docstring): the same order either way."""
    if m < 2:
        return
    if m <= PACKED_MAX:
        has_nan = False
        for j in range(m):
            if k[j] != k[j]:
                has_nan = True
                break
        if not has_nan:
            _packed_sort_desc(k, p, k2, p2, m)
            return
    _merge_sort_desc(k, p, k2, p2, m)


@njit
def sorted_desc(values, n):
    """A new array: ``values[:n]`` (float64) sorted descending."""
    keys = np.empty(n, dtype=np.float64)
    for j in range(n):
        keys[j] = values[j]
    pos = np.zeros(n, dtype=np.int64)
    sort_desc(keys, pos, np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64), n)
    return keys
