"""Where the store lives and its limits, from arguments or environment variables.

=================================  ==========================================================
``METRICS_CORE_STORE_URL``         any SQLAlchemy URL (``postgresql+psycopg://user@host/db``);
                                   when unset, SQLite in the store directory
``METRICS_CORE_STORE_DIR``         the SQLite store directory (default: the user data directory)
``METRICS_CORE_STORE_QUOTA``       total stored bytes, e.g. ``10GiB``, ``500MB``, ``2000000``
                                   (default 10 GiB)
``METRICS_CORE_STORE_CLIENT_SHARE``  the part of the quota one client may fill: a fraction in
                                   (0, 1] or a percentage, e.g. ``0.25`` or ``25%`` (default 0.25)
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

__all__ = ["DIR_ENV", "URL_ENV", "QUOTA_ENV", "CLIENT_SHARE_ENV", "WORKING_DAYS_ENV", "DEFAULT_QUOTA_BYTES",
           "DEFAULT_CLIENT_SHARE", "DEFAULT_WORKING_DAYS", "StoreLimits", "default_store_dir", "parse_size",
           "parse_share", "format_size"]

DIR_ENV = "METRICS_CORE_STORE_DIR"
URL_ENV = "METRICS_CORE_STORE_URL"
QUOTA_ENV = "METRICS_CORE_STORE_QUOTA"
WORKING_DAYS_ENV = "METRICS_CORE_STORE_WORKING_DAYS"
CLIENT_SHARE_ENV = "METRICS_CORE_STORE_CLIENT_SHARE"
DEFAULT_QUOTA_BYTES = 10 * 1024 ** 3
#: The part of the quota one client (a browser, or a library caller) may fill by default.
DEFAULT_CLIENT_SHARE = 0.25
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


def parse_share(text: str | float, what: str = CLIENT_SHARE_ENV) -> float:
    """A client's share of the quota: a fraction in (0, 1] (``0.25``) or a percentage (``25%``)."""
    raw = str(text).strip()
    try:
        share = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        share = float("nan")
    if not 0 < share <= 1:  # NaN fails too
        raise StoreError(f"{what}={text!r} is not a share of the quota: give a fraction in (0, 1] "
                         "such as 0.25, or a percentage such as 25%")
    return share


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
    """The store's size quota in bytes, the share of it one client may fill, and how long an
    unused working copy is kept (seconds)."""

    quota_bytes: int = DEFAULT_QUOTA_BYTES
    working_seconds: float = DEFAULT_WORKING_DAYS * 86400
    client_share: float = DEFAULT_CLIENT_SHARE

    @property
    def client_quota_bytes(self) -> int:
        """Bytes one client may fill: ``quota_bytes * client_share``, rounded down."""
        return int(self.quota_bytes * self.client_share)

    @classmethod
    def resolve(cls, quota_bytes: int | str | None = None, working_days: float | None = None,
                client_share: float | str | None = None) -> "StoreLimits":
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
        if client_share is None:
            env = os.environ.get(CLIENT_SHARE_ENV, "").strip()
            share = parse_share(env) if env else DEFAULT_CLIENT_SHARE
        else:
            share = parse_share(client_share, "client_share")
        return cls(quota_bytes=int(quota_bytes), working_seconds=days * 86400, client_share=share)
