"""Properties that hold for every input (hypothesis, small examples).

* every normalised metric lies in [0, 1]
* the order of the input rows does not matter (except ties="input")
* without tied scores the three tie rules agree
* a perfect ranking scores 1 (ndcg, map, mrr, r_precision, precision@k when
  the user has at least k relevant items)
* appending a non-relevant item at the bottom of a list never changes P@k
  (nor R@k, AP@k, NDCG@k, hit_rate@k) for k within the old length
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics_core as mc

# example count and seed come from the profile that tests/conftest.py loads (fixed examples by default)
SETTINGS = settings(suppress_health_check=[HealthCheck.too_slow])
KS = [1, 2, 3, 5]
UNIT = (
    [f"{m}@{k}" for k in KS for m in ("ndcg", "map", "mrr", "precision", "recall", "f1", "hit_rate", "hit_ratio")]
    + ["ndcg", "map", "mrr", "r_precision", "hit_rate"]
)
SCORED_UNIT = ["auc", "pr_auc", "accuracy", "precision", "recall", "f1", "gauc"]
EPS = 1e-12


@st.composite
def runs(draw, tied=True, min_users=1):
    """A run carrying relevance: 1-4 users, 1-8 items each, graded relevance 0-3."""
    n_users = draw(st.integers(min_users, 4))
    score_values = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]) if tied else None
    rows = []
    for u in range(n_users):
        n = draw(st.integers(1, 8))
        items = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n, unique=True))
        if tied:
            scores = draw(st.lists(score_values, min_size=n, max_size=n))
        else:
            scores = draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n, unique=True))
            scores = [s / 10**6 for s in scores]
        rels = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        rels[draw(st.integers(0, n - 1))] = draw(st.integers(1, 3))  # at least one relevant
        rows += [(f"u{u}", f"i{it}", float(s), int(r)) for it, s, r in zip(items, scores, rels)]
    return pd.DataFrame(rows, columns=["user_id", "item_id", "score", "relevance"])


def _close(a: pd.DataFrame, b: pd.DataFrame):
    a, b = a.sort_index(), b.sort_index()
    assert list(a.index) == list(b.index)
    assert np.allclose(a.to_numpy(dtype=float), b.to_numpy(dtype=float), atol=1e-12, equal_nan=True)


@SETTINGS
@given(runs(), st.sampled_from(["average", "trec", "input"]), st.sampled_from(["relevant", "min_k", "retrieved"]),
       st.sampled_from(["linear", "exponential"]), st.sampled_from(["judged", "retrieved"]), st.integers(1, 3))
def test_values_in_unit_interval(run, ties, ap_norm, gain, ideal, thr):
    if not (run["relevance"] >= thr).any():
        thr = 1
    ev = mc.evaluate(run, metrics=UNIT, ties=ties, ap_norm=ap_norm, gain=gain, ideal=ideal,
                     relevance_threshold=thr)
    for m in UNIT:
        assert -EPS <= ev.summary[m] <= 1 + EPS, (m, ev.summary[m])
    values = ev.per_user.to_numpy(dtype=float)
    assert np.all(values >= -EPS) and np.all(values <= 1 + EPS)
    labels = (run["relevance"] >= thr)
    if labels.any() and not labels.all():
        sc = mc.evaluate(run, metrics=SCORED_UNIT, relevance_threshold=thr).summary
        for m in SCORED_UNIT:
            assert np.isnan(sc[m]) or -EPS <= sc[m] <= 1 + EPS, (m, sc[m])


@SETTINGS
@given(runs(), st.randoms(use_true_random=False), st.sampled_from(["average", "trec"]))
def test_row_order_invariance(run, rnd, ties):
    perm = list(range(len(run)))
    rnd.shuffle(perm)
    shuffled = run.iloc[perm].reset_index(drop=True)
    metrics = UNIT + ["dcg@3", "cg@2"]
    a = mc.evaluate(run, metrics=metrics, ties=ties)
    b = mc.evaluate(shuffled, metrics=metrics, ties=ties)
    _close(a.per_user, b.per_user)
    for m in metrics:
        assert abs(a.summary[m] - b.summary[m]) <= 1e-12, m
    if (run["relevance"] == 0).any():
        scored = ["auc", "pr_auc", "logloss", "rmse", "mae", "accuracy", "gauc", "pcopc"]
        sa = mc.evaluate(run, metrics=scored).summary
        sb = mc.evaluate(shuffled, metrics=scored).summary
        for m in scored:
            assert np.isclose(sa[m], sb[m], atol=1e-12, equal_nan=True), m


@SETTINGS
@given(runs(tied=False))
def test_tie_rules_agree_without_ties(run):
    metrics = UNIT + ["dcg@3"]
    ref = mc.evaluate(run, metrics=metrics, ties="trec").per_user
    for ties in ("average", "input"):
        _close(mc.evaluate(run, metrics=metrics, ties=ties).per_user, ref)


@SETTINGS
@given(runs(), st.sampled_from(["average", "trec", "input"]), st.sampled_from(["linear", "exponential"]),
       st.sampled_from(["judged", "retrieved"]), st.sampled_from(["relevant", "min_k", "retrieved"]))
def test_perfect_ranking_scores_one(run, ties, gain, ideal, ap_norm):
    perfect = run.assign(score=run["relevance"].astype(float))  # ties only among equal relevance
    metrics = ["ndcg", "map", "mrr", "r_precision"] + [f"ndcg@{k}" for k in KS] + [f"map@{k}" for k in KS] \
        + [f"p@{k}" for k in KS] + [f"hit_rate@{k}" for k in KS]
    ev = mc.evaluate(perfect, metrics=metrics, ties=ties, gain=gain, ideal=ideal, ap_norm=ap_norm)
    n_rel = perfect.groupby("user_id")["relevance"].apply(lambda r: int((r >= 1).sum()))
    for u, row in ev.per_user.iterrows():
        for m in ["ndcg", "map", "mrr", "r_precision"] + [f"ndcg@{k}" for k in KS] + [f"hit_rate@{k}" for k in KS]:
            assert abs(row[m] - 1.0) <= 1e-12, (u, m, row[m])
        for k in KS:
            if n_rel[u] >= k:
                assert abs(row[f"p@{k}"] - 1.0) <= 1e-12, (u, k)
            if ap_norm != "relevant" or n_rel[u] <= k:
                assert abs(row[f"map@{k}"] - 1.0) <= 1e-12, (u, k, ap_norm)


@SETTINGS
@given(runs(), st.sampled_from(["average", "trec", "input"]), st.booleans())
def test_appending_non_relevant_at_bottom(run, ties, judged_zero):
    lengths = run.groupby("user_id").size()
    tail = pd.DataFrame({
        "user_id": lengths.index,
        "item_id": "appended-item",
        "score": run["score"].min() - 1.0,
    })
    if judged_zero:
        longer = pd.concat([run, tail.assign(relevance=0)], ignore_index=True)
        ev_new = lambda m: mc.evaluate(longer, metrics=m, ties=ties)  # noqa: E731
    else:  # unjudged: the ground truth stays the old one
        longer = pd.concat([run[["user_id", "item_id", "score"]], tail], ignore_index=True)
        ev_new = lambda m: mc.evaluate(longer, run[["user_id", "item_id", "relevance"]], metrics=m, ties=ties)  # noqa: E731
    ks = list(range(1, int(lengths.max()) + 1))
    metrics = [f"{b}@{k}" for k in ks for b in ("p", "recall", "map", "ndcg", "hit_rate", "mrr")]
    old = mc.evaluate(run, metrics=metrics, ties=ties).per_user
    new = ev_new(metrics).per_user
    for u, n in lengths.items():
        for k in range(1, n + 1):
            for b in ("p", "recall", "map", "ndcg", "hit_rate", "mrr"):
                m = f"{b}@{k}"
                assert abs(old.loc[u, m] - new.loc[u, m]) <= 1e-12, (u, m, old.loc[u, m], new.loc[u, m])


@SETTINGS
@given(runs())
def test_prepared_equals_frames(run):
    metrics = ["ndcg@3", "map", "mrr", "auc", "hit_ratio@2"]
    ranked = mc.prepare(run)
    a = mc.evaluate(ranked, metrics=metrics)
    b = mc.evaluate(run, metrics=metrics)
    _close(a.per_user, b.per_user)
    for m in metrics:
        assert np.isclose(a.summary[m], b.summary[m], atol=1e-12, equal_nan=True)
