"""Unusual file shapes read correctly: CR-only line ends, huge header fields, an unterminated
last line, Parquet directories with stray files; plus the failed-read memo.

References: Python's csv module / str.splitlines on the same text, typed rows.
"""

from __future__ import annotations

import csv
import io

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics_core.errors import MetricsError
from metrics_core.io import read_qrels, read_run
from metrics_core.io import reader as reader_module
from metrics_core.io.failures import FailedReads

ROWS = [("u1", "a", 0.5), ("u1", "b", 0.25), ("u2", "a", 1.0), ("u3", "c", 2.0)]


def _text(delimiter: str, end: str, last_newline: bool) -> str:
    lines = [delimiter.join(["user_id", "item_id", "score"])]
    lines += [delimiter.join([u, i, repr(s)]) for u, i, s in ROWS]
    return end.join(lines) + (end if last_newline else "")


def _reference(text: str, delimiter: str) -> list[tuple]:
    """Rows by Python's csv module over str.splitlines (which knows \\r, \\n and \\r\\n)."""
    rows = list(csv.reader(text.splitlines(), delimiter=delimiter))[1:]
    return [(u, i, float(s)) for u, i, s in rows]


def _rows(df) -> list[tuple]:
    return list(zip(df["user_id"], df["item_id"], df["score"]))


@pytest.mark.parametrize("ext,delimiter", [("csv", ","), ("tsv", "\t"), ("txt", "\t"), ("txt", " ")])
@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("last_newline", [True, False])
def test_line_ends_and_unterminated_last_line(ext, delimiter, end, last_newline):
    text = _text(delimiter, end, last_newline)
    df, mapping = read_run(text.encode(), name=f"r.{ext}")
    assert _rows(df) == _reference(text, delimiter) == ROWS
    assert mapping.where(3) == "line 5"


@pytest.mark.parametrize("name", ["r.csv", "r.tsv"])
def test_unterminated_last_line_from_a_file(tmp_path, name):
    """The last row has no newline: a reader that drops it would return 3 rows."""
    delimiter = "\t" if name.endswith("tsv") else ","
    path = tmp_path / name
    path.write_bytes(_text(delimiter, "\n", last_newline=False).encode())
    assert not path.read_bytes().endswith(b"\n")
    assert _rows(read_run(path)[0]) == ROWS


def test_cr_only_trec_and_jsonl():
    trec = "q1 Q0 d1 1 2.5 tag\rq1 Q0 d2 2 1.5 tag\rq2 Q0 d1 1 0.5 tag"
    df, _ = read_run(trec.encode(), name="r.trec")
    assert _rows(df) == [("q1", "d1", 2.5), ("q1", "d2", 1.5), ("q2", "d1", 0.5)]
    qrels = '{"user_id": "q1", "item_id": "d1", "relevance": 1}\r{"user_id": "q2", "item_id": "d9", "relevance": 2}\r'
    q, _ = read_qrels(qrels.encode(), name="q.jsonl")
    assert list(zip(q["user_id"], q["item_id"], q["relevance"])) == [("q1", "d1", 1.0), ("q2", "d9", 2.0)]


def test_header_field_larger_than_the_csv_module_limit():
    big = "x" * (200 * 1024)
    text = f"user_id,item_id,score,{big}\nu1,a,1,z\nu2,b,2,w\n"
    df, _ = read_run(text.encode(), name="r.csv")
    assert _rows(df) == [("u1", "a", 1.0), ("u2", "b", 2.0)]


def test_broken_header_quotes_are_one_line():
    with pytest.raises(MetricsError) as e:
        read_run(b'user_id,"item_id\r,x",score\nu,a,1\n', name="r.csv")
    assert "\n" not in str(e.value) and "r.csv" in str(e.value)


# ------------------------------------------------------------ Parquet directories
def _part(path, rows):
    pq.write_table(pa.table({"user_id": [r[0] for r in rows], "item_id": [r[1] for r in rows],
                             "score": [r[2] for r in rows]}), path)


def test_parquet_directory_with_spark_markers_reads(tmp_path):
    d = tmp_path / "run"
    d.mkdir()
    _part(d / "part-0000.parquet", ROWS[:2])
    _part(d / "part-0001.snappy.parquet", ROWS[2:])
    (d / "_SUCCESS").write_bytes(b"")
    (d / ".part-0000.parquet.crc").write_bytes(b"crc")
    assert sorted(_rows(read_run(d)[0])) == sorted(ROWS)


