"""The per-user ranking kernel: every ranking metric family at one cutoff, one pass.

Inputs are the ranked CSR arrays (each user's rows sorted by score descending);
the relevance of ranked row i is ``rel_values[rel_code[i]]``.
Tie groups are found by equality of neighbours in ``score``, which may be the
scores themselves or the layout's one-byte tie key (:attr:`Ranked.tie_key`).
For each user ``u`` it fills one row of ``out`` with the columns of ``FAMILIES``.

Notation for one user: ``rel_i`` the relevance at rank ``i`` (1-based), ``g(rel)``
the gain (linear ``max(rel, 0)`` or exponential ``2**max(rel, 0) - 1``), ``h_i``
= 1 if ``rel_i >= threshold`` else 0, ``R`` the number of relevant items in the
ground truth, ``n`` the list length, ``K = min(k, n)`` (``k = 0`` means the whole
list, then ``K = n``), ``kk = k`` (or ``n`` without a cutoff).

- CG@k  = sum_{i<=K} g(rel_i)
- DCG@k = sum_{i<=K} g(rel_i) / log2(i + 1) (discounts read from ``disc_table``,
  ``disc_table[j] = 1 / log2(j + 2)``, long enough for every list, ideal list and k)
- NDCG@k = DCG@k / IDCG@k; IDCG from the ideal gains (all judged items sorted
  descending, the retrieved list re-sorted, or ``kk`` items of relevance 1), cut at k; 0 when IDCG = 0.
- AP@k = (1/D) sum_{i<=K} h_i * P@i, with D = R ("relevant"), min(k, R)
  ("min_k"), sum_{i<=K} h_i ("retrieved") or k ("k"); 0 when D = 0.
- RR@k = 1 / (rank of the first relevant item) if it is within K, else 0.
- P@k = hits@K / kk;  R@k = hits@K / R;  F1@k = 2 hits / (kk + R) (the harmonic
  mean of P@k and R@k); HIT@k = 1 if hits@K > 0; R-prec = hits@R / R.

Ties. With ``ties_average`` every run of equal scores (a tie group) is treated
as a uniformly random order of its items and each metric is its exact expected
value over those orders (not an approximation): sums of per-position terms use
the group's mean gain; the hit probability uses the hypergeometric chance that
no relevant item falls inside the cutoff; RR uses the distribution of the first
relevant position in the group; AP uses E[h_i * hits@i] = (r/m)(b + 1 + j (r-1)/(m-1))
for offset j in a group of m items with r relevant after b certain hits, and for
the "retrieved" normalisation conditions on the hypergeometric number of hits
in the part of the group cut by k. Without it, every position is its own group.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

from ._jit import njit
from .sorting import sorted_desc

# the kernel's columns (compile-time constants inside the kernels); families computed after it are
# the registry's entries with a ``derive`` (metrics_core.derived)
KERNEL_FAMILIES = ("cg", "dcg", "ndcg", "ap", "rr", "precision", "recall", "f1", "hit", "r_precision", "hits")
FAMILIES = KERNEL_FAMILIES
HITS_COLUMN = "hits"  # expected relevant items in the top k: read by the families derived from hits@k
GAIN_FAMILIES = KERNEL_FAMILIES[:3]  # the columns the gain convention changes (CG, DCG, NDCG)
FAMILY_INDEX = {name: i for i, name in enumerate(FAMILIES)}
N_FAMILIES = len(FAMILIES)
# column of each family (compile-time constants inside the kernels)
CG, DCG, NDCG, AP, RR = (FAMILY_INDEX[f] for f in KERNEL_FAMILIES[:5])
PRECISION, RECALL, F1, HIT, R_PRECISION, HITS = (FAMILY_INDEX[f] for f in KERNEL_FAMILIES[5:])

GAIN_LINEAR, GAIN_EXPONENTIAL = 0, 1
IDEAL_JUDGED, IDEAL_RETRIEVED, IDEAL_K = 0, 1, 2
AP_RELEVANT, AP_MIN_K, AP_RETRIEVED, AP_K = 0, 1, 2, 3


@njit(inline="always")
def gain_of(rel, gain_kind):
    """g(rel): max(rel, 0) (linear) or 2**max(rel, 0) - 1 (exponential)."""
    r = rel if rel > 0.0 else 0.0
    if gain_kind == GAIN_EXPONENTIAL:
        if r < 53.0 and r == np.floor(r):  # integer grades: exact, and no pow() call
            return float((np.int64(1) << np.int64(r)) - 1)
        return 2.0**r - 1.0
    return r


def discount_table(size: int) -> np.ndarray:
    """disc[j] = 1 / log2(j + 2): the discount of 0-based rank j (computed once per call)."""
    return 1.0 / np.log2(np.arange(max(int(size), 1), dtype=np.float64) + 2.0)


@njit(inline="always")
def log_comb(n, r):
    return math.lgamma(n + 1.0) - math.lgamma(r + 1.0) - math.lgamma(n - r + 1.0)


@njit(inline="always")
def ap_denominator(ap_norm, R, k, hits):
    """D of AP@k: R ("relevant"), min(k, R) ("min_k"; R without a cutoff, k = 0), hits@k ("retrieved")
    or k ("k"; R without a cutoff)."""
    if ap_norm == AP_RELEVANT:
        return R
    if ap_norm == AP_MIN_K:
        return R if k == 0 else min(float(k), R)
    if ap_norm == AP_K:
        return R if k == 0 else float(k)
    return hits


@njit(inline="always")
def group_sums(rel_code, rel_values, a, s, e, gain_kind, threshold):
    """(sum of gains, number of relevant rows) over ranked rows a+s .. a+e-1 (one tie group)."""
    G = 0.0
    Rg = 0.0
    for j in range(s, e):
        x = rel_values[rel_code[a + j]]
        G += gain_of(x, gain_kind)
        if x >= threshold:
            Rg += 1.0
    return G, Rg


@njit
def idcg_of(ideal_rel, a, b, cut, gain_kind, disc):
    """DCG of the first ``cut`` entries of ideal_rel[a:b] (already sorted descending)."""
    total = 0.0
    m = min(b - a, cut)
    for j in range(m):
        g = gain_of(ideal_rel[a + j], gain_kind)
        if g == 0.0:
            break
        total += g * disc[j]
    return total


@njit
def ap_retrieved_with_cut_group(ap_before, b_rel, s, m, r, c):
    """Exact E[AP] normalised by hits in the top K when a tie group is cut.

    The group starts at 0-based rank ``s``, has ``m`` items of which ``r`` are
    relevant, and only its first ``c`` positions (0 < c < m) are inside the
    cutoff; ``b_rel`` relevant items and AP numerator ``ap_before`` come before.
    """
    total = 0.0
    h_lo = max(0, c - (m - r))
    h_hi = min(c, r)
    log_all = log_comb(m, c)
    for h in range(h_lo, h_hi + 1):
        p = math.exp(log_comb(r, h) + log_comb(m - r, c - h) - log_all)
        if b_rel + h == 0:
            continue
        num = ap_before
        if h > 0:
            for j in range(c):
                if c > 1:
                    e = (h / c) * (b_rel + 1.0 + j * (h - 1.0) / (c - 1.0))
                else:
                    e = h * (b_rel + 1.0)
                num += e / (s + j + 1.0)
        total += p * num / (b_rel + h)
    return total


class RankedLists(NamedTuple):
    """The per-user arrays the ranking kernels read (see the module docstring).

    ``offsets``: CSR offsets of the ranked rows; ``rel_code`` / ``rel_values``:
    relevance of ranked row i is ``rel_values[rel_code[i]]``; ``tie_key``: equal
    neighbours are tied; ``n_rel``: relevant items per user; ``ideal_offsets`` /
    ``ideal_rel``: each user's judged relevances sorted descending.
    """

    offsets: np.ndarray
    rel_code: np.ndarray
    rel_values: np.ndarray
    tie_key: np.ndarray
    n_rel: np.ndarray
    ideal_offsets: np.ndarray
    ideal_rel: np.ndarray


class RankingOptions(NamedTuple):
    """The conventions as kernel codes: ``gain_kind`` (GAIN_*), ``ideal_kind`` (IDEAL_*),
    ``ap_norm`` (AP_*), the relevance ``threshold``, ``ties_average`` and the discount table."""

    gain_kind: int
    ideal_kind: int
    ap_norm: int
    threshold: float
    ties_average: bool
    disc_table: np.ndarray


def ranking_families(lists: RankedLists, k: int, options: RankingOptions, columns: np.ndarray,
                     out: np.ndarray) -> None:
    """Fill ``out[u, columns[f]]`` with family ``f`` of ``FAMILIES`` at cutoff ``k`` for every user
    (families with ``columns[f] < 0`` are not stored)."""
    _ranking_families(*lists, int(k), *options, columns, out)


def ranking_curve(lists: RankedLists, users: np.ndarray, k_max: int, options: RankingOptions,
                  n_threads: int) -> np.ndarray:
    """Sums over ``users`` of every family at each cutoff k = 1..k_max: array ``(k_max, N_FAMILIES)``."""
    return _ranking_curve(*lists, users, int(k_max), *options, n_threads)


@njit(inline="always")
def _put(out, u, columns, family, value):
    c = columns[family]
    if c >= 0:
        out[u, c] = value


@njit(parallel=True, work="rel_code", writes=("out",))
def _ranking_families(offsets, rel_code, rel_values, score, n_rel, ideal_offsets, ideal_rel, k, gain_kind,
                      ideal_kind, ap_norm, threshold, ties_average, disc_table, columns, out):
    """The compiled loop of :func:`ranking_families`: the fields of ``RankedLists``, ``k``, the
    fields of ``RankingOptions``, then ``columns`` and ``out``."""
    n_users = offsets.shape[0] - 1
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = n if k == 0 else min(k, n)
        kk = n if k == 0 else k
        R = n_rel[u]
        R_int = int(R)
        cg = 0.0
        dcg = 0.0
        ap_num = 0.0
        ap_value = -1.0
        rr = 0.0
        rr_done = False
        hits = 0.0
        hits_R = 0.0
        none_prob = 1.0
        b_rel = 0.0
        s = 0
        limit = max(K, R_int)
        while s < n and s < limit:
            e = s + 1
            if ties_average:
                s0 = score[a + s]
                while e < n and score[a + e] == s0:
                    e += 1
            if e == s + 1:  # a lone item: the general terms below with m = 1, without divisions
                x = rel_values[rel_code[a + s]]
                relevant = x >= threshold
                if s < K:
                    g = gain_of(x, gain_kind)
                    cg += g
                    dcg += g * disc_table[s]
                    if relevant:
                        hits += 1.0
                        none_prob = 0.0
                        if not rr_done:
                            rr = 1.0 / (s + 1.0)
                            rr_done = True
                        ap_num += (b_rel + 1.0) / (s + 1.0)
                if relevant:
                    if s < R_int:
                        hits_R += 1.0
                    b_rel += 1.0
                s = e
                continue
            m = e - s
            G, Rg = group_sums(rel_code, rel_values, a, s, e, gain_kind, threshold)
            c = min(max(K - s, 0), m)
            if c > 0:
                disc = 0.0
                for j in range(s, s + c):
                    disc += disc_table[j]
                dcg += G / m * disc
                cg += G / m * c
                hits += Rg / m * c
                if Rg > 0.0:
                    q = 1.0
                    for i in range(c):
                        if m - Rg - i <= 0.0:
                            q = 0.0
                            break
                        q *= (m - Rg - i) / (m - i)
                    none_prob *= q
                    if not rr_done:
                        p = Rg / m
                        last = min(c, m - int(Rg) + 1)
                        for j in range(last):
                            rr += p / (s + j + 1.0)
                            if m - j - 1 > 0:
                                p *= (m - Rg - j) / (m - j - 1.0)
                        rr_done = True
                if ap_norm == AP_RETRIEVED and c < m:  # np.int64(s): never a literal 0, one compiled version
                    ap_value = ap_retrieved_with_cut_group(ap_num, b_rel, np.int64(s), m, int(Rg), c)
                elif Rg > 0.0:
                    for j in range(c):
                        if m > 1:
                            t = (Rg / m) * (b_rel + 1.0 + j * (Rg - 1.0) / (m - 1.0))
                        else:
                            t = Rg * (b_rel + 1.0)
                        ap_num += t / (s + j + 1.0)
            cR = min(max(R_int - s, 0), m)
            hits_R += Rg / m * cR
            b_rel += Rg
            s = e
        # normalisations
        if ideal_kind == IDEAL_JUDGED:
            cut = ideal_offsets[u + 1] - ideal_offsets[u] if k == 0 else k
            idcg = idcg_of(ideal_rel, ideal_offsets[u], ideal_offsets[u + 1], cut, gain_kind, disc_table)
        elif ideal_kind == IDEAL_K:
            idcg = 0.0
            for j in range(kk):
                idcg += gain_of(1.0, gain_kind) * disc_table[j]
        else:
            seg = np.empty(n, dtype=np.float64)
            for j in range(n):
                seg[j] = rel_values[rel_code[a + j]]
            seg = sorted_desc(seg, n)
            # np.int64(0): a literal 0 would compile a second version of idcg_of
            idcg = idcg_of(seg, np.int64(0), n, n if k == 0 else k, gain_kind, disc_table)
        if ap_value < 0.0:
            den = ap_denominator(ap_norm, R, k, hits)
            ap_value = ap_num / den if den > 0.0 else 0.0
        _put(out, u, columns, CG, cg)
        _put(out, u, columns, DCG, dcg)
        _put(out, u, columns, NDCG, dcg / idcg if idcg > 0.0 else 0.0)
        _put(out, u, columns, AP, ap_value)
        _put(out, u, columns, RR, rr)
        _put(out, u, columns, PRECISION, hits / kk if kk > 0 else 0.0)
        _put(out, u, columns, RECALL, hits / R if R > 0.0 else 0.0)
        _put(out, u, columns, F1, 2.0 * hits / (kk + R) if kk + R > 0.0 else 0.0)
        _put(out, u, columns, HIT, 1.0 - none_prob)
        _put(out, u, columns, R_PRECISION, hits_R / R if R > 0.0 else 0.0)
        _put(out, u, columns, HITS, hits)


@njit(parallel=True, work="rel_code")
def _ranking_curve(offsets, rel_code, rel_values, score, n_rel, ideal_offsets, ideal_rel, users, k_max, gain_kind,
                   ideal_kind, ap_norm, threshold, ties_average, disc_table, n_threads):
    """Sums over ``users`` of every family at each cutoff k = 1..k_max, in one pass per user.

    Returns ``sums[k - 1, family]``; dividing by ``len(users)`` gives the means
    that :func:`ranking_families` would give at each k separately (same
    formulas and tie rule; the pooled ``hits`` column sums hits@k). R-precision
    does not depend on k and its column is left at 0 here.
    """
    partial = np.zeros((n_threads, k_max, N_FAMILIES))
    n_sel = users.shape[0]
    for t in nb.prange(n_threads):
        size = (n_sel + n_threads - 1) // n_threads
        lo = min(n_sel, t * size)
        hi = min(n_sel, lo + size)
        acc = partial[t]
        for idx in range(lo, hi):
            u = users[idx]
            a = offsets[u]
            n = offsets[u + 1] - a
            R = n_rel[u]
            # ideal gains for IDCG@k, k = 1..k_max
            if ideal_kind == IDEAL_JUDGED:
                ia = ideal_offsets[u]
                ideal = ideal_rel[ia:ideal_offsets[u + 1]]
            elif ideal_kind == IDEAL_K:
                ideal = np.ones(k_max)
            else:
                ideal = np.empty(n)
                for j in range(n):
                    ideal[j] = rel_values[rel_code[a + j]]
                ideal = sorted_desc(ideal, n)
            idcg_prefix = np.zeros(k_max)
            run_idcg = 0.0
            for j in range(k_max):
                if j < ideal.shape[0]:
                    run_idcg += gain_of(ideal[j], gain_kind) * disc_table[j]
                idcg_prefix[j] = run_idcg
            cg = 0.0
            dcg = 0.0
            hits = 0.0
            ap_num = 0.0
            rr = 0.0
            rr_done = False
            none_prob = 1.0
            b_rel = 0.0
            s = 0
            k = 0  # cutoffs 1..k filled so far
            while s < n:
                e = s + 1
                if ties_average:
                    while e < n and score[a + e] == score[a + s]:
                        e += 1
                m = e - s
                G, Rg = group_sums(rel_code, rel_values, a, s, e, gain_kind, threshold)
                # partial state inside the group, cutoff k = s + c
                q = 1.0
                rr_part = 0.0
                p_first = Rg / m
                ap_part = 0.0
                disc = 0.0
                for c in range(1, m + 1):
                    j = c - 1
                    disc += disc_table[s + j]
                    if Rg > 0.0:
                        if m - Rg - j <= 0.0:
                            q = 0.0
                        else:
                            q *= (m - Rg - j) / (m - j)
                        if not rr_done and j <= m - Rg:
                            rr_part += p_first / (s + j + 1.0)
                            if m - j - 1 > 0:
                                p_first *= (m - Rg - j) / (m - j - 1.0)
                        if m > 1:
                            tt = (Rg / m) * (b_rel + 1.0 + j * (Rg - 1.0) / (m - 1.0))
                        else:
                            tt = Rg * (b_rel + 1.0)
                        ap_part += tt / (s + j + 1.0)
                    kc = s + c
                    if kc > k_max:
                        break
                    h = hits + Rg / m * c
                    if ap_norm == AP_RETRIEVED and c < m:  # np.int64(s): as in _ranking_families
                        ap = ap_retrieved_with_cut_group(ap_num, b_rel, np.int64(s), m, int(Rg), c)
                    else:
                        den = ap_denominator(ap_norm, R, kc, h)
                        ap = (ap_num + ap_part) / den if den > 0.0 else 0.0
                    d = dcg + G / m * disc
                    row = acc[kc - 1]
                    row[CG] += cg + G / m * c
                    row[DCG] += d
                    row[NDCG] += d / idcg_prefix[kc - 1] if idcg_prefix[kc - 1] > 0.0 else 0.0
                    row[AP] += ap
                    row[RR] += rr + rr_part if not rr_done else rr
                    row[PRECISION] += h / kc
                    row[RECALL] += h / R if R > 0.0 else 0.0
                    row[F1] += 2.0 * h / (kc + R) if kc + R > 0.0 else 0.0
                    row[HIT] += 1.0 - none_prob * (q if Rg > 0.0 else 1.0)
                    row[HITS] += h
                    k = kc
                # close the group
                cg += G
                dcg += G / m * disc
                hits += Rg
                ap_num += ap_part
                if Rg > 0.0:
                    none_prob *= q
                    if not rr_done:
                        rr += rr_part
                        rr_done = True
                b_rel += Rg
                s = e
                if k >= k_max:
                    break
            # cutoffs beyond the list: only the normalisations change
            for kc in range(k + 1, k_max + 1):
                den = ap_denominator(ap_norm, R, kc, hits)
                row = acc[kc - 1]
                row[CG] += cg
                row[DCG] += dcg
                row[NDCG] += dcg / idcg_prefix[kc - 1] if idcg_prefix[kc - 1] > 0.0 else 0.0
                row[AP] += ap_num / den if den > 0.0 else 0.0
                row[RR] += rr
                row[PRECISION] += hits / kc
                row[RECALL] += hits / R if R > 0.0 else 0.0
                row[F1] += 2.0 * hits / (kc + R) if kc + R > 0.0 else 0.0
                row[HIT] += 1.0 - none_prob
                row[HITS] += hits
    # partial.sum(axis=0) as loops: the same additions in the same order (from 0.0, thread by thread),
    # without compiling numba's axis reduction (over a second on a fresh installation)
    sums = np.zeros((k_max, N_FAMILIES))
    for t in range(n_threads):
        for kc in range(k_max):
            for f in range(N_FAMILIES):
                sums[kc, f] += partial[t, kc, f]
    return sums
