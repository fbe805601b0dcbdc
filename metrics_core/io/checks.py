"""Row-level checks on a tidy frame: duplicate (user, item) pairs.

* In a run every (user, item) pair may appear once: a repeat is an error
  (which score would count?).
* In ground truth, exact repeats (same relevance) are dropped silently; the
  same pair with different relevance is an error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import MetricsError
from .lines import LineMap


def _first_seen(df: pd.DataFrame, i: int) -> int:
    u, it = df["user_id"].iat[i], df["item_id"].iat[i]
    same = np.flatnonzero(((df["user_id"] == u) & (df["item_id"] == it)).to_numpy())
    return int(same[0])


def check_run_duplicates(df: pd.DataFrame, name: str, lines: LineMap) -> None:
    """Refuse a run with a repeated (user_id, item_id)."""
    dup = df.duplicated(["user_id", "item_id"], keep="first").to_numpy()
    if dup.any():
        bad = np.flatnonzero(dup)
        i = int(bad[0])
        j = _first_seen(df, i)
        raise MetricsError(
            f"{name}: {lines(i)}: duplicate (user_id, item_id) = ({df['user_id'].iat[i]!r}, {df['item_id'].iat[i]!r}), "
            f"first seen on {lines(j)}; {len(bad)} duplicate row(s). Keep one row per user and item"
        )


def dedupe_qrels(df: pd.DataFrame, name: str, lines: LineMap) -> tuple[pd.DataFrame, LineMap]:
    """Drop exact repeats; refuse a pair labelled with two different relevances."""
    exact = df.duplicated(["user_id", "item_id", "relevance"], keep="first").to_numpy()
    if exact.any():
        keep = np.flatnonzero(~exact)
        lines = lines.subset(keep)
        df = df.iloc[keep].reset_index(drop=True)
    dup = df.duplicated(["user_id", "item_id"], keep="first").to_numpy()
    if dup.any():
        bad = np.flatnonzero(dup)
        i = int(bad[0])
        j = _first_seen(df, i)
        raise MetricsError(
            f"{name}: {lines(i)}: conflicting relevance for (user_id, item_id) = ({df['user_id'].iat[i]!r}, "
            f"{df['item_id'].iat[i]!r}): {df['relevance'].iat[i]:g} here but {df['relevance'].iat[j]:g} on "
            f"{lines(j)}; {len(bad)} conflicting row(s). Keep one label per user and item"
        )
    return df, lines
