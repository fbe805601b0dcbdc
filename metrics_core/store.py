"""Saved analyses: uploaded files and settings stored under an unguessable id.

An analysis is the exact bytes of the files a user loaded (each with its file name and a
free-form ``role`` such as ``"run"`` or ``"qrels"``) plus a JSON-serialisable ``settings``
dict (K, gain, ties, ...). It is saved once and never modified: reopening the id gives
exactly that data, read-only.

* Ids are ``secrets.token_urlsafe(24)``: 32 characters of ``[A-Za-z0-9_-]`` carrying 192
  random bits. Every id passed in is checked against :data:`ID_PATTERN` before any lookup,
  so an id can never name a path or inject SQL (queries are parameterised anyway).
* Storage is one SQLite database, ``analyses.sqlite3``, in the store directory:
  ``$METRICS_CORE_STORE_DIR`` when set, else the user's data directory
  (``$XDG_DATA_HOME/metrics-core`` or ``~/.local/share/metrics-core`` on Linux,
  ``~/Library/Application Support/metrics-core`` on macOS, ``%LOCALAPPDATA%\\metrics-core`` on
  Windows). Each save is one transaction, so a crash never leaves half an analysis, and the
  data survives server restarts.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import sqlite3
import sys
from contextlib import closing
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from metrics_core.errors import MetricsError

__all__ = [
    "ID_PATTERN", "StoreError", "SavedFile", "SavedAnalysis", "AnalysisStore",
    "default_store_dir", "new_analysis_id", "validate_analysis_id",
]

#: A valid analysis id: what ``secrets.token_urlsafe(24)`` produces (32 url-safe characters).
ID_PATTERN = re.compile(r"\A[A-Za-z0-9_-]{32}\Z")
_ID_BYTES = 24
_DB_NAME = "analyses.sqlite3"
ENV_VAR = "METRICS_CORE_STORE_DIR"


class StoreError(MetricsError):
    """A malformed or unknown analysis id, or a store that cannot be used."""


@dataclass(frozen=True)
class SavedFile:
    """One stored file: its original ``name``, its ``role`` (e.g. ``"run"``) and exact bytes."""

    name: str
    data: bytes
    role: str = ""


@dataclass(frozen=True)
class SavedAnalysis:
    """A stored analysis as loaded back: id, creation time (UTC ISO 8601), settings, files."""

    id: str
    created: str
    settings: dict = field(default_factory=dict)
    files: tuple[SavedFile, ...] = ()
    title: str = ""

    def files_with_role(self, role: str) -> list[SavedFile]:
        return [f for f in self.files if f.role == role]


def default_store_dir() -> Path:
    """``$METRICS_CORE_STORE_DIR`` if set, else the platform's per-user data directory."""
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env).expanduser()
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "metrics-core"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "metrics-core"
    base = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
    return Path(base) / "metrics-core"


def new_analysis_id() -> str:
    """A fresh id with 192 bits from :mod:`secrets` (``token_urlsafe(24)``)."""
    return secrets.token_urlsafe(_ID_BYTES)


def validate_analysis_id(analysis_id: Any) -> str:
    """Return ``analysis_id`` if it is well formed, else raise :class:`StoreError`."""
    if not isinstance(analysis_id, str) or not ID_PATTERN.match(analysis_id):
        shown = repr(analysis_id)
        if len(shown) > 60:
            shown = shown[:57] + "..."
        raise StoreError(
            f"malformed analysis id {shown}: an id is 32 letters, digits, '-' or '_'; "
            "check that the link was copied completely")
    return analysis_id


_SCHEMA = """
CREATE TABLE IF NOT EXISTS analyses (
    id TEXT PRIMARY KEY,
    created TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    settings TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
    analysis_id TEXT NOT NULL REFERENCES analyses(id),
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (analysis_id, position)
);
"""


