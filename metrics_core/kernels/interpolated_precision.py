"""Interpolated precision at recall levels (trec_eval's ``iprec_at_recall`` and ``11pt_avg``).

For one user with R relevant items, the level x is the c-th relevant
retrieved item, c = x R rounded to the nearest (half away from zero: trec_eval
10's ``lround``) or, with ``add_point_nine``, c = floor(x R + 0.9) (earlier
trec_eval, which pytrec_eval bundles). The interpolated precision at it is the largest precision at
any rank from that item's rank to the end of the list:

    iprec(x) = max_{i >= rank of the c-th relevant item} hits@i / i

with c = 0 read as the first relevant item, and 0 when fewer than c relevant
items are retrieved (or none is). ``11pt_avg`` is the mean of iprec over the
levels 0, 0.1, ..., 1.0 (:data:`ELEVEN_LEVELS`, one pass for all of them). The list is read in one order (the tie rule's);
averaging over the orders of tied items is not offered.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit
from .trec_lists import trec_relevance

#: trec_eval's eleven recall levels (the same doubles as its C array)
ELEVEN_LEVELS = np.array([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0])


@njit(inline="always")
def relevant_count(v, add_point_nine):
    """x R as a count of relevant items: floor(v + 0.9), or v rounded half away from zero (v >= 0)."""
    if add_point_nine:
        return math.floor(v + 0.9)
    r = math.floor(v)
    return r + 1.0 if v - r >= 0.5 else r


@njit(parallel=True, work="rel_code", writes=("out",))
def _iprec(offsets, rel_code, rel_values, n_rel, threshold, levels, add_point_nine, out):
    n_users = offsets.shape[0] - 1
    n_levels = levels.shape[0]
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        rel_ret = 0
        for i in range(n):
            if trec_relevance(rel_values, rel_code[a + i]) >= threshold:
                rel_ret += 1
        for t in range(n_levels):
            out[u, t] = 0.0
        if rel_ret == 0:
            continue
        # walk back from the end: best = max precision at ranks >= the current relevant item
        best = 0.0
        seen = rel_ret
        for i in range(n - 1, -1, -1):
            if trec_relevance(rel_values, rel_code[a + i]) >= threshold:
                precision = seen / (i + 1.0)
                if precision > best:
                    best = precision
                for t in range(n_levels):
                    c = relevant_count(levels[t] * n_rel[u], add_point_nine)
                    if c == seen or (c == 0.0 and seen == 1):
                        out[u, t] = best
                seen -= 1


def iprec_values(lists, threshold: float, levels, add_point_nine: bool) -> np.ndarray:
    """(n_users, len(levels)): interpolated precision of every user code at each recall level."""
    levels = np.asarray(levels, dtype=np.float64)
    out = np.zeros((lists.offsets.shape[0] - 1, len(levels)))
    _iprec(lists.offsets, lists.rel_code, lists.rel_values, lists.n_rel, float(threshold), levels,
           bool(add_point_nine), out)
    return out
