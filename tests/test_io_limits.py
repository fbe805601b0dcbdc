"""Read limits: bytes, gzip ratio, line length, rows; special files; what a limit error says.

Inputs are generated in tmp_path and kept small by lowering the limits
instead of writing gigabytes. References: sizes and line lengths computed
with plain Python (``len``, ``bytes.split``), never by the code under test.
"""

from __future__ import annotations

import gzip
import io
import os
import random

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from metrics_core.errors import MetricsError
from metrics_core.io import ReadLimits, read_qrels, read_run, read_table, set_limits
from metrics_core.io import limits as L
from metrics_core.io import source as S

HEADER = b"user_id,item_id,score\n"


def rows_csv(n: int) -> bytes:
    return HEADER + b"".join(b"u%d,i%d,%d\n" % (i % 7, i, i % 5) for i in range(n))


def assert_one_line(err: MetricsError, *fragments: str) -> None:
    text = str(err)
    assert "\n" not in text
    for f in fragments:
        assert f in text, (f, text)


# ---------------------------------------------------------------- settings
def test_defaults_are_the_documented_ones():
    d = ReadLimits()
    assert (d.max_bytes, d.max_ratio, d.max_line_bytes, d.max_rows) == (2 << 30, 100, 16 << 20, 200_000_000)


def test_describe_states_every_limit():
    text = ReadLimits(max_bytes=3 << 20, max_ratio=7, max_line_bytes=2048, max_rows=1234).describe()
    assert text == ("Files are read up to 3 MiB (after decompression; a gzip file may expand at most 7 times "
                    "beyond 64 MiB), with lines up to 2 KiB and at most 1,234 rows.")


def test_environment_overrides_defaults():
    env = {"METRICS_CORE_MAX_BYTES": "3M", "METRICS_CORE_MAX_RATIO": "7", "METRICS_CORE_MAX_LINE": "1k",
           "METRICS_CORE_MAX_ROWS": "12"}
    assert ReadLimits.from_env(env) == ReadLimits(3 * 1024 * 1024, 7, 1024, 12)


@pytest.mark.parametrize("text,expected", [("10", 10), ("1k", 1024), ("2M", 2 << 20), ("1.5GiB", 3 << 29),
                                           ("4 G", 4 << 30)])
def test_parse_size(text, expected):
    assert L.parse_size(text) == expected


@pytest.mark.parametrize("text", ["", "x", "1 parsec", "-5", "0"])
def test_parse_size_refuses(text):
    with pytest.raises(MetricsError):
        L.parse_size(text, "--max-bytes")


def test_bad_environment_value_is_one_line(monkeypatch):
    monkeypatch.setenv("METRICS_CORE_MAX_ROWS", "many")
    with pytest.raises(MetricsError) as e:
        read_run(rows_csv(3), name="r.csv")
    assert_one_line(e.value, "METRICS_CORE_MAX_ROWS", "'many'")


def test_set_limits_applies_until_reset():
    set_limits(ReadLimits(max_rows=2))
    try:
        with pytest.raises(MetricsError):
            read_run(rows_csv(3), name="r.csv")
    finally:
        set_limits(None)
    assert len(read_run(rows_csv(3), name="r.csv")[0]) == 3


# ---------------------------------------------------------------- bytes and gzip
def test_plain_file_over_max_bytes_is_refused_from_its_size(tmp_path):
    path = tmp_path / "r.csv"
    data = rows_csv(200)
    path.write_bytes(data)
    with pytest.raises(MetricsError) as e:
        read_run(path, limits=ReadLimits(max_bytes=len(data) - 1))
    assert_one_line(e.value, "r.csv", "max_bytes", "--max-bytes", "METRICS_CORE_MAX_BYTES")
    assert len(read_run(path, limits=ReadLimits(max_bytes=len(data)))[0]) == 200


def test_buffer_over_max_bytes_is_refused():
    data = rows_csv(50)
    with pytest.raises(MetricsError, match="max_bytes"):
        read_run(io.BytesIO(data), name="up.csv", limits=ReadLimits(max_bytes=100))


