"""Rank-biased precision (Moffat and Zobel 2008) and its residual, at a cutoff.

With persistence p, h_i = 1 when the item at rank i (1-based) is relevant,
u_i = 1 when it is not judged (absent from the ground truth, or with a
negative relevance) and K = min(k, n) (k = 0: the whole list):

    RBP@k   = (1 - p) sum_{i<=K} h_i p^(i-1)
    resid@k = (1 - p) sum_{i<=K} u_i p^(i-1) + p^K

Graded RBP (ir_measures' ``RBP`` without ``rel``, as trectools' ``get_rbp(binary_topical_relevance=False)``
computes it) weighs each item by its relevance grade instead of h_i:

    gRBP@k  = (1 - p) sum_{i<=K} max(rel_i, 0) p^(i-1)     (unjudged: 0)

so it exceeds 1 when grades do. The residual is how much RBP could still rise if every unjudged item of the
top K and every item below it were relevant (trec_eval's ``rbp_resid``
without a cutoff, which reports 0 when no retrieved item is unjudged; here
the tail p^K always counts). Both are sums of per-rank terms, so with
``ties_average`` each tie group's items take the group's mean h (or u): the
exact expectation over the orders of tied items.
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end
from .trec_lists import trec_relevance

RBP, RESIDUAL, GRADED = 0, 1, 2


@njit(parallel=True, work="rel_code", writes=("out",))
def _rank_biased(offsets, rel_code, rel_values, tie_key, threshold, p, k, ties_average, which, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        total = 0.0
        weight = 1.0  # p^(i-1) at the group's first rank
        s = 0
        while s < K:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            hits = 0.0
            for i in range(s, e):
                value = trec_relevance(rel_values, rel_code[a + i])
                if which == RBP:
                    hits += 1.0 if value >= threshold else 0.0
                elif which == GRADED:
                    hits += value if value > 0.0 else 0.0
                else:
                    hits += 1.0 if value < 0.0 else 0.0
            mean = hits / (e - s)
            for i in range(s, min(e, K)):
                total += mean * weight
                weight *= p
            s = e
        out[u] = (1.0 - p) * total + (weight if which == RESIDUAL else 0.0)


def rank_biased_values(lists, threshold: float, p: float, k: int, ties_average: bool, which: int) -> np.ndarray:
    """RBP@k, its residual or graded RBP@k (``which``: RBP, RESIDUAL, GRADED) with persistence ``p`` of every
    user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _rank_biased(lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key, float(threshold), float(p), int(k),
                 bool(ties_average), int(which), out)
    return out
