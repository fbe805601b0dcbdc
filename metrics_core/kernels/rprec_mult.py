"""Precision at multiples of R (trec_eval's ``Rprec_mult``).

For a multiple x, the cutoff is c = floor(x R + 0.9) (trec_eval's
conversion), and Rprec_mult(x) = hits@c / c, 0 when c = 0; a list shorter than
c counts its relevant items over c. With ``ties_average`` it is the exact
expectation over the orders of tied items: a tie group of m items with r
relevant that the cutoff cuts after its first q contributes q r / m hits.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end
from .trec_lists import trec_relevance


#: trec_eval's default multiples of R (the same doubles as its C array)
TREC_MULTIPLES = np.array([0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0])


@njit(parallel=True, work="rel_code", writes=("out",))
def _rprec_mult(offsets, rel_code, rel_values, tie_key, n_rel, threshold, multiples, ties_average, out):
    n_users = offsets.shape[0] - 1
    n_multiples = multiples.shape[0]
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        for t in range(n_multiples):
            c = math.floor(multiples[t] * n_rel[u] + 0.9)
            out[u, t] = 0.0
            if c <= 0:
                continue
            hits = 0.0
            s = 0
            while s < n and s < c:
                e = tie_group_end(tie_key, a, s, n, ties_average)
                r = 0.0
                for i in range(s, e):
                    if trec_relevance(rel_values, rel_code[a + i]) >= threshold:
                        r += 1.0
                inside = min(e, c) - s
                hits += r * inside / (e - s)
                s = e
            out[u, t] = hits / c


def rprec_mult_values(lists, threshold: float, multiples, ties_average: bool) -> np.ndarray:
    """(n_users, len(multiples)): Rprec_mult of every user code at each multiple of R."""
    multiples = np.asarray(multiples, dtype=np.float64)
    out = np.zeros((lists.offsets.shape[0] - 1, len(multiples)))
    _rprec_mult(lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key, lists.n_rel, float(threshold),
                multiples, bool(ties_average), out)
    return out