def test_gzip_over_max_bytes_stops_while_decompressing(tmp_path, monkeypatch):
    """20 MiB of rows in a small gzip with max_bytes 256 KiB: at most one chunk past the limit is read."""
    data = HEADER + b"u1,i1,0.5\n" * (2 << 20)
    path = tmp_path / "r.csv.gz"
    path.write_bytes(gzip.compress(data))
    read_sizes = []
    real = gzip.GzipFile.read

    def counting(self, size=-1):
        out = real(self, size)
        read_sizes.append(len(out))
        return out

    monkeypatch.setattr(gzip.GzipFile, "read", counting)
    limit = 256 * 1024
    with pytest.raises(MetricsError) as e:
        read_run(path, limits=ReadLimits(max_bytes=limit))
    assert_one_line(e.value, "r.csv.gz", "decompresses to more than 256 KiB", "max_bytes")
    assert sum(read_sizes) <= limit + 8 * 1024 * 1024
    assert sum(read_sizes) < len(data)


def test_gzip_ratio_stops_a_bomb(tmp_path):
    """80 MiB of one repeated row compress ~1000x: the ratio limit (100) stops it at the 64 MiB floor."""
    row = b"u1,i1,0.5\n"
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", compresslevel=1) as f:
        f.write(HEADER)
        chunk = row * (1 << 20)
        for _ in range(8):
            f.write(chunk)
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(buf.getvalue())
    assert len(buf.getvalue()) * 100 < L.RATIO_FREE_BYTES  # the floor is the limit that applies
    with pytest.raises(MetricsError) as e:
        read_run(path)
    assert_one_line(e.value, "bomb.csv.gz", "more than 100 times", "max_ratio", "--max-ratio")


def test_small_repetitive_gzip_reads_whatever_its_ratio():
    data = HEADER + b"u1,i1,0.5\n" + b"\n" * 100_000  # ratio far above 100, but tiny
    packed = gzip.compress(data)
    assert len(data) / len(packed) > 100
    df, _ = read_run(packed, name="r.csv.gz")
    assert df.values.tolist() == [["u1", "i1", 0.5]]


# ---------------------------------------------------------------- line length
def _longest_line(data: bytes) -> int:
    return max(len(x) for x in data.split(b"\n"))


@pytest.mark.parametrize("seed", range(40))
def test_line_length_check_matches_plain_python(seed):
    rng = random.Random(seed)
    lines = [b"x" * rng.choice([0, 1, 5, 30, 99, 100, 101, 250]) for _ in range(rng.randint(1, 60))]
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b"")
    limit = rng.choice([1, 5, 50, 99, 100, 101, 200, 300])
    longest = _longest_line(data)
    if longest > limit:
        first_bad = next(i for i, x in enumerate(data.split(b"\n"), 1) if len(x) > limit)
        with pytest.raises(MetricsError, match=rf"line {first_bad} is longer than"):
            L.check_line_lengths(data, limit, "f", ReadLimits())
    else:
        L.check_line_lengths(data, limit, "f", ReadLimits())


def test_long_line_is_refused_before_parsing():
    data = HEADER + b"u1,i1,1\n" + b"u2,i" + b"9" * 5000 + b",1\n" + b"u3,i3,1\n"
    with pytest.raises(MetricsError) as e:
        read_run(data, name="r.csv", limits=ReadLimits(max_line_bytes=4096))
    assert_one_line(e.value, "r.csv: line 3 is longer than 4 KiB", "max_line_bytes", "--max-line")
    assert "9" * 100 not in str(e.value)
    assert len(read_run(data, name="r.csv", limits=ReadLimits(max_line_bytes=5010))[0]) == 3


# ---------------------------------------------------------------- rows
def test_text_rows_over_the_limit():
    with pytest.raises(MetricsError) as e:
        read_run(rows_csv(11), name="r.csv", limits=ReadLimits(max_rows=10))
    assert_one_line(e.value, "11 rows", "max_rows = 10", "--max-rows", "METRICS_CORE_MAX_ROWS")
    assert len(read_run(rows_csv(10), name="r.csv", limits=ReadLimits(max_rows=10))[0]) == 10


def _parquet(tmp_path, n: int, name="r.parquet"):
    path = tmp_path / name
    pq.write_table(pa.table({"user_id": [f"u{i % 3}" for i in range(n)], "item_id": [f"i{i}" for i in range(n)],
                             "score": [float(i) for i in range(n)]}), path)
    return path


def test_parquet_rows_checked_from_the_footer(tmp_path, monkeypatch):
    path = _parquet(tmp_path, 20)
    from metrics_core.io import parquet as P

    monkeypatch.setattr(P, "_read_file", lambda *a, **k: pytest.fail("data read before the row check"))
    with pytest.raises(MetricsError) as e:
        read_run(path, limits=ReadLimits(max_rows=19))
    assert_one_line(e.value, "20 rows", "max_rows")


