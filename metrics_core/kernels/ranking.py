"""The per-user ranking kernels: every ranking metric family at one cutoff, or at every cutoff up to k_max.

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

One walk, two kernels. Both kernels walk a user's tie groups with the same helpers, so each
formula above is written once: :func:`tie_group_end` finds a group, :func:`group_sums` its gain
and relevant items, :func:`group_start` / :func:`group_step` its running sums position by position
(discounts, P(no hit), the RR and AP terms), :func:`sums_after` the user's running sums with the
first c positions of the group counted, :func:`family_values` every family from those sums, and
:func:`ideal_of` / :func:`idcg_of` the ideal DCG; :func:`lone_item` is the group of one item (the
common case, specialised by the compiler for r = 0 and r = 1) and :func:`past_group` the counts a group
leaves for the next. :func:`ranking_families` reads the sums at one cutoff for every user;
:func:`ranking_curve` at every cutoff 1..k_max, summed over users.
Kernel arguments are the named bundles :class:`RankedLists` and :class:`RankingOptions`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._jit import nb, njit
from .sorting import sorted_desc

# the kernel's columns (compile-time constants inside the kernels); families computed after it are
# the registry's entries with a ``derive`` (metrics_core.metrics.derived)
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


@njit(inline="always")
def per_item(x, m):
    """x / m, the mean over a tie group of ``m`` items (without a division for a lone item, the common case)."""
    return x if m == 1 else x / m


@njit(inline="always")
def tie_group_end(score, a, s, n, ties_average):
    """End (exclusive, 0-based within the list starting at row ``a``) of the tie group starting at ``s``:
    the run of equal ``score`` neighbours under ``ties_average``, else ``s + 1`` (every position its own group)."""
    e = s + 1
    if ties_average:
        s0 = score[a + s]
        while e < n and score[a + e] == s0:
            e += 1
    return e


@njit(inline="always")
def ap_term(j, s, m, r, b_rel):
    """E[h_i * hits@i] / i at offset ``j`` of a tie group of ``m`` items, ``r`` of them relevant, starting at
    0-based rank ``s`` after ``b_rel`` certain hits: (r/m)(b_rel + 1 + j (r-1)/(m-1)) / (s + j + 1)."""
    if m > 1:
        t = (r / m) * (b_rel + 1.0 + j * (r - 1.0) / (m - 1.0))
    else:
        t = r * (b_rel + 1.0)
    return t / (s + j + 1.0)


@njit(inline="always")
def group_start(m, r):
    """The running sums of a tie group of ``m`` items (``r`` relevant) before its first position:
    (sum of discounts, P(no relevant item yet), RR part, P(first relevant item at the next position), AP part)."""
    return 0.0, 1.0, 0.0, per_item(r, m), 0.0


@njit(inline="always")
def group_step(part, j, s, m, r, b_rel, rr_open, disc_table):
    """The running sums of a tie group (see :func:`group_start`) after its first ``j + 1`` positions, from
    those after ``j``. The group starts at 0-based rank ``s`` after ``b_rel`` certain hits; ``rr_open``:
    no earlier group held a relevant item, so this one decides the reciprocal rank.

    - discounts: + disc[s + j]
    - P(no relevant item in the first j + 1) = prod_{i<=j} (m - r - i) / (m - i) (hypergeometric)
    - RR part: + P(first relevant at offset j) / (s + j + 1), P(first at j + 1) = P(first at j) (m - r - j) / (m - j - 1)
    - AP part: + :func:`ap_term`
    """
    disc, q, rr_part, p_first, ap_part = part
    disc += disc_table[s + j]
    if r > 0.0:
        if m - r - j <= 0.0:
            q = 0.0
        else:
            q *= (m - r - j) / (m - j)
        if rr_open and j <= m - r:
            rr_part += p_first / (s + j + 1.0)
            if m - j - 1 > 0:
                p_first *= (m - r - j) / (m - j - 1.0)
        ap_part += ap_term(j, s, m, r, b_rel)
    return disc, q, rr_part, p_first, ap_part


#: a user's running sums before the first ranked row: (CG, DCG, hits, AP numerator, RR, RR decided, P(no hit))
USER_START = (0.0, 0.0, 0.0, 0.0, 0.0, False, 1.0)


@njit(inline="always")
def sums_after(sums, part, c, m, G, r):
    """A user's running sums (see :data:`USER_START`) once the first ``c`` positions of a tie group of ``m``
    items (gain sum ``G``, ``r`` relevant; ``part`` its running sums after ``c`` positions) are counted.
    A partly counted group adds the mean gain and mean hit per position; a whole one (c = m) its exact totals."""
    cg, dcg, hits, ap_num, rr, rr_done, none_prob = sums
    disc, q, rr_part, p_first, ap_part = part
    cg += G if c == m else per_item(G, m) * c
    dcg += per_item(G, m) * disc
    if r > 0.0:  # (without relevant items the hits, AP, RR and P(no hit) do not change)
        hits += r if c == m else per_item(r, m) * c
        ap_num += ap_part
        none_prob *= q
        if not rr_done:
            rr += rr_part
            rr_done = True
    return cg, dcg, hits, ap_num, rr, rr_done, none_prob


@njit(inline="always")
def lone_item(sums, s, G, r, b_rel, disc_table):
    """A user's running sums (see :data:`USER_START`) once a lone item (a tie group of one) at 0-based rank
    ``s`` is counted: :func:`group_start`, :func:`group_step` and :func:`sums_after` with m = 1. The kernels
    call it with ``r`` a literal 0.0 or 1.0 (the item is relevant or not), so the compiler folds the group
    arithmetic to the few terms a lone item has (no hypergeometric ratio, no mean over the group)."""
    return sums_after(sums, group_step(group_start(1, r), 0, s, 1, r, b_rel, not sums[5], disc_table), 1, 1, G, r)


@njit(inline="always")
def past_group(hits_R, b_rel, r, m, s, R_int):
    """(expected relevant items in the top R, relevant items before the next group) once a tie group of ``m``
    items, ``r`` of them relevant, starting at 0-based rank ``s`` is walked: + (r/m) min(max(R - s, 0), m), + r."""
    return hits_R + per_item(r, m) * min(max(R_int - s, 0), m), b_rel + r


@njit(inline="always")
def ap_of(ap_norm, R, k, sums):
    """AP@k from a user's running sums: numerator / D (:func:`ap_denominator`), 0 when D = 0."""
    den = ap_denominator(ap_norm, R, k, sums[2])
    return sums[3] / den if den > 0.0 else 0.0


