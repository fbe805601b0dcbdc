"""mc.intersection against RecTools' Intersection itself.

RecTools: per user of ``reco``'s top k, the share of those items in ``ref_reco``'s top ``ref_k``
of the same user (0 for a user the reference does not list; users only in the reference are
not counted); ``calc`` is the mean. Ranks come from the score, ties in input order (RecTools'
own ranks as a user writes them from a scored table).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc

pytest.importorskip("rectools")
from rectools.metrics import Intersection  # noqa: E402

TOL = 1e-12


def make_run(users, seed, ties=False):
    """A run of ``users`` (lists of 2 to 6 of 12 items, one item for users 1, 5, 9, ...; with ``ties``,
    scores of two values)."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in users:
        n = 1 if u % 4 == 1 else int(rng.integers(2, 7))
        items = rng.choice(12, size=n, replace=False)
        scores = rng.integers(0, 2, n).astype(float) if ties else rng.permutation(n) + 0.5
        rows += [(u, int(i), float(s)) for i, s in zip(items, scores)]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score"])


def ranks(run):
    """RecTools' reco table: rank by score descending, ties in input order."""
    order = run.assign(_pos=np.arange(len(run))).sort_values(["user_id", "score", "_pos"],
                                                             ascending=[True, False, True], kind="stable")
    return order.assign(rank=order.groupby("user_id").cumcount() + 1)[["user_id", "item_id", "rank"]]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k, ref_k", [(1, None), (3, None), (3, 6), (10, 2)])
@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "tied"])
def test_intersection_equals_rectools(seed, k, ref_k, ties):
    run = make_run(range(0, 10), seed, ties)  # users 0..9
    reference = make_run(range(3, 14), seed + 50, ties)  # users 0..2 only in the run, 10..13 only in the reference
    assert (run.groupby("user_id").size() == 1).any()
    assert not ties or run.duplicated(["user_id", "score"]).any()
    metric = Intersection(k=k, ref_k=ref_k)
    want = metric.calc_per_user(ranks(run), ranks(reference))
    got = mc.intersection_per_user(run, reference, k, ref_k)
    assert sorted(got.index) == sorted(want.index) == list(range(10))
    assert np.allclose(got.sort_index().to_numpy(), want.sort_index().to_numpy(), atol=TOL, rtol=0)
    assert (got.loc[[0, 1, 2]] == 0).all()  # users the reference does not list
    assert mc.intersection(run, reference, k, ref_k) == pytest.approx(metric.calc(ranks(run), ranks(reference)),
                                                                      abs=TOL)


def test_prepared_runs_other_tie_rules_and_id_kinds():
    run, reference = make_run(range(6), 1, ties=True), make_run(range(6), 2, ties=True)
    assert mc.intersection(run, run, 3) == 1.0
    prepared = mc.prepare(run.assign(relevance=1))
    assert mc.intersection(prepared, reference, 3) == mc.intersection(run, reference, 3)
    # ids written as text in one run: the same pairs
    as_text = reference.assign(user_id=reference["user_id"].astype(str), item_id=reference["item_id"].astype(str))
    assert mc.intersection(run, as_text, 3) == mc.intersection(run, reference, 3)
    # score_id: ties by item id descending as strings (trectools); brute force on the top lists
    def top(r, k):
        r = r.assign(_id=r["item_id"].astype(str)).sort_values(["user_id", "score", "_id"],
                                                               ascending=[True, False, False])
        return r.groupby("user_id")["item_id"].apply(lambda s: set(s[:k]))
    mine, ref = top(run, 3), top(reference, 3)
    want = np.mean([len(mine[u] & ref.get(u, set())) / len(mine[u]) for u in mine.index])
    assert mc.intersection(run, reference, 3, ties="score_id") == pytest.approx(want, abs=TOL)
    assert mc.intersection(run, reference, 3, ties="score_id") != mc.intersection(run, reference, 3)


@pytest.mark.parametrize("kwargs, message", [
    (dict(k=0), "k must be a whole number from 1"),
    (dict(k=3, reference_k=2.5), "reference_k must be a whole number"),
    (dict(k=3, ties="average"), "ties must be one of input, trec, score_id"),
])
def test_bad_arguments_are_one_line(kwargs, message):
    run = make_run(range(3), 0)
    with pytest.raises(mc.MetricsError, match=message):
        mc.intersection(run, run, **kwargs)


def test_a_reference_without_scores_is_named():
    run = make_run(range(3), 0)
    with pytest.raises(mc.MetricsError, match="reference run") as err:
        mc.intersection(run, run.drop(columns="score"), 3)
    assert "\n" not in str(err.value)
    with pytest.raises(mc.MetricsError, match="must be a table"):
        mc.intersection(run, [1, 2, 3], 3)
