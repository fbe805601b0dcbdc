"""Worked examples of ranking metrics, kept as numbers with their conventions.

Each example is a small list with the values a hand calculation gives. The expected
value is recomputed here from the formula (plain Python, independent of metrics_core)
and checked twice: exactly (1e-9) against metrics_core, and rounded to the digits a
hand calculation prints. Where the usual hand calculation rounds or slips, the test
says so and asserts the correct value.

Conventions per example:
* graded list 7 2 5 10 1: AP normalised by the relevant items retrieved
  (ap_norm="retrieved"); NDCG ideal = the retrieved list re-sorted (all its items
  are judged).
* tutorial: NDCG with linear gain and the retrieved list re-sorted as ideal; hit
  ratio pooled over users.
* binary list: AP divides by the relevant items retrieved (all are retrieved).
* ideal choice: NDCG with ideal = retrieved list re-sorted (0.961), then with the
  ideal over all judged items (3,3,3,2,2,2,1,0).
* cutoff: ideal over all judged items (= the 8 returned items); equals
  scikit-learn's ndcg_score.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

EXACT = 1e-9


# ---------------------------------------------------------------- references
def ref_dcg(rels, k=None, gain="linear"):
    rels = list(rels)[: (len(rels) if k is None else k)]
    g = (lambda r: r) if gain == "linear" else (lambda r: 2.0**r - 1.0)
    return sum(g(r) / math.log2(i + 2) for i, r in enumerate(rels))


def ref_ndcg(rels, k=None, gain="linear", ideal=None):
    ideal = sorted(rels if ideal is None else ideal, reverse=True)
    return ref_dcg(rels, k, gain) / ref_dcg(ideal, k, gain)


def ref_ap(hits, n_norm):
    total, found = 0.0, 0
    for i, h in enumerate(hits):
        if h:
            found += 1
            total += found / (i + 1)
    return total / n_norm


def make_run(lists):
    """{user: [(item, score, relevance), ...]} -> run DataFrame with relevance."""
    rows = [(u, it, s, r) for u, lst in lists.items() for it, s, r in lst]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score", "relevance"])


def ranked_list(rels, user="u"):
    """One user's list in rank order: distinct descending scores."""
    n = len(rels)
    return {user: [(f"i{j}", float(n - j), r) for j, r in enumerate(rels)]}



# -------- a graded list 7 2 5 10 1: AP over the relevant items retrieved; ideal = the list re-sorted
REL_GRADED = [7, 2, 5, 10, 1]


def test_graded_list_dcg_idcg_linear():
    dcg = mc.dcg_at_k(REL_GRADED, k=5)
    idcg = mc.dcg_at_k(sorted(REL_GRADED, reverse=True), k=5)
    assert dcg == pytest.approx(ref_dcg(REL_GRADED, 5), abs=EXACT)
    assert idcg == pytest.approx(ref_dcg([10, 7, 5, 2, 1], 5), abs=EXACT)
    assert round(dcg, 2) == 15.46
    assert round(idcg, 2) == 18.16


def test_graded_list_ndcg_linear():
    v = mc.ndcg_at_k(REL_GRADED, k=5)
    assert v == pytest.approx(ref_ndcg(REL_GRADED, 5), abs=EXACT)
    assert v == pytest.approx(15.46 / 18.16, abs=5e-4)
    assert round(v, 2) == 0.85


def test_graded_list_ndcg_exponential_rounding():
    dcg = mc.dcg_at_k(REL_GRADED, k=5, gain="exponential")
    idcg = mc.dcg_at_k([10, 7, 5, 2, 1], k=5, gain="exponential")
    assert round(dcg, 2) == 585.36
    assert round(idcg, 2) == 1120.31
    v = mc.ndcg_at_k(REL_GRADED, k=5, gain="exponential")
    assert v == pytest.approx(ref_ndcg(REL_GRADED, 5, "exponential"), abs=EXACT)
    assert round(v, 4) == 0.5225  # 585.36 / 1120.31 (often misprinted as 0.53)
    assert round(v, 2) == 0.52


