"""ties="average" is the exact expected value over every order of tied scores.

For small random lists with heavy ties, enumerate every ordering of the items
inside each group of equal scores (all orders equally likely), compute each
metric on each full order with a plain-Python reference, and average. The
cutoffs deliberately cut through tie groups. Judged relevant items missing
from the run make recall/AP/NDCG denominators differ from the list.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

KS = [1, 2, 3, 4, 6]
TOL = 1e-9


# ------------------------------------------------------------ references
def _dcg(gains, k):
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def ref_metrics(rels, judged, thr, gain):
    """Every per-user metric on one fully ordered list of relevances.

    rels: relevance of the ranked items (0 for unjudged), judged: all judged relevances.
    """
    n = len(rels)
    hits = [int(r >= thr) for r in rels]
    n_rel = sum(int(r >= thr) for r in judged)
    g = (lambda r: float(max(r, 0))) if gain == "linear" else (lambda r: 2.0 ** max(r, 0) - 1.0)
    gains = [g(r) for r in rels]
    ideal = sorted((g(r) for r in judged), reverse=True)
    out = {}
    for k in KS + [None]:
        kk = n if k is None else k
        suffix = "" if k is None else f"@{k}"
        h = sum(hits[:kk])
        denom_p = kk if k is not None else n
        p = h / denom_p
        r = h / n_rel
        out["precision" + suffix] = p
        out["recall" + suffix] = r
        out["f1" + suffix] = 0.0 if h == 0 else 2 * p * r / (p + r)
        out["hit_rate" + suffix] = float(h > 0)
        first = next((i for i, x in enumerate(hits[:kk]) if x), None)
        out["mrr" + suffix] = 0.0 if first is None else 1.0 / (first + 1)
        s, found = 0.0, 0
        for i, x in enumerate(hits[:kk]):
            if x:
                found += 1
                s += found / (i + 1)
        out["map" + suffix + "|relevant"] = s / n_rel
        out["map" + suffix + "|retrieved"] = s / found if found else 0.0
        if k is not None:
            out["map" + suffix + "|min_k"] = s / min(k, n_rel)
        out["cg" + suffix] = sum(gains[:kk])
        out["dcg" + suffix] = _dcg(gains, kk)
        # whole list (no k): the ideal runs over every judged item, as trec_eval's ndcg
        out["ndcg" + suffix] = _dcg(gains, kk) / _dcg(ideal, len(ideal) if k is None else k)
    out["r_precision"] = sum(hits[:n_rel]) / n_rel
    return out


def expected_over_ties(scores, rels, judged, thr, gain):
    """Average of ref_metrics over every order of equal scores (descending score)."""
    groups = {}
    for s, r in zip(scores, rels):
        groups.setdefault(s, []).append(r)
    blocks = [list(itertools.permutations(groups[s])) for s in sorted(groups, reverse=True)]
    total, count = {}, 0
    for combo in itertools.product(*blocks):
        order = [r for block in combo for r in block]
        for name, v in ref_metrics(order, judged, thr, gain).items():
            total[name] = total.get(name, 0.0) + v
        count += 1
    return {name: v / count for name, v in total.items()}


def make_data(seed, graded):
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows, truth = [], [], {}
    for u in range(8):
        n = int(rng.integers(1, 7))
        scores = rng.choice([0.0, 0.5, 1.0], size=n, p=[0.3, 0.5, 0.2]) if u % 3 else np.full(n, 0.5)
        levels = [0, 1, 2, 3] if graded else [0, 1]
        rels = [int(x) for x in rng.choice(levels, size=n)]
        rels[int(rng.integers(0, n))] = max(levels)  # at least one relevant retrieved item...
        extra = [int(x) for x in rng.choice(levels, size=int(rng.integers(0, 3)))]
        if u == 5:
            rels = [0] * n  # ...except this user: relevant only outside the run
            extra = [max(levels)]
        uid = f"u{u}"
        items = [f"{uid}-i{j}" for j in range(n)]
        run_rows += [(uid, it, float(s)) for it, s in zip(items, scores)]
        qrel_rows += [(uid, it, r) for it, r in zip(items, rels)]
        qrel_rows += [(uid, f"{uid}-x{j}", r) for j, r in enumerate(extra)]
        truth[uid] = (list(scores), rels, rels + extra)
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    return run, qrels, truth


def _metric_list():
    # precision/recall/f1 without @k are the classification metrics, so only with a cutoff
    names = ["r_precision", "hit_rate", "mrr", "map", "cg", "dcg", "ndcg"]
    for k in KS:
        names += [f"{b}@{k}" for b in ("precision", "recall", "hit_rate", "mrr", "map", "cg", "dcg", "ndcg")]
    return names


def _check(seed, graded, gain, metrics, ap_norms):
    run, qrels, truth = make_data(seed, graded)
    thr = 2 if graded and seed % 2 else 1
    wants = {uid: expected_over_ties(scores, rels, judged, thr, gain)
             for uid, (scores, rels, judged) in truth.items() if any(r >= thr for r in judged)}
    for ap_norm in ap_norms:
        ev = mc.evaluate(run, qrels, metrics=metrics, ties="average", ap_norm=ap_norm, gain=gain,
                         relevance_threshold=thr)
        assert sorted(ev.per_user.index) == sorted(wants)
        for uid, (scores, rels, judged) in truth.items():
            if uid not in wants:
                continue
            want = wants[uid]
            for m in metrics:
                if m.startswith("map"):
                    if ap_norm == "min_k" and m == "map":
                        continue  # min_k needs a cutoff; whole-list AP checked under the others
                    key = f"{m}|{ap_norm}"
                elif ap_norm != ap_norms[0]:
                    continue  # non-AP metrics do not depend on ap_norm
                else:
                    key = m
                got = float(ev.per_user.loc[uid, m])
                assert got == pytest.approx(want[key], abs=TOL), (
                    f"user {uid} scores={scores} rels={rels} judged={judged} thr={thr} "
                    f"{m} ap_norm={ap_norm}: ours {got}, expected {want[key]}"
                )


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_average_ties_equal_bruteforce(seed, graded, gain):
    _check(seed, graded, gain, _metric_list(), ["relevant", "retrieved", "min_k"])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_average_ties_f1_bruteforce(seed, graded):
    _check(seed, graded, "linear", [f"f1@{k}" for k in KS], ["relevant"])


def test_average_differs_from_trec_on_ties():
    """The data really has ties that matter (otherwise the brute force proves nothing)."""
    run, qrels, _ = make_data(0, False)
    a = mc.evaluate(run, qrels, metrics=["map", "ndcg@2"], ties="average").per_user
    t = mc.evaluate(run, qrels, metrics=["map", "ndcg@2"], ties="trec").per_user
    assert (a - t).abs().to_numpy().max() > 1e-3


def test_all_tied_single_relevant_rr():
    """n items all tied, one relevant: E[1/rank] = H_n / n, E[P@1] = 1/n."""
    for n in range(1, 7):
        run = pd.DataFrame({"user_id": "u", "item_id": [f"i{j}" for j in range(n)], "score": 1.0})
        qrels = pd.DataFrame({"user_id": ["u"], "item_id": ["i0"], "relevance": [1]})
        ev = mc.evaluate(run, qrels, metrics=["mrr", "p@1", "hit_rate@1", "map"])
        harmonic = sum(1 / j for j in range(1, n + 1))
        assert ev.summary["mrr"] == pytest.approx(harmonic / n, abs=TOL)
        assert ev.summary["map"] == pytest.approx(harmonic / n, abs=TOL)
        assert ev.summary["p@1"] == pytest.approx(1 / n, abs=TOL)
        assert ev.summary["hit_rate@1"] == pytest.approx(1 / n, abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_average_ties_hit_ratio_pooled(seed):
    """Pooled hit_ratio@k under ties="average": sum of expected hits / sum of relevant items."""
    run, qrels, truth = make_data(seed, graded=False)
    wants = {uid: expected_over_ties(scores, rels, judged, 1, "linear")
             for uid, (scores, rels, judged) in truth.items()}
    ev = mc.evaluate(run, qrels, metrics=[f"hit_ratio@{k}" for k in KS], ties="average")
    for k in KS:
        hits = n_rel = 0.0
        for uid, (scores, rels, judged) in truth.items():
            want = wants[uid]
            nr = sum(r >= 1 for r in judged)
            hits += want[f"recall@{k}"] * nr
            n_rel += nr
        assert ev.summary[f"hit_ratio@{k}"] == pytest.approx(hits / n_rel, abs=TOL), k
