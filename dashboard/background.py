"""Slow results computed on a server thread, so that a click never waits for them.

On more than ``FOREGROUND_USERS`` users per model (``METRICS_CORE_DASHBOARD_FOREGROUND_USERS``,
default 5,000) a page shows a quick answer first (an approximation it names), starts the exact
computation here with :func:`start`, and calls :func:`refresh_when_ready` so that the page
reruns by itself once every result it waits for is in the server cache
(:mod:`dashboard.cache`, under the key given to :func:`start`). One worker thread runs
the jobs in order; a key already cached or already queued is not started again.

A job does not start while a page is being drawn (:func:`page_started` / :func:`page_finished`,
called by ``app.py`` around every script run), for at most ``YIELD_SECONDS`` per job: on two
cores the worker would otherwise take half of the processor time and of the interpreter lock
from the click that queued it. A job already running is never paused (a page may wait for its key),
except between the parts of a prefetching job whose key no page waits for (:func:`pause_for_pages`).
The worker thread also runs at a lower scheduling priority than the pages' threads
(:data:`WORKER_NICENESS`): what it computes ahead while a click is answered takes only the processor
time the click leaves. A job the next page needs at once and that runs mostly in the compiled
kernels (outside the interpreter lock) runs on a second thread at the normal priority, without
waiting for the page (``wait_for_pages=False``): a page that waits for it is not held back by the
lower priority when other programs keep the machine busy.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Iterator

import streamlit as st

from metrics_core import progress as reporting
from metrics_core.formats import plural

from . import cache, text
from .progress_bar import progress_label

FOREGROUND_ENV = "METRICS_CORE_DASHBOARD_FOREGROUND_USERS"
#: Resampling (bootstrap intervals, randomization tests) of up to this many users per model is
#: computed before the page is shown; above, it runs here while the page shows an approximation.
FOREGROUND_USERS = int(cache.env_number(FOREGROUND_ENV, 5_000))

#: How much less processor time the worker thread gets than the pages' threads when both want it
#: (a Linux nice value, per thread): a click answered while a job runs takes the cores first.
WORKER_NICENESS = 10


def lower_this_threads_priority(niceness: int = WORKER_NICENESS) -> None:
    """Give the calling thread a lower scheduling priority than the rest of the server (Linux sets
    a nice value per thread; elsewhere, or when refused, the thread keeps the normal priority).
    A thread inherits the priority of the thread that starts it: the parallel kernels' threads
    started from this thread (numba's OpenMP layer keeps a team per calling thread) run at the
    lower priority too. A layer that keeps one pool for the whole process (TBB, workqueue) is
    started first, at the normal priority, so that the pages' kernels keep it."""
    from metrics_core.kernels._jit import load_numba

    load_numba().get_num_threads()  # numba set up as the kernels use it; starts its thread pool, once per process
    try:
        thread = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, thread, min(19, os.getpriority(os.PRIO_PROCESS, thread) + niceness))
    except (AttributeError, OSError):
        pass


_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-core-background",
                               initializer=lower_this_threads_priority)
#: jobs the next page needs at once (``start(..., wait_for_pages=False)``), at the normal priority
_NEXT_PAGE = ThreadPoolExecutor(max_workers=1, thread_name_prefix="metrics-core-next-page")
_QUEUED: set[str] = set()
_LOCK = threading.Lock()
POLL_SECONDS = 1.0
#: The longest a queued job waits for the pages being drawn before it starts anyway (so that many
#: sessions drawing one after the other, or a long upload, never starve the worker).
YIELD_SECONDS = 2.0
_PAUSES = threading.local()  # the worker's pause budget in its current job (pause_for_pages)
_DRAWING: dict[int, float] = {}  # script thread id -> when its page started being drawn (monotonic)
_PROGRESS: dict[str, tuple[str, int, int | None, str]] = {}  # a running job's key -> its stage (progress_of)


def limits_text() -> str:
    """The foreground size in one sentence (for the Data page)."""
    return (f"Bootstrap intervals and randomization tests of more than {plural(FOREGROUND_USERS, 'user')} per model "
            f"run on the server while the page shows their approximation, then the page updates itself "
            f"({FOREGROUND_ENV}).")


def start(key: str, compute: Callable[[], Any], size: Callable[[Any], int] | None = None,
          wait_for_pages: bool = True) -> None:
    """Compute ``compute()`` into the server cache under ``key`` on the worker thread (a failure
    is cached like a result: the page shows its message when it reads the key); ``size``: as for
    :meth:`dashboard.cache.ByteBudgetCache.get_or_compute`. ``wait_for_pages=False`` runs the job
    at once, beside the pages being drawn, on the second worker thread at the normal priority: for
    work the next page needs at once and that runs mostly outside the interpreter lock (the compiled
    kernels)."""
    with _LOCK:
        if key in _QUEUED or key in cache.SHARED:
            return
        _QUEUED.add(key)

    def run() -> None:
        try:
            if wait_for_pages:
                _yield_to_pages()
            _PAUSES.left = YIELD_SECONDS  # what pause_for_pages may still wait in all, in this job
            with reporting.active(JobProgress(key)):  # how far it is, for a page that shows it (progress_of)
                cache.SHARED.get_or_compute(key, compute, size=size)  # computed meanwhile by a page: read, not again
        except Exception:  # noqa: BLE001 - MetricsError is cached; anything else is retried on the next visit
            pass
        finally:
            with _LOCK:
                _QUEUED.discard(key)
                _PROGRESS.pop(key, None)

    (_EXECUTOR if wait_for_pages else _NEXT_PAGE).submit(run)


