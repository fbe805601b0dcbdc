"""Key ranges of users, planned from row-group statistics, one Spark task each.

The user-id key space is cut at ``bounds`` b1 < b2 < ... < bm into m + 1
ranges (-inf, b1), [b1, b2), ..., [bm, +inf). Every user falls in exactly one
range, so a task that reads the run and ground-truth rows whose user is in its
range holds whole users: the groups the single-machine code needs, without a
shuffle. Correctness does not depend on the statistics (the ranges cover every
key and each task filters exactly); they only decide how many rows each task
must decode. When the files are clustered by user (written sorted, as most
pipelines do) each range decodes about its own rows; when they are not, every
range would decode almost everything and :func:`decoded_rows` tells the
caller to shuffle instead.
"""

from __future__ import annotations

import math

from ._parquet_scan import RowGroupKeys

#: Run rows per task when the caller does not choose the number of ranges (a task holds its rows in memory)
ROWS_PER_TASK = 4_000_000
#: Largest ratio of decoded rows to rows for which reading key ranges beats a shuffle
MAX_DECODE_RATIO = 2.0


def range_count(total_rows: int, parallelism: int) -> int:
    """A multiple of the parallelism with at most about ROWS_PER_TASK rows per range."""
    parallelism = max(1, parallelism)
    waves = max(1, math.ceil(total_rows / (parallelism * ROWS_PER_TASK)))
    return parallelism * waves


def split_bounds(groups: list[RowGroupKeys], ranges: int) -> list:
    """Strictly increasing cut points giving ranges of about equal rows (at most ``ranges`` - 1 of them).

    Row groups are taken in key order; inside one, integer keys are interpolated
    (rows assumed evenly spread over [low, high]), other keys cut at its low end.
    """
    if ranges <= 1 or not groups:
        return []
    ordered = sorted(groups, key=lambda g: (g.low, g.high))
    total = sum(g.rows for g in ordered)
    integer = all(isinstance(g.low, int) and isinstance(g.high, int) for g in ordered)
    bounds: list = []
    seen = 0
    targets = [total * j / ranges for j in range(1, ranges)]
    t = 0
    for g in ordered:
        while t < len(targets) and targets[t] < seen + g.rows:
            share = (targets[t] - seen) / g.rows
            cut = g.low + int(share * (g.high - g.low)) if integer else g.low
            if not bounds or cut > bounds[-1]:
                bounds.append(cut)
            t += 1
        seen += g.rows
    return [b for b in bounds if b > ordered[0].low]


def bounds_of(bounds: list, piece: int) -> tuple:
    """(low, high) of range ``piece``: low inclusive, high exclusive, None for unbounded."""
    low = bounds[piece - 1] if piece > 0 else None
    high = bounds[piece] if piece < len(bounds) else None
    return low, high


def decoded_rows(groups: list[RowGroupKeys], bounds: list) -> int:
    """Rows the ranges decode in total: a row group is read by every range its [low, high] meets."""
    total = 0
    for piece in range(len(bounds) + 1):
        low, high = bounds_of(bounds, piece)
        total += sum(g.rows for g in groups if (low is None or g.high >= low) and (high is None or g.low < high))
    return total
