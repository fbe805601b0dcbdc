"""metrics_core.store: working copies and snapshots under unguessable ids, on SQLite and on a
real PostgreSQL server started for the session (see postgres_server.py).

Every test taking ``backend`` runs on both databases. Time is a fake clock, never a sleep.
Expected values come from plain Python (hashlib, os.stat, counting rows with SQL), never
from the store itself.
"""

from __future__ import annotations

import _deadlines as deadlines
import hashlib
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa

from metrics_core.store import (ID_PATTERN, TOKEN_PATTERN, AnalysisStore, NotOwnerError, SavedFile,
                                StaleRevisionError, StoreError, StoreFullError, default_store_dir, new_analysis_id,
                                validate_analysis_id)

from postgres_server import postgres_bindir, remove, start_postgres

REPO_ROOT = Path(__file__).resolve().parents[1]
DAY = 86400.0


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server for the whole session (fails in CI when PostgreSQL is missing)."""
    bindir = postgres_bindir()
    if bindir is None:
        message = ("PostgreSQL server binaries not found (pg_config --bindir, /usr/lib/postgresql/*/bin): "
                   "install Debian's postgresql package")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    server = start_postgres(bindir)
    try:
        yield server
    finally:
        remove(server)


class Clock:
    """A fake clock: seconds since the epoch, moved forward by the test."""

    def __init__(self, now: float = 1_800_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float) -> None:
        self.now += days * DAY


class Backend:
    """One store location (a SQLite directory or a fresh PostgreSQL database) and a factory
    of ``AnalysisStore`` objects on it."""

    def __init__(self, name: str, url: str | None, directory: Path | None):
        self.name, self.url, self.directory = name, url, directory
        self.stores: list[AnalysisStore] = []

    def store(self, **kw) -> AnalysisStore:
        store = AnalysisStore(self.directory, **kw) if self.url is None else AnalysisStore(url=self.url, **kw)
        self.stores.append(store)
        return store

    @property
    def location_url(self) -> str:
        return self.url or f"sqlite:///{self.directory / 'analyses.sqlite3'}"

    def count(self, table: str) -> int:
        engine = sa.create_engine(self.location_url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                return conn.execute(sa.text(f"SELECT COUNT(*) FROM {table}")).scalar()
        finally:
            engine.dispose()

    def rows(self, sql: str) -> list:
        engine = sa.create_engine(self.location_url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as conn:
                return conn.execute(sa.text(sql)).all()
        finally:
            engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def backend(request, tmp_path):
    if request.param == "sqlite":
        b = Backend("sqlite", None, tmp_path / "store")
        b.store().usage()  # the tables exist from the start, as on a running server
        yield b
        for s in b.stores:
            s.close()
        return
    server = request.getfixturevalue("postgres")
    name = f"store_{uuid.uuid4().hex}"
    admin = sa.create_engine(server.url(), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    b = Backend("postgresql", server.url(name), None)
    try:
        b.store().usage()
        yield b
    finally:
        for s in b.stores:
            s.close()
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


def record(settings: dict, title: str = "", notes: str = "", files=()) -> int:
    """What one analysis record counts against the quota, as documented: 512 bytes, its
    settings as JSON (sorted keys), title and notes in UTF-8, and 128 bytes plus the name
    and role of each file."""
    text = json.dumps(settings, sort_keys=True)
    return (512 + len(text.encode()) + len(title.encode()) + len(notes.encode())
            + sum(128 + len(name.encode()) + len(role.encode()) for name, role in files))


def kib(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f} KiB"


def payload(tag: str, size: int) -> bytes:
    """Deterministic bytes of ``size`` that differ for every ``tag`` (SHA-256 in counter mode)."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{tag}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


FILES = [SavedFile("qrels.tsv", b"u1\ti1\t1\n", "qrels"),
         SavedFile("bm25.trec", bytes(range(256)), "run"),
         ("<img src=x onerror=alert(1)>.csv", b"user_id,item_id,score\n", "run")]
SETTINGS = {"k": 20, "gain": "exponential", "ties": "trec", "metrics": ["ndcg@20"], "alpha": 0.05}


# ---------------------------------------------------------------------------- ids
def test_ids_are_long_random_and_valid():
    ids = {new_analysis_id() for _ in range(200)}
    assert len(ids) == 200
    for i in ids:
        assert ID_PATTERN.match(i) and len(i) == 32  # 24 bytes = 192 bits
        assert validate_analysis_id(i) == i


HOSTILE_IDS = ["", "../../etc/passwd", "a" * 31, "a" * 33, "abc/def" + "a" * 25, "a" * 31 + "\n", "a" * 31 + ".",
               None, 12345, "%2e%2e%2f" + "a" * 23, "' OR 1=1 --" + "a" * 21, "a" * 21 + "'; DROP TABLE x",
               "a" * 32 + "' OR '1'='1", "\u0430" * 32, "a" * 1000]


@pytest.mark.parametrize("bad", HOSTILE_IDS)
def test_hostile_ids_rejected_before_any_query(bad):
    # Nothing listens on port 1: any query would fail with a connection error instead.
    store = AnalysisStore(url="postgresql+psycopg://nobody@127.0.0.1:1/none")
    for call in (lambda: store.load(bad), lambda: store.exists(bad), lambda: store.delete(bad),
                 lambda: store.update_working(bad, settings={}), lambda: store.snapshot(bad),
                 lambda: store.delete_snapshot(bad, "t" * 43), lambda: store.operator_delete(bad)):
        with pytest.raises(StoreError, match="malformed analysis id"):
            call()


def test_hostile_ids_leave_the_store_intact(backend):
    store = backend.store()
    receipt = store.save_snapshot(FILES, SETTINGS)
    for bad in HOSTILE_IDS:
        with pytest.raises(StoreError, match="malformed analysis id"):
            store.load(bad)
    for bad in ["", "x" * 42, "x" * 44, "' OR 1=1 --" + "x" * 32, None]:
        with pytest.raises(StoreError, match="malformed delete token"):
            store.delete_snapshot(receipt.id, bad)
    assert store.load(receipt.id).settings == SETTINGS
    assert backend.count("store_analyses") == 1


# ---------------------------------------------------------------------------- round trip
def test_save_load_round_trip(backend):
    store = backend.store()
    receipt = store.save_snapshot(FILES, SETTINGS, title="Q3 models <b>", notes="line 1\nline 2 [x](http://a)")
    got = store.load(receipt.id)
    assert got.id == receipt.id and got.settings == SETTINGS
    assert got.title == "Q3 models <b>" and got.notes == "line 1\nline 2 [x](http://a)"
    assert got.kind == "snapshot" and got.read_only and got.expires is None
    assert [(f.name, f.role, f.data) for f in got.files] == [
        ("qrels.tsv", "qrels", b"u1\ti1\t1\n"), ("bm25.trec", "run", bytes(range(256))),
        ("<img src=x onerror=alert(1)>.csv", "run", b"user_id,item_id,score\n")]
    assert [f.name for f in got.files_with_role("run")] == ["bm25.trec", "<img src=x onerror=alert(1)>.csv"]
    assert got.created.endswith("+00:00")
    assert store.exists(receipt.id)
    # the earlier interface: save() returns the id of a snapshot
    aid = store.save({"run.csv": b"a,b\n1,2\n"}, {"k": 5}, title="demo")
    assert ID_PATTERN.match(aid) and store.load(aid).title == "demo"
    assert store.load(aid).files == (SavedFile("run.csv", b"a,b\n1,2\n", ""),)
    other = new_analysis_id()
    assert not store.exists(other)
    with pytest.raises(StoreError, match="no saved analysis"):
        store.load(other)


