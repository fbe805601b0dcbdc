"""Logged-feedback tables for off-policy evaluation: what a logging policy showed and what it earned.

One row is one logged action (an item shown in a context). Columns, found by
name (after trimming, lower-casing, spaces and hyphens to underscores) or
given explicitly with ``columns={role: source column}``:

* ``user_id`` (the context; any user alias, or ``context``/``context_id``),
* ``item_id`` (the action shown; any item alias, or ``action``),
* ``reward`` (``reward``, ``click``, ``clicks``, ``clicked``, ``conversion``,
  ``label``): a finite number,
* ``propensity`` (``propensity``, ``propensity_score``, ``pscore``): the
  logging policy's probability of the logged action, in (0, 1],
* optional ``position`` (``position``, ``pos``, ``slot``): the slot of a
  ranked list, smaller is higher,
* optional ``slate_id`` (``slate_id``, ``impression_id``, ``request_id``):
  rows of one shown list,
* optional ``propensity_cascade`` (``propensity_cascade``, ``pscore_cascade``):
  the logging policy's probability of the list's top part down to this slot
  (the reward-interaction IPS of slates needs it),
* optional ``propensity_slate`` (``propensity_slate``, ``pscore_slate``,
  ``slate_propensity``): the logging policy's probability of the whole slate
  (the standard IPS of slates reads it; without it, ``propensity_cascade`` at
  the slate's last slot).

Other columns are kept as read (context features for the reward model).
A propensity of 0, below 0 or above 1 is refused with the line that holds it:
importance weights divide by it.
"""

from __future__ import annotations

import pyarrow as pa

from ..errors import MetricsError
from .columns import ALIASES, normalise
from .convert import ids, numbers
from .features import _all_columns
from .source import load_source

LOG_ALIASES: dict[str, tuple[str, ...]] = {
    "user_id": ALIASES["user_id"] + ("context", "context_id"),
    "item_id": ALIASES["item_id"] + ("action", "action_id"),
    "reward": ("reward", "click", "clicks", "clicked", "conversion", "label"),
    "propensity": ("propensity", "propensity_score", "pscore", "logging_propensity"),
    "position": ("position", "pos", "slot"),
    "slate_id": ("slate_id", "impression_id", "request_id", "list_id"),
    "propensity_cascade": ("propensity_cascade", "pscore_cascade"),
    "propensity_slate": ("propensity_slate", "pscore_slate", "slate_propensity"),
}
REQUIRED = ("user_id", "item_id", "reward", "propensity")


def _roles(names: list[str], source: str, columns: dict | None) -> dict[str, str | None]:
    """Source column of every role: the explicit mapping, else the first alias present."""
    keys = {normalise(n): n for n in names}
    roles: dict[str, str | None] = {}
    explicit = dict(columns or {})
    unknown = [k for k in explicit if k not in LOG_ALIASES]
    if unknown:
        raise MetricsError(f"unknown log column role {unknown[0]!r}; use one of {', '.join(LOG_ALIASES)}")
    for role, aliases in LOG_ALIASES.items():
        if role in explicit:
            if explicit[role] not in names:
                raise MetricsError(f"{source}: column {explicit[role]!r} (given for {role}) not found; "
                                   f"columns found: {', '.join(repr(n) for n in names)}")
            roles[role] = explicit[role]
            continue
        roles[role] = next((keys[a] for a in aliases if a in keys), None)
        if roles[role] is None and role in REQUIRED:
            raise MetricsError(f"{source}: required {role} column missing (looked for {', '.join(aliases)}); "
                               f"columns found: {', '.join(repr(n) for n in names)}; name it with --log-columns "
                               f"{role}=COLUMN")
    return roles


def check_propensities(values, source: str, where) -> None:
    """Refuse a propensity outside (0, 1], naming the first row (``where(i)`` -> "line 3")."""
    import numpy as np

    bad = np.flatnonzero(~((values > 0) & (values <= 1)))
    if len(bad):
        i = int(bad[0])
        raise MetricsError(f"{source}: {where(i)}: propensity {values[i]:g} is outside (0, 1]; {len(bad)} row(s) "
                           "are. A propensity is the logging policy's probability of the logged action: fix the "
                           "column or leave those rows out")


def read_log(path_or_buffer, *, name: str | None = None, columns: dict | None = None):
    """Read a logged-feedback table into ``(DataFrame, roles)``.

    The frame has ``user_id``, ``item_id`` (exact text), ``reward``,
    ``propensity`` (float64), the optional roles present, then every other
    column as read. ``roles`` maps each role to its source column (None when
    absent). Raises :class:`MetricsError` with a one-line message for bad input.
    """
    src = load_source(path_or_buffer, name)
    table, lines, _ = _all_columns(src)
    names = table.column_names
    roles = _roles(names, src.name, columns)
    out: dict[str, object] = {}
    for role in ("user_id", "item_id", "slate_id"):
        if roles[role] is not None:
            out[role] = ids(table[roles[role]], role, roles[role], src.name, lines)
    for role in ("reward", "propensity", "position", "propensity_cascade", "propensity_slate"):
        if roles[role] is not None:
            out[role] = pa.array(numbers(table[roles[role]], role, roles[role], src.name, lines), pa.float64())
    for role in ("propensity", "propensity_cascade", "propensity_slate"):
        if role in out:
            check_propensities(out[role].to_numpy(), src.name, lines)
    used = {c for c in roles.values() if c is not None}
    for n in names:
        if n not in used and n not in out:
            out[n] = table[n]
    return pa.table(out).to_pandas(), roles


__all__ = ["LOG_ALIASES", "check_propensities", "read_log"]
