"""Whitespace-separated text: TREC runs and qrels, or a header plus rows.

* TREC run: ``qid Q0 docno rank score tag`` (6 fields), no header.
* TREC qrels: ``qid iter docno rel`` (4 fields), no header.
* Any other whitespace-separated table whose first line is a header.

Fields are separated by any run of ASCII whitespace (as trec_eval reads
them); leading/trailing whitespace and Windows line ends are ignored; blank
lines are skipped. Every line must have the same number of fields: the first
line that does not is reported with the count of such lines.

Speed: a file separated by single tabs (or single spaces) is parsed by
pyarrow's multithreaded CSV reader, and accepted only when every field is
non-empty and holds no inner whitespace, i.e. exactly what splitting on
whitespace gives; otherwise the text is split with pyarrow compute kernels
(``ascii_split_whitespace``). Neither path loops over lines in Python.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pcsv

from ..errors import MetricsError
from ..kernels import strings as kstr
from .delimited import finite_numbers
from .lines import LineMap, split_lines, text_line_map

RUN_FIELDS = ["qid", "Q0", "docno", "rank", "score", "tag"]
QRELS_FIELDS = ["qid", "iter", "docno", "rel"]
RUN_LAYOUT = "qid Q0 docno rank score tag"
QRELS_LAYOUT = "qid iter docno rel"

_NUMBER = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_INT = re.compile(r"^[+-]?\d+$")


def trec_kind(fields: list[str]) -> str | None:
    """"run" or "qrels" when one line's fields look like a TREC line, else None."""
    if len(fields) == 6 and _INT.match(fields[3]) and _NUMBER.match(fields[4]):
        return "run"
    if len(fields) == 4 and _NUMBER.match(fields[3]):
        return "qrels"
    return None


def whitespace_split(text: bytes) -> tuple[pa.Array, np.ndarray]:
    """Split the non-blank lines on whitespace: ``(list<string> array, their 1-based line numbers)``."""
    lines = pc.ascii_trim_whitespace(split_lines(text))
    keep = pc.greater(pc.binary_length(lines), 0)
    numbers = np.flatnonzero(keep.to_numpy(zero_copy_only=False)) + 1
    return pc.ascii_split_whitespace(lines.filter(keep)), numbers


_NOT_ONE_TOKEN = r"^\s*$|\S\s+\S"


def _plain_tokens(col: pa.ChunkedArray) -> bool:
    """Whether every value of a string column is non-empty and holds no byte from 0x00 to 0x20.

    Such values are one token each (the whitespace that :data:`_NOT_ONE_TOKEN`
    looks for is among those bytes), so the regular expression is needed only
    for a column where this says False (e.g. the last field of a file with
    Windows line ends, which keeps its carriage return). Two vectorised NumPy
    passes over each chunk's Arrow buffers, no copy of the text.
    """
    for chunk in col.chunks:
        if len(chunk) == 0:
            continue
        off, data = kstr.arrow_buffers(chunk)
        if not (off[1:] > off[:-1]).all() or data[off[0]:off[-1]].min() <= 0x20:
            return False
    return True


def _single_delimiter(text: bytes, names: list[str], newlines: int | None = None,
                      numbers: tuple[str, ...] = ()) -> tuple[pa.Table, LineMap] | None:
    """Fast path: the table when single tabs (or spaces) separate exactly ``len(names)`` tokens, else None.

    Fields named in ``numbers`` are parsed as float64 by the reader when every
    one is a finite number (Arrow's number parser, as :func:`.convert.numbers`
    uses on text); otherwise the file is read again with every field as text,
    so that the general path names what is wrong.
    """
    head = text[: text.find(b"\n")] if b"\n" in text else text
    delimiter = "\t" if b"\t" in head else " "
    table = _read_single(text, names, delimiter, numbers) if numbers else None
    if table is not None and not all(finite_numbers(table[n]) for n in numbers):
        table = None
    if table is None:
        table = _read_single(text, names, delimiter, ())
    if table is None:
        return None
    for n in names:
        if n in numbers and pa.types.is_floating(table[n].type):
            continue  # a number parsed from one field is one token
        if not _plain_tokens(table[n]) and pc.any(pc.match_substring_regex(table[n], _NOT_ONE_TOKEN)).as_py():
            return None
    return table, text_line_map(text, table.num_rows, header=False, newlines=newlines)


