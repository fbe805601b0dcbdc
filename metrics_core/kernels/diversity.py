"""Beyond-accuracy kernels over each user's top-k items (in ranked order).

- ILS@k (intra-list similarity) = mean over pairs i < j of the user's top-k
  items of sim(i, j): cosine of item feature vectors, or Jaccard |A & B| / |A | B|
  of item tag sets. Items without features are skipped; fewer than 2 items -> NaN.
- novelty@k = mean over the top-k items of -log2(pop(i)), pop(i) = share of
  users who interacted with i (an item never seen counts as seen once).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ._jit import njit


@njit(parallel=True)
def ils_cosine(offsets, item, k, feat_row, features):
    """Per-user mean pairwise cosine similarity of the top-k items.

    ``feat_row[item]`` is the row of ``features`` (L2-normalised) or -1.
    """
    n_users = offsets.shape[0] - 1
    out = np.full(n_users, np.nan)
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1] if k == 0 else min(offsets[u + 1], a + k)
        rows = np.empty(b - a, dtype=np.int64)
        m = 0
        for i in range(a, b):
            r = feat_row[item[i]]
            if r >= 0:
                rows[m] = r
                m += 1
        if m < 2:
            continue
        total = 0.0
        for x in range(m):
            for y in range(x + 1, m):
                total += np.dot(features[rows[x]], features[rows[y]])
        out[u] = total / (m * (m - 1) / 2.0)
    return out


@njit(parallel=True)
def ils_jaccard(offsets, item, k, tag_start, tag_end, tags):
    """Per-user mean pairwise Jaccard similarity of the top-k items' tag sets.

    Tags of item ``i`` are ``tags[tag_start[i]:tag_end[i]]``, sorted and unique;
    ``tag_start[i] == -1`` marks an item without features.
    """
    n_users = offsets.shape[0] - 1
    out = np.full(n_users, np.nan)
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1] if k == 0 else min(offsets[u + 1], a + k)
        its = np.empty(b - a, dtype=np.int64)
        m = 0
        for i in range(a, b):
            if tag_start[item[i]] >= 0:
                its[m] = item[i]
                m += 1
        if m < 2:
            continue
        total = 0.0
        for x in range(m):
            ax, bx = tag_start[its[x]], tag_end[its[x]]
            for y in range(x + 1, m):
                ay, by = tag_start[its[y]], tag_end[its[y]]
                i, j, inter = ax, ay, 0
                while i < bx and j < by:
                    if tags[i] == tags[j]:
                        inter += 1
                        i += 1
                        j += 1
                    elif tags[i] < tags[j]:
                        i += 1
                    else:
                        j += 1
                union = (bx - ax) + (by - ay) - inter
                total += inter / union if union > 0 else 0.0
        out[u] = total / (m * (m - 1) / 2.0)
    return out


@njit(parallel=True)
def novelty(offsets, item, k, self_information):
    """Per-user mean self-information of the top-k items (NaN for an empty list)."""
    n_users = offsets.shape[0] - 1
    out = np.full(n_users, np.nan)
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1] if k == 0 else min(offsets[u + 1], a + k)
        if b <= a:
            continue
        total = 0.0
        for i in range(a, b):
            total += self_information[item[i]]
        out[u] = total / (b - a)
    return out


def top_k_mask(offsets: np.ndarray, k: int) -> np.ndarray:
    """Boolean mask of ranked rows within each user's top k (k = 0: all rows)."""
    n = int(offsets[-1])
    if k == 0:
        return np.ones(n, dtype=bool)
    lengths = np.diff(offsets)
    rank = np.arange(n) - np.repeat(offsets[:-1], lengths)
    return rank < k


def self_information(counts: np.ndarray, n_users: int) -> np.ndarray:
    """-log2(pop), pop = count / n_users with unseen items counted once."""
    c = np.maximum(counts.astype(np.float64), 1.0)
    return -np.log2(c / max(n_users, 1))

