"""bpref against trec_eval (through pytrec_eval, the independent reference).

Cases: unjudged items in the run (skipped), items judged 0 (judged non-relevant) and negative
(unjudged: trec_eval reads -1 as "not in the pool"),
users without a relevant item (0 under ``empty_users="zero"``, as trec_eval reports them), a user
without judged non-relevant items (N = 0), ties (trec_eval's order under ``ties="trec"``; the
expectation over tie orders under ``ties="average"``, against the mean over every order), graded
relevance with a threshold above 1. bpref takes no cutoff (trec_eval has none).
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import pytrec_eval

import metrics_core as mc


def _trec(run: pd.DataFrame, qrels: pd.DataFrame, relevance_level: int = 1) -> dict:
    """bpref per user by pytrec_eval (trec_eval's ``bpref``; relevance_level sets the threshold)."""
    q, r = {}, {}
    for row in qrels.itertuples():
        q.setdefault(str(row.user_id), {})[str(row.item_id)] = int(row.relevance)
    for row in run.itertuples():
        r.setdefault(str(row.user_id), {})[str(row.item_id)] = float(row.score)
    evaluator = pytrec_eval.RelevanceEvaluator(q, {"bpref"}, relevance_level=relevance_level)
    return {u: v["bpref"] for u, v in evaluator.evaluate(r).items()}


def _random(seed: int, n_users: int = 30):
    rng = np.random.default_rng(seed)
    run, qrels = [], []
    for u in range(n_users):
        items = [f"d{j}" for j in rng.choice(60, size=int(rng.integers(1, 25)), replace=False)]
        for item in items:  # scores on a coarse grid: ties within a list
            run.append((f"u{u}", item, float(rng.integers(0, 6))))
        judged = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
        for j in judged:  # grades -1..3: 0 is judged non-relevant, -1 unjudged
            qrels.append((f"u{u}", f"d{j}", int(rng.integers(-1, 4))))
    return (pd.DataFrame(run, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(qrels, columns=["user_id", "item_id", "relevance"]))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("level", [1, 2])
def test_bpref_equals_trec_eval_per_user(seed, level):
    run, qrels = _random(seed)
    expected = _trec(run, qrels, level)
    ev = mc.evaluate(run, qrels, ["bpref"], ties="trec", relevance_threshold=level, empty_users="zero",
                     missing_users="exclude")
    got = ev.per_user["bpref"]
    assert set(got.index) == set(expected)
    for user, value in expected.items():
        assert got[user] == pytest.approx(value, abs=1e-12), user
    assert ev.summary["bpref"] == pytest.approx(np.mean(list(expected.values())), abs=1e-12)


def test_hand_cases():
    # u1: unjudged x first, judged 0 n1, relevant r1, unjudged (-1) n2, judged 0 n3, relevant r2;
    # R = 3 (r3 not retrieved), N = 2
    # u2: no judged non-relevant item (N = 0): every retrieved relevant item counts 1
    run = pd.DataFrame({"user_id": ["u1"] * 6 + ["u2"] * 2,
                        "item_id": ["x", "n1", "r1", "n2", "n3", "r2", "a", "b"], "score": [9.0, 8, 7, 6, 5.5, 5, 2, 1]})
    qrels = pd.DataFrame({"user_id": ["u1"] * 6 + ["u2"] * 2,
                          "item_id": ["n1", "r1", "n2", "n3", "r2", "r3", "a", "c"],
                          "relevance": [0, 1, -1, 0, 2, 1, 1, 1]})
    got = mc.evaluate(run, qrels, ["bpref"]).per_user["bpref"]
    assert got["u1"] == pytest.approx(((1 - 1 / 2) + (1 - 2 / 2)) / 3)
    assert got["u2"] == pytest.approx(1 / 2)
    expected = _trec(run, qrels)
    assert got["u1"] == pytest.approx(expected["u1"]) and got["u2"] == pytest.approx(expected["u2"])


def test_ties_average_is_the_mean_over_every_order():
    # one user, a tie group of relevant, judged non-relevant and unjudged items between certain ranks
    items = ["a", "t1", "t2", "t3", "t4", "t5", "z"]
    scores = [5.0, 3, 3, 3, 3, 3, 1]
    qrels = pd.DataFrame({"user_id": "u", "item_id": ["a", "t1", "t2", "t3", "t5", "z", "far"],
                          "relevance": [0, 1, 0, 1, 0, 1, 0]})
    run = pd.DataFrame({"user_id": "u", "item_id": items, "score": scores})
    got = mc.evaluate(run, qrels, ["bpref"], ties="average").summary["bpref"]
    values = []
    for order in itertools.permutations(items[1:6]):
        ordered = ["a", *order, "z"]
        perm = pd.DataFrame({"user_id": "u", "item_id": ordered, "score": np.arange(len(ordered), 0, -1.0)})
        values.append(_trec(perm, qrels)["u"])
    assert got == pytest.approx(np.mean(values), abs=1e-12)


def test_bpref_takes_no_cutoff_and_needs_judgments():
    with pytest.raises(mc.MetricsError, match="takes no cutoff"):
        mc.evaluate(pd.DataFrame({"user_id": [1], "item_id": [1], "score": [1.0]}),
                    pd.DataFrame({"user_id": [1], "item_id": [1], "relevance": [1]}), ["bpref@10"])
