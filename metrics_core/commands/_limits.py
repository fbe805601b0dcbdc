"""The read-limit options shared by every subcommand that reads files.

``--max-bytes``, ``--max-ratio``, ``--max-line`` and ``--max-rows`` override
the ``METRICS_CORE_MAX_*`` environment variables, which override the defaults
of :class:`metrics_core.io.limits.ReadLimits`. Values are parsed when the
command runs, so a bad value is a one-line error (exit 2).
"""

from __future__ import annotations

import argparse

from ..io.limits import ReadLimits, format_size, parse_size, set_limits

_DEFAULTS = ReadLimits()
_OPTIONS = (
    ("--max-bytes", "max_bytes", f"bytes of one input as read: text after gzip decompression, Parquet column data "
                                 f"uncompressed (default {format_size(_DEFAULTS.max_bytes)}; "
                                 f"env METRICS_CORE_MAX_BYTES); units k, M, G"),
    ("--max-ratio", "max_ratio", f"decompressed / compressed size of a gzip input, checked beyond 64 MiB "
                                 f"(default {_DEFAULTS.max_ratio}; env METRICS_CORE_MAX_RATIO)"),
    ("--max-line", "max_line_bytes", f"bytes of one line of a text input (default "
                                     f"{format_size(_DEFAULTS.max_line_bytes)}; env METRICS_CORE_MAX_LINE)"),
    ("--max-rows", "max_rows", f"data rows of one input (default {_DEFAULTS.max_rows:,}; "
                               f"env METRICS_CORE_MAX_ROWS)"),
)


def add_limit_arguments(p: argparse.ArgumentParser) -> None:
    """The read-limit options, in their own help section."""
    group = p.add_argument_group(
        "read limits", "reading stops with a one-line error as soon as an input passes one of these; "
                       "devices and FIFOs are always refused")
    for flag, field, text in _OPTIONS:
        group.add_argument(flag, metavar="N", dest=f"limit_{field}", help=text)


def apply_limits(args) -> ReadLimits:
    """Set the limits for this run from the options (over the environment and the defaults)."""
    values = {}
    for flag, field, _ in _OPTIONS:
        raw = getattr(args, f"limit_{field}", None)
        if raw is not None:
            values[field] = parse_size(raw, flag)
    limits = ReadLimits.from_env().with_values(**values)
    set_limits(limits)
    return limits
