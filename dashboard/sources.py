"""Everything the user loaded, and the only place the dashboard talks to the
analysis store.

The session holds the current :class:`Sources` (exact bytes of every file).
As soon as the user uploads, removes or maps anything, the sources are saved
in the store as a *working copy* and its id goes into the URL
(``?analysis=<id>``), so a reload, a copied address or a new browser shows
the same data. Later changes update that working copy (same id); changing a
snapshot someone shared starts a new working copy. *Share* saves a read-only
*snapshot* with a title and notes, and a delete token shown once.

A working copy belongs to the browser that created it (its owner secret,
:mod:`dashboard.owner`): another browser opening its address sees it read-only,
with "make my own copy" (:func:`make_own_copy`). Each save names the revision the
session last saw, so a second tab of the owner that changes an analysis the first
tab changed meanwhile gets a message instead of overwriting it.

Store API used (``metrics_core.store.AnalysisStore``): ``create_working``,
``update_working``, ``copy``, ``save_snapshot``, ``load``, ``delete_snapshot``,
``check_can_store``, ``usage``, and a snapshot's kept brief (``stored_brief``,
``keep_brief``; see :mod:`dashboard.snapshot_brief`). Nothing else in the dashboard imports the store.
"""

from __future__ import annotations

import hashlib
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from metrics_core.store import SNAPSHOT as STORE_SNAPSHOT
from metrics_core.store import WORKING as STORE_WORKING
from metrics_core.store import MAX_NAME_CHARS
from metrics_core.store import (AnalysisStore, NotOwnerError, SavedFile, SnapshotReceipt, StaleRevisionError,
                                StoreError, StoreFullError, check_file_name)

from . import file_bytes, owner, url

__all__ = ["Blob", "Sources", "Opened", "StoreError", "model_name", "sources", "is_demo",
           "load_sources", "add_run", "remove_run", "set_blob", "set_mapping", "ingest_uploads", "notice_unreceived",
           "reset_to_demo", "upload_generation", "uploader_key", "delete_snapshot", "open_requested", "current", "share", "store_problem",
           "refused_uploads", "upload_limits_text", "read_only", "make_own_copy", "save_conflict",
           "replaced_working_copy", "stored_brief", "keep_brief", "save_shared"]

ROLES = ("qrels", "item_features", "user_attributes", "logged")
KNOWN_EXTENSIONS = {"csv", "tsv", "txt", "gz", "gzip", "parquet", "pq", "jsonl", "json",
                    "ndjson", "trec", "run", "qrels", "res", "tab"}
WORKING, SNAPSHOT = "working copy", "snapshot"


@dataclass(frozen=True)
class Blob:
    """A loaded file: its name, SHA-256, size in bytes and optional column mapping.

    Its bytes (:attr:`data`) are held by the session itself (``own``) only until the analysis
    store keeps them; then the session drops its copy and the bytes come from the server's one
    copy of each stored content (:mod:`dashboard.file_bytes`), read from the store again when
    the server's cache let them go."""

    name: str
    sha256: str
    size: int
    mapping: tuple[tuple[str, str], ...] = ()
    own: bytes | None = field(default=None, repr=False, compare=False)

    @staticmethod
    def of(name: str, data: bytes, mapping: dict | None = None, sha256: str = "") -> "Blob":
        """The blob of ``data``, held by the session; ``sha256``: its digest when already known and
        checked (a file the analysis store read back), else computed here."""
        data = data if isinstance(data, bytes) else bytes(data)
        return Blob(name=name, sha256=sha256 or hashlib.sha256(data).hexdigest(), size=len(data),
                    mapping=_mapping(mapping), own=data)

    @staticmethod
    def stored(name: str, sha256: str, size: int, mapping: dict | None = None) -> "Blob":
        """The blob of a content the analysis store holds (the session keeps no copy of it)."""
        return Blob(name=name, sha256=sha256, size=int(size), mapping=_mapping(mapping))

    @property
    def data(self) -> bytes:
        """The file's exact bytes: the session's own until stored, else the server's copy."""
        if self.own is not None:
            return self.own
        return file_bytes.shared(self.sha256, lambda: _store().read_content(self.sha256))

    def with_mapping(self, mapping: dict | None) -> "Blob":
        """The same file with another column mapping."""
        return replace(self, mapping=_mapping(mapping))

    def handed_to_server(self) -> "Blob":
        """The blob without the session's own copy: its bytes go to the server's copy."""
        if self.own is None:
            return self
        file_bytes.keep(self.sha256, self.own)
        return replace(self, own=None)

    @property
    def key(self) -> str:
        """Cache key: content hash plus the column mapping."""
        return self.sha256 + "|" + ",".join(f"{a}={b}" for a, b in self.mapping)


