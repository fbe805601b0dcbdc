"""The Compare page's per-metric cached comparisons give exactly ``metrics_core.compare``'s
table: same columns, order and values, p-values adjusted over every row."""

from __future__ import annotations

import _deadlines as deadlines
import numpy as np
import pandas as pd
import pytest

from dashboard import cache, comparisons
from metrics_core.compare import compare


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
    pd.testing.assert_frame_equal(got, expected)
    # a second metric order reuses the cached rows and still adjusts over all of them
    again = comparisons.comparison(("ka", "kb", "kc"), tables, ("map", "ndcg@10"), "a", test, correction, 0.01, ())
    reordered = compare(tables, baseline="a", metrics=["map", "ndcg@10"], test=test, correction=correction,
                        alpha=0.01, n_permutations=comparisons.N_PERMUTATIONS, seed=0)
    pd.testing.assert_frame_equal(again, reordered)


def test_without_bootstrap_only_the_difference_interval_is_missing():
    cache.SHARED.clear()
    tables = per_user_tables()
    full = comparisons.comparison(("ka", "kb", "kc"), tables, ("map",), None, "t", "holm", 0.05, ())
    bare = comparisons.comparison(("ka", "kb", "kc"), tables, ("map",), None, "t", "holm", 0.05, (), bootstrap=False)
    assert bare["ci_low"].isna().all() and full["ci_low"].notna().all()
    pd.testing.assert_frame_equal(bare.drop(columns=["ci_low", "ci_high"]), full.drop(columns=["ci_low", "ci_high"]))


def test_many_users_answer_at_once_then_the_resampled_rows_arrive(monkeypatch):
    from dashboard import background
    from metrics_core import stats

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
    pd.testing.assert_frame_equal(exact, expected)
