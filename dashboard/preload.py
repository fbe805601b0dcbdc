"""Import what later pages need while the first page is drawn.

``scipy.stats`` (the Compare page's tests and intervals) takes one to two seconds to
import, and the report builder pulls in plotly's offline bundle; a user opening
those pages for the first time would wait for the import. :func:`start` imports them
once per server process on a background thread, started when the first page has been
drawn (imports hold the interpreter lock: beside the first page they would slow it down);
a page that needs a module before the thread has finished simply waits for Python's
import lock (never imports twice).
"""

from __future__ import annotations

import importlib
import threading

import streamlit as st

MODULES = ("scipy.stats", "metrics_core.stats", "metrics_core.compare", "metrics_core.report", "plotly.express")


def import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a page that needs the module reports the failure itself
            pass


@st.cache_resource(show_spinner=False)
def start() -> threading.Thread:
    """Start the background imports (once per server process)."""
    thread = threading.Thread(target=import_all, name="metrics-core-preload", daemon=True)
    thread.start()
    return thread
