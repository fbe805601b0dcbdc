"""Expected reciprocal rank (Chapelle et al. 2009) as the TREC Web track's gdeval computes it.

With grade g_i at rank i (1-based; 0 unless judged >= 0), the chance that the
item satisfies the user is R_i = (2^g_i - 1) / 2^4 (gdeval's largest grade, 4),
and with K = min(k, n) (k = 0: the whole list):

    ERR@k = sum_{i<=K} (1/i) R_i prod_{j<i} (1 - R_j)

Grades above 4 are refused before this kernel (R_i would exceed 1).

Ties. With ``ties_average`` the value is the exact expectation over the orders
of each tie group. A group's product of (1 - R) does not depend on its order,
so only the terms inside a group are averaged: at offset t of a group of m
items, E[R_{pi(t)} prod_{j<t} (1 - R_{pi(j)})] = (1/m) sum_x R_x f_t(x), with
f_t(x) the mean of prod (1 - R_y) over the t-subsets of the group's other items,
built one item at a time by f'_t = ((n+1-t) f_t + t q f_{t-1}) / (n+1) (n items
so far, q = 1 - R of the added one: every weight in [0, 1], no overflow). Items
of one grade are alike, so f is built once per grade of the group, up to the
offsets inside the cutoff.
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end
from .trec_lists import gain

MAX_GRADE = 4.0


@njit(inline="always")
def satisfaction(rel_values, code):
    """R = (2^g - 1) / 2^MAX_GRADE of a ranked row."""
    return (2.0 ** gain(rel_values, code) - 1.0) / 2.0 ** MAX_GRADE


@njit(parallel=True, work="rel_code", writes=("out",))
def _err(offsets, rel_code, rel_values, tie_key, k, ties_average, out):
    n_users = offsets.shape[0] - 1
    n_codes = rel_values.shape[0]
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        total = 0.0
        decay = 1.0
        count = np.zeros(n_codes)
        s = 0
        while s < K:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            m = e - s
            if m == 1:
                r = satisfaction(rel_values, rel_code[a + s])
                total += r * decay / (s + 1.0)
                decay *= 1.0 - r
                s = e
                continue
            T = min(e, K) - s  # offsets of the group inside the cutoff
            for i in range(s, e):
                count[rel_code[a + i]] += 1.0
            f = np.empty(T)
            for i in range(s, e):
                c = rel_code[a + i]
                if count[c] == 0.0:  # this grade is done
                    continue
                r = satisfaction(rel_values, c)
                if r > 0.0:
                    f[:] = 0.0
                    f[0] = 1.0
                    size = 0.0
                    skipped = False
                    for j in range(s, e):  # the group without one item of grade c
                        if rel_code[a + j] == c and not skipped:
                            skipped = True
                            continue
                        q = 1.0 - satisfaction(rel_values, rel_code[a + j])
                        for t in range(min(int(size) + 1, T - 1), 0, -1):
                            f[t] = ((size + 1.0 - t) * f[t] + t * q * f[t - 1]) / (size + 1.0)
                        size += 1.0
                    share = count[c] / m
                    for t in range(T):
                        total += decay * share * r * f[t] / (s + t + 1.0)
                count[c] = 0.0
            for i in range(s, e):
                count[rel_code[a + i]] = 0.0
                decay *= 1.0 - satisfaction(rel_values, rel_code[a + i])
            s = e
        out[u] = total


def err_values(lists, k: int, ties_average: bool) -> np.ndarray:
    """ERR@k of every user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _err(lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key, int(k), bool(ties_average), out)
    return out
