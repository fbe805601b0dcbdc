"""Evaluate key ranges of users read straight from Parquet files, one Spark task per range (no shuffle).

The driver plans the ranges (:mod:`._key_ranges`) and starts one task per
range with ``spark.range(n, numPartitions=n).mapInArrow``. Each task reads,
with pyarrow, the run rows and the ground-truth rows whose user id lies in its
range (row groups outside it are skipped by their statistics), converts the
columns to the types the general path gives them (ids: int64 or string, score:
double), and runs :func:`._bucket.evaluate_bucket` on them: the same group
evaluation as a task of the shuffle path, so the driver combines the output
in the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._bucket import USER, ITEM, SCORE, BucketPlan, evaluate_bucket, parts_to_arrow
from ._key_ranges import bounds_of
from ._parquet_scan import ParquetScan
from ._threads import limit_threads


@dataclass(frozen=True)
class RangeSource:
    """One side to read: its files, column mapping and the pyarrow type each column is given."""

    scan: ParquetScan
    types: dict  # DataFrame column -> pyarrow type after conversion


def arrow_types(columns, id_families: dict) -> dict:
    """The types the general path gives: ids int64 (family "integer") or string, score double, others as read."""
    import pyarrow as pa

    out = {}
    for column in columns:
        if column in (USER, ITEM):
            out[column] = pa.int64() if id_families[column] == "integer" else pa.string()
        elif column == SCORE:
            out[column] = pa.float64()
        else:
            out[column] = None
    return out


def read_range(source: RangeSource, low, high):
    """pandas rows of ``source`` whose user id is in [low, high) (None: unbounded), typed as the general path."""
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    key = pc.field(source.scan.columns[USER])
    condition = None
    for part in ((key >= low) if low is not None else None, (key < high) if high is not None else None):
        if part is not None:
            condition = part if condition is None else condition & part
    dataset = ds.dataset(list(source.scan.paths), format="parquet")
    projection = {name: pc.field(file_column) for name, file_column in source.scan.columns.items()}
    table = dataset.to_table(columns=projection, filter=condition)
    for name, target in source.types.items():
        if target is not None and table.schema.field(name).type != target:
            table = table.set_column(table.schema.get_field_index(name), name, table[name].cast(target))
    return table.to_pandas()


def range_task(plan: BucketPlan, arrow_schema, run: RangeSource, truth: RangeSource | None, bounds: list):
    """The function each task runs: range numbers in, the group output of each range out (Arrow batches)."""

    def run_ranges(batches):
        limit_threads()
        for batch in batches:
            for piece in batch.column(0).to_pylist():
                low, high = bounds_of(bounds, piece)
                run_rows = read_range(run, low, high)
                truth_rows = read_range(truth, low, high) if truth is not None else None
                table = parts_to_arrow(evaluate_bucket(run_rows, truth_rows, plan), arrow_schema)
                yield from table.to_batches()

    return run_ranges

