"""Scaled DCG (SDCG@k, Moffat et al.'s C/W/L form of DCG; ir_measures' ``SDCG``, cwl_eval's ``NDCG-k``).

Each relevance is first scaled into a gain in [0, 1] between two grades ``lo`` and ``hi``
(ir_measures' ``min_rel`` and ``max_rel``): ``g = (min(max(rel, lo), hi) - lo) / (hi - lo)`` with a
negative relevance read as 0 first and an unjudged item of gain 0. The DCG of the top k is then divided
by the DCG of k items of gain 1, whatever the ground truth holds (SDCG assumes at least k fully relevant
items exist):

    SDCG@k = sum_{i<=K} g_i / log2(i + 1)  /  sum_{i<=k} 1 / log2(i + 1),   K = min(k, n)

A list shorter than k is padded with gains of 0 (cwl_eval pads every ranking to 1,000 items). With
``ties_average`` each tie group's items take the group's mean gain: the exact expectation over the orders
of tied items (the sum is linear in the gains).
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end
from .trec_lists import trec_relevance


#: largest cutoff of SDCG@k: its denominator sums k discounts
MAX_SDCG_K = 10_000_000


@njit(parallel=True, work="rel_code", writes=("out",))
def _scaled_dcg(offsets, rel_code, rel_values, tie_key, lo, hi, k, ties_average, out):
    ideal = 0.0
    for j in range(k):
        ideal += 1.0 / math.log2(j + 2.0)
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = min(k, n)
        total = 0.0
        s = 0
        while s < K:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            gains = 0.0
            for i in range(s, e):
                value = trec_relevance(rel_values, rel_code[a + i])
                value = min(max(value if value > 0.0 else 0.0, lo), hi)
                gains += (value - lo) / (hi - lo)
            mean = gains / (e - s)
            for i in range(s, min(e, K)):
                total += mean / math.log2(i + 2.0)
            s = e
        out[u] = total / ideal


def scaled_dcg_values(lists, lo: float, hi: float, k: int, ties_average: bool) -> np.ndarray:
    """SDCG@k of every user code, relevances scaled between the grades ``lo`` and ``hi`` (``lo < hi``)."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _scaled_dcg(lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key, float(lo), float(hi), int(k),
                bool(ties_average), out)
    return out
