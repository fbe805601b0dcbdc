"""Hostile and broken inputs through the command line: in the test's process (:mod:`_cli`), and in a
real process (``process=True``) where only a process shows it: a FIFO, a nesting that could exhaust
the stack, output through a pipe before the fast exit.

Every case answers with exit status 2 and exactly one ``error: ...`` line on
stderr (no traceback), or with exit 0 and the right numbers. Inputs are
generated in tmp_path and kept small: limits are lowered with the options
instead of writing gigabytes.
"""

from __future__ import annotations

import _cli
import _deadlines as deadlines
import csv
import gzip
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parents[1]
QRELS = "user_id,item_id,relevance\nu1,a,1\nu2,b,1\n"
RUN = "user_id,item_id,score\nu1,a,0.9\nu1,b,0.5\nu2,b,0.7\nu2,c,0.1\nu3,a,1\n"


def cli(*args, env: dict | None = None, process: bool = False):
    """``metrics-core ARGS...``: in this process, or with ``process`` in a real one."""
    if not process:
        return _cli.run(*args, env=env)
    full_env = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    return subprocess.run([sys.executable, "-m", "metrics_core", *map(str, args)], capture_output=True, text=True,
                          env=full_env, timeout=deadlines.SUBPROCESS, cwd=ROOT)


