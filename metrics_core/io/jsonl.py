"""JSON lines (one object per line), parsed by pyarrow.json.

Types come from the values: numeric ids become strings later (``7`` ->
``"7"``). A file that is one JSON array is refused with a message asking for
JSON lines; a syntax error or a column that mixes numbers and strings names
its line.
"""

from __future__ import annotations

import io
import re

import pyarrow as pa
import pyarrow.json as pj

from ..errors import MetricsError
from .lines import LineMap, nonblank_line_numbers, text_line_map

_ROW = re.compile(r"\s*in row (\d+)\s*$")


def read_jsonl(text: bytes, name: str) -> tuple[pa.Table, LineMap]:
    """Parse JSON lines into a table (types as in the file)."""
    if text.lstrip()[:1] == b"[":
        raise MetricsError(
            f"{name}: is a JSON array; write one JSON object per line (JSON lines, .jsonl), "
            f"e.g. with pandas: df.to_json(path, orient='records', lines=True)"
        )
    try:
        table = pj.read_json(io.BytesIO(text))
    except pa.ArrowInvalid:
        # again in one block, single-threaded, so that the row number is absolute
        try:
            table = pj.read_json(
                io.BytesIO(text), read_options=pj.ReadOptions(use_threads=False, block_size=len(text) + 1)
            )
        except pa.ArrowInvalid as e:
            msg = str(e).replace("JSON parse error: ", "")
            m = _ROW.search(msg)
            where = ""
            if m:
                numbers = nonblank_line_numbers(text)
                row = int(m.group(1))
                if row < len(numbers):
                    where = f" line {int(numbers[row])}:"
                msg = msg[: m.start()]
            msg = msg.rstrip(". ")
            if "changed from" in msg:
                msg += " (write every value of a column with one JSON type, e.g. all ids as strings)"
            raise MetricsError(f"{name}:{where} invalid JSON lines: {msg}") from None
    if table.num_rows == 0:
        raise MetricsError(f"{name}: the file is empty")
    return table, text_line_map(text, table.num_rows, header=False)