def test_empty_files_and_settings(backend):
    store = backend.store()
    wid = store.create_working()
    got = store.load(wid)
    assert got.files == () and got.settings == {} and got.kind == "working"
    receipt = store.save_snapshot({"empty.csv": b""}, {})
    assert store.load(receipt.id).files == (SavedFile("empty.csv", b"", ""),)


def test_settings_and_texts_are_checked(backend):
    store = backend.store()
    with pytest.raises(StoreError, match="JSON"):
        store.save({"a": b""}, {"x": object()})
    with pytest.raises(StoreError, match="title has 301 characters; at most 300"):
        store.save_snapshot({}, {}, title="t" * 301)
    with pytest.raises(StoreError, match="take 65,537 bytes as JSON, more than the 65,536 kept"):
        store.create_working({}, {"big": "x" * (64 * 1024 - len('{"big": ""}') + 1)})
    with pytest.raises(StoreError, match=r"name of the file 'n{40}'\.\.\. has 1001 characters; at most 1000"):
        store.create_working({"n" * 1001: b"x"}, {})
    with pytest.raises(StoreError, match="role of the file 'a.csv' has 101 characters; at most 100"):
        store.create_working([SavedFile("a.csv", b"x", "r" * 101)], {})
    with pytest.raises(StoreError, match="notes has 20001 characters; at most 20000"):
        store.create_working({}, {}, notes="n" * 20_001)
    assert backend.count("store_analyses") == 0
    # exactly at each limit is kept
    at_limit = {"big": "x" * (64 * 1024 - len('{"big": ""}'))}
    wid = store.create_working([SavedFile("n" * 1000, b"x", "r" * 100)], at_limit, title="t" * 300,
                               notes="n" * 20_000)
    got = store.load(wid)
    assert got.settings == at_limit and got.files[0].name == "n" * 1000 and len(got.notes) == 20_000


# ---------------------------------------------------------------------------- working copies
def test_working_copy_update_refresh_and_expiry(backend):
    clock = Clock()
    store = backend.store(clock=clock)  # default retention: 30 days
    wid = store.create_working([SavedFile("run.csv", b"u,i,s\n1,2,0.5\n", "run")], {"k": 10})
    first = store.load(wid)
    assert first.kind == "working" and not first.read_only and first.settings == {"k": 10}
    assert ID_PATTERN.match(wid)

    clock.advance(1)
    store.update_working(wid, settings={"k": 5, "gain": "exponential"})
    got = store.load(wid)
    assert got.settings == {"k": 5, "gain": "exponential"}
    assert got.files == first.files  # settings-only update keeps the files
    store.update_working(wid, files=[SavedFile("run.csv", b"u,i,s\n1,2,0.5\n", "run"),
                                     SavedFile("qrels.csv", b"u,i,r\n1,2,1\n", "qrels")], title="draft")
    got = store.load(wid)
    assert [f.name for f in got.files] == ["run.csv", "qrels.csv"] and got.title == "draft"
    assert got.settings == {"k": 5, "gain": "exponential"}
    store.update_working(wid, files=[SavedFile("qrels.csv", b"u,i,r\n1,2,1\n", "qrels")])
    assert backend.count("store_blobs") == 1  # the replaced run's content is gone

    # used every 29 days it lives on; 30 days without use and it is gone
    for _ in range(3):
        clock.advance(29)
        assert store.load(wid).settings["k"] == 5
    clock.advance(30.01)
    assert not store.exists(wid)
    with pytest.raises(StoreError, match="expired after 30 days without use"):
        store.load(wid)
    with pytest.raises(StoreError, match="expired"):
        store.update_working(wid, settings={"k": 1})
    assert store.purge_expired() == 1
    with pytest.raises(StoreError, match="no saved analysis"):
        store.load(wid)
    assert backend.count("store_blobs") == backend.count("store_chunks") == backend.count("store_files") == 0


def test_retention_is_configurable(backend, monkeypatch):
    clock = Clock()
    monkeypatch.setenv("METRICS_CORE_STORE_WORKING_DAYS", "2")
    store = backend.store(clock=clock)
    wid = store.create_working({"a.csv": b"1"}, {})
    clock.advance(1.9)
    assert store.exists(wid)
    clock.advance(2.1)  # the exists() above is not a use: 4 days since the last one
    assert not store.exists(wid)
    short = backend.store(clock=clock, working_days=0.5)
    wid2 = short.create_working({"b.csv": b"2"}, {})
    clock.advance(0.6)
    with pytest.raises(StoreError, match="expired after 0.5 days"):
        short.load(wid2)
    monkeypatch.setenv("METRICS_CORE_STORE_WORKING_DAYS", "zero")
    with pytest.raises(StoreError, match="METRICS_CORE_STORE_WORKING_DAYS"):
        backend.store()


def test_expired_working_copies_are_removed_by_the_next_write(backend):
    clock = Clock()
    store = backend.store(clock=clock)
    old = store.create_working({"old.csv": payload("old", 5000)}, {})
    clock.advance(31)
    store.save_snapshot({"new.csv": b"new"}, {})
    assert backend.rows("SELECT id FROM store_analyses WHERE id = :i".replace(":i", f"'{old}'")) == []
    assert backend.count("store_blobs") == 1


# ---------------------------------------------------------------------------- snapshots
def test_snapshot_is_read_only_and_independent_of_its_working_copy(backend):
    clock = Clock()
    store = backend.store(clock=clock)
    wid = store.create_working([SavedFile("run.csv", b"v1", "run")], {"k": 10})
    receipt = store.snapshot(wid, title="Shared view", notes="baseline: bm25")
    assert receipt.id != wid and ID_PATTERN.match(receipt.id) and TOKEN_PATTERN.match(receipt.delete_token)
    snap = store.load(receipt.id)
    assert snap.kind == "snapshot" and snap.read_only and snap.title == "Shared view"
    assert snap.notes == "baseline: bm25" and snap.settings == {"k": 10} and snap.files[0].data == b"v1"

    with pytest.raises(StoreError, match="read-only"):
        store.update_working(receipt.id, settings={"k": 1})
    with pytest.raises(StoreError, match="read-only"):
        store.update_working(receipt.id, files={"x.csv": b"x"})
    with pytest.raises(StoreError, match="already a snapshot"):
        store.snapshot(receipt.id)
    with pytest.raises(StoreError, match="needs its delete link"):
        store.delete_working(receipt.id)
    with pytest.raises(StoreError, match="needs its delete link"):
        store.delete(receipt.id)

    # the working copy goes on changing; the snapshot does not
    store.update_working(wid, files=[SavedFile("run.csv", b"v2", "run")], settings={"k": 3})
    assert store.load(wid).files[0].data == b"v2"
    snap_again = store.load(receipt.id)
    assert snap_again.files[0].data == b"v1" and snap_again.settings == {"k": 10}

    # without a title or notes, a snapshot takes the working copy's
    store.update_working(wid, title="Draft title", notes="draft notes")
    plain = store.load(store.snapshot(wid).id)
    assert (plain.title, plain.notes, plain.settings) == ("Draft title", "draft notes", {"k": 3})

    # snapshots do not expire
    clock.advance(3650)
    assert store.purge_expired() == 1  # the working copy
    assert store.load(receipt.id).files[0].data == b"v1"


