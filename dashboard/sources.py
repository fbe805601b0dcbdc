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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import streamlit as st

from metrics_core.store import SNAPSHOT as STORE_SNAPSHOT
from metrics_core.store import WORKING as STORE_WORKING
from metrics_core.store import (AnalysisStore, NotOwnerError, SavedFile, SnapshotReceipt, StaleRevisionError,
                                StoreError, StoreFullError)

from . import owner, url

__all__ = ["Blob", "Sources", "Opened", "StoreError", "model_name", "sources", "is_demo",
           "load_sources", "add_run", "remove_run", "set_blob", "set_mapping", "ingest_uploads",
           "reset_to_demo", "upload_generation", "uploader_key", "delete_snapshot", "open_requested", "current", "share", "store_problem",
           "refused_uploads", "upload_limits_text", "read_only", "make_own_copy", "save_conflict",
           "replaced_working_copy", "stored_brief", "keep_brief"]

ROLES = ("qrels", "item_features", "user_attributes")
KNOWN_EXTENSIONS = {"csv", "tsv", "txt", "gz", "gzip", "parquet", "pq", "jsonl", "json",
                    "ndjson", "trec", "run", "qrels", "res", "tab"}
WORKING, SNAPSHOT = "working copy", "snapshot"


@dataclass(frozen=True)
class Blob:
    """An uploaded file: its name, bytes, SHA-256 and optional column mapping."""

    name: str
    data: bytes = field(repr=False)
    sha256: str = ""
    mapping: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def of(name: str, data: bytes, mapping: dict | None = None, sha256: str = "") -> "Blob":
        """The blob of ``data``; ``sha256``: its digest when already known and checked (a file the
        analysis store read back), else computed here."""
        data = data if isinstance(data, bytes) else bytes(data)
        return Blob(name=name, data=data, sha256=sha256 or hashlib.sha256(data).hexdigest(),
                    mapping=tuple(sorted((mapping or {}).items())))

    @property
    def key(self) -> str:
        """Cache key: content hash plus the column mapping."""
        return self.sha256 + "|" + ",".join(f"{a}={b}" for a, b in self.mapping)


@dataclass(frozen=True)
class Sources:
    """Everything the user loaded. Empty ``runs`` means the demo models."""

    runs: dict[str, Blob] = field(default_factory=dict)
    qrels: Blob | None = None
    item_features: Blob | None = None
    user_attributes: Blob | None = None

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


_SOURCES = "mcd_sources"
_OPENED = "mcd_opened"
_SAVING = "mcd_saving"  # the Future of a save still running on the store thread
# Saves of every session run here, off the script thread; a session waits for its own.
_SAVER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="analysis-store-save")
_FAILED = "mcd_failed_analysis"
_SEEN = "mcd_seen_uploads"
_GEN = "mcd_upload_generation"
_REFUSED = "mcd_refused_uploads"
_STORE_ERROR = "mcd_store_error"
_CONFLICT = "mcd_save_conflict"
_REPLACED = "mcd_replaced_working_copy"


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
    return st.session_state.get(_SOURCES) or Sources()


def is_demo() -> bool:
    return not sources().runs


def current() -> Opened | None:
    """The stored analysis shown (None: the demo, nothing uploaded)."""
    finish_saving()
    return st.session_state.get(_OPENED)


def read_only() -> bool:
    """Whether the session shows another browser's working copy (it cannot change it)."""
    opened = current()
    return opened is not None and opened.kind == WORKING and not opened.editable


