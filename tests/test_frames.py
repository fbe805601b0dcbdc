"""DataFrames of any kind (metrics_core.frames): polars, pyarrow and Arrow PyCapsule tables give
exactly the pandas path's results, without copying the columns Arrow lets pandas share."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import metrics_core as mc
from metrics_core.frames import arrow_to_pandas, as_pandas, per_user_frame

pl = pytest.importorskip("polars", reason="pip install -r requirements/dev.txt")

METRICS = ["ndcg@10", "map@5", "mrr@10", "recall@10", "auc", "gauc", "coverage@10", "novelty@5", "ils@5",
           "personalization@5", "arp@5"]


class Capsule:
    """A table known only through the Arrow PyCapsule stream interface (as DuckDB or Ibis expose)."""

    def __init__(self, table: pa.Table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


def _data(string_ids: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    users, items = 60, 40
    rows = [(u, int(i), float(round(rng.random(), 2))) for u in range(users)
            for i in rng.choice(items, 12, replace=False)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = run.sample(frac=0.35, random_state=seed)[["user_id", "item_id"]].reset_index(drop=True)
    qrels["relevance"] = rng.integers(0, 3, len(qrels))
    if string_ids:
        run["user_id"], qrels["user_id"] = "u" + run["user_id"].astype(str), "u" + qrels["user_id"].astype(str)
        run["item_id"], qrels["item_id"] = "i" + run["item_id"].astype(str), "i" + qrels["item_id"].astype(str)
    item_ids = run["item_id"].drop_duplicates().reset_index(drop=True)
    features = pd.DataFrame({"item_id": item_ids, "f1": rng.random(len(item_ids)), "f2": rng.random(len(item_ids))})
    interactions = run.sample(frac=0.5, random_state=seed + 1)[["user_id", "item_id"]].reset_index(drop=True)
    return run, qrels, features, interactions


CONVERTERS = {
    "polars": pl.from_pandas,
    "pyarrow": lambda df: pa.Table.from_pandas(df, preserve_index=False),
    "record batch": lambda df: pa.RecordBatch.from_pandas(df, preserve_index=False),
    "capsule": lambda df: Capsule(pa.Table.from_pandas(df, preserve_index=False)),
    "string view": lambda df: pa.Table.from_pandas(df, preserve_index=False).cast(pa.schema(
        [pa.field(f.name, pa.string_view() if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                  else f.type) for f in pa.Table.from_pandas(df, preserve_index=False).schema])),
}


def _same(got: mc.Evaluation, want: mc.Evaluation):
    assert got.summary == want.summary  # the same numbers bit for bit, not approximately
    pd.testing.assert_frame_equal(got.per_user, want.per_user, check_index_type=False)
    assert list(got.per_user.index.astype(str)) == list(want.per_user.index.astype(str))
    assert got.diagnostics == want.diagnostics


@pytest.mark.parametrize("kind", list(CONVERTERS))
@pytest.mark.parametrize("string_ids", [True, False])
def test_any_frame_evaluates_as_pandas(kind, string_ids):
    run, qrels, features, interactions = _data(string_ids)
    want = mc.evaluate(run, qrels, METRICS, item_features=features, interactions=interactions)
    to = CONVERTERS[kind]
    got = mc.evaluate(to(run), to(qrels), METRICS, item_features=to(features), interactions=to(interactions))
    _same(got, want)


@pytest.mark.parametrize("kind", ["polars", "capsule"])
def test_prepare_once_from_any_frame(kind):
    run, qrels, _, _ = _data(True, seed=3)
    to = CONVERTERS[kind]
    ranked = mc.prepare(to(run), to(qrels))
    _same(mc.evaluate(ranked, metrics=["ndcg@10", "map@100"]), mc.evaluate(run, qrels, ["ndcg@10", "map@100"]))


def test_one_table_with_labels_and_explain():
    run, qrels, _, _ = _data(True, seed=5)
    joined = run.merge(qrels, on=["user_id", "item_id"], how="left").fillna({"relevance": 0})
    _same(mc.evaluate(pl.from_pandas(joined), metrics=["ndcg@10", "auc"]),
          mc.evaluate(joined, metrics=["ndcg@10", "auc"]))
    got = mc.explain(pl.from_pandas(run), pl.from_pandas(qrels), "ndcg@10", presets=["trec_eval", "rectools"])
    want = mc.explain(run, qrels, "ndcg@10", presets=["trec_eval", "rectools"])
    pd.testing.assert_frame_equal(got.values, want.values)


def test_polars_categorical_ids():
    run, qrels, _, _ = _data(True, seed=7)
    cat_run = pl.from_pandas(run).with_columns(pl.col("user_id").cast(pl.Categorical),
                                               pl.col("item_id").cast(pl.Categorical))
    _same(mc.evaluate(cat_run, pl.from_pandas(qrels), ["ndcg@10"]), mc.evaluate(run, qrels, ["ndcg@10"]))


def test_columns_are_shared_not_copied():
    n = 1000
    table = pa.table({"user_id": pa.array([f"u{i // 10}" for i in range(n)], pa.large_string()),
                      "item_id": pa.array(np.arange(n, dtype=np.int64)),
                      "score": pa.array(np.linspace(1, 0, n))})
    frame = arrow_to_pandas(table)
    for column in ("item_id", "score"):
        arrow_values = np.frombuffer(table[column].chunk(0).buffers()[1], dtype=frame[column].dtype)
        assert np.shares_memory(frame[column].to_numpy(), arrow_values)
    text = frame["user_id"].array.__arrow_array__().chunk(0)
    assert text.buffers()[2].address == table["user_id"].chunk(0).buffers()[2].address
    assert list(frame.columns) == ["user_id", "item_id", "score"]


def test_stored_pandas_index_is_not_applied():
    run, qrels, _, _ = _data(True)
    table = pa.Table.from_pandas(run.set_index("user_id"))  # the index kept as a column and in metadata
    frame = as_pandas(table, "run")
    assert "user_id" in frame.columns and isinstance(frame.index, pd.RangeIndex)


def test_per_user_frame_from_polars():
    ev = mc.evaluate(*_data(True)[:2], ["ndcg@10"])
    table = pl.from_pandas(ev.per_user.reset_index())
    pd.testing.assert_frame_equal(per_user_frame(table, "per-user"), ev.per_user, check_index_type=False)


def test_bad_frames_say_what_and_where():
    run, qrels, _, _ = _data(True)
    nulls = pl.from_pandas(run).with_columns(
        pl.when(pl.int_range(pl.len()) == 4).then(None).otherwise(pl.col("score")).alias("score"))
    with pytest.raises(mc.MetricsError, match=r"column 'score' has 1 .* first at row 5"):
        mc.evaluate(nulls, pl.from_pandas(qrels))
    no_id = pl.from_pandas(run).with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(None).otherwise(pl.col("item_id")).alias("item_id"))
    with pytest.raises(mc.MetricsError, match=r"item_id: 1 empty id\(s\), first at row 3"):
        mc.evaluate(no_id, qrels)
    with pytest.raises(mc.MetricsError, match=r"^run: could not be read as an Arrow table \(LazyFrame: .*nope"):
        mc.evaluate(pl.from_pandas(run).lazy().select("user_id", "nope"), qrels)
    with pytest.raises(mc.MetricsError, match="run is missing column"):
        mc.evaluate(pl.from_pandas(run).drop("score"), qrels)
    with pytest.raises(mc.MetricsError, match=r"must be a DataFrame \(pandas or polars\), a polars LazyFrame, a pyarrow Table"):
        mc.evaluate([1, 2, 3], qrels)
