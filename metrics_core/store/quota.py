"""How much more the store can take, and the one-line message when it cannot."""

from __future__ import annotations

import shutil
from pathlib import Path

from metrics_core.store.config import CLIENT_SHARE_ENV, QUOTA_ENV, format_size
from metrics_core.store.errors import StoreFullError

__all__ = ["DISK_RESERVE_BYTES", "disk_free", "room", "refusal", "client_refusal"]

#: Bytes a SQLite store leaves free on its disk (room for the journal and the system).
DISK_RESERVE_BYTES = 64 * 1024 * 1024


def disk_free(directory: Path | None) -> int | None:
    """Free bytes on the disk holding ``directory`` minus the reserve (``None``: not a local file)."""
    if directory is None:
        return None
    try:
        return max(0, shutil.disk_usage(directory).free - DISK_RESERVE_BYTES)
    except OSError:
        return None


def room(used: int, quota: int, free_on_disk: int | None) -> int:
    """Bytes that can still be stored: what the quota leaves, and no more than the disk has."""
    left = max(0, quota - used)
    return left if free_on_disk is None else min(left, free_on_disk)


def refusal(needed: int, used: int, quota: int, free_on_disk: int | None) -> StoreFullError | None:
    """``None`` when ``needed`` more bytes fit, else the error to raise (one line)."""
    if needed <= room(used, quota, free_on_disk):
        return None
    if needed > quota:
        return StoreFullError(
            f"this needs {format_size(needed)}, more than the analysis store's whole quota of "
            f"{format_size(quota)}; an administrator can raise {QUOTA_ENV}")
    if free_on_disk is not None and needed > free_on_disk and quota - used >= needed:
        return StoreFullError(
            f"the disk holding the analysis store has only {format_size(free_on_disk)} free beyond the "
            f"{format_size(DISK_RESERVE_BYTES)} the store always leaves free (for its journal and the system) "
            f"and this needs {format_size(needed)}; free disk space or move the store ({QUOTA_ENV} is not "
            "the limit here)")
    return StoreFullError(
        f"the analysis store is full: {format_size(used)} of its {format_size(quota)} quota are used and this "
        f"needs {format_size(needed)} more; delete snapshots you no longer need or ask an administrator to "
        f"raise {QUOTA_ENV}")


def client_refusal(needed: int, used: int, share_bytes: int, share: float, working_days: float) -> StoreFullError | None:
    """``None`` when one client may add ``needed`` more bytes to the ``used`` it holds, else
    the error to raise (one line)."""
    if needed <= max(0, share_bytes - used):
        return None
    return StoreFullError(
        f"your share of the analysis store is used up: you keep {format_size(used)} of the "
        f"{format_size(share_bytes)} one browser or caller may keep ({share:.0%} of the quota, "
        f"{CLIENT_SHARE_ENV}) and this needs {format_size(needed)} more; remove files or delete snapshots you "
        f"no longer need (working copies you stop using are removed after {working_days:g} days)")
