"""Row-level checks on a tidy frame: duplicate (user, item) pairs.

* In a run every (user, item) pair may appear once: a repeat is an error
  (which score would count?).
* In ground truth, exact repeats (same relevance) are dropped silently; the
  same pair with different relevance is an error.

When the rows of each user are together (files almost always are), the
pairs are checked inside each user's rows with a small hash table per user
(:func:`earlier_pairs`); otherwise they are compared as integer keys
(dictionary codes of user and item, ``key = user_code * n_items + item_code``)
with one stable sort. No Python loop over rows either way.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..grouping import balanced_chunks, string_heads
from ..kernels.input_checks import first_of_pair
from ..kernels import strings as kstr
from ..kernels._jit import kernel_guard, n_threads
from .lines import LineMap
from .quote import quoted


def earlier_pairs(users, items, rel=None) -> np.ndarray | None:
    """Per row: -1 for the first (user, item) occurrence, else that first row (``-2 - row``
    when ``rel`` differs from it); None when users are not grouped or ids are not strings."""
    arrays = [kstr.one_array(v) for v in (users, items)]
    if not all(isinstance(a, pa.Array) and (pa.types.is_string(a.type) or pa.types.is_large_string(a.type))
               and a.null_count == 0 for a in arrays):
        return None
    users, items = arrays
    n = len(users)
    heads = string_heads(*kstr.arrow_buffers(users))
    if pc.count_distinct(users.take(pa.array(heads))).as_py() < len(heads):
        return None  # some user's rows are split: fall back to keys
    bounds = np.r_[heads, n].astype(np.int64)
    chunks = balanced_chunks(bounds, 4 * n_threads())
    i_off, i_data = kstr.arrow_buffers(items)
    out = np.empty(n, dtype=np.int64)
    values = np.zeros(0) if rel is None else np.ascontiguousarray(rel, dtype=np.float64)
    with kernel_guard():  # a parallel kernel: one at a time without a thread-safe numba layer
        first_of_pair(bounds, chunks, i_off, i_data, values, out)
    return out


def _codes(values) -> tuple[np.ndarray, int]:
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values, pa.string())
    enc = pc.dictionary_encode(values)
    if isinstance(enc, pa.ChunkedArray):
        enc = enc.unify_dictionaries().combine_chunks()
    return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), len(enc.dictionary)


def pair_keys(users, items) -> np.ndarray:
    """One int64 per row, equal exactly when (user_id, item_id) are equal (pyarrow or pandas columns)."""
    u, _ = _codes(users)
    i, n_items = _codes(items)
    return u * max(n_items, 1) + i


def repeats(key: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Rows whose key appeared on an earlier row (sorted row indices)."""
    rows = np.arange(len(key)) if rows is None else rows
    order = np.argsort(key[rows], kind="stable")
    sk = key[rows][order]
    later = order[1:][sk[1:] == sk[:-1]]
    return np.sort(rows[later])


def _pair(df: pd.DataFrame, i: int) -> str:
    return f"({quoted(df['user_id'].iat[i])}, {quoted(df['item_id'].iat[i])})"


def check_run_duplicates(df: pd.DataFrame, name: str, lines: LineMap, key: np.ndarray | None = None,
                         earlier: np.ndarray | None = None) -> None:
    """Refuse a run with a repeated (user_id, item_id); ``key`` from :func:`pair_keys` or
    ``earlier`` from :func:`earlier_pairs` if already known."""
    if earlier is not None:
        bad = np.flatnonzero(earlier != -1)
        first = (lambda i: int(earlier[i]))
    else:
        key = pair_keys(df["user_id"], df["item_id"]) if key is None else key
        bad = repeats(key)
        first = (lambda i: int(np.flatnonzero(key == key[i])[0]))
    if len(bad):
        i = int(bad[0])
        j = first(i)
        raise MetricsError(
            f"{name}: {lines(i)}: duplicate (user_id, item_id) = {_pair(df, i)}, first seen on {lines(j)}; "
            f"{len(bad)} duplicate row(s). Keep one row per user and item"
        )


def dedupe_qrels(df: pd.DataFrame, name: str, lines: LineMap, key: np.ndarray | None = None,
                 earlier: np.ndarray | None = None) -> tuple[pd.DataFrame, LineMap]:
    """Drop exact repeats; refuse a pair labelled with two different relevances.

    ``key`` from :func:`pair_keys` or ``earlier`` from :func:`earlier_pairs`
    (given the relevance) if already known.
    """
    if earlier is not None:
        return _dedupe_grouped(df, name, lines, earlier)
    key = pair_keys(df["user_id"], df["item_id"]) if key is None else key
    rel = df["relevance"].to_numpy()
    order = np.lexsort((np.arange(len(key)), rel, key))
    same = (key[order][1:] == key[order][:-1]) & (rel[order][1:] == rel[order][:-1])
    if same.any():
        keep = np.sort(np.setdiff1d(np.arange(len(key)), order[1:][same], assume_unique=True))
        lines = lines.subset(keep)
        df = df.iloc[keep].reset_index(drop=True)
        key = key[keep]
    bad = repeats(key)
    if len(bad):
        i = int(bad[0])
        j = int(np.flatnonzero(key == key[i])[0])
        raise MetricsError(
            f"{name}: {lines(i)}: conflicting relevance for (user_id, item_id) = {_pair(df, i)}: "
            f"{df['relevance'].iat[i]:g} here but {df['relevance'].iat[j]:g} on {lines(j)}; "
            f"{len(bad)} conflicting row(s). Keep one label per user and item"
        )
    return df, lines


def _dedupe_grouped(df: pd.DataFrame, name: str, lines: LineMap, earlier: np.ndarray):
    """:func:`dedupe_qrels` from :func:`earlier_pairs` (a repeat compared with the pair's first label)."""
    conflict = np.flatnonzero(earlier <= -2)
    if len(conflict):
        i = int(conflict[0])
        j = -2 - int(earlier[i])
        raise MetricsError(
            f"{name}: {lines(i)}: conflicting relevance for (user_id, item_id) = {_pair(df, i)}: "
            f"{df['relevance'].iat[i]:g} here but {df['relevance'].iat[j]:g} on {lines(j)}; "
            f"{len(conflict)} conflicting row(s). Keep one label per user and item"
        )
    repeat = earlier >= 0
    if repeat.any():
        keep = np.flatnonzero(~repeat)
        lines = lines.subset(keep)
        df = df.iloc[keep].reset_index(drop=True)
    return df, lines
