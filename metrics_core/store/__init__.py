"""The analysis store: what a user uploaded and chose, kept on the server under an
unguessable id.

Two kinds of records
--------------------
* **Working copies** (``kind == "working"``): the analysis a user is working on. The
  dashboard creates one as soon as something is uploaded and updates it as files and
  choices change; its id goes in every page's URL (``?analysis=<id>``), so a reload or a
  copied address bar shows the same view. A working copy is removed after
  ``$METRICS_CORE_STORE_WORKING_DAYS`` (default 30) days without use; every load or update
  restarts that clock.
* **Snapshots** (``kind == "snapshot"``): read-only copies with a title and notes, made by
  "Share", kept until deleted. Saving one returns, once, a separate secret delete token;
  only its SHA-256 is stored, and deleting needs the token (compared in constant time).

Ids are ``secrets.token_urlsafe(24)`` (32 characters, 192 bits), delete tokens
``secrets.token_urlsafe(32)`` (43 characters, 256 bits). Both are checked against
:data:`ID_PATTERN` / :data:`TOKEN_PATTERN` before any query; a malformed one raises
:class:`StoreError` with one line.

Storage
-------
* File contents are stored once per SHA-256, in chunks of 8 MiB (never near the 1 GB
  limit of a single SQLite or PostgreSQL value). A working copy, its snapshots and
  anyone else's upload of the same bytes share one copy; a content is deleted when no
  analysis uses it any more.
* The total of the distinct contents is capped by ``$METRICS_CORE_STORE_QUOTA`` (default
  10 GiB; e.g. ``500MB``, ``20GiB``). A save that does not fit raises
  :class:`StoreFullError` with one line saying how full the store is and what to do;
  :meth:`AnalysisStore.check_can_store` / :meth:`AnalysisStore.can_store` answer the same
  question for an upload of ``n`` bytes before it is read.
* **SQLite** is the embedded default: ``analyses.sqlite3`` in ``$METRICS_CORE_STORE_DIR``
  (else ``$XDG_DATA_HOME/metrics-core`` or ``~/.local/share/metrics-core`` on Linux,
  ``~/Library/Application Support/metrics-core`` on macOS, ``%LOCALAPPDATA%\\metrics-core``
  on Windows); directory 0700, file 0600; deleting shrinks the file
  (``auto_vacuum=INCREMENTAL``).
* ``$METRICS_CORE_STORE_URL`` selects any SQLAlchemy URL instead; PostgreSQL
  (``postgresql+psycopg://user:password@host:5432/dbname``, driver ``psycopg`` 3) is the
  tested team option. Deleted rows are gone at once; PostgreSQL's autovacuum reuses the space.
* Every save is one transaction (a crash, even SIGKILL, leaves all of it or nothing);
  writers take turns, readers see a consistent state.
* Analyses saved by the earlier one-table SQLite format are moved in as snapshots (same
  ids) the first time the file is opened.

API (``store = AnalysisStore()``)
---------------------------------
==========================================================  ===================================
``store.create_working(files, settings, title=, notes=)``    new working copy, returns its id
``store.update_working(id, files=, settings=, title=, notes=)``  replace what is given
``store.snapshot(working_id, title=, notes=)``                -> ``SnapshotReceipt(id, delete_token)``
``store.save_snapshot(files, settings, title=, notes=)``      same, from files directly
``store.load(id)``                                            -> :class:`SavedAnalysis` (either kind)
``store.exists(id)``                                          live analysis with that id?
``store.delete_snapshot(id, delete_token)``                   wrong token: StoreError
``store.delete_working(id)`` / ``store.delete(id, token=None)``  -> whether it existed
``store.check_can_store(nbytes)`` / ``store.can_store(nbytes)``  upload-time quota check
``store.usage()``                                             -> ``StoreUsage(used, quota, free)``
``store.purge_expired()``                                     remove expired working copies
``store.save(files, settings, title)``                        earlier interface: snapshot id only
``store.operator_delete(id)``                                 no token: for operators only
==========================================================  ===================================

``files`` is a list of :class:`SavedFile` (or ``(name, data[, role])`` tuples) or a
mapping ``{name: bytes}``; ``role`` is free text such as ``"run"`` or ``"qrels"``.
``settings`` is a JSON-serialisable dict (at most 1 MiB as JSON); titles hold at most 300
characters, notes 20,000. Every error is a :class:`StoreError` (a
:class:`~metrics_core.errors.MetricsError`) with a one-line message fit to show as text.
"""

from metrics_core.store.analyses import DB_NAME, AnalysisStore
from metrics_core.store.config import (DIR_ENV, QUOTA_ENV, URL_ENV, WORKING_DAYS_ENV, StoreLimits,
                                       default_store_dir)
from metrics_core.store.errors import StoreError, StoreFullError
from metrics_core.store.ids import ID_PATTERN, TOKEN_PATTERN, new_analysis_id, validate_analysis_id
from metrics_core.store.records import SNAPSHOT, WORKING, SavedAnalysis, SavedFile, SnapshotReceipt, StoreUsage

#: Kept for callers of the earlier module: the directory variable's name.
ENV_VAR = DIR_ENV

__all__ = [
    "ID_PATTERN", "TOKEN_PATTERN", "StoreError", "StoreFullError", "SavedFile", "SavedAnalysis",
    "SnapshotReceipt", "StoreUsage", "StoreLimits", "AnalysisStore", "default_store_dir", "new_analysis_id",
    "validate_analysis_id", "WORKING", "SNAPSHOT", "DB_NAME", "DIR_ENV", "URL_ENV", "QUOTA_ENV",
    "WORKING_DAYS_ENV", "ENV_VAR",
]
