"""Brier score (``brier``): mean squared error of scores read as probabilities.

References: scikit-learn's ``brier_score_loss`` and a plain-Python mean.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import brier_score_loss

import metrics_core as mc
from metrics_core.cli import main


def _frames(seed: int, n: int = 300):
    rng = np.random.default_rng(seed)
    run = pd.DataFrame({"user_id": rng.integers(0, 20, n).astype(str), "item_id": [f"i{j}" for j in range(n)],
                        "score": rng.random(n)})
    judged = run.sample(frac=0.6, random_state=seed)
    qrels = pd.DataFrame({"user_id": judged["user_id"], "item_id": judged["item_id"],
                          "relevance": rng.integers(0, 3, len(judged))})
    return run, qrels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("relevance_threshold", [1, 2])
def test_brier_matches_sklearn(seed, relevance_threshold):
    run, qrels = _frames(seed)
    ev = mc.evaluate(run, qrels, metrics=["brier", "Brier_Score_Loss"], relevance_threshold=relevance_threshold)
    # scored rows: rows of users in the ground truth; unjudged rows are negatives
    rel = run.merge(qrels, on=["user_id", "item_id"], how="left")
    rel = rel[rel["user_id"].isin(set(qrels["user_id"]))]
    y = (rel["relevance"].fillna(0) >= relevance_threshold).astype(int)
    expected = brier_score_loss(y, rel["score"])
    plain = sum((p - t) ** 2 for p, t in zip(rel["score"], y)) / len(y)
    assert ev.summary["brier"] == pytest.approx(expected, abs=1e-12)
    assert ev.summary["Brier_Score_Loss"] == pytest.approx(plain, abs=1e-12)


def test_brier_is_lower_better_and_needs_probabilities(tmp_path, capsys):
    assert not mc.registry.higher_is_better("brier")
    run = pd.DataFrame({"user_id": ["u", "u", "v"], "item_id": ["a", "b", "c"], "score": [0.9, 1.7, 0.2],
                        "relevance": [1, 0, 1]})
    with pytest.raises(mc.MetricsError, match=r"brier needs probabilities in \[0, 1\]; 1 score\(s\) fall outside"):
        mc.evaluate(run, metrics=["brier"])
    run.loc[1, "score"] = 0.3
    path = tmp_path / "run.csv"
    run.to_csv(path, index=False)
    assert main(["evaluate", "--run", str(path), "--metrics", "brier", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["models"]["run"]["brier"]
    assert got == pytest.approx(((0.9 - 1) ** 2 + 0.3 ** 2 + (0.2 - 1) ** 2) / 3, abs=1e-12)