@pytest.mark.parametrize("ideal", ["judged", "retrieved"])
@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_graded_list_ndcg_via_evaluate(gain, ideal):
    run = make_run(ranked_list(REL_GRADED))
    ev = mc.evaluate(run, metrics=["ndcg@5", "dcg@5", "cg@5"], gain=gain, ideal=ideal)
    assert ev.summary["ndcg@5"] == pytest.approx(ref_ndcg(REL_GRADED, 5, gain), abs=EXACT)
    assert ev.summary["dcg@5"] == pytest.approx(ref_dcg(REL_GRADED, 5, gain), abs=EXACT)
    g = (lambda r: r) if gain == "linear" else (lambda r: 2**r - 1)
    assert ev.summary["cg@5"] == pytest.approx(sum(g(r) for r in REL_GRADED), abs=EXACT)
    assert ev.per_user.loc["u", "ndcg@5"] == pytest.approx(ev.summary["ndcg@5"], abs=EXACT)


def test_graded_list_ap_positional_example():
    # predicted e,b,a,d,c vs ground truth a,b,c,d,e: positions 2 and 4 match
    pred, gt = list("ebadc"), list("abcde")
    hits = [int(p == g) for p, g in zip(pred, gt)]
    assert hits == [0, 1, 0, 1, 0]
    assert mc.average_precision_at_k(hits) == pytest.approx(ref_ap(hits, 2), abs=EXACT)
    assert mc.average_precision_at_k(hits) == pytest.approx(0.5, abs=EXACT)
    run = make_run({"u": [(p, float(5 - j), h) for j, (p, h) in enumerate(zip(pred, hits))]})
    ev = mc.evaluate(run, metrics=["map"], ap_norm="retrieved")
    assert ev.summary["map"] == pytest.approx(0.5, abs=EXACT)


def test_graded_list_map_is_mean_of_ap():
    # four users whose AP (normalised by the relevant items retrieved) is 0.4, 0.5, 0.6, 0.9
    hit_ranks = {"a": [2, 5, 10], "b": [2, 4], "c": [1, 10], "d": [1, 2, 3, 4, 10]}
    lists, expected = {}, {}
    for u, ranks in hit_ranks.items():
        hits = [int(r in ranks) for r in range(1, 11)]
        expected[u] = ref_ap(hits, len(ranks))
        lists[u] = [(f"{u}{j}", float(10 - j), h) for j, h in enumerate(hits)]
    assert [round(expected[u], 10) for u in "abcd"] == [0.4, 0.5, 0.6, 0.9]
    for norm in ["retrieved", "relevant", "min_k"]:  # all relevant retrieved, within k
        ev = mc.evaluate(make_run(lists), metrics=["map"], ap_norm=norm)
        assert ev.summary["map"] == pytest.approx((0.4 + 0.5 + 0.6 + 0.9) / 4, abs=EXACT)
        assert round(ev.summary["map"], 10) == 0.6
        for u in "abcd":
            assert ev.per_user.loc[u, "map"] == pytest.approx(expected[u], abs=EXACT)


# -------- pooled hit ratio, AP, NDCG (linear gain, ideal = list re-sorted), MRR, accuracy, AUC
def _tutorial_hit_ratio_data():
    # three users with 10, 12, 8 test items; top-10 lists with 6, 5, 4 hits
    n_rel, n_hit = {"u1": 10, "u2": 12, "u3": 8}, {"u1": 6, "u2": 5, "u3": 4}
    run_rows, qrel_rows = [], []
    for u in n_rel:
        relevant = [f"{u}-rel{j}" for j in range(n_rel[u])]
        qrel_rows += [(u, it, 1) for it in relevant]
        top = relevant[: n_hit[u]] + [f"{u}-non{j}" for j in range(10 - n_hit[u])]
        # interleave so hits are not all on top: place hits at every other rank
        order = sorted(range(10), key=lambda j: (j % 2, j))
        run_rows += [(u, top[j], float(100 - r)) for r, j in enumerate(order)]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    return run, qrels, n_rel, n_hit


def test_tutorial_hit_ratio_pooled():
    run, qrels, n_rel, n_hit = _tutorial_hit_ratio_data()
    ev = mc.evaluate(run, qrels, metrics=["hit_ratio@10", "hit_rate@10", "recall@10"])
    pooled = sum(n_hit.values()) / sum(n_rel.values())
    assert pooled == 0.5
    assert ev.summary["hit_ratio@10"] == pytest.approx(pooled, abs=EXACT)
    # hit_rate (share of users with a hit) and mean recall differ from the pooled ratio
    assert ev.summary["hit_rate@10"] == pytest.approx(1.0, abs=EXACT)
    mean_recall = np.mean([n_hit[u] / n_rel[u] for u in n_rel])
    assert ev.summary["recall@10"] == pytest.approx(mean_recall, abs=EXACT)
    assert abs(mean_recall - pooled) > 1e-3


