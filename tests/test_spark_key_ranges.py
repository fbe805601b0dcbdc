"""The key-range path (Parquet files read by user-id range, no shuffle) gives mc.evaluate's numbers.

Run and ground truth are written with pyarrow in layouts chosen to break a
careless reader: users cut across row groups and files, a user whose rows sit
in two distant chunks, empty files and empty ranges, rows in no order at all,
string and integer ids, labels in the run. Every case is checked against
``mc.evaluate`` on the same pandas frames (the independent single-machine
reference) and the route taken is checked where the layout decides it. Every test
runs on ``local[2]``; on ``local-cluster[2,1,1024]``, whose executors read the same
ranges through the same code, run two of the layouts (string ids with the default
ranges, integer ids with empty ranges), the inputs that must be shuffled and the errors.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from _records import assert_same_record
from _spark_cluster import CLUSTER, LOCAL
from test_spark import ALL_METRICS, assert_same, local_only, make_data

pytestmark = pytest.mark.spark


def write_parts(df: pd.DataFrame, directory, cuts: list[int], row_group_size: int, empty_file: bool = False) -> str:
    """``df`` written as one Parquet file per slice between ``cuts`` (row offsets), small row groups,
    plus an empty file when asked. Returns the directory."""
    directory.mkdir()
    edges = [0, *cuts, len(df)]
    for i, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        table = pa.Table.from_pandas(df.iloc[a:b], preserve_index=False)
        pq.write_table(table, directory / f"part-{i:03d}.parquet", row_group_size=row_group_size)
    if empty_file:
        pq.write_table(pa.Table.from_pandas(df.iloc[:0], preserve_index=False), directory / "part-empty.parquet")
    return str(directory)


def evaluate_both(spark, run_path, qrels_path, metrics, **kw):
    """(key-range evaluation, shuffle evaluation) of the same files."""
    from metrics_core import spark as mcs

    run = spark.read.parquet(run_path)
    qrels = spark.read.parquet(qrels_path) if qrels_path is not None else None
    ranged = mcs.evaluate(run, qrels, metrics, **kw)
    shuffled = mcs.evaluate(run, qrels, metrics, read_parquet_ranges=False, **kw)
    assert shuffled.route == "shuffle"
    return ranged, shuffled


def route_checked(spark, tmp_path, run, qrels, metrics, row_group_size: int, n_buckets: int, cuts=()) -> str:
    """Write ``run`` (cut at ``cuts``) and ``qrels`` as Parquet, evaluate both paths, check both against
    mc.evaluate and return the route the default path took."""
    run_path = write_parts(run, tmp_path / "run", list(cuts), row_group_size)
    qrels_path = write_parts(qrels, tmp_path / "qrels", [], 10_000)
    local = mc.evaluate(run, qrels, metrics)
    ranged, shuffled = evaluate_both(spark, run_path, qrels_path, metrics, n_buckets=n_buckets)
    assert_same(ranged, local)
    assert_same(shuffled, local)
    return ranged.route


def sorted_by_user(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values("user_id", kind="stable").reset_index(drop=True)


# (master, ranges, integer ids?): every range count and both id types on local[2]; two on the cluster
LAYOUTS = [(LOCAL, None, False), (LOCAL, None, True), (LOCAL, 3, False), (LOCAL, 40, True),
           (CLUSTER, None, False), (CLUSTER, 40, True)]


@pytest.mark.parametrize("spark,n_buckets,int_ids", LAYOUTS, indirect=["spark"], scope="module")
def test_users_cut_across_row_groups_and_files(spark, tmp_path, int_ids, n_buckets):
    """Sorted by user, files cut in the middle of users, row groups of 37 rows (most users span two),
    an empty file, users only in the run or only in the truth; 40 ranges leave some ranges empty."""
    run, qrels, feats = make_data(int_ids=int_ids)
    run, qrels = sorted_by_user(run), sorted_by_user(qrels)
    run_path = write_parts(run, tmp_path / "run", [len(run) // 3 + 5, 2 * len(run) // 3 - 7], 37, empty_file=True)
    qrels_path = write_parts(qrels, tmp_path / "qrels", [len(qrels) // 2 + 3], 29)
    local = mc.evaluate(run, qrels, ALL_METRICS, item_features=feats)
    ranged, shuffled = evaluate_both(spark, run_path, qrels_path, ALL_METRICS, item_features=feats,
                                     score_ranges=3, n_buckets=n_buckets)
    assert ranged.route == "key ranges"
    assert_same(ranged, local)
    assert_same(shuffled, local)
    assert_same_record(ranged.diagnostics.to_dict(), local.diagnostics.to_dict())
    assert ranged.n_users == local.n_users


@local_only
def test_user_in_two_distant_chunks(spark, tmp_path):
    """One user's rows split between the first and the last row group of the run (the rest sorted):
    the ranges that contain that user read both row groups."""
    run, qrels, _ = make_data(int_ids=True)
    run = sorted_by_user(run)
    users = run["user_id"].unique()
    middle = run["user_id"] == users[len(users) // 2]
    moved = run[middle]
    run = pd.concat([moved.iloc[: len(moved) // 2], run[~middle], moved.iloc[len(moved) // 2:]], ignore_index=True)
    route = route_checked(spark, tmp_path, run, qrels, ["ndcg@5", "map", "recall@10", "auc", "coverage@5"],
                          row_group_size=400, n_buckets=4)
    assert route == "key ranges"


@local_only
def test_rows_in_no_order_are_shuffled(spark, tmp_path):
    """Rows in random order: each of 8 ranges would decode almost every row group, so the engine shuffles."""
    run, qrels, _ = make_data(int_ids=True)
    run = run.sample(frac=1.0, random_state=1).reset_index(drop=True)
    route = route_checked(spark, tmp_path, run, qrels, ["ndcg@5", "map", "precision@3"], row_group_size=50,
                          n_buckets=8, cuts=[len(run) // 2])
    assert route == "shuffle"


@local_only
def test_labels_in_the_run_and_renamed_columns(spark, tmp_path):
    """One table with a label column; columns renamed after reading still map to the files' columns."""
    from metrics_core import spark as mcs

    rng = np.random.default_rng(5)
    n = 3000
    run = pd.DataFrame({"uid": np.sort(rng.integers(0, 200, n)), "item_id": rng.integers(0, 10**6, n)})
    run = run.drop_duplicates(["uid", "item_id"]).reset_index(drop=True)
    run["score"] = np.round(rng.random(len(run)), 2)  # ties within and across users
    run["label"] = (rng.random(len(run)) < run["score"]).astype(np.int32)
    path = write_parts(run, tmp_path / "run", [len(run) // 2 + 1], 64)
    frame = run.rename(columns={"uid": "user_id"})
    metrics = ["auc", "gauc", "logloss", "ndcg@10", "map", "mrr@5"]
    local = mc.evaluate(frame, None, metrics)
    renamed = spark.read.parquet(path).withColumnRenamed("uid", "user_id")
    ev = mcs.evaluate(renamed, None, metrics, n_buckets=5, score_ranges=4)
    assert ev.route == "key ranges"
    assert_same(ev, local)


def test_inputs_that_must_be_shuffled(spark, tmp_path):
    """A filtered DataFrame, a DataFrame built in memory and ties="input" take the shuffle path, same numbers."""
    from metrics_core import spark as mcs

    run, qrels, _ = make_data(int_ids=True)
    run = sorted_by_user(run)
    run_path = write_parts(run, tmp_path / "run", [], 100)
    qrels_path = write_parts(qrels, tmp_path / "qrels", [], 100)
    metrics = ["ndcg@5", "map"]
    read_run, read_qrels = spark.read.parquet(run_path), spark.read.parquet(qrels_path)
    kept = run[run["score"] > 0.2]
    filtered = mcs.evaluate(read_run.filter("score > 0.2"), read_qrels, metrics)
    assert filtered.route == "shuffle"
    assert_same(filtered, mc.evaluate(kept, qrels, metrics))
    in_memory = mcs.evaluate(spark.createDataFrame(run), read_qrels, metrics)
    assert in_memory.route == "shuffle"
    input_order = mcs.evaluate(read_run, read_qrels, metrics, ties="input")
    assert input_order.route == "shuffle"
    assert_same(input_order, mc.evaluate(run, qrels, metrics, ties="input"))


def test_errors_are_the_same_on_both_paths(spark, tmp_path):
    """A duplicate (user, item) pair cut across two files and a null user id give the general path's error."""
    from metrics_core import spark as mcs

    run, qrels, _ = make_data(int_ids=True)
    run = sorted_by_user(run)
    first_user = run[run["user_id"] == run["user_id"].iloc[0]]
    duplicated = pd.concat([first_user.iloc[:1], run], ignore_index=True)
    dup_path = write_parts(duplicated, tmp_path / "dup", [1], 100)
    qrels_path = write_parts(qrels, tmp_path / "qrels", [], 100)
    messages = []
    for read_ranges in (True, False):
        with pytest.raises(mc.MetricsError, match="more than once") as err:
            mcs.evaluate(spark.read.parquet(dup_path), spark.read.parquet(qrels_path), ["ndcg@5"],
                         read_parquet_ranges=read_ranges)
        messages.append(re.sub(r"\(row \d+\)", "(row)", str(err.value)))  # rows are numbered within a group
    assert messages[0] == messages[1]
    with_null = run.astype({"user_id": "Int64"})
    with_null.loc[3, "user_id"] = pd.NA
    null_path = write_parts(with_null, tmp_path / "null", [], 100)
    outcomes = []
    for read_ranges in (True, False):
        try:
            ev = mcs.evaluate(spark.read.parquet(null_path), spark.read.parquet(qrels_path), ["ndcg@5"],
                              read_parquet_ranges=read_ranges)
            outcomes.append((ev.route, ev.summary))
        except mc.MetricsError as exc:
            outcomes.append(("error", str(exc)))
    assert outcomes[0] == outcomes[1]  # a null key never reaches the range reader: both shuffle


def test_bounds_cut_the_key_space_into_disjoint_ranges():
    """Cut points are strictly increasing and every key falls in exactly one range; sorted row groups
    decode each row about once, interleaved ones many times (the planner then shuffles)."""
    from metrics_core.spark._key_ranges import bounds_of, decoded_rows, split_bounds
    from metrics_core.spark._parquet_scan import RowGroupKeys

    sorted_groups = [RowGroupKeys(low=100 * i, high=100 * i + 99, rows=1000) for i in range(10)]
    bounds = split_bounds(sorted_groups, 4)
    assert len(bounds) == 3 and all(a < b for a, b in zip(bounds, bounds[1:]))
    for key in range(-5, 1010, 7):
        inside = [p for p in range(len(bounds) + 1)
                  if (bounds_of(bounds, p)[0] is None or key >= bounds_of(bounds, p)[0])
                  and (bounds_of(bounds, p)[1] is None or key < bounds_of(bounds, p)[1])]
        assert len(inside) == 1
    assert decoded_rows(sorted_groups, bounds) <= 10_000 + 3 * 1000
    interleaved = [RowGroupKeys(low=i, high=990 + i, rows=1000) for i in range(10)]
    assert decoded_rows(interleaved, split_bounds(interleaved, 4)) > 2 * 10_000
    strings = [RowGroupKeys(low=f"u{i:03d}", high=f"u{i:03d}z", rows=10) for i in range(6)]
    assert split_bounds(strings, 3) == ["u002", "u004"]
    assert split_bounds(sorted_groups, 1) == [] and split_bounds([], 5) == []