def assert_refused(p, *fragments: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert p.stdout == ""
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1, p.stderr[-2000:]
    for f in fragments:
        assert f in p.stderr, (f, p.stderr)
    return p.stderr


def json_out(p) -> dict:
    assert p.returncode == 0, p.stderr[-2000:]
    assert "Traceback" not in p.stderr
    return json.loads(p.stdout)["models"]


@pytest.fixture
def qrels(tmp_path) -> Path:
    path = tmp_path / "qrels.csv"
    path.write_text(QRELS)
    return path


def evaluate(qrels, run, *extra, metrics="ndcg@10", env=None, process=False):
    return cli("evaluate", "--qrels", qrels, "--run", run, "--metrics", metrics, *extra, env=env, process=process)


# ------------------------------------------------------------------ size limits
def test_decompression_bomb_stops_at_the_ratio(tmp_path, qrels):
    path = tmp_path / "bomb.csv.gz"
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(b"user_id,item_id,score\n")
        chunk = b"u1,a,0.5\n" * (1 << 20)
        for _ in range(9):  # 81 MiB of text in ~0.4 MB
            f.write(chunk)
    assert_refused(evaluate(qrels, path), "bomb.csv.gz", "max_ratio", "--max-ratio", "METRICS_CORE_MAX_RATIO")


def test_gzip_over_max_bytes(tmp_path, qrels):
    path = tmp_path / "big.csv.gz"
    path.write_bytes(gzip.compress(b"user_id,item_id,score\n" + b"u1,a,0.5\n" * 200_000))
    assert_refused(evaluate(qrels, path, "--max-bytes", "1M"), "decompresses to more than 1 MiB", "--max-bytes")
    assert_refused(evaluate(qrels, path, env={"METRICS_CORE_MAX_BYTES": "1M"}), "METRICS_CORE_MAX_BYTES")


def test_plain_file_over_max_bytes(tmp_path, qrels):
    path = tmp_path / "run.csv"
    path.write_text(RUN)
    assert_refused(evaluate(qrels, path, "--max-bytes", "60"), "run.csv", "max_bytes = 60 bytes")


def test_long_line_stops_at_the_line_limit(tmp_path, qrels):
    """A 2 GB line, scaled down: a 300 KB line against --max-line 64k."""
    path = tmp_path / "run.csv"
    path.write_text("user_id,item_id,score\nu1,a,0.5\nu2," + "b" * 300_000 + ",1\n")
    err = assert_refused(evaluate(qrels, path, "--max-line", "64k"), "line 3 is longer than 64 KiB", "--max-line")
    assert "b" * 81 not in err


def test_rows_limit(tmp_path, qrels):
    path = tmp_path / "run.csv"
    path.write_text(RUN)
    assert_refused(evaluate(qrels, path, "--max-rows", "4"), "5 rows", "max_rows = 4", "--max-rows")


def test_bad_limit_values(tmp_path, qrels):
    path = tmp_path / "run.csv"
    path.write_text(RUN)
    assert_refused(evaluate(qrels, path, "--max-rows", "lots"), "--max-rows", "'lots'")
    assert_refused(evaluate(qrels, path, env={"METRICS_CORE_MAX_LINE": "-1"}), "METRICS_CORE_MAX_LINE")


def test_help_states_the_limits():
    p = cli("evaluate", "--help")
    assert p.returncode == 0
    text = " ".join(p.stdout.split())
    for fragment in ("--max-bytes N", "default 2 GiB", "METRICS_CORE_MAX_BYTES", "--max-ratio N", "default 100",
                     "--max-line N", "default 16 MiB", "--max-rows N", "default 200,000,000",
                     "devices and FIFOs are always refused", "--spreadsheet-safe"):
        assert fragment in text, fragment


# ------------------------------------------------------------------ special files
def test_device_is_refused(qrels):
    assert_refused(evaluate(qrels, "/dev/zero"), "/dev/zero: is a character device")


def test_fifo_is_refused(tmp_path, qrels):
    fifo = tmp_path / "run.csv"
    os.mkfifo(fifo)
    assert_refused(evaluate(qrels, fifo, process=True), "FIFO")  # a process: opening a FIFO may block


def test_symlink_to_device_is_refused(tmp_path, qrels):
    link = tmp_path / "run.csv"
    link.symlink_to("/dev/zero")
    assert_refused(evaluate(qrels, link), "character device")


def test_directory_with_parquet_and_other_files(tmp_path, qrels):
    d = tmp_path / "parts"
    d.mkdir()
    pq.write_table(pa.table({"user_id": ["u1"], "item_id": ["a"], "score": [1.0]}), d / "part-0.parquet")
    (d / "extra.csv").write_text(RUN)
    assert_refused(evaluate(qrels, d), str(d), "extra.csv", "not Parquet")


# ------------------------------------------------------------------ shapes that used to crash
@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_cr_line_ends_read_correctly(tmp_path, qrels, end):
    path = tmp_path / "run.csv"
    path.write_bytes(RUN.replace("\n", end).encode())
    # u1: relevant a at rank 1; u2: relevant b at rank 1
    assert json_out(evaluate(qrels, path, "--json")) == {"run": {"ndcg@10": 1.0}}


def test_header_field_over_128_kb(tmp_path, qrels):
    path = tmp_path / "run.csv"
    path.write_text("user_id,item_id,score," + "h" * (130 * 1024) + "\nu1,a,1,x\nu2,c,1,x\nu2,b,0.5,x\n")
    # u1: 1; u2: relevant b at rank 2 -> 1/log2(3)
    got = json_out(evaluate(qrels, path, "--json"))["run"]["ndcg@10"]
    assert got == pytest.approx((1 + 1 / math.log2(3)) / 2)


@pytest.mark.parametrize("ext,sep", [("csv", ","), ("tsv", "\t")])
def test_unterminated_last_line(tmp_path, qrels, ext, sep):
    path = tmp_path / f"run.{ext}"
    path.write_text(RUN.replace(",", sep).rstrip("\n"))
    truth = tmp_path / f"truth.{ext}"
    truth.write_text((QRELS + "u3,a,1").replace(",", sep))  # u3's row is the unterminated last one
    assert json_out(cli("evaluate", "--qrels", truth, "--run", path, "--metrics", "ndcg@10", "--json")) == \
        {"run": {"ndcg@10": 1.0}}


def test_json_ids_of_2_64_and_above(tmp_path):
    big = 2**64 + 5
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"user_id": big, "item_id": 1, "score": 1.0}) + "\n"
                   + json.dumps({"user_id": 7, "item_id": 2, "score": 0.5}) + "\n")
    truth = tmp_path / "truth.csv"
    truth.write_text(f"user_id,item_id,relevance\n{big},1,1\n{big - 5},1,1\n")
    got = json.loads(cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg@10", "--per-user",
                         tmp_path / "pu.csv", "--json").stdout)
    assert got["models"]["run"]["ndcg@10"] == 0.5
    rows = list(csv.DictReader(open(tmp_path / "pu.csv")))
    assert {r["user_id"]: float(r["ndcg@10"]) for r in rows} == {str(big): 1.0, str(big - 5): 0.0}


