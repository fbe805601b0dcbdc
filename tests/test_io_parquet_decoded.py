"""Parquet's read limit counts decoded bytes: dictionary "bombs" (a few kilobytes that expand
to gigabytes), with and without the Arrow schema in the file, under a dotted column name, inside
nested columns or split over row groups and part files, are refused by the library and the
command line (exit 2, one line) with the process's memory far below the decoded size; files
within the limit read exactly as pyarrow reads them, whichever way they are counted.

References: ``pyarrow.parquet.read_table`` (decoded tables and their ``nbytes``) and the
sizes the files are built with; peak memory from the operating system (``os.wait4``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from _quick_cases import chosen
from metrics_core.errors import MetricsError
from metrics_core.io import ReadLimits, read_item_features, read_run
from metrics_core.io import parquet as P
from metrics_core.io.parquet import read_parquet
from metrics_core.io.parquet_size import decoded_nbytes

ROOT = Path(__file__).resolve().parents[1]
ROWS, WIDTH = 200_000, 10_000  # 3 values of 10,000 bytes, one per row: 2 GB once decoded
EXPAND = P._expand


def _bomb_column(rows: int = ROWS, width: int = WIDTH) -> pa.DictionaryArray:
    values = pa.array(["a" * width, "b" * width, "c" * width])
    return pa.DictionaryArray.from_arrays(pa.array([i % 3 for i in range(rows)], pa.int32()), values)


def _small_dictionary(prefix: str, rows: int = ROWS) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(pa.array([i % 7 for i in range(rows)], pa.int32()),
                                          pa.array([f"{prefix}{k}" for k in range(7)]))


def write_bomb(path: Path, user_column: str = "user_id", store_schema: bool = True, shape: str = "flat",
               row_group_size: int | None = None) -> Path:
    """A run whose user column (named ``user_column``) decodes to about 2 GB; ``shape``: "flat",
    "struct" (the text inside a struct) or "list" (inside a list, two values per row)."""
    users = _bomb_column()
    if shape == "struct":
        users = pa.StructArray.from_arrays([users], names=["name"])
    elif shape == "list":
        users = pa.ListArray.from_arrays(pa.array(range(0, 2 * ROWS + 1, 2), pa.int32()),
                                         _bomb_column(2 * ROWS))
    table = pa.table({user_column: users, "item_id": _small_dictionary("i"), "score": pa.array([0.5] * ROWS)})
    pq.write_table(table, path, store_schema=store_schema, row_group_size=row_group_size)
    assert path.stat().st_size < 200_000  # a small file
    return path


CASES = {
    "with Arrow schema": dict(),
    "without Arrow schema": dict(store_schema=False),
    "dotted name": dict(user_column="user.id"),
    "inside a struct": dict(shape="struct"),
    "inside a list": dict(shape="list"),
    "many row groups": dict(row_group_size=20_000),
}


def _columns(case: dict) -> list[str]:
    return [case.get("user_column", "user_id"), "item_id", "score"]


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_library_refuses_a_bomb(tmp_path, case):
    path = write_bomb(tmp_path / "bomb.parquet", **case)
    with pytest.raises(MetricsError) as e:
        read_parquet(None, path, "bomb.parquet", _columns(case), ReadLimits(max_bytes=100 << 20))
    text = str(e.value)
    assert "\n" not in text
    for fragment in ("bomb.parquet", "once decoded", "max_bytes = 100 MiB", "--max-bytes", "METRICS_CORE_MAX_BYTES"):
        assert fragment in text, (fragment, text)


def test_the_dotted_column_is_the_one_counted(tmp_path):
    """A file with a column "user" and a column "user.id": reading "user" alone never counts
    (or reads) "user.id", reading "user.id" counts it."""
    path = tmp_path / "dots.parquet"
    pq.write_table(pa.table({"user": _small_dictionary("u"), "user.id": _bomb_column()}), path)
    small = read_parquet(None, path, "dots.parquet", ["user"], ReadLimits(max_bytes=100 << 20))[0]
    assert small.column_names == ["user"] and small.equals(pq.read_table(path, columns=["user"]).select(["user"]))
    with pytest.raises(MetricsError, match="once decoded"):
        read_parquet(None, path, "dots.parquet", ["user.id"], ReadLimits(max_bytes=100 << 20))


def test_a_directory_of_parts_counts_every_part(tmp_path):
    d = tmp_path / "run.parquet"
    d.mkdir()
    rows = 1000
    for part in range(4):  # each part decodes to 10 MB: the sum passes 32 MiB
        pq.write_table(pa.table({"user_id": _bomb_column(rows), "item_id": _small_dictionary("i", rows),
                                 "score": pa.array([0.5] * rows)}), d / f"part-{part}.parquet")
    limits = ReadLimits(max_bytes=32 << 20)
    with pytest.raises(MetricsError, match="run.parquet: the columns read take at least .* once decoded"):
        read_parquet(None, d, "run.parquet", ["user_id", "item_id", "score"], limits)
    got = read_parquet(None, d, "run.parquet", ["user_id", "item_id", "score"], ReadLimits(max_bytes=64 << 20))[0]
    assert got.num_rows == 4 * rows


def test_prefix_shared_text_is_counted(tmp_path):
    """DELTA_BYTE_ARRAY stores each value as a prefix of the previous one plus a suffix: 5 KB values
    that differ in their last characters cost a few bytes each."""
    path = tmp_path / "delta.parquet"
    rows = 50_000
    users = pa.array(["x" * 5000 + str(i) for i in range(rows)])
    pq.write_table(pa.table({"user_id": users, "item_id": _small_dictionary("i", rows),
                             "score": pa.array([0.5] * rows)}), path,
                   use_dictionary=["item_id"], column_encoding={"user_id": "DELTA_BYTE_ARRAY"}, compression="zstd")
    assert path.stat().st_size < 100_000
    with pytest.raises(MetricsError, match="once decoded"):
        read_parquet(None, path, "delta.parquet", ["user_id", "item_id", "score"], ReadLimits(max_bytes=20 << 20))


# ---------------------------------------------------------------- within the limit: exact
def _mixed_table(rows: int = 3000) -> pa.Table:
    """Text with one long value among short ones (the footer bound then exceeds a tight limit, so
    the row groups are counted from their dictionaries), nulls, nested columns and numbers."""
    users = [f"u{i % 50}" if i != 17 else "L" * 20_000 for i in range(rows)]
    tags = [[f"t{i % 5}", None if i % 11 == 0 else f"s{i % 3}"] if i % 13 else None for i in range(rows)]
    return pa.table({
        "user_id": pa.array(users, pa.large_string()),
        "item_id": pa.array([f"i{i}" if i % 19 else None for i in range(rows)]),
        "score": pa.array([i / 7 for i in range(rows)]),
        "tags": pa.array(tags, pa.list_(pa.string())),
        "meta": pa.array([{"k": f"k{i % 4}", "n": i} for i in range(rows)]),
        "attrs": pa.array([[("a", f"v{i % 2}")] for i in range(rows)], pa.map_(pa.string(), pa.string())),
    })


@pytest.mark.parametrize("store_schema", [True, False])
def test_counted_reading_gives_what_pyarrow_gives(tmp_path, store_schema, monkeypatch):
    path = tmp_path / "mixed.parquet"
    pq.write_table(_mixed_table(), path, row_group_size=700, store_schema=store_schema)
    columns = ["user_id", "item_id", "score", "tags", "meta", "attrs"]
    expected = pq.read_table(path, columns=columns)
    decoded = expected.nbytes
    expanded = []  # batches counted as dictionaries, then expanded
    monkeypatch.setattr(P, "_expand", lambda piece, target: expanded.append(piece) or EXPAND(piece, target))
    for limit, counted in ((decoded + 200, True), (1 << 31, False)):  # a tight limit counts from dictionaries
        expanded.clear()
        got = read_parquet(None, path, "mixed.parquet", columns, ReadLimits(max_bytes=limit))[0]
        assert bool(expanded) == counted
        assert got.schema.equals(expected.schema, check_metadata=False)
        assert got.to_pylist() == expected.to_pylist()
    with pytest.raises(MetricsError, match="once decoded"):
        read_parquet(None, path, "mixed.parquet", columns, ReadLimits(max_bytes=decoded // 2))


@pytest.mark.parametrize("plain", [pa.string(), pa.large_string(), pa.binary()])
def test_decoded_nbytes_of_a_dictionary_is_the_plain_arrays_size(plain):
    values = pa.array(["", "a", "bbbb", "c" * 300], plain)
    indices = pa.array([3, 0, None, 1, 2, 3, 3, None, 0], pa.int32())
    encoded = pa.DictionaryArray.from_arrays(indices, values)
    assert decoded_nbytes(encoded) == pc.take(values, indices).nbytes
    lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 9], pa.int32()), encoded)
    plain_lists = pa.ListArray.from_arrays(pa.array([0, 2, 2, 9], pa.int32()), pc.take(values, indices))
    assert decoded_nbytes(lists) == plain_lists.nbytes
    struct = pa.StructArray.from_arrays([encoded, pa.array(range(9))], names=["s", "n"])
    plain_struct = pa.StructArray.from_arrays([pc.take(values, indices), pa.array(range(9))], names=["s", "n"])
    assert decoded_nbytes(struct) == plain_struct.nbytes


def test_features_table_with_a_bomb_in_a_tags_column(tmp_path):
    path = tmp_path / "features.parquet"
    rows = 20_000
    pq.write_table(pa.table({"item_id": [f"i{i}" for i in range(rows)],
                             "tags": pa.ListArray.from_arrays(pa.array(range(0, rows + 1), pa.int32()),
                                                              _bomb_column(rows))}), path)
    os.environ["METRICS_CORE_MAX_BYTES"] = "50M"
    try:
        with pytest.raises(MetricsError, match="features.parquet: .*once decoded.*max_bytes = 50 MiB"):
            read_item_features(path)
    finally:
        del os.environ["METRICS_CORE_MAX_BYTES"]


# ---------------------------------------------------------------- the command line
def _cli(*args) -> tuple[int, str, str, int]:
    """Exit status, stdout, stderr and peak resident memory (KiB) of one ``metrics-core`` process."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("METRICS_CORE_MAX_BYTES", None)
    with open(os.devnull, "rb") as stdin, \
            subprocess.Popen([sys.executable, "-m", "metrics_core", *map(str, args)], stdin=stdin,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT) as proc:
        out, err = proc.stdout.read().decode(), proc.stderr.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out, err, usage.ru_maxrss