def _mapping(mapping: dict | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((mapping or {}).items()))


@dataclass(frozen=True)
class Sources:
    """Everything the user loaded. Empty ``runs`` means the demo models."""

    runs: dict[str, Blob] = field(default_factory=dict)
    qrels: Blob | None = None
    item_features: Blob | None = None
    user_attributes: Blob | None = None
    #: logged feedback with the logging policy's propensities (the Counterfactual page)
    logged: Blob | None = None

    @property
    def empty(self) -> bool:
        return not self.runs and all(getattr(self, r) is None for r in ROLES)


@dataclass(frozen=True)
class Opened:
    """The stored analysis the session shows: id, kind, title and notes; for a working copy
    the revision the session last saw and whether this browser may change it."""

    id: str
    kind: str = WORKING
    title: str = ""
    notes: str = ""
    created: str = ""
    revision: int = 1
    editable: bool = True


# Saves of every session run here, off the script thread; a session waits for its own.
_SAVER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="analysis-store-save")
# The saves under way in this server process, by the id of the working copy each fills: a session
# opening that id (a reload right after an upload) waits for it first, so it sees the files.
_FILLING: dict[str, Future] = {}
_SESSION = "mcd_session"


@dataclass
class _Saving:
    """A save running on the store thread, the contents it stores, and the working copy created
    for it when the session had none of its own (``reserved``, empty until the save fills it)."""

    future: Future
    digests: frozenset[str]
    reserved: Opened | None = None


@dataclass
class _Session:
    """Everything this module keeps for a session, in one object.

    Streamlit may stop a script run at any access to ``st.session_state`` (and at any drawing
    call) when the browser asks for a new run, for instance when the next upload arrives. State
    that must change together (the sources, the uploads taken in, the save under way) therefore
    lives here, as plain attributes: a change is prepared first (reading the files, asking the
    store), then made by assignments with no Streamlit call between them, so a run stopped at any
    point leaves either the whole change or none of it."""

    sources: Sources = field(default_factory=Sources)
    opened: Opened | None = None
    saving: _Saving | None = None
    seen: set = field(default_factory=set)  # file ids of the uploads taken in (or refused)
    generation: int = 0  # suffix of the uploader keys; bumped to clear the uploaders
    refused: list = field(default_factory=list)
    store_error: str | None = None
    conflict: str | None = None
    replaced: str | None = None
    failed: tuple[str, str] | None = None  # an id the URL asked for that could not be opened, and why
    left: set = field(default_factory=set)  # ids this session moved away from by its own changes

    def show(self, opened: Opened | None) -> None:
        """Show ``opened`` from now on; the analysis shown before is remembered as left."""
        if self.opened is not None and (opened is None or opened.id != self.opened.id):
            self.left.add(self.opened.id)
        self.opened = opened
        if opened is not None:
            self.left.discard(opened.id)


def _session() -> _Session:
    box = st.session_state.get(_SESSION)
    if box is None:
        box = st.session_state[_SESSION] = _Session()
    return box


def model_name(filename: str) -> str:
    """Model name of a result file: its name without extensions (``bm25.trec.gz`` -> ``bm25``)."""
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    parts = base.split(".")
    while len(parts) > 1 and parts[-1].lower() in KNOWN_EXTENSIONS:
        parts.pop()
    return ".".join(parts) or base


# ----------------------------------------------------------------------------- session

def sources() -> Sources:
    """The raw inputs of the current analysis (empty runs: demo models)."""
    return _session().sources


def is_demo() -> bool:
    return not sources().runs


