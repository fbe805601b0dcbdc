"""The compiled-loop floor: the least work any evaluation tool must do.

A minimal numba loop over users, run on every core (the kernel releases the
GIL; a thread pool gives each core a contiguous block of users), over arrays that are
already contiguous by user with the relevance of every row already joined (the
data generator knows it by construction), so it does no id factorisation, no
join and no global sort.  Per user it sorts the user's candidates by score
(descending, stable: equal scores keep input order) and computes, in one pass:

    ndcg@k1     DCG@k = sum_{r<=k} rel_r / log2(r + 1) (linear gain), divided by
                the DCG@k of the ideal ranking of *all* judged items of the user
    map@k2      AP@k = (1 / R) * sum_{r<=k, rel_r>0} hits(r) / r, R = number of
                relevant items in the ground truth (retrieved or not)
    mrr@k3      1 / rank of the first relevant item if that rank <= k, else 0
    precision@k4  hits in the top k / k
    recall@k5   hits in the top k / R

with ``relevant = relevance >= 1`` (trec_eval and ranx conventions).  Users with
R = 0 get 0 everywhere (the generator never makes one).  The summary is the mean
over users.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

METRICS = ("ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100")


@numba.njit(cache=True, nogil=True)
def _users(lo, hi, offsets, scores, row_rel, qrel_offsets, qrel_rel, k_ndcg, k_map, k_mrr, k_p, k_rec, out):
    for u in range(lo, hi):
        s = offsets[u]
        e = offsets[u + 1]
        qs = qrel_offsets[u]
        qe = qrel_offsets[u + 1]
        n_rel = 0
        for i in range(qs, qe):
            if qrel_rel[i] >= 1:
                n_rel += 1
        if n_rel == 0:
            continue
        ideal = np.sort(qrel_rel[qs:qe])
        idcg = 0.0
        n_ideal = min(k_ndcg, qe - qs)
        for r in range(n_ideal):
            g = ideal[qe - qs - 1 - r]
            if g > 0:
                idcg += g / math.log2(r + 2.0)
        order = np.argsort(-scores[s:e], kind="mergesort")
        dcg = 0.0
        ap = 0.0
        rr = 0.0
        hits = 0
        hits_p = 0
        hits_rec = 0
        for r in range(e - s):
            rel = row_rel[s + order[r]]
            if rel >= 1:
                hits += 1
                if r < k_ndcg:
                    dcg += rel / math.log2(r + 2.0)
                if r < k_map:
                    ap += hits / (r + 1.0)
                if r < k_mrr and rr == 0.0:
                    rr = 1.0 / (r + 1.0)
                if r < k_p:
                    hits_p += 1
                if r < k_rec:
                    hits_rec += 1
        out[0, u] = dcg / idcg if idcg > 0 else 0.0
        out[1, u] = ap / n_rel
        out[2, u] = rr
        out[3, u] = hits_p / k_p
        out[4, u] = hits_rec / n_rel


def per_user(offsets, scores, row_rel, qrel_offsets, qrel_rel, ks=(10, 100, 10, 10, 100),
             threads: int | None = None) -> np.ndarray:
    """Per-user values, shape (5, n_users), rows in the order of :data:`METRICS`."""
    n_users = offsets.size - 1
    out = np.zeros((5, n_users))
    threads = threads or os.cpu_count() or 1
    bounds = np.linspace(0, n_users, min(threads, max(n_users, 1)) + 1).astype(np.int64)

    def block(t):
        _users(bounds[t], bounds[t + 1], offsets, scores, row_rel, qrel_offsets, qrel_rel, *ks, out)

    if len(bounds) <= 2:
        block(0)
    else:
        with ThreadPoolExecutor(len(bounds) - 1) as pool:
            list(pool.map(block, range(len(bounds) - 1)))
    return out


def means(ds) -> dict[str, float]:
    """The five means over users of a :class:`benchmarks.datagen.Dataset`."""
    values = per_user(ds.offsets, ds.scores, ds.row_relevance, ds.qrel_offsets, ds.qrel_relevance)
    return {name: float(values[i].mean()) for i, name in enumerate(METRICS)}
