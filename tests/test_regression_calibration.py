"""R², explained variance and expected calibration error over scored rows.

References: scikit-learn's ``r2_score``, ``explained_variance_score`` and
``calibration_curve(strategy="uniform")`` (its bins, with the rows of each bin
counted in plain Python).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import explained_variance_score, r2_score

import metrics_core as mc


def _frames(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    run = pd.DataFrame({"user_id": rng.integers(0, 20, n).astype(str), "item_id": [f"i{j}" for j in range(n)],
                        "score": rng.random(n).round(2)})
    judged = run.sample(frac=0.7, random_state=seed)
    qrels = pd.DataFrame({"user_id": judged["user_id"], "item_id": judged["item_id"],
                          "relevance": rng.integers(0, 4, len(judged))})
    return run, qrels


def _scored_rows(run, qrels, relevance_threshold):
    """Rows of users in the ground truth; unjudged rows have relevance 0 and label 0."""
    rows = run.merge(qrels, on=["user_id", "item_id"], how="left")
    rows = rows[rows["user_id"].isin(set(qrels["user_id"]))]
    rel = rows["relevance"].fillna(0).to_numpy(dtype=float)
    return rows["score"].to_numpy(), rel, (rel >= relevance_threshold).astype(int)


def _ece(y, p, n_bins=10):
    prob_true, prob_pred = calibration_curve(y, p, n_bins=n_bins, strategy="uniform")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    # rows per bin: [0, e1], (e1, e2], ..., (e9, 1]
    sizes = np.array([sum(1 for x in p if (x >= lo if lo == 0 else x > lo) and x <= hi)
                      for lo, hi in zip(edges, edges[1:])])
    sizes = sizes[sizes > 0]
    return float(np.sum(sizes / len(p) * np.abs(prob_true - prob_pred)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("relevance_threshold", [1, 2])
def test_r2_explained_variance_ece_match_sklearn(seed, relevance_threshold):
    run, qrels = _frames(seed)
    ev = mc.evaluate(run, qrels, metrics=["r2", "R2_score", "explained_variance", "exp_var", "ece"],
                     relevance_threshold=relevance_threshold)
    p, rel, y = _scored_rows(run, qrels, relevance_threshold)
    assert ev.summary["r2"] == pytest.approx(r2_score(rel, p), rel=1e-10, abs=1e-12)
    assert ev.summary["R2_score"] == ev.summary["r2"]
    assert ev.summary["explained_variance"] == pytest.approx(explained_variance_score(rel, p), rel=1e-10, abs=1e-12)
    assert ev.summary["exp_var"] == ev.summary["explained_variance"]
    assert ev.summary["ece"] == pytest.approx(_ece(y, p), abs=1e-12)


def test_scores_on_bin_edges_go_to_the_lower_bin():
    # 0.2 lies on an edge: scikit-learn puts it in (0.1, 0.2]; both rows there: |1/2 - 0.2| * 2/3
    run = pd.DataFrame({"user_id": ["u", "u", "v"], "item_id": ["a", "b", "c"], "score": [0.2, 0.2, 0.95],
                        "relevance": [1, 0, 1]})
    got = mc.evaluate(run, metrics=["ece"]).summary["ece"]
    assert got == pytest.approx(2 / 3 * abs(0.5 - 0.2) + 1 / 3 * abs(1 - 0.95), abs=1e-12)
    assert got == pytest.approx(_ece(np.array([1, 0, 1]), np.array([0.2, 0.2, 0.95])), abs=1e-12)


def test_constant_relevance_gives_nan_and_ece_needs_probabilities():
    run = pd.DataFrame({"user_id": ["u", "u", "v"], "item_id": ["a", "b", "c"], "score": [0.9, 0.3, 0.2],
                        "relevance": [2, 2, 2]})
    s = mc.evaluate(run, metrics=["r2", "explained_variance"]).summary
    assert np.isnan(s["r2"]) and np.isnan(s["explained_variance"])
    run["score"] = [0.9, 1.3, 0.2]
    with pytest.raises(mc.MetricsError, match=r"ece needs probabilities in \[0, 1\]; 1 score\(s\) fall outside"):
        mc.evaluate(run, metrics=["ece"])
    assert not mc.registry.higher_is_better("ece") and mc.registry.higher_is_better("r2")
