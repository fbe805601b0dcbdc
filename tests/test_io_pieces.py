"""A large CSV or TSV is parsed in pieces cut at newlines, each piece's bytes reported as the stage
"parsing NAME": the table equals the file as Python's csv module reads it (blank and whitespace-only
lines skipped), whatever the piece size, with CRLF endings, quotes, ids "12" and "12.0", a last line
without a newline; a bad row is named by its line as in one parse."""

from __future__ import annotations

import contextlib
import csv
import io

import numpy as np
import pytest

from metrics_core import progress
from metrics_core.errors import MetricsError
from metrics_core.io import delimited, read_table


def _text(n: int, *, crlf: bool, blanks: bool, tabs: bool = False, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    sep, nl = ("\t" if tabs else ","), ("\r\n" if crlf else "\n")
    lines = [sep.join(("user_id", "item_id", "score"))]
    for i in range(n):
        user = ["12", "12.0", f"u{i % 37}", '"u,7"' if not tabs else "u7"][i % 4]
        lines.append(sep.join((user, f"i{i}", f"{rng.random():.6f}")))
        if blanks and i % 11 == 0:
            lines.append("   ")
        if blanks and i % 17 == 0:
            lines.append("")
    return ("\n" + nl.join(lines) + (nl if n % 2 else "")).encode()


def _by_csv_module(text: bytes, tabs: bool) -> list[tuple[str, str, float]]:
    rows = [r for r in csv.reader(io.StringIO(text.decode(), newline=""), delimiter="\t" if tabs else ",")
            if r and any(c.strip() for c in r)]
    return [(u, i, float(s)) for u, i, s in rows[1:]]


class _Recorder:
    def __init__(self):
        self.stages = []

    @contextlib.contextmanager
    def stage(self, text, total=None, unit="it"):
        record = [text, total, unit, []]
        self.stages.append(record)

        class Count:
            def update(self, n=1):
                record[3].append(n)
        yield Count()

    def say(self, text):
        pass


@pytest.mark.parametrize("crlf,blanks,tabs", [(False, False, False), (True, True, False), (False, True, True)])
@pytest.mark.parametrize("piece", [1, 97, 4096])
def test_pieces_give_the_table_the_csv_module_reads(monkeypatch, crlf, blanks, tabs, piece):
    monkeypatch.setattr(delimited, "PIECE_BYTES", piece)
    text = _text(1500, crlf=crlf, blanks=blanks, tabs=tabs)
    recorder = _Recorder()
    name = "run.tsv" if tabs else "run.csv"
    with progress.active(recorder):
        df, mapping = read_table(text, name=name, kind="run", check_run_pairs=False)
    assert list(zip(df["user_id"], df["item_id"], df["score"])) == _by_csv_module(text, tabs)
    assert {"12", "12.0"} <= set(df["user_id"])  # two ids, as written
    parsing = [s for s in recorder.stages if s[0] == f"parsing {name}"]
    assert len(parsing) == 1
    _, total, unit, updates = parsing[0]
    assert unit == "B" and total == len(text) - 1 and sum(updates) == total  # after the blank first line
    assert len(updates) >= min(total // piece, 10) and all(u > 0 for u in updates)
    # the rows' line numbers are those of the file (the error of a later check names them)
    assert mapping.lines.numbers(np.array([0])).tolist() == [3]


def test_a_row_with_a_field_too_many_is_named_by_its_line_in_pieces_as_in_one_parse(monkeypatch):
    text = _text(401, crlf=False, blanks=False) + b"u1,i1,0.5,extra\nu2,i2,0.1\n"
    messages = []
    for piece in (1 << 30, 256):
        monkeypatch.setattr(delimited, "PIECE_BYTES", piece)
        with pytest.raises(MetricsError) as info:
            read_table(text, name="run.csv", kind="run")
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("run.csv: line 404: expected 3 fields (as in the header) but found 4")


def test_a_value_that_is_not_a_number_is_named_in_pieces(monkeypatch):
    monkeypatch.setattr(delimited, "PIECE_BYTES", 256)
    text = _text(401, crlf=False, blanks=False) + b"u1,i1,NA\n"
    with pytest.raises(MetricsError, match="line 404") as info:
        read_table(text, name="run.csv", kind="run")
    assert "\n" not in str(info.value)


def test_piece_bounds_cut_after_a_newline_and_cover_the_text():
    text = b"h\nab\ncdef\ng\n\nxyz"
    bounds = delimited.piece_bounds(text, 2, 3)
    assert bounds == [(0, 3), (3, 8), (8, 11), (11, 14)]  # ab\n | cdef\n | g\n\n | xyz
    pieces = [text[2 + a:2 + b] for a, b in bounds]
    assert b"".join(pieces) == text[2:] and all(p.endswith(b"\n") for p in pieces[:-1])