def load_sources(new: Sources, persist: bool = True) -> None:
    """Replace the current data; with ``persist`` save it as a working copy and put
    its id in the URL (no data: no id).

    The save runs on a store thread while the script goes on reading and preparing the
    files (SQLite's writes and the hashing release the GIL); :func:`finish_saving` takes
    its outcome in the same script run, at the latest when the run ends. Another
    browser's working copy is not changed (nothing happens: its pages offer no change)."""
    opened = current()  # an earlier save of this session finishes first: saves keep their order
    if persist and read_only() and not new.empty:
        st.session_state.setdefault(_REFUSED, []).append(
            "this working copy belongs to the browser that created it and is read-only here: "
            "make your own copy to change it")
        return
    st.session_state[_SOURCES] = new
    if not persist:
        return
    if new.empty:
        st.session_state.pop(_OPENED, None)
        st.session_state.pop(_CONFLICT, None)
        url.set(url.ANALYSIS, None)
        return
    files, settings, _ = _to_files(new, WORKING)
    working = opened if opened is not None and opened.kind == WORKING else None
    secret = owner.secret()

    def save(store: AnalysisStore) -> tuple[str | _Replaced, int]:
        if working is not None:
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
        return store.create_working(files, settings, owner=secret), 1
    try:
        st.session_state[_SAVING] = _SAVER.submit(save, _store())
    except StoreError as exc:  # no store to save in
        st.session_state[_SAVING] = _failed(exc)


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
    show (the data then stays in this session only). The entry point calls it when a
    script run ends; anything that reads what is stored calls it first."""
    pending = st.session_state.pop(_SAVING, None)
    if pending is None:
        return
    try:
        aid, revision = pending.result()
    except (StaleRevisionError, NotOwnerError) as exc:  # the stored copy stays; so does its id
        st.session_state[_CONFLICT] = str(exc)
        return
    except StoreError as exc:  # the data stays in this session; the page says why it is not kept
        st.session_state[_STORE_ERROR] = str(exc)
        st.session_state.pop(_OPENED, None)
        url.set(url.ANALYSIS, None)
        return
    st.session_state.pop(_STORE_ERROR, None)
    st.session_state.pop(_REPLACED, None)  # said until the next change is saved
    if isinstance(aid, _Replaced):
        st.session_state[_REPLACED] = (
            f"Your working copy {aid.old} is no longer on the server ({aid.reason}). Your files, with this "
            f"change, are saved in a new working copy {aid.new}: the address now names it.")
        aid = aid.new
    st.session_state[_OPENED] = Opened(aid, WORKING, revision=revision)
    url.set(url.ANALYSIS, aid)


def save_conflict() -> str | None:
    """Why this session's changes are no longer saved (another tab changed the working
    copy since this one loaded it): said on every page until the page is reloaded."""
    return st.session_state.get(_CONFLICT)


def replaced_working_copy() -> str | None:
    """After a change was saved in a new working copy because the session's own had expired or been
    removed: the sentence that says so, until the next change is saved (None otherwise). It does not
    wait for a save in progress (see :func:`finish_saving`)."""
    return st.session_state.get(_REPLACED)


def store_problem() -> str | None:
    """Why the last change could not be saved in the store (None when it was)."""
    finish_saving()
    return st.session_state.get(_STORE_ERROR)


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
    """Set ``qrels``, ``item_features`` or ``user_attributes`` (None removes it)."""
    load_sources(replace(sources(), **{kind: blob}))


def set_mapping(model: str | None, mapping: dict[str, str]) -> None:
    """Explicit column mapping ``{role: column}`` for a model's file (None: the ground truth)."""
    src = sources()
    if model is None:
        if src.qrels is not None:
            set_blob("qrels", Blob.of(src.qrels.name, src.qrels.data, mapping))
        return
    blob = src.runs[model]
    load_sources(replace(src, runs={**src.runs, model: Blob.of(blob.name, blob.data, mapping)}))


def upload_generation() -> int:
    """Suffix of the uploader keys; bumped to clear the uploaders."""
    return st.session_state.setdefault(_GEN, 0)


def ingest_uploads(runs, truth=None, features=None, attributes=None) -> list[str]:
    """Take newly uploaded files (``st.file_uploader`` values) into the sources, in any
    order, and save them as one new working copy.

    A result file adds or replaces the model named after it; ground truth, item
    features and user attributes replace the previous file. Files seen before are
    ignored, so removing a model is not undone by the uploader still holding its
    file. Returns the names of the models added.

    A file taken in (or refused) is released from Streamlit's upload storage
    (:func:`release_upload`): its bytes live on in the sources, and the uploader keeps
    listing its name.
    """
    seen: set = st.session_state.setdefault(_SEEN, set())
    src = sources()
    new_runs = dict(src.runs)
    others = {}
    added = []
    runs = runs if isinstance(runs, (list, tuple)) else [runs] if runs is not None else []
    for f in runs:
        if _new_upload(f, seen):
            seen.add(f.file_id)
            blob = Blob.of(f.name, f.getvalue())
            if _refused(f, blob):
                continue
            new_runs[model_name(blob.name)] = blob
            added.append(model_name(blob.name))
    for kind, f in (("qrels", truth), ("item_features", features), ("user_attributes", attributes)):
        if isinstance(f, (list, tuple)):
            f = f[-1] if f else None
        if _new_upload(f, seen):
            seen.add(f.file_id)
            blob = Blob.of(f.name, f.getvalue())
            if _refused(f, blob):
                continue
            others[kind] = blob
    if added or others:
        load_sources(replace(src, runs=new_runs, **others))
    for f in [*runs, truth, features, attributes]:
        for one in f if isinstance(f, (list, tuple)) else [f]:
            if hasattr(one, "getvalue") and getattr(one, "file_id", None) in seen:
                release_upload(one.file_id)
    return added


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


