"""Beyond-accuracy metrics over the top-k lists: entropy, gini, arp, aplt, serendipity_pop, serendipity_sim.

References (plain Python, written from each library's published source):
- ``entropy``: Microsoft Recommenders ``distributional_coverage``
  (``recommenders/evaluation/python_evaluation.py``): ``-sum p log2 p`` over the items of the
  recommendation rows, ``p`` = the item's rows / all rows;
- ``gini``: RecBole ``GiniIndex`` (``recbole/evaluator/metrics.py``): counts sorted ascending, never
  recommended items 0, ``sum (2 idx - N - 1) c / total / N``; and the mean-difference form
  ``sum_{i,j} |c_i - c_j| / (2 N total)``;
- ``arp``, ``aplt``: Abdollahpouri et al.'s definitions with the popularity and head rule of the
  registry, written out item by item;
- ``serendipity_pop``: RecTools ``Serendipity`` (``rectools/metrics/serendipity.py``): dense
  popularity rank from ``value_counts``, ``max((N+1-rank)/N - (N+1-prank)/N, 0) * relevant``, mean over
  the top k rows;
- ``serendipity_sim``: Microsoft Recommenders ``user_serendipity`` with ``col_relevance``: co-occurrence
  cosine of item pairs over the training pairs (self pairs included), ``(1 - mean sim to the user's
  training items) * relevance``, mean per user, users without training rows left out;
- ties="average": the per-user values averaged over every order of tied scores (brute force); for
  entropy and gini, the formulas on the item counts averaged over those orders.
The libraries themselves do not run here (both pin pandas < 3).
"""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

TOL = 1e-9