def test_json_id_above_2_53_next_to_a_float(tmp_path):
    exact = 2**53 + 1
    run = tmp_path / "run.jsonl"
    run.write_text(json.dumps({"user_id": exact, "item_id": "a", "score": 1}) + "\n"
                   + '{"user_id": 1.0, "item_id": "a", "score": 1}\n')
    truth = tmp_path / "truth.csv"
    truth.write_text(f"user_id,item_id,relevance\n{exact},a,1\n1,a,1\n")
    assert json_out(cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg@10", "--json")) == \
        {"run": {"ndcg@10": 1.0}}


# ------------------------------------------------------------------ deeply nested JSON lines
def nested_line(depth: int, opener: str = "[") -> str:
    """A run row whose extra field nests ``depth - 1`` arrays (or objects): ``depth`` levels with the row."""
    inner = "[" * (depth - 1) + "]" * (depth - 1) if opener == "[" else '{"a":' * (depth - 1) + "1" + "}" * (depth - 1)
    return '{"user_id": "u1", "item_id": "b", "score": 0.5, "extra": ' + inner + "}"


FIRST_ROW = '{"user_id": "u1", "item_id": "a", "score": 0.9}'


@pytest.mark.parametrize("opener", ["[", "{"])
def test_json_line_nesting_20000_levels_is_one_line_not_a_crash(tmp_path, qrels, opener):
    path = tmp_path / "deep.jsonl"
    path.write_text(FIRST_ROW + "\n" + nested_line(20_000, opener) + "\n")
    assert path.stat().st_size > 40_000
    # a process: a parser that recursed into the nesting would end it, not this test run
    err = assert_refused(evaluate(qrels, path, process=True), "deep.jsonl: line 2", "deeper than 100 levels")
    # the byte that opens level 101: the row's text before the field, then 99 openers of the field
    first = nested_line(2, opener).index(opener, 1)  # 0-based offset of the field's first opener (level 2)
    per_level = 1 if opener == "[" else len('{"a":')
    assert f"(column {first + 99 * per_level + 1})" in err


def test_json_nesting_limit_is_exact_and_brackets_inside_strings_do_not_count(tmp_path, qrels):
    from metrics_core.io import read_run
    from metrics_core.io.json_depth import MAX_JSON_DEPTH
    from metrics_core.errors import MetricsError

    at_limit = (FIRST_ROW + "\n" + nested_line(MAX_JSON_DEPTH) + "\n").encode()
    df, _ = read_run(at_limit, name="ok.jsonl")
    assert list(df["item_id"]) == ["a", "b"]
    with pytest.raises(MetricsError, match=r"^over\.jsonl: line 2: JSON nested deeper than 100 levels"):
        read_run((FIRST_ROW + "\n" + nested_line(MAX_JSON_DEPTH + 1) + "\n").encode(), name="over.jsonl")
    # brackets in strings (escaped quotes included) are text, not nesting: the file reads and evaluates
    path = tmp_path / "strings.jsonl"
    text = "[" * 20_000 + '\\"' + "{" * 20_000
    path.write_text(json.dumps({"user_id": "u1", "item_id": "a", "score": 0.9, "note": text}) + "\n"
                    + json.dumps({"user_id": "u2", "item_id": "b", "score": 0.4, "note": "]" * 5}) + "\n")
    assert json_out(evaluate(qrels, path, "--json")) == {"strings": {"ndcg@10": 1.0}}


def test_every_json_parse_path_checks_the_nesting_first():
    from metrics_core.errors import MetricsError
    from metrics_core.io import read_item_features, read_qrels
    from metrics_core.io.jsonl import object_keys, read_jsonl, read_jsonl_exact

    deep = (nested_line(20_000) + "\n").encode()
    for call in (lambda: read_jsonl(deep, "d.jsonl"), lambda: read_jsonl_exact(deep, "d.jsonl"),
                 lambda: object_keys(deep.decode(), "d.jsonl"), lambda: read_item_features(deep, name="d.jsonl"),
                 lambda: read_qrels(deep.replace(b'"score": 0.5', b'"relevance": 1'), name="d.jsonl")):
        with pytest.raises(MetricsError, match=r"^d\.jsonl: line 1: JSON nested deeper than 100 levels"):
            call()
    assert object_keys(FIRST_ROW, "f.jsonl") == ["user_id", "item_id", "score"]


def test_parquet_float_ids_like_1e20(tmp_path, qrels):
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"user_id": [1e20, 2.0], "item_id": ["a", "b"], "score": [1.0, 2.0]}), path)
    assert_refused(evaluate(qrels, path), "run.parquet: row 1", "2^53", "store ids as text or integers")


