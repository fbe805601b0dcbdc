"""Partial AUC of a ranked list: ``pauc@k`` and ``pap@k`` (RecTools' ``PartialAUC`` and ``PAP``).

For one user with R relevant items, walking the ranked list, ``f(x)`` is the
number of non-relevant items ranked above relevant item x:

- pAUC@k = (1 / (k R)) sum over relevant x in the list of max(k - f(x), 0)
  (relevant items missing from the list count 0: ranked after everything);
- pAp@k  = (1 / (k min(k, R))) sum over the first min(k, R) relevant items x of
  max(k - f(x), 0).

Ties. With ``ties_average`` every tie group is a uniformly random order of its
m items (r relevant, q = m - r not), and the value is its exact expectation:
a relevant item x of the group has ``a`` of the other r - 1 relevant items and
``j`` of the q others before it with probability
(1/m) C(r-1, a) C(q, j) / C(m-1, a+j) (its position is uniform and, given the
number of items before it, which ones they are is hypergeometric). For pAUC
only ``j`` matters: it is uniform on 0..q. Both sums stop at k, so a group
costs at most O(k^2).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end
from .ranking import log_comb

PAUC, PAP = 0, 1


@njit
def _group_term(kind, k, F, P, m, r):
    """Expected sum of max(k - f(x), 0) over the r relevant items of a tie group of m items,
    with F non-relevant and P relevant items ranked before the group (pAp: only items
    among the first k relevant ones count)."""
    q = m - r
    if r == 0 or F >= k:
        return 0.0
    if kind == PAUC:
        total = 0.0
        for j in range(min(q, k - F - 1) + 1):
            total += k - F - j
        return r * total / (q + 1.0)
    if P >= k:
        return 0.0
    total = 0.0
    for a in range(min(r - 1, k - P - 1) + 1):
        for j in range(min(q, k - F - 1) + 1):
            p = math.exp(log_comb(r - 1, a) + log_comb(q, j) - log_comb(m - 1, a + j)) / m
            total += p * (k - F - j)
    return r * total


@njit(parallel=True, work="rel_code", writes=("out",))
def partial_auc(offsets, rel_code, rel_values, tie_key, n_rel, k, threshold, ties_average, kind, out):
    """Fill ``out[u]`` with pAUC@k (``kind`` = PAUC) or pAp@k (PAP) of every user (0 when R = 0)."""
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        R = n_rel[u]
        # int64 from the start: numba would otherwise first compile _group_term for literal zeros
        F = np.int64(0)  # non-relevant items before the current group
        P = np.int64(0)  # relevant items before the current group
        total = 0.0
        s = 0
        while s < n and F < k:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            r = np.int64(0)
            for i in range(s, e):
                if rel_values[rel_code[a + i]] >= threshold:
                    r += 1
            total += _group_term(kind, k, F, P, e - s, r)
            F += e - s - r
            P += r
            s = e
        den = k * (R if kind == PAUC else min(float(k), R))
        out[u] = total / den if den > 0.0 else 0.0


def partial_auc_values(lists, k: int, threshold: float, ties_average: bool, kind: int) -> np.ndarray:
    """pAUC@k or pAp@k per user code from the ranking kernels' :class:`~.ranking.RankedLists`."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    partial_auc(lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key, lists.n_rel, int(k),
                float(threshold), bool(ties_average), int(kind), out)
    return out
