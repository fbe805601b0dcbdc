"""Failure triage tables on a hand-made case: a model that misses a user, unjudged items,
ties; checked against values worked out by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard import triage


def test_groups_gap_and_order_by_hand():
    per_user = {
        "a": pd.DataFrame({"ndcg@2": [0.0, 0.0, 0.9, 0.2, 0.8], "hit_rate@2": [0.0, 0.0, 1.0, 0.5, 1.0]},
                          index=["u1", "u2", "u3", "u4", "u5"]),
        "b": pd.DataFrame({"ndcg@2": [0.5, 0.0, 1.0, 0.7, 0.1]}, index=["u1", "u2", "u3", "u4", "u5"]),
        "c": pd.DataFrame({"ndcg@2": [0.6, 0.3, 0.2, 0.1, 0.1]}, index=["u1", "u2", "u3", "u4", "u5"]),
    }
    lengths = pd.Series([0, 3, 3, 3, 3], index=["u1", "u2", "u3", "u4", "u5"])
    n_rel = pd.Series([1, 2, 1, 1, 2], index=lengths.index)
    table = triage.triage_table(per_user, "a", "ndcg@2", "hit_rate@2", lengths, n_rel).set_index("user_id")
    # users with a hit u3, u4, u5: values 0.9, 0.2, 0.8; 25th percentile (linear) = 0.5
    assert table.loc["u1", "group"] == "not served"
    assert table.loc["u2", "group"] == "no hit in the top K"
    assert table.loc["u4", "group"] == "hit but low"  # 0.2 < 0.5
    assert table.loc["u3", "group"] == table.loc["u5", "group"] == "fine"
    assert table.loc["u1", "gap"] == 0.6 and table.loc["u1", "best other model"] == "c"
    assert np.isclose(table.loc["u4", "gap"], 0.5) and table.loc["u4", "best other model"] == "b"
    assert list(table.index) == ["u1", "u4", "u2", "u3", "u5"]  # gaps 0.6, 0.5, 0.3, 0.1, -0.7
    counts = triage.group_counts(table.reset_index()).set_index("group")["users"]
    assert counts.to_dict() == {"not served": 1, "no hit in the top K": 1, "hit but low": 1, "fine": 2}
    only = triage.filter_users(table.reset_index(), "fine", search="u")
    assert list(only["user_id"]) == ["u3", "u5"]


def test_side_by_side_aligns_items_and_marks_unjudged():
    first = pd.DataFrame({"rank": [1, 2, 3], "item_id": ["x", "y", "z"], "score": [0.9, 0.5, 0.5],
                          "relevance": [2.0, 0.0, 0.0], "judged": [True, False, True]})
    second = pd.DataFrame({"rank": [1, 2], "item_id": ["z", "q"], "score": [3.0, 1.0],
                           "relevance": [0.0, 1.0], "judged": [True, True]})
    features = pd.DataFrame({"item_id": ["x", "q"], "genre": ["drama", "news"]})
    out = triage.side_by_side(first, second, ("m1", "m2"), 2, features)
    assert list(out["item_id"]) == ["x", "z", "q", "y"]  # by best rank, then item id
    rel = dict(zip(out["item_id"], out["relevance"]))
    assert rel == {"x": "2", "y": "unjudged", "z": "0", "q": "1"}
    z = out.set_index("item_id").loc["z"]
    assert z["rank · m1"] == 3 and z["rank · m2"] == 1
    assert out.set_index("item_id").loc["x", "genre"] == "drama"
    assert triage.has_ties_in_top(first, 3) and not triage.has_ties_in_top(first, 1)
