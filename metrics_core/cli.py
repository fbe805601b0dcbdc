"""The ``metrics-core`` command line (also ``python -m metrics_core``).

Each subcommand lives in ``metrics_core/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(args) -> int``.
Bad input (any :class:`MetricsError`) prints ``error: <one line>`` on stderr
and exits with status 2, never a traceback; usage errors exit 2 as well.

:func:`entry` is the process entry point (``python -m metrics_core`` and the
``metrics-core`` script): it runs :func:`main`, flushes the output and ends
the process with ``os._exit``. Interpreter shutdown is skipped on purpose:
native worker threads (Arrow's thread pools, OpenMP) may still be parked when
Python finalises, and a thread that wakes into a finalising interpreter is
ended with ``pthread_exit``, which aborts the process from C++ code
("terminate called without an active exception", exit 134) after the work
was done. Nothing the command line needs runs at shutdown; the Spark engine
keeps the normal exit so that its session stops cleanly.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import launch
from .errors import MetricsError
from .io.limits import set_limits
from .terminal import OutputError, TerminalWriter, escape

COMMANDS = ("evaluate", "compare", "report", "explain", "check", "publish", "ope", "fuse", "warm")

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def build_parser(commands: tuple[str, ...] = COMMANDS) -> argparse.ArgumentParser:
    """The top-level parser with the subcommands ``commands`` (every one by default) whose module is
    installed."""
    from .version import __version__

    parser = argparse.ArgumentParser(
        prog="metrics-core",
        description="Evaluate recommender and search runs against ground truth.",
    )
    parser.add_argument("--version", action="version", version=f"metrics-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in commands:
        module_name = f"{__package__}.commands.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name == module_name:
                continue
            raise
        module.register(sub)
    for command in sub.choices.values():
        command.add_argument(launch.FORCE, action="store_true",
                             help="show the stages and progress on stderr even when it is not a terminal "
                                  "(by default only a terminal shows them; --quiet shows none)")
    return parser


def named_command(argv: list[str]) -> str | None:
    """The subcommand ``argv`` names (its first argument that is not an option, the top-level options
    taking no value), or None when it names none of :data:`COMMANDS`."""
    first = next((a for a in argv if not a.startswith("-")), None)
    return first if first in COMMANDS else None


def _output_error(exc: OSError) -> str:
    """The one line said when standard output cannot be written (a full disk, ``/dev/full``)."""
    reason = escape(exc.strerror or str(exc))
    return (f"error: the output could not be written to standard output ({reason}); free space where it "
            "goes, or write to a file with --output/--per-user where the command offers it")


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status.

    For the command's duration ``sys.stdout`` and ``sys.stderr`` write through
    :class:`~metrics_core.terminal.TerminalWriter`: no character of a name, id or message can
    drive the terminal (CSV data to a file or pipe stays exact, see
    :func:`~metrics_core.terminal.write_data`). Standard output that cannot be written is one line
    on stderr and exit status 2.
    """
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (s if isinstance(s, TerminalWriter) else TerminalWriter(s) for s in streams)
    try:
        code = _run(argv, streams[1])
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return EXIT_OK
    except OutputError as e:
        try:
            print(_output_error(e), file=streams[1])
        except OSError:
            pass
        return EXIT_BAD_INPUT
    finally:
        launch.finish()  # a command line that ended before its options were read
        sys.stdout, sys.stderr = streams


def _run(argv: list[str] | None, terminal=None) -> int:
    launch.step("loading the commands")
    argv = sys.argv[1:] if argv is None else list(argv)
    # a command line that names its command imports that command's module only (not the other commands'
    # libraries); without one (--help, --version, a misspelt command) every command is offered
    command = named_command(argv)
    parser = build_parser((command,) if command else COMMANDS)
    started = launch.finish()  # the startup line, erased before anything else is written
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors
        return int(e.code or 0) if not isinstance(e.code, str) else EXIT_BAD_INPUT
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    from . import progress
    from .kernels._jit import interpret_until_compiled

    # stages and progress on the terminal's own stream (the bar's carriage returns must reach it);
    # after a startup line that was shown, at once: the sign of life does not go away and come back
    reporter = progress.for_terminal(terminal or sys.stderr, quiet=bool(getattr(args, "quiet", False)),
                                     force=bool(getattr(args, "progress", False)), at_once=started)
    try:
        # a small input on a fresh install runs the kernels' Python source instead of compiling them first
        with progress.active(reporter), interpret_until_compiled():
            return int(func(args) or EXIT_OK)
    except MetricsError as e:
        message = " ".join(str(e).split("\n"))
        print(f"error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        set_limits(None)  # the options' read limits hold for this command only


def entry() -> None:
    """Run the command line as a process: :func:`main`, flush, then end without interpreter shutdown."""
    code = main()
    if "pyspark" in sys.modules:  # the Spark engine ran: let its session stop at shutdown
        sys.exit(code)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    except (OSError, ValueError) as e:  # what main() wrote was buffered and cannot be written
        if isinstance(e, OSError):
            print(_output_error(e), file=sys.stderr)
        code = code or EXIT_BAD_INPUT
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code)


if __name__ == "__main__":
    entry()
