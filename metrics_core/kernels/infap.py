"""Inferred average precision (Yilmaz and Aslam 2006) as trec_eval's ``m_infap.c`` computes it.

The ground truth judges a random sample of a pool: an item with a negative
relevance is in the pool but not judged, an item absent from the ground
truth is outside the pool. Walking the ranked list (0-based rank j), items
outside the pool are skipped, and at each judged relevant item

    term = 1                                             (j = 0)
    term = 1/(j+1) + (j/(j+1)) * ((r-1 + nr + pu) / j) * ((r-1 + eps) / (r-1 + nr + 2 eps))

with r the judged relevant items up to and including it, nr the judged
non-relevant and pu the pooled-but-unjudged items above it, eps = 1e-5
(trec_eval's INFAP_EPSILON). infAP = sum of the terms / R (0 when R = 0).
With a fully judged pool and no unjudged item this is AP up to the epsilon.
The list is read in one order (the tie rule's).
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .trec_lists import NOT_IN_POOL, UNJUDGED, trec_relevance

INFAP_EPSILON = 0.00001


@njit(parallel=True, work="rel_code", writes=("out",))
def _infap(offsets, rel_code, rel_values, n_rel, threshold, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        nonrel = 0.0
        rel = 0.0
        unjudged = 0.0
        total = 0.0
        for j in range(n):
            value = trec_relevance(rel_values, rel_code[a + j])
            if value == NOT_IN_POOL:
                continue
            if value == UNJUDGED:
                unjudged += 1.0
                continue
            if value < threshold:
                nonrel += 1.0
                continue
            rel += 1.0
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1.0 + nonrel + unjudged) / fj) * \
                    ((rel - 1.0 + INFAP_EPSILON) / (rel - 1.0 + nonrel + 2.0 * INFAP_EPSILON))
        out[u] = total / n_rel[u] if n_rel[u] > 0 else 0.0


def infap_values(lists, threshold: float) -> np.ndarray:
    """infAP of every user code (relevances as given: negative = pooled but unjudged)."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _infap(lists.offsets, lists.rel_code, lists.rel_values, lists.n_rel, float(threshold), out)
    return out
