"""Compile the remaining metric kernels in the background while the first page renders.

On a fresh installation numba's disk cache is empty. :func:`start_once` starts
``python -m metrics_core.warmup --background --first-page`` once per server
process: while the first page compiles its layout kernel, the warm-up compiles
the serial metric kernels that page needs next (in the order it needs them;
the page loads each one from the cache if it is there when the page gets to
it, else compiles it itself), then every other kernel, serial and parallel,
into the same disk cache at low priority, so later pages and large uploads
load them instead of compiling. It is a separate process because numba
compiles one function at a time per process: a compile in a thread of the
server would make the pages wait. It ends with the server and never changes
a result: a kernel loaded from the cache is the one the server would compile.
A restarted server whose kernel cache is complete (the stamp the warm-up writes
when it has done every kernel still matches the sources) starts no warm-up: it
would only load every kernel again beside the first page.

When the first page is the bundled demo, which is drawn from shipped results
(:mod:`dashboard.demo_bundle`) and so compiles nothing the warm-up would, the entry
script starts the warm-up only once that page's script run has ended: started
before, its start-up and compiles took one of the two cores from the page (and
the page's own plain-Python layout of the demo). A first page that computes
(an opened analysis, uploaded files) starts it before it computes, as the two
processes then share the kernels to compile.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from metrics_core.kernels import cache_stamp

ROOT = Path(__file__).resolve().parent.parent
_LOCK = threading.Lock()
_started: subprocess.Popen | None = None
_cache_complete: bool | None = None  # every kernel on disk when the server started


def cache_complete() -> bool:
    """Whether every kernel was on disk when this server first asked
    (:func:`metrics_core.kernels.cache_stamp.is_current`, checked once per server process: it imports
    numba and reads the package's file times, which :mod:`dashboard.startup` does before the first page)."""
    global _cache_complete
    with _LOCK:
        if _cache_complete is None:
            _cache_complete = cache_stamp.is_current()
        return _cache_complete


def start_once() -> subprocess.Popen | None:
    """Start the background warm-up unless this server already did, or the kernel cache is
    complete already (a restarted server: :func:`cache_complete`); returns its process (None when
    none runs)."""
    global _started
    if cache_complete():
        return None
    with _LOCK:
        if _started is None:
            try:
                _started = subprocess.Popen([sys.executable, "-m", "metrics_core.warmup", "--background", "--first-page",
                                             "--parent", str(os.getpid())],
                                            cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL)
            except OSError:  # no warm-up: kernels compile on first use, as without it
                return None
        return _started
