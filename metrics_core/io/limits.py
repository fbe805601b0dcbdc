"""Read limits: how much one input file may cost before reading stops.

Every reader checks the input against a :class:`ReadLimits` and stops as soon
as a limit is passed, with a one-line :class:`MetricsError` that names the
limit and how to raise it. The limits, their defaults and how to set them:

=====================  ==========  ==========================  =====================
limit                  default     environment variable        command-line option
=====================  ==========  ==========================  =====================
``max_bytes``          2 GiB       ``METRICS_CORE_MAX_BYTES``  ``--max-bytes``
``max_ratio``          100         ``METRICS_CORE_MAX_RATIO``  ``--max-ratio``
``max_line_bytes``     16 MiB      ``METRICS_CORE_MAX_LINE``   ``--max-line``
``max_rows``           200000000   ``METRICS_CORE_MAX_ROWS``   ``--max-rows``
=====================  ==========  ==========================  =====================

* ``max_bytes``: bytes of a file as read (text after gzip decompression; for
  Parquet, the columns read as Arrow holds them once decoded, every
  dictionary expanded, counted while reading: :mod:`.parquet`).
* ``max_ratio``: decompressed size / compressed size of a gzip file, checked
  once more than ``RATIO_FREE_BYTES`` (64 MiB) are decompressed, so that a
  small, highly repetitive file always reads but a decompression bomb stops
  early.
* ``max_line_bytes``: bytes of one line of a text file (the newline excluded).
* ``max_rows``: data rows of one file.

Sizes accept a unit: ``512M``, ``4G``, ``1.5GiB``, ``100k`` (powers of 1024).
Special files (devices such as ``/dev/zero``, FIFOs, sockets) are always
refused: they have no size to check.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, fields, replace

from ..errors import MetricsError

KiB, MiB, GiB = 1 << 10, 1 << 20, 1 << 30
RATIO_FREE_BYTES = 64 * MiB

_ENV = {
    "max_bytes": "METRICS_CORE_MAX_BYTES",
    "max_ratio": "METRICS_CORE_MAX_RATIO",
    "max_line_bytes": "METRICS_CORE_MAX_LINE",
    "max_rows": "METRICS_CORE_MAX_ROWS",
}
_OPTION = {
    "max_bytes": "--max-bytes",
    "max_ratio": "--max-ratio",
    "max_line_bytes": "--max-line",
    "max_rows": "--max-rows",
}
_UNITS = {"": 1, "b": 1, "k": KiB, "kb": KiB, "kib": KiB, "m": MiB, "mb": MiB, "mib": MiB,
          "g": GiB, "gb": GiB, "gib": GiB, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")


def parse_size(text: str, what: str = "size") -> int:
    """``"512M"`` -> 536870912; a plain number is bytes (or a count); MetricsError otherwise."""
    m = _SIZE.match(str(text))
    unit = m.group(2).lower() if m else None
    if not m or unit not in _UNITS:
        raise MetricsError(f"{what}: cannot read {str(text)[:40]!r} as a size; write e.g. 500M, 4G or 1000000")
    value = int(float(m.group(1)) * _UNITS[unit])
    if value < 1:
        raise MetricsError(f"{what} must be at least 1, got {str(text)[:40]!r}")
    return value


def format_size(n: int) -> str:
    """``2147483648`` -> ``"2 GiB"`` (exact units when they divide, else bytes)."""
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", KiB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n:,} bytes"


@dataclass(frozen=True)
class ReadLimits:
    """The limits one read respects; see the module docstring for each field."""

    max_bytes: int = 2 * GiB
    max_ratio: int = 100
    max_line_bytes: int = 16 * MiB
    max_rows: int = 200_000_000

    @classmethod
    def from_env(cls, environ=None) -> "ReadLimits":
        """Defaults overridden by the ``METRICS_CORE_MAX_*`` environment variables that are set."""
        environ = os.environ if environ is None else environ
        values = {}
        for f in fields(cls):
            raw = environ.get(_ENV[f.name])
            if raw not in (None, ""):
                values[f.name] = parse_size(raw, _ENV[f.name])
        return cls(**values)

    def with_values(self, **values) -> "ReadLimits":
        """A copy with the given (non-None) fields replaced."""
        return replace(self, **{k: int(v) for k, v in values.items() if v is not None})

    def describe(self) -> str:
        """One sentence stating the limits (e.g. a caption under an upload box)."""
        return (f"Files are read up to {format_size(self.max_bytes)} (after decompression; a gzip file may expand "
                f"at most {self.max_ratio} times beyond {format_size(RATIO_FREE_BYTES)}), with lines up to "
                f"{format_size(self.max_line_bytes)} and at most {self.max_rows:,} rows.")

    def exceeded(self, field: str, detail: str) -> MetricsError:
        """The one-line error for a passed limit: what, the limit, and how to raise it."""
        value = getattr(self, field)
        shown = format_size(value) if field in ("max_bytes", "max_line_bytes") else f"{value:,}"
        return MetricsError(
            f"{detail}: over the read limit {field} = {shown}; reading stopped. If the file is "
            f"trusted, raise the limit with {_OPTION[field]} or the environment variable {_ENV[field]}"
        )


_current: ReadLimits | None = None


def current() -> ReadLimits:
    """The limits in force: those set by :func:`set_limits`, else defaults and environment."""
    return _current if _current is not None else ReadLimits.from_env()


def set_limits(limits: ReadLimits | None) -> None:
    """Set the process-wide limits (None returns to defaults and environment)."""
    global _current
    _current = limits


def check_line_lengths(data: bytes, limit: int, name: str, limits: ReadLimits) -> None:
    """Refuse a line longer than ``limit`` bytes without visiting every line.

    From each line start ``p`` the last newline in ``data[p : p + limit + 1]``
    is searched backwards (``bytes.rfind``): none means the line at ``p`` is
    longer than ``limit``; otherwise the next search starts after it. Each step
    moves about ``limit`` bytes forward, so a file costs ``len / limit`` steps
    and reads only the bytes between window ends and their previous newline.
    """
    n = len(data)
    p = 0
    while n - p > limit:
        q = data.rfind(b"\n", p, p + limit + 1)
        if q < 0:
            line = data.count(b"\n", 0, p) + 1
            raise limits.exceeded("max_line_bytes", f"{name}: line {line} is longer than {format_size(limit)}")
        p = q + 1