class JobProgress:
    """The :mod:`metrics_core.progress` reporter of one job: the stage metrics_core reports in it
    and how far that stage is, kept for :func:`progress_of` (a page polling the job draws it)."""

    def __init__(self, key: str):
        self.key = key

    @contextlib.contextmanager
    def stage(self, text: str, total: int | None = None, unit: str = "it") -> Iterator["_JobCount"]:
        count = _JobCount(self.key, text, total, unit)
        count.update(0)
        yield count

    def say(self, text: str) -> None:
        _JobCount(self.key, text, None, "").update(0)


class _JobCount:
    """The ``update(n)`` of a job's stage: the count so far, recorded under the job's key."""

    def __init__(self, key: str, text: str, total: int | None, unit: str):
        self.key, self.text, self.total, self.unit, self.n = key, text, total, unit, 0

    def update(self, n: int = 1) -> None:
        self.n += n
        with _LOCK:
            _PROGRESS[self.key] = (self.text, self.n, self.total, self.unit)


def progress_of(key: str) -> tuple[str, int, int | None, str] | None:
    """``(stage, n, total, unit)`` of the job computing ``key``: the last stage metrics_core
    reported in it (``total`` None: a stage without a count); None when the job has not reported
    one (queued, or not started)."""
    with _LOCK:
        return _PROGRESS.get(key)


def page_started() -> None:
    """A script run of this thread begins drawing a page: queued jobs wait until it is drawn."""
    with _LOCK:
        _DRAWING[threading.get_ident()] = time.monotonic()


def page_finished() -> None:
    """The page of this thread's script run is drawn (or the run stopped): queued jobs may start."""
    with _LOCK:
        _DRAWING.pop(threading.get_ident(), None)


def _drawing(now: float) -> bool:
    """Whether a page started less than ``YIELD_SECONDS`` ago is still being drawn."""
    with _LOCK:
        return any(now - since < YIELD_SECONDS for since in _DRAWING.values())


def _yield_to_pages(at_most: float | None = None) -> None:
    """Wait until no page is being drawn, at most ``at_most`` seconds (default ``YIELD_SECONDS``)."""
    deadline = time.monotonic() + (YIELD_SECONDS if at_most is None else at_most)
    while (now := time.monotonic()) < deadline and _drawing(now):
        time.sleep(0.01)


def pause_for_pages() -> None:
    """Between two parts of a long job (one segment, one metric), on the worker thread only: wait
    while a page is being drawn, at most ``YIELD_SECONDS``, so that a click made while the job runs
    does not share the processor with it; in all at most ``YIELD_SECONDS`` per job, so that sessions
    drawing one page after another never starve the job. Call it only where the job holds no cache
    key a page may wait for. Anywhere else (a page's own thread) it does nothing."""
    left = getattr(_PAUSES, "left", 0.0)  # set by the worker's jobs only: 0 on a page's thread
    if left > 0:
        began = time.monotonic()
        _yield_to_pages(left)
        _PAUSES.left = left - (time.monotonic() - began)


def now_or_later(key: str, exact: Callable[[], Any], quick: Callable[[], Any],
                 users: int) -> tuple[Any, str | None]:
    """``(value, pending key)``: the cached exact result when it is there or ``users`` is at most
    ``FOREGROUND_USERS`` (computed now, ``None`` pending); else ``quick()`` while :func:`start`
    computes the exact one under ``key``, which is returned as the key to wait for."""
    if users <= FOREGROUND_USERS or key in cache.SHARED:
        return cache.SHARED.get_or_compute(key, exact), None
    start(key, exact)
    return quick(), key


def ready(keys: Iterable[str]) -> bool:
    """True when every key's result is in the server cache."""
    return all(key in cache.SHARED for key in keys)


def wait(keys: Iterable[str], timeout: float = 600.0) -> bool:
    """Block until every key is ready or nothing is queued any more (for tests and scripts)."""
    keys = list(keys)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with _LOCK:
            queued = bool(_QUEUED)
        if ready(keys) or not queued:
            return ready(keys)
        time.sleep(0.05)
    return ready(keys)


@st.fragment(run_every=POLL_SECONDS)
def _watch(keys: tuple[str, ...], shown: tuple[str, str] | None = None) -> None:
    if ready(keys):
        st.rerun()
    if shown is not None:
        key, title = shown
        reported = progress_of(key)
        if reported is None:
            fraction, label = 0.0, f"{title}: waiting for the server"
        else:
            fraction, label = progress_label(title, 0, 1, "", *reported)
        st.progress(fraction, text=text.md(label, limit=300))


def refresh_when_ready(keys: Iterable[str], progress: tuple[str, str] | None = None) -> None:
    """Rerun the page once every key is ready (checked every ``POLL_SECONDS`` seconds while
    the page is open). ``progress``: ``(key, title)``, a progress bar of the job computing that key
    (:func:`progress_of`), redrawn at each check; else nothing is drawn."""
    keys = tuple(dict.fromkeys(keys))
    if keys and not ready(keys):
        _watch(keys, progress)