def current() -> Opened | None:
    """The stored analysis shown (None: the demo, nothing uploaded); its id is in the URL."""
    finish_saving()
    box = _session()
    _publish(box)
    return box.opened


def _publish(box: _Session) -> None:
    """Put the id of the analysis shown in the URL (a run stopped after a save was taken in, but
    before the address changed, has it put there by the next one)."""
    wanted = box.opened.id if box.opened is not None else None
    if url.get(url.ANALYSIS) != wanted:
        url.set(url.ANALYSIS, wanted)


def read_only() -> bool:
    """Whether the session shows another browser's working copy (it cannot change it)."""
    opened = current()
    return opened is not None and opened.kind == WORKING and not opened.editable


def load_sources(new: Sources, persist: bool = True) -> None:
    """Replace the current data; with ``persist`` save it as a working copy and put
    its id in the URL (no data: no id).

    The save runs on a store thread while the script goes on reading and preparing the
    files (SQLite's writes and the hashing release the GIL); :func:`finish_saving` takes
    its outcome in the same script run, at the latest when the run ends (or in the next run,
    when this one is stopped first). The address names the working copy it fills from the
    step that takes the data in (:func:`_start_save`). Another browser's working copy is not
    changed (nothing happens: its pages offer no change)."""
    _commit(new, persist=persist)


def _commit(new: Sources, persist: bool = True, *, seen: set | frozenset = frozenset(),
            refused: list | tuple = ()) -> bool:
    """Make ``new`` the session's sources (with the upload ids ``seen`` taken in and the
    ``refused`` lines to say), starting its save when ``persist``; False when the working copy
    is another browser's (nothing changes then but the refusal said).

    Everything that may stop the run (reading session state, asking for the owner secret,
    hashing, the store's handle) happens before the first assignment; the assignments that
    follow change the session as one step (see :class:`_Session`)."""
    opened = current()  # an earlier save of this session finishes first: saves keep their order
    box = _session()
    if persist and read_only() and not new.empty:
        box.seen.update(seen)
        box.refused.extend([*refused,
                            "this working copy belongs to the browser that created it and is read-only here: "
                            "make your own copy to change it"])
        return False
    saving = None
    if persist and not new.empty:
        saving = _start_save(new, opened)
    box.sources = new  # from here to the end of the step: no Streamlit call
    box.seen.update(seen)
    box.refused.extend(refused)
    if saving is not None:
        box.saving = saving
        if saving.reserved is not None:  # the address names the new working copy from this step on
            box.show(saving.reserved)
            box.conflict = None
    elif persist:  # nothing loaded: no stored analysis
        box.show(None)
        box.conflict = None
    if persist:
        _publish(box)
    return True


def _start_save(new: Sources, opened: Opened | None) -> _Saving:
    """Start saving ``new`` on the store thread, in the session's working copy when it shows one
    of its own.

    Else a new, empty working copy is created first, here (one small write, no file), and the save
    fills it: its id goes into the address in the step that takes the data in, so a session that
    ends before its save is taken in (the tab reloaded or closed, the connection cut) leaves an
    address naming the copy the save completes, never a saved copy no address names."""
    files, settings, _ = _to_files(new, WORKING)
    working = opened if opened is not None and opened.kind == WORKING else None
    secret = owner.secret()
    digests = frozenset(f.sha256 for f in files)
    reserved = None
    if working is None:
        try:
            _, empty, _ = _to_files(Sources(), WORKING)
            working = reserved = Opened(_store().create_working((), empty, owner=secret), WORKING, revision=1)
        except StoreError as exc:  # no store to save in
            return _Saving(_failed(exc), digests)

    def save(store: AnalysisStore) -> tuple[str | _Replaced, int]:
        try:
            return working.id, store.update_working(working.id, files=files, settings=settings, owner=secret,
                                                    revision=working.revision)
        except (StoreFullError, StaleRevisionError, NotOwnerError):
            raise
        except StoreError as exc:
            if store.exists(working.id):  # the copy is there: another problem, said as before
                raise
            # expired (or removed) while this tab was open: the change starts a new copy
            return _Replaced(store.create_working(files, settings, owner=secret), working.id, str(exc)), 1
    try:
        future = _SAVER.submit(save, _store())
    except StoreError as exc:  # no store to save in
        return _Saving(_failed(exc), digests)
    _FILLING[working.id] = future
    future.add_done_callback(lambda done, aid=working.id: _FILLING.pop(aid, None) if _FILLING.get(aid) is done else None)
    return _Saving(future, digests, reserved)


