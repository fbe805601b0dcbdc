"""The command line run inside the test's process: ``main(argv)`` with its standard output and error
read back, as a subprocess would give them (exit status, stdout, stderr), without starting a Python
and loading the libraries again for each case. Each command keeps one or two tests through a real
process for what only a process shows (the exit status of ``os._exit``, the terminal)."""

from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass

from metrics_core.cli import main


@dataclass
class Done:
    """What a command left: its exit status and its two output streams, as ``subprocess.run`` names them."""

    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def _environment(env: dict | None):
    """``os.environ`` with ``env`` set for the block, as it was after."""
    saved = {name: os.environ.get(name) for name in env or {}}
    os.environ.update(env or {})
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run(*args, env: dict | None = None) -> Done:
    """``metrics-core ARGS...`` in this process, with the environment variables ``env`` set meanwhile."""
    out, err = io.StringIO(), io.StringIO()
    with _environment(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # a command that ends the process itself
            code = e.code if isinstance(e.code, int) else 2
    return Done(code, out.getvalue(), err.getvalue())