@njit(inline="always")
def family_values(sums, ap, idcg, kk, R, r_precision):
    """Every family of ``FAMILIES`` at a cutoff of ``kk`` positions, in that order, from a user's running
    sums, AP@k, IDCG@k, R and R-precision."""
    cg, dcg, hits, ap_num, rr, rr_done, none_prob = sums
    return (cg, dcg, dcg / idcg if idcg > 0.0 else 0.0, ap, rr, hits / kk if kk > 0 else 0.0,
            hits / R if R > 0.0 else 0.0, 2.0 * hits / (kk + R) if kk + R > 0.0 else 0.0, 1.0 - none_prob,
            r_precision, hits)


@njit(inline="always")
def ideal_of(lists, u, ideal_kind):
    """User ``u``'s ideal relevances, sorted descending, as ``(array, start, length)`` (no slice: no array
    to count references to): the judged items (``IDEAL_JUDGED``), the retrieved list re-sorted
    (``IDEAL_RETRIEVED``); none for ``IDEAL_K`` (see :func:`ideal_gain`)."""
    if ideal_kind == IDEAL_RETRIEVED:
        a = lists.offsets[u]
        n = lists.offsets[u + 1] - a
        seg = np.empty(n, dtype=np.float64)
        for j in range(n):
            seg[j] = lists.rel_values[lists.rel_code[a + j]]
        return sorted_desc(seg, n), 0, n
    if ideal_kind == IDEAL_K:
        return lists.ideal_rel, 0, 0
    start = lists.ideal_offsets[u]
    return lists.ideal_rel, start, lists.ideal_offsets[u + 1] - start


@njit(inline="always")
def ideal_gain(ideal_kind, ideal, j, gain_kind):
    """Gain of 0-based ideal position ``j`` of ``ideal`` = (array, start, length) of :func:`ideal_of`:
    g(1) for ``IDEAL_K``, else g(array[start + j]) (0 past its length)."""
    if ideal_kind == IDEAL_K:
        return gain_of(1.0, gain_kind)
    values, start, length = ideal
    return gain_of(values[start + j], gain_kind) if j < length else 0.0


@njit(inline="always")
def idcg_of(ideal_kind, ideal, cut, gain_kind, disc):
    """IDCG of the first ``cut`` ideal positions: sum_{j<cut} ideal_gain(j) * disc[j] (gains are sorted
    descending: the sum stops at the first zero)."""
    total = 0.0
    for j in range(cut if ideal_kind == IDEAL_K else min(cut, ideal[2])):
        g = ideal_gain(ideal_kind, ideal, j, gain_kind)
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
    Given ``h`` hits among the ``c`` (hypergeometric), the cut part is a group of ``c``
    items with ``h`` relevant (:func:`ap_term`).
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
                num += ap_term(j, s, c, float(h), b_rel)
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


