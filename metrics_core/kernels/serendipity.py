"""Per-user serendipity in RecTools' definition (``serendipity_pop@k``).

For a user's ranked list over a catalogue of N items, the item at 1-based rank
i contributes ``max(p(i) - pu(i), 0) h_i`` with ``p(i) = (N + 1 - i) / N``,
``pu(i) = (N + 1 - prank(item)) / N`` (``prank``: dense rank of the item's
popularity, 1 = most popular; ``pu = 0`` for items without interactions) and
``h_i`` = 1 for a relevant item; the value is the sum over the top K
(= min(k, n)) divided by K.

The term depends on both the position and the item, so with ``ties_average``
each item of a tie group takes each of the group's positions with probability
1/m: the exact expectation sums ``term(j, x) / m`` over the group's items x and
its positions j inside the cutoff.
"""

from __future__ import annotations

import numpy as np

from ._jit import nb, njit
from .diversity import tie_group_end


@njit(inline="always")
def _term(j, prank, n_items):
    """max(p - pu, 0) for 0-based position j and popularity rank prank (0: no interactions)."""
    p = (n_items - j) / n_items
    pu = (n_items + 1.0 - prank) / n_items if prank > 0 else 0.0
    return p - pu if p > pu else 0.0


@njit(parallel=True, work="items")
def serendipity_pop(offsets, items, label, tie_key, k, ties_average, prank, n_items):
    """Per-user value (NaN for empty lists); ``items`` / ``label`` in ranked order, ``prank`` per item code."""
    n_users = offsets.shape[0] - 1
    out = np.full(n_users, np.nan)
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        if K == 0:
            continue
        total = 0.0
        s = 0
        while s < K:
            e = tie_group_end(tie_key, a, s, n, ties_average)
            m = e - s
            c = min(K - s, m)
            for x in range(s, e):
                if label[a + x] > 0.5:
                    if m == 1:
                        total += _term(s, prank[items[a + x]], n_items)
                    else:
                        for j in range(s, s + c):
                            total += _term(j, prank[items[a + x]], n_items) / m
            s = e
        out[u] = total / K
    return out
