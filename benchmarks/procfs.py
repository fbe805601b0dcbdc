"""What Linux's ``/proc`` says of a process, for the benchmarks that time servers and suites."""

from __future__ import annotations

import os
from pathlib import Path

#: clock ticks per second, the unit of ``/proc/<pid>/stat``'s times
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name: index 0 is the state, 11 and 12
    the user and system clock ticks, 19 the start time in ticks since boot (``proc(5)``'s fields
    3, 14, 15 and 22). Raises OSError when the process is gone."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def process_cpu(pid: int | None) -> float:
    """CPU seconds (user + system, its threads included) a process has used so far (NaN when unknown)."""
    try:
        fields = stat_fields(pid)
    except (OSError, IndexError):
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
