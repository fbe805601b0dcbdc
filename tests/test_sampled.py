"""Sampled-metric correction (Krichene and Rendle, KDD 2020) on simulations where the full ranking is known.

References: the sampling itself simulated with NumPy's hypergeometric draws, scikit-learn's least squares,
scipy's minimiser of the bias-variance objective written out here, brute force over tie orders."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from sklearn.linear_model import LinearRegression

from metrics_core.errors import MetricsError
from metrics_core.metrics.sampled import correction_function, full_metric, may_reverse, rank_transition, sampled_metrics


def _full(metric, k, r):
    r = np.asarray(r, float)
    if metric in ("hr", "recall", "hit_rate"):
        return (r <= k).astype(float)
    if metric == "ndcg":
        return np.where(r <= k, 1 / np.log2(r + 1), 0.0)
    return 1 / r


def _one_plus_n(full_ranks, n_items, m, seed):
    """A 1+N run: the target (score 0) among m negatives drawn without replacement, those from the r-1
    items above it scored 1, the others -1; and its qrels."""
    rng = np.random.default_rng(seed)
    rows, truth = [], []
    for u, r in enumerate(full_ranks):
        above = rng.hypergeometric(r - 1, n_items - r, m)
        rows += [(f"u{u}", "target", 0.0)] + [(f"u{u}", f"n{j}", 1.0 if j < above else -1.0) for j in range(m)]
        truth.append((f"u{u}", "target", 1))
    return (pd.DataFrame(rows, columns=["user_id", "item_id", "score"]),
            pd.DataFrame(truth, columns=["user_id", "item_id", "relevance"]))


def test_closed_forms_equal_mc_evaluate_on_a_rank_ladder():
    """f(r): user r's list holds its one relevant item at rank r, evaluated by mc.evaluate's kernel."""
    import metrics_core as mc

    n = 40
    run = pd.DataFrame([(f"u{r}", f"i{j}", float(-j)) for r in range(1, n + 1) for j in range(1, n + 1)],
                       columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame({"user_id": [f"u{r}" for r in range(1, n + 1)], "item_id": [f"i{r}" for r in range(1, n + 1)],
                          "relevance": 1})
    labels = ["hr@10", "ndcg@10", "recall@10", "ap"]
    ev = mc.evaluate(run, qrels, metrics=labels, gain="binary")
    per_user = ev.per_user.set_index("user_id") if "user_id" in ev.per_user.columns else ev.per_user
    names = {"hr@10": ("hit_rate", 10), "ndcg@10": ("ndcg", 10), "recall@10": ("recall", 10), "ap": ("map", None)}
    for label in labels:
        got = full_metric(*names[label], n)
        ref = [per_user.loc[f"u{r}", label] for r in range(1, n + 1)]
        np.testing.assert_allclose(got, ref, atol=1e-12, err_msg=label)


def test_transition_matches_simulated_sampling():
    n, m = 40, 7
    a = rank_transition(n, m)
    np.testing.assert_allclose(a.sum(axis=1), 1.0)
    rng = np.random.default_rng(0)
    for r in (1, 5, 20, 40):
        draws = rng.hypergeometric(r - 1, n - r, m, size=200_000)
        freq = np.bincount(draws, minlength=m + 1) / draws.size
        np.testing.assert_allclose(a[r - 1], freq, atol=4e-3)


@pytest.mark.parametrize("n, m", [(40, 7), (1000, 49)])
def test_transition_equals_scipy_stats(n, m):
    """The log-gamma form against scipy.stats' exact pmfs (hypergeometric and binomial)."""
    from scipy import stats

    above, drawn = np.arange(n)[:, None], np.arange(m + 1)[None, :]
    np.testing.assert_allclose(rank_transition(n, m), stats.hypergeom.pmf(drawn, n - 1, above, m), rtol=1e-9,
                               atol=1e-15)
    np.testing.assert_allclose(rank_transition(n, m, "binomial"), stats.binom.pmf(drawn, above, m / (n - 1)),
                               rtol=1e-9, atol=1e-15)