# ---------------------------------------------------------------------------- delete token
def test_delete_needs_the_token_stored_only_as_a_hash(backend):
    store = backend.store()
    a = store.save_snapshot({"a.csv": b"aaa"}, {"k": 1}, title="A")
    b = store.save_snapshot({"b.csv": b"bbb"}, {"k": 2}, title="B")
    assert a.delete_token != b.delete_token and TOKEN_PATTERN.match(a.delete_token)
    stored = dict(backend.rows("SELECT id, delete_token_sha256 FROM store_analyses"))
    assert stored[a.id] == hashlib.sha256(a.delete_token.encode()).hexdigest()
    everything = " ".join(str(v) for row in backend.rows("SELECT * FROM store_analyses") for v in row)
    assert a.delete_token not in everything and b.delete_token not in everything
    if backend.name == "sqlite":
        raw = (backend.directory / "analyses.sqlite3").read_bytes()
        assert a.delete_token.encode() not in raw

    with pytest.raises(StoreError, match="does not belong to snapshot"):
        store.delete_snapshot(a.id, b.delete_token)
    with pytest.raises(StoreError, match="does not belong to snapshot"):
        store.delete(a.id, "A" * 43)
    assert store.exists(a.id)
    store.delete_snapshot(a.id, a.delete_token)
    assert not store.exists(a.id) and store.exists(b.id)
    with pytest.raises(StoreError, match="no saved analysis"):
        store.delete_snapshot(a.id, a.delete_token)
    assert store.delete(b.id, b.delete_token) is True
    assert store.delete(b.id, b.delete_token) is False
    wid = store.create_working({"w.csv": b"w"}, {})
    with pytest.raises(StoreError, match="working copy, not a snapshot"):
        store.delete_snapshot(wid, a.delete_token)
    assert store.delete(wid) is True and store.delete(wid) is False
    assert backend.count("store_blobs") == 0


# ---------------------------------------------------------------------------- content storage
def test_same_content_is_stored_once_in_chunks(backend):
    store = backend.store(chunk_bytes=1000)
    big = payload("big", 10_500)
    first = store.save_snapshot([SavedFile("model.csv", big, "run")], {"k": 5})
    second = store.save_snapshot([SavedFile("renamed.csv", big, "run"), SavedFile("same.csv", big, "run")], {"k": 10})
    wid = store.create_working({"again.csv": big}, {})
    assert backend.count("store_blobs") == 1
    assert backend.count("store_chunks") == 11  # ceil(10500 / 1000)
    assert max(n for (n,) in backend.rows("SELECT LENGTH(data) FROM store_chunks")) == 1000
    digest = hashlib.sha256(big).hexdigest()
    assert backend.rows("SELECT sha256, size FROM store_blobs") == [(digest, 10_500)]
    # the content once, plus each record
    records = (record({"k": 5}, files=[("model.csv", "run")])
               + record({"k": 10}, files=[("renamed.csv", "run"), ("same.csv", "run")])
               + record({}, files=[("again.csv", "")]))
    assert store.usage().used_bytes == 10_500 + records
    assert [f.data for f in store.load(second.id).files] == [big, big]

    store.delete_snapshot(first.id, first.delete_token)
    store.delete_working(wid)
    assert backend.count("store_blobs") == 1 and store.load(second.id).files[0].data == big
    store.delete_snapshot(second.id, second.delete_token)
    assert backend.count("store_blobs") == backend.count("store_chunks") == 0
    assert store.usage().used_bytes == 0


def test_chunks_keep_each_value_under_sqlites_length_limit(tmp_path):
    """SQLite refuses values longer than SQLITE_LIMIT_LENGTH (1 GB by default). Lowered to
    200 kB here, a 1 MB file still round-trips because it is stored in 100 kB chunks, and
    fails (cleanly, one line) when the chunks are as large as the file."""
    from metrics_core.store import engine as store_engine

    def limited(store: AnalysisStore) -> AnalysisStore:
        sa.event.listen(store_engine.get_engine(store.url), "connect",
                        lambda dbapi_connection, _record: dbapi_connection.setlimit(sqlite3.SQLITE_LIMIT_LENGTH,
                                                                                    200_000))
        return store
    data = payload("large", 1_000_000)
    chunked = limited(AnalysisStore(tmp_path / "chunked", chunk_bytes=100_000))
    assert chunked.load(chunked.save_snapshot({"big.bin": data}, {}).id).files[0].data == data
    whole = limited(AnalysisStore(tmp_path / "whole", chunk_bytes=2_000_000))
    with pytest.raises(StoreError, match="cannot save in the analysis store") as info:
        whole.save_snapshot({"big.bin": data}, {})
    assert "\n" not in str(info.value)
    for store in (chunked, whole):
        store.close()


def test_snapshot_of_a_working_copy_shares_its_content(backend):
    store = backend.store(quota_bytes=15_000, client_share=1)
    data = payload("shared", 10_000)
    wid = store.create_working({"run.csv": data}, {})
    receipts = [store.snapshot(wid, title=f"v{i}") for i in range(3)]  # would be 40 KB as copies
    records = record({}, files=[("run.csv", "")]) + sum(record({}, f"v{i}", files=[("run.csv", "")])
                                                       for i in range(3))
    assert backend.count("store_blobs") == 1 and store.usage().used_bytes == 10_000 + records
    assert all(store.load(r.id).files[0].data == data for r in receipts)


def test_damaged_content_is_reported(backend):
    store = backend.store()
    receipt = store.save_snapshot({"a.csv": b"original"}, {})
    engine = sa.create_engine(backend.location_url, poolclass=sa.pool.NullPool)
    with engine.begin() as conn:
        conn.execute(sa.text("UPDATE store_chunks SET data = :d"), {"d": b"tampered"})
    engine.dispose()
    with pytest.raises(StoreError, match="damaged content"):
        store.load(receipt.id)


