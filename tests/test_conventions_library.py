"""The conventions that reproduce other libraries, against the plain-Python reference.

``gain="binary"``, ``ideal="k"``, ``ap_norm="k"``, ``precision_norm="min_k"`` and
``missing_users="exclude"`` are checked on random data with graded relevance,
heavy ties (``ties="average"`` is compared with the mean over every order of the
tied items, enumerated by tests/_ranking_reference.py), short lists, users
without relevant items, users missing from the run and users only in the run.
``unjudged_rows="exclude"`` is checked against scikit-learn on the judged rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import metrics_core as mc
from _ranking_reference import summary

TOL = 1e-9


def make_data(seed: int):
    """Small lists (tie groups of at most 4, so brute force stays small) and every kind of user."""
    rng = np.random.default_rng(seed)
    run_rows, truth, run = [], {}, {}
    for u in range(14):
        uid = f"u{u}"
        kind = u % 7  # 0: missing from the run, 1: no relevant item, 2: only in the run, else normal
        n = int(rng.integers(1, 7))
        scores = rng.integers(0, 3, n) / 2.0
        items = [f"{uid}-{j}" for j in range(n)]
        judged = {it: int(rng.integers(0, 4)) for it in items if rng.random() < 0.7}
        judged.update({f"{uid}-x{j}": int(rng.integers(1, 4)) for j in range(int(rng.integers(0, 3)))})
        if kind == 1:
            judged = {it: 0 for it in judged}
        if kind == 0:
            judged[f"{uid}-x9"] = 2
        if kind != 2:
            truth[uid] = judged
        if kind != 0:
            run[uid] = [(float(s), it, len(run_rows) + j) for j, (s, it) in enumerate(zip(scores, items))]
            run_rows += [(uid, it, float(s)) for s, it in zip(scores, items)]
    run_df = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame([(u, i, r) for u, d in truth.items() for i, r in d.items()],
                         columns=["user_id", "item_id", "relevance"])
    return run_df, qrels, run, truth


CASES = [
    dict(gain="binary"), dict(ideal="k"), dict(gain="binary", ideal="k"), dict(ap_norm="k"),
    dict(precision_norm="min_k"), dict(missing_users="exclude"), dict(gain="exponential", ideal="k"),
    dict(missing_users="exclude", empty_users="zero", ap_norm="k", precision_norm="min_k"),
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("ties", ["average", "input", "trec"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: ",".join(f"{k}={v}" for k, v in c.items()))
@pytest.mark.parametrize("k", [1, 3, 5])
def test_new_conventions_match_the_reference(seed, ties, case, k):
    run_df, qrels, run, truth = make_data(seed)
    thr = 2.0 if seed == 2 else 1.0
    conv = dict(case)
    ev = mc.evaluate(run_df, qrels, metrics=[f"ndcg@{k}", f"map@{k}", f"precision@{k}", f"dcg@{k}"], ties=ties,
                     relevance_threshold=thr, **conv)
    ref_conv = dict(gain_kind=conv.get("gain", "linear"), ideal=conv.get("ideal", "judged"),
                    ap_norm=conv.get("ap_norm", "relevant"), precision_norm=conv.get("precision_norm", "k"),
                    threshold=thr)
    want = summary(run, truth, k, ties, empty_users=conv.get("empty_users", "exclude"),
                   missing_users=conv.get("missing_users", "zero"), **ref_conv)
    for name in ("ndcg", "map", "precision", "dcg"):
        assert ev.summary[f"{name}@{k}"] == pytest.approx(want[name], abs=TOL), name


def test_missing_users_exclude_leaves_them_out():
    run_df, qrels, _, truth = make_data(0)
    ev0 = mc.evaluate(run_df, qrels, metrics=["ndcg@3"])
    ev1 = mc.evaluate(run_df, qrels, metrics=["ndcg@3"], missing_users="exclude")
    missing = set(truth) - set(run_df["user_id"])
    assert missing & set(ev0.per_user.index)
    assert not missing & set(ev1.per_user.index)
    assert set(ev1.per_user.index) == set(ev0.per_user.index) - missing


def test_ideal_k_exceeds_one_never_for_binary_gain_and_is_below_judged_ideal():
    # RecTools' divide_by_achievable=False: a user with R < k cannot reach 1
    run = pd.DataFrame({"user_id": [1, 1, 1], "item_id": [1, 2, 3], "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"user_id": [1], "item_id": [1], "relevance": [1]})
    ev = mc.evaluate(run, qrels, metrics=["ndcg@3"], ideal="k", gain="binary")
    assert ev.summary["ndcg@3"] == pytest.approx(1.0 / (1 + 1 / np.log2(3) + 0.5), abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_unjudged_rows_exclude_scores_only_judged_rows(seed):
    rng = np.random.default_rng(seed)
    n = 300
    run_df = pd.DataFrame({"user_id": rng.integers(0, 20, n), "item_id": rng.integers(0, 40, n),
                           "score": rng.integers(0, 10, n) / 10}).drop_duplicates(["user_id", "item_id"])
    qrels = run_df.sample(frac=0.6, random_state=seed)[["user_id", "item_id"]].assign(
        relevance=lambda d: rng.integers(0, 3, len(d)))
    ev = mc.evaluate(run_df, qrels, metrics=["auc", "rmse", "gauc"], unjudged_rows="exclude")
    judged = run_df.merge(qrels, on=["user_id", "item_id"], how="inner")
    y = (judged["relevance"] >= 1).astype(int)
    assert ev.summary["auc"] == pytest.approx(roc_auc_score(y, judged["score"]), abs=TOL)
    rmse = float(np.sqrt(np.mean((judged["score"] - judged["relevance"]) ** 2)))
    assert ev.summary["rmse"] == pytest.approx(rmse, abs=TOL)
    # gauc: per user AUC over judged rows, weighted by judged rows, users with both classes
    num = den = 0.0
    for _, g in judged.groupby("user_id"):
        yy = (g["relevance"] >= 1).astype(int)
        if 0 < yy.sum() < len(yy):
            num += len(g) * roc_auc_score(yy, g["score"])
            den += len(g)
    assert ev.summary["gauc"] == pytest.approx(num / den, abs=TOL)
    every = mc.evaluate(run_df, qrels, metrics=["auc"])
    assert every.summary["auc"] != ev.summary["auc"]


def _diversity_data(seed):
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(12):
        n = int(rng.integers(1, 6))
        for j, item in enumerate(rng.choice(15, size=n, replace=False)):
            rows.append((u, int(item), float(n - j)))  # distinct scores: one order
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    truth_users = [u for u in range(14) if u % 4 != 1]  # users 1, 5, 9 only in the run; 12, 13 missing
    qrels = pd.DataFrame([(u, int(i), int(rng.integers(1, 3))) for u in truth_users
                          for i in rng.choice(15, size=3, replace=False)], columns=["user_id", "item_id", "relevance"])
    inter = pd.DataFrame({"user_id": rng.integers(0, 30, 120), "item_id": rng.integers(0, 15, 120)})
    return run, qrels, inter


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("popularity", ["users", "interactions"])
@pytest.mark.parametrize("average", ["users", "rows"])
@pytest.mark.parametrize("beyond", ["evaluated", "listed"])
def test_novelty_conventions_match_plain_formulas(seed, popularity, average, beyond):
    run, qrels, inter = _diversity_data(seed)
    k = 3
    if popularity == "users":
        counts = inter.drop_duplicates().groupby("item_id")["user_id"].nunique()
        total = inter["user_id"].nunique()
    else:
        counts = inter.groupby("item_id").size()
        total = len(inter)
    info = {i: -np.log2(max(counts.get(i, 0), 1) / total) for i in set(run["item_id"])}
    if beyond == "evaluated":
        users = set(qrels["user_id"]) & set(run["user_id"])  # missing users have no list: NaN, left out
    else:
        users = set(run["user_id"])
    lists = {u: g.sort_values("score", ascending=False)["item_id"].tolist()[:k] for u, g in run.groupby("user_id")
             if u in users}
    if average == "users":
        want = np.mean([np.mean([info[i] for i in items]) for items in lists.values()])
    else:
        want = sum(info[i] for items in lists.values() for i in items) / sum(len(x) for x in lists.values())
    ev = mc.evaluate(run, qrels, metrics=[f"novelty@{k}"], interactions=inter, novelty_popularity=popularity,
                     novelty_average=average, beyond_users=beyond)
    assert ev.summary[f"novelty@{k}"] == pytest.approx(want, abs=TOL)


@pytest.mark.parametrize("seed", range(3))
def test_short_lists_zero_scores_single_item_lists_zero(seed):
    run, qrels, _ = _diversity_data(seed)
    features = pd.DataFrame({"item_id": range(15), "tags": [f"t{i % 4},t{i % 3}" for i in range(15)]})
    k = 4
    lists = {u: g.sort_values("score", ascending=False)["item_id"].tolist()[:k] for u, g in run.groupby("user_id")}
    tags = {i: {f"t{i % 4}", f"t{i % 3}"} for i in range(15)}

    def ils(items):
        pairs = [(a, b) for x, a in enumerate(items) for b in items[x + 1:]]
        return np.mean([len(tags[a] & tags[b]) / len(tags[a] | tags[b]) for a, b in pairs]) if pairs else None

    evaluated = sorted(set(qrels["user_id"]) & set(run["user_id"]))
    values = [ils(lists[u]) for u in evaluated]
    zero = mc.evaluate(run, qrels, metrics=[f"ils@{k}"], item_features=features, short_lists="zero")
    left_out = mc.evaluate(run, qrels, metrics=[f"ils@{k}"], item_features=features)
    assert zero.summary[f"ils@{k}"] == pytest.approx(np.mean([v or 0.0 for v in values]), abs=TOL)
    assert left_out.summary[f"ils@{k}"] == pytest.approx(np.mean([v for v in values if v is not None]), abs=TOL)


@pytest.mark.parametrize("keyword", [dict(novelty_popularity="interactions"), dict(novelty_average="rows"),
                                     dict(beyond_users="listed"), dict(preset="ms_recommenders")])
def test_spark_refuses_the_diversity_conventions_it_does_not_compute(keyword):
    from metrics_core import spark as mcs

    with pytest.raises(mc.MetricsError, match="not on the Spark engine yet"):
        mcs.evaluate(None, None, ["novelty@3"], **keyword)  # refused before any data is read
