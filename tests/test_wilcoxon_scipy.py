"""Wilcoxon signed-rank p-values equal scipy.stats.wilcoxon on the exact differences.

Reference: per-user values held as exact fractions, their differences computed exactly and only
then converted to floats, given to ``scipy.stats.wilcoxon(zero_method="wilcox")``. The code under
test gets the same values as floats computed another way (sums and quotients), whose differences
carry floating-point noise that would split ties.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

import metrics_core as mc
from metrics_core.analysis import stats


def _noisy(fr: Fraction, rng) -> float:
    """``fr`` as a float reached through a random floating-point path (not the exact rounding)."""
    parts = rng.integers(1, 4)
    value = 0.0
    for _ in range(parts):
        value += float(fr) / parts
    return value


def _cases(seed: int, n: int, denominators=(3, 7, 10)):
    rng = np.random.default_rng(seed)
    a = [Fraction(int(rng.integers(0, d + 1)), d) for d in rng.choice(denominators, n)]
    b = [Fraction(int(rng.integers(0, d + 1)), d) for d in rng.choice(denominators, n)]
    exact = np.array([float(y - x) for x, y in zip(a, b)])
    return np.array([_noisy(x, rng) for x in a]), np.array([_noisy(y, rng) for y in b]), exact


@pytest.mark.parametrize("seed, n", [(0, 30), (1, 300), (2, 4000), (3, 12)])
def test_p_value_is_scipys_on_the_exact_differences(seed, n):
    a, b, exact = _cases(seed, n)
    ref = sps.wilcoxon(exact, zero_method="wilcox")
    statistic, p = stats.wilcoxon_test(a, b)
    assert statistic == pytest.approx(float(ref.statistic), rel=1e-12)
    assert p == pytest.approx(float(ref.pvalue), rel=1e-12)


def test_the_noise_would_change_scipys_p_value_without_snapping():
    """The cases above are not trivial: scipy on the raw float differences disagrees."""
    a, b, exact = _cases(2, 4000)
    raw = sps.wilcoxon(b - a, zero_method="wilcox").pvalue
    ref = sps.wilcoxon(exact, zero_method="wilcox").pvalue
    assert abs(raw - ref) > 1e-12 * ref


def test_exact_distribution_without_ties_matches_scipy():
    rng = np.random.default_rng(5)
    a = rng.random(40)
    b = a + rng.normal(0.05, 0.1, 40)
    ref = sps.wilcoxon(b - a, zero_method="wilcox")
    assert stats.wilcoxon_test(a, b) == (pytest.approx(float(ref.statistic), rel=1e-12),
                                         pytest.approx(float(ref.pvalue), rel=1e-12))


def test_snapping_keeps_distinct_differences_and_signs():
    d = np.array([0.1, -0.1 + 1e-17, 0.2, 3e-18, -0.30000000000000004, 0.3])
    out = stats.snap_differences(d)
    assert out[0] == -out[1] and out[3] == 0.0 and out[4] == -out[5]
    assert len(set(np.abs(out[out != 0]))) == 3


def test_compare_reports_scipys_p_value():
    """Through the public comparison: the per-user tables of two models."""
    a, b, exact = _cases(7, 500)
    users = [f"q{i}" for i in range(len(a))]
    tables = {"base": pd.DataFrame({"ndcg@10": a}, index=users), "new": pd.DataFrame({"ndcg@10": b}, index=users)}
    out = mc.compare(tables, baseline="base", metrics=["ndcg@10"], test="wilcoxon")
    row = out[out["model"] == "new"].iloc[0]
    assert row["p_value"] == pytest.approx(float(sps.wilcoxon(exact, zero_method="wilcox").pvalue), rel=1e-12)
