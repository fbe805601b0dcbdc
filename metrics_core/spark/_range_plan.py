"""Whether an evaluation can read key ranges of users from Parquet files instead of shuffling, and how.

The key-range path (:mod:`._range_reads`) is taken when all of these hold,
otherwise :func:`plan_ranges` returns None and the shuffle path runs:

- the run (and the ground truth, when given apart) is a plain scan of local
  Parquet files (:func:`._parquet_scan.plain_parquet_scan`);
- user and item ids are integers on both sides, or strings on both sides (no
  cast between the two), scores are floating point, relevance is numeric;
- every row group of both sides has min/max statistics of the user id and no
  null user id (a range filter would drop null keys, which the general path
  reports as an error);
- the run is clustered by user well enough that the ranges decode at most
  :data:`._key_ranges.MAX_DECODE_RATIO` times its rows (the ground truth, usually
  much smaller, is read by every range whose keys its row groups span).

Rows keep no input order across files, so ``ties="input"`` always shuffles.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._bucket import USER, ITEM, SCORE
from ._key_ranges import MAX_DECODE_RATIO, decoded_rows, range_count, split_bounds
from ._parquet_scan import file_types, plain_parquet_scan, row_group_keys
from ._range_reads import RangeSource, arrow_types


@dataclass(frozen=True)
class RangePlan:
    """The sides to read and the cut points of the user key ranges (one task per range)."""

    run: RangeSource
    truth: RangeSource | None
    bounds: list

    @property
    def ranges(self) -> int:
        return len(self.bounds) + 1


def _id_family(arrow_type) -> str | None:
    import pyarrow as pa

    if pa.types.is_integer(arrow_type):
        return "integer"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type) or pa.types.is_string_view(arrow_type):
        return "string"
    return None


def _numeric(arrow_type) -> bool:
    import pyarrow as pa

    return pa.types.is_integer(arrow_type) or pa.types.is_floating(arrow_type)


def _spark_family(data_type) -> str | None:
    from pyspark.sql import types as T

    if isinstance(data_type, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "integer"
    if isinstance(data_type, T.StringType):
        return "string"
    return None


def _side(df, columns):
    """(scan, pyarrow types, row-group keys) of one side, or None when it cannot be read by ranges: not a
    plain Parquet scan, ids whose file type is not the DataFrame's family, no usable statistics."""
    import pyarrow as pa

    scan = plain_parquet_scan(df, columns)
    if scan is None:
        return None
    try:
        types = file_types(scan)
        groups = row_group_keys(scan, USER) if types is not None else None
    except (OSError, pa.ArrowException):  # an unreadable footer: Spark's own read reports it
        return None
    if types is None or groups is None:
        return None
    for column in (USER, ITEM):
        family = _id_family(types[column])
        if family is None or family != _spark_family(df.schema[column].dataType):
            return None
    return scan, types, groups


def plan_ranges(run_df, truth_df, rel_col: str, ranges: int | None, parallelism: int) -> RangePlan | None:
    """A RangePlan when the data qualifies (module docstring), else None. ``truth_df`` None: truth in the run.
    ``ranges``: the number of key ranges, or None for about ROWS_PER_TASK run rows per range."""
    import pyarrow as pa

    run_columns = [USER, ITEM, SCORE] + ([rel_col] if truth_df is None else [])
    run = _side(run_df, run_columns)
    if run is None:
        return None
    truth = _side(truth_df, [USER, ITEM, rel_col]) if truth_df is not None else None
    if truth_df is not None and truth is None:
        return None
    sides = [run] + ([truth] if truth is not None else [])
    families = {column: {_id_family(types[column]) for _, types, _ in sides} for column in (USER, ITEM)}
    if any(len(found) != 1 for found in families.values()):
        return None  # integers on one side, strings on the other: the general path casts both to string
    id_families = {column: found.pop() for column, found in families.items()}
    if not pa.types.is_floating(run[1][SCORE]) or not all(_numeric(types[rel_col]) for _, types, _ in sides
                                                             if rel_col in types):
        return None
    groups = run[2]
    total = sum(g.rows for g in groups)
    bounds = split_bounds(groups, ranges or range_count(total, parallelism))
    if total and decoded_rows(groups, bounds) > MAX_DECODE_RATIO * total:
        return None
    run_source = RangeSource(scan=run[0], types=arrow_types(run_columns, id_families))
    truth_source = (RangeSource(scan=truth[0], types=arrow_types([USER, ITEM, rel_col], id_families))
                    if truth is not None else None)
    return RangePlan(run=run_source, truth=truth_source, bounds=bounds)
