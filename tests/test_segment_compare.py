"""metrics_core.analysis.segment_compare.compare_segments against compare() on each segment's users selected
one value at a time, and against scipy and plain-Python formulas on the segment's pairs.

The data are built to hit the edges: users only some models have, non-finite values, users
without a label, a segment whose differences are all zero, one whose differences are one constant,
segments with a single paired user or none, a metric where lower is better, integer user ids."""

from __future__ import annotations

import functools

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from _quick_cases import covering
from scipy import stats as sps

from metrics_core import MetricsError
from metrics_core.analysis.compare import compare
from metrics_core.analysis.segment_compare import compare_segments

# mc.compare returns a Comparison (a DataFrame with paper-table writers): compare the values, not the class
assert_same_frame = functools.partial(pd.testing.assert_frame_equal, check_frame_type=False)

METRICS = ["ndcg@10", "mse"]  # mse: lower is better (wins are decreases)


def adversarial_tables(seed: int = 0, users: int = 400, int_ids: bool = False):
    """Three models' per-user tables and the users' labels, with every edge of the module docstring."""
    rng = np.random.default_rng(seed)
    ids = np.arange(users) if int_ids else np.array([f"u{i}" for i in range(users)], dtype=object)
    labels = pd.Series(rng.choice(["north", "south", "east", "west", "tiny", "few", "empty"], users,
                                  p=[0.3, 0.3, 0.2, 0.14, 0.02, 0.02, 0.02]),
                       index=pd.Index([str(i) for i in ids]))
    labels = labels.drop(labels.index[rng.random(users) < 0.05])  # users without a label
    tables = {}
    for k, name in enumerate(["base", "alpha", "beta"]):
        keep = rng.random(users) > 0.08 * k  # the challengers miss some users
        values = {"ndcg@10": rng.random(users).round(2), "mse": rng.random(users) * 3}
        table = pd.DataFrame(values, index=pd.Index(ids)).loc[keep]
        table.loc[table.sample(frac=0.03, random_state=k).index, "ndcg@10"] = np.nan  # non-finite values
        tables[name] = table
    base = tables["base"]
    west_base = base.index[labels.reindex(base.index.astype(str)).to_numpy() == "west"]
    base.loc[west_base, "ndcg@10"] = rng.integers(0, 32, len(west_base)) / 64  # exact in binary: + 0.25 too
    for name in ("alpha", "beta"):  # "east": alpha equals the baseline; "west": beta is 0.25 above it
        t = tables[name]
        east = t.index[labels.reindex(t.index.astype(str)).to_numpy() == "east"]
        common = east.intersection(base.index)
        if name == "alpha":
            t.loc[common, METRICS] = base.loc[common, METRICS].to_numpy()
        west = t.index[labels.reindex(t.index.astype(str)).to_numpy() == "west"].intersection(base.index)
        if name == "beta":
            t.loc[west, "ndcg@10"] = base.loc[west, "ndcg@10"].to_numpy() + 0.25
    # "one": three users every model has; under ndcg@10 alpha pairs one of them, beta none
    one = ids[:3]
    labels = pd.concat([labels.drop([str(i) for i in one], errors="ignore"),
                        pd.Series("one", index=pd.Index([str(i) for i in one]))])
    for name, ndcg in (("base", [0.1, 0.2, 0.3]), ("alpha", [np.nan, np.nan, 0.5]), ("beta", [np.nan] * 3)):
        t = tables[name]
        tables[name] = pd.concat([t.drop(one, errors="ignore"),
                                  pd.DataFrame({"ndcg@10": ndcg, "mse": [0.5, 1.0, 1.5]}, index=pd.Index(one))])
    return tables, labels


def by_value(tables, labels, value):
    """The rows of each table whose user is labelled ``value``, selected directly."""
    ids = set(labels.index[labels.to_numpy() == value])
    return {n: t[[str(i) in ids for i in t.index]] for n, t in tables.items()}


