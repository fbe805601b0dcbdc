"""Where the store lives and its limits, from arguments or environment variables.

=================================  ==========================================================
``METRICS_CORE_STORE_URL``         any SQLAlchemy URL (``postgresql+psycopg://user@host/db``);
                                   when unset, SQLite in the store directory
``METRICS_CORE_STORE_DIR``         the SQLite store directory (default: the user data directory)
``METRICS_CORE_STORE_QUOTA``       total stored bytes, e.g. ``10GiB``, ``500MB``, ``2000000``
                                   (default 10 GiB)
``METRICS_CORE_STORE_WORKING_DAYS``  days a working copy is kept after its last use (default 30)
=================================  ==========================================================
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from metrics_core.store.errors import StoreError

__all__ = ["DIR_ENV", "URL_ENV", "QUOTA_ENV", "WORKING_DAYS_ENV", "DEFAULT_QUOTA_BYTES", "DEFAULT_WORKING_DAYS",
           "StoreLimits", "default_store_dir", "parse_size", "format_size"]

DIR_ENV = "METRICS_CORE_STORE_DIR"
URL_ENV = "METRICS_CORE_STORE_URL"
QUOTA_ENV = "METRICS_CORE_STORE_QUOTA"
WORKING_DAYS_ENV = "METRICS_CORE_STORE_WORKING_DAYS"
DEFAULT_QUOTA_BYTES = 10 * 1024 ** 3
DEFAULT_WORKING_DAYS = 30.0

_UNITS = {"": 1, "b": 1, "kb": 1000, "mb": 1000 ** 2, "gb": 1000 ** 3, "tb": 1000 ** 4,
          "k": 1024, "kib": 1024, "m": 1024 ** 2, "mib": 1024 ** 2, "g": 1024 ** 3, "gib": 1024 ** 3,
          "t": 1024 ** 4, "tib": 1024 ** 4}
_SIZE = re.compile(r"\A\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*\Z")


def default_store_dir() -> Path:
    """``$METRICS_CORE_STORE_DIR`` if set, else the platform's per-user data directory."""
    env = os.environ.get(DIR_ENV, "").strip()
    if env:
        return Path(env).expanduser()
    if sys.platform.startswith("win"):
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return Path(base) / "metrics-core"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "metrics-core"
    base = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local" / "share")
    return Path(base) / "metrics-core"


def parse_size(text: str, what: str = QUOTA_ENV) -> int:
    """Bytes in ``text``: a number with an optional unit (B, KB/MB/GB/TB = powers of 1000,
    K/M/G/T or KiB/MiB/GiB/TiB = powers of 1024)."""
    match = _SIZE.match(str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _UNITS:
        raise StoreError(f"{what}={text!r} is not a size: give bytes, e.g. 10GiB, 500MB or 2000000")
    return int(float(match.group(1)) * _UNITS[unit])


def format_size(nbytes: int) -> str:
    """``nbytes`` for people: ``1.5 GiB``, ``300.0 MiB``, ``12 bytes``."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    value = float(nbytes)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def _env_days() -> float:
    text = os.environ.get(WORKING_DAYS_ENV, "").strip()
    if not text:
        return DEFAULT_WORKING_DAYS
    try:
        days = float(text)
    except ValueError:
        days = float("nan")
    if not days > 0 or days == float("inf"):
        raise StoreError(f"{WORKING_DAYS_ENV}={text!r} is not a number of days > 0, e.g. 30 or 0.5")
    return days


@dataclass(frozen=True)
class StoreLimits:
    """The store's size quota in bytes and how long an unused working copy is kept (seconds)."""

    quota_bytes: int = DEFAULT_QUOTA_BYTES
    working_seconds: float = DEFAULT_WORKING_DAYS * 86400

    @classmethod
    def resolve(cls, quota_bytes: int | str | None = None, working_days: float | None = None) -> "StoreLimits":
        """Explicit values first, then the environment variables, then the defaults."""
        if quota_bytes is None:
            env = os.environ.get(QUOTA_ENV, "").strip()
            quota_bytes = parse_size(env) if env else DEFAULT_QUOTA_BYTES
        elif isinstance(quota_bytes, str):
            quota_bytes = parse_size(quota_bytes, "quota_bytes")
        if quota_bytes < 0:
            raise StoreError(f"the store quota must be >= 0 bytes, not {quota_bytes}")
        days = _env_days() if working_days is None else float(working_days)
        if not days > 0:
            raise StoreError(f"working copies must be kept for more than 0 days, not {working_days}")
        return cls(quota_bytes=int(quota_bytes), working_seconds=days * 86400)
