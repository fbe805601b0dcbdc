"""JSON lines (one object per line), parsed by pyarrow.json, ids kept exact.

pyarrow infers each column's type from the values, and a column holding one
fractional number (``1.0``) or an integer beyond 2^63 becomes float64, which
cannot hold every integer above 2^53 (9007199254740993 would read as
9007199254740992). So the exact reader :func:`read_jsonl_exact` (Python's
``json`` with numbers kept as their text) is used instead when:

* an id column (user or item) was inferred as floating point, or
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
import pyarrow.json as pj

from ..errors import MetricsError
from .json_depth import check_json_depth
from .lines import LineMap, text_line_map
from .quote import clip

#: whole numbers with more digits than this keep their text (no huge integer is built)
_MAX_INTEGER_DIGITS = 400


def read_jsonl(text: bytes, name: str, newlines: int | None = None) -> tuple[pa.Table, LineMap]:
    """Parse JSON lines into a table (types as in the file); the exact reader when pyarrow fails.

    ``newlines``: the number of newline bytes in ``text`` when already counted.
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
        return read_jsonl_exact(text, name)
    if table.num_rows == 0:
        raise MetricsError(f"{name}: the file is empty")
    return table, text_line_map(text, table.num_rows, header=False, newlines=newlines)


def needs_exact(table: pa.Table, id_columns) -> bool:
    """Whether an id column was read as floating point (digits may be lost): read again exactly."""
    return any(c in table.column_names and (pa.types.is_floating(table[c].type) or pa.types.is_decimal(table[c].type))
               for c in id_columns)


class _Number(str):
    """Text of a JSON number (marks it as a number, not a JSON string)."""


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


def read_jsonl_exact(text: bytes, name: str) -> tuple[pa.Table, LineMap]:
    """Every column as text, numbers exactly as written (see the module docstring)."""
    check_json_depth(text, name)
    columns: dict[str, list] = {}
    line_numbers = []
    for line_no, raw in enumerate(text.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw, parse_int=_Number, parse_float=lambda s: _Number(_integer_text(s)),
                             parse_constant=_Number)
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
                col = columns[key] = [None] * row
            col.append(_cell(value))
        line_numbers.append(line_no)
        for col in columns.values():
            if len(col) <= row:
                col.append(None)
    if not line_numbers:
        raise MetricsError(f"{name}: the file is empty")
    table = pa.table({k: pa.array(v, pa.string()) for k, v in columns.items()})
    return table, LineMap("line", 0, np.asarray(line_numbers, dtype=np.int64))


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