@dataclass(frozen=True)
class _Replaced:
    """A save that found the session's working copy gone and started ``new`` instead."""

    new: str
    old: str
    reason: str


def _failed(exc: StoreError) -> Future:
    done: Future = Future()
    done.set_exception(exc)
    return done


def finish_saving() -> None:
    """Wait for this session's save started by :func:`load_sources`, if any, and take its
    outcome: the working copy's id in the URL, or the store's problem for the page to
    show (the data then stays in this session only). Once saved, the session's own copies
    of the files stored are dropped: the server's copy serves them (:mod:`dashboard.file_bytes`).
    The entry point calls it when a script run ends; anything that reads what is stored calls
    it first.

    Every save fills a working copy the address already names (:func:`_start_save`), so a session
    that ends before this runs (the tab reloaded or closed, the run stopped) loses nothing: the
    save completes on the store thread, and a new session on that address shows it."""
    box = _session()
    pending = box.saving
    if pending is None:
        return
    _take_outcome(box, pending)
    _publish(box)


def _take_outcome(box: _Session, pending: _Saving) -> None:
    """Wait for the save ``pending`` and make its outcome the session's, by plain assignments (no
    Streamlit call, see :class:`_Session`): the working copy shown and its revision, or the
    conflict or the store's problem to say."""
    try:
        aid, revision = pending.future.result()
    except (StaleRevisionError, NotOwnerError) as exc:  # the stored copy stays; so does its id
        box.saving, box.conflict = None, str(exc)
        return
    except StoreError as exc:  # the data stays in this session; the page says why it is not kept
        box.saving, box.store_error = None, str(exc)
        box.show(None)
        return
    replaced = None
    if isinstance(aid, _Replaced):
        replaced = (f"Your working copy {aid.old} is no longer on the server ({aid.reason}). Your files, with this "
                    f"change, are saved in a new working copy {aid.new}: the address now names it.")
        aid = aid.new
    stored = _handed_to_server(box.sources, pending.digests)
    box.saving = None
    box.sources = stored
    box.store_error = None
    box.replaced = replaced  # said until the next change is saved
    box.show(Opened(aid, WORKING, revision=revision))


def _handed_to_server(src: Sources, digests: frozenset[str]) -> Sources:
    """``src`` without the session's own copies of the contents ``digests`` (stored now)."""
    def hand(blob: Blob | None) -> Blob | None:
        return blob.handed_to_server() if blob is not None and blob.sha256 in digests else blob
    return replace(src, runs={name: hand(blob) for name, blob in src.runs.items()},
                   **{role: hand(getattr(src, role)) for role in ROLES})


def save_conflict() -> str | None:
    """Why this session's changes are no longer saved (another tab changed the working
    copy since this one loaded it): said on every page until the page is reloaded."""
    return _session().conflict


def replaced_working_copy() -> str | None:
    """After a change was saved in a new working copy because the session's own had expired or been
    removed: the sentence that says so, until the next change is saved (None otherwise). It does not
    wait for a save in progress (see :func:`finish_saving`)."""
    return _session().replaced


def store_problem() -> str | None:
    """Why the last change could not be saved in the store (None when it was)."""
    finish_saving()
    return _session().store_error


def add_run(blob: Blob) -> str:
    """Add or replace the model named after ``blob`` (returns the model name)."""
    src = sources()
    name = model_name(blob.name)
    load_sources(replace(src, runs={**src.runs, name: blob}))
    return name


def remove_run(name: str) -> None:
    src = sources()
    load_sources(replace(src, runs={k: v for k, v in src.runs.items() if k != name}))


def set_blob(kind: str, blob: Blob | None) -> None:
    """Set ``qrels``, ``item_features``, ``user_attributes`` or ``logged`` (None removes it)."""
    load_sources(replace(sources(), **{kind: blob}))


