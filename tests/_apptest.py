"""Streamlit's ``AppTest``, with the installed-component scan done once per test process.

Every ``AppTest`` instance, on its first ``run()``, looks for custom components (Streamlit's
components v2) by reading the metadata of every installed distribution
(``streamlit.components.v2.manifest_scanner.scan_component_manifests``): about 170 packages and
12,000 metadata parses here, roughly a second of CPU for each new ``AppTest``, which is most of
what a short page test costs. The installed packages do not change while the tests run, so the
scan's result (the manifests found and their package folders) is kept after the first scan and
handed to every later ``AppTest`` of the process; each ``AppTest`` still builds its own component
registry from it, exactly as before. The dashboard itself uses no custom component.

Each run of an ``AppTest`` also compiles its scripts anew (``dashboard/app.py`` and the page drawn, with
Streamlit's "magic" rewrite of their syntax trees): every run gets a new ``ScriptCache``, where a
server keeps one for its lifetime and compiles each script once. Here the runs of the process share
the compiled code the same way, keyed by the script's path and its current text (a script changed
on disk is compiled again), so a run costs what a rerun on a server costs.

Importing this module installs both caches; test modules import ``AppTest`` from here.
"""

from __future__ import annotations

import functools
import os
import threading

from streamlit import config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.source_util import open_python_file
from streamlit.testing.v1 import AppTest, app_test, local_script_runner

__all__ = ["AppTest"]


def _scan_once(scan):
    """``scan`` (called with no argument, as ``AppTest`` calls it) run once; its list copied on each call."""
    if getattr(scan, "scanned_once", False):
        return scan

    @functools.wraps(scan)
    def cached(max_workers=None):
        if max_workers is not None:  # not how AppTest calls it: scan as asked
            return scan(max_workers)
        if not hasattr(cached, "result"):
            cached.result = scan()
        return list(cached.result)

    cached.scanned_once = True
    return cached


manifest_scanner.scan_component_manifests = _scan_once(manifest_scanner.scan_component_manifests)


class SharedScriptCache(ScriptCache):
    """A ``ScriptCache`` whose compiled scripts are kept for every instance of the process, by path,
    text and the magic setting (which changes the code compiled)."""

    _compiled: dict[tuple[str, str, bool], object] = {}
    _compiled_lock = threading.Lock()

    def get_bytecode(self, script_path: str):
        path = os.path.abspath(script_path)
        with open_python_file(path) as f:
            key = (path, f.read(), bool(config.get_option("runner.magicEnabled")))
        with self._compiled_lock:
            if key not in self._compiled:
                self._compiled[key] = ScriptCache().get_bytecode(path)
            return self._compiled[key]


local_script_runner.ScriptCache = SharedScriptCache
app_test.ScriptCache = SharedScriptCache
