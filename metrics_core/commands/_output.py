"""Printing results for people (aligned table), spreadsheets (CSV) and programs (JSON).

* :func:`format_table`: text columns left-aligned, numbers right-aligned and
  printed with ``digits`` decimals (4, as trec_eval); NaN prints as ``-``; control characters
  of names escaped (:func:`metrics_core.terminal.escape`).
* :func:`format_csv`: full precision (``repr`` of the float), empty for NaN,
  exact text; :func:`spreadsheet_rows` first neutralises formula-like text
  cells (``--spreadsheet-safe``, see :mod:`metrics_core.io.spreadsheet`).
* :func:`format_json`: ``json.dumps`` with NaN/inf as ``null`` (strict JSON).
* :func:`write_frame`: a DataFrame to ``.csv``/``.tsv`` or ``.parquet``/``.pq``
  (``spreadsheet_safe`` applies to CSV/TSV only; Parquet is always exact).
"""

from __future__ import annotations

import csv
import io
import json
import math
from numbers import Real
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..io.spreadsheet import neutralise_cell, neutralise_frame
from ..terminal import escape


def _is_number(v) -> bool:
    return isinstance(v, (Real, np.number)) and not isinstance(v, (bool, np.bool_))


def format_cell(v, digits: int = 4) -> str:
    """A value as shown in the aligned table."""
    if v is None:
        return "-"
    if _is_number(v):
        f = float(v)
        if math.isnan(f):
            return "-"
        if float(f).is_integer() and isinstance(v, (int, np.integer)):
            return str(int(v))
        return f"{f:.{digits}f}"
    return escape(v)


def format_table(header: list[str], rows: list[list], digits: int = 4) -> str:
    """Aligned plain-text table with a dashed rule under the header; text cells and headers have
    their control characters escaped (:func:`metrics_core.terminal.escape`)."""
    cells = [[format_cell(v, digits) for v in row] for row in rows]
    header = [escape(h) for h in header]
    numeric = [
        all(_is_number(row[j]) or row[j] is None for row in rows) and bool(rows) for j in range(len(header))
    ]
    widths = [max([len(str(h))] + [len(r[j]) for r in cells]) for j, h in enumerate(header)]

    def line(values):
        out = [
            (v.rjust(widths[j]) if numeric[j] else v.ljust(widths[j])) for j, v in enumerate(values)
        ]
        return "  ".join(out).rstrip()

    lines = [line([str(h) for h in header]), "  ".join("-" * w for w in widths)]
    lines += [line(r) for r in cells]
    return "\n".join(lines) + "\n"


def _csv_value(v):
    if v is None:
        return ""
    if _is_number(v):
        f = float(v)
        if math.isnan(f):
            return ""
        if isinstance(v, (int, np.integer)):
            return str(int(v))
        return repr(f)
    return str(v)


def format_csv(header: list[str], rows: list[list]) -> str:
    """CSV text (header + rows), floats at full precision, NaN empty, text exactly as given."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([_csv_value(v) for v in row])
    return buf.getvalue()


def spreadsheet_rows(header: list[str], rows: list[list]) -> tuple[list[str], list[list], int]:
    """``(header, rows, cells changed)`` with formula-like text cells neutralised (numbers unchanged)."""
    changed = 0

    def safe(v):
        nonlocal changed
        out = neutralise_cell(v)
        changed += out is not v
        return out

    return [safe(h) for h in header], [[safe(v) for v in row] for row in rows], changed


def jsonable(obj):
    """Replace NaN/inf by None and numpy scalars/arrays by Python values, recursively."""
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    return obj


def format_json(obj, indent: int | None = 2) -> str:
    """Strict JSON text of ``obj`` (NaN and infinities become null)."""
    return json.dumps(jsonable(obj), indent=indent, allow_nan=False) + "\n"


OUTPUT_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".txt": "csv", ".parquet": "parquet", ".pq": "parquet"}


def output_kind(path: str | Path) -> str:
    """"csv", "tsv" or "parquet" from the extension of ``path``; MetricsError otherwise."""
    ext = Path(path).suffix.lower()
    if ext not in OUTPUT_EXTENSIONS:
        raise MetricsError(f"{path}: unknown output extension {ext or '(none)'!r}; use .csv, .tsv or .parquet")
    return OUTPUT_EXTENSIONS[ext]


def write_frame(df: pd.DataFrame, path: str | Path, spreadsheet_safe: bool = False) -> int:
    """Write ``df`` (without its index) as CSV/TSV or Parquet, chosen by the extension.

    Returns the number of cells neutralised (``spreadsheet_safe``, CSV/TSV only).
    """
    kind = output_kind(path)
    changed = 0
    try:
        if kind == "parquet":
            df.to_parquet(path, index=False)
        else:
            if spreadsheet_safe:
                df, changed = neutralise_frame(df)
            df.to_csv(path, index=False, sep="\t" if kind == "tsv" else ",")
    except OSError as e:
        raise MetricsError(f"{path}: cannot write ({e.strerror or e})") from None
    return changed


def add_spreadsheet_argument(p) -> None:
    """``--spreadsheet-safe`` (CSV outputs neutralise formula-like text cells)."""
    p.add_argument("--spreadsheet-safe", action="store_true",
                   help="in CSV/TSV outputs, prefix text cells starting with = + - @ tab or CR with an "
                        "apostrophe so spreadsheets show them as text (OWASP CSV injection rule); without it "
                        "CSV holds exact values; Parquet is always exact")


def spreadsheet_note(changed: int, where: str) -> str:
    """The note printed when ``--spreadsheet-safe`` changed cells."""
    from ..io.spreadsheet import NOTE

    return f"--spreadsheet-safe: {changed} cell(s) of {where}: {NOTE}"