def test_parquet_decoded_bytes_over_the_limit(tmp_path):
    path = _parquet(tmp_path, 5000)
    decoded = pq.read_table(path).nbytes  # reference: the columns as pyarrow decodes them
    with pytest.raises(MetricsError) as e:
        read_run(path, limits=ReadLimits(max_bytes=decoded - 1, max_ratio=10**6))
    assert_one_line(e.value, "r.parquet", "once decoded", "max_bytes", "--max-bytes", "METRICS_CORE_MAX_BYTES")
    assert len(read_run(path, limits=ReadLimits(max_bytes=2 * decoded))[0]) == 5000


def test_parquet_decoded_bytes_exactly_at_the_limit(tmp_path):
    path = tmp_path / "r.parquet"
    n = 6000  # few distinct ids: their dictionaries are small, every row a short index
    pq.write_table(pa.table({"user_id": [f"user{i // 200}" for i in range(n)],
                             "item_id": [f"item{i % 200:04d}" for i in range(n)],
                             "relevance": pa.array([i % 3 for i in range(n)], pa.int8())}), path)
    decoded = pq.read_table(path).nbytes
    assert len(read_qrels(path, limits=ReadLimits(max_bytes=decoded))[0]) == n
    with pytest.raises(MetricsError, match="once decoded"):
        read_qrels(path, limits=ReadLimits(max_bytes=decoded - 1))


# ---------------------------------------------------------------- special files
def test_fifo_is_refused_without_reading(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)  # opening it for reading would block forever
    with pytest.raises(MetricsError) as e:
        read_run(fifo)
    assert_one_line(e.value, "pipe.csv", "FIFO", "not a regular file")


def test_character_device_is_refused():
    with pytest.raises(MetricsError) as e:
        read_run("/dev/zero")
    assert_one_line(e.value, "/dev/zero", "character device")


def test_symlink_to_a_device_is_refused(tmp_path):
    link = tmp_path / "run.csv"
    link.symlink_to("/dev/zero")
    with pytest.raises(MetricsError, match="character device"):
        read_run(link)


# ---------------------------------------------------------------- quoting
def test_messages_quote_at_most_80_characters_of_a_line():
    secret = "s" * 5000
    with pytest.raises(MetricsError) as e:
        read_run((secret + "\n1\n").encode(), name="f.txt")
    assert "s" * 81 not in str(e.value)
    with pytest.raises(MetricsError) as e:
        read_run(f"a,b,{secret}\n1,2,3\n".encode(), name="f.csv")
    assert "s" * 81 not in str(e.value)


def test_many_columns_are_listed_in_part():
    header = ",".join(f"c{i}" for i in range(500))
    with pytest.raises(MetricsError) as e:
        read_run((header + "\n" + ",".join("1" * 500) + "\n").encode(), name="wide.csv")
    assert "and 480 more" in str(e.value) and "c499" not in str(e.value)


def test_semicolon_file_error_names_the_delimiter():
    with pytest.raises(MetricsError) as e:
        read_run(b"user_id;item_id;score\nu1;a;1\n", name="r.csv")
    assert_one_line(e.value, "semicolons (';')", "sep=';'")


def test_read_table_still_reads_within_limits(tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes(rows_csv(30))
    df, _ = read_table(path, kind="run", limits=ReadLimits(max_bytes=10_000, max_rows=30, max_line_bytes=30))
    expected = pd.read_csv(io.BytesIO(rows_csv(30)), dtype=str)
    assert df["item_id"].tolist() == expected["item_id"].tolist()
    assert df["score"].tolist() == expected["score"].astype(float).tolist()


def test_source_reads_at_most_max_bytes_plus_one(tmp_path, monkeypatch):
    """A file that grows after its size was checked is still cut at the limit."""
    path = tmp_path / "r.csv"
    path.write_bytes(rows_csv(10))
    real_stat = type(path).stat

    def small_stat(self, *a, **k):
        st = real_stat(self, *a, **k)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 1,
                               st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(type(path), "stat", small_stat)
    with pytest.raises(MetricsError, match="holds more than 64 bytes"):
        S.load_source(path, limits=ReadLimits(max_bytes=64))
