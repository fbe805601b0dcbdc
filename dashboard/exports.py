"""The CSV file of a table the dashboard shows: the table's cells as the page holds them (full
precision, not the rounded display), with every text cell a spreadsheet would run as a formula
neutralised by the one rule of :func:`dashboard.text.csv_bytes`.

Streamlit's own table toolbar export is switched off (``client.disableDataExport``: it writes
cells unneutralised), so each table gets a "Download CSV" button built here. The bytes are made
when the button is clicked (a deferred download), so a page that is only looked at builds none.
"""

from __future__ import annotations

import re

import pandas as pd

from . import text

#: the label of every table's own download button
LABEL = "Download CSV"
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


def table_csv(table: pd.DataFrame | pd.Series) -> bytes:
    """The CSV bytes of a shown table: a meaningful index (named, or not the default 0..n-1)
    becomes the first columns, nested column labels are joined with `` / ``, floats keep every
    digit (``%.17g``), formula-like text cells and column names are neutralised."""
    frame = table.to_frame() if isinstance(table, pd.Series) else table
    if isinstance(frame.columns, pd.MultiIndex):
        frame = frame.set_axis([" / ".join(map(str, c)) for c in frame.columns], axis=1)
    index = frame.index
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1 and index.name is None
    if not default:
        frame = frame.reset_index(names=[n if n is not None else "" for n in index.names])
    return text.csv_bytes(frame, index=False, float_format="%.17g")


def file_name(table_key: str) -> str:
    """A file name for a table's CSV from its widget key (``failures_worst`` -> ``failures_worst.csv``):
    only letters, digits, ``.``, ``_`` and ``-``."""
    return (_UNSAFE_NAME.sub("_", table_key).strip("._") or "table") + ".csv"
