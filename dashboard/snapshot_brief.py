"""A shared snapshot opens on its brief at once, even on a server that has never read its files.

A snapshot never changes, so its first screen, the decision brief, is computed once and kept with
it in the analysis store (:meth:`metrics_core.store.AnalysisStore.keep_brief`), as the JSON of
:mod:`metrics_core.brief.record`, under a key of everything it was computed with (the snapshot,
the decision, every convention, the users counted, the title and notes, and the record's format
version). It is kept when the snapshot is shared (once the resampled statistics and the segments
are done, on a thread of its own) or, for a snapshot without one, the first time its brief is
complete on the Brief page under the settings the link opened with. Once kept, only the browser
that saved the snapshot replaces it (the store checks its owner secret).

Opening the link then draws the brief from the kept record (:func:`stored`) while the files are
read and prepared on the server's worker thread (:func:`load_data_later`), so the next page is
quick too. The record is read back with its shape checked: one that does not read (another
format version, a damaged row) is ignored and the brief computed from the files, as before.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import asdict
from typing import Any

import streamlit as st

from metrics_core.brief.build import Brief
from metrics_core.errors import MetricsError
from metrics_core.brief.record import FORMAT_VERSION, RecordError, from_record, to_record

from . import background, cache, owner, sources
from .controls import evaluation_options, users, whole_number_ids

__all__ = ["settings_key", "stored", "keep", "keep_when_shared", "load_data_later", "mark_loaded", "data_loaded",
           "opening_without_data"]

_OPENING = "mcd_snapshot_brief_opening"  # (snapshot id, settings key) of the link as it was opened
_KEPT: set[tuple[str, str]] = set()  # (snapshot id, settings key) kept by this server process
_LOCK = threading.Lock()


def settings_key(analysis_id: str, decision: Any, title: str, notes: str) -> str:
    """SHA-256 (hex) of everything a snapshot's brief depends on besides its files (which the
    snapshot's id fixes): the decision, the conventions, the users counted, how ids are read, title,
    notes, format."""
    described = {"snapshot": analysis_id, "format": FORMAT_VERSION, "users": users(),
                 **({"whole_number_ids": True} if whole_number_ids() else {}),
                 "decision": {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(decision).items()},
                 "options": repr(sorted(evaluation_options().items())), "title": title, "notes": notes}
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=repr).encode("utf-8")).hexdigest()


def _snapshot_id() -> str | None:
    opened = sources.current()
    return opened.id if opened is not None and opened.kind == sources.SNAPSHOT else None


def stored(decision: Any, title: str, notes: str) -> Brief | None:
    """The brief kept with the snapshot shown, when one was kept under the current settings and
    reads back whole; None otherwise (no snapshot, none kept, other settings, unreadable). The
    first call for a snapshot notes its settings as the link's (see :func:`keep`)."""
    analysis_id = _snapshot_id()
    if analysis_id is None:
        return None
    key = settings_key(analysis_id, decision, title, notes)
    opening = st.session_state.get(_OPENING)
    if opening is None or opening[0] != analysis_id:
        st.session_state[_OPENING] = (analysis_id, key)
    cache_key = f"stored_brief|{analysis_id}|{key}"
    if cache_key in cache.SHARED:
        return cache.SHARED.get_or_compute(cache_key, lambda: None)
    text = sources.stored_brief(analysis_id, key, FORMAT_VERSION)
    if text is None:
        return None
    try:
        brief = from_record(text)
    except RecordError:
        return None  # computed from the files again, and kept anew once complete
    # the record names its decision: one that is not this one is not this brief
    try:
        same = brief.decision == decision.checked([decision.baseline, *decision.challengers])
    except MetricsError:
        same = False
    if not same:
        return None
    return cache.SHARED.get_or_compute(cache_key, lambda: brief)


def _keep(analysis_id: str, key: str, brief: Brief, secret: str) -> None:
    with _LOCK:
        if (analysis_id, key) in _KEPT:
            return
        _KEPT.add((analysis_id, key))
    try:
        text = to_record(brief)
    except RecordError:
        return
    sources.keep_brief(analysis_id, key, FORMAT_VERSION, text, secret)


def keep(decision: Any, title: str, notes: str, brief: Brief) -> None:
    """Keep ``brief`` (computed from the files, nothing pending) with the snapshot shown, when the
    current settings are those the link opened with (a reader who changes the decision does not
    replace what the link shows). The store keeps it when the snapshot has none yet, or when this
    browser saved the snapshot: a reader who opened the link with other settings
    (``&gain=binary&k=3``) sees their brief computed and leaves the kept one as it was."""
    analysis_id = _snapshot_id()
    pending = brief.verdicts.attrs.get("pending") or brief.verdicts.attrs.get("segments_pending")
    if analysis_id is None or pending:
        return
    key = settings_key(analysis_id, decision, title, notes)
    if st.session_state.get(_OPENING) == (analysis_id, key):
        _keep(analysis_id, key, brief, owner.secret())


def keep_when_shared(analysis_id: str, decision: Any, title: str, notes: str) -> None:
    """Right after the snapshot ``analysis_id`` is saved from this session: compute its brief as the
    link will show it (the Brief page's title falls back to "Decision brief") on a thread of its own,
    once the resampled statistics are done, and keep it. Nothing is kept when that fails."""
    from .compute import complete_brief_later

    title = title or "Decision brief"
    secret = owner.secret()
    try:
        key = settings_key(analysis_id, decision, title, notes)
        complete = complete_brief_later(decision, title, notes)
    except MetricsError:  # not kept: the link's first opening computes it from the files
        return

    def run() -> None:
        try:
            brief = complete()
        except Exception:  # noqa: BLE001 - not kept: the first opening computes it from the files
            return
        if brief is not None:
            _keep(analysis_id, key, brief, secret)
    threading.Thread(target=run, name="snapshot-brief", daemon=True).start()


def _load_key() -> str:
    src = sources.sources()
    blobs = [*(b.key for b in src.runs.values()),
             *(getattr(src, role).key if getattr(src, role) is not None else "" for role in sources.ROLES)]
    return "loaded|" + hashlib.sha256("|".join(blobs).encode()).hexdigest() + ("|whole" if whole_number_ids() else "")


def load_data_later() -> str:
    """Start reading and preparing the files of the analysis shown on the server's worker thread
    (:func:`dashboard.loading.warm`); the cache key to wait for."""
    from .loading import warm

    key = _load_key()
    src = sources.sources()
    whole = whole_number_ids()  # read on the page's thread: the worker has no session
    background.start(key, lambda: warm(src, whole))
    return key


def mark_loaded() -> None:
    """Note that the page itself read and prepared the files of the analysis shown."""
    cache.SHARED.get_or_compute(_load_key(), lambda: True)


def data_loaded() -> bool:
    """Whether the files of the analysis shown are read and prepared in this server process (by
    :func:`load_data_later` or by a page, see :func:`mark_loaded`)."""
    return _load_key() in cache.SHARED


def opening_without_data(page: str) -> bool:
    """Whether ``page`` is the Brief of a snapshot whose files this server has not prepared yet:
    the entry point then leaves out what would read them before the page (the brief comes from
    the store when it was kept, while the files load on the worker thread)."""
    return page == "Brief" and _snapshot_id() is not None and not data_loaded()
