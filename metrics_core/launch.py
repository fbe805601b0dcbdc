"""The command line's first sign of life: one line on standard error while ``metrics-core`` starts,
before any stage of :mod:`metrics_core.progress` can be shown.

Starting the command line loads pandas, NumPy, numba and pyarrow (one to several seconds, more on a
busy machine) and then the command's modules; only after that does a command report its stages
(reading, preparing, evaluating, ...). So that a person at a terminal sees within :data:`DELAY`
seconds that the command runs and which step it is in, the package's ``__init__`` calls
:func:`announce` before importing anything heavy: in the ``metrics-core`` process only (``python -m
metrics_core`` or the ``metrics-core`` script, told by the process' own arguments), when standard
error is a terminal or ``--progress`` is given, and never under ``-q``/``--quiet``. A thread then
draws ``metrics-core: starting: loading the libraries (1.2s)`` in place (a carriage return, no new
line) from :data:`DELAY` seconds on, refreshed every :data:`REFRESH` seconds; :func:`step` names the
next step, and :func:`finish` stops it and erases the line, leaving standard error as it was. When
the line was shown, the command's stages are shown at once (no delay), so that the sign of life
does not go away and come back.

This module imports the standard library only: it runs before anything else of the package.
``$METRICS_CORE_PROGRESS_DELAY`` sets the delay here too.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import TextIO

#: seconds after the start of the package's import before the line is shown
DELAY = 1.0
#: seconds between two redraws of the line (its elapsed time)
REFRESH = 0.5
DELAY_ENV = "METRICS_CORE_PROGRESS_DELAY"
PROGRAM = "metrics-core"
MODULES = ("metrics_core", "metrics_core.cli")
#: the options that ask for progress on any standard error, and for none
FORCE = "--progress"
QUIET = ("-q", "--quiet")


class StartupLine:
    """The line drawn while the command line starts (see the module docstring)."""

    def __init__(self, stream: TextIO, delay: float, started: float):
        self.stream, self.delay, self.started = stream, delay, started
        self.text = "loading the libraries (pandas, NumPy, numba, pyarrow)"
        self.shown = False
        self._width = 0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metrics-core-startup", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._done.wait(max(0.0, self.started + self.delay - time.monotonic())):
            return
        while True:
            with self._lock:
                if self._done.is_set():
                    return
                self._draw()
            if self._done.wait(REFRESH):
                return

    def _draw(self) -> None:
        line = f"{PROGRAM}: starting: {self.text} ({time.monotonic() - self.started:.1f}s)"
        try:
            self.stream.write("\r" + line + " " * max(0, self._width - len(line)))
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: nothing more to show
            self._done.set()
            return
        self._width, self.shown = len(line), True

    def step(self, text: str) -> None:
        with self._lock:
            self.text = text
            if self.shown and not self._done.is_set():
                self._draw()

    def finish(self) -> bool:
        """Stop drawing and erase the line; whether it was ever shown."""
        with self._lock:
            self._done.set()
            if self.shown:
                try:
                    self.stream.write("\r" + " " * self._width + "\r")
                    self.stream.flush()
                except (OSError, ValueError):
                    pass
        self._thread.join()
        return self.shown


_line: StartupLine | None = None


def is_command_line(argv: list[str] | None = None) -> bool:
    """Whether this process runs the command line: ``python [options] -m metrics_core ...`` (or
    ``metrics_core.cli``), or the ``metrics-core`` script (``argv``: the process' arguments,
    ``sys.orig_argv`` by default)."""
    argv = list(sys.orig_argv if argv is None else argv)
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "-m":
            return i + 1 < len(argv) and argv[i + 1] in MODULES
        if arg.startswith("-m"):
            return arg[2:] in MODULES
        if arg.startswith("-c") or arg == "-":
            return False
        if not arg.startswith("-"):  # a script: the metrics-core entry point, or another program
            return os.path.basename(arg) in (PROGRAM, f"{PROGRAM}.exe")
        i += 2 if arg in _WITH_VALUE else 1
    return False


#: the interpreter's options whose value is the next argument
_WITH_VALUE = ("-X", "-W", "--check-hash-based-pycs")


def wanted(args: list[str], stream: TextIO) -> bool:
    """Whether the command line's arguments ``args`` (after the program) ask for the progress
    line on ``stream``: ``--progress`` given, or ``stream`` a terminal; never with ``-q``/``--quiet``."""
    options = args[:args.index("--")] if "--" in args else args
    if any(a in QUIET for a in options):
        return False
    if FORCE in options:
        return True
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def announce() -> None:
    """Start the startup line when this process is the command line and it is wanted (see the
    module docstring); anything else importing the package sees nothing."""
    global _line
    if _line is not None or not is_command_line():
        return
    stream = sys.stderr
    if stream is None or not wanted(sys.argv[1:] if sys.argv[:1] != ["-m"] else _command_arguments(), stream):
        return
    try:
        delay = float(os.environ.get(DELAY_ENV, DELAY))
    except ValueError:
        delay = DELAY
    _line = StartupLine(stream, delay, time.monotonic())


def _command_arguments() -> list[str]:
    """The command's arguments while ``python -m`` still imports the package (``sys.argv`` is then
    ``["-m"]``): what follows the module in the process' arguments."""
    argv = list(sys.orig_argv)
    for i, arg in enumerate(argv):
        if arg == "-m":
            return argv[i + 2:]
        if arg.startswith("-m") and arg[2:] in MODULES:
            return argv[i + 1:]
    return []


def step(text: str) -> None:
    """Name the step the startup is in (shown on the line's next redraw, at once if it is shown)."""
    if _line is not None:
        _line.step(text)


def finish() -> bool:
    """End the startup line (erased if shown); whether it was shown, so that the command's stages
    follow it at once."""
    global _line
    line, _line = _line, None
    return line.finish() if line is not None else False
