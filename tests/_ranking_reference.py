"""Plain-Python reference for the per-user ranking metrics (TEST use only).

Written from the formulas in the README, independent of metrics_core's kernels: one
user's list is ordered by the tie rule, each metric is a direct sum over ranks, and
``ties="average"`` is the mean over every order of the tied items (brute force, so keep
tie groups small). ``summary`` averages over the evaluated users as ``mc.evaluate`` does.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

PER_USER = ("cg", "dcg", "ndcg", "map", "mrr", "precision", "recall", "f1", "hit_rate", "r_precision")


def gain(rel: float, kind: str, threshold: float = 1.0) -> float:
    if kind == "binary":
        return 1.0 if rel >= threshold else 0.0
    r = max(rel, 0.0)
    return r if kind == "linear" else 2.0**r - 1.0


def dcg(rels, k: int, kind: str, threshold: float = 1.0) -> float:
    return sum(gain(r, kind, threshold) / math.log2(i + 2) for i, r in enumerate(rels[:k]))


def list_metrics(rels, judged_rels, k, *, gain_kind="linear", ideal="judged", ap_norm="relevant",
                 precision_norm="k", threshold=1.0) -> dict:
    """Every per-user metric of one list in rank order; ``k=None`` means the whole list."""
    n = len(rels)
    kk = n if k is None else k
    top = rels[: min(kk, n)]
    hits_at = [r >= threshold for r in top]
    hits = sum(hits_at)
    R = sum(1 for r in judged_rels if r >= threshold)
    if ideal == "k":  # k items of gain 1 (a relevant item's binary gain), whatever R
        idcg = sum(1.0 / math.log2(i + 2) for i in range(kk))
    else:
        idcg = dcg(sorted(judged_rels if ideal == "judged" else rels, reverse=True), kk, gain_kind, threshold)
    precision_terms = [sum(hits_at[: i + 1]) / (i + 1) for i, h in enumerate(hits_at) if h]
    denominator = {"relevant": R, "min_k": min(kk, R) if k is not None else R, "retrieved": hits,
                   "k": kk if k is not None else R}[ap_norm]
    precision_den = kk if precision_norm == "k" else min(kk, R)
    first = next((i + 1 for i, h in enumerate(hits_at) if h), None)
    return {
        "cg": sum(gain(r, gain_kind, threshold) for r in top),
        "dcg": dcg(rels, kk, gain_kind, threshold),
        "ndcg": dcg(rels, kk, gain_kind, threshold) / idcg if idcg > 0 else 0.0,
        "map": sum(precision_terms) / denominator if denominator > 0 else 0.0,
        "mrr": 1.0 / first if first else 0.0,
        "precision": hits / precision_den if precision_den > 0 else 0.0,
        "recall": hits / R if R > 0 else 0.0,
        "f1": 2.0 * hits / (kk + R) if kk + R > 0 else 0.0,
        "hit_rate": 1.0 if hits > 0 else 0.0,
        "r_precision": sum(r >= threshold for r in rels[:R]) / R if R > 0 else 0.0,
        "hits": float(hits),
        "R": float(R),
    }


def orders(rows, ties: str):
    """Every rank order of ``rows`` [(score, item, input_row, rel)] that the tie rule allows."""
    if ties == "trec":
        by_item = sorted(rows, key=lambda r: str(r[1]).encode(), reverse=True)
        yield sorted(by_item, key=lambda r: -r[0])  # stable: score descending, then item id descending
        return
    if ties == "input":
        yield sorted(rows, key=lambda r: (-r[0], r[2]))
        return
    groups = defaultdict(list)
    for row in rows:
        groups[row[0]].append(row)
    ordered = [groups[s] for s in sorted(groups, reverse=True)]
    for choice in itertools.product(*(itertools.permutations(g) for g in ordered)):
        yield [row for group in choice for row in group]


def user_metrics(rows, judged_rels, k, ties="average", **conv) -> dict:
    """Expected value of every metric over the orders the tie rule allows."""
    results = [list_metrics([r[3] for r in order], judged_rels, k, **conv) for order in orders(rows, ties)]
    return {m: sum(x[m] for x in results) / len(results) for m in results[0]}


def summary(run_rows, truth, k, ties="average", empty_users="exclude", missing_users="zero", **conv) -> dict:
    """Means over evaluated users: users with a relevant item (all truth users with ``empty_users="zero"``).

    ``run_rows``: {user: [(score, item, input_row)]}; ``truth``: {user: {item: relevance}}.
    A truth user without a list scores 0 (is left out with ``missing_users="exclude"``);
    users only in the run are not evaluated.
    ``hit_ratio`` is pooled: the sum of hits over the sum of R.
    """
    threshold = conv.get("threshold", 1.0)
    per_user = {}
    for user, judged in truth.items():
        R = sum(1 for r in judged.values() if r >= threshold)
        if R == 0 and empty_users == "exclude":
            continue
        if user not in run_rows and missing_users == "exclude":
            continue
        rows = [(s, item, row, judged.get(item, 0.0)) for s, item, row in run_rows.get(user, [])]
        if rows:
            per_user[user] = user_metrics(rows, list(judged.values()), k, ties, **conv)
        else:
            per_user[user] = {m: 0.0 for m in PER_USER} | {"hits": 0.0, "R": float(R)}
    out = {m: sum(v[m] for v in per_user.values()) / len(per_user) for m in PER_USER}
    total_r = sum(v["R"] for v in per_user.values())
    out["hit_ratio"] = sum(v["hits"] for v in per_user.values()) / total_r if total_r else 0.0
    return out
