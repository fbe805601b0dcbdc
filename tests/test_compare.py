"""metrics_core.compare: paired comparison tables from per-user metrics."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

import metrics_core as mc
from metrics_core.analysis import stats
from metrics_core.analysis.compare import compare, summary_table
from metrics_core.errors import MetricsError


def _tables():
    users = [f"u{i}" for i in range(30)]
    rng = np.random.default_rng(0)
    base = pd.DataFrame({"ndcg@10": rng.random(30), "map": rng.random(30)},
                        index=pd.Index(users, name="user_id"))
    better = base + 0.2 * rng.random((30, 2))
    worse = (base - 0.01 * rng.random((30, 2))).iloc[5:]  # 5 users missing
    return {"base": base, "better": better.clip(upper=1.0), "worse": worse}


def test_compare_against_baseline_matches_scipy_and_hand():
    t = _tables()
    res = compare(t, baseline="base", test="t", correction="holm")
    assert list(res[["metric", "baseline", "model"]].itertuples(index=False, name=None)) == [
        ("ndcg@10", "base", "better"), ("ndcg@10", "base", "worse"),
        ("map", "base", "better"), ("map", "base", "worse")]
    row = res.iloc[1]
    common = t["worse"].index
    assert row["n"] == 25
    a = t["base"].loc[common, "ndcg@10"].to_numpy()
    b = t["worse"]["ndcg@10"].to_numpy()
    assert row["diff"] == pytest.approx(b.mean() - a.mean())
    assert row["baseline_mean"] == pytest.approx(a.mean())
    assert row["p_value"] == pytest.approx(sst.ttest_rel(b, a).pvalue)
    assert row["statistic"] == pytest.approx(sst.ttest_rel(b, a).statistic)
    assert (row["wins"], row["ties"], row["losses"]) == (
        int((b - a > 1e-9).sum()), int((abs(b - a) <= 1e-9).sum()), int((b - a < -1e-9).sum()))
    assert row["effect_size"] == pytest.approx((b - a).mean() / (b - a).std(ddof=1))
    assert row["ci_low"] <= row["diff"] <= row["ci_high"]
    # Holm over the 4 rows
    assert res["p_adjusted"].to_numpy() == pytest.approx(stats.holm(res["p_value"].to_numpy()))
    assert res["significant"].tolist() == (res["p_adjusted"] < 0.05).tolist()


def test_compare_all_pairs_and_bh_and_all_tests():
    t = _tables()
    res = compare(t, metrics=["map"], test="wilcoxon", correction="bh", tests="all")
    assert list(zip(res["baseline"], res["model"])) == [("base", "better"), ("base", "worse"), ("better", "worse")]
    for col in ["p_t", "p_t_adjusted", "p_wilcoxon", "p_wilcoxon_adjusted",
                "p_randomization", "p_randomization_adjusted"]:
        assert col in res.columns
    assert res["p_value"].tolist() == res["p_wilcoxon"].tolist()
    assert res["p_adjusted"].to_numpy() == pytest.approx(stats.benjamini_hochberg(res["p_wilcoxon"].to_numpy()))
    assert res["p_t_adjusted"].to_numpy() == pytest.approx(stats.benjamini_hochberg(res["p_t"].to_numpy()))
    a = t["better"].loc[t["worse"].index, "map"].to_numpy()
    b = t["worse"]["map"].to_numpy()
    assert res.iloc[2]["p_wilcoxon"] == pytest.approx(sst.wilcoxon(b - a).pvalue)


def test_compare_errors():
    t = _tables()
    with pytest.raises(MetricsError, match="at least two"):
        compare({"a": t["base"]})
    with pytest.raises(MetricsError, match="baseline 'nope'"):
        compare(t, baseline="nope")
    with pytest.raises(MetricsError, match="auc"):
        compare(t, metrics=["auc"])
    with pytest.raises(MetricsError, match="unknown test"):
        compare(t, test="z")
    with pytest.raises(MetricsError, match="unknown correction"):
        compare(t, correction="bonf")


def test_compare_on_real_evaluations():
    rng = np.random.default_rng(1)
    users, items = 40, 12
    rel = (rng.random((users, items)) < 0.25).astype(int)
    rows_q = [(f"u{u}", f"i{i}", rel[u, i]) for u in range(users) for i in range(items) if rel[u, i]]
    qrels = pd.DataFrame(rows_q, columns=["user_id", "item_id", "relevance"])
    good_score = rel + rng.random((users, items))
    bad_score = rng.random((users, items))
    def run(score):
        return pd.DataFrame([(f"u{u}", f"i{i}", score[u, i]) for u in range(users) for i in range(items)],
                            columns=["user_id", "item_id", "score"])
    evs = {name: mc.evaluate(run(s), qrels, metrics=["ndcg@5", "recall@5", "auc"])
           for name, s in [("random", bad_score), ("oracle", good_score)]}
    res = compare(evs, baseline="random", metrics=["ndcg@5", "recall@5"], test="randomization")
    assert (res["diff"] > 0).all() and res["significant"].all()
    ndcg = res.set_index("metric").loc["ndcg@5"]
    assert ndcg["model_mean"] == pytest.approx(evs["oracle"].summary["ndcg@5"])
    assert ndcg["baseline_mean"] == pytest.approx(evs["random"].summary["ndcg@5"])
    assert ndcg["n"] == evs["oracle"].n_users
    summ = summary_table(evs)
    auc = summ[(summ["model"] == "oracle") & (summ["metric"] == "auc")].iloc[0]
    assert auc["value"] == pytest.approx(evs["oracle"].summary["auc"]) and np.isnan(auc["ci_low"])
    nd = summ[(summ["model"] == "oracle") & (summ["metric"] == "ndcg@5")].iloc[0]
    assert nd["value"] == pytest.approx(evs["oracle"].summary["ndcg@5"])
    assert (nd["ci_low"], nd["ci_high"]) == pytest.approx(plain_bootstrap(evs["oracle"].per_user["ndcg@5"]), abs=1e-12)
    diffs = evs["oracle"].per_user["ndcg@5"] - evs["random"].per_user["ndcg@5"]
    assert (ndcg["ci_low"], ndcg["ci_high"]) == pytest.approx(plain_bootstrap(diffs), abs=1e-12)


def test_mc_compare_is_the_package_entry_point():
    """``mc.compare`` takes Evaluations as returned by ``mc.evaluate``; its p-values are scipy's
    paired t-test, Holm-adjusted over the two metrics by hand."""
    rng = np.random.default_rng(7)
    users, items = 30, 8
    rel = (rng.random((users, items)) < 0.3).astype(int)
    qrels = pd.DataFrame([(f"u{u}", f"i{i}", 1) for u in range(users) for i in range(items) if rel[u, i]],
                         columns=["user_id", "item_id", "relevance"])

    def run(score):
        return pd.DataFrame([(f"u{u}", f"i{i}", score[u, i]) for u in range(users) for i in range(items)],
                            columns=["user_id", "item_id", "score"])

    evs = {"noise": mc.evaluate(run(rng.random((users, items))), qrels, metrics=["ndcg@3", "recall@3"]),
           "signal": mc.evaluate(run(rel * 0.5 + rng.random((users, items))), qrels, metrics=["ndcg@3", "recall@3"])}
    res = mc.compare(evs, baseline="noise", test="t", correction="holm").set_index("metric")
    raw = {m: sst.ttest_rel(evs["signal"].per_user[m], evs["noise"].per_user.loc[evs["signal"].per_user.index, m]).pvalue
           for m in ("ndcg@3", "recall@3")}
    small, large = sorted(raw, key=raw.get)
    holm = {small: min(1.0, 2 * raw[small])}
    holm[large] = min(1.0, max(holm[small], raw[large]))
    for m in raw:
        assert res.loc[m, "p_value"] == pytest.approx(raw[m])
        assert res.loc[m, "p_adjusted"] == pytest.approx(holm[m])
        assert res.loc[m, "model_mean"] == pytest.approx(evs["signal"].summary[m])


def plain_bootstrap(values, n_resamples=1000, seed=0, batch_cells=4_000_000):
    """The percentile bootstrap of the mean written out with numpy: resampled rows drawn
    by ``Generator.integers`` in batches of ``batch_cells // n`` resamples (the draws of
    metrics_core.analysis.stats), each resample's mean taken directly, 2.5% and 97.5% quantiles."""
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    n = x.size
    rng = np.random.default_rng(seed)
    batch = max(1, batch_cells // n)
    means = []
    for start in range(0, n_resamples, batch):
        idx = rng.integers(0, n, size=(min(n_resamples, start + batch) - start, n))
        means.extend(x[idx].mean(axis=1))
    return tuple(np.quantile(means, [0.025, 0.975]))


def test_no_bootstrap_leaves_every_other_column_unchanged():
    t = _tables()
    full = compare(t, baseline="base", test="wilcoxon", correction="bh")
    bare = compare(t, baseline="base", test="wilcoxon", correction="bh", n_resamples=0)
    assert bare["ci_low"].isna().all() and bare["ci_high"].isna().all()
    assert full["ci_low"].notna().all()
    pd.testing.assert_frame_equal(bare.drop(columns=["ci_low", "ci_high"]), full.drop(columns=["ci_low", "ci_high"]))