def test_tutorial_ap_example():
    hits = [1, 0, 1, 0, 0, 1]
    v = mc.average_precision_at_k(hits)
    assert v == pytest.approx((1 + 2 / 3 + 3 / 6) / 3, abs=EXACT)
    assert round(v, 2) == 0.72  # by hand: (1 + 0.66 + 0.5) / 3 = 0.72
    run = make_run(ranked_list(hits))
    for norm in ["relevant", "retrieved"]:
        ev = mc.evaluate(run, metrics=["map", "map@6"], ap_norm=norm)
        assert ev.summary["map"] == pytest.approx(13 / 18, abs=EXACT)
        assert ev.summary["map@6"] == pytest.approx(13 / 18, abs=EXACT)


def test_tutorial_ndcg_example_linear_retrieved_ideal():
    rels = [3, 1, 2, 3, 2]
    assert mc.dcg_at_k(rels) == pytest.approx(6.696665042, abs=1e-9)
    idcg = mc.dcg_at_k([3, 3, 2, 2, 1])
    assert idcg == pytest.approx(ref_dcg([3, 3, 2, 2, 1]), abs=EXACT)
    assert round(idcg, 2) == 7.14
    v = mc.ndcg_at_k(rels)
    assert v == pytest.approx(ref_ndcg(rels), abs=EXACT)
    assert round(v, 2) == 0.94
    ev = mc.evaluate(make_run(ranked_list(rels)), metrics=["ndcg", "cg", "dcg"], ideal="retrieved")
    assert ev.summary["cg"] == pytest.approx(11.0, abs=EXACT)
    assert ev.summary["dcg"] == pytest.approx(6.696665042, abs=1e-9)
    assert ev.summary["ndcg"] == pytest.approx(ref_ndcg(rels), abs=EXACT)


def test_tutorial_mrr_example():
    # three users, first relevant item at rank 3, 2, 1
    lists = {}
    for u, first in [("a", 3), ("b", 2), ("c", 1)]:
        hits = [int(r == first) for r in range(1, 5)]
        lists[u] = [(f"{u}{j}", float(4 - j), h) for j, h in enumerate(hits)]
        assert mc.reciprocal_rank(hits) == pytest.approx(1 / first, abs=EXACT)
    ev = mc.evaluate(make_run(lists), metrics=["mrr"])
    assert ev.summary["mrr"] == pytest.approx((1 / 3 + 1 / 2 + 1) / 3, abs=EXACT)
    assert round(ev.summary["mrr"], 2) == 0.61


def test_tutorial_accuracy_eight_of_ten():
    # 10 samples, 8 predicted correctly at threshold 0.5 -> accuracy 0.8
    labels = [1, 1, 1, 1, 0, 0, 0, 0, 1, 0]
    scores = [0.9, 0.8, 0.7, 0.6, 0.1, 0.2, 0.3, 0.4, 0.2, 0.7]  # last two wrong
    run = pd.DataFrame(
        {"user_id": ["u"] * 10, "item_id": [f"i{j}" for j in range(10)], "score": scores, "relevance": labels}
    )
    ev = mc.evaluate(run, metrics=["accuracy", "precision", "recall", "f1"], threshold=0.5)
    tp, fp, fn = 4, 1, 1
    assert ev.summary["accuracy"] == pytest.approx(0.8, abs=EXACT)
    p, r = tp / (tp + fp), tp / (tp + fn)
    assert ev.summary["precision"] == pytest.approx(p, abs=EXACT)
    assert ev.summary["recall"] == pytest.approx(r, abs=EXACT)
    assert ev.summary["f1"] == pytest.approx(2 * p * r / (p + r), abs=EXACT)


def test_tutorial_auc_is_pairwise_probability():
    # AUC = P(score of a random positive > score of a random negative), ties count half
    labels = [1, 0, 1, 1, 0, 0, 1, 0]
    scores = [0.9, 0.9, 0.4, 0.6, 0.6, 0.1, 0.3, 0.35]
    pos = [s for s, y in zip(scores, labels) if y]
    neg = [s for s, y in zip(scores, labels) if not y]
    pairs = [(1.0 if p > n else 0.5 if p == n else 0.0) for p in pos for n in neg]
    run = pd.DataFrame(
        {"user_id": ["u"] * 8, "item_id": [f"i{j}" for j in range(8)], "score": scores, "relevance": labels}
    )
    ev = mc.evaluate(run, metrics=["auc"])
    assert ev.summary["auc"] == pytest.approx(sum(pairs) / len(pairs), abs=EXACT)


