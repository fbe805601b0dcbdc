"""Item-features tables (for intra-list similarity and the "items without features" diagnostic).

A table has an item column (any item alias: ``item_id``, ``item``, ``iid``,
``doc_id``, ``docid``, ``docno``) and either

* a ``tags`` column (or one single non-numeric column): kept as text, tags
  separated by ``|``, ``,`` or ``;`` (Jaccard similarity), or
* numeric feature columns (cosine similarity): each must hold finite
  numbers, checked like scores (first bad line and counts).

User-attributes tables (``read_user_attributes``) have a user column (any
user alias) and attribute columns (e.g. ``segment``) kept as read; a user id
repeated is an error (its attributes would be ambiguous).

Formats as for runs (CSV, TSV, Parquet, JSON lines, gzip), TREC excepted.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from . import formats as F
from .columns import ALIASES, ColumnMapping, normalise
from .convert import ids, numbers
from .delimited import first_line, read_delimited
from .jsonl import read_jsonl
from .parquet import parquet_names, read_parquet
from .source import load_source
from .trec import read_whitespace_table


def _all_columns(src):
    """(table, line map, format label) with every column of the file."""
    if src.fmt == F.PARQUET:
        names = parquet_names(src.data, src.path, src.name)
        table, lines = read_parquet(src.data, src.path, src.name, names)
        return table, lines, "Parquet"
    text = src.data
    line, _, _ = first_line(text)
    if src.fmt == F.JSONL or (src.fmt in (None, F.TEXT) and line.lstrip()[:1] in ("{", "[")):
        table, lines = read_jsonl(text, src.name)
        return table, lines, "JSON lines"
    if src.fmt == F.TREC:
        raise MetricsError(f"{src.name}: a TREC file cannot be an item-features table; use CSV, TSV, Parquet or JSON lines")
    delimiter = {F.CSV: ",", F.TSV: "\t"}.get(src.fmt) or ("\t" if "\t" in line else "," if "," in line else None)
    if delimiter is None:
        table, lines = read_whitespace_table(text, src.name)
        return table, lines, "whitespace-separated"
    table, lines = read_delimited(text, src.name, delimiter)
    return table, lines, "TSV" if delimiter == "\t" else "CSV"


def _is_numeric_text(col) -> bool:
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        return pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or pa.types.is_decimal(col.type)
    text = pc.utf8_trim_whitespace(col)
    return bool(pc.all(pc.match_substring_regex(text, r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")).as_py())


def _aliased_column(names, role: str, source: str) -> str:
    """The first column whose name is an alias of ``role`` (``item_id``, ``user_id``)."""
    keys = {normalise(n): n for n in names}
    hits = [keys[a] for a in ALIASES[role] if a in keys]
    if not hits:
        raise MetricsError(
            f"{source}: required {role.split('_')[0]} column missing (looked for {', '.join(ALIASES[role])}); "
            f"columns found: {', '.join(repr(n) for n in names)}"
        )
    return hits[0]


def read_item_features(path_or_buffer, *, name: str | None = None, item_column: str | None = None,
                       whole_number_ids: bool = False):
    """Read an item-features table into ``(DataFrame item_id + features, ColumnMapping)``.

    ``item_column`` names the item column explicitly. Repeated items keep
    their first row. ``whole_number_ids``: as :func:`metrics_core.io.read_table` (``12.0`` read as
    ``12``), so the table joins runs read the same way. Raises :class:`MetricsError` for bad input.
    """
    src = load_source(path_or_buffer, name)
    table, lines, label = _all_columns(src)
    names = table.column_names
    if item_column is None:
        item_column = _aliased_column(names, "item_id", src.name)
    elif item_column not in names:
        raise MetricsError(f"{src.name}: item column {item_column!r} not found; columns found: {', '.join(names)}")
    others = [n for n in names if n != item_column]
    if not others:
        raise MetricsError(f"{src.name}: no feature columns besides {item_column!r}; add numeric columns or a 'tags' column")
    out = {"item_id": ids(table[item_column], "item_id", item_column, src.name, lines,
                          whole_numbers=whole_number_ids)}
    tags = [n for n in others if normalise(n) == "tags"]
    if not tags and len(others) == 1 and not _is_numeric_text(table[others[0]].combine_chunks()):
        tags = others
    if tags:
        col = table[tags[0]].combine_chunks()
        out["tags"] = pc.utf8_trim_whitespace(col.cast(pa.string())).fill_null("") if not pa.types.is_nested(col.type) else col
    else:
        for n in others:
            out[n] = pa.array(numbers(table[n], "feature", n, src.name, lines), pa.float64())
    df = pa.table(out).to_pandas()
    df = df.drop_duplicates("item_id", keep="first").reset_index(drop=True)
    mapping = ColumnMapping(source=src.name, format=label + (", gzip" if src.gzipped else ""), item_id=item_column,
                            n_rows=len(df), lines=lines)
    return df, mapping


def read_user_attributes(path_or_buffer, *, name: str | None = None, whole_number_ids: bool = False):
    """Read a user-attributes table into ``(DataFrame user_id + attributes, ColumnMapping)``.

    The user column is found by its aliases; ids are exact strings (``whole_number_ids``: as
    :func:`metrics_core.io.read_table`, ``12.0`` read as ``12``), the other columns are kept as
    read. Raises :class:`MetricsError` for bad input, including a user id that appears more than
    once (with ``whole_number_ids``, also ``12`` and ``12.0``).
    """
    src = load_source(path_or_buffer, name)
    table, lines, label = _all_columns(src)
    names = table.column_names
    user_column = _aliased_column(names, "user_id", src.name)
    users = ids(table[user_column], "user_id", user_column, src.name, lines, whole_numbers=whole_number_ids)
    out = {"user_id": users}
    for n in names:
        if n != user_column:
            out[n] = table[n]
    df = pa.table(out).to_pandas()
    repeated = df["user_id"].duplicated()
    if repeated.any():
        row = int(repeated.to_numpy().nonzero()[0][0])
        raise MetricsError(f"{src.name}: {lines(row)}: user_id {df['user_id'].iloc[row]!r} appears more than once; "
                           "keep one row per user")
    mapping = ColumnMapping(source=src.name, format=label + (", gzip" if src.gzipped else ""), user_id=user_column,
                            n_rows=len(df), lines=lines)
    return df, mapping


def read_interactions(path_or_buffer, *, name: str | None = None):
    """Read an interactions table (the users' history) into ``(DataFrame user_id + item_id,
    ColumnMapping)``: what novelty (``novelty_popularity="interactions"``), popularity and
    serendipity count instead of the ground truth.

    Both columns are found by their aliases; ids are exact strings; every row is kept
    (a repeated interaction counts again where a metric counts interactions). Other
    columns are ignored. Raises :class:`MetricsError` for bad input.
    """
    src = load_source(path_or_buffer, name)
    table, lines, label = _all_columns(src)
    names = table.column_names
    user_column = _aliased_column(names, "user_id", src.name)
    item_column = _aliased_column(names, "item_id", src.name)
    df = pa.table({"user_id": ids(table[user_column], "user_id", user_column, src.name, lines),
                   "item_id": ids(table[item_column], "item_id", item_column, src.name, lines)}).to_pandas()
    mapping = ColumnMapping(source=src.name, format=label + (", gzip" if src.gzipped else ""), user_id=user_column,
                            item_id=item_column, n_rows=len(df), lines=lines)
    return df, mapping


__all__ = ["read_interactions", "read_item_features", "read_user_attributes"]
