"""A pytest plugin for :mod:`benchmarks.suite_cpu`: one JSON line per test, with its worker.

Loaded with ``-p benchmarks.suite_timeline``; it writes only when ``SUITE_TIMELINE_DIR`` names a
folder (one file per pytest-xdist worker, ``timeline-<worker>.jsonl``), so loading it alone
changes nothing. Each line holds the test's node id, the worker, its start and end (Unix
seconds, setup and teardown included), the worker process's CPU seconds during it (``cpu``) and
those of the child processes it started and waited for meanwhile (``children_cpu``: command lines,
nested pytest runs; a server or browser still running when the test ends is counted by
:mod:`benchmarks.suite_cpu` by kind, not here).
"""

from __future__ import annotations

import json
import os
import time

import pytest

ENV = "SUITE_TIMELINE_DIR"
_out = None


def _file():
    global _out
    if _out is None:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out = open(os.path.join(os.environ[ENV], f"timeline-{worker}.jsonl"), "a", encoding="utf-8")
    return _out


def _children_cpu() -> float:
    """CPU seconds (user and system) of this process's children that have ended and been waited for."""
    times = os.times()
    return times.children_user + times.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not os.environ.get(ENV):
        yield
        return
    start, cpu, children = time.time(), time.process_time(), _children_cpu()
    yield
    line = {"test": item.nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"), "start": start,
            "end": time.time(), "cpu": time.process_time() - cpu, "children_cpu": _children_cpu() - children}
    out = _file()
    out.write(json.dumps(line) + "\n")
    out.flush()
