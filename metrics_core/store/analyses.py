"""``AnalysisStore``: working copies and snapshots of analyses, over any SQLAlchemy database.

See the package docstring (:mod:`metrics_core.store`) for the model and the settings.
"""

from __future__ import annotations

import json
import os
import re
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

import sqlalchemy as sa
from sqlalchemy.engine import Connection, make_url

from metrics_core.store import accounting, blobs, engine, quota, schema
from metrics_core.store.config import DIR_ENV, URL_ENV, StoreLimits, default_store_dir
from metrics_core.store.errors import NotOwnerError, StaleRevisionError, StoreError
from metrics_core.terminal import escape
from metrics_core.store.ids import (hash_delete_token, hash_owner, new_analysis_id, new_delete_token,
                                    token_matches, validate_analysis_id, validate_delete_token)
from metrics_core.store.records import (SNAPSHOT, WORKING, SavedAnalysis, SavedFile, SnapshotReceipt,
                                        StoreUsage)

__all__ = ["DB_NAME", "MAX_BRIEF_BYTES", "MAX_TITLE_CHARS", "MAX_NOTES_CHARS", "MAX_SETTINGS_BYTES", "MAX_NAME_CHARS",
           "MAX_ROLE_CHARS", "AnalysisStore", "check_file_name"]

#: The SQLite file's name inside the store directory.
DB_NAME = "analyses.sqlite3"
MAX_TITLE_CHARS = 300
MAX_NOTES_CHARS = 20_000
#: Settings are a few choices (column mappings, view settings), never data: 64 KiB as JSON.
MAX_SETTINGS_BYTES = 64 * 1024
#: A file's name and role, in characters.
MAX_NAME_CHARS = 1_000
MAX_ROLE_CHARS = 100
#: A snapshot's kept brief (a few tables of at most a few hundred rows, as JSON): 2 MiB at most.
MAX_BRIEF_BYTES = 2 * 1024 * 1024
#: Lengths of a kept brief's settings key (a SHA-256 in hex) and format version.
_BRIEF_KEY_CHARS, _BRIEF_FORMAT_CHARS = 64, 32
#: How a stored content is named: the lowercase hex SHA-256 of its bytes.
_DIGEST = re.compile(r"\A[0-9a-f]{64}\Z")
# A working copy's expiry is written back on use at most this often (seconds).
_REFRESH_EVERY = 60.0

FileInput = Iterable["SavedFile | tuple"] | Mapping[str, bytes]


def _iso(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")


def _normalise_files(files: FileInput) -> list[tuple[SavedFile, str]]:
    """``files`` as :class:`SavedFile` objects with the SHA-256 of each content (the file's own
    ``sha256`` when it has one, else computed; names of at most :data:`MAX_NAME_CHARS` characters,
    roles of at most :data:`MAX_ROLE_CHARS`)."""
    if isinstance(files, Mapping):
        items = [SavedFile(str(name), bytes(data)) for name, data in files.items()]
    else:
        items = [f if isinstance(f, SavedFile) else SavedFile(str(f[0]), bytes(f[1]), *(str(x) for x in f[2:3]))
                 for f in files]
    for f in items:
        shown = repr(f.name[:40]) + ("..." if len(f.name) > 40 else "")
        _text(f.name, f"name of the file {shown}", MAX_NAME_CHARS)
        _text(f.role, f"role of the file {shown}", MAX_ROLE_CHARS)
    # a SavedFile that carries its digest (the dashboard hashes each upload once, when it arrives)
    # is not hashed again; reading a blob back checks the digest against the bytes (blobs.read)
    return [(f, f.sha256 or blobs.sha256_hex(f.data)) for f in items]


def _settings_json(settings: Mapping[str, Any] | None) -> str:
    try:
        text = json.dumps(dict(settings or {}), sort_keys=True, allow_nan=True)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"analysis settings must be JSON-serialisable: {exc}") from None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SETTINGS_BYTES:
        raise StoreError(f"the analysis settings take {size:,} bytes as JSON, more than the {MAX_SETTINGS_BYTES:,} "
                         "kept per analysis; keep data in files (in the dashboard: remove long parameters "
                         "from the address)")
    return text


