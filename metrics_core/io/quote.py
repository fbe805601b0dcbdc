"""Quoting file content in messages, never more than a short excerpt.

A message may quote a value, a column name or a row, but a file's content is
not shown whole (a first line can be a whole file, or a secret of a file
reached through a symlink): excerpts are cut to ``MAX_QUOTE`` characters.
"""

from __future__ import annotations

MAX_QUOTE = 80


def clip(text: str, n: int = MAX_QUOTE) -> str:
    """``text`` stripped and cut to ``n`` characters (ending in ``...`` when cut)."""
    text = str(text).strip()
    return text if len(text) <= n else text[: n - 3] + "..."


def quoted(value, n: int = MAX_QUOTE) -> str:
    """``repr(value)`` cut to ``n`` characters."""
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."