# ---------------------------------------------------------------------------- quota
def test_quota_full_is_one_clear_line_and_stores_nothing(backend):
    store = backend.store(quota_bytes=10_000, client_share=1)
    kept = store.save_snapshot({"a.csv": payload("a", 6000)}, {})
    used = 6000 + record({}, files=[("a.csv", "")])
    analyses, blobs = backend.count("store_analyses"), backend.count("store_blobs")
    with pytest.raises(StoreFullError) as info:
        store.save_snapshot({"b.csv": payload("b", 6000), "c.csv": b"small"}, {"k": 1})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"the analysis store is full: {kib(used)} of its 9.8 KiB quota are used")
    needed = 6005 + record({"k": 1}, files=[("b.csv", ""), ("c.csv", "")])
    assert f"needs {kib(needed)} more" in message and "METRICS_CORE_STORE_QUOTA" in message
    assert (backend.count("store_analyses"), backend.count("store_blobs")) == (analyses, blobs)
    wid = store.create_working({"a.csv": b"x"}, {})
    with pytest.raises(StoreFullError, match="is full"):
        store.update_working(wid, files={"b.csv": payload("b", 6000)})
    assert store.load(wid).files[0].data == b"x"  # the failed update changed nothing
    # content already stored costs nothing: the same 6000 bytes again fit
    store.save_snapshot({"same-as-a.csv": payload("a", 6000)}, {})
    # after deleting, the other file fits
    store.delete_working(wid)
    store.operator_delete(kept.id)
    assert store.usage().used_bytes == 6000 + record({}, files=[("same-as-a.csv", "")])
    for other in backend.rows("SELECT id FROM store_analyses"):
        store.operator_delete(other[0])
    store.save_snapshot({"b.csv": payload("b", 6000)}, {})


def test_quota_from_the_environment(backend, monkeypatch):
    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", "2KiB")
    store = backend.store()
    assert store.limits.quota_bytes == 2048 and store.usage().quota_bytes == 2048
    with pytest.raises(StoreFullError, match="whole quota of 2.0 KiB"):
        store.save_snapshot({"a": payload("a", 2049)}, {})
    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", "500MB")
    assert backend.store().limits.quota_bytes == 500_000_000
    monkeypatch.setenv("METRICS_CORE_STORE_QUOTA", "lots")
    with pytest.raises(StoreError, match="METRICS_CORE_STORE_QUOTA='lots' is not a size"):
        backend.store()


def test_oversize_uploads_are_refused_up_front(backend):
    clock = Clock()
    store = backend.store(quota_bytes=10_000, clock=clock, client_share=1)
    assert store.can_store(10_000) and not store.can_store(10_001)
    with pytest.raises(StoreFullError) as info:
        store.check_can_store(10_001)
    assert str(info.value) == ("this needs 9.8 KiB, more than the analysis store's whole quota of 9.8 KiB; "
                               "an administrator can raise METRICS_CORE_STORE_QUOTA")
    store.create_working({"a.csv": payload("a", 6000)}, {})
    free = 4000 - record({}, files=[("a.csv", "")])
    assert store.usage().free_bytes == free
    assert store.can_store(free) and not store.can_store(free + 1)
    with pytest.raises(StoreFullError, match="store is full"):
        store.check_can_store(free + 1)
    clock.advance(31)  # the working copy expires: checking an upload makes room
    assert store.can_store(10_000)
    assert backend.count("store_blobs") == 0


# ---------------------------------------------------------------------------- owners, revisions, quota of everything
def test_quota_counts_settings_titles_and_notes(backend):
    """Thirty shares of a 60 KB parameter against a 600 KiB quota: every record counts, so
    the store stops at the quota and says so, and usage() is what the tables hold."""
    store = backend.store(quota_bytes="600KiB", client_share=1)
    settings = {"view": {"q": "x" * 60_000}}
    saved = []
    with pytest.raises(StoreFullError, match="the analysis store is full") as info:
        for i in range(30):
            saved.append(store.save_snapshot({}, settings, title=f"share {i}", notes="n" * 100))
    assert "\n" not in str(info.value)
    expected = sum(record(settings, f"share {i}", "n" * 100) for i in range(len(saved)))
    assert 0 < len(saved) < 30 and backend.count("store_analyses") == len(saved)
    usage = store.usage()
    assert usage.used_bytes == expected <= 600 * 1024 < expected + record(settings, "share 99", "n" * 100)
    # the texts the store holds, measured in the database itself
    stored = sum(len(s.encode()) + len(t.encode()) + len(n.encode())
                 for s, t, n in backend.rows("SELECT settings, title, notes FROM store_analyses"))
    assert stored + 512 * len(saved) == usage.used_bytes
    # a working copy whose settings grow is checked too, and left as it was
    wid_store = backend.store(quota_bytes="600KiB", client_share=1)
    for r in saved[:2]:
        wid_store.operator_delete(r.id)
    wid = wid_store.create_working({}, {"k": 1})
    with pytest.raises(StoreFullError, match="is full"):
        for _ in range(3):
            wid_store.update_working(wid, settings={"k": 1, "pad": "y" * 60_000}, notes="z" * 20_000,
                                     title="t" * 300)
            wid_store.create_working({}, {"pad": "y" * 60_000})
    assert store.usage().used_bytes <= 600 * 1024


def test_each_client_has_a_share_of_the_quota(backend, monkeypatch):
    store = backend.store(quota_bytes=40_000)  # default share: a quarter, 10,000 bytes each
    assert store.limits.client_share == 0.25 and store.usage().client_quota_bytes == 10_000
    alice = store.create_working({"a.csv": payload("a", 8000)}, {}, owner="alice")
    alice_used = 8000 + record({}, files=[("a.csv", "")])
    assert store.usage(owner="alice").client_used_bytes == alice_used
    with pytest.raises(StoreFullError) as info:
        store.save_snapshot({"a2.csv": payload("a2", 2000)}, {}, owner="alice")
    message = str(info.value)
    assert message.startswith(f"your share of the analysis store is used up: you keep {kib(alice_used)} of the "
                              "9.8 KiB one browser or caller may keep (25% of the quota, "
                              "METRICS_CORE_STORE_CLIENT_SHARE)")
    assert "\n" not in message
    assert not store.can_store(2000, owner="alice") and store.can_store(2000, owner="bob")
    # the others are not blocked: bob, and a library caller without an owner
    bob = store.create_working({"b.csv": payload("b", 8000)}, {}, owner="bob")
    store.save_snapshot({"c.csv": payload("c", 8000)}, {})
    assert store.usage(owner="bob").client_used_bytes == 8000 + record({}, files=[("b.csv", "")])
    # a client's share counts every content its records use, shared or not
    with pytest.raises(StoreFullError, match="your share"):
        store.copy(alice, owner="bob")
    # alice's removal of her file gives her share back
    store.update_working(alice, files={}, owner="alice")
    store.save_snapshot({"a2.csv": payload("a2", 2000)}, {}, owner="alice")
    assert store.load(bob).files[0].data == payload("b", 8000)
    monkeypatch.setenv("METRICS_CORE_STORE_CLIENT_SHARE", "50%")
    assert backend.store(quota_bytes=40_000).usage().client_quota_bytes == 20_000
    monkeypatch.setenv("METRICS_CORE_STORE_CLIENT_SHARE", "0.1")
    assert backend.store(quota_bytes=40_000).limits.client_quota_bytes == 4_000
    for bad in ("0", "1.5", "half", "nan", "-10%"):
        monkeypatch.setenv("METRICS_CORE_STORE_CLIENT_SHARE", bad)
        with pytest.raises(StoreError, match="METRICS_CORE_STORE_CLIENT_SHARE=.* is not a share of the quota"):
            backend.store()


