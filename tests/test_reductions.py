"""Partial sums -> combine -> finalize: the many-partition path (Spark's) without Spark.

The users are split into groups, each group's partial sums are computed from
its own ``prepare``, the partials are combined and finalized; the result must
equal scikit-learn / numpy on all rows at once (independent references), for
every scored-row metric of the registry.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import (accuracy_score, brier_score_loss, explained_variance_score, f1_score, log_loss, mean_squared_error,
                             precision_score, r2_score, recall_score, roc_auc_score)

import metrics_core as mc
from metrics_core.metrics import reductions, registry


def _data(seed: int, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "user_id": rng.integers(0, 25, n).astype(str),
        "item_id": [f"i{j}" for j in range(n)],
        "score": rng.random(n).round(2),
        "relevance": rng.integers(0, 3, n),
    })


def _reference(rows: pd.DataFrame, name: str, threshold: float = 0.5, gauc_weight: str = "rows") -> float:
    y = (rows["relevance"] >= 1).astype(int).to_numpy()
    p = rows["score"].to_numpy()
    pred = (p >= threshold).astype(int)
    if name == "gauc":
        num = den = 0.0
        for _, g in rows.groupby("user_id"):
            yy = (g["relevance"] >= 1).astype(int)
            if yy.nunique() == 2:
                w = {"rows": len(g), "positives": int(yy.sum()), "uniform": 1}[gauc_weight]
                num += w * roc_auc_score(yy, g["score"])
                den += w
        return num / den
    return {
        "logloss": lambda: log_loss(y, p, labels=[0, 1]),
        "brier": lambda: brier_score_loss(y, p),
        "r2": lambda: r2_score(rows["relevance"], p),
        "explained_variance": lambda: explained_variance_score(rows["relevance"], p),
        "ece": lambda: _ece_reference(y, p),
        "rmse": lambda: float(np.sqrt(np.mean((p - rows["relevance"].to_numpy()) ** 2))),
        "mae": lambda: float(np.mean(np.abs(p - rows["relevance"].to_numpy()))),
        "mse": lambda: mean_squared_error(rows["relevance"], p),
        "pcopc": lambda: p.sum() / y.sum(),
        "accuracy": lambda: accuracy_score(y, pred),
        "precision": lambda: precision_score(y, pred, zero_division=0),
        "recall": lambda: recall_score(y, pred, zero_division=0),
        "f1": lambda: f1_score(y, pred, zero_division=0),
    }[name]()


def _ece_reference(y: np.ndarray, p: np.ndarray, n_bins: int = 10) -> float:
    """ECE from scikit-learn's calibration curve: bin means weighted by the rows in each non-empty bin."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    # rows per bin: [0, e1], (e1, e2], ..., (e9, 1], the bins calibration_curve documents
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    sizes = np.array([np.sum(p >= lo if lo == 0 else p > lo) - np.sum(p > hi) for lo, hi in zip(edges, edges[1:])])
    sizes = sizes[sizes > 0]
    return float(np.sum(sizes / len(p) * np.abs(prob_true - prob_pred)))


def _groups(rows: pd.DataFrame, n_groups: int):
    codes = pd.factorize(rows["user_id"])[0] % n_groups
    return [rows[codes == g] for g in range(n_groups) if (codes == g).any()]


def test_every_scored_row_metric_has_a_reduction():
    for m in registry.metrics_of_kind("scored", "scored_per_user"):
        assert isinstance(reductions.of(m), reductions.RowReduction), m.name


def _combined_names() -> list[str]:
    """Every scored-row metric combined from partial sums (rank statistics are computed from all rows at once)."""
    return [m.name for m in registry.metrics_of_kind("scored", "scored_per_user") if reductions.of(m).whole is None]


@functools.lru_cache(maxsize=None)
def _references(seed: int, gauc_weight: str) -> dict[str, float]:
    """The references of every combined metric on ``_data(seed)``, computed once for every number of groups."""
    rows = _data(seed)
    return {name: _reference(rows, name, 0.5, gauc_weight) for name in _combined_names()}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_groups", [1, 3, 7])
@pytest.mark.parametrize("gauc_weight", ["rows", "positives", "uniform"])
def test_partitions_combine_to_the_whole(seed, n_groups, gauc_weight):
    rows = _data(seed)
    names = _combined_names()
    want = _references(seed, gauc_weight)
    entries = [registry.parse_metric(name).entry for name in names]
    partials = []
    for part in _groups(rows, n_groups):
        ranked = mc.prepare(part[["user_id", "item_id", "score", "relevance"]])
        partials.append(reductions.scored_partials(
            [reductions.of(m) for m in entries], reductions.scored_rows(ranked, 1.0, 0.5, gauc_weight)))
    totals = reductions.combine(partials)
    for name, entry in zip(names, entries):
        got = reductions.of(entry).finalize(totals)
        assert got == pytest.approx(want[name], rel=1e-12, abs=1e-12), name
    # the one-partition case is what mc.evaluate reports
    ev = mc.evaluate(rows, metrics=names, gauc_weight=gauc_weight).summary
    for name in names:
        assert ev[name] == pytest.approx(want[name], rel=1e-12, abs=1e-12), name


def test_logloss_range_check_survives_combining():
    rows = _data(3)
    rows.loc[rows.index[-1], "score"] = 1.5
    partials = [reductions.scored_partials([reductions.LOGLOSS], reductions.scored_rows(mc.prepare(part), 1.0),
                                           probabilities=True)
                for part in _groups(rows, 4)]
    with pytest.raises(mc.MetricsError, match=r"1 score\(s\) fall outside, e.g. 1.5"):
        reductions.check_needs("logloss", ("probabilities",), reductions.combine(partials))
    with pytest.raises(mc.MetricsError, match=r"1 score\(s\) fall outside, e.g. 1.5"):
        mc.evaluate(rows, metrics=["logloss"])


def test_coverage_and_personalization_partials_add_per_item():
    # two partitions of independent users: per-item partials add, the finalize step gives the brute-force value
    lists = {"a": ["x", "y"], "b": ["y", "z"], "c": ["x", "y"], "d": ["w", "v"]}
    item_code = {i: c for c, i in enumerate(sorted({i for v in lists.values() for i in v}))}
    parts = [["a", "b"], ["c", "d"]]
    cov = np.zeros((2, len(item_code)))
    pers = np.zeros((2, len(item_code)))
    for users in parts:
        items = np.array([item_code[i] for u in users for i in lists[u]])
        weight = np.ones(len(items))
        c, miss = reductions.coverage_partial(items, weight, len(item_code))
        s1, s2 = reductions.personalization_partial(items, weight, len(item_code))
        cov += np.vstack([c, miss])
        pers += np.vstack([s1, s2])
    assert reductions.finalize_coverage(reductions.coverage_expected_items(*cov), 10) == 5 / 10
    shared = reductions.personalization_shared_pairs(*pers)
    # brute force: mean over the 6 user pairs of |L_u & L_v| / k
    names = list(lists)
    overlap = [len(set(lists[u]) & set(lists[v])) / 2 for i, u in enumerate(names) for v in names[i + 1:]]
    assert reductions.finalize_personalization(shared, 4, 2) == pytest.approx(1 - np.mean(overlap))
