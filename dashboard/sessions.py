"""Release what a browser session held once it has ended for good.

When a browser tab closes, Streamlit keeps its session (session state and the
uploaded files' bytes) for ``server.disconnectedSessionTTL`` seconds so that a
short network blip can resume it. Its session storage only *hides* an expired
session: the session is dropped from the storage on some later write, and it is
never shut down, so the uploaded files stay in Streamlit's upload manager and
the session state (every byte the user uploaded) stays in memory for the life
of the server.

:func:`close_expired_sessions`, called by the dashboard's cache sweeper, takes
the expired sessions out of the storage and shuts each one down on the server's
event loop, as Streamlit does for a session that is closed on purpose, after
emptying its session state. Streamlit's public API has no hook for this, so the
few private attributes used are looked up defensively: on a Streamlit without
them nothing happens and the function returns 0.
"""

from __future__ import annotations

import logging

_LOGGER = logging.getLogger(__name__)


def _runtime():
    from streamlit import runtime

    return runtime.get_instance() if runtime.exists() else None


def _shut_down(session) -> None:
    """Empty a session's state, then shut it down (drops its uploaded files)."""
    state = getattr(session, "_session_state", None)
    try:
        if state is not None and hasattr(state, "clear"):
            state.clear()
    finally:
        session.shutdown()


def close_expired_sessions() -> int:
    """Shut down the disconnected sessions whose time to resume has passed; returns how
    many were closed (0 when there is no server or this Streamlit differs)."""
    rt = _runtime()
    manager = getattr(rt, "_session_mgr", None)
    storage = getattr(manager, "_session_storage", None)
    entries = getattr(storage, "_cache", None)
    loop = getattr(getattr(rt, "_async_objs", None), "eventloop", None)
    if entries is None or not hasattr(entries, "expire") or loop is None or loop.is_closed():
        return 0
    lock = getattr(manager, "_storage_lock", None)
    try:
        if lock is not None:
            with lock:
                expired = entries.expire()
        else:
            expired = entries.expire()
    except Exception:  # noqa: BLE001 - a different Streamlit: leave its sessions alone
        _LOGGER.debug("could not expire Streamlit sessions", exc_info=True)
        return 0
    closed = 0
    for _, info in expired:
        session = getattr(info, "session", None)
        if session is None:
            continue
        # AppSession is not thread-safe: shut it down on the event loop, like Streamlit does.
        loop.call_soon_threadsafe(_shut_down, session)
        closed += 1
    return closed