# -------- binary relevance: AP over the relevant items retrieved, precision at n, NDCG
def test_binary_list_ap_and_precision_at_n():
    hits = [1, 0, 0, 1, 1, 1]
    for n, (num, den) in enumerate([(1, 1), (1, 2), (1, 3), (2, 4), (3, 5), (4, 6)], start=1):
        assert mc.precision_at_k(hits, n) == pytest.approx(num / den, abs=EXACT)
    v = mc.average_precision_at_k(hits)
    assert v == pytest.approx((1 / 1 + 2 / 4 + 3 / 5 + 4 / 6) / 4, abs=EXACT)
    assert round(v, 4) == 0.6917
    ev = mc.evaluate(make_run(ranked_list(hits)), metrics=["map"], ap_norm="retrieved")
    assert ev.summary["map"] == pytest.approx(v, abs=EXACT)


def test_binary_list_ndcg_linear_formula():
    rels = [2, 0, 1, 3]
    run = make_run(ranked_list(rels))
    ev = mc.evaluate(run, metrics=["ndcg", "cg", "dcg"])
    assert ev.summary["cg"] == pytest.approx(6.0, abs=EXACT)
    assert ev.summary["dcg"] == pytest.approx(ref_dcg(rels), abs=EXACT)
    assert ev.summary["ndcg"] == pytest.approx(ref_ndcg(rels), abs=EXACT)


# -------- CG and DCG; NDCG with the ideal from the retrieved list and from all judged items
REL_IDEAL = [3, 2, 3, 0, 1, 2]


def test_ideal_choice_cg_dcg():
    assert round(mc.dcg_at_k(REL_IDEAL), 3) == 6.861
    assert mc.dcg_at_k(REL_IDEAL) == pytest.approx(ref_dcg(REL_IDEAL), abs=EXACT)
    exp_dcg = mc.dcg_at_k(REL_IDEAL, gain="exponential")
    # A common hand table prints 16.047 by writing log2(6) = 2.585 instead of
    # (2^1 - 1) / log2(6) = 0.387 for position 5. The correct sum is 13.848
    # (13.849 when summing 3-decimal terms).
    assert exp_dcg == pytest.approx(7 + 3 / math.log2(3) + 3.5 + 0 + 1 / math.log2(6) + 3 / math.log2(7), abs=EXACT)
    assert round(exp_dcg, 3) == 13.848
    assert abs(exp_dcg - (7 + 1.893 + 3.5 + 0 + 0.387 + 1.069)) < 2e-3
    ev = mc.evaluate(make_run(ranked_list(REL_IDEAL)), metrics=["cg@6", "dcg@6"])
    assert ev.summary["cg@6"] == pytest.approx(11.0, abs=EXACT)
    assert ev.summary["dcg@6"] == pytest.approx(ref_dcg(REL_IDEAL), abs=EXACT)


def _ideal_choice_frames():
    items = ["iPhone", "xiaomi", "Huawei", "OPPO", "VIVO", "Samsung"]
    run = pd.DataFrame({"user_id": "shouji", "item_id": items, "score": [6.0, 5, 4, 3, 2, 1]})
    qrels = pd.DataFrame(
        {
            "user_id": "shouji",
            "item_id": items + ["result7", "result8"],
            "relevance": REL_IDEAL + [3, 2],
        }
    )
    return run, qrels


def test_ideal_choice_ndcg_ideal_retrieved():
    v = mc.ndcg_at_k(REL_IDEAL, k=6)
    assert v == pytest.approx(ref_ndcg(REL_IDEAL, 6), abs=EXACT)
    assert round(v, 3) == 0.961
    assert round(mc.dcg_at_k([3, 3, 2, 2, 1, 0], k=6), 3) == 7.141
    run, qrels = _ideal_choice_frames()
    ev = mc.evaluate(run, qrels, metrics=["ndcg@6"], ideal="retrieved")
    assert ev.summary["ndcg@6"] == pytest.approx(ref_ndcg(REL_IDEAL, 6), abs=EXACT)
    assert round(ev.summary["ndcg@6"], 3) == 0.961