def check_file_name(name: str) -> None:
    """Raise a one-line :class:`StoreError` when the store cannot keep a file under ``name``: more
    than :data:`MAX_NAME_CHARS` characters, or a character no database text column keeps (NUL, a
    lone surrogate). The message says what to do (rename the file); it does not repeat the name,
    which the caller shows as it sees fit (a 1,204-character name is not a readable message)."""
    _text(name, "file name", MAX_NAME_CHARS, fix="rename the file")


def _text(value: Any, what: str, limit: int, fix: str = "shorten it") -> str:
    """``value`` as the text the database keeps, else a one-line StoreError: longer than ``limit``
    (the message ends with ``fix``, what to do), or holding a character no database text column
    keeps (NUL, which PostgreSQL refuses, or a lone surrogate, which is not UTF-8)."""
    value = "" if value is None else str(value)
    if len(value) > limit:
        raise StoreError(f"the {what} has {len(value)} characters; at most {limit} are kept, {fix}")
    bad = next((c for c in value if c == "\x00" or "\ud800" <= c <= "\udfff"), None)
    if bad is not None:
        raise StoreError(f"the {what} holds the character {escape(bad)} at position {value.index(bad) + 1}, "
                         "which the analysis store cannot keep; rename it without that character")
    return value


class AnalysisStore:
    """Working copies and snapshots in one database.

    ``AnalysisStore()`` uses ``$METRICS_CORE_STORE_URL`` when set, else SQLite in
    ``$METRICS_CORE_STORE_DIR`` (or the user data directory). ``AnalysisStore(directory)`` is
    SQLite in ``directory``; ``AnalysisStore(url=...)`` any SQLAlchemy URL. ``quota_bytes``
    (int or a size such as ``"10GiB"``), ``client_share`` (a fraction such as ``0.25`` or
    ``"25%"``) and ``working_days`` override ``$METRICS_CORE_STORE_QUOTA``,
    ``$METRICS_CORE_STORE_CLIENT_SHARE`` and ``$METRICS_CORE_STORE_WORKING_DAYS``.

    ``owner`` (every method that stores or changes something takes it) is the secret of the
    client acting: the dashboard passes its browser's secret, a library caller any text or
    nothing (all calls without one are one client). A working copy can be changed or deleted
    only by the client that created it; the quota's per-client share counts what each client's
    records hold. ``clock`` returns
    the current time in seconds since the epoch (tests pass a fake one). ``chunk_bytes`` is
    the size of the pieces file contents are stored in.
    """

    def __init__(self, directory: str | os.PathLike | None = None, *, url: str | None = None,
                 quota_bytes: int | str | None = None, working_days: float | None = None,
                 clock: Callable[[], float] | None = None, chunk_bytes: int = blobs.DEFAULT_CHUNK_BYTES,
                 client_share: float | str | None = None):
        if url is None and directory is None:
            url = os.environ.get(URL_ENV, "").strip() or None
        if url is not None:
            self.url = str(url)
            try:
                self.path = engine.sqlite_path(self.url)
            except sa.exc.ArgumentError:
                raise StoreError(f"{URL_ENV} is not a database URL such as "
                                 "postgresql+psycopg://user@host/dbname or sqlite:////path/store.sqlite3") from None
            self.directory = self.path.parent if self.path is not None else None
        else:
            self.directory = Path(directory).expanduser() if directory is not None else default_store_dir()
            self.path = self.directory / DB_NAME
            self.url = engine.sqlite_url(self.path)
        self.limits = StoreLimits.resolve(quota_bytes, working_days, client_share)
        if chunk_bytes < 1:
            raise StoreError(f"chunk_bytes must be >= 1, not {chunk_bytes}")
        self.chunk_bytes = int(chunk_bytes)
        self._clock = clock or time.time

    # ------------------------------------------------------------------ plumbing
    @property
    def location(self) -> str:
        """The SQLite file, or the database URL without its password."""
        if self.path is not None:
            return str(self.path)
        return make_url(self.url).render_as_string(hide_password=True)

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        """Database and file-system failures as one-line :class:`StoreError`s."""
        try:
            yield
        except (sa.exc.SQLAlchemyError, OSError) as exc:
            reason = (str(getattr(exc, "orig", None) or exc).strip().splitlines() or [type(exc).__name__])[0]
            where = (f"check that {self.path.parent} is writable and has free space, or set {DIR_ENV}"
                     if self.path is not None else f"check {URL_ENV} and that the database is reachable")
            raise StoreError(f"cannot {action} the analysis store at {self.location}: {reason}; {where}") from None

    def _engine(self):
        with self._errors("open"):
            return engine.get_engine(self.url)

    def close(self) -> None:
        """Close this process's connections to the store's database."""
        engine.dispose_engine(self.url)

    def _now(self) -> float:
        return float(self._clock())

    # ------------------------------------------------------------------ reading
    def _row(self, conn: Connection, analysis_id: str):
        return conn.execute(sa.select(schema.analyses).where(schema.analyses.c.id == analysis_id)).first()

    def _missing(self, analysis_id: str) -> StoreError:
        return StoreError(f"no saved analysis with id {analysis_id} on this server; "
                          "it may have been saved on another deployment, deleted, or expired")

    def _live_row(self, conn: Connection, analysis_id: str, now: float):
        """The row of an analysis that exists and has not expired, else StoreError."""
        row = self._row(conn, analysis_id)
        if row is None:
            raise self._missing(analysis_id)
        if row.kind == WORKING and row.expires_at is not None and row.expires_at <= now:
            days = self.limits.working_seconds / 86400
            raise StoreError(f"the working copy {analysis_id} expired after {days:g} days without use; "
                             "upload the files again")
        return row

    def load(self, analysis_id: str, *, owner: str | None = None,
             contents: Callable[[str, Callable[[], bytes]], bytes] | None = None) -> SavedAnalysis:
        """Load a working copy or snapshot (a working copy's expiry restarts: it was used).
        ``editable`` on the result says whether ``owner`` may change it.

        ``contents(sha256, read)``, when given, supplies each distinct content: it returns bytes
        it already holds for that digest, or calls ``read()`` (which reads them from the store,
        checked against the digest, inside the load's transaction). A server that shows one
        stored file to many viewers keeps a single copy this way."""
        validate_analysis_id(analysis_id)
        owner_hash = hash_owner(owner)
        engine_ = self._engine()
        now = self._now()
        with self._errors("read from"):
            with engine.read_transaction(engine_) as conn:
                row = self._live_row(conn, analysis_id, now)
                file_rows = conn.execute(sa.select(schema.files).where(schema.files.c.analysis_id == analysis_id)
                                         .order_by(schema.files.c.position)).all()
                found: dict[str, bytes] = {}
                for f in file_rows:
                    if f.sha256 not in found:
                        def read(digest: str = f.sha256) -> bytes:
                            return blobs.read(conn, digest)
                        found[f.sha256] = read() if contents is None else contents(f.sha256, read)
        expires = row.expires_at
        if row.kind == WORKING and expires - now < self.limits.working_seconds - _REFRESH_EVERY:
            expires = self._refresh(engine_, analysis_id, now) or expires
        return SavedAnalysis(
            id=analysis_id, created=_iso(row.created_at), settings=json.loads(row.settings),
            files=tuple(SavedFile(name=f.name, role=f.role, data=found[f.sha256], sha256=f.sha256)
                        for f in file_rows),
            title=row.title, notes=row.notes, kind=row.kind, updated=_iso(row.updated_at),
            expires=_iso(expires) if row.kind == WORKING else None, revision=int(row.revision),
            editable=row.kind == WORKING and row.owner_sha256 == owner_hash)

    def read_content(self, sha256: str) -> bytes:
        """The stored bytes of the content with this hex SHA-256 (checked against it), as
        :meth:`load` gave them for a file: for a caller that dropped its copy and needs it
        again. :class:`StoreError` when no file holds that content any more."""
        if not isinstance(sha256, str) or not _DIGEST.match(sha256):
            raise StoreError("a stored content is named by the 64 hexadecimal digits of its SHA-256")
        with self._errors("read from"), engine.read_transaction(self._engine()) as conn:
            return blobs.read(conn, sha256)

    def _refresh(self, engine_, analysis_id: str, now: float) -> float | None:
        """Restart a working copy's retention; return the new expiry, or ``None`` when the
        database is busy with a long save (the next use refreshes it; the load itself worked)."""
        expires = now + self.limits.working_seconds
        try:
            with engine.write_transaction(engine_, lock=False) as conn:
                conn.execute(schema.analyses.update().where(schema.analyses.c.id == analysis_id,
                                                            schema.analyses.c.kind == WORKING)
                             .values(expires_at=expires))
        except sa.exc.OperationalError:
            return None
        return expires

    def exists(self, analysis_id: str) -> bool:
        """Whether a well-formed id names a live analysis (malformed ids raise StoreError)."""
        validate_analysis_id(analysis_id)
        now = self._now()
        with self._errors("read from"), engine.read_transaction(self._engine()) as conn:
            row = self._row(conn, analysis_id)
        return row is not None and not (row.kind == WORKING and row.expires_at <= now)

    def usage(self, *, owner: str | None = None) -> StoreUsage:
        """Bytes stored (each distinct content once, and every record with its settings,
        title, notes and file names), the quota and what still fits; then the same for the
        client ``owner`` against its share."""
        owner_hash = hash_owner(owner)
        with self._errors("read from"), engine.read_transaction(self._engine()) as conn:
            used = accounting.total_used(conn)
            mine = accounting.client_used(conn, owner_hash)
        free = quota.room(used, self.limits.quota_bytes, quota.disk_free(self.directory))
        share = self.limits.client_quota_bytes
        return StoreUsage(used_bytes=used, quota_bytes=self.limits.quota_bytes, free_bytes=free,
                          client_used_bytes=mine, client_quota_bytes=share,
                          client_free_bytes=min(free, max(0, share - mine)))

    def check_can_store(self, nbytes: int, *, owner: str | None = None, sha256: str | None = None) -> None:
        """Raise :class:`StoreFullError` (one line) when a file of ``nbytes`` cannot be stored
        for ``owner``; call it when a file is uploaded, before reading it. With its ``sha256``,
        a content already stored costs nothing against the quota, and nothing against the
        client's share when one of its analyses already uses it. Expired working copies are
        removed first."""
        owner_hash = hash_owner(owner)
        self.purge_expired()
        with self._errors("read from"), engine.read_transaction(self._engine()) as conn:
            used = accounting.total_used(conn)
            mine = accounting.client_used(conn, owner_hash)
            stored = sha256 is not None and bool(blobs.existing(conn, [sha256]))
            held = stored and accounting.client_uses(conn, owner_hash, sha256)
        self._refuse(0 if stored else int(nbytes), used, 0 if held else int(nbytes), mine)

    def can_store(self, nbytes: int, *, owner: str | None = None, sha256: str | None = None) -> bool:
        """Whether ``nbytes`` more can be stored now (see :meth:`check_can_store` for the message)."""
        try:
            self.check_can_store(nbytes, owner=owner, sha256=sha256)
        except StoreError:
            return False
        return True

    def _refuse(self, needed: int, used: int, client_needed: int, client_used: int) -> None:
        """Raise the quota's refusal, else the client share's, when the bytes do not fit."""
        refusal = quota.refusal(needed, used, self.limits.quota_bytes, quota.disk_free(self.directory))
        if refusal is None:
            refusal = quota.client_refusal(client_needed, client_used, self.limits.client_quota_bytes,
                                           self.limits.client_share, self.limits.working_seconds / 86400)
        if refusal is not None:
            raise refusal

    def _measure(self, conn: Connection, owner_hash: str | None) -> tuple[int, int]:
        """The store's total and one client's, as counted against the quota."""
        return accounting.total_used(conn), accounting.client_used(conn, owner_hash)

    def _check_growth(self, conn: Connection, before: tuple[int, int], owner_hash: str | None) -> None:
        """Refuse (and so roll back) a write that grows the store past its quota or the client
        past its share; a write that adds nothing is never refused."""
        after = self._measure(conn, owner_hash)
        self._refuse(after[0] - before[0], before[0], after[1] - before[1], before[1])

    # ------------------------------------------------------------------ writing
    def _write(self, action: str, work: Callable[[Connection, float, list[int]], Any], purged: bool = False) -> Any:
        """Run ``work(conn, now, freed)`` in one write transaction after removing expired
        working copies; ``work`` adds the bytes it frees to ``freed[0]``. Freed space goes
        back to the file system after the commit. Returns what ``work`` returns, or with
        ``purged`` the number of expired working copies removed."""
        engine_ = self._engine()
        now = self._now()
        freed = [0]
        with self._errors(action):
            with engine.write_transaction(engine_) as conn:
                expired, freed[0] = self._purge(conn, now)
                result = work(conn, now, freed)
            if freed[0]:
                engine.reclaim_space(engine_)
        return expired if purged else result

    def _purge(self, conn: Connection, now: float) -> tuple[int, int]:
        """Remove expired working copies; return how many and the bytes freed."""
        expired = conn.execute(sa.select(schema.analyses.c.id).where(
            schema.analyses.c.kind == WORKING, schema.analyses.c.expires_at <= now)).scalars().all()
        return len(expired), sum(self._remove(conn, analysis_id) for analysis_id in expired)

    def _remove(self, conn: Connection, analysis_id: str) -> int:
        """Delete an analysis and the contents nothing else uses; return bytes freed (+1 so
        that removing an analysis without files still counts as a change)."""
        digests = self._drop_files(conn, analysis_id)
        conn.execute(schema.briefs.delete().where(schema.briefs.c.analysis_id == analysis_id))
        conn.execute(schema.analyses.delete().where(schema.analyses.c.id == analysis_id))
        return blobs.collect_garbage(conn, digests) + 1

    def _drop_files(self, conn: Connection, analysis_id: str) -> list[str]:
        digests = conn.execute(sa.select(schema.files.c.sha256)
                               .where(schema.files.c.analysis_id == analysis_id)).scalars().all()
        conn.execute(schema.files.delete().where(schema.files.c.analysis_id == analysis_id))
        return digests

    def _add_files(self, conn: Connection, analysis_id: str,
                   items: list[tuple[SavedFile, str]]) -> list[tuple[str, bytes]]:
        """Add the file rows and announce the contents not stored yet (their sizes count from
        now on); return those contents, for :meth:`_finish` to write once the quota allows."""
        known = blobs.existing(conn, [digest for _, digest in items])
        pending: dict[str, bytes] = {}
        for f, digest in items:
            if digest not in known and digest not in pending:
                blobs.announce(conn, digest, len(f.data), self.chunk_bytes)
                pending[digest] = f.data
        if items:
            conn.execute(schema.files.insert(), [
                {"analysis_id": analysis_id, "position": i, "name": f.name, "role": f.role, "sha256": digest}
                for i, (f, digest) in enumerate(items)])
        return list(pending.items())

    def _count_record(self, conn: Connection, analysis_id: str) -> None:
        """Set what the record counts against the quota from what it now holds."""
        a, f = schema.analyses.c, schema.files.c
        row = conn.execute(sa.select(a.settings, a.title, a.notes).where(a.id == analysis_id)).one()
        names = conn.execute(sa.select(f.name, f.role).where(f.analysis_id == analysis_id)).all()
        brief = conn.execute(sa.select(schema.briefs.c.content)
                             .where(schema.briefs.c.analysis_id == analysis_id)).scalar()
        size = accounting.record_bytes(row.settings, row.title, row.notes, [(n.name, n.role) for n in names], brief)
        conn.execute(schema.analyses.update().where(a.id == analysis_id).values(meta_bytes=size))

    def _finish(self, conn: Connection, analysis_id: str, before: tuple[int, int], owner_hash: str | None,
                pending: list[tuple[str, bytes]] = ()) -> None:
        """Count the record, check the quota and the client's share against what the store
        held ``before`` the write, then write the new contents' bytes."""
        self._count_record(conn, analysis_id)
        self._check_growth(conn, before, owner_hash)
        for digest, data in pending:
            blobs.write_chunks(conn, digest, data, self.chunk_bytes)

    def _new_id(self, conn: Connection) -> str:
        while True:  # a collision of 192-bit ids is practically impossible; writers take turns
            analysis_id = new_analysis_id()
            if self._row(conn, analysis_id) is None:
                return analysis_id

    def _insert(self, conn: Connection, now: float, kind: str, settings: str, title: str, notes: str,
                owner_hash: str | None, token_hash: str | None = None) -> str:
        analysis_id = self._new_id(conn)
        conn.execute(schema.analyses.insert().values(
            id=analysis_id, kind=kind, created_at=now, updated_at=now,
            expires_at=now + self.limits.working_seconds if kind == WORKING else None,
            title=title, notes=notes, settings=settings, delete_token_sha256=token_hash,
            owner_sha256=owner_hash, revision=1, meta_bytes=accounting.ANALYSIS_RECORD_BYTES))
        return analysis_id

    def _own_working_row(self, conn: Connection, analysis_id: str, now: float, owner_hash: str | None):
        """The row of a live working copy that ``owner_hash`` may change, else StoreError."""
        row = self._live_row(conn, analysis_id, now)
        if row.kind != WORKING:
            raise StoreError(f"the snapshot {analysis_id} is read-only; open it and share again to save changes")
        if row.owner_sha256 != owner_hash:
            raise NotOwnerError(f"the working copy {analysis_id} belongs to the browser that created it and is "
                                "read-only here; make your own copy to change it")
        return row

    def create_working(self, files: FileInput = (), settings: Mapping[str, Any] | None = None, *,
                       title: str = "", notes: str = "", owner: str | None = None) -> str:
        """Start a working copy with ``files`` and ``settings``, owned by ``owner``; return its id."""
        items = _normalise_files(files)
        settings_json = _settings_json(settings)
        title = _text(title, "title", MAX_TITLE_CHARS)
        notes = _text(notes, "notes", MAX_NOTES_CHARS)
        owner_hash = hash_owner(owner)

        def work(conn, now, _freed):
            before = self._measure(conn, owner_hash)
            analysis_id = self._insert(conn, now, WORKING, settings_json, title, notes, owner_hash)
            self._finish(conn, analysis_id, before, owner_hash, self._add_files(conn, analysis_id, items))
            return analysis_id
        return self._write("save in", work)

    def copy(self, analysis_id: str, *, owner: str | None = None) -> str:
        """Make ``owner``'s own working copy of any analysis (a working copy or a snapshot):
        the same files (shared, not stored again), settings, title and notes. Return its id."""
        validate_analysis_id(analysis_id)
        owner_hash = hash_owner(owner)

        def work(conn, now, _freed):
            before = self._measure(conn, owner_hash)
            row = self._live_row(conn, analysis_id, now)
            copy_id = self._insert(conn, now, WORKING, row.settings, row.title, row.notes, owner_hash)
            self._copy_files(conn, analysis_id, copy_id)
            self._finish(conn, copy_id, before, owner_hash)
            return copy_id
        return self._write("save in", work)

    def _copy_files(self, conn: Connection, source_id: str, target_id: str) -> None:
        """Give ``target_id`` the file rows of ``source_id`` (the contents are shared)."""
        conn.execute(schema.files.insert().from_select(
            ["analysis_id", "position", "name", "role", "sha256"],
            sa.select(sa.literal(target_id, sa.String), schema.files.c.position, schema.files.c.name,
                      schema.files.c.role, schema.files.c.sha256)
            .where(schema.files.c.analysis_id == source_id)))

    def update_working(self, analysis_id: str, *, files: FileInput | None = None,
                       settings: Mapping[str, Any] | None = None, title: str | None = None,
                       notes: str | None = None, owner: str | None = None, revision: int | None = None) -> int:
        """Change a working copy: the arguments given replace what it holds (``files``
        replaces the whole list; contents already stored are not stored again). Only its
        ``owner`` may change it (else :class:`NotOwnerError`); snapshots cannot be changed.
        With ``revision`` (what :meth:`load` or the previous update returned), a working copy
        changed since then elsewhere is left alone and :class:`StaleRevisionError` raised.
        Returns the new revision."""
        validate_analysis_id(analysis_id)
        owner_hash = hash_owner(owner)
        items = None if files is None else _normalise_files(files)
        values: dict[str, Any] = {}
        if settings is not None:
            values["settings"] = _settings_json(settings)
        if title is not None:
            values["title"] = _text(title, "title", MAX_TITLE_CHARS)
        if notes is not None:
            values["notes"] = _text(notes, "notes", MAX_NOTES_CHARS)

        def work(conn, now, freed):
            row = self._own_working_row(conn, analysis_id, now, owner_hash)
            if revision is not None and int(revision) != row.revision:
                raise StaleRevisionError(
                    f"this analysis was changed in another tab (it is at revision {row.revision}, this tab "
                    f"shows revision {int(revision)}): reload the page to see it; this change was not saved")
            before = self._measure(conn, owner_hash)
            pending: list[tuple[str, bytes]] = []
            if items is not None:
                old = self._drop_files(conn, analysis_id)
                freed[0] += blobs.collect_garbage(conn, set(old) - {digest for _, digest in items})
                pending = self._add_files(conn, analysis_id, items)
            conn.execute(schema.analyses.update().where(schema.analyses.c.id == analysis_id).values(
                **values, updated_at=now, expires_at=now + self.limits.working_seconds, revision=row.revision + 1))
            self._finish(conn, analysis_id, before, owner_hash, pending)
            return row.revision + 1
        return self._write("save in", work)

    def snapshot(self, working_id: str, *, title: str | None = None, notes: str | None = None,
                 owner: str | None = None) -> SnapshotReceipt:
        """Freeze a working copy's current files and settings into a new read-only snapshot
        with ``title`` and ``notes`` (``None``: the working copy's own), saved by ``owner``
        (anyone who can open a working copy may freeze what it shows). The working copy
        stays as it is; the files are shared, not copied. The receipt's delete token is
        returned only here."""
        validate_analysis_id(working_id)
        owner_hash = hash_owner(owner)
        title = None if title is None else _text(title, "title", MAX_TITLE_CHARS)
        notes = None if notes is None else _text(notes, "notes", MAX_NOTES_CHARS)
        token = new_delete_token()

        def work(conn, now, _freed):
            row = self._live_row(conn, working_id, now)
            if row.kind != WORKING:
                raise StoreError(f"{working_id} is already a snapshot; share its link as it is")
            before = self._measure(conn, owner_hash)
            snapshot_id = self._insert(conn, now, SNAPSHOT, row.settings, row.title if title is None else title,
                                       row.notes if notes is None else notes, owner_hash, hash_delete_token(token))
            self._copy_files(conn, working_id, snapshot_id)
            self._finish(conn, snapshot_id, before, owner_hash)
            conn.execute(schema.analyses.update().where(schema.analyses.c.id == working_id)
                         .values(expires_at=now + self.limits.working_seconds))
            return SnapshotReceipt(id=snapshot_id, delete_token=token)
        return self._write("save in", work)

    def save_snapshot(self, files: FileInput, settings: Mapping[str, Any] | None = None, *,
                      title: str = "", notes: str = "", owner: str | None = None) -> SnapshotReceipt:
        """Store ``files`` and ``settings`` directly as a read-only snapshot saved by ``owner``."""
        items = _normalise_files(files)
        settings_json = _settings_json(settings)
        title = _text(title, "title", MAX_TITLE_CHARS)
        notes = _text(notes, "notes", MAX_NOTES_CHARS)
        owner_hash = hash_owner(owner)
        token = new_delete_token()

        def work(conn, now, _freed):
            before = self._measure(conn, owner_hash)
            snapshot_id = self._insert(conn, now, SNAPSHOT, settings_json, title, notes, owner_hash,
                                       hash_delete_token(token))
            self._finish(conn, snapshot_id, before, owner_hash, self._add_files(conn, snapshot_id, items))
            return SnapshotReceipt(id=snapshot_id, delete_token=token)
        return self._write("save in", work)

    def save(self, files: FileInput, settings: Mapping[str, Any] | None = None, title: str = "", *,
             owner: str | None = None) -> str:
        """Earlier interface: store a snapshot and return only its id (its delete token is not
        kept anywhere, so only :meth:`operator_delete` can remove it). New code uses
        :meth:`save_snapshot` or :meth:`snapshot`."""
        return self.save_snapshot(files, settings, title=title, owner=owner).id

    # ------------------------------------------------------------------ kept briefs
    def stored_brief(self, analysis_id: str, settings_key: str, format_version: str) -> str | None:
        """The brief kept with snapshot ``analysis_id`` (its JSON text) when it was computed under
        ``settings_key`` and ``format_version``; ``None`` when none is kept, or one under other
        settings or another format (the caller computes it again). The text is what the server
        stored: the caller still checks its shape before using it."""
        validate_analysis_id(analysis_id)
        b = schema.briefs.c
        with self._errors("read from"), engine.read_transaction(self._engine()) as conn:
            return conn.execute(sa.select(b.content).where(
                b.analysis_id == analysis_id, b.settings_key == str(settings_key),
                b.format == str(format_version))).scalar()

    def keep_brief(self, analysis_id: str, settings_key: str, format_version: str, content: str,
                   *, owner: str | None = None) -> None:
        """Keep ``content`` (a brief's JSON, at most :data:`MAX_BRIEF_BYTES`) with snapshot
        ``analysis_id``: one brief per snapshot, computed by the server from the snapshot's own
        files. Anyone who can open the snapshot may have one kept when none is (or only one of
        another ``format_version``, which no reader can use); only the client that saved the
        snapshot (``owner``, the secret it was saved with) replaces a kept one,
        so a reader who opens the link with other settings never takes the link's first screen
        away from the next reader (:class:`NotOwnerError`). It counts with the snapshot's record,
        against the share of the client that saved it (:class:`StoreFullError` when it does not
        fit); working copies keep none (they change)."""
        validate_analysis_id(analysis_id)
        owner_hash = hash_owner(owner)
        key = _text(settings_key, "brief's settings key", _BRIEF_KEY_CHARS)
        fmt = _text(format_version, "brief's format version", _BRIEF_FORMAT_CHARS)
        size = len(str(content).encode("utf-8", "surrogatepass"))
        if size > MAX_BRIEF_BYTES:
            raise StoreError(f"the brief takes {size:,} bytes as JSON, more than the {MAX_BRIEF_BYTES:,} kept "
                             "per snapshot; it is computed from the files instead")

        def work(conn, now, _freed):
            row = self._live_row(conn, analysis_id, now)
            if row.kind != SNAPSHOT:
                raise StoreError(f"{analysis_id} is a working copy; only a snapshot keeps its brief")
            kept = conn.execute(sa.select(schema.briefs.c.analysis_id).where(
                schema.briefs.c.analysis_id == analysis_id, schema.briefs.c.format == fmt).limit(1)).first()
            if kept is not None and owner_hash != row.owner_sha256:
                raise NotOwnerError(f"snapshot {analysis_id} keeps its brief already; only the client that "
                                    "saved it may replace it")
            before = self._measure(conn, row.owner_sha256)
            conn.execute(schema.briefs.delete().where(schema.briefs.c.analysis_id == analysis_id))
            conn.execute(schema.briefs.insert().values(analysis_id=analysis_id, settings_key=key, format=fmt,
                                                       content=str(content), created_at=now))
            self._count_record(conn, analysis_id)
            self._check_growth(conn, before, row.owner_sha256)
        self._write("save in", work)

    # ------------------------------------------------------------------ deleting
    def delete_snapshot(self, analysis_id: str, delete_token: str) -> None:
        """Delete a snapshot; ``delete_token`` must be the one returned when it was saved."""
        validate_analysis_id(analysis_id)
        validate_delete_token(delete_token)

        def work(conn, now, freed):
            row = self._live_row(conn, analysis_id, now)
            if row.kind != SNAPSHOT:
                raise StoreError(f"{analysis_id} is a working copy, not a snapshot; it needs no delete token")
            if not token_matches(delete_token, row.delete_token_sha256):
                raise StoreError(f"this delete link does not belong to snapshot {analysis_id}; "
                                 "use the delete link shown when it was saved")
            freed[0] += self._remove(conn, analysis_id)
        self._write("delete from", work)

    def delete_working(self, analysis_id: str, *, owner: str | None = None) -> bool:
        """Delete a working copy of ``owner`` (else :class:`NotOwnerError`); return whether it
        existed."""
        validate_analysis_id(analysis_id)
        owner_hash = hash_owner(owner)

        def work(conn, _now, freed):
            row = self._row(conn, analysis_id)
            if row is None:
                return False
            if row.kind != WORKING:
                raise StoreError(f"{analysis_id} is a snapshot; deleting it needs its delete link")
            if row.owner_sha256 != owner_hash:
                raise NotOwnerError(f"the working copy {analysis_id} belongs to the browser that created it; "
                                    "only that browser can delete it")
            freed[0] += self._remove(conn, analysis_id)
            return True
        return self._write("delete from", work)

    def delete(self, analysis_id: str, delete_token: str | None = None, *, owner: str | None = None) -> bool:
        """Delete a working copy of ``owner``, or a snapshot with its ``delete_token``; return
        whether something was deleted (``False``: no such id)."""
        validate_analysis_id(analysis_id)
        if delete_token is None:
            return self.delete_working(analysis_id, owner=owner)
        try:
            self.delete_snapshot(analysis_id, delete_token)
        except StoreError:
            if not self.exists(analysis_id):
                return False
            raise
        return True

    def operator_delete(self, analysis_id: str) -> bool:
        """Delete any analysis without a token: for operators with direct access to the
        store (never reachable from a link). Return whether it existed."""
        validate_analysis_id(analysis_id)

        def work(conn, _now, freed):
            if self._row(conn, analysis_id) is None:
                return False
            freed[0] += self._remove(conn, analysis_id)
            return True
        return self._write("delete from", work)

    def purge_expired(self) -> int:
        """Remove working copies unused for longer than the retention; return how many."""
        return self._write("clean up", lambda _conn, _now, _freed: None, purged=True)
