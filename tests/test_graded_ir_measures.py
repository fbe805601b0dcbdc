"""Graded RBP and scaled DCG (SDCG@k) against references that share no code with metrics_core.

* trectools' graded RBP per query, which ir_measures' ``RBP`` without ``rel`` calls (its trectools provider),
  on untied runs (trectools' tie averaging runs across the rows of different queries);
* plain-Python formulas written here: graded RBP as Moffat and Zobel's sum, SDCG as cwl_eval's C/W/L
  computation (continuation vector, examination weights normalised to sum 1, the ranking padded to
  1,000 items), which ir_measures' ``SDCG`` calls (cwl_eval itself is not installable here);
* brute force over every order of tied items for ``ties="average"``.

The generated runs hold ties, grades -1..3, unjudged items, lists shorter than k, topics only in the run
or only in the qrels, and docnos "12" / "12.0" / "012" (three documents).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.errors import MetricsError

pytest.importorskip("trectools")


def _generated(seed: int, n_topics: int = 30, tied: bool = True):
    rng = np.random.default_rng(seed)
    docs = [str(d) for d in range(40)] + ["12.0", "012"]
    run, qrels = [], []
    for t in range(n_topics):
        qid = str(100 + t)
        if t % 7 != 3:  # some topics: run only
            for d in rng.choice(len(docs), int(rng.integers(1, 25)), replace=False):
                qrels.append((qid, docs[d], int(rng.choice([-1, 0, 0, 1, 1, 2, 3]))))
        if t % 9 != 4:  # some topics: qrels only
            n = int(rng.integers(1, 30))  # short lists: some below the cutoffs
            chosen = rng.choice(len(docs), n, replace=False)
            scores = rng.integers(0, 6, n) / 2 if tied else rng.permutation(n) + rng.random() / 10
            run += [(qid, docs[d], float(s)) for d, s in zip(chosen, scores)]
    return (pd.DataFrame(run, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(qrels, columns=["user_id", "item_id", "relevance"]))


def _lists(run, qrels):
    """Per topic of the run: (scores in rank order, relevances in rank order: None when not judged), rank order
    being score descending then docno descending (trec_eval's)."""
    judged = {(u, i): r for u, i, r in qrels.itertuples(index=False)}
    out = {}
    for u, group in run.groupby("user_id"):
        rows = sorted(group.itertuples(index=False), key=lambda t: (t.score, t.item_id.encode()), reverse=True)
        out[u] = ([t.score for t in rows], [judged.get((u, t.item_id)) for t in rows])
    return out


def graded_rbp(rels, p, k=0):
    """(1 - p) sum over the top k of max(grade, 0) p^(rank - 1); unjudged items add nothing."""
    top = rels if k == 0 else rels[:k]
    return (1 - p) * sum(max(r, 0) * p ** i for i, r in enumerate(top) if r is not None)


def cwl_sdcg(rels, k, min_rel, max_rel, max_n=1000):
    """cwl_eval's NDCG-k as ir_measures calls it: gains clipped to [min_rel, max_rel] (negative first to 0) and
    scaled to [0, 1], unjudged 0, the ranking padded (or cut) to max_n items, continuation probability
    c_i = log(i + 1) / log(i + 2) for i < k and 0 from k on, examination weights W_i proportional to
    prod_{j<i} c_j and summing to 1; the value is sum_i W_i g_i."""
    gains = [0.0 if r is None else (min(max(max(r, 0), min_rel), max_rel) - min_rel) / (max_rel - min_rel)
             for r in rels[:max_n]]
    gains += [0.0] * (max_n - len(gains))
    c = [math.log(i + 1, 2) / math.log(i + 2, 2) if i < k else 0.0 for i in range(1, max_n + 1)]
    prods = [1.0]
    for value in c[:-1]:
        prods.append(prods[-1] * value)
    total = sum(prods)
    return sum(w / total * g for w, g in zip(prods, gains))


def _over_tie_orders(scores, rels, value):
    """Mean of ``value(relevances in rank order)`` over every order of the tied items."""
    positions = sorted(range(len(scores)), key=lambda i: -scores[i])
    groups = [list(g) for _, g in itertools.groupby(positions, key=lambda i: scores[i])]
    results = [value([rels[i] for g in order for i in g])
               for order in itertools.product(*(itertools.permutations(g) for g in groups))]
    return sum(results) / len(results)


def _trectools_rbp(run, qrels, p):
    """trectools' ``get_rbp(binary_topical_relevance=False, average_ties=True)`` per query: what ir_measures'
    ``RBP`` without ``rel`` calls (its trectools provider; ir_measures finds no provider for it here)."""
    from trectools import TrecEval, TrecQrel, TrecRun

    ordered = run.sort_values(["user_id", "score", "item_id"], ascending=[True, False, False])
    trec_run, trec_qrels = TrecRun(), TrecQrel()
    trec_run.run_data = pd.DataFrame({"query": ordered["user_id"], "q0": "Q0", "docid": ordered["item_id"],
                                      "rank": ordered.groupby("user_id").cumcount() + 1,
                                      "score": ordered["score"], "system": "s"}).reset_index(drop=True)
    trec_qrels.qrels_data = pd.DataFrame({"query": qrels["user_id"], "q0": 0, "docid": qrels["item_id"],
                                          "rel": qrels["relevance"]})
    values = TrecEval(trec_run, trec_qrels).get_rbp(p=p, depth=1000, per_query=True, binary_topical_relevance=False,
                                                    average_ties=True)[0]
    return values.iloc[:, 0].to_dict()


@pytest.mark.parametrize("p", [0.8, 0.5])
def test_graded_rbp_equals_trectools_and_the_formula_per_query(p):
    run, qrels = _generated(3, tied=False)
    name = "RBP" if p == 0.8 else f"RBP(p={p})"
    ev = mc.evaluate(run, qrels, [name], preset="ir_measures")
    theirs = _trectools_rbp(run, qrels, p)
    assert len(theirs) > 10  # the reference answered (topics with a relevant retrieved item)
    for user, value in theirs.items():
        assert ev.per_user.loc[user, name] == pytest.approx(value, abs=1e-12), user
    lists = _lists(run, qrels)
    for user in ev.per_user.index:  # topics missing from the run score 0 (ir_measures' missing_users)
        expected = graded_rbp(lists[user][1], p) if user in lists else 0.0
        assert ev.per_user.loc[user, name] == pytest.approx(expected, abs=1e-12), user
    assert ev.per_user[name].max() > 1 - p  # grades above 1 weigh more than a binary hit could


def test_rbp_with_rel_is_binary_and_without_is_graded():
    run, qrels = _generated(4)
    ev = mc.evaluate(run, qrels, ["RBP", "RBP(rel=2)", "rbp_graded", "rbp"], preset="ir_measures")
    assert ev.summary["RBP"] == ev.summary["rbp_graded"]  # ir_measures' RBP; our rbp stays binary
    binary = mc.evaluate(run, qrels, ["rbp"], preset="ir_measures", relevance_threshold=2)
    assert ev.summary["RBP(rel=2)"] == binary.summary["rbp"]
    assert ev.summary["RBP"] != ev.summary["rbp"]


@pytest.mark.parametrize("k, lo, hi", [(5, 0, 3), (10, 0, 2), (20, 1, 3), (3, 0, 1)])
def test_sdcg_equals_cwl_eval_formula(k, lo, hi):
    run, qrels = _generated(5)
    name = f"SDCG(min_rel={lo}, max_rel={hi})@{k}"
    ev = mc.evaluate(run, qrels, [name], preset="ir_measures", ties="trec")
    lists = _lists(run, qrels)
    assert set(ev.per_user.index) > set(lists) & set(ev.per_user.index)  # topics missing from the run: 0
    for user in ev.per_user.index:
        expected = cwl_sdcg(lists[user][1], k, lo, hi) if user in lists else 0.0
        assert ev.per_user.loc[user, name] == pytest.approx(expected, abs=1e-12), user
    ours = mc.evaluate(run, qrels, [f"sdcg@{k}"], ties="trec", min_relevance=lo, max_relevance=hi,
                       missing_users="zero", empty_users="zero")
    assert ours.summary[f"sdcg@{k}"] == pytest.approx(ev.summary[name], abs=1e-15)


def test_sdcg_max_relevance_defaults_to_the_largest_grade():
    run, qrels = _generated(6)
    a = mc.evaluate(run, qrels, ["sdcg@10"])
    b = mc.evaluate(run, qrels, ["sdcg@10"], max_relevance=float(qrels["relevance"].max()))
    assert a.summary == b.summary
    with pytest.raises(MetricsError, match="max_relevance"):
        mc.evaluate(run, qrels, ["sdcg@10"], min_relevance=3, max_relevance=2)
    with pytest.raises(MetricsError, match="at most 10,000,000"):
        mc.evaluate(run, qrels, ["sdcg@20000000"])


@pytest.mark.parametrize("seed", range(3))
def test_graded_rbp_and_sdcg_exact_over_tie_orders(seed):
    rng = np.random.default_rng(seed)
    rows, qrows = [], []
    for u in range(6):
        n = int(rng.integers(1, 7))
        for i in range(n):
            rows.append((f"u{u}", f"i{i}", float(rng.integers(0, 3))))
            if rng.random() < 0.7:
                qrows.append((f"u{u}", f"i{i}", int(rng.integers(-1, 4))))
        qrows.append((f"u{u}", "never", 2))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["user_id", "item_id", "relevance"])
    ev = mc.evaluate(run, qrels, ["rbp_graded@3", "rbp_graded", "sdcg@4"], ties="average", rbp_persistence=0.7,
                     max_relevance=3)
    judged = {(u, i): r for u, i, r in qrels.itertuples(index=False)}
    for user in ev.per_user.index:
        g = run[run["user_id"] == user]
        scores = g["score"].tolist()
        rels = [judged.get((user, i)) for i in g["item_id"]]
        expect = {"rbp_graded@3": _over_tie_orders(scores, rels, lambda r: graded_rbp(r, 0.7, 3)),
                  "rbp_graded": _over_tie_orders(scores, rels, lambda r: graded_rbp(r, 0.7)),
                  "sdcg@4": _over_tie_orders(scores, rels, lambda r: cwl_sdcg(r, 4, 0, 3))}
        for label, value in expect.items():
            assert ev.per_user.loc[user, label] == pytest.approx(value, abs=1e-12), (label, user)
