"""Looking at an uploaded file's columns, to offer a column mapping only when
one can fix the problem (pure functions, no Streamlit)."""

from __future__ import annotations

from metrics_core.errors import MetricsError
from metrics_core.io import ROLES, SUPPORTED_FORMATS  # noqa: F401 - the Data page names the formats read
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


#: The roles a mapping form offers for each kind of file: a ground truth has user, item and
#: relevance; a model's results (once a ground truth is loaded) user, item and score or rank;
#: a model's results without a ground truth may also carry the relevance.
KIND_ROLES = {"qrels": ("user_id", "item_id", "relevance"),
              "run": ("user_id", "item_id", "score", "rank"),
              "auto": ROLES}


#: What each kind of file holds, said above its mapping form.
ROLE_HINTS = {"qrels": "A ground truth has a user, an item and a relevance column.",
              "run": "A model's results have a user, an item and a score or a rank column (lower rank is better).",
              "auto": "A model's results have a user, an item and a score or a rank column, and may carry "
                      "the relevance while no ground truth is loaded."}


def roles_for(kind: str) -> tuple[str, ...]:
    """The roles a file of ``kind`` ("qrels", "run" or "auto") can map."""
    return KIND_ROLES[kind]


def _words(name: str) -> set[str]:
    return set(normalise(name).split("_"))


def _word_roles(name: str, roles: tuple[str, ...]) -> list[str]:
    """The roles one of whose one-word names is a word of ``name`` (``clicks_last_hour``:
    relevance, by ``clicks``)."""
    words = _words(name)
    return [role for role in roles if words & {a for a in (role, *ALIASES[role]) if "_" not in a}]


def _exact(names: list[str], role: str, taken: set[str]) -> str | None:
    """The first column not already taken named like ``role`` (its own name or an alias)."""
    keys = (role, *ALIASES[role])
    return next((n for n in names if n not in taken and normalise(n) in keys), None)


def _by_word(names: list[str], role: str, taken: set[str], roles: tuple[str, ...]) -> str | None:
    """The first column not already taken whose name contains a word naming ``role`` and no
    other role of the form (``clicks_last_hour`` for relevance; not ``user_clicks``)."""
    return next((n for n in names if n not in taken and _word_roles(n, roles) == [role]), None)


def mapping_proposal(data: bytes, name: str, kind: str, current: dict[str, str]) -> dict[str, str | None] | None:
    """``{role: column or None}`` for the roles of ``kind`` (:func:`roles_for`) to prefill a
    mapping form, or None when a mapping cannot help: TREC files, unreadable headers, or
    files whose columns are already recognised (their problem is in the values). ``kind``
    is "run", "qrels" or "auto"."""
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
    roles = roles_for(kind)
    proposal: dict[str, str | None] = {role: None for role in roles}
    taken = {c for role, c in current.items() if role in roles and c in names}
    for role in roles:
        if current.get(role) in names:
            proposal[role] = current[role]
    # exact names first, then names containing a role's word: a proposal only, the user applies it
    for guess in (lambda role: _exact(names, role, taken), lambda role: _by_word(names, role, taken, roles)):
        for role in roles:
            if proposal[role] is None:
                proposal[role] = guess(role)
                if proposal[role] is not None:
                    taken.add(proposal[role])
    return proposal


def columns_of(data: bytes, name: str) -> list[str]:
    """The column names a mapping form offers (empty for TREC or unreadable files)."""
    try:
        names, is_trec = header(data, name)
    except Exception:  # noqa: BLE001 - an unreadable header: the read error says why
        return []
    return [] if is_trec else names
