"""Where a parsed row came from: its 1-based line in the file (or row in Parquet).

Readers skip blank lines, so row ``i`` of a table is not always line
``i + header + 1``. :func:`text_line_map` checks this cheaply (count of
newline bytes) and only when blank lines exist builds the exact mapping with
a vectorised split of the text into lines.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass(frozen=True)
class LineMap:
    """Locate row ``i`` (0-based, in the parsed table) in the source.

    ``unit`` is "line" (text files: 1-based physical lines, the header is
    line 1), "row" (Parquet: 1-based rows) or "data row" (text whose quoted
    records span several lines). Without ``lines`` the number is
    ``i + offset``; with it, ``lines[i]``.
    """

    unit: str = "row"
    offset: int = 1
    lines: np.ndarray | None = None

    def number(self, i: int) -> int:
        if self.lines is not None:
            return int(self.lines[i])
        return int(i) + self.offset

    def numbers(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64)
        return self.lines[idx] if self.lines is not None else idx + self.offset

    def subset(self, idx: np.ndarray) -> "LineMap":
        """The map after keeping only rows ``idx`` (in order)."""
        return LineMap(self.unit, 0, self.numbers(idx))

    def __call__(self, i: int) -> str:
        return f"{self.unit} {self.number(i)}"


ROWS = LineMap("row", 1, None)


def split_lines(text: bytes) -> pa.Array:
    """The lines of a UTF-8 text as a large_string array (vectorised; ``\\r`` kept)."""
    return pc.split_pattern(pa.scalar(text, pa.large_string()), "\n").values


def nonblank_line_numbers(text: bytes, *, whitespace_is_blank: bool = True) -> np.ndarray:
    """1-based numbers of the lines that are not blank.

    Blank means empty or whitespace-only; with ``whitespace_is_blank=False``
    only empty lines (or a lone ``\\r``) are blank, as pyarrow's CSV reader
    counts records.
    """
    lines = split_lines(text)
    if whitespace_is_blank:
        stripped = pc.utf8_trim_whitespace(lines)
    else:
        stripped = pc.utf8_rtrim(lines, characters="\r")
    blank = pc.equal(pc.utf8_length(stripped), 0).to_numpy(zero_copy_only=False)
    return np.flatnonzero(~blank) + 1


def text_line_map(text: bytes, n_rows: int, header: bool, shift: int = 0, start: int = 0,
                  newlines: int | None = None) -> LineMap:
    """Map for the text ``text[start:]`` whose ``n_rows`` data rows follow an optional header line.

    ``shift`` lines come before ``start`` (blank lines before a header).
    ``newlines``: the number of newline bytes in the whole ``text`` when
    already counted (:func:`metrics_core.io.text_scan.scan_text`).
    """
    n_records = n_rows + (1 if header else 0)
    after_start = text.count(b"\n", start) if newlines is None else newlines - text.count(b"\n", 0, start)
    n_lines = after_start + (0 if len(text) > start and text.endswith(b"\n") else 1)
    if n_lines == n_records:
        return LineMap("line", (2 if header else 1) + shift, None)
    numbers = nonblank_line_numbers(text[start:])
    if len(numbers) == n_records:
        return LineMap("line", 0, (numbers[1:] if header else numbers) + shift)
    # a quoted field spans several lines: fall back to counting data rows
    return LineMap("data row", 1, None)
