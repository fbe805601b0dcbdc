"""Numbers the reader cannot keep, and text that is no text: one line naming the place.

* A whole number written in positional notation that a 64-bit float cannot
  hold exactly (``9007199254740993``) is refused in every format, also when
  the column holds fractional numbers too (JSON and CSV parsers then read the
  column as float64 and would round it silently). The reference is Python's
  own integers: ``int(float(text)) != int(text)``.
* A lone surrogate inside file content (a JSON ``\\ud800`` escape, the bytes
  ``ED A0 80`` of a text file or a Parquet string) is refused naming the line
  or row, never a ``UnicodeError``.
"""

from __future__ import annotations

import io
import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from decimal import Decimal

from metrics_core.errors import MetricsError
from metrics_core.io.reader import read_qrels, read_run

BIG = 2**53 + 1  # the first integer a float64 cannot hold


def python_rounds(written: str) -> bool:
    """The reference: whether float64 changes the whole number ``written`` (digits, optional '.0...')."""
    whole = int(written.strip().split(".")[0])
    return int(float(whole)) != whole


def files(values: list[str], column: str = "score") -> dict[str, tuple[bytes, str]]:
    """One run per text format whose ``column`` holds ``values`` as written (first value on line/row 1)."""
    n = len(values)
    items = [f"i{j}" for j in range(n)]
    rows = list(zip(["u"] * n, items, values))
    other = "relevance" if column == "score" else "score"
    csv = f"user_id,item_id,{column},{other}\n" + "".join(f"{u},{i},{v},1\n" for u, i, v in rows)
    tsv = csv.replace(",", "\t")
    jsonl = "".join(f'{{"user_id": "{u}", "item_id": "{i}", "{column}": {v}, "{other}": 1}}\n' for u, i, v in rows)
    out = {"run.csv": csv.encode(), "run.tsv": tsv.encode(), "run.jsonl": jsonl.encode()}
    if column == "score":
        out["run.txt"] = "".join(f"{u} Q0 {i} {r} {v} tag\n" for r, (u, i, v) in enumerate(rows, 1)).encode()
    return out


def read(data: bytes, name: str, column: str):
    return (read_run if column == "score" else read_qrels)(data, name=name)


def header_lines(name: str) -> int:
    return 1 if name.endswith((".csv", ".tsv")) else 0


@pytest.mark.parametrize("column", ["score", "relevance"])
@pytest.mark.parametrize("written", [str(BIG), f"-{BIG}", f"{BIG}.0", f"{2**63 + 1}", "1" * 25])
def test_a_whole_number_a_float_would_round_is_refused_among_fractions(column, written):
    assert python_rounds(written)
    values = ["0.5", "0.25", written, "3"]
    for name, data in files(values, column).items():
        with pytest.raises(MetricsError) as e:
            read(data, name, column)
        message = str(e.value)
        line = 3 + header_lines(name)
        assert message.startswith(f"{name}: line {line}: {column} column"), message
        assert "cannot hold exactly" in message and written in message and "\n" not in message
        assert f"would be read as {int(float(int(written.split('.')[0]))):d}" in message


@pytest.mark.parametrize("column", ["score", "relevance"])
def test_generated_big_numbers_are_refused_exactly_when_python_says_a_float_rounds_them(column):
    rng = random.Random(42)
    for _ in range(12):
        whole = rng.choice([2**53 + rng.randrange(1, 64), 2**54 + rng.randrange(0, 8) * 2,
                            rng.randrange(2**53, 2**62), 2**60, -(2**53 + 2), 10**18 + rng.randrange(1000)])
        written = str(whole) + rng.choice(["", ".0", ".000"])
        values = ["0.5", written, "-1.5"]
        for name, data in files(values, column).items():
            if python_rounds(written):
                with pytest.raises(MetricsError, match="cannot hold exactly"):
                    read(data, name, column)
            else:  # a whole number the float holds is kept exactly, at any size
                df, _ = read(data, name, column)
                assert [Decimal(v) for v in df[column]] == [Decimal(v) for v in values], (name, written)


@pytest.mark.parametrize("written", ["1e300", "9007199254740993e0", "9.007199254740993e15", "0.1", "1e-300",
                                     "9007199254740992", "18014398509481984", "123456789012345.5"])
def test_exponents_fractions_and_exact_whole_numbers_are_read_as_python_reads_them(written):
    for name, data in files(["0.5", written], "score").items():
        df, _ = read_run(data, name=name)
        assert df["score"].tolist() == [0.5, float(written)], name


