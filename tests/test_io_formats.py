"""The same small data in every supported format reads to the same tidy frame.

Reference: the rows written by tests/data/make_fixtures.py (RUN, QRELS),
typed by hand here, independent of the readers.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from metrics_core.io import read_qrels, read_run, read_table

FORMATS = Path(__file__).resolve().parent / "data" / "formats"

RUN = [
    ("u1", "i01", 0.9), ("u1", "i02", 0.8), ("u1", "i03", 0.7), ("u1", "i04", 0.35),
    ("u2", "i02", 0.95), ("u2", "0042", 0.6), ("u2", "i05", 0.5),
    ("u3", "i01", 0.2), ("u3", "i06", 0.1),
    ("007", "i03", 0.55), ("007", "i04", 0.45), ("007", "i05", 0.25),
]
QRELS = [
    ("u1", "i01", 2.0), ("u1", "i03", 1.0), ("u1", "i05", 1.0),
    ("u2", "0042", 3.0), ("u2", "i06", 1.0), ("u2", "i02", 0.0),
    ("u3", "i06", 1.0),
    ("007", "i04", 2.0), ("007", "i01", 1.0),
]

RUN_FILES = ["run.csv", "run.tsv", "run.parquet", "run.jsonl", "run.trec", "run.txt", "run.csv.gz",
             "run.jsonl.gz", "run_bom.csv", "run_crlf.csv", "run_aliased.csv", "run_ws.txt", "run_labels.jsonl"]
QRELS_FILES = ["qrels.csv", "qrels.tsv", "qrels.parquet", "qrels.jsonl", "qrels.qrels", "qrels.tsv.gz",
               "qrels_aliased.csv", "qrels_bom_crlf.csv"]


def _rows(df: pd.DataFrame, value: str) -> list[tuple]:
    return list(zip(df["user_id"].tolist(), df["item_id"].tolist(), df[value].tolist()))


@pytest.mark.parametrize("name", RUN_FILES)
def test_every_run_format_reads_the_same_rows(name):
    df, mapping = read_run(FORMATS / name)
    assert _rows(df, "score") == RUN
    assert df["score"].dtype == np.float64
    assert all(isinstance(v, str) for v in df["user_id"]) and all(isinstance(v, str) for v in df["item_id"])
    assert mapping.n_rows == 12


@pytest.mark.parametrize("name", QRELS_FILES)
def test_every_qrels_format_reads_the_same_rows(name):
    df, _ = read_qrels(FORMATS / name)
    assert list(df.columns) == ["user_id", "item_id", "relevance"]
    assert _rows(df, "relevance") == QRELS


def test_ids_stay_exact_strings():
    df, _ = read_run(FORMATS / "run.csv")
    assert "007" in set(df["user_id"]) and "0042" in set(df["item_id"])


def test_aliases_are_reported_in_the_mapping():
    _, m = read_run(FORMATS / "run_aliased.csv")
    assert (m.user_id, m.item_id, m.score) == ("qid", "docno", "Prediction")
    assert "user_id <- 'qid'" in m.describe() and "score <- 'Prediction'" in m.describe()
    _, q = read_qrels(FORMATS / "qrels_aliased.csv")
    assert (q.user_id, q.item_id, q.relevance) == ("uid", "iid", "label")


def test_rank_without_score_gives_minus_rank():
    df, m = read_run(FORMATS / "run_rank.csv")
    expected_rank = [1, 2, 3, 4, 1, 2, 3, 1, 2, 1, 2, 3]
    assert df["rank"].tolist() == expected_rank
    assert df["score"].tolist() == [-r for r in expected_rank]
    assert m.score_from_rank and m.rank == "rank" and m.score is None
    assert "-'rank'" in m.describe()


def test_trec_run_keeps_rank_and_locates_lines_after_a_blank_line():
    df, m = read_run(FORMATS / "run.trec")
    assert df["rank"].tolist() == [1, 2, 3, 4, 1, 2, 3, 1, 2, 1, 2, 3]
    # run.trec has a blank line after line 2
    assert [m.where(i) for i in (0, 1, 2, 3)] == ["line 1", "line 2", "line 4", "line 5"]
    assert m.format == "TREC run"


def test_csv_lines_count_the_header():
    _, m = read_run(FORMATS / "run.csv")
    assert m.where(0) == "line 2" and m.where(11) == "line 13"
    _, p = read_run(FORMATS / "run.parquet")
    assert p.where(0) == "row 1"


def test_negative_relevance_is_accepted():
    df, _ = read_qrels(FORMATS / "qrels_negative.qrels")
    assert df["relevance"].tolist()[-1] == -1.0 and len(df) == 10


def test_labels_inside_the_run():
    df, m = read_table(FORMATS / "run_labels.jsonl", kind="auto")
    rel = {(u, i): r for u, i, r in QRELS}
    assert df["relevance"].tolist() == [rel.get((u, i), 0.0) for u, i, _ in RUN]
    assert m.relevance == "label"


@pytest.mark.parametrize("name", ["run.csv", "run.parquet", "run.csv.gz", "run.trec", "run.jsonl"])
def test_buffers_read_like_paths(name):
    data = (FORMATS / name).read_bytes()
    a, _ = read_run(FORMATS / name)
    b, mb = read_run(io.BytesIO(data), name=name)
    c, _ = read_run(data, name=name)
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)
    assert mb.source == name


def test_buffer_without_a_name_is_sniffed():
    for name in ("run.tsv", "run.jsonl", "run.trec", "run.parquet", "run.csv.gz"):
        df, _ = read_run((FORMATS / name).read_bytes())
        assert _rows(df, "score") == RUN, name


def test_explicit_mapping():
    data = b"customer,sku,p,clicked\nc1,s1,0.5,1\nc1,s2,0.25,0\n"
    df, m = read_table(data, name="x.csv", columns={"user_id": "customer", "item": "sku", "score": "p",
                                                    "relevance": "clicked"})
    assert _rows(df, "score") == [("c1", "s1", 0.5), ("c1", "s2", 0.25)]
    assert df["relevance"].tolist() == [1.0, 0.0]
    assert set(m.explicit) == {"user_id", "item_id", "score", "relevance"}


def test_identical_qrels_repeats_are_dropped():
    df, m = read_qrels(b"user_id,item_id,relevance\nq,a,1\nq,a,1\nq,b,0\n", name="q.csv")
    assert _rows(df, "relevance") == [("q", "a", 1.0), ("q", "b", 0.0)]
    assert m.where(1) == "line 4"


def test_parquet_integer_ids_become_strings(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"user_id": [1, 2], "item_id": [10.0, 20.0], "score": [0.5, 0.25]}), tmp_path / "r.parquet")
    df, _ = read_run(tmp_path / "r.parquet")
    assert _rows(df, "score") == [("1", "10", 0.5), ("2", "20", 0.25)]


def test_parquet_directory_from_spark(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    d = tmp_path / "out.parquet"
    d.mkdir()
    pq.write_table(pa.table({"user_id": ["a"], "item_id": ["x"], "score": [1.0]}), d / "part-0.parquet")
    pq.write_table(pa.table({"user_id": ["b"], "item_id": ["y"], "score": [2.0]}), d / "part-1.parquet")
    df, _ = read_run(d)
    assert sorted(_rows(df, "score")) == [("a", "x", 1.0), ("b", "y", 2.0)]


def test_item_features_tags_and_numeric(tmp_path):
    from metrics_core.io import read_item_features

    (tmp_path / "tags.csv").write_text("item,tags\n i01 ,a|b\ni02,b\ni01,zzz\n")
    df, m = read_item_features(tmp_path / "tags.csv")
    assert df.to_dict("list") == {"item_id": ["i01", "i02"], "tags": ["a|b", "b"]}  # first row of a repeat kept
    assert m.item_id == "item"
    (tmp_path / "num.tsv").write_text("item_id\tf1\tf2\n007\t1\t0.5\n")
    df, _ = read_item_features(tmp_path / "num.tsv")
    assert df.to_dict("list") == {"item_id": ["007"], "f1": [1.0], "f2": [0.5]}


def test_item_features_bad_value(tmp_path):
    from metrics_core.errors import MetricsError
    from metrics_core.io import read_item_features

    (tmp_path / "f.csv").write_text("item_id,f1,f2\ni01,1,0\ni02,0,1\ni03,x,1\n")
    with pytest.raises(MetricsError, match=r"f.csv: line 4: feature column 'f1' has non-numeric value 'x'"):
        read_item_features(tmp_path / "f.csv")
