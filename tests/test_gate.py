"""mc.check: conditions parsed as documented, thresholds, and the baseline rule (one-sided paired
test against the margin, corrected) checked against scipy and statsmodels on data with a known effect."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

import metrics_core as mc
from metrics_core.analysis.conditions import parse_condition

N = 1500


class Ev:
    """What check reads of an evaluation: summary and per-user table."""

    def __init__(self, per_user: dict, summary_extra: dict | None = None):
        index = pd.Index([f"u{i}" for i in range(len(next(iter(per_user.values()))))], name="user_id")
        self.per_user = pd.DataFrame(per_user, index=index)
        self.summary = {k: float(np.mean(v)) for k, v in per_user.items()} | (summary_extra or {})


def _baseline(seed=0):
    return np.random.default_rng(seed).uniform(0.2, 0.8, N)


def _noise(base, scale=0.05, seed=1):
    """base plus zero-mean noise whose mean is exactly 0 (antithetic pairs): no effect at all."""
    half = np.random.default_rng(seed).normal(0, scale, N // 2)
    return base + np.r_[half, -half, np.zeros(N - 2 * (N // 2))]


def test_parse_every_form():
    c = parse_condition("ndcg@10 >= 0.30")
    assert (c.kind, c.metric, c.op, c.value) == ("threshold", "ndcg@10", ">=", 0.30)
    assert parse_condition("logloss<0.4").op == "<"
    assert parse_condition("ndcg@10 > 1e-2").value == 0.01
    c = parse_condition("NDCG@10  Not Worse Than the Baseline By More Than 1.5%")
    assert (c.kind, c.margin, c.relative, c.margin_text) == ("baseline", 0.015, True, "1.5%")
    c = parse_condition("map@100 not worse than baseline by more than 0.002")
    assert (c.margin, c.relative) == (0.002, False)
    assert parse_condition("mrr@10 not worse than baseline").margin == 0


@pytest.mark.parametrize("text, message", [
    ("ndcg@10 >> 0.3", "cannot read it; write 'METRIC >= NUMBER'"),
    ("ndcg@10 = 0.3", "cannot read it"),
    ("ndcg@10 >= 30%", "write 0.3 rather than 30%"),
    ("ndcgg@10 >= 0.3", "unknown metric 'ndcgg@10'"),
    ("auc not worse than baseline", "auc has no per-user values"),
    ("logloss not worse than baseline", "use a threshold such as 'logloss <= NUMBER'"),
    ("coverage@10 not worse than baseline by more than 1%", "coverage@10 has no per-user values"),
    ("ndcg@10 not worse than baseline by more than 150%", "the margin must be from 0 to 100%"),
    ("ndcg@10 not worse than baseline by more than -1", "the margin must be from 0 to 100% or a non-negative"),
    ("ndcg@10 better than baseline", "cannot read it"),
])
def test_bad_conditions_name_the_condition(text, message):
    with pytest.raises(mc.MetricsError, match="condition '" + text.replace("(", r"\(").split(" ")[0]) as info:
        parse_condition(text)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_thresholds():
    ev = Ev({"ndcg@10": np.full(10, 0.35)}, {"coverage@10": 0.4, "logloss": 0.3, "r2": math.nan})
    report = mc.check(ev, ["ndcg@10 >= 0.35", "ndcg@10 > 0.35", "coverage@10 >= 0.5", "logloss < 0.4",
                           "NDCG@10 <= 0.4", "r2 > 0"])
    assert [r.passed for r in report] == [True, False, False, True, True, False]
    assert report.lines()[2] == "FAIL coverage@10 >= 0.5: 0.4000 not >= 0.5"
    assert report.lines()[0] == "PASS ndcg@10 >= 0.35: 0.3500 >= 0.35"
    assert not report.passed and len(report.failures) == 3
    with pytest.raises(AssertionError) as info:
        report.assert_passed()
    assert "3 of 6 condition(s) failed" in str(info.value) and "FAIL coverage@10 >= 0.5" in str(info.value)
    mc.check(ev, ["ndcg@10 >= 0.3"]).assert_passed()  # passes: no exception


def test_noise_passes_real_drop_fails():
    base = _baseline()
    conditions = ["ndcg@10 not worse than baseline by more than 1%", "ndcg@10 not worse than baseline"]
    noise = mc.check(Ev({"ndcg@10": _noise(base)}), conditions, baseline=Ev({"ndcg@10": base}))
    assert noise.passed, noise.lines()
    drop = mc.check(Ev({"ndcg@10": _noise(base) - 0.03}), conditions, baseline=Ev({"ndcg@10": base}))
    assert [r.passed for r in drop] == [False, False]
    assert drop.results[0].diff == pytest.approx(-0.03)


def test_drop_within_the_margin_passes_only_with_the_margin():
    base = _baseline()
    within = _noise(base, scale=0.01) - 0.002  # -0.4% of a mean near 0.5: inside a 1% margin, clearly a drop
    report = mc.check(Ev({"ndcg@10": within}), ["ndcg@10 not worse than baseline by more than 1%",
                                                "ndcg@10 not worse than baseline"],
                      baseline=Ev({"ndcg@10": base}), correction="none")
    assert [r.passed for r in report] == [True, False]
    r = report.results[0]
    assert r.margin == pytest.approx(0.01 * base.mean())
    assert r.relative_diff == pytest.approx(-0.002 / base.mean())


def test_lower_is_better_metric_drop_is_an_increase():
    base = _baseline()
    worse = mc.check(Ev({"arp@10": _noise(base) + 0.03}), ["arp@10 not worse than baseline"],
                     baseline=Ev({"arp@10": base}))
    better = mc.check(Ev({"arp@10": _noise(base) - 0.03}), ["arp@10 not worse than baseline"],
                      baseline=Ev({"arp@10": base}))
    assert (worse.passed, better.passed) == (False, True)


def _expected_one_sided(base, cand, margin, test):
    moved = base - margin
    if test == "t":
        return sps.ttest_rel(cand, moved, alternative="less").pvalue
    return sps.wilcoxon(cand - moved, alternative="less", zero_method="wilcox").pvalue


@pytest.mark.parametrize("test", ["t", "wilcoxon"])
def test_p_values_match_scipy_one_sided_and_statsmodels_holm(test):
    rng = np.random.default_rng(5)
    base = _baseline(3)
    effects = {"ndcg@10": -0.004, "map@10": 0.0, "recall@10": -0.02}
    cand = {m: base + e + rng.normal(0, 0.05, N) for m, e in effects.items()}
    conditions = ["ndcg@10 not worse than baseline by more than 0.5%", "map@10 not worse than baseline",
                  "recall@10 not worse than baseline by more than 0.001"]
    report = mc.check(Ev(cand), conditions, baseline=Ev({m: base for m in effects}), test=test)
    margins = [0.005 * base.mean(), 0.0, 0.001]
    want = [_expected_one_sided(base, cand[m], margin, test) for m, margin in zip(effects, margins)]
    assert [r.p_value for r in report] == pytest.approx(want, rel=1e-9, abs=1e-15)
    holm = multipletests(want, method="holm")[1]
    assert [r.p_adjusted for r in report] == pytest.approx(holm, rel=1e-9, abs=1e-15)
    assert [r.passed for r in report] == [bool(p >= 0.05) for p in holm]
    bh = mc.check(Ev(cand), conditions, baseline=Ev({m: base for m in effects}), test=test, correction="bh")
    assert [r.p_adjusted for r in bh] == pytest.approx(multipletests(want, method="fdr_bh")[1], rel=1e-9)


def test_randomization_test_decides_like_the_others():
    base = _baseline()
    conditions = ["ndcg@10 not worse than baseline"]
    kwargs = dict(baseline=Ev({"ndcg@10": base}), test="randomization", n_permutations=2000)
    assert mc.check(Ev({"ndcg@10": _noise(base)}), conditions, **kwargs).passed
    assert not mc.check(Ev({"ndcg@10": _noise(base) - 0.03}), conditions, **kwargs).passed


def test_users_are_paired_by_id():
    base = _baseline()
    cand = Ev({"ndcg@10": base - 0.05})
    cand.per_user = cand.per_user.iloc[::-1]  # another order: pairing is by user id
    report = mc.check(cand, ["ndcg@10 not worse than baseline by more than 0.049"], baseline=Ev({"ndcg@10": base}))
    assert report.results[0].n == N and report.results[0].diff == pytest.approx(-0.05)
    assert not report.passed  # a constant drop of 0.05 is beyond a margin of 0.049 for sure


def test_several_models_and_a_baseline_by_name():
    base = _baseline()
    models = {"old": Ev({"ndcg@10": base}), "same": Ev({"ndcg@10": _noise(base)}),
              "worse": Ev({"ndcg@10": base - 0.05})}
    report = mc.check(models, ["ndcg@10 not worse than baseline", "ndcg@10 >= 0.1"], baseline="old")
    assert [(r.model, r.passed) for r in report] == [("same", True), ("same", True), ("worse", False),
                                                      ("worse", True)]
    assert report.lines()[2].startswith("FAIL worse: ndcg@10 not worse than baseline: ")


def test_real_evaluations_end_to_end():
    rng = np.random.default_rng(2)
    users, items = 300, 40
    rows = [(u, i, rng.random()) for u in range(users) for i in rng.choice(items, 15, replace=False)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = run.sample(frac=0.25, random_state=2)[["user_id", "item_id"]].assign(relevance=1)
    good = run.merge(qrels, how="left").fillna({"relevance": 0})
    good["score"] += good["relevance"]  # relevant items first
    bad = good.assign(score=good["score"] - good["relevance"])  # the relevance boost removed: a real drop
    metrics = ["ndcg@10", "coverage@10"]
    base_ev = mc.evaluate(good.drop(columns="relevance"), qrels, metrics)
    conditions = ["ndcg@10 not worse than baseline by more than 1%", "coverage@10 >= 0.5"]
    assert mc.check(base_ev, conditions, baseline=base_ev).passed
    report = mc.check(mc.evaluate(bad.drop(columns="relevance"), qrels, metrics), conditions, baseline=base_ev)
    assert [r.passed for r in report] == [False, True]


def test_misuse_is_one_line():
    ev = Ev({"ndcg@10": _baseline()})
    cases = [
        (lambda: mc.check(ev, ["ndcg@10 not worse than baseline"]), "needs a baseline evaluation"),
        (lambda: mc.check(ev, ["map@10 >= 0.1"]), "has no value of map@10"),
        (lambda: mc.check(ev, []), "no condition given"),
        (lambda: mc.check(ev, ["ndcg@10 >= 0.1"], test="z"), "unknown test 'z'"),
        (lambda: mc.check(ev, ["ndcg@10 >= 0.1"], correction="x"), "unknown correction 'x'"),
        (lambda: mc.check(ev, ["ndcg@10 >= 0.1"], alpha=2), "alpha must be between 0 and 1"),
        (lambda: mc.check({"a": ev}, ["ndcg@10 >= 0.1"], baseline="b"), "baseline 'b' is not one of the models"),
        (lambda: mc.check(42, ["ndcg@10 >= 0.1"]), "expected an Evaluation"),
    ]
    for call, message in cases:
        with pytest.raises(mc.MetricsError) as info:
            call()
        assert message in str(info.value) and "\n" not in str(info.value)


def test_too_few_paired_users_fail_with_the_reason():
    one = Ev({"ndcg@10": np.array([0.5])})
    report = mc.check(one, ["ndcg@10 not worse than baseline"], baseline=one)
    assert not report.passed
    assert "1 user evaluated for both models: no paired test possible" in report.lines()[0]
