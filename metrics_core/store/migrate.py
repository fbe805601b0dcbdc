"""Brings a store written by an earlier version of these tables up to date when it is opened.

Version 1 had no owner, revision or record size on ``store_analyses``. Opening it adds the
three columns (existing working copies get no owner: only a caller without an owner secret,
such as a script using the library, can change them; in the dashboard they open read-only,
with "make my own copy"), and counts each existing record's size, so the quota covers
what was stored before the upgrade too. Runs inside the transaction that creates the tables.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from metrics_core.store import accounting, schema

__all__ = ["add_columns", "count_records"]

# Columns added by version 2, as ``ALTER TABLE ... ADD COLUMN`` clauses (SQLite and PostgreSQL).
_NEW_COLUMNS = {
    "owner_sha256": "VARCHAR(64)",
    "revision": "INTEGER NOT NULL DEFAULT 1",
    "meta_bytes": "BIGINT NOT NULL DEFAULT 0",
}


def add_columns(conn: Connection) -> list[str]:
    """Add the columns a version-1 ``store_analyses`` lacks; return their names."""
    present = {c["name"] for c in sa.inspect(conn).get_columns(schema.analyses.name)}
    added = []
    for name, ddl in _NEW_COLUMNS.items():
        if name not in present:
            conn.execute(sa.text(f"ALTER TABLE {schema.analyses.name} ADD COLUMN {name} {ddl}"))
            added.append(name)
    conn.execute(sa.text(f"CREATE INDEX IF NOT EXISTS ix_store_analyses_owner "
                         f"ON {schema.analyses.name} (owner_sha256)"))
    return added


def count_records(conn: Connection) -> int:
    """Fill ``meta_bytes`` of the records that have none yet (every real record counts at
    least :data:`~metrics_core.store.accounting.ANALYSIS_RECORD_BYTES`); return how many."""
    a, f = schema.analyses.c, schema.files.c
    rows = conn.execute(sa.select(a.id, a.settings, a.title, a.notes).where(a.meta_bytes == 0)).all()
    for row in rows:
        names = conn.execute(sa.select(f.name, f.role).where(f.analysis_id == row.id)).all()
        size = accounting.record_bytes(row.settings or "", row.title or "", row.notes or "",
                                       [(n.name, n.role) for n in names])
        conn.execute(schema.analyses.update().where(a.id == row.id).values(meta_bytes=size))
    conn.execute(schema.meta.update().where(schema.meta.c.key == schema.VERSION_KEY)
                 .values(value=schema.SCHEMA_VERSION))
    return len(rows)
