"""Connections: one SQLAlchemy engine per database URL and process, with the store's
transaction rules.

* **SQLite** (embedded default): the directory is created owner-only (0700) and the database
  file is created 0600 before SQLite opens it (SQLite gives its journal the same mode). The
  file uses ``auto_vacuum=INCREMENTAL``, so deleting data and then running
  ``PRAGMA incremental_vacuum`` gives the space back to the file system. pysqlite's own
  transaction handling is switched off: reads run in ``BEGIN`` (a consistent view),
  writes in ``BEGIN IMMEDIATE`` (one writer at a time, others wait up to 30 s).
* **PostgreSQL** (or any other SQLAlchemy URL): reads run in ``REPEATABLE READ`` (a
  consistent view); writes lock the ``store_meta`` lock row (``SELECT ... FOR UPDATE``), so
  writers queue up one at a time and quota checks cannot race.

Every write is one transaction: a crash (even SIGKILL) leaves either all of it or none.
"""

from __future__ import annotations

import os
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine, make_url

from metrics_core.store import legacy, migrate, schema

__all__ = ["BUSY_TIMEOUT_SECONDS", "sqlite_url", "sqlite_path", "get_engine", "dispose_engine",
           "read_transaction", "write_transaction", "reclaim_space"]

BUSY_TIMEOUT_SECONDS = 30
_WRITE = "metrics_core_store_write"
_engines: dict[tuple[str, int], Engine] = {}
_engines_lock = threading.Lock()


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


def sqlite_path(url: str) -> Path | None:
    """The database file of a SQLite URL (``None`` for other databases or in-memory SQLite)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def _prepare_sqlite_file(path: Path) -> None:
    """Create the directory (0700) and the database file (0600) before SQLite opens them;
    an existing file is set back to 0600."""
    directory = path.parent
    if not directory.is_dir():
        directory.mkdir(parents=True, exist_ok=True)
        os.chmod(directory, stat.S_IRWXU)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    for candidate in (path, Path(f"{path}-journal"), Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            if stat.S_IMODE(candidate.stat().st_mode) != 0o600:
                os.chmod(candidate, 0o600)
        except FileNotFoundError:
            pass


def _sqlite_engine(url: str) -> Engine:
    path = sqlite_path(url)
    if path is not None:
        _prepare_sqlite_file(path)
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
                              poolclass=sa.pool.NullPool)

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # SQLAlchemy's begin event emits BEGIN below
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_SECONDS * 1000}")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get(_WRITE) else "BEGIN")

    _ensure_incremental_vacuum(engine)
    return engine


def _ensure_incremental_vacuum(engine: Engine) -> None:
    """Switch the file to ``auto_vacuum=INCREMENTAL``: free on an empty file, a one-time
    ``VACUUM`` on a file written without it."""
    with engine.connect() as conn:
        if conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2:
            conn.rollback()
            return
        conn.rollback()
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("PRAGMA auto_vacuum = INCREMENTAL")
        cursor.execute("VACUUM")
        cursor.close()
    finally:
        raw.close()


def _create_schema(engine: Engine) -> None:
    with write_transaction(engine, lock=False) as conn:
        if conn.dialect.name == "postgresql":
            # Two processes creating the tables at once would collide in the catalog.
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(727274)"))
        schema.metadata.create_all(conn)
        if conn.execute(sa.select(schema.meta.c.key).where(schema.meta.c.key == schema.LOCK_KEY)).first() is None:
            conn.execute(schema.meta.insert(), [{"key": schema.LOCK_KEY, "value": ""},
                                                {"key": schema.VERSION_KEY, "value": schema.SCHEMA_VERSION}])
        migrate.add_columns(conn)  # a store of an earlier version: its new columns first
        if conn.dialect.name == "sqlite":
            legacy.migrate(conn)
        migrate.count_records(conn)


def _new_engine(url: str) -> Engine:
    if make_url(url).get_backend_name() == "sqlite":
        engine = _sqlite_engine(url)
    else:
        engine = sa.create_engine(url, pool_pre_ping=True)
    try:
        _create_schema(engine)
        reclaim_space(engine)
    except BaseException:
        engine.dispose()
        raise
    return engine


def get_engine(url: str) -> Engine:
    """The engine for ``url`` in this process, created (with the tables) on first use."""
    key = (url, os.getpid())
    path = sqlite_path(url)
    with _engines_lock:
        engine = _engines.get(key)
        if engine is not None and path is not None and not path.exists():
            # The file was removed behind the store's back: start a fresh one, owner-only again.
            engine.dispose()
            engine = None
        if engine is None:
            engine = _engines[key] = _new_engine(url)
    return engine


def dispose_engine(url: str) -> None:
    """Close this process's connections to ``url`` (the next use opens new ones)."""
    with _engines_lock:
        engine = _engines.pop((url, os.getpid()), None)
    if engine is not None:
        engine.dispose()


@contextmanager
def read_transaction(engine: Engine) -> Iterator[Connection]:
    """One transaction with a consistent view of the store."""
    with engine.connect() as conn:
        if conn.dialect.name == "postgresql":
            conn = conn.execution_options(isolation_level="REPEATABLE READ")
        with conn.begin():
            yield conn


@contextmanager
def write_transaction(engine: Engine, lock: bool = True) -> Iterator[Connection]:
    """One write transaction, committed at the end or rolled back on error; writers take
    turns (SQLite: ``BEGIN IMMEDIATE``; other databases: the lock row ``FOR UPDATE``)."""
    with engine.connect() as conn:
        conn = conn.execution_options(**{_WRITE: True})
        with conn.begin():
            if lock and conn.dialect.name != "sqlite":
                conn.execute(sa.select(schema.meta.c.value).where(schema.meta.c.key == schema.LOCK_KEY)
                             .with_for_update())
            yield conn


def reclaim_space(engine: Engine) -> None:
    """Give freed pages back to the file system (SQLite); other databases reuse deleted
    rows' space themselves (PostgreSQL's autovacuum)."""
    if engine.dialect.name != "sqlite":
        return
    raw = engine.raw_connection()
    try:
        sqlite = raw.driver_connection
        try:
            # executescript steps the pragma to the end; a plain execute frees a single page.
            sqlite.executescript("BEGIN IMMEDIATE; PRAGMA incremental_vacuum; COMMIT;")
        except BaseException:
            if sqlite.in_transaction:
                sqlite.execute("ROLLBACK")
            raise
    finally:
        raw.close()
