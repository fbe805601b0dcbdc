"""Streamlit's ``AppTest``, with the installed-component scan done once per test process.

Every ``AppTest`` instance, on its first ``run()``, looks for custom components (Streamlit's
components v2) by reading the metadata of every installed distribution
(``streamlit.components.v2.manifest_scanner.scan_component_manifests``): about 170 packages and
12,000 metadata parses here, roughly a second of CPU for each new ``AppTest``, which is most of
what a short page test costs. The installed packages do not change while the tests run, so the
scan's result (the manifests found and their package folders) is kept after the first scan and
handed to every later ``AppTest`` of the process; each ``AppTest`` still builds its own component
registry from it, exactly as before. The dashboard itself uses no custom component.

Importing this module installs the cache; test modules import ``AppTest`` from here.
"""

from __future__ import annotations

import functools

from streamlit.components.v2 import manifest_scanner
from streamlit.testing.v1 import AppTest

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
