"""Diversity / beyond-accuracy metrics against brute-force Python references.

Definitions (metrics_core.evaluate docstrings), over the evaluated users' top-k
lists (score descending, distinct scores here so the order is unambiguous):

* ils@k: mean over pairs i < j of the top-k items (those with features) of
  cosine(feature vectors) or Jaccard(tag sets); NaN with fewer than 2 such items;
  summary = mean over users with a value.
* coverage@k: distinct items in anyone's top k / catalogue (all items of run and
  ground truth, or of the item-features table when given).
* novelty@k: mean over the top k of -log2(pop(i)); pop(i) = users with a
  relevant (>= threshold) ground-truth interaction with i / users with any such
  interaction (or from an ``interactions`` table); an unseen item counts once.
* personalization@k: 1 - mean over pairs of users of |top_k(u) & top_k(v)| / k.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

TOL = 1e-9


def make_data(seed, int_ids=False):
    rng = np.random.default_rng(seed)
    pool = 14
    item = (lambda j: int(j) + 1000) if int_ids else (lambda j: f"it{j}")
    run_rows, qrel_rows = [], []
    for u in range(7):
        uid = f"u{u}"
        n = int(rng.integers(1, 9))
        items = rng.choice(pool, size=n, replace=False)
        scores = rng.permutation(n).astype(float) + 0.5
        if u != 6:  # u6 only in the run
            rel = rng.choice(pool, size=int(rng.integers(1, 5)), replace=False)
            qrel_rows += [(uid, item(j), int(rng.integers(1, 3))) for j in rel]
            qrel_rows += [(uid, item(j), 0) for j in rng.choice(pool, size=2, replace=False) if j not in rel]
        if u != 5:  # u5 missing from the run
            run_rows += [(uid, item(j), float(s)) for j, s in zip(items, scores)]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    qrels = qrels.drop_duplicates(["user_id", "item_id"])
    return run, qrels


def top_lists(run, qrels, k, thr=1):
    """Top-k item lists of evaluated users (>= 1 relevant item), users missing from the run -> []."""
    evaluated = sorted(set(qrels.loc[qrels["relevance"] >= thr, "user_id"]))
    out = {}
    for u in evaluated:
        g = run[run["user_id"] == u].sort_values("score", ascending=False)
        items = list(g["item_id"])
        out[u] = items if k is None else items[:k]
    return out


def cosine(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return float(np.dot(a, b) / (na * nb)) if na > 0 and nb > 0 else 0.0


def jaccard(a, b):
    return len(a & b) / len(a | b) if a | b else 0.0


def features_table(seed, items, int_ids=False):
    rng = np.random.default_rng(seed + 100)
    items = sorted(set(items), key=str)
    keep = [i for j, i in enumerate(items) if j % 5 != 4]  # some items lack features
    vec = {i: rng.normal(size=3) for i in keep}
    vec[keep[0]] = np.zeros(3)  # a zero vector: cosine 0 with everything
    tags = {i: set(rng.choice(list("abcdef"), size=int(rng.integers(1, 4)), replace=False)) for i in keep}
    feats = pd.DataFrame({"item_id": keep, "f1": [vec[i][0] for i in keep], "f2": [vec[i][1] for i in keep],
                          "f3": [vec[i][2] for i in keep]})
    tag_df = pd.DataFrame({"item_id": keep, "tags": [sorted(tags[i]) for i in keep]})
    return feats, tag_df, vec, tags


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("k", [2, 5, None])
@pytest.mark.parametrize("int_ids", [False, True], ids=["str", "int"])
def test_ils_cosine_and_jaccard(seed, k, int_ids):
    run, qrels = make_data(seed, int_ids)
    feats, tag_df, vec, tags = features_table(seed, list(run["item_id"]) + list(qrels["item_id"]), int_ids)
    lists = top_lists(run, qrels, k)
    label = "ils" if k is None else f"ils@{k}"
    for table, sim, store in [(feats, cosine, vec), (tag_df, jaccard, tags)]:
        want = {}
        for u, items in lists.items():
            its = [i for i in items if i in store]
            pairs = list(itertools.combinations(its, 2))
            want[u] = float(np.mean([sim(store[a], store[b]) for a, b in pairs])) if pairs else math.nan
        ev = mc.evaluate(run, qrels, metrics=[label], item_features=table)
        assert sorted(ev.per_user.index) == sorted(want)
        for u, w in want.items():
            got = float(ev.per_user.loc[u, label])
            if math.isnan(w):
                assert math.isnan(got), (u, got)
            else:
                assert got == pytest.approx(w, abs=TOL), (u, sim.__name__)
        finite = [w for w in want.values() if not math.isnan(w)]
        assert ev.summary[label] == pytest.approx(float(np.mean(finite)), abs=TOL)


def test_ils_tags_as_delimited_strings():
    run = pd.DataFrame({"user_id": "u", "item_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"user_id": ["u"], "item_id": ["a"], "relevance": [1]})
    tags = pd.DataFrame({"item_id": ["a", "b", "c"], "tags": ["x|y", "y;z", "x, y ,z"]})
    ev = mc.evaluate(run, qrels, metrics=["ils@3"], item_features=tags)
    sets = [{"x", "y"}, {"y", "z"}, {"x", "y", "z"}]
    want = np.mean([jaccard(a, b) for a, b in itertools.combinations(sets, 2)])
    assert ev.summary["ils@3"] == pytest.approx(want, abs=TOL)


def test_ils_without_features_is_an_error():
    run, qrels = make_data(0)
    with pytest.raises(mc.MetricsError):
        mc.evaluate(run, qrels, metrics=["ils@5"])


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("k", [1, 3, None])
def test_coverage(seed, k):
    run, qrels = make_data(seed)
    lists = top_lists(run, qrels, k)
    recommended = set(itertools.chain.from_iterable(lists.values()))
    catalogue = set(run["item_id"]) | set(qrels["item_id"])
    label = "coverage" if k is None else f"coverage@{k}"
    ev = mc.evaluate(run, qrels, metrics=[label])
    assert ev.summary[label] == pytest.approx(len(recommended) / len(catalogue), abs=TOL)
    feats, _, _, _ = features_table(seed, sorted(catalogue))
    bigger = pd.concat([feats, pd.DataFrame({"item_id": ["extra1", "extra2"], "f1": 1.0, "f2": 0.0, "f3": 0.0})])
    ev2 = mc.evaluate(run, qrels, metrics=[label], item_features=bigger)
    # with an item-features table, the catalogue is that table's items
    assert ev2.summary[label] == pytest.approx(len(recommended) / bigger["item_id"].nunique(), abs=TOL)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("k", [2, 4])
@pytest.mark.parametrize("source", ["truth", "interactions"])
def test_novelty(seed, k, source):
    run, qrels = make_data(seed)
    lists = top_lists(run, qrels, k)
    if source == "truth":
        pos = qrels[qrels["relevance"] >= 1]
        inter = None
    else:
        rng = np.random.default_rng(seed)
        pos = pd.DataFrame({"user_id": [f"v{x}" for x in rng.integers(0, 9, size=40)],
                            "item_id": [f"it{x}" for x in rng.integers(0, 10, size=40)]})
        inter = pos
    pairs = pos[["user_id", "item_id"]].drop_duplicates()
    n_users = pairs["user_id"].nunique()
    count = pairs.groupby("item_id").size().to_dict()
    info = lambda i: -math.log2(max(count.get(i, 0), 1) / n_users)  # noqa: E731
    ev = mc.evaluate(run, qrels, metrics=[f"novelty@{k}"], interactions=inter)
    want = {}
    for u, items in lists.items():
        want[u] = float(np.mean([info(i) for i in items])) if items else math.nan
        got = float(ev.per_user.loc[u, f"novelty@{k}"])
        if math.isnan(want[u]):
            assert math.isnan(got)
        else:
            assert got == pytest.approx(want[u], abs=TOL), u
    finite = [w for w in want.values() if not math.isnan(w)]
    assert ev.summary[f"novelty@{k}"] == pytest.approx(float(np.mean(finite)), abs=TOL)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("k", [1, 3, 5])
def test_personalization(seed, k):
    run, qrels = make_data(seed)
    lists = {u: set(v) for u, v in top_lists(run, qrels, k).items() if v}
    pairs = list(itertools.combinations(sorted(lists), 2))
    want = 1.0 - np.mean([len(lists[a] & lists[b]) / k for a, b in pairs])
    ev = mc.evaluate(run, qrels, metrics=[f"personalization@{k}"])
    assert ev.summary[f"personalization@{k}"] == pytest.approx(want, abs=TOL)


def test_personalization_identical_and_disjoint():
    items = ["a", "b", "c"]
    same = pd.DataFrame({"user_id": [u for u in "xyz" for _ in items], "item_id": items * 3,
                         "score": [3.0, 2.0, 1.0] * 3, "relevance": 1})
    assert mc.evaluate(same, metrics=["personalization@3"]).summary["personalization@3"] == pytest.approx(0.0)
    disjoint = same.assign(item_id=[f"{u}{i}" for u in "xyz" for i in items])
    assert mc.evaluate(disjoint, metrics=["personalization@3"]).summary["personalization@3"] == pytest.approx(1.0)


def test_personalization_is_exact_for_many_users():
    """personalization@k counts shared pairs as sum_i C(c_i, 2), so it is exact at any size:
    compare with the brute-force pairwise mean on a few thousand users."""
    rng = np.random.default_rng(7)
    n_users, k = 2500, 3
    rows = []
    for u in range(n_users):
        items = rng.choice(40, size=k, replace=False)
        for r, it in enumerate(items):
            rows.append((u, f"i{it}", float(k - r)))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame({"user_id": np.arange(n_users), "item_id": "i0", "relevance": 1.0})
    got = mc.evaluate(run, qrels, metrics=[f"personalization@{k}"]).summary[f"personalization@{k}"]
    sets = [set(g["item_id"]) for _, g in run.groupby("user_id")]
    counts = {}
    for s_ in sets:
        for it in s_:
            counts[it] = counts.get(it, 0) + 1
    shared = sum(c * (c - 1) / 2 for c in counts.values())
    pairs = n_users * (n_users - 1) / 2
    assert got == pytest.approx(1 - shared / (pairs * k), abs=1e-12)
    # and against an explicit pairwise loop on a subset
    sub = run[run["user_id"] < 60]
    got_sub = mc.evaluate(sub, qrels[qrels["user_id"] < 60], metrics=[f"personalization@{k}"]).summary
    ss = [set(g["item_id"]) for _, g in sub.groupby("user_id")]
    overl = [len(ss[i] & ss[j]) / k for i in range(len(ss)) for j in range(i + 1, len(ss))]
    assert got_sub[f"personalization@{k}"] == pytest.approx(1 - np.mean(overl), abs=1e-12)


def test_diversity_ties_average_is_expectation_over_tie_orders():
    """ties="average" is the exact expected value over all orders of tied scores for every
    metric: brute force over every order of both users' tied items."""
    run = pd.DataFrame({
        "user_id": ["u"] * 4 + ["v"] * 4,
        "item_id": ["a", "b", "c", "d", "a", "c", "e", "f"],
        "score": [0.9, 0.5, 0.5, 0.5, 0.7, 0.7, 0.7, 0.1],
    })
    qrels = pd.DataFrame({"user_id": ["u", "v", "w"], "item_id": ["a", "e", "a"], "relevance": [1, 1, 1]})
    vec = {"a": [1.0, 0.0], "b": [1.0, 1.0], "c": [0.0, 1.0], "d": [1.0, -1.0], "e": [2.0, 1.0], "f": [0.5, 3.0]}
    feats = pd.DataFrame({"item_id": list(vec), "x": [v[0] for v in vec.values()], "y": [v[1] for v in vec.values()]})
    k = 2
    pop = {"a": 2, "e": 1}  # users w and u interacted with a, v with e; 3 users
    info = lambda i: -math.log2(max(pop.get(i, 0), 1) / 3)  # noqa: E731

    def orders(user):
        g = run[run["user_id"] == user]
        groups = {}
        for it, s in zip(g["item_id"], g["score"]):
            groups.setdefault(s, []).append(it)
        blocks = [list(itertools.permutations(groups[s])) for s in sorted(groups, reverse=True)]
        return [[i for b in combo for i in b] for combo in itertools.product(*blocks)]

    sums = {"ils": {"u": 0.0, "v": 0.0}, "novelty": {"u": 0.0, "v": 0.0}, "coverage": 0.0, "personalization": 0.0}
    n = 0
    for lu in orders("u"):
        for lv in orders("v"):
            tops = {"u": lu[:k], "v": lv[:k]}
            for user, top in tops.items():
                sums["ils"][user] += cosine(np.array(vec[top[0]]), np.array(vec[top[1]]))
                sums["novelty"][user] += np.mean([info(i) for i in top])
            sums["coverage"] += len(set(tops["u"]) | set(tops["v"])) / 6
            sums["personalization"] += 1 - len(set(tops["u"]) & set(tops["v"])) / k
            n += 1
    ev = mc.evaluate(run, qrels, metrics=[f"ils@{k}", f"novelty@{k}", f"coverage@{k}", f"personalization@{k}"],
                     item_features=feats, ties="average")
    for user in ("u", "v"):
        assert ev.per_user.loc[user, f"ils@{k}"] == pytest.approx(sums["ils"][user] / n, abs=TOL), user
        assert ev.per_user.loc[user, f"novelty@{k}"] == pytest.approx(sums["novelty"][user] / n, abs=TOL), user
    assert ev.summary[f"coverage@{k}"] == pytest.approx(sums["coverage"] / n, abs=TOL)
    assert ev.summary[f"personalization@{k}"] == pytest.approx(sums["personalization"] / n, abs=TOL)
