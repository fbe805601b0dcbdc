"""File contents stored once per SHA-256, in chunks, and removed when nothing refers to them.

Many analyses (a working copy, its snapshots, other users' uploads of the same file) point
at one blob; a blob is deleted by :func:`collect_garbage` once no ``store_files`` row refers
to it. Callers hold a write transaction (writers take turns), so a blob cannot be removed
between the check that it exists and the row that starts using it.
"""

from __future__ import annotations

import hashlib
from typing import Iterable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from metrics_core.store import schema
from metrics_core.store.errors import StoreError

__all__ = ["DEFAULT_CHUNK_BYTES", "sha256_hex", "existing", "put", "announce", "write_chunks", "read",
           "collect_garbage", "used_bytes"]

#: Bytes per stored chunk: far below the 1 GB a single SQLite or PostgreSQL value may hold.
DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def existing(conn: Connection, digests: Iterable[str]) -> set[str]:
    """Which of ``digests`` are already stored."""
    wanted = sorted(set(digests))
    found: set[str] = set()
    for start in range(0, len(wanted), 500):  # bounded IN lists
        part = wanted[start:start + 500]
        found.update(conn.execute(sa.select(schema.blobs.c.sha256)
                                  .where(schema.blobs.c.sha256.in_(part))).scalars())
    return found


def put(conn: Connection, digest: str, data: bytes, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> None:
    """Store ``data`` under ``digest`` unless it is already there."""
    if existing(conn, [digest]):
        return
    announce(conn, digest, len(data), chunk_bytes)
    write_chunks(conn, digest, data, chunk_bytes)


def announce(conn: Connection, digest: str, size: int, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> None:
    """Insert the row of a new content (its size counts from now on) before its chunks, so
    that the quota can be checked before the bytes are written; the same transaction must
    then call :func:`write_chunks`."""
    count = max(1, -(-size // chunk_bytes))
    conn.execute(schema.blobs.insert().values(sha256=digest, size=size, chunk_count=count))


def write_chunks(conn: Connection, digest: str, data: bytes, chunk_bytes: int = DEFAULT_CHUNK_BYTES) -> None:
    """Write the chunks of a content announced by :func:`announce`."""
    view = memoryview(data)
    count = max(1, -(-len(view) // chunk_bytes))
    for seq in range(count):  # one row at a time: never more than one chunk copied at once
        conn.execute(schema.chunks.insert().values(
            sha256=digest, seq=seq, data=bytes(view[seq * chunk_bytes:(seq + 1) * chunk_bytes])))


def read(conn: Connection, digest: str) -> bytes:
    """The bytes stored under ``digest``, checked against it."""
    row = conn.execute(sa.select(schema.blobs.c.size, schema.blobs.c.chunk_count)
                       .where(schema.blobs.c.sha256 == digest)).first()
    if row is None:
        raise StoreError(f"the analysis store lost the content {digest[:12]}...; restore it from a backup")
    parts = []
    for seq in range(row.chunk_count):
        part = conn.execute(sa.select(schema.chunks.c.data).where(
            schema.chunks.c.sha256 == digest, schema.chunks.c.seq == seq)).scalar()
        if part is None:
            break
        parts.append(bytes(part))
    data = b"".join(parts)
    if len(data) != row.size or sha256_hex(data) != digest:
        raise StoreError(f"the analysis store holds damaged content {digest[:12]}...; restore it from a backup")
    return data


def collect_garbage(conn: Connection, candidates: Iterable[str]) -> int:
    """Delete those of ``candidates`` that no file refers to any more; return bytes freed."""
    freed = 0
    for digest in sorted(set(candidates)):
        used = conn.execute(sa.select(sa.literal(1)).select_from(schema.files)
                            .where(schema.files.c.sha256 == digest).limit(1)).first()
        if used is not None:
            continue
        size = conn.execute(sa.select(schema.blobs.c.size).where(schema.blobs.c.sha256 == digest)).scalar()
        if size is None:
            continue
        conn.execute(schema.chunks.delete().where(schema.chunks.c.sha256 == digest))
        conn.execute(schema.blobs.delete().where(schema.blobs.c.sha256 == digest))
        freed += size
    return freed


def used_bytes(conn: Connection) -> int:
    """Total size of the distinct contents stored."""
    return int(conn.execute(sa.select(sa.func.coalesce(sa.func.sum(schema.blobs.c.size), 0))).scalar())