def test_semicolon_file_names_the_delimiter(tmp_path, qrels):
    path = tmp_path / "run.csv"
    path.write_text(RUN.replace(",", ";"))
    assert_refused(evaluate(qrels, path), "semicolons (';')")


def test_long_first_line_is_not_quoted_whole(tmp_path, qrels):
    path = tmp_path / "notes.txt"
    path.write_text("secret" * 2000 + "\n" + "more\n")
    err = assert_refused(evaluate(qrels, path))
    assert "secret" * 14 not in err  # at most 80 characters of it


# ------------------------------------------------------------------ cutoffs
def test_huge_cutoff_works_on_a_tiny_file(tmp_path, qrels):
    path = tmp_path / "run.csv"
    path.write_text(RUN)
    got = json_out(evaluate(qrels, path, "--json", metrics="ndcg@1000000000,ndcg@1000000000000,p@1000000000000"))
    assert got["run"]["ndcg@1000000000"] == got["run"]["ndcg@1000000000000"] == 1.0
    assert got["run"]["p@1000000000000"] == pytest.approx(1e-12)


@pytest.mark.parametrize("metric,fragment", [("ndcg@10^12", "cannot read metric name"),
                                             (f"ndcg@{2**62 + 1}", "2^62"),
                                             ("ndcg@" + "9" * 5000, "2^62")], ids=["caret", "2^62+1", "5000 digits"])
def test_absurd_cutoffs_are_one_line(tmp_path, qrels, metric, fragment):
    path = tmp_path / "run.csv"
    path.write_text(RUN)
    err = assert_refused(evaluate(qrels, path, metrics=metric), fragment)
    assert len(err) < 400


# ------------------------------------------------------------------ CSV outputs
HOSTILE_RUN = "user_id,item_id,score\n=1+1,a,0.9\n@SUM(A1),b,0.5\n-2,b,0.7\n"
HOSTILE_QRELS = "user_id,item_id,relevance\n=1+1,a,1\n@SUM(A1),b,1\n-2,b,1\n"


@pytest.fixture
def hostile(tmp_path):
    run, truth = tmp_path / "=cmd.csv", tmp_path / "truth.csv"
    run.write_text(HOSTILE_RUN)
    truth.write_text(HOSTILE_QRELS)
    return run, truth


def test_per_user_csv_is_exact_by_default(tmp_path, hostile):
    run, truth = hostile
    out = tmp_path / "pu.csv"
    p = cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg@10", "--per-user", out, "--csv")
    assert p.returncode == 0, p.stderr
    rows = list(csv.reader(open(out)))
    assert sorted(r[1] for r in rows[1:]) == sorted(["=1+1", "@SUM(A1)", "-2"])
    assert {r[0] for r in rows[1:]} == {"=cmd"}
    assert list(csv.reader(io.StringIO(p.stdout)))[1][0] == "=cmd"
    assert "spreadsheet" not in p.stderr