def one_list(relevances: np.ndarray, ideal: np.ndarray, n_relevant: float | None, threshold: float) -> RankedLists:
    """The kernels' view of one ranked list (``relevances`` in rank order, no ties): the ideal ``ideal``
    sorted descending; R = ``n_relevant``, by default the ideal's items with relevance >= ``threshold``."""
    n = len(relevances)
    values, codes = np.unique(np.asarray(relevances, dtype=np.float64), return_inverse=True)
    ideal_rel = np.ascontiguousarray(np.sort(np.asarray(ideal, dtype=np.float64))[::-1])
    if n_relevant is None:
        n_relevant = float(np.sum(ideal_rel >= threshold))
    return RankedLists(offsets=np.array([0, n], dtype=np.int64),
                       rel_code=codes.astype(np.uint8 if len(values) <= 255 else np.int32).reshape(-1),
                       rel_values=values, tie_key=(np.arange(n) % 2).astype(np.uint8),
                       n_rel=np.array([float(n_relevant)]), ideal_offsets=np.array([0, len(ideal_rel)], dtype=np.int64),
                       ideal_rel=ideal_rel)


def cutoff_order(ks) -> np.ndarray:
    """The cutoffs ``ks`` as :func:`ranking_families` walks them: distinct, the whole list (0) last, the others
    ascending (so ``K = min(k, n)`` never decreases along them, for any list length ``n``)."""
    distinct = sorted({int(k) for k in ks})
    return np.array([k for k in distinct if k > 0] + [0] * (0 in distinct), dtype=np.int64)


def ranking_families(lists: RankedLists, k, options: RankingOptions, columns: np.ndarray,
                     out: np.ndarray) -> None:
    """Fill ``out[i * width + columns[f], u]`` with family ``f`` of ``FAMILIES`` at the ``i``-th cutoff of ``k``
    for every user, in one walk per user (``width = out.shape[0] // len(k)``; families with ``columns[f] < 0``
    are not stored): one row per cutoff and family, so each is contiguous. ``k`` is one cutoff (0 = the
    whole list) or several in :func:`cutoff_order`."""
    ks = np.atleast_1d(np.asarray(k, dtype=np.int64))
    if not np.array_equal(ks, cutoff_order(ks)):
        raise ValueError(f"cutoffs must be distinct, ascending, the whole list (0) last; got {ks.tolist()}")
    if out.shape[0] % len(ks):
        raise ValueError("out must hold the same columns for every cutoff")
    _ranking_families(lists, ks, options, columns, out)


def ranking_curve(lists: RankedLists, users: np.ndarray, k_max: int, options: RankingOptions,
                  n_threads: int) -> np.ndarray:
    """Sums over ``users`` of every family at each cutoff k = 1..k_max: array ``(k_max, N_FAMILIES)``."""
    return _ranking_curve(lists, users, int(k_max), options, n_threads)