def test_content_already_stored_is_never_refused_for_space_it_does_not_take(backend):
    store = backend.store(quota_bytes=20_000, client_share=1)
    data = payload("big", 12_000)
    digest = hashlib.sha256(data).hexdigest()
    wid = store.create_working({"run.csv": data}, {"k": 1}, owner="alice")
    free = store.usage().free_bytes
    assert free < 12_000
    # the upload check: the same bytes cost nothing, other bytes of that size do not fit
    assert store.can_store(12_000, owner="bob", sha256=digest)
    assert not store.can_store(12_000, owner="bob", sha256=hashlib.sha256(b"other").hexdigest())
    assert not store.can_store(12_000, owner="bob")
    # the save: only bob's record is new
    receipt = store.save_snapshot({"again.csv": data}, {}, owner="bob")
    assert store.load(receipt.id).files[0].data == data and backend.count("store_blobs") == 1
    # a quota lowered under what is stored: a write that adds nothing still goes through
    tight = backend.store(quota_bytes=1_000, client_share=1)
    assert tight.update_working(wid, files={"run.csv": data}, settings={"k": 2}, owner="alice") == 2
    with pytest.raises(StoreFullError, match="is full"):
        tight.update_working(wid, settings={"k": 2, "more": "x" * 100}, owner="alice")
    # within the share: content the client already uses costs it nothing
    alice_used = store.usage(owner="alice").client_used_bytes
    shares = backend.store(quota_bytes=10 * alice_used, client_share=(alice_used + 700) / (10 * alice_used))
    assert shares.usage(owner="alice").client_free_bytes == 700
    assert shares.can_store(12_000, owner="alice", sha256=digest) and not shares.can_store(12_000, owner="alice")
    copy = shares.create_working({"copy.csv": data}, {}, owner="alice")  # its record: 650 bytes
    assert shares.load(copy).files[0].data == data


def test_a_working_copy_changes_only_for_its_owner(backend):
    store = backend.store()
    wid = store.create_working([SavedFile("run.csv", b"v1", "run")], {"k": 10}, title="mine", notes="n",
                               owner="alice-secret")
    mine, theirs, anonymous = (store.load(wid, owner="alice-secret"), store.load(wid, owner="mallory"),
                               store.load(wid))
    assert mine.editable and not mine.read_only
    assert theirs.read_only and anonymous.read_only and theirs.files == mine.files
    for who in ("mallory", None):
        with pytest.raises(NotOwnerError, match="belongs to the browser that created it and is read-only"):
            store.update_working(wid, files={"evil.csv": b"x"}, owner=who)
        with pytest.raises(NotOwnerError, match="only that browser can delete it"):
            store.delete_working(wid, owner=who)
        with pytest.raises(NotOwnerError):
            store.delete(wid, owner=who)
    assert store.load(wid, owner="alice-secret").files == (SavedFile("run.csv", b"v1", "run"),)
    # only the secret's SHA-256 is kept
    assert backend.rows("SELECT owner_sha256 FROM store_analyses") == [
        (hashlib.sha256(b"alice-secret").hexdigest(),)]
    everything = " ".join(str(v) for row in backend.rows("SELECT * FROM store_analyses") for v in row)
    assert "alice-secret" not in everything
    # anyone else can make their own copy: same files, settings, title and notes, theirs to change
    copy = store.copy(wid, owner="mallory")
    got = store.load(copy, owner="mallory")
    assert copy != wid and got.editable and got.kind == "working" and got.revision == 1
    assert (got.files, got.settings, got.title, got.notes) == (mine.files, mine.settings, "mine", "n")
    store.update_working(copy, files={"theirs.csv": b"x"}, owner="mallory")
    assert store.load(wid).files == mine.files and backend.count("store_blobs") == 2
    snap = store.save_snapshot({"s.csv": b"s"}, {}, owner="alice-secret")
    assert not store.load(snap.id, owner="alice-secret").editable  # snapshots stay read-only
    own_of_snapshot = store.copy(snap.id, owner="mallory")
    assert store.load(own_of_snapshot, owner="mallory").files[0].data == b"s"
    assert store.delete_working(wid, owner="alice-secret") is True
    with pytest.raises(StoreError, match="owner secret is a text of 1 to 200 characters"):
        store.create_working({}, {}, owner="x" * 201)


def test_a_change_based_on_an_older_revision_is_refused(backend):
    store = backend.store()
    wid = store.create_working({"a.csv": b"a"}, {"k": 1}, owner="o")
    first_tab = store.load(wid, owner="o").revision
    second_tab = store.load(wid, owner="o").revision
    assert first_tab == second_tab == 1
    assert store.update_working(wid, files={"a.csv": b"a", "b.csv": b"b"}, owner="o", revision=first_tab) == 2
    with pytest.raises(StaleRevisionError) as info:
        store.update_working(wid, files={}, owner="o", revision=second_tab)
    assert str(info.value).startswith("this analysis was changed in another tab")
    assert "reload" in str(info.value) and "\n" not in str(info.value)
    got = store.load(wid, owner="o")
    assert [f.name for f in got.files] == ["a.csv", "b.csv"] and got.revision == 2
    assert store.update_working(wid, settings={"k": 2}, owner="o", revision=got.revision) == 3
    assert store.update_working(wid, title="no revision given: last writer wins", owner="o") == 4
    store.snapshot(wid, owner="o")
    assert store.load(wid).revision == 4  # freezing a snapshot does not change the working copy


V1_METADATA = sa.MetaData()
for _name, *_columns in [
    ("store_meta", sa.Column("key", sa.String(64), primary_key=True), sa.Column("value", sa.Text, nullable=False)),
    ("store_blobs", sa.Column("sha256", sa.String(64), primary_key=True),
     sa.Column("size", sa.BigInteger, nullable=False), sa.Column("chunk_count", sa.Integer, nullable=False)),
    ("store_chunks", sa.Column("sha256", sa.String(64), sa.ForeignKey("store_blobs.sha256"), primary_key=True),
     sa.Column("seq", sa.Integer, primary_key=True), sa.Column("data", sa.LargeBinary, nullable=False)),
    ("store_analyses", sa.Column("id", sa.String(32), primary_key=True), sa.Column("kind", sa.String(16)),
     sa.Column("created_at", sa.Double), sa.Column("updated_at", sa.Double), sa.Column("expires_at", sa.Double),
     sa.Column("title", sa.Text), sa.Column("notes", sa.Text), sa.Column("settings", sa.Text),
     sa.Column("delete_token_sha256", sa.String(64))),
    ("store_files", sa.Column("analysis_id", sa.String(32), sa.ForeignKey("store_analyses.id"), primary_key=True),
     sa.Column("position", sa.Integer, primary_key=True), sa.Column("name", sa.Text), sa.Column("role", sa.Text),
     sa.Column("sha256", sa.String(64), sa.ForeignKey("store_blobs.sha256"))),
]:
    sa.Table(_name, V1_METADATA, *_columns)


