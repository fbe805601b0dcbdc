"""CSV meant for spreadsheets: cells that a spreadsheet would run as a formula are neutralised.

A spreadsheet treats a cell starting with ``=``, ``+``, ``-`` or ``@`` as a
formula, and a leading tab or carriage return can hide such a start; an id
or a model name such as ``=HYPERLINK("http://...")`` would run when a person
opens the file. Following the OWASP rule on CSV injection, every *text* cell
that starts with one of those characters gets a leading apostrophe ``'``,
which spreadsheets show as text and do not display (``=1+1`` -> ``'=1+1``).
Numbers are numbers, never formulas, and are written unchanged (``-0.5``
stays ``-0.5``). Column names are neutralised the same way.

The result is meant for people: the apostrophe changes the text of those
cells. Files meant for programs keep exact values (the command line writes
exact CSV unless ``--spreadsheet-safe`` is given; Parquet is always exact).

``neutralise_frame(df) -> (DataFrame, count)`` and ``spreadsheet_csv(df)
-> bytes`` are shared by the command line and the dashboard's downloads.
"""

from __future__ import annotations

import pandas as pd

#: first characters that make a spreadsheet cell a formula (OWASP CSV injection)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
ESCAPE = "'"
NOTE = ("text cells starting with = + - @ tab or carriage return were prefixed with an apostrophe (') "
        "so that spreadsheets show them as text")


def is_formula_like(value) -> bool:
    """Whether ``value`` is text a spreadsheet would treat as a formula."""
    return isinstance(value, str) and value.startswith(FORMULA_START)


def neutralise_cell(value):
    """``value`` with a leading apostrophe when :func:`is_formula_like`, else unchanged."""
    return ESCAPE + value if is_formula_like(value) else value


def _is_text_column(s: pd.Series) -> bool:
    return (pd.api.types.is_string_dtype(s.dtype) or s.dtype == object
            or isinstance(s.dtype, pd.CategoricalDtype))


def neutralise_frame(df: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """A copy of ``df`` with formula-like text cells (and column names) neutralised, and how many changed.

    Only text columns are visited (one vectorised ``startswith`` each);
    numeric columns are left as they are. The index is kept as it is: write
    with ``index=False`` or reset it first.
    """
    out = df.copy()
    changed = 0
    for j, column in enumerate(df.columns):
        s = df.iloc[:, j]
        if not _is_text_column(s):
            continue
        text = s.astype(object)
        if isinstance(s.dtype, pd.StringDtype):
            mask = s.str.startswith(FORMULA_START).fillna(False).to_numpy(dtype=bool)
        else:
            mask = text.map(is_formula_like).to_numpy(dtype=bool)
        if mask.any():
            changed += int(mask.sum())
            text = text.where(~mask, ESCAPE + text[mask].astype(str))
            out.isetitem(j, text)
    names = [neutralise_cell(c) for c in df.columns]
    changed += sum(1 for a, b in zip(names, df.columns) if a != b)
    out.columns = names
    return out, changed


def spreadsheet_csv(df: pd.DataFrame, **to_csv) -> bytes:
    """UTF-8 CSV bytes of :func:`neutralise_frame` (``index=False`` unless given)."""
    to_csv.setdefault("index", False)
    return neutralise_frame(df)[0].to_csv(**to_csv).encode("utf-8")
