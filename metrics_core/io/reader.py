"""``read_table``: any supported file or upload -> a tidy, checked DataFrame.

The returned frame has ``user_id`` and ``item_id`` (exact strings, pandas
``str`` dtype), then whichever of ``score``, ``rank`` and ``relevance`` the
file provides (float64, finite). A run with a rank column and no score gets
``score = -rank``. Runs must not repeat a (user, item) pair; ground truth may
repeat one only with the same relevance (the repeat is dropped).
"""

from __future__ import annotations

import os

import pandas as pd
import pyarrow as pa

from ..errors import MetricsError
from ..progress import stage
from . import formats as F
from .checks import check_run_duplicates, dedupe_qrels, earlier_pairs, pair_keys
from .columns import ALIASES, ColumnMapping, detect, normalise, role_of_key
from .convert import ids, numbers
from .delimited import check_header_size, first_line, header_names, read_delimited
from .jsonl import may_be_rounded, needs_exact, read_jsonl, read_jsonl_exact
from .parquet import parquet_names, read_parquet
from .limits import ReadLimits
from .limits import current as current_limits
from .source import load_source
from .trec import read_trec, read_whitespace_table, trec_kind

KINDS = ("run", "qrels", "auto")
_KNOWN = {a for aliases in ALIASES.values() for a in aliases} | set(ALIASES)


def _needed(roles: dict) -> list[str]:
    return list(dict.fromkeys(c for c in roles.values() if c is not None))


def _looks_like_header(names: list[str], columns: dict | None) -> bool:
    keys = {normalise(n) for n in names}
    if keys & _KNOWN:
        return True
    return bool(columns) and any(c in names for c in columns.values())


def _parse(src, kind: str, columns: dict | None, limits: ReadLimits):
    """-> (pyarrow table, roles, line map, format label, kind as read)."""
    name = src.name
    if src.fmt == F.PARQUET:
        names = parquet_names(src.data, src.path, name)
        roles = detect(names, kind, name, columns)
        table, lines = read_parquet(src.data, src.path, name, _needed(roles), limits)
        return table, roles, lines, "Parquet", kind
    text = src.data
    line, _, skipped = first_line(text)
    fmt = src.fmt
    if fmt == F.JSONL or (fmt in (None, F.TEXT) and line.lstrip()[:1] in ("{", "[")):
        def number_columns(names: list[str]) -> list[str]:
            roles = detect(names, kind, name, columns)
            return [roles[r] for r in ("score", "rank", "relevance") if roles[r] is not None]

        table, lines = read_jsonl(text, name, newlines=src.newlines, number_columns=number_columns)
        roles = detect(table.column_names, kind, name, columns)
        if (needs_exact(table, (roles["user_id"], roles["item_id"]))
                or may_be_rounded(table, number_columns(table.column_names))):
            table, lines = read_jsonl_exact(text, name, number_columns)
        return table.select(_needed(roles)), roles, lines, "JSON lines", kind
    if fmt == F.TREC:
        return _trec(text, name, kind, columns, src.newlines)
    if fmt == F.CSV:
        delimiter = ","
    elif fmt == F.TSV:
        delimiter = "\t"
    else:
        delimiter = "\t" if "\t" in line else "," if "," in line else None
    names = header_names(line, delimiter, name, skipped + 1) if delimiter else line.split()
    if not delimiter:
        check_header_size(line, len(names), name, skipped + 1)
    if not _looks_like_header(names, columns) and trec_kind(line.split()):
        return _trec(text, name, kind, columns, src.newlines)
    if delimiter is None:
        table, lines = read_whitespace_table(text, name)
        roles = detect(table.column_names, kind, name, columns)
        return table.select(_needed(roles)), roles, lines, "whitespace-separated", kind
    roles = detect(names, kind, name, columns)
    ids = {roles["user_id"], roles["item_id"]}
    numbers = tuple(c for r in ("score", "rank", "relevance") if (c := roles[r]) is not None and c not in ids)
    table, lines = read_delimited(text, name, delimiter, keep=_needed(roles), numbers=numbers, newlines=src.newlines)
    return table, roles, lines, "TSV" if delimiter == "\t" else "CSV", kind


def _checked_pairs(df, cols: dict, is_run: bool, name: str, lines):
    """Refuse a run's repeated (user, item) pair; drop a ground truth's exact repeats (refuse conflicting ones)."""
    earlier = earlier_pairs(cols["user_id"], cols["item_id"], None if is_run else cols.get("relevance"))
    key = pair_keys(cols["user_id"], cols["item_id"]) if earlier is None else None
    if is_run:
        check_run_duplicates(df, name, lines, key, earlier)
    elif "relevance" in df.columns:
        df, lines = dedupe_qrels(df, name, lines, key, earlier)
    return df, lines


def _trec(text: bytes, name: str, kind: str, columns: dict | None, newlines: int | None = None):
    table, lines, as_kind = read_trec(text, name, kind, newlines)
    roles = detect(table.column_names, as_kind if kind == "auto" else kind, name, columns)
    return table, roles, lines, f"TREC {as_kind}", as_kind


def read_table(path_or_buffer, *, name: str | None = None, kind: str = "auto", columns: dict | None = None,
               limits: ReadLimits | None = None, check_run_pairs: bool = True, whole_number_ids: bool = False):
    """Read a run or ground-truth file (:func:`_read_table`), shown as the stage "reading NAME" on
    the active progress reporter (:mod:`metrics_core.progress`), and within it "parsing NAME" with
    the bytes parsed (a large delimited text, :mod:`.delimited`) and "checking NAME" with the rows."""
    shown = name or (str(path_or_buffer) if isinstance(path_or_buffer, (str, os.PathLike))
                     else getattr(path_or_buffer, "name", None) or "the data")
    with stage(f"reading {shown}"):
        return _read_table(path_or_buffer, name=name, kind=kind, columns=columns, limits=limits,
                           check_run_pairs=check_run_pairs, whole_number_ids=whole_number_ids)


