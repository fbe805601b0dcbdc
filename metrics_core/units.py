"""What one row of per-user values is: users, queries or sessions, named once per analysis.

A recommender's rows are users, a search engine's are queries, a session-based recommender's are
sessions; the computation is the same, the words are not. An analysis keeps its unit as a setting
(``Decision.unit``, ``--unit`` on the command line, ``unit`` in a saved view's address) and every
sentence, table header and file name it writes says that word: :func:`noun` and :func:`count`.
"""

from __future__ import annotations

from metrics_core.errors import MetricsError
from metrics_core.formats import count as _count

__all__ = ["UNITS", "DEFAULT_UNIT", "check_unit", "noun", "count"]

#: The units offered, plural -> singular.
UNITS = {"users": "user", "queries": "query", "sessions": "session"}
DEFAULT_UNIT = "users"


def check_unit(unit: str) -> str:
    """``unit`` when it is one of :data:`UNITS` (a one-line error otherwise)."""
    name = str(unit).strip().lower()
    if name not in UNITS:
        raise MetricsError(f"unknown unit {unit!r}; use one of: {', '.join(UNITS)}")
    return name


def noun(unit: str, n: int | None = None) -> str:
    """The unit's word: plural, or singular when ``n`` is 1 (``noun("queries", 1) == "query"``)."""
    unit = check_unit(unit)
    return UNITS[unit] if n is not None and int(n) == 1 else unit


def count(n: int, unit: str) -> str:
    """``1 query``, ``5,778 queries`` (thousands separators)."""
    return f"{_count(n)} {noun(unit, n)}"
