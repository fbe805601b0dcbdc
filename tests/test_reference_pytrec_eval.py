"""Randomised cross-check against pytrec_eval (trec_eval's C code) with ties="trec".

Random runs with and without tied scores, graded relevance (including negative
judgments, gain 0), judged items missing from the run, users missing from the
run, users with no relevant item, users only in the run, string and integer ids.

pytrec_eval only evaluates queries present in the run; metrics_core evaluates
every user with at least one relevant item in the ground truth and scores a
user missing from the run 0. The comparison takes that into account:
* user evaluated by us and present in the run -> equals pytrec_eval
* user evaluated by us, absent from the run    -> 0 for every metric
* user without a relevant item                 -> not in our per_user table
* mean                                         -> sum over evaluated users / their number
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import metrics_core as mc

KS = [1, 3, 5, 10]
# ours -> pytrec_eval measure
PAIRS = {}
for _k in KS:
    PAIRS[f"p@{_k}"] = f"P_{_k}"
    PAIRS[f"recall@{_k}"] = f"recall_{_k}"
    PAIRS[f"ndcg@{_k}"] = f"ndcg_cut_{_k}"
    PAIRS[f"map@{_k}"] = f"map_cut_{_k}"
    PAIRS[f"hit_rate@{_k}"] = f"success_{_k}"
PAIRS.update({"map": "map", "mrr": "recip_rank", "r_precision": "Rprec", "ndcg": "ndcg"})
_CUTS = ",".join(str(k) for k in KS)
PYTREC_MEASURES = {f"P.{_CUTS}", f"recall.{_CUTS}", f"ndcg_cut.{_CUTS}", f"map_cut.{_CUTS}",
                   f"success.{_CUTS}", "map", "recip_rank", "Rprec", "ndcg"}

TOL = 1e-9


def make_data(seed: int, ties: bool, int_ids: bool):
    """A random run and qrels (DataFrames) covering the edge cases listed above."""
    rng = np.random.default_rng(seed)
    n_users = 14
    pool = 40
    run_rows, qrel_rows = [], []
    for u in range(n_users):
        uid = u if int_ids else f"q{u}"
        kind = u % 7  # 0: missing from run, 1: no relevant judged, 2: only in run, else normal
        n_ret = int(rng.integers(1, 25))
        items = rng.choice(pool, size=n_ret, replace=False)
        if ties:
            scores = rng.integers(0, 4, size=n_ret) / 4.0
        else:
            scores = rng.permutation(n_ret) + rng.random(n_ret) * 0.5
        judged = rng.choice(pool, size=int(rng.integers(1, 20)), replace=False)
        rels = rng.choice([-1, 0, 0, 1, 1, 2, 3], size=len(judged))
        if kind == 0:
            rels[0] = 3  # evaluated at every threshold, absent from the run
        if kind == 1:
            rels = rng.choice([-1, 0], size=len(judged))
        if kind != 2:
            qrel_rows += [(uid, int(i) if int_ids else f"d{i}", int(r)) for i, r in zip(judged, rels)]
        if kind != 0:
            run_rows += [(uid, int(i) if int_ids else f"d{i}", float(s)) for i, s in zip(items, scores)]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    return run, qrels


def pytrec(run: pd.DataFrame, qrels: pd.DataFrame, level: int):
    q, r = {}, {}
    for u, i, rel in qrels.itertuples(index=False):
        q.setdefault(str(u), {})[str(i)] = int(rel)
    for u, i, s in run.itertuples(index=False):
        r.setdefault(str(u), {})[str(i)] = float(s)
    ev = pytrec_eval.RelevanceEvaluator(q, PYTREC_MEASURES, relevance_level=level)
    return ev.evaluate({u: d for u, d in r.items() if u in q})


def check(run, qrels, level, prepared=False):
    ref = pytrec(run, qrels, level)
    evaluated = sorted(
        {str(u) for u, rel in qrels[["user_id", "relevance"]].itertuples(index=False) if rel >= level}
    )
    source = mc.prepare(run, qrels) if prepared else run
    ev = mc.evaluate(source, None if prepared else qrels, metrics=list(PAIRS), ties="trec",
                     relevance_threshold=level)
    per_user = ev.per_user.copy()
    per_user.index = per_user.index.map(str)
    assert sorted(per_user.index) == evaluated
    assert ev.n_users == len(evaluated)
    in_run = {str(u) for u in run["user_id"]}
    assert any(u not in in_run for u in evaluated), "data should have a user missing from the run"
    for ours, theirs in PAIRS.items():
        want = []
        for u in evaluated:
            w = ref[u][theirs] if u in in_run else 0.0
            want.append(w)
            got = float(per_user.loc[u, ours])
            assert got == pytest.approx(w, abs=TOL), f"user {u} {ours}: ours {got} pytrec_eval {w}"
        assert ev.summary[ours] == pytest.approx(float(np.mean(want)), abs=TOL), ours


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("level", [1, 2])
def test_against_pytrec_eval_str_ids(seed, ties, level):
    run, qrels = make_data(seed, ties, int_ids=False)
    check(run, qrels, level)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
def test_against_pytrec_eval_int_ids(seed, ties):
    # trec order breaks ties by item_id descending *as strings*: "9" before "10"
    run, qrels = make_data(100 + seed, ties, int_ids=True)
    check(run, qrels, 1)


def test_against_pytrec_eval_prepared():
    run, qrels = make_data(7, True, int_ids=False)
    check(run, qrels, 1, prepared=True)


def test_trec_string_order_of_int_ids():
    """Item 9 outranks item 10 on a tie ("9" > "10"), and 10 outranks 1."""
    run = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [1, 10, 9], "score": [0.5, 0.5, 0.5]})
    for rel_item, rr in [(9, 1.0), (10, 0.5), (1, 1 / 3)]:
        qrels = pd.DataFrame({"user_id": [1], "item_id": [rel_item], "relevance": [1]})
        ev = mc.evaluate(run, qrels, metrics=["mrr"], ties="trec")
        assert ev.summary["mrr"] == pytest.approx(rr, abs=TOL), rel_item
