"""Repeated (user, item) pairs in files: the per-user check (grouped users) against the global-sort check.

The reader checks pairs inside each user's rows when users are grouped and
falls back to sorting integer pair keys otherwise; both must find the same rows
and name the same lines.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from metrics_core.errors import MetricsError
from metrics_core.io import read_table
from metrics_core.io.checks import earlier_pairs, pair_keys, repeats


def _csv(tmp_path, name, df):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


def test_earlier_pairs_agree_with_sorted_keys():
    rng = np.random.default_rng(3)
    users = np.repeat([f"u{i}" for i in range(300)], rng.integers(1, 40, size=300))
    items = np.array([f"i{x}" for x in rng.integers(0, 25, size=len(users))])
    earlier = earlier_pairs(pa.array(users), pa.array(items))
    key = pair_keys(pa.array(users), pa.array(items))
    assert np.array_equal(np.flatnonzero(earlier != -1), repeats(key))
    for i in np.flatnonzero(earlier != -1):
        assert earlier[i] == np.flatnonzero(key == key[i])[0]


def test_split_users_fall_back_to_keys():
    assert earlier_pairs(pa.array(["a", "b", "a"]), pa.array(["x", "y", "x"])) is None


@pytest.mark.parametrize("shuffle", [False, True])
def test_run_duplicate_names_both_lines(tmp_path, shuffle):
    run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "a", "c"],
                        "score": [0.5, 0.4, 0.3, 0.2, 0.1]})
    if shuffle:  # u1's rows split by u2's: the global-sort path
        run = run.iloc[[0, 3, 1, 4, 2]].reset_index(drop=True)
    expected = ("line 6", "first seen on line 2") if shuffle else ("line 4", "first seen on line 2")
    with pytest.raises(MetricsError, match=rf"{expected[0]}: duplicate .*'u1', 'a'.*{expected[1]}"):
        read_table(_csv(tmp_path, "run.csv", run), kind="run")


@pytest.mark.parametrize("shuffle", [False, True])
def test_qrels_exact_repeats_dropped_and_conflicts_refused(tmp_path, shuffle):
    qrels = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2"], "item_id": ["a", "b", "a", "a"],
                          "relevance": [2, 1, 2, 0]})
    if shuffle:
        qrels = qrels.iloc[[0, 3, 1, 2]].reset_index(drop=True)
    df, _ = read_table(_csv(tmp_path, "q.csv", qrels), kind="qrels")
    assert sorted(map(tuple, df[["user_id", "item_id", "relevance"]].to_numpy().tolist())) == [
        ("u1", "a", 2.0), ("u1", "b", 1.0), ("u2", "a", 0.0)]
    bad = qrels.copy()
    bad.loc[len(bad)] = ["u2", "a", 1]  # u2 stays grouped only when the rows were not shuffled
    with pytest.raises(MetricsError, match=r"line 6: conflicting relevance for \(user_id, item_id\) = "
                                           r"\('u2', 'a'\): 1 here but 0 on line (5|3); 1 conflicting row"):
        read_table(_csv(tmp_path, "bad.csv", bad), kind="qrels")