def test_ideal_choice_ndcg_ideal_judged():
    # with results 7 (rel 3) and 8 (rel 2) known, the ideal is 3,3,3,2,2,2,1,0
    ideal = [3, 3, 3, 2, 2, 2, 1, 0]
    expected = ref_dcg(REL_IDEAL, 6) / ref_dcg(ideal, 6)
    v = mc.ndcg_at_k(REL_IDEAL, k=6, ideal_relevances=REL_IDEAL + [3, 2])
    assert v == pytest.approx(expected, abs=EXACT)
    run, qrels = _ideal_choice_frames()
    ev = mc.evaluate(run, qrels, metrics=["ndcg@6", "ndcg"], ideal="judged")
    assert ev.summary["ndcg@6"] == pytest.approx(expected, abs=EXACT)
    assert ev.summary["ndcg"] == pytest.approx(ref_dcg(REL_IDEAL) / ref_dcg(ideal), abs=EXACT)


def test_ideal_choice_python_snippet_exponential():
    # the usual get_dcg snippet uses 2^rel - 1 with the retrieved list re-sorted as ideal
    expected = ref_dcg(REL_IDEAL, gain="exponential") / ref_dcg([3, 3, 2, 2, 1, 0], gain="exponential")
    assert mc.ndcg_at_k(REL_IDEAL, gain="exponential") == pytest.approx(expected, abs=EXACT)
    run, qrels = _ideal_choice_frames()
    ev = mc.evaluate(run, qrels, metrics=["ndcg"], gain="exponential", ideal="retrieved")
    assert ev.summary["ndcg"] == pytest.approx(expected, abs=EXACT)


# -------- precision, recall and F1 at k; NDCG@6 with the ideal over all judged items
def _cutoff_run():
    # relevant {A, C, E, Q}; the model returns A, B, C, D, E
    run = pd.DataFrame({"user_id": "q", "item_id": list("ABCDE"), "score": [5.0, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"user_id": "q", "item_id": list("ACEQ"), "relevance": 1})
    return run, qrels


def test_cutoff_precision_recall_f1_at_k():
    hits = [1, 0, 1, 0, 1]
    art = {3: (0.67, 0.50, 0.57), 4: (0.50, 0.50, 0.50), 5: (0.60, 0.75, 0.67)}
    run, qrels = _cutoff_run()
    metrics = [f"{m}@{k}" for k in art for m in ("precision", "recall", "f1", "p")]
    ev = mc.evaluate(run, qrels, metrics=metrics)
    for k, (p_art, r_art, f_art) in art.items():
        p = sum(hits[:k]) / k
        r = sum(hits[:k]) / 4
        f = 2 * p * r / (p + r)
        assert mc.precision_at_k(hits, k) == pytest.approx(p, abs=EXACT)
        assert mc.recall_at_k(hits, k, 4) == pytest.approx(r, abs=EXACT)
        assert ev.summary[f"precision@{k}"] == pytest.approx(p, abs=EXACT)
        assert ev.summary[f"p@{k}"] == pytest.approx(p, abs=EXACT)
        assert ev.summary[f"recall@{k}"] == pytest.approx(r, abs=EXACT)
        assert ev.summary[f"f1@{k}"] == pytest.approx(f, abs=EXACT)
        assert (round(p, 2), round(r, 2), round(f, 2)) == (p_art, r_art, f_art)


def test_cutoff_ndcg_at_6():
    rels = [3, 2, 3, 0, 1, 2, 3, 0]
    scores = [0.94, 0.93, 0.92, 0.91, 0.8, 0.7, 0.6, 0.5]
    # a hand calculation sums terms rounded to 8 decimals: agree to a few units in the 8th
    assert abs(mc.dcg_at_k(rels, k=6) - 6.86112667) < 5e-8
    assert abs(mc.dcg_at_k(sorted(rels, reverse=True), k=6) - 8.38405516) < 5e-8
    assert mc.dcg_at_k(rels, k=6) == pytest.approx(ref_dcg(rels, 6), abs=EXACT)
    assert mc.ndcg_at_k(rels, k=6) == pytest.approx(0.8183541904922857, abs=1e-12)
    run = pd.DataFrame(
        {"user_id": "q", "item_id": list("ABCDEFGH"), "score": scores, "relevance": rels}
    )
    for ideal in ["judged", "retrieved"]:
        ev = mc.evaluate(run, metrics=["ndcg@6"], ideal=ideal)
        assert ev.summary["ndcg@6"] == pytest.approx(0.8183541904922857, abs=1e-12)
        assert round(ev.summary["ndcg@6"], 8) == 0.81835419
    # the note: only the order of the scores matters
    run2 = run.assign(score=[100.0, 90, 80, 70, 60, 50, 40, 30])
    ev2 = mc.evaluate(run2, metrics=["ndcg@6"])
    assert ev2.summary["ndcg@6"] == pytest.approx(0.8183541904922857, abs=1e-12)
