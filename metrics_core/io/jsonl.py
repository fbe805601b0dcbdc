"""JSON lines (one object per line), parsed by pyarrow.json, ids kept exact.

pyarrow infers each column's type from the values, and a column holding one
fractional number (``1.0``) or an integer beyond 2^63 becomes float64, which
cannot hold every integer above 2^53 (9007199254740993 would read as
9007199254740992). So the exact reader :func:`read_jsonl_exact` (Python's
``json`` with numbers kept as their text) is used instead when:

* an id column (user or item) was inferred as floating point, or
* a number column (score, rank, relevance) was inferred as floating point and
  holds a value of magnitude 2^53 or more: a whole number written there may
  have been rounded, so its text is read and checked against the float
  (:mod:`metrics_core.io.convert`), or
* pyarrow cannot read the file: a column mixing numbers and strings, a syntax
  error (then the exact reader names the line).

In the exact reader a JSON number becomes its text, and a number that is a
whole value becomes integer text (``1.0`` and ``1e3`` -> ``"1"`` and
``"1000"``), the same text an integer column gives; other numbers keep their
text (``2.50`` -> ``"2.50"``). Strings are kept as they are here; the id rules
of :mod:`metrics_core.io.convert` then make a string writing a whole number
with a zero fraction (``"1.0"``) the integer's text, as in every format. A
file that is one JSON array is
refused with a message asking for JSON lines.

Both readers first bound how deeply a line nests arrays and objects
(:mod:`metrics_core.io.json_depth`): the parsers recurse once per level, and
pyarrow's ends the process on a line nesting about 10,000 levels.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from ..encode import EXACT_FLOAT_INTEGER
from ..errors import MetricsError
from .json_depth import check_json_depth
from .lines import LineMap, text_line_map
from .quote import clip, quoted

#: whole numbers with more digits than this keep their text (no huge integer is built)
_MAX_INTEGER_DIGITS = 400


def read_jsonl(text: bytes, name: str, newlines: int | None = None,
               number_columns=()) -> tuple[pa.Table, LineMap]:
    """Parse JSON lines into a table (types as in the file); the exact reader when pyarrow fails.

    ``newlines``: the number of newline bytes in ``text`` when already counted.
    ``number_columns``: for the exact reader (see :func:`read_jsonl_exact`).
    """
    if text.lstrip()[:1] == b"[":
        raise MetricsError(
            f"{name}: is a JSON array; write one JSON object per line (JSON lines, .jsonl), "
            f"e.g. with pandas: df.to_json(path, orient='records', lines=True)"
        )
    check_json_depth(text, name)
    try:
        table = pj.read_json(pa.BufferReader(text))
    except pa.ArrowInvalid:
        return read_jsonl_exact(text, name, number_columns)
    if table.num_rows == 0:
        raise MetricsError(f"{name}: the file is empty")
    return table, text_line_map(text, table.num_rows, header=False, newlines=newlines)


def needs_exact(table: pa.Table, id_columns) -> bool:
    """Whether an id column was read as floating point (digits may be lost): read again exactly."""
    return any(c in table.column_names and (pa.types.is_floating(table[c].type) or pa.types.is_decimal(table[c].type))
               for c in id_columns)


class _Number(str):
    """Text of a JSON number (marks it as a number, not a JSON string)."""


class _Fraction(_Number):
    """A JSON number with a fraction or an exponent: its whole-number text (``1.0`` -> ``"1"``, for
    ids) and in ``written`` its text as in the file (for number columns)."""

    written: str


def _fraction(text: str) -> _Fraction:
    number = _Fraction(_integer_text(text))
    number.written = text
    return number


def _integer_text(text: str) -> str:
    """``"1.0"`` -> ``"1"``, ``"1e3"`` -> ``"1000"``; other numbers keep their text."""
    try:
        d = Decimal(text)
    except InvalidOperation:
        return text
    if not d.is_finite() or d.adjusted() >= _MAX_INTEGER_DIGITS or d != d.to_integral_value():
        return text
    return str(int(d))


def _cell(value):
    if value is None or isinstance(value, _Number):
        return value
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)  # nested values: only an error if used as a column


def may_be_rounded(table: pa.Table, number_columns) -> bool:
    """Whether a number column was read as floating point holding a value of magnitude 2^53 or more,
    where a whole number written in the file may have been rounded: read again exactly."""
    for c in number_columns:
        if c in table.column_names and pa.types.is_floating(table[c].type):
            low, high = pc.min_max(table[c]).values()
            if low.as_py() is not None and max(abs(low.as_py()), abs(high.as_py())) >= EXACT_FLOAT_INTEGER:
                return True
    return False


def read_jsonl_exact(text: bytes, name: str, number_columns=()) -> tuple[pa.Table, LineMap]:
    """Every column as text, numbers exactly as written (see the module docstring).

    In ``number_columns`` (score, rank, relevance; or a function of the column
    names giving them) a number keeps its text as written
    (``9007199254740993.0``, ``1e300``), which
    :func:`metrics_core.io.convert.numbers` checks against the float it
    becomes; elsewhere a whole number becomes integer text, as for ids. A
    string or key holding a lone surrogate (``"\\ud800"``, not a character) is
    refused naming its line.
    """
    check_json_depth(text, name)
    columns: dict[str, list] = {}
    line_numbers = []
    for line_no, raw in enumerate(text.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, parse_int=_Number, parse_float=_fraction, parse_constant=_Number)
        except ValueError as e:
            msg = getattr(e, "msg", str(e))
            col = getattr(e, "colno", None)
            at = f" at column {col}" if col else ""
            raise MetricsError(f"{name}: line {line_no}: invalid JSON lines: {clip(msg)}{at}") from None
        if not isinstance(obj, dict):
            raise MetricsError(
                f"{name}: line {line_no}: invalid JSON lines: expected an object {{...}}, found "
                f"{type(obj).__name__}; write one JSON object per line")
        row = len(line_numbers)
        for key, value in obj.items():
            col = columns.get(key)
            if col is None:
                _check_characters(key, f"{name}: line {line_no}: the key {quoted(key)}")
                col = columns[key] = [None] * row
            col.append(value)
        line_numbers.append(line_no)
        for col in columns.values():
            if len(col) <= row:
                col.append(None)
    if not line_numbers:
        raise MetricsError(f"{name}: the file is empty")
    numeric = set(number_columns(list(columns)) if callable(number_columns) else number_columns)
    arrays = {}
    for key, values in columns.items():
        cells = [v.written if isinstance(v, _Fraction) else _cell(v) for v in values] if key in numeric \
            else [_cell(v) for v in values]
        try:
            arrays[key] = pa.array(cells, pa.string())
        except UnicodeEncodeError:
            row = next(i for i, v in enumerate(cells) if v is not None and not _encodable(v))
            _check_characters(cells[row], f"{name}: line {line_numbers[row]}: column {quoted(key)}, value "
                                          f"{quoted(cells[row])}")
    return pa.table(arrays), LineMap("line", 0, np.asarray(line_numbers, dtype=np.int64))


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_characters(text: str, where: str) -> None:
    """Refuse text holding a lone surrogate (a ``\\ud800``-style escape without its pair): it is no
    character, so it can be neither stored as UTF-8 nor shown."""
    if not _encodable(text):
        at = next(i for i, ch in enumerate(text) if 0xD800 <= ord(ch) <= 0xDFFF)
        raise MetricsError(
            f"{where} holds a lone surrogate \\u{ord(text[at]):04x} (a UTF-16 half written as a JSON "
            f"escape, not a character) at character {at + 1}; write the character itself, or its escape "
            f"pair, or remove it")


def object_keys(line: str, name: str) -> list[str]:
    """The keys of the JSON object on ``line`` (a file's first line), as column names.

    Raises :class:`MetricsError` when the line nests too deeply, is not valid JSON or
    is not an object."""
    check_json_depth(line.encode("utf-8", "surrogatepass"), name)
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise MetricsError(f"{name}: line 1: invalid JSON lines: {clip(getattr(e, 'msg', str(e)))}") from None
    if not isinstance(obj, dict):
        raise MetricsError(f"{name}: line 1: invalid JSON lines: expected an object {{...}}, "
                           f"found {type(obj).__name__}")
    return [str(k) for k in obj]
