"""Beyond-accuracy kernels over each user's top-k items (in ranked order).

- ILS@k (intra-list similarity) = mean over pairs i < j of the user's top-k
  items of sim(i, j): cosine of item feature vectors, or Jaccard |A & B| / |A | B|
  of item tag sets. Items without features are skipped; fewer than 2 items -> NaN.
- ILD@k (intra-list diversity, RecTools' ``IntraListDiversity``) = the same mean of
  the Hamming distance d(i, j): the number of feature columns whose values differ,
  or |A ^ B| for tag sets (the same kernel, ``mode`` 2 or 3).
- novelty@k = mean over the top-k items of -log2(pop(i)), pop(i) = share of
  users who interacted with i (an item never seen counts as seen once).

With ties averaged, each metric is its exact expectation over the orders of a
tie group cut by k: ``top_k_inclusion`` gives every row its probability of
being in the top k, which makes novelty, coverage and personalization exact
sums; ILS conditions on how many of the cut group's items enter the top k.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import nb, njit


@njit(inline="always")
def _similarity(x, y, mode, feat_row, features, tag_start, tag_end, tags):
    """Cosine of L2-normalised feature rows (mode 0), Jaccard of sorted tag sets (mode 1), or the
    Hamming distances: feature columns that differ between raw rows (mode 2), tags in one set only (mode 3)."""
    if mode == 0:  # an explicit loop, not np.dot: the same order of additions in the serial and parallel kernels
        fx = features[feat_row[x]]
        fy = features[feat_row[y]]
        dot = 0.0
        for j in range(fx.shape[0]):
            dot += fx[j] * fy[j]
        return dot
    if mode == 2:
        fx = features[feat_row[x]]
        fy = features[feat_row[y]]
        differ = 0
        for j in range(fx.shape[0]):
            if fx[j] != fy[j]:
                differ += 1
        return float(differ)
    ax, bx = tag_start[x], tag_end[x]
    ay, by = tag_start[y], tag_end[y]
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
    if mode == 3:
        return float(union - inter)  # |A ^ B| = |A | B| - |A & B|
    return inter / union if union > 0 else 0.0


@njit(inline="always")
def _log_comb(n, r):
    return math.lgamma(n + 1.0) - math.lgamma(r + 1.0) - math.lgamma(n - r + 1.0)


@njit(inline="always")
def tie_group_end(tie_key, a, s, n, ties_average):
    """End (exclusive, relative to ``a``) of the tie group starting at ``s``: s + 1 unless ties are averaged."""
    e = s + 1
    if ties_average:
        while e < n and tie_key[a + e] == tie_key[a + s]:
            e += 1
    return e


@njit(inline="always")
def cut_tie_group(score, a, n, K, ties_average):
    """Bounds [gs, ge) (relative to ``a``) of the tie group that the cutoff K splits,
    or (K, K) when K falls between groups (or ties are not averaged)."""
    gs, ge = K, K
    if ties_average and 0 < K < n and score[a + K - 1] == score[a + K]:
        gs = K - 1
        while gs > 0 and score[a + gs - 1] == score[a + K - 1]:
            gs -= 1
        ge = K + 1
        while ge < n and score[a + ge] == score[a + K - 1]:
            ge += 1
    return gs, ge


#: item pairs compared by :func:`ils` as Python in the time of one row of a small evaluate as Python (about
#: 2.4 microseconds a pair against 25 a row, measured on 45,000 rows)
PAIRS_PER_ROW = 10


def pairs_in_cutoff(offsets, item, score, k, *_) -> int:
    """The work of :func:`ils`'s Python form in rows' worth (see ``interpret_until_compiled``): the item pairs
    it compares, sum over users of C(K, 2) with K = min(k, n) (a tie group cut by k adds its items past K;
    not counted here), over :data:`PAIRS_PER_ROW`. It grows as k squared."""
    n = np.diff(offsets)
    K = n if k == 0 else np.minimum(n, k)
    return int((K * (K - 1) // 2).sum()) // PAIRS_PER_ROW


@njit(parallel=True, work="item", python_work=pairs_in_cutoff)
def ils(offsets, item, score, k, ties_average, known, mode, feat_row, features, tag_start, tag_end, tags):
    """Per-user intra-list similarity (mode 0, 1) or Hamming distance (mode 2, 3; see
    :func:`_similarity`) of the top k, averaged over pairs (NaN below 2 items with features).

    Without ties: mean similarity over pairs of the top-k items that have features.
    With ``ties_average`` and a tie group of ``m`` items cut by k (``c`` of its
    positions inside), the exact expectation over the group's orders: the
    ``j`` selected group items with features follow a hypergeometric law, and
    given ``j`` the expected pair sum is S_CC + (j/mk) S_CG + j(j-1)/(mk(mk-1)) S_GG
    (C: certain items, G: the group's items with features, mk = |G|), over
    C(|C| + j, 2) pairs; outcomes with fewer than 2 items are left out.
    """
    n_users = offsets.shape[0] - 1
    out = np.full(n_users, np.nan)
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        gs, ge = cut_tie_group(score, a, n, K, ties_average)
        # items with features: the nc certain ones (before the cut group), then the group's mk
        pool = np.empty(ge, dtype=np.int64)
        nc = 0
        for i in range(gs):
            if known[item[a + i]]:
                pool[nc] = item[a + i]
                nc += 1
        mk = 0
        for i in range(gs, ge):
            if known[item[a + i]]:
                pool[nc + mk] = item[a + i]
                mk += 1
        # pair sums within C, between C and G, within G; one loop, so _similarity is inlined (and
        # compiled) once; each sum still adds its pairs in (x, y) order
        s_cc = 0.0
        s_cg = 0.0
        s_gg = 0.0
        for x in range(nc + mk):
            for y in range(x + 1, nc + mk):
                sim = _similarity(pool[x], pool[y], mode, feat_row, features, tag_start, tag_end, tags)
                if y < nc:
                    s_cc += sim
                elif x < nc:
                    s_cg += sim
                else:
                    s_gg += sim
        if ge == gs:
            if nc >= 2:
                out[u] = s_cc / (nc * (nc - 1) / 2.0)
            continue
        m = ge - gs
        c = K - gs
        mu = m - mk
        total = 0.0
        weight = 0.0
        for j in range(max(0, c - mu), min(c, mk) + 1):
            if nc + j < 2:
                continue
            p = math.exp(_log_comb(mk, j) + _log_comb(mu, c - j) - _log_comb(m, c))
            e = s_cc
            if j > 0:
                e += (j / mk) * s_cg
            if j > 1:
                e += j * (j - 1.0) / (mk * (mk - 1.0)) * s_gg
            total += p * e / ((nc + j) * (nc + j - 1) / 2.0)
            weight += p
        if weight > 0.0:
            out[u] = total / weight
    return out


@njit(parallel=True, work="score")
def top_k_inclusion(offsets, score, k, ties_average):
    """Probability that each ranked row is inside its user's top k.

    1 for rows before k, 0 after; with ``ties_average``, the rows of a tie group
    cut by k get c/m (c of its m positions are inside the cutoff).
    """
    n = offsets[-1]
    p = np.zeros(n)
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        m_all = offsets[u + 1] - a
        K = m_all if k == 0 else min(k, m_all)
        for i in range(K):
            p[a + i] = 1.0
        gs, ge = cut_tie_group(score, a, m_all, K, ties_average)
        if ge > gs:
            frac = (K - gs) / (ge - gs)
            for i in range(gs, ge):
                p[a + i] = frac
    return p


def self_information(counts: np.ndarray, n_users: int) -> np.ndarray:
    """-log2(pop), pop = count / n_users with unseen items counted once."""
    c = np.maximum(counts.astype(np.float64), 1.0)
    return -np.log2(c / max(n_users, 1))

