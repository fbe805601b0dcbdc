"""Parquet files (bytes) and directories of Parquet part files, via pyarrow.parquet.

Only the columns needed are read. Rows are located as ``row N`` (1-based).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..errors import MetricsError
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


def read_parquet(data: bytes | None, path: Path | None, name: str, columns: list[str]) -> tuple[pa.Table, LineMap]:
    """Read ``columns`` of a Parquet file or directory."""
    try:
        table = pq.read_table(_open(data, path), columns=columns)
    except (pa.ArrowException, OSError) as e:
        raise MetricsError(f"{name}: not a readable Parquet file ({e}); check the file") from None
    if table.num_rows == 0:
        raise MetricsError(f"{name}: has columns but no rows")
    return table, ROWS
