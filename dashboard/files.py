"""Looking at an uploaded file's columns, to offer a column mapping only when
one can fix the problem (pure functions, no Streamlit)."""

from __future__ import annotations

from metrics_core.errors import MetricsError
from metrics_core.io import ROLES
from metrics_core.io import formats as F
from metrics_core.io.columns import ALIASES, detect, normalise
from metrics_core.io.delimited import first_line, header_names
from metrics_core.io.jsonl import object_keys
from metrics_core.io.parquet import parquet_names
from metrics_core.io.source import load_source
from metrics_core.io.trec import trec_kind

_KNOWN = {a for aliases in ALIASES.values() for a in aliases} | set(ALIASES)


def header(data: bytes, name: str) -> tuple[list[str], bool]:
    """``(column names, is_trec)`` of a file; TREC files have no column names."""
    src = load_source(data, name)
    if src.fmt == F.PARQUET:
        return list(parquet_names(src.data, None, name)), False
    if src.fmt == F.TREC:
        return [], True
    line = first_line(src.data)[0]
    if line.lstrip()[:1] == "{":
        try:
            return object_keys(line, name), False
        except MetricsError:  # too deep, not JSON or not an object: the read error says why
            return [], False
    delimiter = "\t" if "\t" in line else "," if "," in line else None
    names = header_names(line, delimiter) if delimiter else line.split()
    if not ({normalise(n) for n in names} & _KNOWN) and trec_kind(line.split()):
        return [], True
    return names, False


def _guess(names: list[str], role: str, taken: set[str]) -> str | None:
    """The first column named like ``role`` (its own name or an alias) not already taken."""
    keys = (role, *ALIASES[role])
    for n in names:
        if n not in taken and normalise(n) in keys:
            return n
    return None


def mapping_proposal(data: bytes, name: str, kind: str, current: dict[str, str]) -> dict[str, str | None] | None:
    """``{role: column or None}`` to prefill a mapping form, or None when a mapping cannot
    help: TREC files, unreadable headers, or files whose columns are already recognised
    (their problem is in the values). ``kind`` is "run", "qrels" or "auto"."""
    try:
        names, is_trec = header(data, name)
    except Exception:  # noqa: BLE001 - an unreadable header: the read error says why
        return None
    if is_trec or not names:
        return None
    try:
        detect(names, kind, name, current or None)
    except MetricsError:
        pass
    else:
        return None
    proposal: dict[str, str | None] = {}
    taken: set[str] = set()
    for role in ROLES:
        chosen = current.get(role) if current.get(role) in names else _guess(names, role, taken)
        proposal[role] = chosen
        if chosen is not None:
            taken.add(chosen)
    return proposal


def columns_of(data: bytes, name: str) -> list[str]:
    """The column names a mapping form offers (empty for TREC or unreadable files)."""
    try:
        names, is_trec = header(data, name)
    except Exception:  # noqa: BLE001 - an unreadable header: the read error says why
        return []
    return [] if is_trec else names
