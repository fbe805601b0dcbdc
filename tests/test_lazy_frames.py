"""Lazy tables (a polars LazyFrame over Parquet, pyarrow datasets and scanners, record batch
readers, DuckDB relations, Arrow PyCapsule streams) evaluate to the numbers of the same rows as a
pandas DataFrame, batch by batch; the functions that take a table take every kind."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from metrics_core import frames

pl = pytest.importorskip("polars", reason="pip install -r requirements/dev.txt")
duckdb = pytest.importorskip("duckdb", reason="pip install -r requirements/dev.txt")

METRICS = ["ndcg@10", "map@10", "recall@5", "mrr", "auc"]


def _data(seed: int = 0):
    """Ties, short lists, run-only and qrels-only users, ids "12" (odd users) and "12.0" (even users)."""
    rng = np.random.default_rng(seed)
    rows = []
    for u in range(300):
        for i in rng.choice(50, int(rng.integers(1, 15)), replace=False):
            item = ("12" if u % 2 else "12.0") if i == 0 else f"i{i}"
            rows.append((f"u{u}", item, float(rng.integers(0, 6))))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = run.sample(frac=0.3, random_state=seed)[["user_id", "item_id"]].assign(relevance=1)
    qrels = pd.concat([qrels[~qrels["user_id"].isin(["u1", "u2"])],
                       pd.DataFrame({"user_id": ["only_qrels"], "item_id": ["12"], "relevance": [1]})],
                      ignore_index=True)
    return run, qrels


@pytest.fixture(scope="module")
def parquet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lazy")
    run, qrels = _data()
    pq.write_table(pa.Table.from_pandas(run, preserve_index=False), folder / "run.parquet", row_group_size=700)
    pq.write_table(pa.Table.from_pandas(qrels, preserve_index=False), folder / "qrels.parquet")
    return folder, run, qrels


def _kinds(path):
    yield "polars LazyFrame", pl.scan_parquet(path)
    yield "polars LazyFrame with a query", pl.scan_parquet(path).filter(pl.col("score") >= 0)
    yield "pyarrow Dataset", ds.dataset(path)
    yield "pyarrow Scanner", ds.dataset(path).scanner()
    parquet_file = pq.ParquetFile(path)
    yield "RecordBatchReader", pa.RecordBatchReader.from_batches(parquet_file.schema_arrow,
                                                                 parquet_file.iter_batches(batch_size=500))
    yield "DuckDB relation", duckdb.read_parquet(str(path))
    yield "DuckDB query", duckdb.sql(f"select * from read_parquet('{path}') where score >= 0")


def test_every_lazy_kind_gives_the_pandas_numbers(parquet):
    folder, run, qrels = parquet
    want = mc.evaluate(run, qrels, METRICS)
    for name, lazy in _kinds(folder / "run.parquet"):
        got = mc.evaluate(lazy, pl.scan_parquet(folder / "qrels.parquet"), METRICS)
        assert got.summary == pytest.approx(want.summary, rel=1e-12), name
        pd.testing.assert_frame_equal(got.per_user.sort_index(), want.per_user.sort_index(), check_exact=False,
                                      rtol=1e-12, obj=name)
        assert got.n_users == want.n_users, name


def test_batches_are_read_once_and_kept_as_they_are(parquet):
    folder, run, _ = parquet
    table = frames.as_arrow(ds.dataset(folder / "run.parquet"), "run")
    assert table.num_rows == len(run) and table.column("user_id").num_chunks > 1  # batches, not one copy
    assert table.column("item_id").to_pylist() == run["item_id"].tolist()  # "12" and "12.0" kept as written
    lazy = frames.as_pandas(pl.scan_parquet(folder / "run.parquet"), "run")
    pd.testing.assert_frame_equal(lazy.astype({"user_id": object, "item_id": object}),
                                  run.astype({"user_id": object, "item_id": object}))


def test_a_failing_lazy_query_is_one_line(parquet):
    folder, run, qrels = parquet
    with pytest.raises(mc.MetricsError) as info:
        mc.evaluate(pl.scan_parquet(folder / "run.parquet").select("user_id", "no_such_column"), qrels)
    assert str(info.value).startswith("run: could not be read as an Arrow table (LazyFrame: ")
    assert "\n" not in str(info.value)
    with pytest.raises(mc.MetricsError) as info:
        mc.evaluate(pl.scan_parquet(folder / "missing.parquet"), qrels)
    assert "\n" not in str(info.value) and "missing.parquet" in str(info.value)


def test_the_lazy_frames_benchmark_gives_equal_numbers_on_both_paths(tmp_path):
    """benchmarks/lazy_frames.py at 4,000 rows: the pandas path and the LazyFrame path, each in its
    own process, give the same numbers (the benchmark measures their memory; nothing is timed here)."""
    from benchmarks import lazy_frames

    results = lazy_frames.measure(4_000, tmp_path)
    assert [r["path"] for r in results] == list(lazy_frames.PATHS)
    assert results[0]["summary"] == results[1]["summary"]
    assert all(r["peak"] >= r["rss_before"] > 0 for r in results)