def set_mapping(model: str | None, mapping: dict[str, str]) -> None:
    """Explicit column mapping ``{role: column}`` for a model's file (None: the ground truth)."""
    src = sources()
    if model is None:
        if src.qrels is not None:
            set_blob("qrels", src.qrels.with_mapping(mapping))
        return
    blob = src.runs[model]
    load_sources(replace(src, runs={**src.runs, model: blob.with_mapping(mapping)}))


def upload_generation() -> int:
    """Suffix of the uploader keys; bumped to clear the uploaders."""
    return _session().generation


def ingest_uploads(runs, truth=None, features=None, attributes=None, logged=None) -> list[str]:
    """Take newly uploaded files (``st.file_uploader`` values) into the sources, in any
    order, and save them as one new working copy.

    A result file adds or replaces the model named after it; ground truth, item
    features and user attributes replace the previous file. Files seen before are
    ignored, so removing a model is not undone by the uploader still holding its
    file. Returns the names of the models added.

    Taking the files in is one step (see :class:`_Session`): every new file is read and
    checked first, then the sources, the ids of the files taken in and the save change
    together. A run stopped before that step (the next upload arriving) leaves the files
    untaken, and the next run, whose uploaders still hold them, takes them in. A file
    the store cannot hold is refused, and :func:`refused_uploads` says why.

    A file taken in (or refused) is released from Streamlit's upload storage
    (:func:`release_upload`): its bytes live on in the sources, and the uploader keeps
    listing its name.
    """
    box = _session()
    seen = set(box.seen)
    src = sources()
    new_runs = dict(src.runs)
    others = {}
    added, taken, refused = [], set(), []
    runs = runs if isinstance(runs, (list, tuple)) else [runs] if runs is not None else []
    for f in runs:
        if _new_upload(f, seen | taken):
            taken.add(f.file_id)
            blob, problem = _read_upload(f)
            if problem:
                refused.append(problem)
                continue
            new_runs[model_name(blob.name)] = blob
            added.append(model_name(blob.name))
    for kind, f in (("qrels", truth), ("item_features", features), ("user_attributes", attributes),
                    ("logged", logged)):
        if isinstance(f, (list, tuple)):
            f = f[-1] if f else None
        if _new_upload(f, seen | taken):
            taken.add(f.file_id)
            blob, problem = _read_upload(f)
            if problem:
                refused.append(problem)
                continue
            others[kind] = blob
    if added or others:
        if not _commit(replace(src, runs=new_runs, **others), seen=taken, refused=refused):
            added = []
    elif taken:  # only refusals: remembered as one step
        box.seen.update(taken)
        box.refused.extend(refused)
    seen = box.seen
    for f in [*runs, truth, features, attributes, logged]:
        for one in f if isinstance(f, (list, tuple)) else [f]:
            if hasattr(one, "getvalue") and getattr(one, "file_id", None) in seen:
                release_upload(one.file_id)
    return added


def notice_unreceived(uploaders: dict[str, str]) -> None:
    """Say, once, that an uploader lists a file whose bytes this session never received, so that it
    is not in the analysis: the browser keeps what its uploaders hold across a cut connection or a
    restarted server, while the bytes sent belong to the server session they were sent to (Streamlit
    then hands the uploader a placeholder, which :func:`ingest_uploads` cannot take in). Placeholders
    of files taken in before (released, see :func:`release_upload`) are not said.

    ``uploaders``: the label each uploader shows -> its widget key. The placeholder carries no file
    name, so the line names the uploader. Reading every uploader comes first, then the session
    changes as one step (see :class:`_Session`)."""
    box = _session()
    lost: dict[str, list[str]] = {}
    for label, key in uploaders.items():
        value = st.session_state.get(key)
        for one in value if isinstance(value, (list, tuple)) else [value]:
            file_id = getattr(one, "file_id", None)
            if file_id is not None and not hasattr(one, "getvalue") and file_id not in box.seen:
                lost.setdefault(label, []).append(file_id)
    for label, ids in lost.items():  # from here to the end of the step: no Streamlit call
        box.seen.update(ids)
        one = len(ids) == 1
        box.refused.append(f"{len(ids)} file{'' if one else 's'} listed under \"{label}\" in the sidebar never reached "
                           f"the server (the connection was cut or the server restarted while {'it was' if one else 'they were'} "
                           f"sent), so {'it is' if one else 'they are'} not in this analysis: remove "
                           f"{'it' if one else 'them'} there and add {'it' if one else 'them'} again")