@njit(parallel=True, work="lists.rel_code", writes=("out",))
def _ranking_families(lists, ks, options, columns, out):
    """The compiled loop of :func:`ranking_families`: one walk per user over its tie groups up to
    max(K, R) positions (K the largest cutoff; R only when R-precision is stored), the families of cutoff
    ``ks[i]`` read from the running sums once its ``K_i = min(ks[i], n)`` positions are counted (inside a tie
    group: its first ``K_i - s`` positions, as a walk stopping there would count them).

    The walk runs the lone items up to the next cutoff in an inner loop that holds nothing else (no store,
    no tie-group arithmetic): on lists without ties nearly every position is one, and a loop body holding the
    stores and the tie-group terms as well ran about 1.5x slower on 10M rows (the compiler keeps fewer
    running values in registers)."""
    gain_kind, ideal_kind, ap_norm, threshold, ties_average, disc_table = options
    offsets, rel_code, rel_values, score = lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key
    n_users = offsets.shape[0] - 1
    n_ks = ks.shape[0]
    width = out.shape[0] // n_ks
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        R = lists.n_rel[u]
        R_int = int(R)
        ideal = ideal_of(lists, u, ideal_kind)
        sums = USER_START
        hits_R = 0.0
        b_rel = 0.0
        s = 0
        i = 0  # the next cutoff to fill
        K_last = _positions(ks[n_ks - 1], n)
        K_next = _positions(ks[0], n)  # the positions of the next cutoff to fill (-1 once all are filled)
        # R-precision reads the walk up to R positions; without it the walk ends at the largest cutoff
        limit = max(K_last, R_int) if columns[R_PRECISION] >= 0 else K_last
        while True:
            if s == K_next:  # every cutoff of K_next positions (of an empty list: all, at 0)
                while i < n_ks and _positions(ks[i], n) == s:
                    _store(out, u, i * width, columns, _at_cutoff(sums, ap_of(ap_norm, R, ks[i], sums),
                                                                  ks[i], n, R, ideal, options))
                    i += 1
                K_next = _positions(ks[i], n) if i < n_ks else -1
            if s >= n or s >= limit:
                break
            # the lone items (the common case) up to the next cutoff to fill, in a tight loop: r = 0 or 1, a literal
            stop = min(K_next, limit) if i < n_ks else min(limit, n)
            while s < stop:
                e = tie_group_end(score, a, s, n, ties_average)
                if e > s + 1:
                    break
                x = rel_values[rel_code[a + s]]
                relevant = x >= threshold
                if i < n_ks:
                    G = gain_of(x, gain_kind)
                    if relevant:
                        sums = lone_item(sums, s, G, 1.0, b_rel, disc_table)
                    else:
                        sums = lone_item(sums, s, G, 0.0, b_rel, disc_table)
                if relevant:
                    hits_R, b_rel = past_group(hits_R, b_rel, 1.0, 1, s, R_int)
                s = e
            if s == stop:
                continue
            m = e - s  # the tie group of m > 1 items that ended the lone items
            G, r = group_sums(rel_code, rel_values, a, s, e, gain_kind, threshold)
            if i < n_ks:  # a cutoff still to fill (K_i > s): count the group's positions up to the largest K
                c_max = min(K_last - s, m)
                part = group_start(m, r)
                inside = sums
                for j in range(c_max):
                    part = group_step(part, j, s, m, r, b_rel, not sums[5], disc_table)
                    c = j + 1
                    if s + c == K_next:
                        inside = sums_after(sums, part, c, m, G, r)
                        ap = -1.0
                        if ap_norm == AP_RETRIEVED and c < m:  # np.int64(s): never a literal 0, one version
                            ap = ap_retrieved_with_cut_group(sums[3], b_rel, np.int64(s), m, int(r), c)
                        while i < n_ks and _positions(ks[i], n) == s + c:
                            _store(out, u, i * width, columns,
                                   _at_cutoff(inside, ap if ap >= 0.0 else ap_of(ap_norm, R, ks[i], inside),
                                              ks[i], n, R, ideal, options))
                            i += 1
                        K_next = _positions(ks[i], n) if i < n_ks else -1
                if c_max == m:
                    sums = sums_after(sums, part, m, m, G, r)
            if r > 0.0:
                hits_R, b_rel = past_group(hits_R, b_rel, r, m, s, R_int)
            s = e
        if columns[R_PRECISION] >= 0:  # R-precision reads the walk up to R: the same at every cutoff
            for i in range(n_ks):
                out[i * width + columns[R_PRECISION], u] = hits_R / R if R > 0.0 else 0.0


@njit(inline="always")
def _positions(k, n):
    """K: the positions a cutoff ``k`` counts of a list of ``n`` (0 = the whole list)."""
    return n if k == 0 else min(k, n)


@njit(inline="always")
def _at_cutoff(sums, ap, k, n, R, ideal, options):
    """Every family at cutoff ``k`` of a list of ``n`` from the running sums once its K positions are counted
    (R-precision left at 0: :func:`_ranking_families` fills it once its walk has read R positions)."""
    gain_kind, ideal_kind, ap_norm, threshold, ties_average, disc_table = options
    kk = n if k == 0 else k
    idcg = idcg_of(ideal_kind, ideal, kk if ideal_kind == IDEAL_K or k > 0 else ideal[2], gain_kind, disc_table)
    return family_values(sums, ap, idcg, kk, R, 0.0)


