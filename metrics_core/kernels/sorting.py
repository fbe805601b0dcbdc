"""A stable descending sort written out for the kernels.

NumPy's sorts inside a numba kernel (``np.sort``, ``ndarray.sort``) compile
numba's generic quicksort, about a second of compile time per element type on a
fresh installation. This merge sort compiles in a fraction of that, carries a
payload along with the keys, and is stable: equal keys keep their order, so
every caller gets one defined result.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

BLOCK = 32  # runs of this many keys are insertion-sorted before merging


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
def sort_desc(k, p, k2, p2, m):
    """Sort keys ``k[:m]`` descending, stable, carrying ``p`` along (insertion sort in blocks,
    then merges between (k, p) and the scratch (k2, p2)); the result is in (k, p)."""
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
def sorted_desc(values, n):
    """A new array: ``values[:n]`` (float64) sorted descending."""
    keys = np.empty(n, dtype=np.float64)
    for j in range(n):
        keys[j] = values[j]
    pos = np.zeros(n, dtype=np.int64)
    sort_desc(keys, pos, np.empty(n, dtype=np.float64), np.empty(n, dtype=np.int64), n)
    return keys
