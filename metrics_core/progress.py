"""Signs of life on long work: the stage running (reading, preparing, evaluating, resampling,
writing) and how far it is, on standard error, drawn by tqdm.

Nothing is shown unless a reporter is active: the command line activates one when standard
error is a terminal or ``--progress`` is given, and ``--quiet`` is not; ``mc.evaluate(...,
progress=True)`` (a notebook) activates one for the call. An active reporter shows a stage only once
it has run for :data:`DELAY` seconds (``$METRICS_CORE_PROGRESS_DELAY`` sets another delay), so quick
commands print exactly what they printed before; the command line's reporter shows every stage at
once when its startup line was shown (:mod:`metrics_core.launch`: the libraries loading, the
first second on). A reporter erases its line when the stage ends (``leave=False``):
what a command prints on standard output, and its last lines, are unchanged. A stage without a
known total shows its elapsed time, refreshed every :data:`REFRESH` seconds; one with a total
(``stage(text, total=n)`` and ``.update(k)``) shows a bar; a total in bytes (``unit="B"``) is shown
in KiB, MiB, GiB.

A cold start compiles the metric kernels (tens of seconds, once per installation, see
:mod:`metrics_core.warmup`): the first time numba compiles a kernel (numba's ``numba:compile``
event, which a kernel loaded from the disk cache does not raise) while a reporter is active, the
reporter says so, once per process.

Stage texts name user files: control characters are escaped (:func:`metrics_core.terminal.escape`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
from typing import Iterator, TextIO

#: seconds a stage runs before it is shown
DELAY = 2.0
#: seconds between two refreshes of a stage without a total
REFRESH = 0.5
DELAY_ENV = "METRICS_CORE_PROGRESS_DELAY"
COMPILING = ("compiling the metric kernels: the first run of this installation, once "
             "(metrics-core warm compiles them ahead)")


class _Quiet:
    """What a stage yields when nothing is shown."""

    def update(self, n: int = 1) -> None:
        pass


class Reporter:
    """Stages on ``stream`` (a terminal, or a notebook's stderr), each shown after ``delay`` seconds."""

    def __init__(self, stream: TextIO, delay: float | None = None):
        self.stream = stream
        self.delay = float(os.environ.get(DELAY_ENV, DELAY)) if delay is None else float(delay)

    def say(self, text: str) -> None:
        """One line between the stages (the first compile of the kernels)."""
        from tqdm import tqdm

        tqdm.write(f"metrics-core: {text}", file=self.stream)

    @contextlib.contextmanager
    def stage(self, text: str, total: int | None = None, unit: str = "it") -> Iterator:
        from tqdm import tqdm

        from .terminal import escape

        bar_format = "metrics-core: {l_bar}{bar}{r_bar}" if total else "metrics-core: {desc} ({elapsed})"
        columns = _columns(self.stream)
        bar = tqdm(total=total, desc=escape(text), file=self.stream, leave=False, delay=self.delay,
                   bar_format=bar_format, unit=unit, unit_scale=unit == "B", unit_divisor=1024 if unit == "B" else 1000,
                   dynamic_ncols=columns is None, ncols=columns, mininterval=REFRESH)
        done = threading.Event()
        ticker = threading.Thread(target=_tick, args=(bar, done, self.delay), daemon=True)
        ticker.start()
        try:
            yield bar
        finally:
            done.set()
            ticker.join()
            bar.close()


def _columns(stream: TextIO) -> int | None:
    """None when the stream is a terminal of known width (tqdm follows it), else 100 columns (a
    terminal that reports no size, a notebook's stream)."""
    try:
        return None if os.get_terminal_size(stream.fileno()).columns > 0 else 100
    except (AttributeError, OSError, ValueError):
        return 100


def _tick(bar, done: threading.Event, delay: float) -> None:
    """Redraw ``bar`` every REFRESH seconds once ``delay`` has passed (a stage may not update)."""
    if done.wait(delay):
        return
    while not done.is_set():
        with bar.get_lock():
            if not done.is_set():
                bar.refresh()
        done.wait(REFRESH)


_active: contextvars.ContextVar[Reporter | None] = contextvars.ContextVar("metrics_core_progress", default=None)
_compiling = {"said": False, "listening": False}


def _listen_to_compiles() -> None:
    """Register (once per process) the listener that says, once, that kernels are compiling."""
    if _compiling["listening"]:
        return
    _compiling["listening"] = True
    from .kernels._jit import when_loaded

    when_loaded(_register_compile_listener)  # numba is loaded on the first kernel call, not here


def _register_compile_listener(numba) -> None:
    """Have numba's compile events say, once, that kernels are compiling."""
    from numba.core import event

    class Compiling(event.Listener):
        def on_start(self, ev) -> None:
            reporter = _active.get()
            if reporter is None or _compiling["said"]:
                return
            _compiling["said"] = True
            reporter.say(COMPILING)

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", Compiling())


def for_terminal(stream: TextIO, quiet: bool = False, force: bool = False,
                 at_once: bool = False) -> Reporter | None:
    """A reporter on ``stream`` when it is a terminal (or ``force``, the command line's
    ``--progress``) and not ``quiet``, else None. ``at_once``: every stage is shown from its start
    (the command line's startup line was shown, :mod:`metrics_core.launch`), not after the delay."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        tty = False
    if quiet or not (tty or force):
        return None
    return Reporter(stream, delay=0.0 if at_once else None)


@contextlib.contextmanager
def active(reporter: Reporter | None) -> Iterator[None]:
    """Make ``reporter`` the one :func:`stage` reports to (None: nothing shown) for the block.

    Any object with the methods of :class:`Reporter` may report: ``stage(text, total, unit)``, a
    context manager yielding an object with ``update(n)``, and ``say(text)`` (the dashboard draws
    them as a progress bar on the page, :mod:`dashboard.progress_bar`)."""
    if reporter is not None:
        _listen_to_compiles()
    token = _active.set(reporter)
    try:
        yield
    finally:
        _active.reset(token)


def current():
    """The reporter :func:`stage` reports to now (None: nothing is shown)."""
    return _active.get()


def in_notebook() -> Reporter:
    """A reporter for ``progress=True``: on ``sys.stderr`` (a notebook shows it under the cell)."""
    return Reporter(sys.stderr)


@contextlib.contextmanager
def stage(text: str, total: int | None = None, unit: str = "it") -> Iterator:
    """The stage ``text`` on the active reporter; yields an object with ``update(n)``."""
    reporter = _active.get()
    if reporter is None:
        yield _Quiet()
        return
    with reporter.stage(text, total, unit) as bar:
        yield bar
