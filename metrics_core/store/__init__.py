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

Owners and revisions
--------------------
Every call that stores something takes ``owner``: the secret of the client acting (the
dashboard gives each browser a random one kept in a cookie, never in a URL; a library
caller passes any text or nothing, and all calls without one are one client). Only the
SHA-256 of a secret is stored. A working copy can be changed or deleted only by its owner
(:class:`NotOwnerError` otherwise); anyone who has its id can load it (``editable`` is
``False`` for them) and make their own copy with :meth:`AnalysisStore.copy`. Each change
of a working copy raises its ``revision``; ``update_working(..., revision=n)`` refuses with
:class:`StaleRevisionError` when it has changed since revision ``n`` (two tabs of one owner).

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
* The quota, ``$METRICS_CORE_STORE_QUOTA`` (default 10 GiB; e.g. ``500MB``, ``20GiB``),
  counts everything stored: each distinct content once, and every record (512 bytes, plus
  its settings as JSON, title and notes, plus 128 bytes and the name and role of each of its
  files, plus a snapshot's kept brief; see :mod:`metrics_core.store.accounting`). One client may fill at most
  ``$METRICS_CORE_STORE_CLIENT_SHARE`` of it (default 0.25): its own records and, once each,
  every content they use. A save that does not fit raises :class:`StoreFullError` with one
  line saying how full the store (or the client's share) is and what to do; a save that adds
  nothing (content already stored) is never refused. :meth:`AnalysisStore.check_can_store`
  / :meth:`AnalysisStore.can_store` answer the same question for an upload of ``n`` bytes
  (with its SHA-256: content already stored costs nothing) before it is read.
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
  ids) the first time the file is opened; a store of the previous version of these tables
  gains its new columns then (:mod:`metrics_core.store.migrate`).

API (``store = AnalysisStore()``)
---------------------------------
==========================================================  ===================================
``store.create_working(files, settings, title=, notes=, owner=)``  new working copy, returns its id
``store.update_working(id, files=, settings=, ..., owner=, revision=)``  replace what is given; new revision
``store.copy(id, owner=)``                                    the owner's own working copy of any analysis
``store.snapshot(working_id, title=, notes=)``                -> ``SnapshotReceipt(id, delete_token)``
``store.save_snapshot(files, settings, title=, notes=)``      same, from files directly
``store.load(id, owner=)``                                    -> :class:`SavedAnalysis` (either kind)
``store.exists(id)``                                          live analysis with that id?
``store.delete_snapshot(id, delete_token)``                   wrong token: StoreError
``store.delete_working(id, owner=)`` / ``store.delete(id, token=None, owner=)``  -> whether it existed
``store.keep_brief(id, settings_key, format_version, content, owner=)``  a snapshot's brief (JSON, at most 2 MiB; replaced by its owner only)
``store.stored_brief(id, settings_key, format_version)``     -> its JSON when kept under those, else None
``store.check_can_store(nbytes, owner=, sha256=)``           upload-time quota check (also ``can_store``)
``store.usage(owner=)``                                       -> :class:`StoreUsage` (store and client)
``store.purge_expired()``                                     remove expired working copies
``store.save(files, settings, title)``                        earlier interface: snapshot id only
``store.operator_delete(id)``                                 no token: for operators only
==========================================================  ===================================

``files`` is a list of :class:`SavedFile` (or ``(name, data[, role])`` tuples) or a
mapping ``{name: bytes}``; ``role`` is free text such as ``"run"`` or ``"qrels"``. A
:class:`SavedFile` given with its ``sha256`` (the hex SHA-256 of its bytes, computed by the caller
from those very bytes) is not hashed again; reading a file back always checks its bytes.
``settings`` is a JSON-serialisable dict (at most 64 KiB as JSON); titles hold at most 300
characters, notes 20,000, file names 1,000 and roles 100. Every error is a :class:`StoreError` (a
:class:`~metrics_core.errors.MetricsError`) with a one-line message fit to show as text.
"""

from metrics_core.store.analyses import DB_NAME, MAX_NAME_CHARS, AnalysisStore, check_file_name
from metrics_core.store.config import (CLIENT_SHARE_ENV, DIR_ENV, QUOTA_ENV, URL_ENV, WORKING_DAYS_ENV, StoreLimits,
                                       default_store_dir)
from metrics_core.store.errors import NotOwnerError, StaleRevisionError, StoreError, StoreFullError
from metrics_core.store.ids import (ID_PATTERN, TOKEN_PATTERN, new_analysis_id, new_owner_secret,
                                    validate_analysis_id)
from metrics_core.store.records import SNAPSHOT, WORKING, SavedAnalysis, SavedFile, SnapshotReceipt, StoreUsage

#: Kept for callers of the earlier module: the directory variable's name.
ENV_VAR = DIR_ENV

__all__ = [
    "ID_PATTERN", "TOKEN_PATTERN", "StoreError", "StoreFullError", "NotOwnerError", "StaleRevisionError",
    "SavedFile", "SavedAnalysis", "new_owner_secret", "CLIENT_SHARE_ENV",
    "SnapshotReceipt", "StoreUsage", "StoreLimits", "AnalysisStore", "default_store_dir", "new_analysis_id",
    "validate_analysis_id", "WORKING", "SNAPSHOT", "DB_NAME", "DIR_ENV", "URL_ENV", "QUOTA_ENV",
    "WORKING_DAYS_ENV", "ENV_VAR", "MAX_NAME_CHARS", "check_file_name",
]