def test_spreadsheet_safe_neutralises_and_says_so(tmp_path, hostile):
    run, truth = hostile
    out = tmp_path / "pu.csv"
    p = cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg@10", "--per-user", out, "--csv",
            "--spreadsheet-safe")
    assert p.returncode == 0, p.stderr
    rows = list(csv.reader(open(out)))
    assert sorted(r[1] for r in rows[1:]) == sorted(["'=1+1", "'@SUM(A1)", "'-2"])
    assert {r[0] for r in rows[1:]} == {"'=cmd"}
    assert all(float(r[2]) >= 0 for r in rows[1:])  # numbers stay numbers
    assert list(csv.reader(io.StringIO(p.stdout)))[1][0] == "'=cmd"
    assert "note: --spreadsheet-safe: 6 cell(s) of" in p.stderr and "apostrophe" in p.stderr


def test_parquet_output_is_always_exact(tmp_path, hostile):
    run, truth = hostile
    out = tmp_path / "pu.parquet"
    p = cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg@10", "--per-user", out,
            "--spreadsheet-safe")
    assert p.returncode == 0, p.stderr
    table = pq.read_table(out)
    assert sorted(table["user_id"].to_pylist()) == sorted(["=1+1", "@SUM(A1)", "-2"])
    assert "Parquet keeps exact values" in p.stderr


def test_compare_csv_spreadsheet_safe(tmp_path, hostile):
    run, truth = hostile
    other = tmp_path / "+b.csv"
    other.write_text(HOSTILE_RUN.replace("0.9", "0.1"))
    args = ["compare", "--qrels", truth, "--run", run, "--run", other, "--metrics", "ndcg@10", "--csv"]
    exact = cli(*args)
    assert exact.returncode == 0, exact.stderr
    assert list(csv.DictReader(io.StringIO(exact.stdout)))[0]["model"] == "+b"
    safe = cli(*args, "--spreadsheet-safe")
    row = list(csv.DictReader(io.StringIO(safe.stdout)))[0]
    assert (row["baseline"], row["model"]) == ("'=cmd", "'+b")
    assert "note: --spreadsheet-safe" in safe.stderr


# ------------------------------------------------------------------ process exit
def test_entry_flushes_and_ends_with_mains_status(monkeypatch, capsys):
    """entry() ends the process with os._exit (no interpreter shutdown) after flushing the output."""
    from metrics_core import cli as cli_module

    ended = []

    def fake_exit(code):
        ended.append((code, capsys.readouterr()))
        raise SystemExit(code)

    monkeypatch.setattr(cli_module.os, "_exit", fake_exit)
    monkeypatch.setattr(cli_module.sys, "argv", ["metrics-core", "evaluate", "--run", "/dev/zero", "--metrics",
                                                 "ndcg"])
    monkeypatch.delitem(sys.modules, "pyspark", raising=False)
    with pytest.raises(SystemExit):
        cli_module.entry()
    code, captured = ended[0]
    assert code == 2 and captured.err.startswith("error: /dev/zero: is a character device")


def test_large_output_is_complete_through_a_pipe(tmp_path):
    """Every byte written before the fast exit reaches the reader."""
    lines = ["user_id,item_id,relevance"] + [f"u{i},a,1" for i in range(3000)]
    truth = tmp_path / "truth.csv"
    truth.write_text("\n".join(lines) + "\n")
    run = tmp_path / "run.csv"
    run.write_text("\n".join(["user_id,item_id,score"] + [f"u{i},a,1" for i in range(3000)]) + "\n")
    p = cli("evaluate", "--qrels", truth, "--run", run, "--metrics", "ndcg@10", "--per-user", tmp_path / "pu.csv",
            "--json", process=True)
    assert json.loads(p.stdout)["models"]["run"]["ndcg@10"] == 1.0
    assert len(list(csv.reader(open(tmp_path / "pu.csv")))) == 3001
