"""Showing strings that came from a user (ids, file, model and column names,
URL values) as text, and writing CSV that is safe to open in a spreadsheet.

Streamlit renders markdown in alerts, toasts, headers, captions, widget and
button labels and expander titles; plotly renders a few HTML tags (links
among them) in legends, titles and hover text. :func:`md` and :func:`plot`
make a string inert for each.
"""

from __future__ import annotations

import re

import pandas as pd

from metrics_core.io.spreadsheet import spreadsheet_csv
from metrics_core.outputs.report import plotly_text

# Every ASCII punctuation character may be backslash-escaped in CommonMark; escaping
# all of them also disarms Streamlit's own syntax (``:red[...]``, ``:material/x:``,
# ``$math$``) and raw HTML.
_MD_SPECIAL = re.compile(r"([!-/:-@\[-`{-~])")
_MAX_SHOWN = 200
# GitHub-flavoured markdown turns bare URLs, ``www.`` names and e-mail addresses into
# links even when their punctuation is escaped: a zero-width space breaks each pattern.
_ZWSP = "\u200b"
_AUTOLINKS = (
    (re.compile(r":(?=/)"), ":" + _ZWSP),
    (re.compile(r"(?i)(www)\."), r"\1" + _ZWSP + "."),
    (re.compile(r"@(?=[\w.+-]*\.\w)"), "@" + _ZWSP),
)


def md(value: object, limit: int = _MAX_SHOWN) -> str:
    """``value`` as markdown that displays exactly its characters (on one line,
    cut to ``limit`` characters with an ellipsis; never a link)."""
    s = str(value)
    s = " ".join(s.splitlines()) if ("\n" in s or "\r" in s) else s
    if len(s) > limit:
        s = s[: limit - 1] + "…"
    for pattern, repl in _AUTOLINKS:
        s = pattern.sub(repl, s)
    return _MD_SPECIAL.sub(r"\\\1", s)


def plot(value: object) -> str:
    """``value`` for plotly text (legend, axis, hover): its tags shown, not rendered."""
    return plotly_text(value)


SPREADSHEET_NOTE = ("Text cells that start with =, +, -, @, a tab or a carriage return get a leading ' "
                    "so that a spreadsheet shows them instead of running them as formulas.")


def csv_bytes(df: pd.DataFrame, **to_csv) -> bytes:
    """``df`` as UTF-8 CSV for people: formula-leading text cells and column names
    neutralised by :mod:`metrics_core.io.spreadsheet` (the rule the command line's
    ``--spreadsheet-safe`` uses), CRLF line ends (RFC 4180; a cell holding a carriage
    return or a newline is then quoted)."""
    to_csv.setdefault("lineterminator", "\r\n")
    return spreadsheet_csv(df, **to_csv)


def parquet_bytes(df: pd.DataFrame) -> bytes:
    """``df`` as a Parquet file (exact values; nothing is neutralised)."""
    import io

    buf = io.BytesIO()
    df.to_parquet(buf, index=False)
    return buf.getvalue()