def test_integer_and_decimal_columns_of_parquet_and_json_follow_the_same_rule(tmp_path):
    table = pa.table({"user_id": ["u", "u", "u"], "item_id": ["a", "b", "c"],
                      "score": pa.array([1, 2**60, BIG], pa.int64())})
    pq.write_table(table, tmp_path / "int.parquet")
    with pytest.raises(MetricsError, match=r"^int\.parquet: row 3: score column 'score' has the whole number "
                                           r"9007199254740993, which a 64-bit float"):
        read_run(tmp_path / "int.parquet", name="int.parquet")
    pq.write_table(table.slice(0, 2), tmp_path / "exact.parquet")
    assert read_run(tmp_path / "exact.parquet")[0]["score"].tolist() == [1.0, float(2**60)]
    decimals = table.set_column(2, "score", pa.array([Decimal("0.5"), Decimal(2**60), Decimal(BIG)],
                                                    pa.decimal128(25, 1)))
    pq.write_table(decimals, tmp_path / "dec.parquet")
    with pytest.raises(MetricsError, match=r"^dec\.parquet: row 3: .*9007199254740993\.0.*cannot hold exactly"):
        read_run(tmp_path / "dec.parquet", name="dec.parquet")
    only_integers = b'{"user_id": "u", "item_id": "a", "score": 18014398509481984}\n'
    assert read_run(only_integers, name="x.jsonl")[0]["score"].tolist() == [float(2**54)]


# --- lone surrogates inside the content -------------------------------------------------------------

SURROGATE_UTF8 = "\ud800".encode("utf-8", "surrogatepass")  # ED A0 80: no character, not UTF-8


def parquet_bytes(user_ids: pa.Array) -> bytes:
    buf = io.BytesIO()
    pq.write_table(pa.table({"user_id": user_ids, "item_id": ["a", "b", "c"], "score": [0.3, 0.2, 0.1]}), buf)
    return buf.getvalue()


@pytest.mark.parametrize("name, data, where", [
    ("esc.jsonl", b'{"user_id": "u", "item_id": "a", "score": 1}\n{"user_id": "u", "item_id": "b\\ud800", '
                  b'"score": 2}\n', "line 2: column 'item_id', value 'b\\ud800' holds a lone surrogate \\ud800"),
    ("low.jsonl", b'{"user_id": "u\\udfff", "item_id": "a", "score": 1}\n', "line 1: column 'user_id'"),
    ("key.jsonl", b'{"user_id": "u", "item_id": "a", "score": 1, "x\\ud83d": 1}\n', "line 1: the key 'x\\ud83d'"),
    ("mixed.jsonl", b'{"user_id": 1, "item_id": "a", "score": 1}\n{"user_id": "\\udc00", "item_id": "b", '
                    b'"score": 1}\n', "line 2: column 'user_id'"),
    ("raw.csv", b"user_id,item_id,score\nu,a,1\nu,b" + SURROGATE_UTF8 + b",2\n",
     "line 3: not valid UTF-8 (byte 0xed at byte offset 31: an encoded lone surrogate \\ud800"),
    ("raw.txt", b"q Q0 a 1 2 t\nq Q0 b" + SURROGATE_UTF8 + b" 2 1 t\n", "line 2: not valid UTF-8"),
    ("str.parquet", parquet_bytes(pa.array([b"u", b"u" + SURROGATE_UTF8, b"v"], pa.binary()).view(pa.string())),
     "row 2: column 'user_id' holds b'u\\xed\\xa0\\x80', an encoded lone surrogate \\ud800"),
    ("bin.parquet", parquet_bytes(pa.array([b"u", b"v", SURROGATE_UTF8], pa.binary())),
     "row 3: column 'user_id' holds b'\\xed\\xa0\\x80', an encoded lone surrogate"),
])
def test_a_lone_surrogate_in_the_content_is_one_line_naming_file_and_row(name, data, where):
    with pytest.raises(MetricsError) as e:
        read_run(data, name=name)
    message = str(e.value)
    assert message.startswith(f"{name}: {where}"), message
    assert "\n" not in message
    message.encode("utf-8")  # the message itself can be written anywhere


def test_surrogate_pairs_written_as_escapes_are_characters():
    data = b'{"user_id": "\\ud83d\\ude00", "item_id": "a", "score": 1}\n{"user_id": 7, "item_id": "b", "score": 2}\n'
    df, _ = read_run(data, name="pair.jsonl")
    assert df["user_id"].tolist() == ["\U0001F600", "7"] == [json.loads('"\\ud83d\\ude00"'), "7"]


# --- the command line: one ``error:`` line, exit status 2 -------------------------------------------

def test_cli_refuses_a_rounded_score_and_a_lone_surrogate_in_one_line(capsys, tmp_path):
    from pathlib import Path

    from metrics_core.cli import main

    qrels = Path(__file__).resolve().parent / "data" / "formats" / "qrels.csv"
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text('{"user_id": "u1", "item_id": "i01", "score": 0.9}\n'
                     '{"user_id": "u1", "item_id": "i02", "score": 9007199254740993}\n')
    surrogate = tmp_path / "half.jsonl"
    surrogate.write_text('{"user_id": "u1", "item_id": "i01", "score": 0.9}\n'
                         '{"user_id": "u1\\udbff", "item_id": "i02", "score": 0.5}\n')
    for run, fragment in ((mixed, "mixed.jsonl: line 2: score column 'score' has the whole number "
                                  "'9007199254740993', which a 64-bit float"),
                          (surrogate, "half.jsonl: line 2: column 'user_id', value 'u1\\udbff' holds a lone "
                                      "surrogate \\udbff")):
        code = main(["evaluate", "--qrels", str(qrels), "--run", str(run), "--metrics", "ndcg@3"])
        out, err = capsys.readouterr()
        assert code == 2 and out == "", (code, out, err)
        assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
        assert fragment in err, err
