"""Small kernels over the ranked layout: relevance codes, gathering input values in ranked
order, relevant counts per user and the input-order permutation of tie groups."""

from __future__ import annotations

import numpy as np

from ..kernels._jit import nb, njit

#: 2^53: every integer of smaller magnitude is exactly a float64
_EXACT_INTEGERS = 9007199254740992.0


@njit(parallel=True, work="rel", writes=("out",))
def relevance_codes(rel, out):
    """Code relevance values as 1 + (value - min) when all are integers spanning at most 254 values,
    each of magnitude below 2^53.

    Fills ``out`` (uint8) and returns ``(min, max)``, or ``(NaN, NaN)`` (``out``
    then unusable) for other values: :func:`numpy.unique` codes those. Below 2^53
    every integer is a float64, so ``min + j`` and ``value - min`` are exact; from
    2^53 on neighbouring floats are 2 or more apart and that arithmetic rounds.
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
    if not integral or hi - lo > 253.0 or max(-lo, hi) >= _EXACT_INTEGERS:
        return np.nan, np.nan
    for i in nb.prange(n):
        out[i] = np.uint8(rel[i] - lo + 1.0)
    return lo, hi


@njit(parallel=True, work="out", writes=("out",))
def gather_ranked(values, offsets, start, local, perm, grouped, out):
    """``out[i] = values[input row of ranked position i]`` from one-byte local rows."""
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        for i in range(offsets[u], offsets[u + 1]):
            r = start[u] + local[i]
            out[i] = values[r] if grouped else values[perm[r]]


@njit(parallel=True, work="values", writes=("out",))
def count_at_least(offsets, values, threshold, out):
    """``out[u]`` = number of ``values[offsets[u]:offsets[u+1]]`` that are >= threshold."""
    for u in nb.prange(offsets.shape[0] - 1):
        c = 0
        for j in range(offsets[u], offsets[u + 1]):
            if values[j] >= threshold:
                c += 1
        out[u] = c


@njit(parallel=True, work="score")
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
def float32_merges(offsets, score):
    """Whether some user's list holds two neighbours whose 64-bit scores differ but are equal as 32-bit
    floats (trec_eval's ``float``): one pass, stopping at the first such pair."""
    for u in range(offsets.shape[0] - 1):
        for i in range(offsets[u] + 1, offsets[u + 1]):
            if score[i] != score[i - 1] and np.float32(score[i]) == np.float32(score[i - 1]):
                return True
    return False