def _refused(upload, blob: Blob) -> bool:
    """Refuse an upload the analysis store cannot hold (for this browser), before it is
    parsed: the file is not taken in and :func:`refused_uploads` says why. Content already
    stored costs nothing and is never refused. A store that cannot be reached refuses
    nothing (the files then stay in this session, see :func:`store_problem`)."""
    try:
        _store().check_can_store(len(blob.data), owner=owner.secret(), sha256=blob.sha256)
    except StoreFullError as exc:
        st.session_state.setdefault(_REFUSED, []).append(f"{upload.name} was not loaded: {exc}")
        return True
    except StoreError:
        return False
    return False


def upload_limits_text() -> str:
    """The limits an upload meets, in one sentence: the uploader's size, the read limits
    and what the analysis store can still hold (for the Data page's caption)."""
    from metrics_core.io import limits
    from metrics_core.store.config import CLIENT_SHARE_ENV, QUOTA_ENV, format_size

    upload_mb = st.get_option("server.maxUploadSize")
    sentence = (f"Each upload may be up to {upload_mb:,} MB (server.maxUploadSize). "
                f"{limits.current().describe()}")
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
    return st.session_state.pop(_REFUSED, None) or []


def uploader_key(name: str) -> str:
    """Widget key of an uploader (``dashboard.uploads``; its generation suffix clears it)."""
    return f"{name}_{upload_generation()}"


def reset_to_demo() -> None:
    """Return to the demo data and clear the uploaders."""
    load_sources(Sources())
    st.session_state[_SEEN] = set()
    st.session_state[_GEN] = upload_generation() + 1


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
        runs[str(meta.get("model") or model_name(f.name))] = Blob.of(f.name, f.data, meta.get("mapping"),
                                                                     getattr(f, "sha256", ""))
    others = {}
    for role in ROLES:
        found = saved.files_with_role(role)
        if found:
            meta = settings.get("files", {}).get(role, {})
            others[role] = Blob.of(found[0].name, found[0].data, meta.get("mapping"), getattr(found[0], "sha256", ""))
    return Sources(runs=runs, **others), settings


def open_requested() -> dict | None:
    """Follow the URL: when ``?analysis=`` names another stored analysis than the one
    shown, load it into the session and return its saved view settings (K, gain, ...)
    for the caller to apply (``url.sync`` then keeps the id in the URL).
    A malformed or unknown id raises :class:`StoreError` on every run (the store is asked
    once per value)."""
    opened = current()  # first: a save that just finished puts its own id in the URL
    requested = url.requested(url.ANALYSIS)
    if requested is None or (opened is not None and requested == opened.id):
        return None
    failed = st.session_state.get(_FAILED)
    if failed is not None and failed[0] == requested:  # said again on every run, looked up once
        raise StoreError(failed[1])
    try:
        saved = _store().load(requested, owner=owner.secret())
    except StoreError as exc:
        st.session_state[_FAILED] = (requested, str(exc))
        raise
    src, settings = _from_saved(saved)
    st.session_state[_SOURCES] = src
    kind = WORKING if getattr(saved, "kind", STORE_SNAPSHOT) == STORE_WORKING else SNAPSHOT
    st.session_state[_OPENED] = Opened(saved.id, kind, saved.title,
                                       str(getattr(saved, "notes", "") or settings.get("notes", "")), saved.created,
                                       revision=saved.revision, editable=saved.editable)
    st.session_state.pop(_CONFLICT, None)
    st.session_state[_SEEN] = set()
    st.session_state[_GEN] = upload_generation() + 1
    url.set(url.ANALYSIS, saved.id)
    view = settings.get("view")
    if not view and any(key in settings for key in ("k", "gain", "ties")):  # saved by older versions
        view = {key: settings[key] for key in ("k", "gain", "ties") if key in settings}
    return view if isinstance(view, dict) else {}


def share(title: str, notes: str, view: dict[str, Any]) -> SnapshotReceipt:
    """Save the current data as a read-only snapshot with ``title``, ``notes`` and the
    view settings; return its id and its delete token (shown once)."""
    files, settings, _ = _to_files(sources(), SNAPSHOT, title=title, notes=notes, view=view)
    return _store().save_snapshot(files, settings, title=title, notes=notes, owner=owner.secret())


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
        st.session_state.setdefault(_REFUSED, []).append(f"no copy was made: {exc}")
        return
    st.session_state[_OPENED] = Opened(copy_id, WORKING, opened.title, opened.notes, revision=1, editable=True)
    st.session_state.pop(_CONFLICT, None)
    url.set(url.ANALYSIS, copy_id)


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