def test_a_store_of_the_previous_version_gains_owners_revisions_and_sizes(backend):
    """The tables as version 1 wrote them, with a working copy and a snapshot: opened by this
    version, they keep working and their records count against the quota."""
    backend.store().close()
    engine = sa.create_engine(backend.location_url, poolclass=sa.pool.NullPool)
    clock = Clock()
    data = payload("v1", 3000)
    digest = hashlib.sha256(data).hexdigest()
    working, snapshot = "W" * 32, "S" * 32
    with engine.begin() as conn:
        for table in ("store_briefs", "store_files", "store_chunks", "store_analyses", "store_blobs", "store_meta"):
            conn.execute(sa.text(f"DROP TABLE {table}"))
        V1_METADATA.create_all(conn)
        t = V1_METADATA.tables
        conn.execute(t["store_meta"].insert(), [{"key": "lock", "value": ""}, {"key": "schema_version", "value": "1"}])
        conn.execute(t["store_blobs"].insert().values(sha256=digest, size=3000, chunk_count=1))
        conn.execute(t["store_chunks"].insert().values(sha256=digest, seq=0, data=data))
        conn.execute(t["store_analyses"].insert(), [
            dict(id=working, kind="working", created_at=clock.now, updated_at=clock.now, expires_at=clock.now + DAY,
                 title="", notes="", settings='{"k": 3}', delete_token_sha256=None),
            dict(id=snapshot, kind="snapshot", created_at=clock.now, updated_at=clock.now, expires_at=None,
                 title="Q3 \u00e9", notes="notes", settings="{}", delete_token_sha256="0" * 64)])
        conn.execute(t["store_files"].insert(), [
            dict(analysis_id=working, position=0, name="run.csv", role="run", sha256=digest),
            dict(analysis_id=snapshot, position=0, name="run.csv", role="run", sha256=digest)])
    engine.dispose()

    store = backend.store(clock=clock)
    got = store.load(working)
    assert got.settings == {"k": 3} and got.files[0].data == data and got.revision == 1
    assert got.editable  # no owner before: the library caller without one may change it
    assert not store.load(working, owner="a browser").editable
    assert store.load(snapshot).title == "Q3 \u00e9" and store.load(snapshot).read_only
    expected = 3000 + record({"k": 3}, files=[("run.csv", "run")]) + record(
        {}, "Q3 \u00e9", "notes", files=[("run.csv", "run")])
    assert store.usage().used_bytes == expected
    assert backend.rows("SELECT value FROM store_meta WHERE key = 'schema_version'") == [("2",)]
    assert store.update_working(working, settings={"k": 4}, revision=1) == 2
    mine = store.copy(working, owner="a browser")
    assert store.load(mine, owner="a browser").settings == {"k": 4}
    store.close()
    assert backend.store(clock=clock).load(working).revision == 2  # opening again changes nothing


# ---------------------------------------------------------------------------- deletion is real
def test_a_snapshot_keeps_one_brief_counted_with_its_record(backend):
    """A snapshot keeps one brief: read back only under the settings key and format it was kept
    with, replaced by the next, counted with the record against its saver's share, removed with it;
    a working copy keeps none, and a brief over the size limit or the quota is refused in one line."""
    store = backend.store(quota_bytes="200KiB", client_share=1)
    settings = {"view": {"k": "10"}}
    receipt = store.save_snapshot({"a.csv": b"user_id,item_id,score\n"}, settings, title="T", owner="alice")
    base = record(settings, "T", "", [("a.csv", "")])
    content = json.dumps({"verdicts": ["écart ▲"] * 50})
    key, other = "a" * 64, "b" * 64
    assert store.stored_brief(receipt.id, key, "brief-1") is None
    store.keep_brief(receipt.id, key, "brief-1", content)  # none kept yet: anyone who opens it may keep one
    assert store.stored_brief(receipt.id, key, "brief-1") == content
    assert store.stored_brief(receipt.id, other, "brief-1") is None  # other settings
    assert store.stored_brief(receipt.id, key, "brief-2") is None  # another format: computed again
    kept = 128 + len(content.encode("utf-8"))
    assert store.usage().used_bytes == len(b"user_id,item_id,score\n") + base + kept
    assert store.usage(owner="alice").client_used_bytes == store.usage().used_bytes
    assert store.usage(owner="bob").client_used_bytes == 0  # kept by whoever opened it: counts for its saver
    # only its saver replaces it: a reader who opened the link with other settings leaves it as it was
    for reader in (None, "bob"):
        with pytest.raises(NotOwnerError, match="only the client that saved it may replace it") as info:
            store.keep_brief(receipt.id, other, "brief-1", "{}", owner=reader)
        assert "\n" not in str(info.value)
    assert store.stored_brief(receipt.id, key, "brief-1") == content and backend.count("store_briefs") == 1
    # the next brief of its saver replaces it: one row, counted once
    store.keep_brief(receipt.id, other, "brief-1", "{}", owner="alice")
    assert backend.count("store_briefs") == 1 and store.stored_brief(receipt.id, key, "brief-1") is None
    assert store.usage().used_bytes == len(b"user_id,item_id,score\n") + base + 128 + 2
    # limits, each one line, and nothing changed
    working = store.create_working({}, {})
    with pytest.raises(StoreError, match="only a snapshot keeps its brief"):
        store.keep_brief(working, key, "brief-1", "{}")
    with pytest.raises(StoreError, match="more than the 2,097,152 kept per snapshot") as info:
        store.keep_brief(receipt.id, key, "brief-1", "x" * (2 * 1024 * 1024 + 1), owner="alice")
    assert "\n" not in str(info.value)
    with pytest.raises(StoreFullError, match="is full"):
        store.keep_brief(receipt.id, key, "brief-1", "y" * 204_500, owner="alice")  # over what is left
    assert store.stored_brief(receipt.id, other, "brief-1") == "{}"
    # a brief of another format version (which no reader of this version uses) is replaced by anyone
    store.keep_brief(receipt.id, key, "brief-2", "[]", owner="bob")
    assert store.stored_brief(receipt.id, key, "brief-2") == "[]" and backend.count("store_briefs") == 1
    with pytest.raises(StoreError, match="no saved analysis"):
        store.keep_brief(new_analysis_id(), key, "brief-1", "{}")
    store.delete_snapshot(receipt.id, receipt.delete_token)
    assert backend.count("store_briefs") == 0


def _postgres_bytes(backend) -> int:
    """Disk size of the chunk table (with its TOAST data) after a VACUUM, which is what
    autovacuum does on its own: deleted rows' pages are cut off the end of the table."""
    engine = sa.create_engine(backend.url, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("VACUUM store_chunks"))
            return conn.execute(sa.text("SELECT pg_total_relation_size('store_chunks')")).scalar()
    finally:
        engine.dispose()


def test_deleting_gives_the_space_back(backend):
    store = backend.store()
    receipts = [store.save_snapshot({f"{i}.bin": payload(f"r{i}", 2_000_000)}, {}) for i in range(3)]
    if backend.name == "sqlite":
        db = backend.directory / "analyses.sqlite3"
        full = db.stat().st_size
    else:
        full = _postgres_bytes(backend)
    assert full > 6_000_000
    for r in receipts:
        store.delete_snapshot(r.id, r.delete_token)
    assert backend.count("store_chunks") == backend.count("store_blobs") == backend.count("store_analyses") == 0
    after = db.stat().st_size if backend.name == "sqlite" else _postgres_bytes(backend)
    assert after < 300_000, (full, after)


