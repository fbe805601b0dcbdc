"""Parquet files (bytes) and directories of Parquet part files, via pyarrow.parquet.

Only the columns needed are read. Rows are located as ``row N`` (1-based).
Before any data is read, the footers give the row count and the uncompressed
size of the needed columns, checked against ``max_rows`` and ``max_bytes``
(:mod:`.limits`).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import MetricsError
from .limits import ReadLimits, current, format_size
from .lines import ROWS, LineMap


def _open(data: bytes | None, path: Path | None):
    return pa.BufferReader(data) if data is not None else path


def parquet_names(data: bytes | None, path: Path | None, name: str) -> list[str]:
    """Column names from the Parquet schema (no data read)."""
    try:
        if path is not None:
            return list(pq.ParquetDataset(path).schema.names)
        return list(pq.ParquetFile(pa.BufferReader(data)).schema_arrow.names)
    except (pa.ArrowException, OSError) as e:
        raise MetricsError(f"{name}: not a readable Parquet file ({e}); check the file") from None


def _footers(data: bytes | None, path: Path | None):
    if data is not None:
        return [pq.ParquetFile(pa.BufferReader(data)).metadata]
    return [pq.ParquetFile(f).metadata for f in pq.ParquetDataset(path).files]


def check_size(data: bytes | None, path: Path | None, name: str, columns: list[str], limits: ReadLimits) -> None:
    """Refuse a file whose footers announce more rows or uncompressed bytes than the limits allow."""
    rows = size = 0
    for meta in _footers(data, path):
        rows += meta.num_rows
        for g in range(meta.num_row_groups):
            group = meta.row_group(g)
            for c in range(group.num_columns):
                chunk = group.column(c)
                if chunk.path_in_schema.split(".")[0] in columns:
                    size += chunk.total_uncompressed_size
    if rows > limits.max_rows:
        raise limits.exceeded("max_rows", f"{name}: the Parquet data holds {rows:,} rows")
    if size > limits.max_bytes:
        raise limits.exceeded("max_bytes", f"{name}: the columns read hold {format_size(size)} uncompressed")


def read_parquet(data: bytes | None, path: Path | None, name: str, columns: list[str],
                 limits: ReadLimits | None = None) -> tuple[pa.Table, LineMap]:
    """Read ``columns`` of a Parquet file or directory (after :func:`check_size`)."""
    try:
        check_size(data, path, name, columns, current() if limits is None else limits)
        table = pq.read_table(_open(data, path), columns=columns)
    except (pa.ArrowException, OSError) as e:
        raise MetricsError(f"{name}: not a readable Parquet file ({e}); check the file") from None
    if table.num_rows == 0:
        raise MetricsError(f"{name}: has columns but no rows")
    return table, ROWS
