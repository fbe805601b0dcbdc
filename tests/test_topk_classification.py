"""The top k as a classifier of the catalogue (fbeta@k, mcc@k, accuracy@k) and partial AUC (pauc@k, pap@k).

References:
- scikit-learn's ``fbeta_score``, ``matthews_corrcoef`` and ``accuracy_score`` on each user's
  catalogue-long label vectors (true: relevant, predicted: in the top k);
- plain-Python formulas written from RecTools' source (``rectools/metrics/classification.py``:
  ``fp = k - tp`` also for short lists, ``tn = N - k - fn``; ``rectools/metrics/auc.py``:
  ``PartialAUC`` keeps rows with fewer than k false positives above them, ``PAP`` also only the
  first k test positives, numerator ``sum (k - fp_cumsum) * tp``, denominators ``k R`` and ``k min(k, R)``);
- ties="average": the same formulas averaged over every order of tied scores (brute force).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, fbeta_score, matthews_corrcoef

import metrics_core as mc

TOL = 1e-9


def _data(seed: int, n_users: int = 12, n_items: int = 30, ties: bool = False, min_len: int = 1):
    rng = np.random.default_rng(seed)
    run_rows, qrel_rows = [], []
    for u in range(n_users):
        n = int(rng.integers(min_len, 9))
        items = rng.choice(n_items, size=n, replace=False)
        scores = rng.choice([0.1, 0.5, 0.9], size=n) if ties else rng.permutation(n) / n
        run_rows += [(f"u{u}", f"i{i}", float(s)) for i, s in zip(items, scores)]
        judged = rng.choice(n_items, size=int(rng.integers(1, 8)), replace=False)
        rels = rng.integers(0, 3, len(judged))
        rels[0] = 2  # every user has a relevant item
        qrel_rows += [(f"u{u}", f"i{i}", int(r)) for i, r in zip(judged, rels)]
    run = pd.DataFrame(run_rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrel_rows, columns=["user_id", "item_id", "relevance"])
    return run, qrels


def _users(run, qrels, thr):
    """user -> (ranked items with scores, relevant set) for users with a relevant item."""
    out = {}
    for u, g in qrels.groupby("user_id"):
        relevant = set(g.loc[g["relevance"] >= thr, "item_id"])
        if relevant:
            r = run[run["user_id"] == u]
            out[u] = (list(zip(r["item_id"], r["score"])), relevant)
    return out


# --------------------------------------------------------------- plain formulas (RecTools' source)
def confusion_ref(order, relevant, k, n_items, beta):
    tp = sum(1 for i in order[:k] if i in relevant)
    fp, fn = k - tp, len(relevant) - tp
    tn = n_items - k - fn
    p, r = tp / k, tp / len(relevant)
    f = 0.0 if tp == 0 else (1 + beta ** 2) * p * r / (beta ** 2 * p + r)
    den = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return {"fbeta": f, "mcc": (tp * tn - fp * fn) / den if den else 0.0, "accuracy": (tp + tn) / n_items}


def partial_auc_ref(order, relevant, k):
    fp_cumsum = pos_cumsum = 0
    pauc = pap = 0.0
    for item in order:
        positive = item in relevant
        fp_cumsum += not positive
        pos_cumsum += positive
        if positive and fp_cumsum < k:
            pauc += k - fp_cumsum
            if pos_cumsum <= k:
                pap += k - fp_cumsum
    n_pos = len(relevant)
    return {"pauc": pauc / (k * n_pos), "pap": pap / (k * min(k, n_pos))}


def _over_tie_orders(scored, fn):
    """Mean of fn(order) over every order of equal scores (scores descending)."""
    groups = {}
    for item, s in scored:
        groups.setdefault(s, []).append(item)
    blocks = [list(itertools.permutations(groups[s])) for s in sorted(groups, reverse=True)]
    total, count = {}, 0
    for combo in itertools.product(*blocks):
        for name, v in fn([i for block in combo for i in block]).items():
            total[name] = total.get(name, 0.0) + v
        count += 1
    return {name: v / count for name, v in total.items()}


# --------------------------------------------------------------- tests
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_confusion_metrics_match_sklearn_over_the_catalogue(seed, k):
    run, qrels = _data(seed, min_len=5)
    beta = 2.0
    labels = [f"fbeta@{k}", f"mcc@{k}", f"accuracy@{k}"]
    ev = mc.evaluate(run, qrels, metrics=labels, beta=beta)
    catalogue = sorted(set(run["item_id"]) | set(qrels["item_id"]))
    for u, (scored, relevant) in _users(run, qrels, 1).items():
        top = {i for i, _ in sorted(scored, key=lambda x: -x[1])[:k]}
        y_true = [int(i in relevant) for i in catalogue]
        y_pred = [int(i in top) for i in catalogue]
        row = ev.per_user.loc[u]
        assert row[f"fbeta@{k}"] == pytest.approx(fbeta_score(y_true, y_pred, beta=beta, zero_division=0), abs=TOL)
        assert row[f"mcc@{k}"] == pytest.approx(matthews_corrcoef(y_true, y_pred), abs=TOL)
        assert row[f"accuracy@{k}"] == pytest.approx(accuracy_score(y_true, y_pred), abs=TOL)


@pytest.mark.parametrize("seed", [3, 4])
@pytest.mark.parametrize("thr", [1, 2])
def test_short_lists_and_graded_threshold_follow_rectools(seed, thr):
    run, qrels = _data(seed)
    n_items = len(set(run["item_id"]) | set(qrels["item_id"]))
    for k in (2, 6):
        ev = mc.evaluate(run, qrels, metrics=[f"fbeta@{k}", f"mcc@{k}", f"accuracy@{k}", f"pauc@{k}", f"pap@{k}"],
                         relevance_threshold=thr, beta=0.5)
        for u, (scored, relevant) in _users(run, qrels, thr).items():
            order = [i for i, _ in sorted(scored, key=lambda x: -x[1])]
            want = {**confusion_ref(order, relevant, k, n_items, 0.5), **partial_auc_ref(order, relevant, k)}
            for name, value in want.items():
                assert ev.per_user.loc[u, f"{name}@{k}"] == pytest.approx(value, abs=TOL), (u, name, k)


def test_catalogue_is_the_item_features_table_when_given():
    run, qrels = _data(5, min_len=5)
    features = pd.DataFrame({"item_id": [f"i{j}" for j in range(200)], "tags": "x"})
    ev = mc.evaluate(run, qrels, metrics=["mcc@3", "accuracy@3"], item_features=features)
    for u, (scored, relevant) in _users(run, qrels, 1).items():
        order = [i for i, _ in sorted(scored, key=lambda x: -x[1])]
        want = confusion_ref(order, relevant, 3, 200, 1.0)
        assert ev.per_user.loc[u, "mcc@3"] == pytest.approx(want["mcc"], abs=TOL)
        assert ev.per_user.loc[u, "accuracy@3"] == pytest.approx(want["accuracy"], abs=TOL)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_average_ties_equal_bruteforce(seed):
    run, qrels = _data(seed, n_users=8, ties=True)
    n_items = len(set(run["item_id"]) | set(qrels["item_id"]))
    ks = (1, 2, 4)
    labels = [f"{m}@{k}" for k in ks for m in ("fbeta", "mcc", "accuracy", "pauc", "pap")]
    ev = mc.evaluate(run, qrels, metrics=labels, ties="average", beta=1.5)
    differs = 0.0
    trec = mc.evaluate(run, qrels, metrics=labels, ties="trec").per_user
    for u, (scored, relevant) in _users(run, qrels, 1).items():
        for k in ks:
            want = _over_tie_orders(scored, lambda order: {**confusion_ref(order, relevant, k, n_items, 1.5),
                                                           **partial_auc_ref(order, relevant, k)})
            for name, value in want.items():
                assert ev.per_user.loc[u, f"{name}@{k}"] == pytest.approx(value, abs=TOL), (u, name, k)
        differs = max(differs, float((ev.per_user.loc[u] - trec.loc[u]).abs().max()))
    assert differs > 1e-3  # the ties matter


def test_metric_curve_of_derived_families_equals_evaluate():
    run, qrels = _data(6, ties=True)
    curve = mc.metric_curve(mc.prepare(run, qrels), ["pauc", "mcc"], k_max=4)
    for k in range(1, 5):
        s = mc.evaluate(run, qrels, metrics=[f"pauc@{k}", f"mcc@{k}"]).summary
        assert curve.loc[k - 1, "pauc"] == pytest.approx(s[f"pauc@{k}"], abs=1e-12)
        assert curve.loc[k - 1, "mcc"] == pytest.approx(s[f"mcc@{k}"], abs=1e-12)


def test_beta_is_checked():
    run, qrels = _data(0)
    with pytest.raises(mc.MetricsError, match="beta must be a finite number greater than 0"):
        mc.evaluate(run, qrels, metrics=["fbeta@3"], beta=0)
    with pytest.raises(mc.MetricsError, match="beta must be a finite number"):
        mc.evaluate(run, qrels, metrics=["fbeta@3"], beta="high")
    for huge in (1e308, float("inf"), float("nan")):  # beta^2 would overflow: refused, not a traceback
        with pytest.raises(mc.MetricsError, match=r"beta must be a finite number greater than 0 and at most 1e\+100"):
            mc.evaluate(run, qrels, metrics=["fbeta@3"], beta=huge)
    # the largest beta computes: F-beta tends to recall, hits / R
    ev = mc.evaluate(run, qrels, metrics=["fbeta@3", "recall@3"], beta=1e100)
    assert ev.summary["fbeta@3"] == pytest.approx(ev.summary["recall@3"], rel=1e-12)


def test_metric_curve_of_derived_families_states_its_limit():
    run, qrels = _data(6)
    with pytest.raises(mc.MetricsError, match="k_max must be at most 1,000"):
        mc.metric_curve(mc.prepare(run, qrels), ["pap"], k_max=1001)


def test_only_mcc_and_accuracy_count_the_catalogue():
    """Counting the catalogue reads every item id; metrics that do not need it never do."""
    run, qrels = _data(5)
    ranked = mc.prepare(run, qrels)
    mc.evaluate(ranked, metrics=["ndcg@5", "map@5", "precision@5", "recall@5", "fbeta@5", "mrr@5"])
    assert ranked.items._codes is None  # item codes not built
    with_catalogue = mc.evaluate(ranked, metrics=["mcc@5", "accuracy@5"])
    assert ranked.items._codes is not None
    assert np.isfinite(with_catalogue.summary["mcc@5"]) and np.isfinite(with_catalogue.summary["accuracy@5"])


@pytest.mark.parametrize("gain", ["binary", "exponential"])
def test_gain_does_not_change_the_families_it_does_not_apply_to(gain):
    # gain applies to cg, dcg and ndcg only (its applies_to): pAUC, pAp, bpref and the hits-based families
    # read relevant = relevance >= threshold whatever the gain, also with a threshold above 1
    run = pd.DataFrame({"user_id": [1] * 4 + [2] * 3, "item_id": [1, 2, 3, 4, 1, 2, 5],
                        "score": [4.0, 3, 2, 1, 3, 2, 1]})
    qrels = pd.DataFrame({"user_id": [1, 1, 1, 2, 2], "item_id": [1, 3, 4, 2, 5], "relevance": [2, 3, 1, 2, 0]})
    metrics = ["pauc@3", "pap@3", "bpref", "fbeta@2", "mcc@2", "accuracy@2", "recall@2"]
    linear = mc.evaluate(run, qrels, metrics, relevance_threshold=2).summary
    other = mc.evaluate(run, qrels, metrics, relevance_threshold=2, gain=gain).summary
    assert other == pytest.approx(linear) and linear["pauc@3"] > 0
