"""The Distributions page's ECDF steps and box statistics, against plain-Python
definitions (counting, ``statistics.quantiles`` with linear interpolation, Tukey's fences)."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from metrics_core.outputs.plot.distribution_tables import box_stats, ecdf_steps


def long_frame(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = np.round(rng.random(300), 2)                      # many ties
    b = np.r_[np.zeros(40), rng.random(157), np.ones(3), [np.nan, np.inf]]  # non-finite values are dropped
    c = np.r_[rng.normal(0.5, 0.1, 200), [5.0, -4.0]]     # outliers beyond the fences
    return pd.concat([pd.DataFrame({"model": name, "value": v}) for name, v in (("a", a), ("b", b), ("c", c))],
                     ignore_index=True)


def plain_ecdf(values: list[float]) -> list[tuple[float, float]]:
    finite = [v for v in values if math.isfinite(v)]
    return [(v, sum(1 for x in finite if x <= v) / len(finite)) for v in sorted(set(finite))]


def test_ecdf_is_the_share_of_users_at_or_below_each_distinct_value():
    long = long_frame()
    steps = ecdf_steps(long)
    assert list(dict.fromkeys(steps["model"])) == ["a", "b", "c"]
    for name, part in long.groupby("model"):
        expected = plain_ecdf(part["value"].tolist())
        got = steps[steps["model"] == name]
        assert got["value"].tolist() == [v for v, _ in expected]
        assert got["share"].to_numpy() == pytest.approx([s for _, s in expected], abs=1e-15)


def test_ecdf_thinned_keeps_exact_shares_and_both_ends():
    long = long_frame()
    steps = ecdf_steps(long, max_points=25)
    for name, part in long.groupby("model"):
        expected = dict(plain_ecdf(part["value"].tolist()))
        got = steps[steps["model"] == name]
        assert len(got) <= 26
        assert got["value"].iloc[0] == min(expected) and got["value"].iloc[-1] == max(expected)
        assert got["share"].iloc[-1] == 1.0
        for v, s in zip(got["value"], got["share"]):
            assert s == pytest.approx(expected[v], abs=1e-15)
        assert got["value"].is_monotonic_increasing and got["share"].is_monotonic_increasing


def test_box_statistics_are_linear_quartiles_and_tukey_fences():
    long = long_frame()
    table = box_stats(long).set_index("model")
    for name, part in long.groupby("model"):
        x = [v for v in part["value"].tolist() if math.isfinite(v)]
        q1, med, q3 = statistics.quantiles(x, n=4, method="inclusive")
        reach = 1.5 * (q3 - q1)
        row = table.loc[name]
        assert row["users"] == len(x)
        assert row["mean"] == pytest.approx(statistics.fmean(x), abs=1e-12)
        assert (row["q1"], row["median"], row["q3"]) == pytest.approx((q1, med, q3), abs=1e-12)
        assert row["lower_fence"] == min(v for v in x if v >= q1 - reach)
        assert row["upper_fence"] == max(v for v in x if v <= q3 + reach)
    assert table.loc["c", "upper_fence"] < 5.0 and table.loc["c", "lower_fence"] > -4.0  # outliers outside


def test_empty_and_all_missing_models_are_left_out():
    long = pd.DataFrame({"model": ["a", "a", "b"], "value": [np.nan, np.nan, 0.5]})
    assert ecdf_steps(long)["model"].tolist() == ["b"]
    assert box_stats(long)["model"].tolist() == ["b"]
    empty = pd.DataFrame(columns=["model", "value"])
    assert ecdf_steps(empty).empty and box_stats(empty).empty