def test_least_squares_and_bias_variance_solve_their_objectives():
    n, m, k = 30, 5, 3
    a = rank_transition(n, m)
    f = _full("ndcg", k, np.arange(1, n + 1))
    ls = correction_function("ndcg", k, n, m, "ls")  # registry names
    np.testing.assert_allclose(ls, LinearRegression(fit_intercept=False).fit(a, f).coef_, atol=1e-8)
    gamma = 0.3

    def objective(g):
        mean = a @ g
        var = a @ (g * g) - mean ** 2
        return float(np.sum((f - mean) ** 2 + gamma * var))

    ref = minimize(objective, np.zeros(m + 1), method="BFGS", options={"gtol": 1e-12}).x
    got = correction_function("ndcg", k, n, m, "bv", gamma=gamma)
    assert objective(got) <= objective(ref) + 1e-10
    np.testing.assert_allclose(got, ref, atol=1e-5)


def test_corrected_is_closer_to_the_full_metric_than_sampled():
    """Bias-variance: the realised corrected mean is closer to the full metric than the sampled one.
    Least squares: its expectation given the full ranks is (its realised value has the high variance the
    paper reports, the reason for the bias-variance form)."""
    n, m = 500, 49
    rng = np.random.default_rng(1)
    ranks = np.minimum(rng.geometric(0.02, size=3000), n)
    run, qrels = _one_plus_n(ranks, n, m, seed=2)
    res = sampled_metrics(run, qrels, ["hr@10", "ndcg@10", "recall@10", "ap"], n_items=n, correction="bv")
    a = rank_transition(n, m)
    for label in res.summary.index:
        base, _, k = label.partition("@")
        k = int(k) if k else None
        full = float(_full(base, k, ranks).mean())
        sampled, corrected = res.summary.loc[label, ["sampled", "corrected"]]
        assert abs(corrected - full) < abs(sampled - full), (label, full, sampled, corrected)
        name = {"hr": "hit_rate", "ap": "map"}.get(base, base)
        expected_ls = float((a @ correction_function(name, k, n, m, "ls"))[ranks - 1].mean())
        expected_sampled = float((a @ _full(base, k, np.arange(1, m + 2)))[ranks - 1].mean())
        assert abs(expected_ls - full) < abs(expected_sampled - full) / 10, (label, full, expected_ls)
    assert res.settings["negatives"] == [m]


