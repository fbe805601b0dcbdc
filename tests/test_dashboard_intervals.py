"""The Overview's intervals: bootstrap at once on few users; on many users the t interval first
(checked against its formula) and the bootstrap once the server has computed it."""

from __future__ import annotations

import _deadlines as deadlines
import math
import statistics

import pytest
from scipy.stats import t as student_t

import metrics_core as mc
from dashboard import background, cache, compute, demo
from metrics_core.analysis.stats import bootstrap_ci_columns

METRICS = ["ndcg@5", "recall@5", "auc"]


@pytest.fixture(scope="module")
def evals():
    d = demo.make_demo(n_users=300, n_items=200, list_length=20, seed=7)
    return {name: mc.evaluate(run, d.qrels, metrics=METRICS) for name, run in d.runs.items()}


def test_few_users_get_the_bootstrap_at_once(evals):
    cache.SHARED.clear()
    table = compute.ci_table(evals, METRICS)
    assert table.attrs["pending"] == []
    for name, ev in evals.items():
        lows, highs = bootstrap_ci_columns(ev.per_user[["ndcg@5", "recall@5"]].to_numpy(), n_resamples=1000, seed=0)
        rows = table[table["model"] == name].set_index("metric")
        assert rows.loc["ndcg@5", "ci_low"] == lows[0] and rows.loc["recall@5", "ci_high"] == highs[1]
        assert math.isnan(rows.loc["auc", "ci_low"])  # a global metric has no interval


def test_many_users_get_the_t_interval_then_the_bootstrap(evals, monkeypatch):
    cache.SHARED.clear()
    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    quick = compute.ci_table(evals, METRICS)
    assert len(quick.attrs["pending"]) == len(evals)
    for name, ev in evals.items():
        x = ev.per_user["ndcg@5"].tolist()
        half = student_t.ppf(0.975, len(x) - 1) * statistics.stdev(x) / math.sqrt(len(x))
        row = quick[(quick["model"] == name) & (quick["metric"] == "ndcg@5")].iloc[0]
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((statistics.fmean(x) - half, statistics.fmean(x) + half),
                                                                abs=1e-12)
    assert background.wait(quick.attrs["pending"], timeout=deadlines.BACKGROUND)
    final = compute.ci_table(evals, METRICS)
    cache.SHARED.clear()
    monkeypatch.setattr(background, "FOREGROUND_USERS", 10**9)
    assert final.attrs["pending"] == []
    assert final.equals(compute.ci_table(evals, METRICS))
