"""The one-pass scan of large texts (newlines, NUL, non-ASCII), the reads that use it, and the
TREC reader's fast path.

References: Python's ``bytes.count`` and a byte-by-byte test for the kernel;
for whole reads, the same input read below the size from which the scan is
used (``bytes.count``/``bytes.find`` and Arrow's UTF-8 validation), which must
give the same frame, the same line numbers and the same error messages; for
TREC files, the general whitespace-splitting path on the same bytes, and a
Python transcription of the token pattern for the byte test that skips it.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from metrics_core.errors import MetricsError
from metrics_core.io import read_table, text_scan
from metrics_core.io.source import load_source
from metrics_core.kernels._jit import PARALLEL, SERIAL, use_variant


def _reference(data: bytes) -> tuple[int, bool]:
    return data.count(b"\n"), all(0 < b < 0x80 for b in data)


@pytest.mark.parametrize("variant", [SERIAL, PARALLEL])
def test_scan_counts_newlines_and_flags_nul_or_non_ascii_like_python(monkeypatch, variant):
    monkeypatch.setattr(text_scan, "LARGE_TEXT_BYTES", 0)
    rng = np.random.default_rng(7)
    alphabet = np.frombuffer(b"ab,1\n\r \t.\x7f", dtype=np.uint8)
    seen = set()
    with use_variant(variant):
        for n in (0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4099):
            for odd in (None, 0x00, 0x80, 0xC3, 0xFF, 0x0A):
                raw = rng.choice(alphabet, n)
                if n and odd is not None:
                    raw[rng.integers(n)] = odd
                data = raw.tobytes()
                for start in range(9):  # every alignment of the first byte
                    part = data[start:]
                    facts = text_scan.scan_text(part)
                    expected = _reference(part)
                    assert (facts.newlines, facts.plain_ascii) == expected, (n, odd, start)
                    seen.add(expected[1])
    assert seen == {True, False}


def test_small_texts_are_not_scanned():
    assert text_scan.scan_text(b"a\nb\n" * 10) is None


def test_scan_counts_every_newline_of_a_text_made_of_newlines(monkeypatch):
    monkeypatch.setattr(text_scan, "LARGE_TEXT_BYTES", 0)
    for n in (8, 255, 256, 257, 10_001):  # every byte of every word matches: no carry between bytes
        assert text_scan.scan_text(b"\n" * n).newlines == n


CSV_CASES = {
    "plain": b"user_id,item_id,score\nu1,a,0.5\nu1,b,0.4\nu2,a,0.3\n",
    "no final newline": b"user_id,item_id,score\nu1,a,0.5\nu2,b,0.4",
    "blank lines inside": b"user_id,item_id,score\nu1,a,0.5\n\n\nu2,b,0.4\n  \nu2,c,0.1\n",
    "blank lines before the header": b"\n\nuser_id,item_id,score\nu1,a,0.5\nu2,b,0.4\n",
    "trailing blank lines": b"user_id,item_id,score\nu1,a,0.5\nu2,b,0.4\n\n\n",
    "crlf": b"user_id,item_id,score\r\nu1,a,0.5\r\nu2,b,0.4\r\n",
    "lone carriage returns": b"user_id,item_id,score\ru1,a,0.5\ru2,b,0.4\r",
    "byte-order mark": b"\xef\xbb\xbfuser_id,item_id,score\nu1,a,0.5\nu2,b,0.4\n",
    "utf-8 ids": "user_id,item_id,score\nu1,été,0.5\nu2,日本,0.4\n".encode(),
    "nul byte": b"user_id,item_id,score\nu1,a,0.5\nu2,b\x00,0.4\n",
    "latin-1 byte": b"user_id,item_id,score\nu1,a,0.5\nu2,\xe9t\xe9,0.4\n",
    "empty id after blank lines": b"user_id,item_id,score\nu1,a,0.5\n\n\nu2,,0.4\n",
    "bad number after blank lines": b"user_id,item_id,score\nu1,a,0.5\n\nu2,b,high\n",
    "repeated pair after blank lines": b"user_id,item_id,score\nu1,a,0.5\n\nu1,a,0.4\n",
}


OTHER_CASES = {
    ("run.trec", "trec run"): b"q1 Q0 d1 1 2.5 sys\nq1 Q0 d2 2 1.5 sys\nq2 Q0 d1 1 0.5 sys\n",
    ("run.trec", "trec run, blank lines"): b"q1 Q0 d1 1 2.5 sys\n\nq1 Q0 d2 2 1.5 sys\n\n\nq2 Q0 d1 1 0.5 sys\n",
    ("run.trec", "trec run, repeated pair"): b"q1 Q0 d1 1 2.5 sys\n\nq1 Q0 d1 2 1.5 sys\n",
    ("run.jsonl", "json lines"): b'{"user_id": "u1", "item_id": "a", "score": 0.5}\n{"user_id": "u2", "item_id": "b", '
                                 b'"score": 0.4}\n',
    ("run.jsonl", "json lines, blank line, empty id"): b'{"user_id": "u1", "item_id": "a", "score": 0.5}\n\n'
                                                       b'{"user_id": "u2", "item_id": "", "score": 0.4}\n',
}


def _read(data: bytes, name: str = "run.csv"):
    try:
        df, mapping = read_table(data, name=name, kind="run")
    except MetricsError as e:
        return str(e)
    rows = np.arange(len(df))
    return df, mapping.lines.numbers(rows).tolist(), mapping.lines.unit


@pytest.mark.parametrize("case", list(CSV_CASES))
def test_reads_through_the_scan_equal_reads_without_it(monkeypatch, case):
    data = CSV_CASES[case]
    plain = _read(data)
    monkeypatch.setattr(text_scan, "LARGE_TEXT_BYTES", 0)
    scanned = _read(data)
    if isinstance(plain, str):
        assert scanned == plain
        return
    pd.testing.assert_frame_equal(scanned[0], plain[0])
    assert scanned[1:] == plain[1:]


@pytest.mark.parametrize("name, case", list(OTHER_CASES))
def test_trec_and_json_lines_through_the_scan_equal_reads_without_it(monkeypatch, name, case):
    data = OTHER_CASES[name, case]
    plain = _read(data, name)
    monkeypatch.setattr(text_scan, "LARGE_TEXT_BYTES", 0)
    scanned = _read(data, name)
    if isinstance(plain, str):
        assert scanned == plain
        return
    pd.testing.assert_frame_equal(scanned[0], plain[0])
    assert scanned[1:] == plain[1:]


def test_the_scan_path_names_the_lines_a_reader_expects(monkeypatch):
    monkeypatch.setattr(text_scan, "LARGE_TEXT_BYTES", 0)
    assert "run.csv: line 5: empty item_id" in _read(CSV_CASES["empty id after blank lines"])
    nul = CSV_CASES["nul byte"].index(b"\x00")
    assert f"NUL byte at byte offset {nul}, line 3" in _read(CSV_CASES["nul byte"])
    assert "line 3: not valid UTF-8 (byte 0xe9" in _read(CSV_CASES["latin-1 byte"])
    _, lines, unit = _read(CSV_CASES["blank lines inside"])
    assert (lines, unit) == ([2, 5, 7], "line")
    assert _read(OTHER_CASES["run.trec", "trec run, blank lines"], "run.trec")[1] == [1, 3, 6]
    assert "line 3" in _read(OTHER_CASES["run.jsonl", "json lines, blank line, empty id"], "run.jsonl")
    assert load_source(CSV_CASES["plain"], name="run.csv").newlines == 4
    assert load_source(CSV_CASES["lone carriage returns"], name="run.csv").newlines is None


# TREC files separated by single spaces or tabs take the reader's fast path: rank, score and relevance
# parsed as numbers by pyarrow, token checks by a byte test before any regular expression. Reference:
# the general path (split on whitespace, numbers converted from text) for the same bytes.
TREC_CASES = {
    "numbers in every form": b"q1 Q0 d1 007 1e3 sys\nq1 Q0 d2 2 +2.5 sys\nq1 Q0 d3 3 -0 sys\nq2 Q0 d1 1 .5 sys\n",
    "tabs": b"q1\tQ0\td1\t1\t2.5\tsys\nq2\tQ0\td2\t1\t1.5\tsys\n",
    "windows line ends": b"q1 Q0 d1 1 2.5 sys\r\nq2 Q0 d2 1 1.5 sys\r\n",
    "two spaces": b"q1 Q0 d1 1  2.5 sys\nq2 Q0 d2 1 1.5 sys\n",
    "tab inside a space-separated field": b"q1 Q0 d1\tx 1 2.5 sys\nq2 Q0 d2 1 1.5 sys\n",
    "non-breaking space after a score": "q1 Q0 d1 1 2.5\u00a0 sys\nq2 Q0 d2 1 1.5 sys\n".encode(),
    "NaN score": b"q1 Q0 d1 1 NaN sys\nq2 Q0 d2 1 1.5 sys\n",
    "infinite score": b"q1 Q0 d1 1 inf sys\nq2 Q0 d2 1 1.5 sys\n",
    "text rank": b"q1 Q0 d1 first 2.5 sys\nq2 Q0 d2 1 1.5 sys\n",
    "non-ascii ids": "q1 Q0 été 1 2.5 sys\nq2 Q0 日本 1 1.5 sys\n".encode(),
    "vertical tab in a tag": b"q1 Q0 d1 1 2.5 s\x0bys\nq2 Q0 d2 1 1.5 sys\n",
}
QRELS_CASES = {
    "grades": b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 -1\n",
    "decimal grades": b"q1 0 d1 0.5\nq2 0 d1 1.0\n",
    "text grade": b"q1 0 d1 high\nq2 0 d1 1\n",
}


def _trec_read(data: bytes, kind: str):
    try:
        df, mapping = read_table(data, name=f"x.{kind}", kind=kind)
    except MetricsError as e:
        return str(e)
    return df, mapping.lines.numbers(np.arange(len(df))).tolist()


@pytest.mark.parametrize("kind, case", [("run", c) for c in TREC_CASES] + [("qrels", c) for c in QRELS_CASES])
def test_trec_fast_path_reads_like_the_general_path(monkeypatch, kind, case):
    from metrics_core.io import trec

    data = (TREC_CASES if kind == "run" else QRELS_CASES)[case]
    fast = _trec_read(data, kind)
    monkeypatch.setattr(trec, "_single_delimiter", lambda *a, **k: None)
    general = _trec_read(data, kind)
    if isinstance(general, str):
        assert fast == general
        return
    pd.testing.assert_frame_equal(fast[0], general[0])
    assert fast[1] == general[1]


_RE2_SPACE = "[\t\n\f\r ]"  # RE2's \s, which the token check's pattern uses
_NOT_ONE_TOKEN = re.compile(f"^{_RE2_SPACE}*$|[^\t\n\f\r ]{_RE2_SPACE}+[^\t\n\f\r ]")


def test_plain_tokens_never_passes_a_value_the_token_pattern_refuses():
    from metrics_core.io.trec import _plain_tokens

    rng = np.random.default_rng(3)
    alphabet = ["a", "7", "-", "é", "\u00a0", " ", "\t", "\r", "\x0b", "\x01", "~"]
    passed = refused = 0
    for _ in range(400):
        values = ["".join(rng.choice(alphabet, rng.integers(0, 5))) for _ in range(rng.integers(1, 6))]
        chunks = pa.chunked_array([pa.array(values[:2], pa.string()), pa.array(values[2:], pa.string())])
        if _plain_tokens(chunks):
            passed += 1
            assert not any(_NOT_ONE_TOKEN.search(v) for v in values), values
        else:
            refused += 1
    assert passed > 20 and refused > 20
