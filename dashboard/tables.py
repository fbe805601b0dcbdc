"""Pure table helpers of the pages (no Streamlit): tested directly."""

from __future__ import annotations

from typing import Sequence

import pandas as pd


def selected_value(table: pd.DataFrame, column: str, rows: Sequence[int]) -> str | None:
    """``table[column]`` at the first selected row, as a string; None when nothing
    is selected or the selection points past the end of the table (a selection
    made on a longer table survives the table shrinking)."""
    if not rows:
        return None
    row = rows[0]
    if not isinstance(row, int) or row < 0 or row >= len(table):
        return None
    return str(table[column].iloc[row])


def has_user(ranked, user_id: str) -> bool:
    """True when ``user_id`` (compared as a string) is one of the ranked users."""
    return bool((ranked.user_ids.astype(str) == str(user_id)).any())
