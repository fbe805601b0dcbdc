"""Moves analyses saved by the earlier one-table SQLite format (tables ``analyses`` and
``files``: a full copy of every file per save) into the current tables as snapshots.

Those analyses were read-only and had no delete token; they keep their ids, titles,
settings and files and stay read-only (an operator can remove them with
``AnalysisStore.operator_delete``).
"""

from __future__ import annotations

from datetime import datetime, timezone

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from metrics_core.store import blobs, schema
from metrics_core.store.records import SNAPSHOT

__all__ = ["migrate"]

_analyses = sa.table("analyses", sa.column("id"), sa.column("created"), sa.column("title"), sa.column("settings"))
_files = sa.table("files", sa.column("analysis_id"), sa.column("position"), sa.column("name"), sa.column("role"),
                  sa.column("data"))


def _epoch(iso: str) -> float:
    try:
        parsed = datetime.fromisoformat(iso)
    except (TypeError, ValueError):
        return 0.0
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)).timestamp()


def migrate(conn: Connection) -> int:
    """Copy the earlier format's analyses (if any) and drop its tables; return how many."""
    inspector = sa.inspect(conn)
    if not (inspector.has_table("analyses") and inspector.has_table("files")):
        return 0
    moved = 0
    for row in conn.execute(sa.select(_analyses)).all():
        if conn.execute(sa.select(schema.analyses.c.id).where(schema.analyses.c.id == row.id)).first():
            continue
        created = _epoch(row.created)
        conn.execute(schema.analyses.insert().values(
            id=row.id, kind=SNAPSHOT, created_at=created, updated_at=created, expires_at=None,
            title=row.title or "", notes="", settings=row.settings, delete_token_sha256=None))
        positions = conn.execute(sa.select(_files.c.position).where(_files.c.analysis_id == row.id)
                                 .order_by(_files.c.position)).scalars().all()
        for position in positions:  # one file in memory at a time
            f = conn.execute(sa.select(_files).where(_files.c.analysis_id == row.id,
                                                     _files.c.position == position)).one()
            data = bytes(f.data)
            digest = blobs.sha256_hex(data)
            blobs.put(conn, digest, data)
            conn.execute(schema.files.insert().values(analysis_id=row.id, position=position, name=f.name,
                                                      role=f.role, sha256=digest))
        moved += 1
    conn.execute(sa.text("DROP TABLE files"))
    conn.execute(sa.text("DROP TABLE analyses"))
    return moved
