"""The readers' fast paths give what the general paths give.

* Text ids that need no trimming are kept as read (one pass over their Arrow
  buffers decides); reference: Arrow's own trim + cast of the same column and
  Python's ``str.strip`` on the literal ids written into the files.
* CSV number columns parsed as float64 by pyarrow's reader; reference: the
  same file read with every column as text and converted by ``convert.numbers``.
* A Parquet file given by its path is read by pyarrow from the file;
  reference: the same bytes handed over as a buffer.
* ``metrics-core evaluate`` leaves a run's repeated pairs to ``mc.prepare``;
  reference: ``read_table``'s own duplicate error for the same file.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

import metrics_core as mc
from metrics_core.cli import main as cli_main
from metrics_core.errors import MetricsError
from metrics_core.io import convert, read_qrels, read_run, read_table
from metrics_core.io.delimited import read_delimited
from metrics_core.io.lines import ROWS
from metrics_core.kernels.input_checks import first_untrimmed
from metrics_core.kernels.strings import arrow_buffers

METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100"]

# ids as written into the files; what each must read as is str.strip() of it (Arrow trims the same
# whitespace characters as Python for these), and nothing else: "12.0" stays "12.0", "007" stays "007"
EDGE_IDS = ["007", "0", "00", "1234567890123456789", "9223372036854775808", "18446744073709551617",
            "-5", "1e3", "12.0", "x", "é", "日本", "\u00e9t\u00e9", "a b", " padded", "trail ", "\tTab",
            "nbsp\u00a0", "\u3000ideo", "z" * 300, "mixed007", "7"]


def _trimmed(values: list[str]) -> list[str]:
    return pc.utf8_trim_whitespace(pa.array(values)).to_pylist()


def _reference_ids(values: list[str]) -> list[str]:
    return _trimmed(values)


@pytest.mark.parametrize("values", [
    ["a", "b", "007"],
    ["a", " b", "c"],
    ["a", "b", "c\u00a0"],
    ["é", "a", "b"],
    ["a", "", "b"],
    ["!", "~", "a~!"],
    ["a\x1f", "b"],
    EDGE_IDS,
])
def test_first_untrimmed_flags_every_string_arrow_would_change_or_refuse(values):
    off, data = arrow_buffers(pa.array(values, pa.large_string()))
    first = first_untrimmed(off, data)
    trimmed = _trimmed(values)
    changed = [i for i, (a, b) in enumerate(zip(values, trimmed)) if a != b or not b]
    if changed:
        assert 0 <= first <= changed[0]
    ascii_edges = all(v and 0x21 <= ord(v[0]) <= 0x7E and 0x21 <= ord(v[-1]) <= 0x7E for v in values)
    assert (first == -1) == ascii_edges


@pytest.mark.parametrize("chunks", [1, 3])
@pytest.mark.parametrize("values", [EDGE_IDS, [v.strip() for v in EDGE_IDS], ["u1", "u2", "u10", "007"]])
def test_ids_equal_arrow_trim_and_cast_whatever_the_chunking(values, chunks):
    parts = [values[i::chunks] for i in range(chunks)]
    col = pa.chunked_array([pa.array(p, pa.large_string()) for p in parts])
    expected = _reference_ids([v for p in parts for v in p])
    got = convert.ids(col, "user_id", "user_id", "t", ROWS)
    assert got.to_pylist() == expected


def test_empty_id_is_still_refused_with_its_row():
    col = pa.chunked_array([pa.array(["a", "b"], pa.large_string()), pa.array(["c", ""], pa.large_string())])
    with pytest.raises(MetricsError, match=r"t: row 4: empty user_id in column 'user_id'; 1 row\(s\)"):
        convert.ids(col, "user_id", "user_id", "t", ROWS)


def _pair(ids: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run of two users over ``ids`` and ground truth judging every third id (relevance 1-3)."""
    users, items, scores = [], [], []
    for u in ("u1", "0042"):
        for k, item in enumerate(ids):
            users.append(u)
            items.append(item)
            scores.append(float(len(ids) - k) + (0.5 if u == "u1" else 0.25))
    run = pd.DataFrame({"user_id": users, "item_id": items, "score": scores})
    truth = run.iloc[::3][["user_id", "item_id"]].assign(relevance=[1 + k % 3 for k in range(len(run.iloc[::3]))])
    return run, truth.reset_index(drop=True)


