"""Judged@k: the share of the top k that the ground truth judges (OpenNIR's, ir_measures' ``Judged``).

With K = min(k, n) (k = 0: the whole list), Judged@k = (items of the top K that
appear in the ground truth, whatever their relevance) / K, 0 for an empty
list. A sum of per-rank indicators, so with ``ties_average`` the tie group
cut by K counts its mean share: the exact expectation over tie orders.
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end


@njit(parallel=True, work="rel_code", writes=("out",))
def _judged(offsets, rel_code, tie_key, k, ties_average, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        if K == 0:
            out[u] = 0.0
            continue
        judged = 0.0
        s = 0
        while s < K:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            count = 0.0
            for i in range(s, e):
                if rel_code[a + i] != 0:
                    count += 1.0
            judged += count * (min(e, K) - s) / (e - s)
            s = e
        out[u] = judged / K


def judged_values(lists, k: int, ties_average: bool) -> np.ndarray:
    """Judged@k of every user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _judged(lists.offsets, lists.rel_code, lists.tie_key, int(k), bool(ties_average), out)
    return out
