"""Row-level checks on a tidy frame: duplicate (user, item) pairs.

* In a run every (user, item) pair may appear once: a repeat is an error
  (which score would count?).
* In ground truth, exact repeats (same relevance) are dropped silently; the
  same pair with different relevance is an error.

Pairs are compared as integer keys (dictionary codes of user and item,
``key = user_code * n_items + item_code``) with one stable sort: no Python
loop over rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from .lines import LineMap


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
    return f"({df['user_id'].iat[i]!r}, {df['item_id'].iat[i]!r})"


def check_run_duplicates(df: pd.DataFrame, name: str, lines: LineMap, key: np.ndarray | None = None) -> None:
    """Refuse a run with a repeated (user_id, item_id); ``key`` from :func:`pair_keys` if already known."""
    key = pair_keys(df["user_id"], df["item_id"]) if key is None else key
    bad = repeats(key)
    if len(bad):
        i = int(bad[0])
        j = int(np.flatnonzero(key == key[i])[0])
        raise MetricsError(
            f"{name}: {lines(i)}: duplicate (user_id, item_id) = {_pair(df, i)}, first seen on {lines(j)}; "
            f"{len(bad)} duplicate row(s). Keep one row per user and item"
        )


def dedupe_qrels(df: pd.DataFrame, name: str, lines: LineMap,
                 key: np.ndarray | None = None) -> tuple[pd.DataFrame, LineMap]:
    """Drop exact repeats; refuse a pair labelled with two different relevances."""
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