def _new_upload(f, seen: set) -> bool:
    """Whether ``f`` is an uploaded file (its bytes at hand) not taken in yet: a placeholder of a
    released file (no bytes) never is, even when this session has forgotten what it took in."""
    return hasattr(f, "getvalue") and getattr(f, "file_id", None) is not None and f.file_id not in seen


def release_upload(file_id: str) -> None:
    """Drop an uploaded file's bytes from Streamlit's upload storage for this session.

    Streamlit keeps every file an uploader holds, and hands each script run a deep copy of
    it: with three 1M-row result files, about 100 MB copied on every click of every page.
    Once the file is in the sources (or refused), its uploader gets a placeholder with the
    same ``file_id`` instead (``DeletedFile``, which :func:`ingest_uploads` skips as seen);
    the browser keeps showing the file's name, and removing it there does nothing more."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is not None:
        ctx.uploaded_file_mgr.remove_file(ctx.session_id, file_id)


def _read_upload(upload) -> tuple[Blob | None, str | None]:
    """The blob of an uploaded file, or why it is refused (its name first, then the room left in
    the analysis store), as ``(blob, None)`` or ``(None, line)``."""
    problem = _name_refusal(upload.name)
    if problem:
        return None, problem
    blob = Blob.of(upload.name, upload.getvalue())
    problem = _refusal(upload, blob)
    return (None, problem) if problem else (blob, None)


#: How much of a refused file's name its refusal line shows (the line stays one readable line).
NAME_SHOWN = 40


def _name_refusal(name: str) -> str | None:
    """Why an upload is refused for its name alone (None: the name is fine): the analysis store
    keeps names of at most :data:`~metrics_core.store.MAX_NAME_CHARS` characters, without NUL or
    lone surrogates. Only that file is refused; the others of the same selection are taken in.
    The line shows the name's first :data:`NAME_SHOWN` characters."""
    try:
        check_file_name(name)
    except StoreError as exc:
        shown = name if len(name) <= NAME_SHOWN else name[:NAME_SHOWN - 1] + "…"
        return f"{shown} was not loaded: {exc}, and add it again"
    return None


def _refusal(upload, blob: Blob) -> str | None:
    """Why an upload the analysis store cannot hold (for this browser) is refused, before it is
    parsed (None: it is taken in). Content already stored costs nothing and is never refused.
    A store that cannot be reached refuses nothing (the files then stay in this session, see
    :func:`store_problem`)."""
    try:
        _store().check_can_store(blob.size, owner=owner.secret(), sha256=blob.sha256)
    except StoreFullError as exc:
        return f"{upload.name} was not loaded: {exc}"
    except StoreError:
        return None
    return None


def upload_limits_text() -> str:
    """The limits an upload meets, in one sentence: the uploader's size, the read limits
    and what the analysis store can still hold (for the Data page's caption)."""
    from metrics_core.io import limits
    from metrics_core.store.config import CLIENT_SHARE_ENV, QUOTA_ENV, format_size

    upload_mb = st.get_option("server.maxUploadSize")
    sentence = (f"Each upload may be up to {upload_mb:,} MB (server.maxUploadSize), under a name of at most "
                f"{MAX_NAME_CHARS:,} characters. {limits.current().describe()}")
    try:
        store = _store()
        usage = store.usage(owner=owner.secret())
    except StoreError:
        return sentence
    return (f"{sentence} The analysis store keeps uploads up to {format_size(usage.quota_bytes)} in all "
            f"({format_size(usage.free_bytes)} free; {QUOTA_ENV}), and each browser up to "
            f"{format_size(usage.client_quota_bytes)} ({store.limits.client_share:.0%} of it, {CLIENT_SHARE_ENV}; "
            f"{format_size(usage.client_free_bytes)} free for this one), files, settings and notes included; "
            f"a file that does not fit is refused. Content already stored takes no more space.")


