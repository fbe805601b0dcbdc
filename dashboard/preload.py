"""Import what later pages need while the first page is drawn.

``scipy.stats`` (the Compare page's tests and intervals) takes one to two seconds to
import, and the report builder pulls in plotly's offline bundle; a user opening
those pages for the first time would wait for the import. :func:`start` imports them
once per server process on a background thread, started when the first page has been
drawn (imports hold the interpreter lock: beside the first page they would slow it down);
a page that needs a module before the thread has finished simply waits for Python's
import lock (never imports twice). Then, when numba's kernel cache is complete, the same thread
loads the parallel kernels a large upload runs on its way to the Overview (reading a text file,
the layout, the Overview's metrics): the user's first upload then does not wait for them.
"""

from __future__ import annotations

import importlib
import threading

import streamlit as st

MODULES = ("scipy.stats", "metrics_core.analysis.stats", "metrics_core.analysis.compare", "metrics_core.outputs.report", "plotly.express")


def import_all() -> None:
    for name in MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a page that needs the module reports the failure itself
            pass
    load_upload_kernels()


def load_upload_kernels() -> bool:
    """Load the parallel kernels of a large upload's way to the Overview from numba's disk cache
    (:func:`metrics_core.warmup.load_upload_kernels`, about half a CPU second), so that the first
    upload does not load them while the user waits; only when every kernel is on disk (the cache
    stamp is current): a kernel still missing would be compiled here, beside the pages, instead of
    by the background warm-up process. Returns whether they were loaded."""
    try:
        from metrics_core import warmup
        from metrics_core.kernels import cache_stamp

        if not cache_stamp.is_current():
            return False
        warmup.load_upload_kernels()
    except Exception:  # noqa: BLE001 - nothing is lost: an upload loads the kernels it needs itself
        return False
    return True


@st.cache_resource(show_spinner=False)
def start() -> threading.Thread:
    """Start the background imports (once per server process)."""
    thread = threading.Thread(target=import_all, name="metrics-core-preload", daemon=True)
    thread.start()
    return thread
