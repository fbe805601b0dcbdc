"""The store's tables (SQLAlchemy Core), the same on SQLite and PostgreSQL.

* ``store_blobs`` / ``store_chunks``: file contents, one row per distinct SHA-256, cut into
  chunks (no single value comes near SQLite's or PostgreSQL's 1 GB limit).
* ``store_analyses``: one row per working copy or snapshot (kind, times, title, notes,
  settings as JSON, the hash of a snapshot's delete token, the hash of the owner's secret,
  a working copy's revision, and the bytes its record counts against the quota).
* ``store_files``: the files of an analysis, in order, each pointing at a blob.
* ``store_briefs``: what a snapshot's first screen shows (its decision brief as JSON), at most one
  per snapshot, with the key of the settings it was computed under and the brief's format version;
  computed by the server, so a link opens without reading the files.
* ``store_meta``: the schema version; its ``lock`` row serialises writers (``FOR UPDATE`` on
  PostgreSQL; SQLite writers take the database lock with ``BEGIN IMMEDIATE``).

Times are UTC seconds since the epoch (floats).

Version 2 added ``owner_sha256``, ``revision`` and ``meta_bytes`` to ``store_analyses``;
:mod:`metrics_core.store.migrate` adds them to a version-1 store when it is opened.
``store_briefs`` came later in version 2: a store without it gains the (empty) table when opened.
"""

from __future__ import annotations

import sqlalchemy as sa

__all__ = ["SCHEMA_VERSION", "VERSION_KEY", "LOCK_KEY", "metadata", "meta", "blobs", "chunks", "analyses", "files", "briefs"]

SCHEMA_VERSION = "2"
VERSION_KEY = "schema_version"
LOCK_KEY = "lock"

metadata = sa.MetaData()

meta = sa.Table(
    "store_meta", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

blobs = sa.Table(
    "store_blobs", metadata,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("chunk_count", sa.Integer, nullable=False),
)

chunks = sa.Table(
    "store_chunks", metadata,
    sa.Column("sha256", sa.String(64), sa.ForeignKey("store_blobs.sha256"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True),
    sa.Column("data", sa.LargeBinary, nullable=False),
)

analyses = sa.Table(
    "store_analyses", metadata,
    sa.Column("id", sa.String(32), primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
    sa.Column("updated_at", sa.Double, nullable=False),
    sa.Column("expires_at", sa.Double, nullable=True),
    sa.Column("title", sa.Text, nullable=False, default=""),
    sa.Column("notes", sa.Text, nullable=False, default=""),
    sa.Column("settings", sa.Text, nullable=False),
    sa.Column("delete_token_sha256", sa.String(64), nullable=True),
    # SHA-256 of the secret of the client that saved it (NULL: a library caller without one)
    sa.Column("owner_sha256", sa.String(64), nullable=True),
    # a working copy's revision: 1 when created, one more on every change of its content
    sa.Column("revision", sa.Integer, nullable=False, server_default="1"),
    # what the record itself counts against the quota (see metrics_core.store.accounting)
    sa.Column("meta_bytes", sa.BigInteger, nullable=False, server_default="0"),
    sa.Index("ix_store_analyses_expiry", "kind", "expires_at"),
    sa.Index("ix_store_analyses_owner", "owner_sha256"),
)

files = sa.Table(
    "store_files", metadata,
    sa.Column("analysis_id", sa.String(32), sa.ForeignKey("store_analyses.id"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("role", sa.Text, nullable=False),
    sa.Column("sha256", sa.String(64), sa.ForeignKey("store_blobs.sha256"), nullable=False),
    sa.Index("ix_store_files_sha256", "sha256"),
)

briefs = sa.Table(
    "store_briefs", metadata,
    sa.Column("analysis_id", sa.String(32), sa.ForeignKey("store_analyses.id"), primary_key=True),
    # SHA-256 of everything the brief was computed under (decision, conventions, users, format version)
    sa.Column("settings_key", sa.String(64), nullable=False),
    # metrics_core.brief.record.FORMAT_VERSION of the content
    sa.Column("format", sa.String(32), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("created_at", sa.Double, nullable=False),
)
