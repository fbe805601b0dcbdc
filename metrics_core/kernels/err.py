"""Expected reciprocal rank (Chapelle et al. 2009) as the TREC Web track's gdeval computes it.

With grade g_i at rank i (1-based; 0 unless judged >= 0), the chance that the
item satisfies the user is R_i = (2^g_i - 1) / 2^4 (gdeval's largest grade, 4),
and with K = min(k, n) (k = 0: the whole list):

    ERR@k = sum_{i<=K} (1/i) R_i prod_{j<i} (1 - R_j)

Grades above 4 are refused before this kernel (R_i would exceed 1). The list
is read in one order (the tie rule's).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._jit import njit
from .trec_lists import gain

MAX_GRADE = 4.0


@njit(parallel=True, work="rel_code", writes=("out",))
def _err(offsets, rel_code, rel_values, k, out):
    n_users = offsets.shape[0] - 1
    scale = 2.0 ** MAX_GRADE
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        total = 0.0
        decay = 1.0
        for i in range(K):
            r = (2.0 ** gain(rel_values, rel_code[a + i]) - 1.0) / scale
            total += r * decay / (i + 1.0)
            decay *= 1.0 - r
        out[u] = total


def err_values(lists, k: int) -> np.ndarray:
    """ERR@k of every user code."""
    out = np.zeros(lists.offsets.shape[0] - 1)
    _err(lists.offsets, lists.rel_code, lists.rel_values, int(k), out)
    return out