def refused_uploads() -> list[str]:
    """One line per upload refused since the last call (the file is named in each)."""
    box = _session()
    lines, box.refused = box.refused, []
    return lines


def uploader_key(name: str) -> str:
    """Widget key of an uploader (``dashboard.uploads``; its generation suffix clears it)."""
    return f"{name}_{upload_generation()}"


def reset_to_demo() -> None:
    """Return to the demo data and clear the uploaders."""
    current()  # a save under way is taken in first
    box = _session()
    box.sources = Sources()  # one step: the data, what the uploaders held, the analysis shown
    box.seen = set()
    box.generation += 1
    box.show(None)
    box.conflict = None
    _publish(box)


# ----------------------------------------------------------------------------- store

def _store() -> AnalysisStore:
    return AnalysisStore()


def _to_files(src: Sources, kind: str, title: str = "", notes: str = "",
              view: dict | None = None) -> tuple[list[SavedFile], dict, str]:
    files, runs, extra = [], [], {}
    for model, blob in src.runs.items():
        files.append(SavedFile(blob.name, blob.data, "run", blob.sha256))  # hashed once, when it arrived
        runs.append({"model": model, "mapping": dict(blob.mapping)})
    for role in ROLES:
        blob = getattr(src, role)
        if blob is not None:
            files.append(SavedFile(blob.name, blob.data, role, blob.sha256))
            extra[role] = {"mapping": dict(blob.mapping)}
    settings = {"kind": kind, "runs": runs, "files": extra, "notes": notes, "view": dict(view or {}),
                "demo": not src.runs}
    return files, settings, title


def _from_saved(saved) -> tuple[Sources, dict]:
    settings = saved.settings if isinstance(saved.settings, dict) else {}
    runs_meta = list(settings.get("runs", []))
    runs = {}
    for i, f in enumerate(saved.files_with_role("run")):
        meta = runs_meta[i] if i < len(runs_meta) and isinstance(runs_meta[i], dict) else {}
        runs[str(meta.get("model") or model_name(f.name))] = _stored_blob(f, meta.get("mapping"))
    others = {}
    for role in ROLES:
        found = saved.files_with_role(role)
        if found:
            meta = settings.get("files", {}).get(role, {})
            others[role] = _stored_blob(found[0], meta.get("mapping"))
    return Sources(runs=runs, **others), settings


def _stored_blob(f: SavedFile, mapping: dict | None) -> Blob:
    """The session's blob of a file loaded from the store: its name and digest, no bytes (they
    stay in the server's copy, :mod:`dashboard.file_bytes`)."""
    if not f.sha256:
        return Blob.of(f.name, f.data, mapping)
    return Blob.stored(f.name, f.sha256, len(f.data), mapping)


def open_requested() -> dict | None:
    """Follow the URL: when ``?analysis=`` names another stored analysis than the one
    shown, load it into the session and return its saved view settings (K, gain, ...)
    for the caller to apply (``url.sync`` then keeps the id in the URL). A save this server
    process is still making into that working copy (the tab before a reload, right after an
    upload) is waited for first, so the files just taken in are there; a save made by another
    server process on the same store is not waited for.
    A malformed or unknown id raises :class:`StoreError` on every run (the store is asked
    once per value)."""
    opened = current()  # first: a save that just finished puts its own id in the URL
    box = _session()
    requested = url.requested(url.ANALYSIS)
    if requested is None or (opened is not None and requested == opened.id):
        return None
    if requested in box.left:
        # a run the browser asked for before it had the address of this session's latest change
        # (an upload right after another one): the session stays on what it shows
        url.set(url.ANALYSIS, opened.id if opened is not None else None)
        return None
    failed = box.failed
    if failed is not None and failed[0] == requested:  # said again on every run, looked up once
        raise StoreError(failed[1])
    filling = _FILLING.get(requested)
    if filling is not None:  # another session of this server is saving into it (the tab before a reload)
        wait([filling])
    try:
        saved = _store().load(requested, owner=owner.secret(), contents=file_bytes.shared)
    except StoreError as exc:
        box.failed = (requested, str(exc))
        raise
    src, settings = _from_saved(saved)
    aid, src_kind, title, created = saved.id, getattr(saved, "kind", STORE_SNAPSHOT), saved.title, saved.created
    notes = str(getattr(saved, "notes", "") or settings.get("notes", ""))
    revision, editable = saved.revision, saved.editable
    del saved  # the files' bytes stay in the server's copy only
    kind = WORKING if src_kind == STORE_WORKING else SNAPSHOT
    box.sources = src  # from here to the end of the step: no Streamlit call
    box.show(Opened(aid, kind, title, notes, created, revision=revision, editable=editable))
    box.conflict = None
    box.seen = set()
    box.generation += 1
    url.set(url.ANALYSIS, aid)
    view = settings.get("view")
    if not view and any(key in settings for key in ("k", "gain", "ties")):  # saved by older versions
        view = {key: settings[key] for key in ("k", "gain", "ties") if key in settings}
    return view if isinstance(view, dict) else {}