def _read_table(path_or_buffer, *, name: str | None = None, kind: str = "auto", columns: dict | None = None,
                limits: ReadLimits | None = None, check_run_pairs: bool = True, whole_number_ids: bool = False):
    """Read a run or ground-truth file into ``(DataFrame, ColumnMapping)``.

    ``path_or_buffer``: a path (str or Path), bytes, or a binary file object
    (e.g. an uploaded file). ``name`` is used in messages (defaults to the
    path or the object's ``name``). ``kind``: "run" (needs user, item and a
    score or rank), "qrels" (needs user, item, relevance; other columns are
    ignored) or "auto" (user, item and any of score, rank, relevance).
    ``columns``: explicit ``{role: source column}``, e.g. ``{"user_id":
    "customer"}``; roles are user_id, item_id, score, rank, relevance.
    ``limits``: a :class:`~metrics_core.io.limits.ReadLimits` (default: the
    limits in force, see :func:`metrics_core.io.limits.current`).
    ``check_run_pairs=False`` skips the repeated (user, item) check of a run
    (never the ground truth's): for callers that hand the frame to
    ``mc.prepare``, which refuses a repeated pair itself, and call
    :func:`~metrics_core.io.checks.check_run_duplicates` when it fails, for the
    message that names the lines.
    ``whole_number_ids``: read text ids that write a whole number with a zero
    fraction as that integer (``"12.0"`` -> ``"12"``); off by default, when ids
    are kept exactly as written (``"12.0"`` and ``"12"`` are different ids, as
    in trec_eval).

    Raises :class:`MetricsError` with a one-line message for any bad input.
    """
    if kind not in KINDS:
        raise MetricsError(f"kind must be one of {', '.join(KINDS)}, not {kind!r}")
    limits = current_limits() if limits is None else limits
    src = load_source(path_or_buffer, name, limits)
    name = src.name
    table, roles, lines, label, kind = _parse(src, kind, columns, limits)
    if table.num_rows > limits.max_rows:
        raise limits.exceeded("max_rows", f"{name}: the file holds {table.num_rows:,} rows")
    if src.gzipped:
        label += ", gzip"
    with stage(f"checking {name}: the ids and numbers of {table.num_rows:,} rows"):
        return _checked(table, roles, lines, label, kind, name, columns, check_run_pairs, whole_number_ids)


def _checked(table, roles: dict, lines, label: str, kind: str, name: str, columns: dict | None,
             check_run_pairs: bool, whole_number_ids: bool):
    """The parsed ``table`` as ``(DataFrame, ColumnMapping)``: ids and numbers converted and checked
    (:mod:`.convert`), a run's repeated pairs refused and a ground truth's exact repeats dropped."""
    cols: dict[str, object] = {
        "user_id": ids(table[roles["user_id"]], "user_id", roles["user_id"], name, lines,
                       whole_numbers=whole_number_ids),
        "item_id": ids(table[roles["item_id"]], "item_id", roles["item_id"], name, lines,
                       whole_numbers=whole_number_ids),
    }
    score_from_rank = False
    if roles["score"] is not None:
        cols["score"] = numbers(table[roles["score"]], "score", roles["score"], name, lines)
    if roles["rank"] is not None:
        rank = numbers(table[roles["rank"]], "rank", roles["rank"], name, lines)
        if roles["score"] is None:
            cols["score"] = -rank
            score_from_rank = True
        cols["rank"] = rank
    if roles["relevance"] is not None:
        cols["relevance"] = numbers(table[roles["relevance"]], "relevance", roles["relevance"], name, lines)
    text = pa.table({k: cols[k] for k in ("user_id", "item_id")}).to_pandas()  # pandas str, Arrow-backed
    df = pd.DataFrame({k: text[k] if k in text else v for k, v in cols.items()}, copy=False)  # numbers not copied
    is_run = "score" in df.columns
    if not is_run or check_run_pairs:
        df, lines = _checked_pairs(df, cols, is_run, name, lines)
    explicit = tuple(sorted({r for r in roles if columns and any(role_of_key(k) == r for k in columns)}))
    mapping = ColumnMapping(
        source=name,
        format=label,
        user_id=roles["user_id"],
        item_id=roles["item_id"],
        score=roles["score"] if not score_from_rank else None,
        rank=roles["rank"],
        relevance=roles["relevance"],
        score_from_rank=score_from_rank,
        explicit=explicit,
        n_rows=len(df),
        lines=lines,
    )
    return df, mapping


def read_run(path_or_buffer, *, name: str | None = None, columns: dict | None = None,
             limits: ReadLimits | None = None, whole_number_ids: bool = False):
    """``read_table(..., kind="run")``: user_id, item_id, score [, rank] [, relevance]."""
    return read_table(path_or_buffer, name=name, kind="run", columns=columns, limits=limits,
                      whole_number_ids=whole_number_ids)


def read_qrels(path_or_buffer, *, name: str | None = None, columns: dict | None = None,
               limits: ReadLimits | None = None, whole_number_ids: bool = False):
    """``read_table(..., kind="qrels")``: user_id, item_id, relevance."""
    return read_table(path_or_buffer, name=name, kind="qrels", columns=columns, limits=limits,
                      whole_number_ids=whole_number_ids)