def test_parquet_directory_with_other_files_names_them(tmp_path):
    d = tmp_path / "mixed"
    d.mkdir()
    _part(d / "part-0.parquet", ROWS)
    (d / "notes.csv").write_text("a,b\n1,2\n")
    (d / "README").write_text("hello")
    with pytest.raises(MetricsError) as e:
        read_run(d)
    msg = str(e.value)
    assert "\n" not in msg
    assert str(d) in msg and "notes.csv" in msg and "README" in msg and "2 of its files are not Parquet" in msg


# ------------------------------------------------------------ failed reads remembered
def test_failed_read_is_remembered_for_its_content(monkeypatch):
    calls = []
    real = reader_module.read_table

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(reader_module, "read_table", counting)
    memo = FailedReads(max_entries=2)
    bad = b"user_id,item_id,score\nu1,a,oops\n"
    for _ in range(3):
        with pytest.raises(MetricsError, match="non-numeric value 'oops'"):
            memo.read(bad, name="r.csv", kind="run")
    assert len(calls) == 1
    good = b"user_id,item_id,score\nu1,a,1\n"
    assert len(memo.read(good, name="r.csv", kind="run")[0]) == 1
    memo.read(good, name="r.csv", kind="run")
    assert len(calls) == 3  # successes are not remembered
    for i in range(3):  # bounded: the oldest failure is dropped
        with pytest.raises(MetricsError):
            memo.read(bad + b"u%d,b,x\n" % i, name="r.csv", kind="run")
    assert len(memo) == 2


def test_failed_read_memo_depends_on_settings():
    memo = FailedReads()
    data = b"user_id,item_id,score\nu1,a,1\nu2,b,2\n"
    from metrics_core.io import ReadLimits

    with pytest.raises(MetricsError, match="max_rows"):
        memo.read(data, name="r.csv", kind="run", limits=ReadLimits(max_rows=1))
    assert len(memo.read(data, name="r.csv", kind="run")[0]) == 2


def test_reference_rows_match_pandas():
    """The hand-written rows are what pandas reads from the same CSV (guards the reference itself)."""
    text = _text(",", "\n", True)
    df = pd.read_csv(io.StringIO(text), dtype={"user_id": str, "item_id": str})
    assert list(zip(df["user_id"], df["item_id"], df["score"])) == ROWS


# ------------------------------------------------------------ native sources for Arrow's readers
def test_arrow_readers_get_native_buffers_not_python_files(monkeypatch):
    """Arrow's I/O threads must never call back into Python to read: when a read fails early, a
    read still queued on a Python file object takes the GIL while the interpreter shuts down and
    the process aborts ("terminate called without an active exception", exit 134)."""
    import pyarrow.csv as pcsv
    import pyarrow.json as pj

    seen = []

    def wrap(real):
        def reader(source, *a, **k):
            seen.append(type(source).__name__)
            assert isinstance(source, pa.NativeFile), type(source)
            return real(source, *a, **k)
        return reader

    monkeypatch.setattr(pcsv, "read_csv", wrap(pcsv.read_csv))
    monkeypatch.setattr(pj, "read_json", wrap(pj.read_json))
    read_run(b"user_id,item_id,score\nu1,a,1\n", name="r.csv")
    read_run(b"q1 Q0 d1 1 2.5 tag\n", name="r.trec")
    read_run(b'{"user_id": "u", "item_id": "a", "score": 1}\n', name="r.jsonl")
    with pytest.raises(MetricsError):
        read_run(b'user_id,item_id,score\nu1,"a,1\n', name="r.csv")
    assert len(seen) >= 4


@pytest.mark.parametrize("ext,sep", [("csv", ","), ("tsv", "\t")])
def test_line_longer_than_arrows_block_reads(ext, sep):
    """A 1.5 MiB id (under the line limit) is longer than pyarrow's 1 MiB parse block."""
    long_id = "i" * (3 << 19)
    text = sep.join(["user_id", "item_id", "score"]) + "\n" + sep.join(["u1", long_id, "1"]) + "\n" + \
        "".join(sep.join([f"u{i}", f"i{i}", "0.5"]) + "\n" for i in range(2, 60_000))
    df, mapping = read_run(text.encode(), name=f"r.{ext}")
    assert len(df) == 60_000 - 1
    assert df["item_id"].iat[0] == long_id and df["user_id"].iat[-1] == "u59999"
    assert mapping.where(len(df) - 1) == f"line {len(df) + 1}"