@njit(parallel=True, work="lists.rel_code")
def _ranking_curve(lists, users, k_max, options, n_threads):
    """Sums over ``users`` of every family at each cutoff k = 1..k_max, in one walk per user.

    Returns ``sums[k - 1, family]``; dividing by ``len(users)`` gives the means
    that :func:`ranking_families` would give at each k separately (the same
    tie-group arithmetic; the pooled ``hits`` column sums hits@k). R-precision
    does not depend on k and its column is left at 0 here.
    """
    gain_kind, ideal_kind, ap_norm, threshold, ties_average, disc_table = options
    offsets, rel_code, rel_values, score = lists.offsets, lists.rel_code, lists.rel_values, lists.tie_key
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
            R = lists.n_rel[u]
            ideal = ideal_of(lists, u, ideal_kind)
            idcg_prefix = np.zeros(k_max)
            run_idcg = 0.0
            for j in range(k_max):
                g = ideal_gain(ideal_kind, ideal, j, gain_kind)
                if g != 0.0:  # a zero gain reads no discount: past the ideal list the table may end
                    run_idcg += g * disc_table[j]
                idcg_prefix[j] = run_idcg
            sums = USER_START
            b_rel = 0.0
            s = 0
            k = 0  # cutoffs 1..k filled so far
            while s < n and k < k_max:
                e = tie_group_end(score, a, s, n, ties_average)
                m = e - s
                if m == 1:  # a lone item (the common case): r = 0 or 1 a literal, as in _ranking_families
                    x = rel_values[rel_code[a + s]]
                    G = gain_of(x, gain_kind)
                    k = s + 1
                    if x >= threshold:
                        sums = lone_item(sums, s, G, 1.0, b_rel, disc_table)
                        b_rel += 1.0
                    else:
                        sums = lone_item(sums, s, G, 0.0, b_rel, disc_table)
                    _add(acc[k - 1], family_values(sums, ap_of(ap_norm, R, k, sums), idcg_prefix[k - 1], k, R, 0.0))
                else:
                    G, r = group_sums(rel_code, rel_values, a, s, e, gain_kind, threshold)
                    part = group_start(m, r)
                    inside = sums
                    for c in range(1, min(m, k_max - s) + 1):
                        part = group_step(part, c - 1, s, m, r, b_rel, not sums[5], disc_table)
                        k = s + c
                        inside = sums_after(sums, part, c, m, G, r)
                        if ap_norm == AP_RETRIEVED and c < m:  # np.int64(s): as in _ranking_families
                            ap = ap_retrieved_with_cut_group(sums[3], b_rel, np.int64(s), m, int(r), c)
                        else:
                            ap = ap_of(ap_norm, R, k, inside)
                        _add(acc[k - 1], family_values(inside, ap, idcg_prefix[k - 1], k, R, 0.0))
                    sums = inside  # the whole group counted (c = m), or k = k_max and the walk ends
                    b_rel += r
                s = e
            # cutoffs beyond the list: only the normalisations change
            for kc in range(k + 1, k_max + 1):
                _add(acc[kc - 1], family_values(sums, ap_of(ap_norm, R, kc, sums), idcg_prefix[kc - 1], kc, R, 0.0))
    # partial.sum(axis=0) as loops: the same additions in the same order (from 0.0, thread by thread),
    # without compiling numba's axis reduction (over a second on a fresh installation)
    sums = np.zeros((k_max, N_FAMILIES))
    for t in range(n_threads):
        for kc in range(k_max):
            for f in range(N_FAMILIES):
                sums[kc, f] += partial[t, kc, f]
    return sums


@njit(inline="always")
def _put(out, u, at, columns, family, value):
    c = columns[family]
    if c >= 0:
        out[at + c, u] = value


@njit(inline="always")
def _store(out, u, at, columns, values):
    """out[at + columns[f], u] = values[f] for every family f stored (columns[f] >= 0), by constant index."""
    _put(out, u, at, columns, CG, values[CG])
    _put(out, u, at, columns, DCG, values[DCG])
    _put(out, u, at, columns, NDCG, values[NDCG])
    _put(out, u, at, columns, AP, values[AP])
    _put(out, u, at, columns, RR, values[RR])
    _put(out, u, at, columns, PRECISION, values[PRECISION])
    _put(out, u, at, columns, RECALL, values[RECALL])
    _put(out, u, at, columns, F1, values[F1])
    _put(out, u, at, columns, HIT, values[HIT])
    _put(out, u, at, columns, R_PRECISION, values[R_PRECISION])
    _put(out, u, at, columns, HITS, values[HITS])


@njit(inline="always")
def _add(row, values):
    """row[f] += values[f] for every family f but R-precision (no cutoff: the curve leaves it at 0), by constant index."""
    row[CG] += values[CG]
    row[DCG] += values[DCG]
    row[NDCG] += values[NDCG]
    row[AP] += values[AP]
    row[RR] += values[RR]
    row[PRECISION] += values[PRECISION]
    row[RECALL] += values[RECALL]
    row[F1] += values[F1]
    row[HIT] += values[HIT]
    row[HITS] += values[HITS]