def _read_single(text: bytes, names: list[str], delimiter: str, numbers: tuple[str, ...]) -> pa.Table | None:
    """The fields split on single ``delimiter`` bytes (``numbers`` as float64, the others as text),
    or None when a line has another number of fields or a number does not parse."""
    bad = []

    def on_invalid(row):
        bad.append(row)
        return "skip"

    try:
        table = pcsv.read_csv(
            pa.BufferReader(text),
            read_options=pcsv.ReadOptions(column_names=names),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, quote_char=False, invalid_row_handler=on_invalid),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.float64() if n in numbers else pa.string() for n in names},
                strings_can_be_null=False),
        )
    except pa.ArrowInvalid:
        return None
    if bad or table.num_rows == 0:
        return None
    return table


def _columns(fields: pa.Array, n: int) -> list[pa.Array]:
    values = pc.list_flatten(fields)
    fixed = pa.FixedSizeListArray.from_arrays(values, n)
    return [pc.list_element(fixed, j).cast(pa.string()) for j in range(n)]


def _check_counts(fields: pa.Array, numbers: np.ndarray, n: int, name: str, what: str) -> None:
    counts = pc.list_value_length(fields).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(counts != n)
    if len(bad):
        i = int(bad[0])
        raise MetricsError(
            f"{name}: line {int(numbers[i])}: expected {n} fields ({what}) but found {int(counts[i])}; "
            f"{len(bad)} line(s) have the wrong number of fields"
        )


def read_trec(text: bytes, name: str, kind: str, newlines: int | None = None) -> tuple[pa.Table, LineMap, str]:
    """Parse a TREC file; ``kind`` is "run", "qrels" or "auto" (decided by the first line's field count).

    Returns ``(table of strings, line map, "run" | "qrels")``. ``newlines``: the
    number of newline bytes in ``text`` when already counted.
    """
    head = _head_lines(text)
    first_no = next((j + 1 for j, ln in enumerate(head) if ln.strip()), 0)
    first = head[first_no - 1].split() if first_no else []
    if not first:
        raise MetricsError(f"{name}: the file is empty")
    first_n = len(first)
    if kind == "auto":
        kind = "run" if first_n == 6 else "qrels" if first_n == 4 else "run"
    names, layout = (RUN_FIELDS, RUN_LAYOUT) if kind == "run" else (QRELS_FIELDS, QRELS_LAYOUT)
    hint = ""
    if kind == "run" and first_n == 4:
        hint = " (this looks like a qrels file: was it given as a run?)"
    elif kind == "qrels" and first_n == 6:
        hint = " (this looks like a run file: was it given as qrels?)"
    if hint:
        raise MetricsError(
            f"{name}: line {first_no}: a TREC {kind} line has {len(names)} fields ({layout}) but this one "
            f"has {first_n}{hint}"
        )
    if first_n == len(names):
        numbers = ("rank", "score") if kind == "run" else ("rel",)
        fast = _single_delimiter(text, names, newlines, numbers)
        if fast is not None:
            return fast[0], fast[1], kind
    fields, numbers = whitespace_split(text)
    _check_counts(fields, numbers, len(names), name, layout)
    table = pa.table(dict(zip(names, _columns(fields, len(names)))))
    return table, LineMap("line", 0, numbers), kind


def _head_lines(text: bytes, limit: int = 1 << 16) -> list[str]:
    """The lines of the first ``limit`` bytes (enough to find the first non-blank line)."""
    return text[:limit].decode("utf-8", errors="replace").split("\n")


def read_whitespace_table(text: bytes, name: str) -> tuple[pa.Table, LineMap]:
    """Whitespace-separated table whose first non-blank line is the header."""
    fields, numbers = whitespace_split(text)
    header = fields[0].as_py()
    if len(set(header)) != len(header):
        raise MetricsError(f"{name}: line {int(numbers[0])}: a column name appears twice in the header; rename one")
    rows, numbers = fields.slice(1), numbers[1:]
    if len(rows) == 0:
        raise MetricsError(f"{name}: has a header line but no data rows")
    _check_counts(rows, numbers, len(header), name, "as in the header")
    return pa.table(dict(zip(header, _columns(rows, len(header))))), LineMap("line", 0, numbers)
