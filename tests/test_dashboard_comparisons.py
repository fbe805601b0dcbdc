"""The Compare page's per-metric cached comparisons give exactly ``metrics_core.compare``'s
table: same columns, order and values, p-values adjusted over every row."""

from __future__ import annotations

import functools

import _deadlines as deadlines
import numpy as np
import pandas as pd
import pytest

from dashboard import cache, comparisons
from metrics_core.analysis.compare import compare

# mc.compare returns a Comparison (a DataFrame with paper-table writers): compare the values, not the class
assert_same_frame = functools.partial(pd.testing.assert_frame_equal, check_frame_type=False)


def per_user_tables():
    rng = np.random.default_rng(4)
    users = pd.Index([f"u{i}" for i in range(40)], name="user_id")
    tables = {n: pd.DataFrame({"ndcg@10": rng.random(40), "map": rng.random(40)}, index=users) for n in "abc"}
    tables["c"] = tables["c"].iloc[3:]  # a model that misses users
    return tables


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomization"])
@pytest.mark.parametrize("correction", ["holm", "bh", "none"])
def test_cached_comparison_equals_compare(test, correction):
    cache.SHARED.clear()
    tables = per_user_tables()
    expected = compare(tables, baseline="a", metrics=["ndcg@10", "map"], test=test, correction=correction,
                       alpha=0.01, n_permutations=comparisons.N_PERMUTATIONS, seed=0)
    got = comparisons.comparison(("ka", "kb", "kc"), tables, ("ndcg@10", "map"), "a", test, correction, 0.01, ())
    assert_same_frame(got, expected)
    # a second metric order reuses the cached rows and still adjusts over all of them
    again = comparisons.comparison(("ka", "kb", "kc"), tables, ("map", "ndcg@10"), "a", test, correction, 0.01, ())
    reordered = compare(tables, baseline="a", metrics=["map", "ndcg@10"], test=test, correction=correction,
                        alpha=0.01, n_permutations=comparisons.N_PERMUTATIONS, seed=0)
    assert_same_frame(again, reordered)


def test_without_bootstrap_only_the_difference_interval_is_missing():
    cache.SHARED.clear()
    tables = per_user_tables()
    full = comparisons.comparison(("ka", "kb", "kc"), tables, ("map",), None, "t", "holm", 0.05, ())
    bare = comparisons.comparison(("ka", "kb", "kc"), tables, ("map",), None, "t", "holm", 0.05, (), bootstrap=False)
    assert bare["ci_low"].isna().all() and full["ci_low"].notna().all()
    assert_same_frame(bare.drop(columns=["ci_low", "ci_high"]), full.drop(columns=["ci_low", "ci_high"]))


def test_many_users_answer_at_once_then_the_resampled_rows_arrive(monkeypatch):
    from dashboard import background
    from metrics_core.analysis import stats

    cache.SHARED.clear()
    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    tables = per_user_tables()
    args = (("ka", "kb", "kc"), tables, ("ndcg@10", "map"), "a", "randomization", "holm", 0.05, ())
    quick = comparisons.comparison(*args)
    assert quick.attrs["pending"] and quick["ci_low"].isna().all()
    # the quick p-value is the normal approximation of the sign-flip distribution
    a, b, _ = stats.align_pairs(tables["a"]["map"], tables["c"]["map"])
    row = quick[(quick["metric"] == "map") & (quick["model"] == "c")].iloc[0]
    assert row["p_value"] == pytest.approx(stats.randomization_test(a, b, n_resamples=0)[1], abs=1e-15)
    assert background.wait(quick.attrs["pending"], timeout=deadlines.BACKGROUND)
    exact = comparisons.comparison(*args)
    assert exact.attrs["pending"] == []
    expected = compare(tables, baseline="a", metrics=["ndcg@10", "map"], test="randomization", correction="holm",
                       alpha=0.05, n_permutations=comparisons.N_PERMUTATIONS, seed=0)
    assert_same_frame(exact, expected)


def test_the_difference_interval_is_the_same_under_every_test():
    """compare() draws the bootstrap interval from the paired differences alone: the page caches it
    once for all tests, which is exact only while this holds."""
    tables = per_user_tables()
    intervals = [compare(tables, baseline="a", metrics=["ndcg@10", "map"], test=test, correction="none",
                         n_permutations=200, seed=0)[["ci_low", "ci_high"]] for test in ("t", "wilcoxon", "randomization")]
    assert intervals[0].notna().all().all()
    for other in intervals[1:]:
        assert_same_frame(other, intervals[0])


def test_on_many_users_another_test_reuses_the_interval_and_only_waits_for_its_sign_flips(monkeypatch):
    from dashboard import background

    cache.SHARED.clear()
    monkeypatch.setattr(background, "FOREGROUND_USERS", 10)
    tables = per_user_tables()
    keys = ("ka", "kb", "kc")
    first = comparisons.comparison(keys, tables, ("map",), "a", "t", "holm", 0.05, ())
    assert comparisons.pending_parts(first.attrs["pending"]) == {"interval": True, "sign_flips": False}
    assert background.wait(first.attrs["pending"], timeout=deadlines.BACKGROUND)
    wilcoxon = comparisons.comparison(keys, tables, ("map",), "a", "wilcoxon", "holm", 0.05, ())
    assert wilcoxon.attrs["pending"] == []  # the interval is the t-test's, nothing is resampled again
    assert_same_frame(wilcoxon, compare(tables, baseline="a", metrics=["map"], test="wilcoxon",
                                                    correction="holm", alpha=0.05, seed=0))
    flips = comparisons.comparison(keys, tables, ("map",), "a", "randomization", "holm", 0.05, ())
    assert comparisons.pending_parts(flips.attrs["pending"]) == {"interval": False, "sign_flips": True}
    assert flips["ci_low"].notna().all()  # the interval is there while the sign flips run
    assert background.wait(flips.attrs["pending"], timeout=deadlines.BACKGROUND)
    exact = comparisons.comparison(keys, tables, ("map",), "a", "randomization", "holm", 0.05, ())
    assert_same_frame(exact, compare(tables, baseline="a", metrics=["map"], test="randomization",
                                                 correction="holm", alpha=0.05,
                                                 n_permutations=comparisons.N_PERMUTATIONS, seed=0))
