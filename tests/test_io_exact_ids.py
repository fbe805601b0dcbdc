"""Ids stay exact and join the same way whatever their type or dtype.

References: Python's ``int``/``str`` on the literal text written into each
file, and the evaluation of the same data with every id written as text.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from metrics_core.errors import MetricsError
from metrics_core.io import read_qrels, read_run

BIG = 9007199254740993  # 2^53 + 1: the first integer a float64 cannot hold


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_json_id_above_2_53_stays_exact_next_to_a_float_id():
    data = jsonl([{"user_id": BIG, "item_id": "a", "score": 1}, {"user_id": 1.0, "item_id": "b", "score": 0.5}])
    df, mapping = read_run(data, name="r.jsonl")
    assert df["user_id"].tolist() == [str(BIG), "1"]
    assert mapping.where(1) == "line 2"


def test_json_ids_of_2_64_and_more_are_exact():
    ids = [2**64, 2**64 + 1, 10**30 + 7]
    data = jsonl([{"user_id": u, "item_id": 5, "score": 1} for u in ids])
    df, _ = read_run(data, name="r.jsonl")
    assert df["user_id"].tolist() == [str(u) for u in ids]
    assert df["item_id"].tolist() == ["5"] * 3


def test_json_whole_float_ids_are_integer_text_and_other_numbers_keep_their_text():
    data = (b'{"user_id": 1e3, "item_id": "1.0", "score": 1}\n{"user_id": 2.50, "item_id": 1.0, "score": 2}\n'
            b'{"user_id": "07.0", "item_id": "1e3", "score": 3}\n')
    df, _ = read_run(data, name="r.jsonl")
    assert df["user_id"].tolist() == ["1000", "2.50", "07.0"]
    # text is kept as written ("1.0", "1e3"); the number 1.0 has no written form of its own: "1"
    assert df["item_id"].tolist() == ["1.0", "1", "1e3"]
    df, _ = read_run(data, name="r.jsonl", whole_number_ids=True)  # the user's choice: whole numbers are one id
    assert df["item_id"].tolist() == ["1", "1", "1e3"] and df["user_id"].tolist() == ["1000", "2.50", "07.0"]


def test_json_exact_user_scores_like_its_ground_truth():
    run = jsonl([{"user_id": BIG, "item_id": "a", "score": 1}, {"user_id": 1.0, "item_id": "b", "score": 0.5}])
    qrels = f"user_id,item_id,relevance\n{BIG},a,1\n{BIG - 1},b,1\n".encode()
    r, _ = read_run(run, name="r.jsonl")
    q, _ = read_qrels(qrels, name="q.csv")
    ev = mc.evaluate(r, q, ["ndcg@10"])
    # read through a float, the run's user would be 2^53 = BIG - 1: a wrong user scoring 1
    assert ev.per_user["ndcg@10"].to_dict() == {str(BIG): 1.0, str(BIG - 1): 0.0}


def test_json_syntax_error_names_the_line_on_the_exact_path():
    data = b'{"user_id": 1, "item_id": "a", "score": 1}\n\n{"user_id": 2, "item_id": "b" "score": 2}\n'
    with pytest.raises(MetricsError, match=r"r.jsonl: line 3: invalid JSON lines: Expecting ','"):
        read_run(data, name="r.jsonl")


@pytest.mark.parametrize("value", [1e20, -1e17, float(2**53 + 2)])
def test_parquet_float_ids_beyond_2_53_are_refused(tmp_path, value):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"user_id": [1.0, value], "item_id": ["a", "b"], "score": [1.0, 2.0]}), path)
    with pytest.raises(MetricsError) as e:
        read_run(path)
    assert "row 2" in str(e.value) and "2^53" in str(e.value) and "\n" not in str(e.value)


def test_parquet_float_ids_up_to_2_53_are_integer_text(tmp_path):
    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"user_id": [12.0, float(2**53)], "item_id": ["a", "b"], "score": [1.0, 2.0]}), path)
    assert read_run(path)[0]["user_id"].tolist() == ["12", str(2**53)]


# ------------------------------------------------------------ canonical ids in the API
USERS = [2, 10, 3]
ITEMS = [7, 8, 9]


def _as(values, kind):
    if kind == "int":
        return pd.Series(values, dtype="int64")
    if kind == "Int64":
        return pd.Series(values, dtype="Int64")
    if kind == "object_int":
        return pd.Series(values, dtype=object)
    if kind == "object_str":
        return pd.Series([str(v) for v in values], dtype=object)
    if kind == "object_mixed":
        return pd.Series([v if i % 2 else str(v) for i, v in enumerate(values)], dtype=object)
    if kind == "str":
        return pd.Series([str(v) for v in values], dtype="str")
    if kind == "category_int":
        return pd.Series(values).astype("category")
    if kind == "category_str":
        return pd.Series([str(v) for v in values]).astype("category")
    if kind == "arrow_str":
        return pd.Series([str(v) for v in values], dtype=pd.ArrowDtype(pa.string()))
    if kind == "float":
        return pd.Series([float(v) for v in values])
    raise AssertionError(kind)


KINDS = ["int", "Int64", "object_int", "object_str", "object_mixed", "str", "category_int", "category_str",
         "arrow_str", "float"]


def _frames(run_kind, truth_kind):
    run = pd.DataFrame({"user_id": _as([2, 2, 10, 3], run_kind), "item_id": _as([7, 8, 9, 7], run_kind),
                        "score": [0.9, 0.8, 0.7, 0.1]})
    qrels = pd.DataFrame({"user_id": _as([2, 10, 3], truth_kind), "item_id": _as([8, 9, 9], truth_kind),
                          "relevance": [1, 1, 1]})
    return run, qrels


def _reference_ndcg() -> dict:
    """Plain formula: u2 has its relevant item at rank 2, u10 at rank 1, u3 never."""
    return {"2": 1 / np.log2(3), "10": 1.0, "3": 0.0}


@pytest.mark.parametrize("run_kind,truth_kind", list(itertools.product(KINDS, repeat=2)))
def test_ids_join_the_same_whatever_the_dtypes(run_kind, truth_kind):
    run, qrels = _frames(run_kind, truth_kind)
    ev = mc.evaluate(run, qrels, ["ndcg@10"])
    got = {str(k): v for k, v in ev.per_user["ndcg@10"].items()}
    ref = _reference_ndcg()
    assert got.keys() == ref.keys()
    for k in ref:
        assert got[k] == pytest.approx(ref[k], abs=1e-12)


def test_object_float_id_beyond_2_53_is_refused():
    run = pd.DataFrame({"user_id": pd.Series([1e20, "a"], dtype=object), "item_id": ["x", "y"], "score": [1, 2]})
    qrels = pd.DataFrame({"user_id": ["a"], "item_id": ["y"], "relevance": [1]})
    with pytest.raises(MetricsError, match="2\\^53"):
        mc.evaluate(run, qrels)


def test_text_ids_are_not_reinterpreted():
    """'007' and '7' stay different ids; only integer-typed values become decimal text."""
    run = pd.DataFrame({"user_id": pd.Series(["007", 7], dtype=object), "item_id": ["a", "a"], "score": [1, 1]})
    qrels = pd.DataFrame({"user_id": ["7"], "item_id": ["a"], "relevance": [1]})
    ev = mc.evaluate(run, qrels, ["ndcg@10"])
    assert list(ev.per_user.index) == ["7"]
    assert ev.diagnostics.to_dict()["users_only_in_run"] == 1