def share(title: str, notes: str, view: dict[str, Any]) -> SnapshotReceipt:
    """Save the current data as a read-only snapshot with ``title``, ``notes`` and the
    view settings; return its id and its delete token (shown once)."""
    return save_shared(sources(), title, notes, view, owner.secret())


def save_shared(src: Sources, title: str, notes: str = "", view: dict[str, Any] | None = None,
                secret: str = "", store: AnalysisStore | None = None) -> SnapshotReceipt:
    """Save ``src`` as a read-only snapshot, as Share saves a session's data: the files with their
    roles and mappings, the settings the dashboard reads back (models in order, ``view``: K, gain,
    ties, page choices), ``title`` and ``notes``, owned by the browser whose secret is ``secret``
    ("" for none); in ``store`` (default: the store the server uses). Used outside a session too
    (the load test puts an analysis in a server's store this way)."""
    files, settings, _ = _to_files(src, SNAPSHOT, title=title, notes=notes, view=view)
    return (store or _store()).save_snapshot(files, settings, title=title, notes=notes, owner=secret or None)


def make_own_copy() -> None:
    """Make this browser's own working copy of the analysis shown (same files and
    settings) and show it instead: the button of the read-only view. A copy the store
    refuses (e.g. this browser's share is used up) is said once by :func:`refused_uploads`."""
    opened = current()
    if opened is None:
        return
    try:
        copy_id = _store().copy(opened.id, owner=owner.secret())
    except StoreError as exc:
        _session().refused.append(f"no copy was made: {exc}")
        return
    box = _session()
    box.show(Opened(copy_id, WORKING, opened.title, opened.notes, revision=1, editable=True))
    box.conflict = None
    _publish(box)


def delete_snapshot(analysis_id: str, delete_token: str) -> None:
    """Delete a shared snapshot with its delete token (StoreError when wrong); the session
    returns to the demo when it showed that snapshot."""
    _store().delete_snapshot(analysis_id, delete_token)
    opened = current()
    if opened is not None and opened.id == analysis_id:
        reset_to_demo()


def stored_brief(analysis_id: str, settings_key: str, format_version: str) -> str | None:
    """The brief kept with a snapshot under these settings and format (its JSON), or None,
    also when the store cannot be read (the brief is then computed from the files)."""
    try:
        return _store().stored_brief(analysis_id, settings_key, format_version)
    except StoreError:
        return None


def keep_brief(analysis_id: str, settings_key: str, format_version: str, content: str, secret: str) -> Future:
    """Keep a snapshot's brief in the store, on the store thread (the page does not wait), for the
    browser whose owner ``secret`` is given (:func:`owner.secret`, read on the script's thread): it
    replaces a kept brief only for the browser that saved the snapshot. A brief the store refuses
    (full, too large, kept already by another client) is simply not kept: the next opening
    computes it."""
    def save(store: AnalysisStore) -> bool:
        try:
            store.keep_brief(analysis_id, settings_key, format_version, content, owner=secret)
        except StoreError:
            return False
        return True
    return _SAVER.submit(save, _store())