def test_sqlite_files_are_owner_only(tmp_path):
    store = AnalysisStore(tmp_path / "new" / "store")
    store.save_snapshot({"a.csv": b"secret"}, {})
    assert stat.S_IMODE((tmp_path / "new" / "store").stat().st_mode) == 0o700
    db = tmp_path / "new" / "store" / "analyses.sqlite3"
    assert stat.S_IMODE(db.stat().st_mode) == 0o600
    assert not list(db.parent.glob("*-journal"))  # no journal left behind after a commit
    store.close()
    os.chmod(db, 0o644)  # an earlier version left it world-readable
    AnalysisStore(tmp_path / "new" / "store").load(store.save_snapshot({"b.csv": b"x"}, {}).id)
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_sqlite_file_of_the_earlier_format_is_moved_in(tmp_path):
    directory = tmp_path / "old"
    directory.mkdir()
    conn = sqlite3.connect(directory / "analyses.sqlite3")
    conn.executescript("""
        CREATE TABLE analyses (id TEXT PRIMARY KEY, created TEXT NOT NULL, title TEXT NOT NULL DEFAULT '',
                               settings TEXT NOT NULL);
        CREATE TABLE files (analysis_id TEXT NOT NULL REFERENCES analyses(id), position INTEGER NOT NULL,
                            name TEXT NOT NULL, role TEXT NOT NULL, data BLOB NOT NULL,
                            PRIMARY KEY (analysis_id, position));""")
    aid = "A" * 16 + "b" * 16
    big = payload("legacy", 300_000)
    conn.execute("INSERT INTO analyses VALUES (?, ?, ?, ?)", (aid, "2026-01-02T03:04:05+00:00", "old", '{"k": 7}'))
    conn.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?)",
                     [(aid, 0, "run.csv", "run", big), (aid, 1, "copy.csv", "run", big),
                      (aid, 2, "qrels.csv", "qrels", b"q")])
    conn.commit()
    conn.close()
    store = AnalysisStore(directory)
    got = store.load(aid)
    assert got.kind == "snapshot" and got.title == "old" and got.settings == {"k": 7}
    assert got.created == "2026-01-02T03:04:05+00:00"
    assert [(f.name, f.role, f.data) for f in got.files] == [("run.csv", "run", big), ("copy.csv", "run", big),
                                                            ("qrels.csv", "qrels", b"q")]
    check = sqlite3.connect(directory / "analyses.sqlite3")
    tables = {r[0] for r in check.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert "files" not in tables and "analyses" not in tables
    assert check.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental from now on
    check.close()
    assert (directory / "analyses.sqlite3").stat().st_size < 2 * 300_000  # one copy, not two


# ---------------------------------------------------------------------------- concurrency and crashes
def test_concurrent_writers_in_threads_lose_nothing(backend):
    store = backend.store()
    shared = payload("shared", 50_000)
    results: dict[int, list] = {}
    errors: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            mine = []
            wid = store.create_working({"shared.csv": shared}, {"writer": n})
            for step in range(4):
                own = payload(f"w{n}s{step}", 20_000)
                store.update_working(wid, files={"shared.csv": shared, "own.csv": own}, settings={"step": step})
                receipt = store.snapshot(wid, title=f"{n}-{step}")
                mine.append((receipt.id, own, step))
            results[n] = mine
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for n, mine in results.items():
        for snapshot_id, own, step in mine:
            got = store.load(snapshot_id)
            assert got.settings == {"step": step} and got.title == f"{n}-{step}"
            assert {f.name: f.data for f in got.files} == {"shared.csv": shared, "own.csv": own}
    # the last own file of each writer is still used by its working copy and snapshot; all
    # 16 are used by snapshots: 1 shared + 16 own contents
    assert backend.count("store_blobs") == 17
    assert backend.count("store_analyses") == 4 + 16


#: the first line of every store process started here: it imports ``metrics_core.store`` without running the
#: package's ``__init__`` (pandas, numpy and the metric registry, which the store never uses), a second of CPU
#: less per process; the store's own modules are imported and run as they are
STORE_ALONE = ("import sys, types; _package = types.ModuleType('metrics_core'); "
               f"_package.__path__ = [{str(REPO_ROOT / 'metrics_core')!r}]; sys.modules['metrics_core'] = _package\n")

WRITER = STORE_ALONE + """
import hashlib, sys
from metrics_core.store import AnalysisStore

def payload(tag, size):
    out, counter = bytearray(), 0
    while len(out) < size:
        out += hashlib.sha256(f"{tag}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])

location, prefix, count, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
store = AnalysisStore(url=location) if "://" in location else AnalysisStore(location)
for i in range(count):
    receipt = store.save_snapshot({"shared.bin": payload("shared", 100_000),
                                   f"{prefix}{i}.bin": payload(f"{prefix}{i}", size)}, {"i": i}, title=prefix)
    print(receipt.id, i, flush=True)
"""


def _writer(backend, prefix: str, count: int, size: int) -> subprocess.Popen:
    location = backend.url or str(backend.directory)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO_ROOT), os.environ.get("PYTHONPATH")) if p))
    return subprocess.Popen([sys.executable, "-c", WRITER, location, prefix, str(count), str(size)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _check_saved(store: AnalysisStore, prefix: str, lines: list[str], size: int) -> None:
    for line in lines:
        snapshot_id, i = line.split()
        got = store.load(snapshot_id)
        assert got.settings == {"i": int(i)} and got.title == prefix
        assert {f.name: f.data for f in got.files} == {"shared.bin": payload("shared", 100_000),
                                                       f"{prefix}{i}.bin": payload(f"{prefix}{i}", size)}


def test_concurrent_writer_processes_lose_nothing(backend):
    procs = {p: _writer(backend, p, 5, 30_000) for p in ("x", "y", "z")}
    outputs = {p: proc.communicate(timeout=deadlines.SUBPROCESS) for p, proc in procs.items()}
    for p, (out, err) in outputs.items():
        assert procs[p].returncode == 0, err
        assert len(out.split("\n")) - 1 == 5
    store = backend.store()
    for p, (out, _) in outputs.items():
        _check_saved(store, p, out.splitlines(), 30_000)
    assert backend.count("store_blobs") == 1 + 15


def test_sigkill_during_saves_loses_no_committed_snapshot(backend):
    store = backend.store()
    size = 3_000_000  # a save takes long enough to be interrupted mid-transaction
    for attempt in range(3):
        prefix = f"k{attempt}_"
        proc = _writer(backend, prefix, 50, size)
        lines = [proc.stdout.readline().strip() for _ in range(attempt + 1)]  # let some saves commit
        os.kill(proc.pid, signal.SIGKILL)
        rest, _ = proc.communicate(timeout=deadlines.SUBPROCESS)
        assert proc.returncode == -signal.SIGKILL
        _check_saved(store, prefix, lines + rest.split("\n")[:-1] if rest else lines, size)
    # nothing half-written: every content has all its chunks and is used by a file, every
    # file's content exists
    assert backend.rows("SELECT sha256 FROM store_blobs WHERE sha256 NOT IN (SELECT sha256 FROM store_files)") == []
    assert backend.rows("SELECT sha256 FROM store_files WHERE sha256 NOT IN (SELECT sha256 FROM store_blobs)") == []
    assert backend.rows("SELECT b.sha256 FROM store_blobs b WHERE b.chunk_count <> "
                        "(SELECT COUNT(*) FROM store_chunks c WHERE c.sha256 = b.sha256)") == []
    receipt = store.save_snapshot({"after.csv": b"still works"}, {})
    assert store.load(receipt.id).files[0].data == b"still works"


# ---------------------------------------------------------------------------- location
def test_env_vars_choose_the_location(tmp_path, monkeypatch):
    monkeypatch.delenv("METRICS_CORE_STORE_URL", raising=False)
    monkeypatch.setenv("METRICS_CORE_STORE_DIR", str(tmp_path / "s"))
    assert default_store_dir() == tmp_path / "s"
    assert AnalysisStore().directory == tmp_path / "s"
    assert AnalysisStore().path == tmp_path / "s" / "analyses.sqlite3"
    monkeypatch.setenv("METRICS_CORE_STORE_URL", f"sqlite:///{tmp_path / 'u' / 'x.sqlite3'}")
    store = AnalysisStore()
    assert store.path == tmp_path / "u" / "x.sqlite3"
    aid = store.save({"a.csv": b"1"}, {})
    assert (tmp_path / "u" / "x.sqlite3").is_file() and store.load(aid).files[0].data == b"1"
    assert AnalysisStore(tmp_path / "explicit").path == tmp_path / "explicit" / "analyses.sqlite3"
    monkeypatch.delenv("METRICS_CORE_STORE_DIR")
    monkeypatch.delenv("METRICS_CORE_STORE_URL")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_store_dir() == tmp_path / "xdg" / "metrics-core"


def test_postgres_url_from_the_environment(backend, monkeypatch):
    url = backend.url or f"sqlite:///{backend.directory / 'analyses.sqlite3'}"
    monkeypatch.setenv("METRICS_CORE_STORE_URL", url)
    receipt = AnalysisStore().save_snapshot({"a.csv": b"via env"}, {"k": 3})
    assert backend.store().load(receipt.id).files[0].data == b"via env"


def test_survives_a_new_process(backend):
    aid = backend.store().save({"run.csv": b"a,b\n1,2\n"}, {"k": 5})
    location = backend.url or str(backend.directory)
    code = STORE_ALONE + ("import sys; from metrics_core.store import AnalysisStore; "
                          "s = AnalysisStore(url=sys.argv[1]) if '://' in sys.argv[1] else AnalysisStore(sys.argv[1]); "
                          "a = s.load(sys.argv[2]); "
                          "print(a.settings['k'], a.files[0].name, "
                          "a.files[0].data.decode().strip().replace(chr(10), '|'))")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    out = subprocess.run([sys.executable, "-c", code, location, aid], capture_output=True, text=True, check=True,
                         env=env)
    assert out.stdout.strip() == "5 run.csv a,b|1,2"


def test_unwritable_dir_gives_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="METRICS_CORE_STORE_DIR") as info:
        AnalysisStore(blocker / "sub").save({"a": b""}, {})
    assert "\n" not in str(info.value)


def test_unreachable_database_gives_clear_error():
    store = AnalysisStore(url="postgresql+psycopg://nobody:secret@127.0.0.1:1/none")
    with pytest.raises(StoreError, match="METRICS_CORE_STORE_URL") as info:
        store.load(new_analysis_id())
    assert "\n" not in str(info.value) and "secret" not in str(info.value)
    with pytest.raises(StoreError, match="not a database URL"):
        AnalysisStore(url="not a url")


def test_a_file_given_with_its_digest_is_stored_under_it_without_hashing_again(backend, monkeypatch):
    from metrics_core.store import blobs

    data = payload("digest", 5_000)
    digest = hashlib.sha256(data).hexdigest()
    hashed: list[int] = []
    real = blobs.sha256_hex
    monkeypatch.setattr(blobs, "sha256_hex", lambda b: hashed.append(len(b)) or real(b))
    store = backend.store()
    aid = store.create_working([SavedFile("run.csv", data, "run", digest)], {})
    assert hashed == []  # not hashed when saved
    (loaded,) = store.load(aid).files
    assert loaded.data == data and loaded.sha256 == digest
    assert hashed == [len(data)]  # read back: checked against the digest


def test_a_small_disk_names_the_reserve_it_keeps(tmp_path, monkeypatch):
    """A disk with less free space than the reserve: the refusal says what is free beyond the 64 MiB
    reserve and that the reserve exists (not "only 0 bytes free"), in one line."""
    import shutil as _shutil
    from collections import namedtuple

    from metrics_core.store import quota

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(_shutil, "disk_usage", lambda _p: usage(100 * 2**20, 70 * 2**20, 30 * 2**20))
    assert quota.disk_free(tmp_path) == 0  # 30 MiB free, all of it inside the 64 MiB reserve
    store = AnalysisStore(tmp_path / "store")
    with pytest.raises(StoreFullError) as info:
        store.save_snapshot({"a.csv": b"user_id,item_id,score\n"}, {}, title="T")
    message = str(info.value)
    assert "\n" not in message and "64.0 MiB" in message and "always leaves free" in message, message


@pytest.mark.parametrize("name, shown", [("a\x00b.csv", "\\x00 at position 2"), ("caf\udce9.csv", "\\xe9 at position 4"),
                                         ("x\ud800.csv", "\\ud800 at position 2")])
def test_a_name_no_database_keeps_is_one_line(backend, name, shown):
    """A NUL (PostgreSQL refuses it; it said to check the database URL) or a lone surrogate in a
    file name: one line naming the character and its position, on both backends; nothing saved."""
    store = backend.store()
    with pytest.raises(StoreError, match="cannot keep; rename it") as info:
        store.create_working({name: b"user_id,item_id,score\n"}, {})
    assert shown in str(info.value) and "\n" not in str(info.value) and "database URL" not in str(info.value)
    assert backend.count("store_analyses") == 0


def test_a_file_name_over_the_limit_says_so(backend):
    """An upload named with 1,204 characters: the limit, not "the analysis store is not available"."""
    store = backend.store()
    with pytest.raises(StoreError, match="has 1204 characters; at most 1000 are kept, shorten it"):
        store.create_working({"n" * 1200 + ".csv": b"user_id,item_id,score\n"}, {})


def test_the_file_name_check_accepts_the_limit_and_refuses_past_it_in_one_line():
    """``check_file_name`` (the dashboard refuses an upload with it, before the save): 1,000
    characters pass, 1,001 and a NUL do not, each in one line that says to rename the file."""
    from metrics_core.store import MAX_NAME_CHARS, check_file_name

    check_file_name("n" * (MAX_NAME_CHARS - 4) + ".csv")
    for name, said in (("n" * 997 + ".csv", "has 1001 characters; at most 1000 are kept, rename the file"),
                       ("a\x00b.csv", "at position 2")):
        with pytest.raises(StoreError, match="rename") as info:
            check_file_name(name)
        assert said in str(info.value) and "\n" not in str(info.value)
