"""Every convention keyword of mc.evaluate against hand-written references.

ideal judged/retrieved, ap_norm relevant/min_k/retrieved, gain exponential,
relevance_threshold, empty_users exclude/zero, users only in the run (excluded
and counted), users missing from the run (score 0), ties trec/input,
gauc_weight rows/positives/uniform, pcopc, pooled hit_ratio vs hit_rate,
exact ids, bad values.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

TOL = 1e-12


def dcg(gains, k=None):
    gains = list(gains)[: len(gains) if k is None else k]
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def frames(lists, judgments):
    """lists: {user: [(item, score)]}; judgments: {user: {item: rel}}."""
    run = pd.DataFrame([(u, i, s) for u, l in lists.items() for i, s in l], columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame([(u, i, r) for u, d in judgments.items() for i, r in d.items()],
                         columns=["user_id", "item_id", "relevance"])
    return run, qrels


# ------------------------------------------------------------------ ideal
def test_ideal_judged_vs_retrieved():
    # retrieved rels 0, 2, 1; a judged item with rel 3 was not retrieved
    run, qrels = frames({"u": [("a", 3.0), ("b", 2.0), ("c", 1.0)]},
                        {"u": {"a": 0, "b": 2, "c": 1, "z": 3}})
    got = {ideal: mc.evaluate(run, qrels, metrics=["ndcg@2", "ndcg"], ideal=ideal).summary
           for ideal in ("judged", "retrieved")}
    assert got["judged"]["ndcg@2"] == pytest.approx(dcg([0, 2], 2) / dcg([3, 2], 2), abs=TOL)
    assert got["judged"]["ndcg"] == pytest.approx(dcg([0, 2, 1]) / dcg([3, 2, 1, 0]), abs=TOL)
    assert got["retrieved"]["ndcg@2"] == pytest.approx(dcg([0, 2], 2) / dcg([2, 1], 2), abs=TOL)
    assert got["retrieved"]["ndcg"] == pytest.approx(dcg([0, 2, 1]) / dcg([2, 1, 0]), abs=TOL)


def test_ideal_retrieved_without_relevant_retrieved_is_zero():
    run, qrels = frames({"u": [("a", 2.0), ("b", 1.0)]}, {"u": {"a": 0, "z": 1}})
    ev = mc.evaluate(run, qrels, metrics=["ndcg@2"], ideal="retrieved")
    assert ev.summary["ndcg@2"] == 0.0
    assert ev.n_users == 1


# ------------------------------------------------------------------ ap_norm
@pytest.mark.parametrize("k", [3, 5])
def test_ap_norm(k):
    # hits 1,0,1,0,0 with 4 relevant items in total (two never retrieved)
    run, qrels = frames({"u": [(c, float(5 - j)) for j, c in enumerate("abcde")]},
                        {"u": {"a": 1, "c": 1, "y": 1, "z": 1, "b": 0}})
    s = 1 + 2 / 3
    want = {"relevant": s / 4, "min_k": s / min(k, 4), "retrieved": s / 2}
    for norm, value in want.items():
        ev = mc.evaluate(run, qrels, metrics=[f"map@{k}"], ap_norm=norm)
        assert ev.summary[f"map@{k}"] == pytest.approx(value, abs=TOL), norm
        single = mc.average_precision_at_k([1, 0, 1, 0, 0], k=k, n_relevant=4, ap_norm=norm)
        assert single == pytest.approx(value, abs=TOL), norm


def test_ap_norm_min_k_smaller_than_relevant():
    # 6 relevant, k=2: min_k divides by 2 (RecBole), relevant by 6 (trec_eval map_cut)
    run, qrels = frames({"u": [("a", 3.0), ("b", 2.0), ("c", 1.0)]},
                        {"u": {x: 1 for x in "abcxyz"}})
    assert mc.evaluate(run, qrels, metrics=["map@2"], ap_norm="min_k").summary["map@2"] == pytest.approx(1.0)
    assert mc.evaluate(run, qrels, metrics=["map@2"], ap_norm="relevant").summary["map@2"] == pytest.approx(2 / 6)
    assert mc.evaluate(run, qrels, metrics=["map@2"], ap_norm="retrieved").summary["map@2"] == pytest.approx(1.0)


def test_ap_norm_retrieved_no_hit_is_zero():
    run, qrels = frames({"u": [("a", 2.0), ("b", 1.0)]}, {"u": {"z": 1}})
    assert mc.evaluate(run, qrels, metrics=["map"], ap_norm="retrieved").summary["map"] == 0.0


# ------------------------------------------------------------------ gain
def test_gain_exponential_graded():
    run, qrels = frames({"u": [("a", 3.0), ("b", 2.0), ("c", 1.0)]},
                        {"u": {"a": 1, "b": 3, "c": 0, "z": 2}})
    ex = lambda r: 2**r - 1  # noqa: E731
    ev = mc.evaluate(run, qrels, metrics=["dcg@3", "ndcg@3", "cg@3"], gain="exponential")
    assert ev.summary["dcg@3"] == pytest.approx(dcg([ex(1), ex(3), ex(0)]), abs=TOL)
    assert ev.summary["ndcg@3"] == pytest.approx(dcg([1, 7, 0]) / dcg([7, 3, 1]), abs=TOL)
    assert ev.summary["cg@3"] == pytest.approx(1 + 7 + 0, abs=TOL)


def test_negative_relevance_gains_zero():
    run, qrels = frames({"u": [("a", 3.0), ("b", 2.0)]}, {"u": {"a": -1, "b": 1}})
    for gain in ("linear", "exponential"):
        ev = mc.evaluate(run, qrels, metrics=["dcg", "ndcg", "p@1"], gain=gain)
        assert ev.summary["dcg"] == pytest.approx(1 / math.log2(3), abs=TOL)
        assert ev.summary["ndcg"] == pytest.approx((1 / math.log2(3)) / 1.0, abs=TOL)
        assert ev.summary["p@1"] == 0.0


# ------------------------------------------------------------------ relevance_threshold
def test_relevance_threshold():
    run, qrels = frames(
        {"u": [("a", 4.0), ("b", 3.0), ("c", 2.0), ("d", 1.0)], "v": [("a", 1.0)]},
        {"u": {"a": 3, "b": 1, "c": 2, "d": 0}, "v": {"a": 1}},
    )
    metrics = ["p@2", "recall@4", "map", "mrr@1", "ndcg", "r_precision", "hit_rate@1"]
    ev1 = mc.evaluate(run, qrels, metrics=metrics, relevance_threshold=1)
    ev2 = mc.evaluate(run, qrels, metrics=metrics, relevance_threshold=2)
    assert ev1.n_users == 2 and ev2.n_users == 1  # v has nothing >= 2
    assert list(ev2.per_user.index) == ["u"]
    u1, u2 = ev1.per_user.loc["u"], ev2.per_user.loc["u"]
    assert u1["p@2"] == pytest.approx(1.0) and u2["p@2"] == pytest.approx(0.5)
    assert u2["recall@4"] == pytest.approx(1.0)
    assert u1["map"] == pytest.approx((1 + 1 + 1) / 3) and u2["map"] == pytest.approx((1 + 2 / 3) / 2)
    assert u2["r_precision"] == pytest.approx(1 / 2)
    # graded gains do not depend on the threshold
    assert u1["ndcg"] == pytest.approx(u2["ndcg"], abs=TOL)
    assert u2["ndcg"] == pytest.approx(dcg([3, 1, 2, 0]) / dcg([3, 2, 1, 0]), abs=TOL)


# ------------------------------------------------------------------ users
def _users_frames():
    lists = {
        "both": [("a", 2.0), ("b", 1.0)],
        "norel": [("a", 2.0), ("b", 1.0)],     # judged, nothing relevant
        "runonly": [("a", 2.0), ("b", 1.0)],   # no ground truth at all
    }
    judgments = {
        "both": {"a": 0, "b": 1},
        "norel": {"a": 0, "b": 0},
        "missing": {"a": 1, "c": 1},           # relevant items, absent from the run
    }
    return frames(lists, judgments)


def test_users_exclude_default():
    run, qrels = _users_frames()
    ev = mc.evaluate(run, qrels, metrics=["map", "ndcg@2", "p@1", "mrr", "hit_ratio@2"])
    assert sorted(ev.per_user.index) == ["both", "missing"]
    assert ev.n_users == 2
    assert (ev.per_user.loc["missing"] == 0).all()
    assert ev.per_user.loc["both", "map"] == pytest.approx(0.5)
    assert ev.summary["map"] == pytest.approx((0.5 + 0) / 2)
    assert ev.summary["mrr"] == pytest.approx((0.5 + 0) / 2)
    # pooled: 1 hit / (1 + 2) relevant, the missing user's relevant items count
    assert ev.summary["hit_ratio@2"] == pytest.approx(1 / 3)
    d = ev.diagnostics.to_dict()
    assert d["users_only_in_run"] == 1
    assert d["users_only_in_truth"] == 1
    assert d["users_without_relevant"] == 1
    assert d["n_users_evaluated"] == 2
    text = " ".join(ev.diagnostics.warnings())
    assert "only in the run" in text and "missing from the run" in text


def test_users_empty_zero():
    run, qrels = _users_frames()
    ev = mc.evaluate(run, qrels, metrics=["map", "ndcg@2", "p@1"], empty_users="zero")
    assert sorted(ev.per_user.index) == ["both", "missing", "norel"]
    assert ev.n_users == 3
    assert (ev.per_user.loc["norel"] == 0).all()
    assert ev.summary["map"] == pytest.approx(0.5 / 3)
    assert "runonly" not in ev.per_user.index


def test_no_common_user_is_an_error():
    run, qrels = frames({"x": [("a", 1.0)]}, {"y": {"a": 1}})
    with pytest.raises(mc.MetricsError) as err:
        mc.evaluate(run, qrels, metrics=["map"])
    assert "\n" not in str(err.value)


# ------------------------------------------------------------------ ties
def test_ties_input_and_trec():
    # all tied: trec order = item id descending as strings ("c" > "b" > "a"); input = row order
    run = pd.DataFrame({"user_id": "u", "item_id": ["b", "a", "c"], "score": 1.0})
    for rel_item, rank_trec, rank_input in [("a", 3, 2), ("b", 2, 1), ("c", 1, 3)]:
        qrels = pd.DataFrame({"user_id": ["u"], "item_id": [rel_item], "relevance": [1]})
        for ties, rank in [("trec", rank_trec), ("input", rank_input), ("average", None)]:
            ev = mc.evaluate(run, qrels, metrics=["mrr"], ties=ties)
            want = 1 / rank if rank else (1 + 1 / 2 + 1 / 3) / 3
            assert ev.summary["mrr"] == pytest.approx(want, abs=TOL), (rel_item, ties)


def test_ties_input_only_reorders_within_ties():
    # a higher score still wins under ties="input", whatever the row order
    run = pd.DataFrame({"user_id": "u", "item_id": ["x", "y", "z"], "score": [0.1, 0.5, 0.5]})
    qrels = pd.DataFrame({"user_id": ["u"], "item_id": ["z"], "relevance": [1]})
    assert mc.evaluate(run, qrels, metrics=["mrr"], ties="input").summary["mrr"] == pytest.approx(0.5)
    assert mc.evaluate(run, qrels, metrics=["mrr"], ties="trec").summary["mrr"] == pytest.approx(1.0)


def test_user_list_orders():
    run = pd.DataFrame({"user_id": "u", "item_id": ["b", "a", "c", "d"], "score": [1.0, 1.0, 1.0, 2.0],
                        "relevance": [0, 1, 0, 1]})
    ranked = mc.prepare(run)
    assert list(ranked.user_list("u", ties="trec")["item_id"]) == ["d", "c", "b", "a"]
    assert list(ranked.user_list("u", ties="input")["item_id"]) == ["d", "b", "a", "c"]
    lst = ranked.user_list("u")
    assert list(lst["rank"]) == [1, 2, 3, 4]
    assert list(lst["relevance"]) == [1, 0, 0, 1]


# ------------------------------------------------------------------ gauc, pcopc
def pairwise_auc(y, p):
    pos = [s for s, t in zip(p, y) if t]
    neg = [s for s, t in zip(p, y) if not t]
    if not pos or not neg:
        return None
    return sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg) / (len(pos) * len(neg))


def _ctr_log(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(10):
        n = int(rng.integers(1, 9))
        p = np.round(rng.random(n), 1)
        y = (rng.random(n) < p).astype(int)
        if u == 0:
            y[:] = 1  # single class: skipped by gauc
        rows += [(f"u{u}", f"i{j}", float(a), int(b)) for j, (a, b) in enumerate(zip(p, y))]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score", "label"])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("weight", ["rows", "positives", "uniform"])
def test_gauc_weights(seed, weight):
    df = _ctr_log(seed)
    num = den = 0.0
    skipped = 0
    for _, g in df.groupby("user_id"):
        a = pairwise_auc(g["label"].tolist(), g["score"].tolist())
        if a is None:
            skipped += 1
            continue
        w = {"rows": len(g), "positives": int(g["label"].sum()), "uniform": 1}[weight]
        num += w * a
        den += w
    ev = mc.evaluate(df, metrics=["gauc"], gauc_weight=weight)
    assert ev.summary["gauc"] == pytest.approx(num / den, abs=TOL)
    for u, g in df.groupby("user_id"):  # per-user column: that user's AUC, NaN for one class
        a = pairwise_auc(g["label"].tolist(), g["score"].tolist())
        if g["label"].sum() == 0:  # no relevant item: not an evaluated user
            assert u not in ev.per_user.index
            continue
        got = float(ev.per_user.loc[u, "gauc"])
        assert (a is None and math.isnan(got)) or got == pytest.approx(a, abs=TOL), u
    assert ev.diagnostics.to_dict()["gauc_users_skipped"] == skipped
    assert skipped >= 1


def test_pcopc():
    df = _ctr_log(4)
    ev = mc.evaluate(df, metrics=["pcopc"])
    assert ev.summary["pcopc"] == pytest.approx(df["score"].sum() / df["label"].sum(), abs=TOL)


def test_label_column_alias_matches_relevance():
    df = _ctr_log(1)
    a = mc.evaluate(df, metrics=["auc", "ndcg@3"]).summary
    b = mc.evaluate(df.rename(columns={"label": "relevance"}), metrics=["auc", "ndcg@3"]).summary
    assert a == b


# ------------------------------------------------------------------ hit ratio
def test_hit_ratio_pooled_vs_hit_rate_random():
    rng = np.random.default_rng(3)
    lists, judgments = {}, {}
    for u in range(8):
        items = [f"i{j}" for j in rng.choice(30, size=10, replace=False)]
        lists[f"u{u}"] = [(it, float(10 - r)) for r, it in enumerate(items)]
        judgments[f"u{u}"] = {f"i{j}": 1 for j in rng.choice(30, size=int(rng.integers(1, 8)), replace=False)}
    run, qrels = frames(lists, judgments)
    k = 5
    hits = [sum(it in judgments[u] for it, _ in lists[u][:k]) for u in lists]
    nrel = [len(judgments[u]) for u in lists]
    ev = mc.evaluate(run, qrels, metrics=[f"hit_ratio@{k}", f"hit_rate@{k}", f"recall@{k}"])
    assert ev.summary[f"hit_ratio@{k}"] == pytest.approx(sum(hits) / sum(nrel), abs=TOL)
    assert ev.summary[f"hit_rate@{k}"] == pytest.approx(np.mean([h > 0 for h in hits]), abs=TOL)
    assert ev.summary[f"recall@{k}"] == pytest.approx(np.mean([h / n for h, n in zip(hits, nrel)]), abs=TOL)
    assert f"hit_ratio@{k}" not in ev.per_user.columns  # pooled: no per-user column


# ------------------------------------------------------------------ ids, names, errors
def test_integer_ids_stay_exact():
    big = 2**53 + 1  # not representable as float64
    run = pd.DataFrame({"user_id": [big, big, big + 2], "item_id": [big, big + 2, big],
                        "score": [0.9, 0.1, 0.5], "relevance": [1, 0, 1]})
    ev = mc.evaluate(run, metrics=["map"])
    assert sorted(ev.per_user.index.tolist()) == [big, big + 2]
    assert ev.ranked.user_ids.tolist().count(big) == 1


def test_string_ids_keep_leading_zeros():
    run = pd.DataFrame({"user_id": ["007", "7"], "item_id": ["01", "1"], "score": [1.0, 1.0],
                        "relevance": [1, 1]})
    ev = mc.evaluate(run, metrics=["map"])
    assert sorted(ev.per_user.index.tolist()) == ["007", "7"]


def test_metric_names_case_insensitive_and_labels_kept():
    run, qrels = frames({"u": [("a", 2.0), ("b", 1.0)]}, {"u": {"b": 1}})
    ev = mc.evaluate(run, qrels, metrics=["NDCG@2", "ndcg@2", "P@1", "precision@1", "MAP"])
    assert list(ev.summary) == ["NDCG@2", "ndcg@2", "P@1", "precision@1", "MAP"]
    assert ev.summary["NDCG@2"] == ev.summary["ndcg@2"] == pytest.approx(1 / math.log2(3))
    assert ev.summary["P@1"] == ev.summary["precision@1"] == 0.0
    spec = mc.parse_metric("ndcg@10")
    assert (spec.name, spec.k, spec.label) == ("ndcg", 10, "ndcg@10")
    assert {"ndcg", "map", "mrr", "hit_ratio", "auc", "gauc", "pcopc", "ils", "f1"} <= set(mc.METRIC_NAMES)


@pytest.mark.parametrize("kwargs", [
    {"gain": "log"}, {"ideal": "best"}, {"ap_norm": "n"}, {"ties": "random"}, {"preset": "nope"},
    {"empty_users": "drop"}, {"gauc_weight": "clicks"}, {"metrics": ["ndcg@0"]},
    {"metrics": ["nDCG@x"]}, {"metrics": ["foo"]},
])
def test_bad_options_raise_one_line(kwargs):
    run, qrels = frames({"u": [("a", 2.0)]}, {"u": {"a": 1}})
    kw = {"metrics": ["map"], **kwargs}
    with pytest.raises(mc.MetricsError) as err:
        mc.evaluate(run, qrels, **kw)
    assert "\n" not in str(err.value) and str(err.value)


@pytest.mark.parametrize("run", [
    pd.DataFrame({"user_id": ["u", "u"], "item_id": ["a", "a"], "score": [1.0, 0.5], "relevance": [1, 0]}),
    pd.DataFrame({"user_id": ["u", "u"], "item_id": ["a", "b"], "score": [1.0, float("nan")], "relevance": [1, 0]}),
    pd.DataFrame({"user_id": ["u", "u"], "item_id": ["a", "b"], "score": [1.0, "high"], "relevance": [1, 0]}),
    pd.DataFrame({"user_id": ["u"], "item_id": ["a"], "relevance": [1]}),
    pd.DataFrame({"user_id": ["u"], "item_id": ["a"], "score": [1.0]}),
], ids=["duplicate-item", "nan-score", "text-score", "no-score", "no-relevance"])
def test_bad_frames_raise_one_line(run):
    with pytest.raises(mc.MetricsError) as err:
        mc.evaluate(run, metrics=["map"])
    assert "\n" not in str(err.value) and str(err.value)


@pytest.mark.parametrize("name", ["f1", "f1@5", "F1@10"])
def test_f1_names_parse(name):
    spec = mc.parse_metric(name)
    assert spec.name == "f1"