#: every test x id kind x baseline; the quick tier each value of each at least once
SEGMENT_CASES = covering([(b, i, t) for t in ("t", "wilcoxon", "randomization") for i in (False, True)
                          for b in ("base", None)], lambda c: c[0], lambda c: c[1], lambda c: c[2])


@pytest.mark.parametrize("baseline, int_ids, test", SEGMENT_CASES, ids=["-".join(map(str, c)) for c in SEGMENT_CASES])
def test_every_segment_is_compare_on_its_users(test, int_ids, baseline):
    tables, labels = adversarial_tables(seed=3, int_ids=int_ids)
    got = compare_segments(tables, labels, baseline=baseline, metrics=METRICS, test=test, alpha=0.1,
                           n_permutations=300, seed=4)
    expected_segments = []
    for value in sorted(labels.unique()):
        part = by_value(tables, labels, value)
        if min(len(t) for t in part.values()) < 2:
            continue
        expected_segments.append(value)
        want = compare(part, baseline=baseline, metrics=METRICS, test=test, correction="none", alpha=0.1,
                       n_resamples=0, n_permutations=300, seed=4)
        assert_same_frame(got[value], want, check_exact=False, rtol=1e-9, atol=1e-12)
        assert got[value].attrs["correction"] == "none" and got[value].attrs["alpha"] == 0.1
    assert list(got) == expected_segments
    assert {"east", "west"} <= set(got)


def test_the_edges_are_met():
    """The data hold what they are meant to: an all-zero segment, a constant difference, short segments."""
    tables, labels = adversarial_tables(seed=3)
    got = compare_segments(tables, labels, baseline="base", metrics=METRICS, test="t")
    east = got["east"].set_index(["metric", "model"])
    assert east.loc[("ndcg@10", "alpha"), "p_value"] == 1.0 and east.loc[("ndcg@10", "alpha"), "statistic"] == 0.0
    assert east.loc[("ndcg@10", "alpha"), "effect_size"] == 0.0 and east.loc[("ndcg@10", "alpha"), "mde"] == 0.0
    west = got["west"].set_index(["metric", "model"])
    assert west.loc[("ndcg@10", "beta"), "p_value"] == 0.0 and math.isnan(west.loc[("ndcg@10", "beta"), "effect_size"])
    one = got["one"].set_index(["metric", "model"])
    assert one.loc[("ndcg@10", "alpha"), "n"] == 1 and one.loc[("ndcg@10", "beta"), "n"] == 0
    for model in ("alpha", "beta"):
        assert one.loc[("ndcg@10", model), ["statistic", "p_value", "effect_size", "lift", "mde"]].isna().all()
    assert one.loc[("mse", "beta"), "n"] == 3


def test_t_test_lift_and_counts_against_scipy_and_formulas():
    """One segment's row recomputed from its pairs by scipy and plain Python."""
    tables, labels = adversarial_tables(seed=5)
    got = compare_segments(tables, labels, baseline="base", metrics=METRICS, test="t")["south"]
    part = by_value(tables, labels, "south")
    for metric, higher in (("ndcg@10", True), ("mse", False)):
        a = part["base"][metric]
        b = part["beta"][metric]
        pairs = [(float(a[u]), float(b[u])) for u in a.index if u in b.index
                 and math.isfinite(a[u]) and math.isfinite(b[u])]
        av = np.array([p[0] for p in pairs])
        bv = np.array([p[1] for p in pairs])
        row = got[(got["metric"] == metric) & (got["model"] == "beta")].iloc[0]
        ref = sps.ttest_rel(bv, av)
        assert row["n"] == len(pairs)
        assert row["statistic"] == pytest.approx(ref.statistic, rel=1e-9)
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
        diffs = [y - x for x, y in pairs]
        n, mean_d = len(diffs), sum(diffs) / len(diffs)
        sd = math.sqrt(sum((d - mean_d) ** 2 for d in diffs) / (n - 1))
        assert row["effect_size"] == pytest.approx(mean_d / sd, rel=1e-9)
        sign = 1 if higher else -1
        assert row["wins"] == sum(sign * d > 1e-9 for d in diffs)
        assert row["losses"] == sum(sign * d < -1e-9 for d in diffs)
        assert row["ties"] == n - row["wins"] - row["losses"]
        ma, mb = sum(av) / n, sum(bv) / n
        r = mb / ma
        va = sum((x - ma) ** 2 for x in av) / (n - 1)
        vb = sum((y - mb) ** 2 for y in bv) / (n - 1)
        cab = sum((x - ma) * (y - mb) for x, y in pairs) / (n - 1)
        half = sps.norm.ppf(0.975) * math.sqrt((vb - 2 * r * cab + r * r * va) / (n * ma * ma))
        assert (row["lift"], row["lift_ci_low"], row["lift_ci_high"]) == pytest.approx(
            (r - 1, r - 1 - half, r - 1 + half), rel=1e-9)


