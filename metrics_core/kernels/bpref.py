"""bpref (Buckley and Voorhees 2004) as trec_eval computes it, over each user's whole ranked list.

For one user with R relevant and N judged non-relevant items in the ground
truth, walking the ranked list and skipping unjudged items, ``f(x)`` is the
number of judged non-relevant items ranked above relevant item x:

    bpref = (1 / R) sum over ranked relevant x of (1 - min(f(x), R) / min(R, N))

(a term is 1 when ``f(x) = 0``, also when N = 0; bpref is 0 when R = 0).
Relevant items missing from the list add nothing. A judged item is
non-relevant when its relevance is from 0 to below the threshold; a negative
relevance counts as unjudged, as trec_eval reads -1 ("not in the pool").

Ties. With ``ties_average`` every tie group is a uniformly random order of its
items, and the value is its exact expectation: unjudged items do not count, so
for a relevant item of a group with q judged non-relevant items the number of
them before it is uniform on 0..q (as for pAUC).
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end


@njit(inline="always")
def _term(f, R, denominator):
    """1 - min(f, R) / min(R, N) (1 when no judged non-relevant item is ranked above)."""
    return 1.0 if f == 0 else 1.0 - min(f, R) / denominator


@njit(parallel=True, work="rel_code", writes=("out",))
def bpref(offsets, rel_code, rel_values, tie_key, ideal_offsets, ideal_rel, threshold, ties_average, out):
    """Fill ``out[u]`` with bpref of every user code (``rel_code`` 0 = unjudged, as a negative relevance)."""
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        R = 0.0
        N = 0.0
        for j in range(ideal_offsets[u], ideal_offsets[u + 1]):
            if ideal_rel[j] >= threshold:
                R += 1.0
            elif ideal_rel[j] >= 0.0:
                N += 1.0
        if R == 0.0:
            out[u] = 0.0
            continue
        denominator = min(R, N)
        a = offsets[u]
        n = offsets[u + 1] - a
        F = 0.0  # judged non-relevant items before the current group
        total = 0.0
        s = 0
        while s < n:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            r = 0.0
            q = 0.0
            for i in range(s, e):
                code = rel_code[a + i]
                if code != 0:
                    if rel_values[code] >= threshold:
                        r += 1.0
                    elif rel_values[code] >= 0.0:
                        q += 1.0
            if r > 0.0:
                mean = 0.0
                for j in range(int(q) + 1):
                    mean += _term(F + j, R, denominator)
                total += r * mean / (q + 1.0)
            F += q
            s = e
        out[u] = total / R


def bpref_values(lists, threshold: float, ties_average: bool) -> np.ndarray:
    """bpref per user code from the ranking kernels' :class:`~.ranking.RankedLists`."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    bpref(lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key, lists.ideal_offsets, lists.ideal_rel,
          float(threshold), bool(ties_average), out)
    return out
