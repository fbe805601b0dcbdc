"""What counts against the quota: every content once, and every record with what it holds.

* A **content** (a file's bytes) counts its size once, however many analyses use it.
* A **record** (a working copy or snapshot) counts :data:`ANALYSIS_RECORD_BYTES` plus the
  UTF-8 bytes of its settings (as JSON), title and notes, plus for each of its files
  :data:`FILE_RECORD_BYTES` and the UTF-8 bytes of the file's name and role, plus, for a
  snapshot whose brief is kept (``store_briefs``), :data:`BRIEF_RECORD_BYTES` and the UTF-8
  bytes of the brief's JSON. The figure is kept in the record's ``meta_bytes`` column when it
  is written.

The store's total is the sum of both. A **client** (the owner secret given by the caller;
all calls without one form one client) counts its own records and, once each, every content
they use, shared with others or not: that is what it keeps stored.
"""

from __future__ import annotations

from typing import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from metrics_core.store import schema

__all__ = ["ANALYSIS_RECORD_BYTES", "FILE_RECORD_BYTES", "BRIEF_RECORD_BYTES", "record_bytes", "owned_by", "total_used",
           "client_used", "client_uses"]

#: Bytes each working copy or snapshot counts for its row, besides the texts it holds.
ANALYSIS_RECORD_BYTES = 512
#: Bytes each file entry of an analysis counts, besides its name and role.
FILE_RECORD_BYTES = 128
#: Bytes a kept brief counts for its row, besides its JSON.
BRIEF_RECORD_BYTES = 128


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def record_bytes(settings_json: str, title: str, notes: str, files: Iterable[tuple[str, str]],
                 brief: str | None = None) -> int:
    """What one record counts: ``files`` are its files' ``(name, role)``, ``brief`` the JSON of its
    kept brief (None: none kept)."""
    return (ANALYSIS_RECORD_BYTES + _utf8(settings_json) + _utf8(title) + _utf8(notes)
            + sum(FILE_RECORD_BYTES + _utf8(name) + _utf8(role) for name, role in files)
            + (0 if brief is None else BRIEF_RECORD_BYTES + _utf8(brief)))


def owned_by(owner_hash: str | None):
    """The SQL condition selecting one client's records."""
    column = schema.analyses.c.owner_sha256
    return column.is_(None) if owner_hash is None else column == owner_hash


def total_used(conn: Connection) -> int:
    """Every distinct content once plus every record."""
    contents = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(schema.blobs.c.size), 0))).scalar()
    records = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(schema.analyses.c.meta_bytes), 0))).scalar()
    return int(contents) + int(records)


def _client_digests(owner_hash: str | None):
    return (sa.select(schema.files.c.sha256)
            .join(schema.analyses, schema.analyses.c.id == schema.files.c.analysis_id)
            .where(owned_by(owner_hash)))


def client_used(conn: Connection, owner_hash: str | None) -> int:
    """One client's records plus, once each, the contents they use."""
    records = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(schema.analyses.c.meta_bytes), 0))
                           .where(owned_by(owner_hash))).scalar()
    contents = conn.execute(sa.select(sa.func.coalesce(sa.func.sum(schema.blobs.c.size), 0))
                            .where(schema.blobs.c.sha256.in_(_client_digests(owner_hash)))).scalar()
    return int(records) + int(contents)


def client_uses(conn: Connection, owner_hash: str | None, digest: str) -> bool:
    """Whether one of the client's records already uses the content ``digest``."""
    return conn.execute(_client_digests(owner_hash).where(schema.files.c.sha256 == digest).limit(1)).first() \
        is not None
