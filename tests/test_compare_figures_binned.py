"""The Compare page's charts of many users are counted before drawing: the bars and cells hold
numpy's histogram of the same values, every user once."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.outputs.plot import compare_figures as cf


def _pairs(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    base = rng.random(n)
    return pd.DataFrame({"user_id": [f"u{i}" for i in range(n)], "baseline": base,
                         "challenger": np.clip(base + rng.normal(0, 0.2, n), 0, 1)})


def test_differences_of_many_users_are_drawn_as_counted_bars():
    pairs = _pairs(cf.DENSITY_ABOVE + 500)
    fig = cf.pair_differences(pairs, "ndcg@10", "a", "b", -0.01, 0.01)
    bars = fig.data[0]
    counts, edges = np.histogram((pairs["challenger"] - pairs["baseline"]).to_numpy(), bins=cf.HISTOGRAM_BINS)
    assert bars.type == "bar" and list(bars.y) == list(counts) and int(np.sum(bars.y)) == len(pairs)
    np.testing.assert_allclose(bars.x, (edges[:-1] + edges[1:]) / 2)
    # few users: the raw values, binned by the browser as before
    few = cf.pair_differences(_pairs(100), "ndcg@10", "a", "b", -0.01, 0.01).data[0]
    assert few.type == "histogram" and len(few.x) == 100


def test_pairs_of_many_users_are_drawn_as_counted_cells():
    pairs = _pairs(cf.DENSITY_ABOVE + 1)
    cells = cf.pair_scatter(pairs, "ndcg@10", "a", "b").data[0]
    counts, _, _ = np.histogram2d(pairs["baseline"], pairs["challenger"], bins=cf.DENSITY_BINS)
    z = np.asarray(cells.z, dtype=float)
    assert cells.type == "heatmap" and z.shape == (cf.DENSITY_BINS, cf.DENSITY_BINS)
    np.testing.assert_array_equal(np.nan_to_num(z), counts.T)
    assert np.nansum(z) == len(pairs)
