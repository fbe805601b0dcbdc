"""User strings shown as text (markdown escaping checked with markdown-it-py,
an independent CommonMark renderer) and spreadsheet-safe CSV (OWASP rule)."""

from __future__ import annotations

import html
import io

import pandas as pd
import pytest
from markdown_it import MarkdownIt

from dashboard import text

HOSTILE = [
    "![x](http://127.0.0.1:9/p.png)",
    "[Session expired](http://127.0.0.1:9/)",
    "<img src=x onerror=alert(1)>",
    "**bold** _it_ `code` # head",
    ":red[alarm] :material/home: $x^2$",
    "a\\*b | c ~~d~~ <b>e</b>",
    "1. item\n- list\r> quote",
    "=HYPERLINK(\"http://127.0.0.1:9/\")",
]


@pytest.mark.parametrize("value", HOSTILE)
def test_md_renders_exactly_the_characters(value):
    rendered = MarkdownIt("commonmark").enable("strikethrough").enable("table").renderInline(text.md(value))
    assert "<a" not in rendered and "<img" not in rendered and "<b>" not in rendered
    shown = html.unescape(rendered).replace("\u200b", "")
    assert shown == " ".join(value.splitlines())


def test_md_breaks_bare_urls_and_cuts_long_values():
    assert "http://" not in text.md("http://127.0.0.1:9/").replace("\\", "")
    assert "www." not in text.md("www.example.org").replace("\\", "")
    long = text.md("x" * 1000, limit=50)
    assert long.endswith("…") and len(long) == 50


def test_plot_escapes_tags_only():
    assert text.plot('<a href="http://h">"q" & r</a>') == '&lt;a href="http://h"&gt;"q" &amp; r&lt;/a&gt;'


def test_spreadsheet_safe_prefixes_formula_leading_text_only():
    df = pd.DataFrame({"model": ["=1+1", "+A1", "-2+3", "@SUM(A1)", "\tx", "\rx", "plain", "a=b"],
                       "value": [-1.5, 2.0, -3.0, 4.0, 5.0, 6.0, 7.0, 8.0]})
    out = pd.read_csv(io.BytesIO(text.csv_bytes(df, index=False)), keep_default_na=False)
    assert list(out["model"]) == ["'=1+1", "'+A1", "'-2+3", "'@SUM(A1)", "'\tx", "'\rx", "plain", "a=b"]
    assert list(out["value"]) == list(df["value"])  # negative numbers stay numbers
    odd = pd.DataFrame({"=cmd": ["x"]})
    assert pd.read_csv(io.BytesIO(text.csv_bytes(odd))).columns.tolist() == ["'=cmd"]
