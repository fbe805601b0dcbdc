"""trec_eval's normalised gain measures ``G`` and ``binG`` (experimental measures of 2008).

G: with g_i the gain of the item at 0-based rank i (its relevance, 0 unless
judged >= 0), S_i = sum_{j<=i} g_j, ideal gains I_j (the judged gains sorted
descending, 0 beyond them) and C_i = sum_{j<=i} max(I_j, 1):

    G = sum_i g_i / log2(2 + C_i - S_i)  /  sum_j I_j          (0 when sum_j I_j = 0)

binG: over the relevant retrieved items (relevance >= threshold), the r-th of
them at 0-based rank i adds 1 / log2(3 + i - r) (1 / log2(2 + non-relevant
items above it)); binG = that sum / R. The list is read in one order (the tie rule's).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit
from .trec_lists import gain, ideal_gain, trec_relevance


@njit(parallel=True, work="rel_code", writes=("out",))
def _g(offsets, rel_code, rel_values, ideal_offsets, ideal_rel, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        qa = ideal_offsets[u]
        qb = ideal_offsets[u + 1]
        ideal_total = 0.0
        for j in range(qb - qa):
            ideal_total += ideal_gain(ideal_rel, qa, qb, j)
        if ideal_total <= 0.0:
            out[u] = 0.0
            continue
        results = 0.0
        cost = 0.0
        total = 0.0
        for i in range(n):
            g = gain(rel_values, rel_code[a + i])
            results += g
            cost += max(ideal_gain(ideal_rel, qa, qb, i), 1.0)
            if g != 0.0:
                total += g / math.log2(2.0 + cost - results)
        out[u] = total / ideal_total


@njit(parallel=True, work="rel_code", writes=("out",))
def _bin_g(offsets, rel_code, rel_values, n_rel, threshold, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        seen = 0.0
        total = 0.0
        for i in range(n):
            if trec_relevance(rel_values, rel_code[a + i]) >= threshold:
                seen += 1.0
                total += 1.0 / math.log2(3.0 + i - seen)
        out[u] = total / n_rel[u] if seen > 0.0 and n_rel[u] > 0 else 0.0


def g_values(lists) -> np.ndarray:
    """trec_eval's G of every user code (gains: the relevances as given)."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _g(lists.offsets, lists.rel_code, lists.rel_values, lists.ideal_offsets, lists.ideal_rel, out)
    return out


def bin_g_values(lists, threshold: float) -> np.ndarray:
    """trec_eval's binG of every user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _bin_g(lists.offsets, lists.rel_code, lists.rel_values, lists.n_rel, float(threshold), out)
    return out
