"""The ``metrics-core`` command line (also ``python -m metrics_core``).

Each subcommand lives in ``metrics_core/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(args) -> int``.
Bad input (any :class:`MetricsError`) prints ``error: <one line>`` on stderr
and exits with status 2, never a traceback; usage errors exit 2 as well.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from .errors import MetricsError

COMMANDS = ("evaluate", "compare", "report", "explain")

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand module that is installed."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="metrics-core",
        description="Evaluate recommender and search runs against ground truth.",
    )
    parser.add_argument("--version", action="version", version=f"metrics-core {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module_name = f"{__package__}.commands.{name}"
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as e:
            if e.name == module_name:
                continue
            raise
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, usage errors
        return int(e.code or 0) if not isinstance(e.code, str) else EXIT_BAD_INPUT
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return int(func(args) or EXIT_OK)
    except MetricsError as e:
        message = " ".join(str(e).split("\n"))
        print(f"error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