def test_ties_average_over_orders_and_reversal_is_named():
    # the target tied with 2 negatives and 1 above: sampled ranks 2, 3, 4 equally likely
    run = pd.DataFrame({"user_id": "u", "item_id": ["t", "a", "b", "c", "d"], "score": [1.0, 2.0, 1.0, 1.0, 0.0]})
    qrels = pd.DataFrame({"user_id": ["u"], "item_id": ["t"], "relevance": [1]})
    res = sampled_metrics(run, qrels, ["ap", "hr@3"], n_items=10, correction="none")
    assert res.summary.loc["ap", "sampled"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert res.summary.loc["hr@3", "sampled"] == pytest.approx(2 / 3)
    # model A: 30% of targets at the top, the rest deep; model B: every target at ranks 5..30
    n, m = 500, 49
    rng = np.random.default_rng(3)
    ranks_a = np.where(rng.random(3000) < 0.3, 1, rng.integers(200, 501, 3000))
    ranks_b = rng.integers(5, 31, 3000)
    out = {}
    for name, ranks in (("A", ranks_a), ("B", ranks_b)):
        run, qrels = _one_plus_n(ranks, n, m, seed=4)
        out[name] = sampled_metrics(run, qrels, ["hr@10"], n_items=n, correction="bv")
        out[name + "full"] = float((ranks <= 10).mean())
    assert out["Afull"] > out["Bfull"]
    assert out["A"].summary.loc["hr@10", "sampled"] < out["B"].summary.loc["hr@10", "sampled"]
    assert out["A"].summary.loc["hr@10", "corrected"] > out["B"].summary.loc["hr@10", "corrected"]
    lines = may_reverse(out["A"], out["B"], names=("A", "B"))
    assert len(lines) == 1 and "may reverse under full ranking" in lines[0]


def test_bad_inputs():
    run = pd.DataFrame({"user_id": "u", "item_id": ["t", "a"], "score": [1.0, 0.0]})
    qrels = pd.DataFrame({"user_id": ["u"], "item_id": ["x"], "relevance": [1]})
    with pytest.raises(MetricsError, match="not among its scored candidates"):
        sampled_metrics(run, qrels, ["ap"], n_items=10)
    with pytest.raises(MetricsError, match="needs a cutoff"):
        full_metric("ndcg", None, 5)
    with pytest.raises(MetricsError, match="covers"):
        sampled_metrics(run, qrels.assign(item_id="t"), ["mrr@10"], n_items=10)
    with pytest.raises(MetricsError, match="catalogue size"):
        sampled_metrics(run, qrels, ["ap"], n_items=None)
    with pytest.raises(MetricsError, match="^the run has no column 'score'; it needs user_id, item_id, score$"):
        sampled_metrics(run.drop(columns="score"), qrels, ["ap"], n_items=10)
    with pytest.raises(MetricsError, match="^the qrels has no column 'item_id'"):
        sampled_metrics(run, qrels.drop(columns="item_id"), ["ap"], n_items=10)


def test_a_qrels_without_relevance_makes_every_row_a_target():
    # target "t" below one negative of two: sampled rank 2, ap = 1/2 with or without a relevance column
    run = pd.DataFrame({"user_id": "u", "item_id": ["t", "a", "b"], "score": [1.0, 2.0, 0.0]})
    without = sampled_metrics(run, pd.DataFrame({"user_id": ["u"], "item_id": ["t"]}), ["ap"], n_items=10,
                              correction="none")
    assert without.summary.loc["ap", "sampled"] == 0.5


def test_compare_command_says_which_pair_may_reverse(tmp_path, capsys):
    import json

    from metrics_core.cli import main

    n, m = 500, 49
    rng = np.random.default_rng(3)
    ranks = {"A": np.where(rng.random(2000) < 0.3, 1, rng.integers(200, 501, 2000)), "B": rng.integers(5, 31, 2000)}
    for name, r in ranks.items():
        run, qrels = _one_plus_n(r, n, m, seed=4)
        run.to_csv(tmp_path / f"{name}.csv", index=False)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    args = ["compare", "--qrels", str(tmp_path / "qrels.csv"), "--run", str(tmp_path / "A.csv"), "--run",
            str(tmp_path / "B.csv"), "--metrics", "hr@10", "--sampled-items", str(n), "--bootstrap", "100",
            "--permutations", "100", "-q"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "Sampled ranking (49 negatives of 500 items), corrected by bv" in out
    assert "hr@10: sampled, B leads A" in out and "may reverse under full ranking" in out
    assert main(args + ["--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["sampled"]["may_reverse"]) == 1
    assert doc["sampled"]["models"]["A"]["hr@10"]["corrected"] > doc["sampled"]["models"]["B"]["hr@10"]["corrected"]
    assert doc["sampled"]["out_of_range"] == []  # bias-variance stays within 0..1 here
    # least squares: ill-conditioned at 500 items and 49 negatives; each value outside 0..1 is said
    assert main(args + ["--sampled-correction", "ls", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    outside = [m for m, r in doc["sampled"]["models"].items() if not 0 <= r["hr@10"]["corrected"] <= 1]
    assert outside and [line.split(":")[0] for line in doc["sampled"]["out_of_range"]] == outside
    assert all("least squares is ill-conditioned" in line for line in doc["sampled"]["out_of_range"])
