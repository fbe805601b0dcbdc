"""ild@k against RecTools' IntraListDiversity (PairwiseHammingDistanceCalculator) itself.

RecTools: per user of the recommendations, the mean over pairs of the top-k items of the
number of feature columns whose values differ; a top k of one item scores 0; a pair with
an item without features has a NaN distance, left out of the mean (a user with only such
pairs is NaN, left out of the average). ``preset="rectools"`` with RecTools' own name
(``IntraListDiversity@k``) must give its numbers on data with one-item lists, items
without features, users without ground truth and tag sets (as RecTools' one-hot columns).
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

pytest.importorskip("rectools")
from rectools.metrics import IntraListDiversity  # noqa: E402
from rectools.metrics.distances import PairwiseHammingDistanceCalculator  # noqa: E402

TOL = 1e-9


def make_data(seed):
    """(run, qrels, features): 12 users with lists of 1 to 6 items (several of one item), distinct scores;
    features (columns with few values) for every item but 3, 10, 17 and 24; user 2 holds only those
    two, user 3 one of them among others; ground truth for 8 users."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(12):
        n = 1 if u % 4 == 0 else int(rng.integers(2, 7))
        items = rng.choice(30, size=n, replace=False)
        if u == 2:
            items = np.array([3, 10])
        if u == 3:
            items = np.array([17, *[i for i in items if i % 7 != 3]])
        rows += [(u, int(i), float(s)) for i, s in zip(items, rng.permutation(len(items)) + 0.5)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame([(u, int(i), 1) for u in range(8) for i in rng.choice(30, size=3, replace=False)],
                         columns=["user_id", "item_id", "relevance"])
    with_features = [i for i in range(30) if i % 7 != 3]  # items 3, 10, 17, 24 have none
    features = pd.DataFrame({"item_id": with_features, "genre": rng.integers(0, 3, len(with_features)),
                             "year": rng.integers(0, 2, len(with_features)),
                             "score": rng.choice([0.5, 1.5], len(with_features))})
    return run, qrels, features


def rectools_ild(run, features, k):
    """RecTools' per-user values and its mean (ranks: score descending)."""
    reco = run.sort_values(["user_id", "score"], ascending=[True, False])
    reco = reco.assign(rank=reco.groupby("user_id").cumcount() + 1)[["user_id", "item_id", "rank"]]
    metric = IntraListDiversity(k=k, distance_calculator=PairwiseHammingDistanceCalculator(
        features.set_index("item_id")))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its warning about items without features
        return metric.calc_per_user(reco), float(metric.calc(reco))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 2, 4, 10])
def test_ild_equals_rectools(seed, k):
    run, qrels, features = make_data(seed)
    per_user, mean = rectools_ild(run, features, k)
    assert per_user.isna().any() == (k > 1)  # user 2's only pair lacks features
    label = f"IntraListDiversity@{k}"
    got = mc.evaluate(run, qrels, metrics=[label], preset="rectools", item_features=features).summary[label]
    assert got == pytest.approx(mean, abs=TOL)
    # per user: every user of the run has ground truth here, so the evaluated users are RecTools' users
    truth = pd.DataFrame({"user_id": run["user_id"].unique(), "item_id": 0, "relevance": 1})
    ev = mc.evaluate(run, truth, metrics=[label], preset="rectools", item_features=features, beyond_users="evaluated")
    mine = ev.per_user[label]
    assert sorted(mine.index) == sorted(per_user.index)
    for user, want in per_user.items():
        if pd.isna(want):
            assert math.isnan(mine[user]), user
        else:
            assert mine[user] == pytest.approx(float(want), abs=TOL), user


def test_one_item_lists_score_zero_under_rectools_and_are_left_out_by_default():
    run, qrels, features = make_data(0)
    per_user, _ = rectools_ild(run, features, 5)
    one = run.groupby("user_id").size() == 1
    assert one.sum() >= 3 and (per_user[one[one].index] == 0).all()
    truth = pd.DataFrame({"user_id": run["user_id"].unique(), "item_id": 0, "relevance": 1})
    default = mc.evaluate(run, truth, metrics=["ild@5"], item_features=features)
    assert default.per_user["ild@5"][one[one].index].isna().all()
    longer = per_user[~per_user.index.isin(one[one].index)].dropna()
    assert default.summary["ild@5"] == pytest.approx(float(longer.mean()), abs=TOL)
    zero = mc.evaluate(run, truth, metrics=["ild@5"], item_features=features, short_lists="zero")
    assert zero.summary["ild@5"] == pytest.approx(float(per_user.dropna().mean()), abs=TOL)


def test_tag_sets_are_rectools_one_hot_columns():
    rng = np.random.default_rng(7)
    run, qrels, _ = make_data(1)
    tags = {i: set(rng.choice(list("abcde"), size=int(rng.integers(1, 4)), replace=False)) for i in range(30)}
    tag_table = pd.DataFrame({"item_id": list(tags), "tags": ["|".join(sorted(t)) for t in tags.values()]})
    one_hot = pd.DataFrame({"item_id": list(tags), **{c: [int(c in t) for t in tags.values()] for c in "abcde"}})
    _, mean = rectools_ild(run, one_hot, 4)
    got = mc.evaluate(run, qrels, metrics=["IntraListDiversity@4"], preset="rectools", item_features=tag_table)
    assert got.summary["IntraListDiversity@4"] == pytest.approx(mean, abs=TOL)


def test_ties_average_is_the_expectation_over_tie_orders():
    """Brute force over every order of the tied items (Hamming distances of two columns)."""
    run = pd.DataFrame({"user_id": ["u"] * 5, "item_id": ["a", "b", "c", "d", "e"],
                        "score": [0.9, 0.5, 0.5, 0.5, 0.1]})
    qrels = pd.DataFrame({"user_id": ["u"], "item_id": ["a"], "relevance": [1]})
    vec = {"a": (1, 0), "b": (1, 1), "c": (0, 1), "d": (2, 0), "e": (0, 0)}
    feats = pd.DataFrame({"item_id": list(vec), "x": [v[0] for v in vec.values()], "y": [v[1] for v in vec.values()]})
    k, values = 3, []
    for order in itertools.permutations(["b", "c", "d"]):
        top = ["a", *order][:k]
        values.append(np.mean([sum(p != q for p, q in zip(vec[i], vec[j])) for i, j in itertools.combinations(top, 2)]))
    got = mc.evaluate(run, qrels, metrics=[f"ild@{k}"], item_features=feats, ties="average").summary[f"ild@{k}"]
    assert got == pytest.approx(float(np.mean(values)), abs=TOL)
    assert len(set(values)) > 1  # the order of the ties matters here


def test_ild_without_features_is_one_line():
    run, qrels, _ = make_data(0)
    with pytest.raises(mc.MetricsError, match="item-features table"):
        mc.evaluate(run, qrels, metrics=["ild@5"])
