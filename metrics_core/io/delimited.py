"""CSV and TSV with a header line, parsed by pyarrow.csv with every column as text.

Every column is read as a string so that ids stay exact (``007`` stays
``007``) and numbers are converted (and checked) in one place,
:mod:`.convert`. Blank and whitespace-only lines are skipped; a row with the
wrong number of fields is an error naming its line.

A text over :data:`PIECE_BYTES` is parsed in pieces cut at newlines (a value never holds a
newline: pyarrow's reader is not told that it may), each by the threaded reader, the bytes parsed
reported as the stage "parsing NAME" (:mod:`metrics_core.progress`: the command line's bar, the
dashboard's upload progress); the table is the same as one parse of the whole text.
"""

from __future__ import annotations

import csv

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv

from ..errors import MetricsError
from ..progress import stage
from ..kernels.input_checks import first_non_finite
from ..encode import EXACT_FLOAT_INTEGER
from .quote import clip as _clip
from .lines import LineMap, nonblank_line_numbers, text_line_map


def first_line(text: bytes) -> tuple[str, int, int]:
    """``(line, start byte, number of lines before it)`` of the first non-blank line."""
    start = 0
    skipped = 0
    while True:
        end = text.find(b"\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if line.strip():
            return line.decode("utf-8").rstrip("\r"), start, skipped
        if end < 0:
            return "", len(text), skipped
        start = end + 1
        skipped += 1


#: a header line holds at most this many bytes (pyarrow's CSV reader needs it within one block) ...
MAX_HEADER_BYTES = 1 << 20
#: ... and at most this many columns
MAX_COLUMNS = 10_000


def check_header_size(line: str, n_columns: int | None, name: str, line_no: int) -> None:
    """Refuse a header line over :data:`MAX_HEADER_BYTES` or with over :data:`MAX_COLUMNS` columns
    (``n_columns`` None: only the size is checked)."""
    size = len(line.encode("utf-8", "surrogatepass"))
    if size > MAX_HEADER_BYTES or (n_columns is not None and n_columns > MAX_COLUMNS):
        found = f"{size:,} bytes" if size > MAX_HEADER_BYTES else f"{n_columns:,} columns"
        raise MetricsError(
            f"{name}: line {line_no}: the header holds {found}; a header may hold at most "
            f"{MAX_HEADER_BYTES >> 20} MiB and {MAX_COLUMNS:,} columns: keep only the columns you need")


def header_names(line: str, delimiter: str, name: str = "input", line_no: int = 1) -> list[str]:
    """Column names of a header line (quotes honoured), trimmed.

    The header is refused beyond 1 MiB or 10,000 columns (:func:`check_header_size`),
    before and after parsing; below that, the csv module's field size limit (128 KiB
    by default) is raised to the line's length rather than failing.
    """
    check_header_size(line, None, name, line_no)
    if len(line) >= csv.field_size_limit():
        csv.field_size_limit(len(line) + 1)
    try:
        row = next(csv.reader([line], delimiter=delimiter), [])
    except csv.Error as e:
        raise MetricsError(f"{name}: line {line_no}: the header cannot be parsed ({e}); check its quotes") from None
    check_header_size(line, len(row), name, line_no)
    return [c.strip() for c in row]


def read_delimited(text: bytes, name: str, delimiter: str, keep: list[str] | None = None,
                   numbers: tuple[str, ...] = (), newlines: int | None = None) -> tuple[pa.Table, LineMap]:
    """Parse ``text`` (UTF-8, BOM removed) into a table of strings; ``keep`` limits the columns.

    Columns named in ``numbers`` are parsed as float64 by pyarrow's threaded
    reader when every value is a finite number, which then equals what
    :func:`metrics_core.io.convert.numbers` makes of the text (both use Arrow's
    number parser). Otherwise (a value that is empty, ``NA``, NaN, infinite
    or not a number) the file is read again as text so that the error names
    the line and the value as always. ``newlines``: the number of newline
    bytes in ``text`` when already counted.
    """
    if numbers:
        try:
            table, lines = _read(text, name, delimiter, keep, numbers, newlines)
        except MetricsError:
            pass  # read again as text: that read names what is wrong
        else:
            if all(finite_numbers(table[c]) for c in numbers if c in table.column_names):
                return table, lines
    return _read(text, name, delimiter, keep, (), newlines)


def finite_numbers(col: pa.ChunkedArray) -> bool:
    """No null, NaN or infinite value in a float64 column, and none of magnitude 2^53 or more.

    From 2^53 on, a whole number written in the file may have been rounded by
    the parse (``9007199254740993`` reads as ``9007199254740992.0``); the
    caller then reads the column again as text, which
    :func:`metrics_core.io.convert.numbers` checks against what is written.
    """
    if col.null_count:
        return False
    for c in col.chunks:
        values = c.to_numpy()
        if first_non_finite(values) >= 0 or (len(values) and np.abs(values).max() >= EXACT_FLOAT_INTEGER):
            return False
    return True


#: a text over this many bytes is parsed in pieces of about this size, each reported when parsed
PIECE_BYTES = 16 << 20


def piece_bounds(text: bytes, start: int, size: int | None = None) -> list[tuple[int, int]]:
    """``(begin, end)`` of consecutive pieces of ``text[start:]`` (offsets from ``start``), each
    ending just after the first newline at or past ``size`` bytes (default :data:`PIECE_BYTES`) from
    its beginning (the last at the text's end): a piece never cuts a row."""
    size = PIECE_BYTES if size is None else size
    total = len(text) - start
    bounds, begin = [], 0
    while begin < total:
        cut = text.find(b"\n", start + begin + max(size, 1) - 1)
        end = total if cut < 0 else cut + 1 - start
        bounds.append((begin, end))
        begin = end
    return bounds


def _read(text: bytes, name: str, delimiter: str, keep: list[str] | None,
          numbers: tuple[str, ...], newlines: int | None = None) -> tuple[pa.Table, LineMap]:
    line, start, shift = first_line(text)
    names = header_names(line, delimiter, name, shift + 1)
    seen = set()
    for n in names:
        if n in seen:
            raise MetricsError(
                f"{name}: line {shift + 1}: column {_clip(n, 80)!r} appears twice in the header; rename one")
        seen.add(n)
    body = pa.py_buffer(text).slice(start)  # the text after any blank lines before the header, not copied
    bad: list = []

    def on_invalid(row):
        if row.text is not None and not row.text.strip():
            return "skip"
        bad.append(row)
        return "skip"

    block = {"size": 1 << 20}  # pyarrow's default; a line longer than a block needs one block

    def parse(use_threads: bool, piece: tuple[int, int] | None = None) -> pa.Table:
        source = body if piece is None else body.slice(piece[0], piece[1] - piece[0])
        header = piece is None or piece[0] == 0
        return pcsv.read_csv(
            pa.BufferReader(source),  # read in native code: no Python file calls on Arrow threads
            read_options=pcsv.ReadOptions(column_names=names, skip_rows=1 if header else 0, use_threads=use_threads,
                                          block_size=block["size"]),
            parse_options=pcsv.ParseOptions(delimiter=delimiter, invalid_row_handler=on_invalid),
            convert_options=pcsv.ConvertOptions(
                column_types={n: pa.float64() if n in numbers else pa.string() for n in names},
                include_columns=keep if keep is not None else names,
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )

    def parse_in_pieces() -> pa.Table:
        pieces = piece_bounds(text, start)
        tables = []
        with stage(f"parsing {name}", total=body.size, unit="B") as shown:
            for piece in pieces:
                tables.append(parse(True, piece))
                shown.update(piece[1] - piece[0])
        return tables[0] if len(tables) == 1 else pa.concat_tables(tables)

    try:
        try:
            table = parse_in_pieces() if body.size > PIECE_BYTES else parse(True)
        except pa.ArrowInvalid as e:
            if "straddl" not in str(e):
                raise
            bad.clear()
            block["size"] = body.size + 1  # a line longer than a block (lines are bounded by the read limits)
            table = parse(True)
        if bad:
            bad.clear()
            table = parse(False)  # record numbers are only known single-threaded
    except pa.ArrowInvalid as e:
        raise MetricsError(
            f"{name}: cannot be parsed as {'TSV' if delimiter == chr(9) else 'CSV'} ({_clip(str(e), 200)})") from None
    if bad:
        first = bad[0]
        where = f"record {first.number}"
        if first.number is not None:
            records = nonblank_line_numbers(text[start:], whitespace_is_blank=False)
            if first.number - 1 < len(records):
                where = f"line {int(records[first.number - 1]) + shift}"
        raise MetricsError(
            f"{name}: {where}: expected {first.expected_columns} fields (as in the header) but found "
            f"{first.actual_columns}: {_clip(first.text or '')!r}; {len(bad)} row(s) have the wrong number of fields"
        )
    if table.num_rows == 0:
        raise MetricsError(f"{name}: has a header line but no data rows")
    return table, text_line_map(text, table.num_rows, header=True, shift=shift, start=start, newlines=newlines)

