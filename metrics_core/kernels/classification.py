"""Scored-row (classification / CTR) kernels over label and score arrays.

``y`` is the binary label (0/1, from relevance >= threshold), ``p`` the score.

- ROC AUC = P(score of a random positive > score of a random negative), ties
  counting one half: (sum over positives of #neg below + 0.5 #neg equal) / (P N).
- Average precision (pr_auc), as scikit-learn: sum_n (R_n - R_{n-1}) P_n over
  the distinct score thresholds in descending order.
- Log loss = -mean(y log p + (1 - y) log(1 - p)) with p clipped to
  [eps, 1 - eps], eps = float64 machine epsilon (scikit-learn's rule).
- GAUC = sum_u w_u AUC_u / sum_u w_u over users whose rows hold both classes;
  w_u = rows, positives or 1.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ._jit import nb, njit, parallel_chunks


def roc_auc(y: np.ndarray, p: np.ndarray) -> float:
    """ROC AUC with ties counted one half; NaN if only one class is present.

    One pass splits the scores into positives and negatives; the parts are
    sorted on every core at once (the negatives in one block per core, so
    together they cost at most one sort of the column) and each negative block
    is merged with the positives in one linear pass:
    AUC = sum over blocks of merge(pos, neg_block) / (P N).
    """
    n_chunks = max(1, min(os.cpu_count() or 1, y.shape[0] // 1_000_000))
    pos_counts = _count_positive(y, n_chunks)
    n_pos = int(pos_counts.sum())
    n_neg = y.shape[0] - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    pos, neg, neg_bounds = _split_by_label(y, p, pos_counts)
    parts = [pos] + [neg[neg_bounds[b]:neg_bounds[b + 1]] for b in range(n_chunks)]
    if n_chunks == 1:
        for part in parts:
            part.sort()
        total = _auc_merge(pos, neg)
    else:  # numpy's sort and the compiled merge both release the GIL
        with ThreadPoolExecutor(n_chunks) as pool:
            list(pool.map(np.ndarray.sort, sorted(parts, key=len, reverse=True)))
            total = sum(pool.map(lambda part: _auc_merge(pos, part), parts[1:]))
    return float(total / (n_pos * n_neg))


@njit(parallel=True, work="y")
def _count_positive(y, n_chunks):
    """Positive rows in each of ``n_chunks`` contiguous chunks of ``y``."""
    counts = np.zeros(n_chunks, dtype=np.int64)
    for t in nb.prange(n_chunks):
        lo, hi = parallel_chunks(y.shape[0], n_chunks, t)
        n = 0
        for i in range(lo, hi):
            if y[i] > 0.5:
                n += 1
        counts[t] = n
    return counts


@njit(parallel=True, work="y")
def _split_by_label(y, p, pos_counts):
    """Scores of the positive rows and of the negative rows, chunk by chunk in parallel.

    Returns ``(pos, neg, neg_bounds)``: chunk ``t``'s negatives are
    ``neg[neg_bounds[t]:neg_bounds[t + 1]]``.
    """
    n_chunks = pos_counts.shape[0]
    n = y.shape[0]
    pos_start = np.zeros(n_chunks + 1, dtype=np.int64)
    neg_bounds = np.zeros(n_chunks + 1, dtype=np.int64)
    for t in range(n_chunks):
        lo, hi = parallel_chunks(n, n_chunks, t)
        pos_start[t + 1] = pos_start[t] + pos_counts[t]
        neg_bounds[t + 1] = neg_bounds[t] + (hi - lo) - pos_counts[t]
    pos = np.empty(pos_start[n_chunks], dtype=np.float64)
    neg = np.empty(neg_bounds[n_chunks], dtype=np.float64)
    for t in nb.prange(n_chunks):
        lo, hi = parallel_chunks(n, n_chunks, t)
        a = pos_start[t]
        b = neg_bounds[t]
        for i in range(lo, hi):
            if y[i] > 0.5:
                pos[a] = p[i]
                a += 1
            else:
                neg[b] = p[i]
                b += 1
    return pos, neg, neg_bounds


@njit
def _auc_merge(pos, neg):
    """sum over positives of (#negatives below + 0.5 #negatives equal), both inputs sorted."""
    total = 0.0
    below = 0  # negatives strictly below the current positive score
    j = 0
    n_neg = neg.shape[0]
    i = 0
    n_pos = pos.shape[0]
    while i < n_pos:
        v = pos[i]
        while below < n_neg and neg[below] < v:
            below += 1
        j = below
        while j < n_neg and neg[j] == v:
            j += 1
        e = i
        while e < n_pos and pos[e] == v:
            e += 1
        total += (e - i) * (below + 0.5 * (j - below))
        i = e
    return total


def average_precision(y: np.ndarray, p: np.ndarray) -> float:
    """scikit-learn's average_precision_score for binary labels; NaN without positives."""
    order = np.argsort(-p, kind="stable")
    ys, ps = y[order], p[order]
    n_pos = ys.sum()
    if n_pos == 0:
        return float("nan")
    last = np.flatnonzero(np.r_[ps[1:] != ps[:-1], True])
    tps = np.cumsum(ys)[last]
    fps = (last + 1) - tps
    precision = tps / (tps + fps)
    recall = tps / n_pos
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def log_loss(y: np.ndarray, p: np.ndarray) -> float:
    """Mean binary cross-entropy; ``p`` must already be checked to lie in [0, 1]."""
    if p.shape[0] == 0:
        return float("nan")
    return float(log_loss_sum(y, p) / p.shape[0])


def log_loss_sum(y: np.ndarray, p: np.ndarray) -> float:
    """Sum of the binary cross-entropy of every row (``p`` checked to lie in [0, 1]; 0.0 without rows)."""
    if p.shape[0] == 0:
        return 0.0
    n_chunks = max(1, min(64, p.shape[0] // LOG_LOSS_CHUNK))
    return float(_log_loss_sum(y, p, np.finfo(np.float64).eps, n_chunks).sum())


# rows per chunk of the log-loss sum: the chunks, not the threads, fix the order of the
# additions, so the serial and parallel kernels (and any thread count) give the same sum
LOG_LOSS_CHUNK = 65_536


@njit(parallel=True, work="p")
def _log_loss_sum(y, p, eps, n_chunks):
    """Per chunk, sum of -(y log q + (1 - y) log(1 - q)), q = clip(p, eps, 1 - eps); one log per row."""
    totals = np.zeros(n_chunks)
    for t in nb.prange(n_chunks):
        lo, hi = parallel_chunks(p.shape[0], n_chunks, t)
        total = 0.0
        for i in range(lo, hi):
            q = min(max(p[i], eps), 1.0 - eps)
            if y[i] > 0.5:
                total -= math.log(q)
            else:
                total -= math.log1p(-q)
        totals[t] = total
    return totals


@njit(parallel=True, work="score")
def per_user_auc(offsets, score, y):
    """AUC of each user's rows (already sorted by score descending); NaN for one class.

    Returns (auc, positives, rows) per user.
    """
    n_users = offsets.shape[0] - 1
    auc = np.full(n_users, np.nan)
    npos = np.zeros(n_users)
    nrows = np.zeros(n_users)
    for u in nb.prange(n_users):
        a = offsets[u]
        b = offsets[u + 1]
        P = 0.0
        for i in range(a, b):
            P += y[i]
        N = (b - a) - P
        npos[u] = P
        nrows[u] = b - a
        if P == 0.0 or N == 0.0:
            continue
        neg_above = 0.0
        total = 0.0
        i = a
        while i < b:
            e = i + 1
            while e < b and score[e] == score[i]:
                e += 1
            pg = 0.0
            for j in range(i, e):
                pg += y[j]
            ng = (e - i) - pg
            total += pg * (N - neg_above - ng + 0.5 * ng)
            neg_above += ng
            i = e
        auc[u] = total / (P * N)
    return auc, npos, nrows