def _data(seed: int, ties: bool = False, n_users: int = 10, n_items: int = 25):
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for u in range(n_users):
        n = int(rng.integers(1, 8))
        items = rng.choice(n_items, size=n, replace=False)
        scores = rng.choice([0.2, 0.6], size=n) if ties else rng.permutation(n) / n
        run_rows += [(f"u{u}", f"i{i}", float(s)) for i, s in zip(items, scores)]
        judged = list(rng.choice(items, size=max(1, n // 2), replace=False)) + [f"x{u}"]
        qrel_rows += [(f"u{u}", f"i{i}" if not str(i).startswith("x") else i, int(rng.integers(1, 3)))
                      for i in judged]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    # history: other users (and items outside the run), some users of the run without history
    inter = pd.DataFrame({"user_id": [f"u{u}" for u in rng.integers(0, n_users + 6, 120)],
                          "item_id": [f"i{i}" for i in rng.integers(0, n_items + 8, 120)]})
    inter = inter[~inter["user_id"].isin(["u0", "u1"])]
    inter = inter.merge(run[["user_id", "item_id"]], how="left", indicator=True)
    inter = inter[inter["_merge"] == "left_only"][["user_id", "item_id"]]  # as MS: no reco pair in history
    return run, qrels, inter.reset_index(drop=True)


def _lists(run):
    return {u: list(zip(g["item_id"], g["score"])) for u, g in run.groupby("user_id")}


def _orders(scored):
    """Every order of the list under ties (scores descending), equally likely."""
    groups = {}
    for item, s in scored:
        groups.setdefault(s, []).append(item)
    blocks = [list(itertools.permutations(groups[s])) for s in sorted(groups, reverse=True)]
    return [[i for b in combo for i in b] for combo in itertools.product(*blocks)]


# ------------------------------------------------------------------ references
def entropy_ref(counts):
    rows = sum(counts.values())
    return -sum(c / rows * math.log2(c / rows) for c in counts.values() if c > 0)


def gini_recbole(counts, n_items):
    sorted_count = np.array(sorted(c for c in counts.values() if c > 0))
    idx = np.arange(n_items - len(sorted_count) + 1, n_items + 1)
    return float(np.sum((2 * idx - n_items - 1) * sorted_count) / sorted_count.sum() / n_items)


def gini_pairs(counts, n_items):
    c = list(counts.values()) + [0.0] * (n_items - len(counts))
    return sum(abs(a - b) for a in c for b in c) / (2 * n_items * sum(c))


def popularity_ref(inter):
    return Counter(inter.drop_duplicates()["item_id"])


def long_tail_ref(pop):
    total = sum(pop.values())
    head = {i for i, c in pop.items() if sum(d for d in pop.values() if d > c) < 0.8 * total}
    return lambda item: item not in head


def serendipity_pop_ref(order, relevant, k, prank, n_items):
    top = order[:k]
    terms = []
    for rank, item in enumerate(top, start=1):
        p_user = (n_items + 1 - rank) / n_items
        p_any = (n_items + 1 - prank[item]) / n_items if item in prank else 0.0
        terms.append(max(p_user - p_any, 0.0) * (item in relevant))
    return sum(terms) / len(terms)


def rectools_popularity_ranks(inter):
    counts = inter.drop_duplicates()["item_id"].value_counts()
    levels = {c: r + 1 for r, c in enumerate(counts.unique())}
    return {item: levels[c] for item, c in counts.items()}


def cooccurrence_cosine(inter):
    pairs = inter.drop_duplicates()
    users = pairs.groupby("user_id")["item_id"].apply(set)
    n = Counter(pairs["item_id"])

    def sim(a, b):
        if a not in n or b not in n:
            return 0.0
        both = sum(1 for s in users if a in s and b in s)
        return both / math.sqrt(n[a] * n[b])
    return sim, users


def serendipity_sim_ref(order, relevant, k, sim, history):
    terms = [(1 - sum(sim(i, j) for j in history) / len(history)) * (i in relevant) for i in order[:k]]
    return sum(terms) / len(terms)


# ------------------------------------------------------------------ tests
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_values_match_the_references(seed, k):
    run, qrels, inter = _data(seed)
    labels = [f"{m}@{k}" for m in ("entropy", "gini", "arp", "aplt", "serendipity_pop", "serendipity_sim")]
    ev = mc.evaluate(run, qrels, metrics=labels, interactions=inter)
    lists = _lists(run)
    users = sorted(set(qrels["user_id"]))
    relevant = {u: set(qrels.loc[(qrels["user_id"] == u) & (qrels["relevance"] >= 1), "item_id"]) for u in users}
    orders = {u: [i for i, _ in sorted(lists[u], key=lambda x: -x[1])] for u in users}
    n_items = len(set(run["item_id"]) | set(qrels["item_id"]))

    counts = Counter(i for u in users for i in orders[u][:k])
    assert ev.summary[f"entropy@{k}"] == pytest.approx(entropy_ref(counts), abs=TOL)
    assert ev.summary[f"gini@{k}"] == pytest.approx(gini_recbole(counts, n_items), abs=TOL)
    assert ev.summary[f"gini@{k}"] == pytest.approx(gini_pairs(counts, n_items), abs=TOL)

    pop = popularity_ref(inter)
    tail = long_tail_ref(pop)
    prank = rectools_popularity_ranks(inter)
    sim, history = cooccurrence_cosine(inter)
    for u in users:
        top = orders[u][:k]
        row = ev.per_user.loc[u]
        assert row[f"arp@{k}"] == pytest.approx(np.mean([pop.get(i, 0) for i in top]), abs=TOL)
        assert row[f"aplt@{k}"] == pytest.approx(np.mean([tail(i) for i in top]), abs=TOL)
        assert row[f"serendipity_pop@{k}"] == pytest.approx(
            serendipity_pop_ref(orders[u], relevant[u], k, prank, n_items), abs=TOL)
        if u in history.index:
            assert row[f"serendipity_sim@{k}"] == pytest.approx(
                serendipity_sim_ref(orders[u], relevant[u], k, sim, history[u]), abs=TOL)
        else:
            assert np.isnan(row[f"serendipity_sim@{k}"])
    mean_sim = np.nanmean(ev.per_user[f"serendipity_sim@{k}"])
    assert ev.summary[f"serendipity_sim@{k}"] == pytest.approx(mean_sim, abs=TOL)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_average_ties_equal_bruteforce(seed):
    run, qrels, inter = _data(seed, ties=True, n_users=6)
    k = 2
    names = ("arp", "aplt", "serendipity_pop", "serendipity_sim")
    ev = mc.evaluate(run, qrels, metrics=[f"{m}@{k}" for m in names + ("entropy", "gini")], interactions=inter,
                     ties="average")
    trec = mc.evaluate(run, qrels, metrics=[f"{m}@{k}" for m in names], interactions=inter, ties="trec")
    lists = _lists(run)
    users = sorted(set(qrels["user_id"]))
    n_items = len(set(run["item_id"]) | set(qrels["item_id"]))
    pop = popularity_ref(inter)
    tail = long_tail_ref(pop)
    prank = rectools_popularity_ranks(inter)
    sim, history = cooccurrence_cosine(inter)
    expected_counts = Counter()
    for u in users:
        relevant = set(qrels.loc[(qrels["user_id"] == u) & (qrels["relevance"] >= 1), "item_id"])
        orders = _orders(lists[u])
        values = {"arp": [], "aplt": [], "serendipity_pop": [], "serendipity_sim": []}
        for order in orders:
            top = order[:k]
            for i in top:
                expected_counts[i] += 1 / len(orders)
            values["arp"].append(np.mean([pop.get(i, 0) for i in top]))
            values["aplt"].append(np.mean([tail(i) for i in top]))
            values["serendipity_pop"].append(serendipity_pop_ref(order, relevant, k, prank, n_items))
            if u in history.index:
                values["serendipity_sim"].append(serendipity_sim_ref(order, relevant, k, sim, history[u]))
        for name, v in values.items():
            got = ev.per_user.loc[u, f"{name}@{k}"]
            if v:
                assert got == pytest.approx(np.mean(v), abs=TOL), (u, name)
            else:
                assert np.isnan(got)
    assert ev.summary[f"entropy@{k}"] == pytest.approx(entropy_ref(expected_counts), abs=TOL)
    assert ev.summary[f"gini@{k}"] == pytest.approx(gini_pairs(expected_counts, n_items), abs=TOL)
    assert float((ev.per_user[trec.per_user.columns] - trec.per_user).abs().max().max()) > 1e-3


def test_popularity_falls_back_to_the_relevant_ground_truth_and_history_is_required():
    run, qrels, inter = _data(4)
    ev = mc.evaluate(run, qrels, metrics=["arp@3"])
    truth_pairs = qrels.loc[qrels["relevance"] >= 1, ["user_id", "item_id"]]
    assert ev.summary["arp@3"] == pytest.approx(
        mc.evaluate(run, qrels, metrics=["arp@3"], interactions=truth_pairs).summary["arp@3"], abs=TOL)
    with pytest.raises(mc.MetricsError, match="serendipity_sim needs an interactions table"):
        mc.evaluate(run, qrels, metrics=["serendipity_sim@3"])


def test_rectools_serendipity_worked_example():
    """The example of RecTools' Serendipity docstring: k=2 gives [0, 0.5, 0, 0.125]."""
    run = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3", "u4", "u4"],
                        "item_id": ["i1", "i2", "i2", "i3", "i3", "i2", "i3"],
                        "score": [2, 1, 2, 1, 2, 2, 1]})
    qrels = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3", "u4"],
                          "item_id": ["i1", "i2", "i2", "i3", "i2", "i2"], "relevance": 1})
    prev = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2", "u3"], "item_id": ["i1", "i2", "i1", "i2", "i1"]})
    catalog = pd.DataFrame({"item_id": ["i1", "i2", "i3", "i4"], "tags": "t"})
    ev = mc.evaluate(run, qrels, metrics=["serendipity_pop@1", "serendipity_pop@2"], interactions=prev,
                     item_features=catalog)
    assert list(ev.per_user["serendipity_pop@1"]) == pytest.approx([0, 0.25, 0, 0.25])
    assert list(ev.per_user["serendipity_pop@2"]) == pytest.approx([0, 0.5, 0, 0.125])