@pytest.fixture(scope="module")
def baseline_kib(tmp_path_factory) -> int:
    """Peak memory of the command line evaluating a small valid pair (the same imports)."""
    d = tmp_path_factory.mktemp("small")
    pq.write_table(pa.table({"user_id": ["u1", "u1", "u2"], "item_id": ["a", "b", "a"], "score": [0.9, 0.1, 0.5]}),
                   d / "run.parquet")
    (d / "qrels.csv").write_text("user_id,item_id,relevance\nu1,a,1\nu2,a,1\n")
    code, out, err, peak = _cli("evaluate", "--qrels", d / "qrels.csv", "--run", d / "run.parquet",
                                "--metrics", "ndcg@10", "--json")
    assert code == 0, err
    return peak


#: the quick tier's command-line cases (one process each; every case is refused in this process above): the
#: plain file and the text inside a list (the largest once decoded)
QUICK_CLI_CASES = ("with Arrow schema", "inside a list")


@pytest.mark.parametrize("case", [CASES[name] for name in chosen(list(CASES), QUICK_CLI_CASES)],
                         ids=chosen(list(CASES), QUICK_CLI_CASES))
def test_cli_refuses_a_bomb_in_one_line(tmp_path, case, baseline_kib):
    path = write_bomb(tmp_path / "bomb.parquet", **case)
    (tmp_path / "qrels.csv").write_text("user_id,item_id,relevance\nu1,i1,1\n")
    columns = ["--run-columns", f"user_id={case['user_column']}"] if "user_column" in case else []
    code, out, err, peak = _cli("evaluate", "--qrels", tmp_path / "qrels.csv", "--run", path, *columns,
                                "--metrics", "ndcg@10", "--max-bytes", "100M")
    assert code == 2, err[-2000:]
    assert out == "" and "Traceback" not in err
    assert err.startswith("error: ") and err.count("\n") == 1, err[-2000:]
    assert "bomb.parquet" in err and "max_bytes = 100 MiB" in err and "--max-bytes" in err
    # the file decodes to 2 GB (4 GB in the list case); the process grows by less than the limit
    assert (peak - baseline_kib) * 1024 < (100 << 20), (peak, baseline_kib)
