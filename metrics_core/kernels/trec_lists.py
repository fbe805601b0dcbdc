"""What trec_eval's measures read of one ranked row, and the counts of a whole ranked list.

trec_eval (``form_res_rels.c``) gives each retrieved document one of three
states: not in the ground truth ("not in the pool"), in it with a negative
relevance ("in the pool but unjudged", as infAP's sampled pools write -1), or
judged with a relevance >= 0. Here a ranked row's relevance code 0 is the
first state and ``rel_values[code] < 0`` the second.

The counts over a user's whole list (``set_counts``) are those of trec_eval's
set measures: ``num_ret`` (rows), ``num_rel_ret`` (relevant rows: relevance
>= threshold) and ``num_nonrel_judged_ret`` (judged rows with 0 <= relevance
< threshold). They do not depend on the order of the list, so every tie rule
gives them exactly.
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit

NOT_IN_POOL = -1.0
UNJUDGED = -2.0
#: columns of set_counts' output
NUM_RET, NUM_REL_RET, NUM_NONREL_JUDGED_RET = 0, 1, 2


@njit(inline="always")
def trec_relevance(rel_values, code):
    """The relevance trec_eval reads for a ranked row: NOT_IN_POOL, UNJUDGED or the judged value (>= 0)."""
    if code == 0:
        return NOT_IN_POOL
    value = rel_values[code]
    return UNJUDGED if value < 0.0 else value


@njit(inline="always")
def gain(rel_values, code):
    """The gain of a ranked row as trec_eval's gain measures read it: its relevance, 0 unless judged >= 0."""
    value = trec_relevance(rel_values, code)
    return value if value > 0.0 else 0.0


@njit(inline="always")
def ideal_gain(ideal_rel, a, b, j):
    """The j-th (0-based) gain of the ideal list ideal_rel[a:b] (sorted descending), 0 beyond it."""
    if a + j < b:
        value = ideal_rel[a + j]
        return value if value > 0.0 else 0.0
    return 0.0


@njit(parallel=True, work="rel_code", writes=("out",))
def _set_counts(offsets, rel_code, rel_values, threshold, out):
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        rel_ret = 0.0
        nonrel = 0.0
        for i in range(offsets[u], offsets[u + 1]):
            value = trec_relevance(rel_values, rel_code[i])
            if value >= threshold:
                rel_ret += 1.0
            elif value >= 0.0:
                nonrel += 1.0
        out[u, NUM_RET] = offsets[u + 1] - offsets[u]
        out[u, NUM_REL_RET] = rel_ret
        out[u, NUM_NONREL_JUDGED_RET] = nonrel


def set_counts(lists, threshold: float) -> np.ndarray:
    """(n_users, 3) array: num_ret, num_rel_ret, num_nonrel_judged_ret of every user code."""
    out = np.zeros((lists.offsets.shape[0] - 1, 3))
    _set_counts(lists.offsets, lists.rel_code, lists.rel_values, float(threshold), out)
    return out