def _write(frame: pd.DataFrame, path, fmt: str) -> None:
    table = pa.Table.from_pandas(frame.astype({"user_id": object, "item_id": object}), preserve_index=False)
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=7)  # several chunks per column
    else:
        pcsv.write_csv(table, path)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_files_with_edge_case_ids_evaluate_like_the_stripped_frames(tmp_path, fmt):
    raw = EDGE_IDS
    run, truth = _pair(raw)
    _write(run, tmp_path / f"run.{fmt}", fmt)
    _write(truth, tmp_path / f"qrels.{fmt}", fmt)
    got_run, _ = read_run(tmp_path / f"run.{fmt}")
    got_truth, _ = read_qrels(tmp_path / f"qrels.{fmt}")
    stripped = {v: v.strip() for v in raw}
    assert got_run["item_id"].tolist() == [stripped[v] for v in run["item_id"]]
    assert got_run["user_id"].tolist() == run["user_id"].tolist()
    assert got_run["score"].tolist() == run["score"].tolist()
    assert got_truth["relevance"].tolist() == truth["relevance"].astype(float).tolist()
    ref_run = run.assign(item_id=run["item_id"].map(stripped).astype(object), user_id=run["user_id"].astype(object))
    ref_truth = truth.assign(item_id=truth["item_id"].map(stripped).astype(object),
                             user_id=truth["user_id"].astype(object))
    expected = mc.evaluate(ref_run, ref_truth, metrics=METRICS).summary
    assert mc.evaluate(got_run, got_truth, metrics=METRICS).summary == expected


CSV_NUMBERS = ["0.5", " 1.5 ", "+1", "1.", ".5", "1e3", "-0", "00012", "1e-400", "4.9e-324"]


def test_csv_numbers_parsed_by_the_reader_equal_the_text_conversion():
    body = "user_id,item_id,score\n" + "".join(f"u,i{k},{v}\n" for k, v in enumerate(CSV_NUMBERS))
    fast, _ = read_delimited(body.encode(), "t.csv", ",", numbers=("score",))
    text, _ = read_delimited(body.encode(), "t.csv", ",")
    assert fast["score"].type == pa.float64() and text["score"].type == pa.string()
    got = convert.numbers(fast["score"], "score", "score", "t.csv", ROWS)
    want = convert.numbers(text["score"], "score", "score", "t.csv", ROWS)
    assert got.tolist() == want.tolist() == [float(v) for v in CSV_NUMBERS]
    assert np.signbit(got).tolist() == np.signbit(want).tolist()


@pytest.mark.parametrize("bad", ["NA", "nan", "", "inf", "\u00a01", "1\u00a0", "abc", "N/A", "1e400"])
def test_csv_bad_or_odd_numbers_read_as_before(tmp_path, bad):
    body = "user_id,item_id,score\nu,a,0.5\nu,b,{}\nu,c,0.25\n".format(bad)
    path = tmp_path / "r.csv"
    path.write_bytes(body.encode())
    text, lines = read_delimited(body.encode(), str(path), ",")
    try:
        expected = convert.numbers(text["score"], "score", "score", str(path), lines).tolist()
    except MetricsError as e:
        with pytest.raises(MetricsError) as got:
            read_run(path)
        assert str(got.value) == str(e)
    else:
        df, _ = read_run(path)
        assert df["score"].tolist() == expected


def test_parquet_path_reads_like_parquet_bytes(tmp_path):
    run, _ = _pair(["007", "a", "9223372036854775808"])
    path = tmp_path / "run.parquet"
    _write(run, path, "parquet")
    from_path, m1 = read_run(path)
    from_bytes, m2 = read_run(path.read_bytes(), name=str(path))
    pd.testing.assert_frame_equal(from_path, from_bytes)
    assert (m1.format, m1.where(3)) == (m2.format, m2.where(3)) == ("Parquet", "row 4")


def _duplicate_run(tmp_path) -> str:
    path = tmp_path / "dup.csv"
    path.write_text("user_id,item_id,score\nu1,a,0.9\nu1,b,0.8\nu2,a,0.7\nu1,a,0.1\n")
    (tmp_path / "qrels.csv").write_text("user_id,item_id,relevance\nu1,a,1\nu2,a,1\n")
    return str(path)


@pytest.mark.parametrize("metrics", ["ndcg@10", "ndcg@10,logloss"])
def test_cli_reports_a_repeated_pair_as_the_reader_does(tmp_path, capsys, metrics):
    path = _duplicate_run(tmp_path)
    with pytest.raises(MetricsError) as reader_error:
        read_table(path, kind="run")
    assert "line 5: duplicate (user_id, item_id) = ('u1', 'a'), first seen on line 2" in str(reader_error.value)
    code = cli_main(["evaluate", "--run", path, "--qrels", str(tmp_path / "qrels.csv"), "--metrics", metrics])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [f"error: {reader_error.value}"]


def test_reader_skips_only_the_run_pair_check_when_asked(tmp_path):
    path = _duplicate_run(tmp_path)
    df, _ = read_table(path, kind="run", check_run_pairs=False)
    assert len(df) == 4
    with pytest.raises(MetricsError, match="more than once"):
        mc.prepare(df, pd.DataFrame({"user_id": ["u1"], "item_id": ["a"], "relevance": [1.0]}))
    truth = tmp_path / "t.csv"
    truth.write_text("user_id,item_id,relevance\nu1,a,1\nu1,a,2\n")
    with pytest.raises(MetricsError, match="conflicting relevance"):
        read_table(truth, kind="qrels", check_run_pairs=False)
