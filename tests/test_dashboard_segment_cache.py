"""The Compare page's segment results are cached by the labels' content, not by the attribute's name:
a second attribute table with the same column name (another upload, another session) gets its own
segments, and each segment's rows are compare() over its users."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.analysis.compare import compare


def test_same_attribute_name_other_labels_other_segments():
    from dashboard import cache, comparisons

    rng = np.random.default_rng(11)
    ids = pd.Index([f"u{i}" for i in range(200)])
    per_user = {m: pd.DataFrame({"ndcg@10": rng.random(200)}, index=ids) for m in ("base", "new")}
    first = pd.Series(rng.choice(["a", "b"], 200), index=ids)
    second = pd.Series(rng.choice(["a", "b", "c"], 200), index=ids)
    cache.SHARED.clear()
    args = (("k1", "k2"), per_user)
    rest = (("ndcg@10",), "base", "t", 0.05, ("opts",))
    one = comparisons.segment_comparisons(*args, first, "tier", *rest)
    two = comparisons.segment_comparisons(*args, second, "tier", *rest)
    assert sorted(one) == ["a", "b"] and sorted(two) == ["a", "b", "c"]
    for labels, got in ((first, one), (second, two)):
        for value, table in got.items():
            part = {m: t[labels.reindex(t.index).to_numpy() == value] for m, t in per_user.items()}
            want = compare(part, baseline="base", metrics=["ndcg@10"], test="t", correction="none", n_resamples=0)
            assert table["n"].tolist() == want["n"].tolist()
            assert np.allclose(table["p_value"], want["p_value"], rtol=1e-9)
            assert table.attrs["pending"] == []
    # another alpha: the detectable effect at that alpha, as compare() gives it (not the cached one's)
    loose = comparisons.segment_comparisons(*args, second, "tier", ("ndcg@10",), "base", "t", 0.2, ("opts",))
    for value, table in loose.items():
        part = {m: t[second.reindex(t.index).to_numpy() == value] for m, t in per_user.items()}
        want = compare(part, baseline="base", metrics=["ndcg@10"], test="t", correction="none", alpha=0.2,
                       n_resamples=0)
        assert np.allclose(table["mde"], want["mde"], rtol=1e-6)
        assert not np.allclose(table["mde"], two[value]["mde"], rtol=1e-6)


def test_the_cached_size_of_the_segment_tables_is_their_measured_size():
    """The cache counts the segment tables from the first one's size: within 10% of measuring each."""
    from dashboard import cache, comparisons
    from metrics_core.analysis.segment_compare import compare_segments

    rng = np.random.default_rng(12)
    ids = pd.Index([f"u{i}" for i in range(3000)])
    per_user = {m: pd.DataFrame({"ndcg@10": rng.random(3000), "mrr": rng.random(3000)}, index=ids)
                for m in ("base", "new", "other")}
    tables = compare_segments(per_user, pd.Series(rng.integers(1, 61, 3000), index=ids), baseline="base")
    measured = sum(cache.nbytes(t) for t in tables.values())
    assert abs(comparisons._tables_size(tables) - measured) <= 0.1 * measured
    assert comparisons._tables_size({}) == 0
