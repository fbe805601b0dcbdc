"""trec_eval's experimental nDCG averages ``ndcg_rel`` and ``Rndcg`` (gains: the relevances as given).

With g_i the gain at 0-based rank i, DCG(m) = sum_{i<m} g_i / log2(i+2) and
IDCG(m) the same over the ideal gains I (judged gains sorted descending):

- ndcg_rel: the mean, over the P items of positive ideal gain, of DCG(i+1) / IDCG(min(i+1, P)) at
  each retrieved item of positive gain (0-based rank i); each of them not retrieved counts
  DCG(n) / IDCG(P) (n the list length). 0 when no retrieved item has a positive gain.
- Rndcg: the mean of DCG(m) / IDCG(m) over the ranks m where the ideal gain changes
  (I_{m-1} != I_m: the boundaries of the relevance levels, and the one where it drops to 0), and at
  m = n when the list is longer than the positive ideal gains; 0 when R = 0.

The list is read in one order (the tie rule's).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit
from .trec_lists import gain, ideal_gain


@njit(parallel=True, work="rel_code", writes=("out",))
def _ndcg_rel(offsets, rel_code, rel_values, ideal_offsets, ideal_rel, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        qa = ideal_offsets[u]
        qb = ideal_offsets[u + 1]
        dcg = 0.0
        idcg = 0.0
        total = 0.0
        rel_ret = 0.0
        for i in range(n):
            g = gain(rel_values, rel_code[a + i])
            if g != 0.0:
                dcg += g / math.log2(i + 2.0)
            ig = ideal_gain(ideal_rel, qa, qb, i)
            if ig > 0.0:
                idcg += ig / math.log2(i + 2.0)
            if g > 0.0:
                total += dcg / idcg
                rel_ret += 1.0
        positive = 0.0
        for j in range(qb - qa):
            ig = ideal_gain(ideal_rel, qa, qb, j)
            if ig > 0.0:
                positive += 1.0
                if j >= n:
                    idcg += ig / math.log2(j + 2.0)
        if positive > rel_ret:
            total += (positive - rel_ret) * dcg / idcg
        out[u] = total / positive if total > 0.0 else 0.0


@njit(parallel=True, work="rel_code", writes=("out",))
def _rndcg(offsets, rel_code, rel_values, n_rel, ideal_offsets, ideal_rel, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        out[u] = 0.0
        if n_rel[u] <= 0:
            continue
        a = offsets[u]
        n = offsets[u + 1] - a
        qa = ideal_offsets[u]
        qb = ideal_offsets[u + 1]
        dcg = 0.0
        idcg = 0.0
        total = 0.0
        count = 0.0
        old = ideal_gain(ideal_rel, qa, qb, 0)
        current = old
        i = 0
        while i < n and current > 0.0:
            g = gain(rel_values, rel_code[a + i])
            current = ideal_gain(ideal_rel, qa, qb, i)
            if current != old:
                if idcg > 0.0:
                    total += dcg / idcg
                    count += 1.0
                old = current
            if g != 0.0:
                dcg += g / math.log2(i + 2.0)
            if current > 0.0:
                idcg += current / math.log2(i + 2.0)
            i += 1
        if i < n:
            while i < n:
                g = gain(rel_values, rel_code[a + i])
                if g != 0.0:
                    dcg += g / math.log2(i + 2.0)
                i += 1
            if idcg > 0.0:
                total += dcg / idcg
                count += 1.0
        while current > 0.0:
            current = ideal_gain(ideal_rel, qa, qb, i)
            if current != old:
                if idcg > 0.0:
                    total += dcg / idcg
                    count += 1.0
                old = current
            if current > 0.0:
                idcg += current / math.log2(i + 2.0)
            i += 1
        out[u] = total / count if count > 0.0 else 0.0


def ndcg_rel_values(lists) -> np.ndarray:
    """trec_eval's ndcg_rel of every user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _ndcg_rel(lists.offsets, lists.rel_code, lists.rel_values, lists.ideal_offsets, lists.ideal_rel, out)
    return out


def rndcg_values(lists) -> np.ndarray:
    """trec_eval's Rndcg of every user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _rndcg(lists.offsets, lists.rel_code, lists.rel_values, lists.n_rel, lists.ideal_offsets, lists.ideal_rel, out)
    return out