def test_wilcoxon_against_scipy_and_randomization_against_every_sign_assignment():
    tables, labels = adversarial_tables(seed=6)
    part = by_value(tables, labels, "tiny")
    got_w = compare_segments(tables, labels, baseline="base", metrics=["mse"], test="wilcoxon")
    got_r = compare_segments(tables, labels, baseline="base", metrics=["mse"], test="randomization",
                             n_permutations=1 << 20)
    a, b = part["base"]["mse"], part["alpha"]["mse"]
    common = [u for u in a.index if u in b.index]
    d = [float(b[u] - a[u]) for u in common]
    assert 2 <= len(d) <= 20
    w = got_w["tiny"].set_index("model").loc["alpha"]
    assert w["p_value"] == pytest.approx(sps.wilcoxon(d, zero_method="wilcox").pvalue, rel=1e-9)
    target = abs(sum(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d))) >= target - 1e-9 * sum(map(abs, d))
               for signs in itertools.product((1, -1), repeat=len(d)))
    r = got_r["tiny"].set_index("model").loc["alpha"]
    assert r["p_value"] == pytest.approx(hits / 2 ** len(d), rel=1e-12)


def test_values_order_and_minimum_size():
    tables, labels = adversarial_tables(seed=7)
    got = compare_segments(tables, labels, baseline="base", metrics=["ndcg@10"], values=["west", "north", "nowhere"],
                           min_users=30)
    sizes = {v: min(len(t) for t in by_value(tables, labels, v).values()) for v in ("west", "north")}
    assert list(got) == [v for v in ("west", "north") if sizes[v] >= 30]
    assert compare_segments(tables, labels.iloc[:0], baseline="base", metrics=["ndcg@10"]) == {}


def test_bad_arguments_are_one_line_errors():
    tables, labels = adversarial_tables(seed=8)
    with pytest.raises(MetricsError, match="at least two models"):
        compare_segments({"base": tables["base"]}, labels)
    with pytest.raises(MetricsError, match="unknown test"):
        compare_segments(tables, labels, test="z")
    with pytest.raises(MetricsError, match="no per-user values"):
        compare_segments(tables, labels, metrics=["recall@5"])
    with pytest.raises(MetricsError, match="baseline"):
        compare_segments(tables, labels, baseline="nobody", metrics=["mse"])


def test_missing_and_mixed_labels():
    """NaN and None labels put a user in no segment; numbers beside text are ordered by their text."""
    tables, labels = adversarial_tables(seed=9)
    mixed = labels.astype(object).copy()
    mixed.iloc[:40] = np.nan
    mixed.iloc[40:50] = None
    mixed.iloc[50:120] = 7
    got = compare_segments(tables, mixed, baseline="base", metrics=["mse"])
    assert [str(k) for k in got] == sorted(str(k) for k in got)  # ordered by text
    assert 7 in got and all(isinstance(k, str) or k == 7 for k in got)  # no segment of NaN or None
    seven = by_value(tables, mixed.fillna("none"), 7)
    want = compare(seven, baseline="base", metrics=["mse"], correction="none", n_resamples=0)
    assert_same_frame(got[7], want, check_exact=False, rtol=1e-9, atol=1e-12)
