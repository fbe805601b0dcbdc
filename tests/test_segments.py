"""metrics_core.analysis.segments.split_by_label against selecting each segment's users one value at a time."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics_core.encode import ids_in
from metrics_core.analysis.segments import split_by_label


def _reference(tables, labels, values):
    """The selection the split replaces: each value's users, then each table's rows of them."""
    return {v: {n: t[ids_in(t.index, labels.index[labels.to_numpy() == v])] for n, t in tables.items()}
            for v in values}


def test_split_matches_selecting_each_value_in_turn():
    rng = np.random.default_rng(3)
    users = pd.Index([f"u{i}" for i in range(500)], dtype="str")
    tables = {
        "a": pd.DataFrame({"m": rng.random(500)}, index=users),
        # another order, a fifth of the users missing, two users without a label
        "b": pd.DataFrame({"m": rng.random(402)}, index=pd.Index(
            list(users[rng.permutation(500)[:400]]) + ["x1", "x2"], dtype="str")),
    }
    labels = pd.Series(rng.integers(1, 61, 480).astype(str), index=users[:480])  # 20 users unlabelled
    got = split_by_label(tables, labels)
    values = sorted(labels.unique())
    assert list(got) == values
    expected = _reference(tables, labels, values)
    for v in values:
        for n in tables:
            pd.testing.assert_frame_equal(got[v][n], expected[v][n])
    # every labelled user of each table is in exactly one segment; unlabelled ones in none
    assert sum(len(got[v]["a"]) for v in values) == 480
    assert sum(len(got[v]["b"]) for v in values) == int(tables["b"].index.isin(labels.index).sum())


def test_chosen_values_in_their_order_and_integer_ids_matched_as_text():
    tables = {"a": pd.DataFrame({"m": [0.1, 0.2, 0.3, 0.4]}, index=pd.Index([1, 2, 3, 4])),
              "b": pd.DataFrame({"m": [0.5, 0.6, 0.7]}, index=pd.Index(["4", "3", "1"], dtype="str"))}
    labels = pd.Series(["x", "y", "x", "z"], index=pd.Index(["1", "2", "3", "4"], dtype="str"))
    got = split_by_label(tables, labels, ["z", "x"])
    assert list(got) == ["z", "x"]
    assert list(got["x"]["a"]["m"]) == [0.1, 0.3] and list(got["x"]["b"]["m"]) == [0.6, 0.7]
    assert list(got["z"]["a"].index) == [4] and list(got["z"]["b"].index) == ["4"]


def test_integer_and_categorical_labels_and_integer_user_ids():
    """Labels that are whole numbers or categories, tables indexed by whole-number ids (matched as
    text), users without a label and labels of no table's user, against the value-by-value selection."""
    rng = np.random.default_rng(11)
    ids = rng.permutation(np.arange(1000, 1600))
    tables = {"a": pd.DataFrame({"m": rng.random(500)}, index=pd.Index(ids[:500])),
              "b": pd.DataFrame({"m": rng.random(450)}, index=pd.Index(ids[100:550]))}
    labelled = pd.Index([str(u) for u in ids[50:600]], dtype="str")  # 50 of a's users have no label
    for labels in (pd.Series(rng.integers(0, 7, len(labelled)), index=labelled),
                   pd.Series(pd.Categorical(rng.choice(["low", "mid", "high"], len(labelled))), index=labelled)):
        values = sorted(labels.unique())
        got = split_by_label(tables, labels)
        assert list(got) == values
        text_tables = {n: t.set_axis(t.index.astype(str)) for n, t in tables.items()}
        expected = _reference(text_tables, labels, values)
        for v in values:
            for n, t in tables.items():
                assert list(got[v][n].index.astype(str)) == list(expected[v][n].index), (v, n)
                np.testing.assert_array_equal(got[v][n]["m"].to_numpy(), expected[v][n]["m"].to_numpy())
        assert sum(len(got[v]["a"]) for v in values) == 450


def test_no_labelled_user_gives_empty_segments():
    tables = {"a": pd.DataFrame({"m": [0.1, 0.2]}, index=pd.Index(["u1", "u2"], dtype="str"))}
    empty = pd.Series([], index=pd.Index([], dtype="str"), dtype=object)
    assert split_by_label(tables, empty) == {}
    got = split_by_label(tables, empty, ["x"])
    assert list(got) == ["x"] and got["x"]["a"].empty
    other = pd.Series(["y"], index=pd.Index(["u9"], dtype="str"))  # a label of no table's user
    assert split_by_label(tables, other)["y"]["a"].empty
