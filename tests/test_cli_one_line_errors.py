"""Inputs that ended in a traceback or a vague message: each is one ``error:`` line naming the file,
the line and what to do (exit status 2). The expected facts (line numbers, the values) are
written out by hand from the files each test writes."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics_core.cli import main

HERE = Path(__file__).resolve().parent
QRELS = HERE / "data" / "formats" / "qrels.csv"
RUN = HERE / "data" / "formats" / "run.csv"


def one_error(capsys, *argv) -> str:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_a_score_beyond_2_53_in_json_lines(capsys, tmp_path):
    run = tmp_path / "big.jsonl"
    run.write_text('{"user_id": "u1", "item_id": "i01", "score": 1}\n'
                   '{"user_id": "u1", "item_id": "i02", "score": 9007199254740993}\n')
    err = one_error(capsys, "evaluate", "--qrels", QRELS, "--run", run, "--metrics", "ndcg@3")
    assert "big.jsonl: line 2:" in err and "9007199254740993" in err and "beyond 2^53" in err


def test_a_relevance_beyond_2_53_in_parquet(capsys, tmp_path):
    qrels = tmp_path / "big.parquet"
    pq.write_table(pa.table({"user_id": ["u1", "u1", "u2"], "item_id": ["i01", "i03", "i09"],
                             "relevance": pa.array([1, 2, 2**54 + 1], pa.int64())}), qrels)
    err = one_error(capsys, "evaluate", "--qrels", qrels, "--run", RUN, "--metrics", "ndcg@3")
    assert "big.parquet" in err and "row 3" in err.lower() and str(2**54 + 1) in err and "beyond 2^53" in err


def test_exactly_2_53_is_still_read(capsys, tmp_path):
    run = tmp_path / "edge.jsonl"
    run.write_text('{"user_id": "u1", "item_id": "i01", "score": 9007199254740992}\n'
                   '{"user_id": "u1", "item_id": "i02", "score": -9007199254740992}\n')
    assert main(["evaluate", "--qrels", str(QRELS), "--run", str(run), "--metrics", "ndcg@3"]) == 0


@pytest.mark.parametrize("value", ["1e309", "-1E+400"])
def test_a_score_beyond_the_largest_float_names_its_line(capsys, tmp_path, value):
    run = tmp_path / "huge.csv"
    run.write_text(f"user_id,item_id,score\nu1,i01,0.5\nu1,i02,0.25\nu1,i03,{value}\n")
    err = one_error(capsys, "evaluate", "--qrels", QRELS, "--run", run, "--metrics", "ndcg@3")
    assert "huge.csv: line 4:" in err and value in err and "beyond the largest 64-bit float" in err