class AnalysisStore:
    """Saved analyses in one SQLite file under ``directory`` (default :func:`default_store_dir`)."""

    def __init__(self, directory: str | os.PathLike | None = None):
        self.directory = Path(directory).expanduser() if directory is not None else default_store_dir()
        self.path = self.directory / _DB_NAME

    def _connect(self) -> sqlite3.Connection:
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30)
            conn.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the analysis store at {self.path}: {exc}; set {ENV_VAR} to a writable directory"
            ) from None
        return conn

    def save(self, files: Iterable[SavedFile | tuple] | Mapping[str, bytes],
             settings: Mapping[str, Any] | None = None, title: str = "") -> str:
        """Store ``files`` and ``settings``; return the new id.

        ``files`` is a list of :class:`SavedFile` (or ``(name, data[, role])`` tuples) or a
        mapping ``{name: bytes}``. ``settings`` must be JSON-serialisable.
        """
        if isinstance(files, Mapping):
            items = [SavedFile(str(k), bytes(v)) for k, v in files.items()]
        else:
            items = [f if isinstance(f, SavedFile) else SavedFile(str(f[0]), bytes(f[1]), *(str(x) for x in f[2:3]))
                     for f in files]
        try:
            settings_json = json.dumps(dict(settings or {}), sort_keys=True, allow_nan=True)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"analysis settings must be JSON-serialisable: {exc}") from None
        created = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with closing(self._connect()) as conn:
            for _ in range(5):
                analysis_id = new_analysis_id()
                try:
                    with conn:
                        conn.execute("INSERT INTO analyses (id, created, title, settings) VALUES (?, ?, ?, ?)",
                                     (analysis_id, created, str(title), settings_json))
                        conn.executemany(
                            "INSERT INTO files (analysis_id, position, name, role, data) VALUES (?, ?, ?, ?, ?)",
                            [(analysis_id, i, f.name, f.role, sqlite3.Binary(bytes(f.data)))
                             for i, f in enumerate(items)])
                    return analysis_id
                except sqlite3.IntegrityError:
                    continue  # an id collision (practically impossible): draw another
                except sqlite3.Error as exc:
                    raise StoreError(f"cannot save the analysis in {self.path}: {exc}") from None
        raise StoreError("could not allocate a unique analysis id")

    def exists(self, analysis_id: str) -> bool:
        """Whether a well-formed id names a stored analysis (malformed ids raise StoreError)."""
        validate_analysis_id(analysis_id)
        with closing(self._connect()) as conn:
            row = conn.execute("SELECT 1 FROM analyses WHERE id = ?", (analysis_id,)).fetchone()
        return row is not None

    def load(self, analysis_id: str) -> SavedAnalysis:
        """Load an analysis; :class:`StoreError` with a clear message when malformed or unknown."""
        validate_analysis_id(analysis_id)
        try:
            with closing(self._connect()) as conn:
                row = conn.execute("SELECT created, title, settings FROM analyses WHERE id = ?",
                                   (analysis_id,)).fetchone()
                if row is None:
                    raise StoreError(
                        f"no saved analysis with id {analysis_id} on this server; "
                        "it may have been saved on another deployment or deleted")
                file_rows = conn.execute(
                    "SELECT name, role, data FROM files WHERE analysis_id = ? ORDER BY position",
                    (analysis_id,)).fetchall()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot read the analysis store at {self.path}: {exc}") from None
        created, title, settings_json = row
        return SavedAnalysis(
            id=analysis_id, created=created, title=title, settings=json.loads(settings_json),
            files=tuple(SavedFile(name=n, role=r, data=bytes(d)) for n, r, d in file_rows))

    def delete(self, analysis_id: str) -> bool:
        """Remove an analysis; return whether it existed."""
        validate_analysis_id(analysis_id)
        with closing(self._connect()) as conn, conn:
            conn.execute("DELETE FROM files WHERE analysis_id = ?", (analysis_id,))
            cur = conn.execute("DELETE FROM analyses WHERE id = ?", (analysis_id,))
        return cur.rowcount > 0
