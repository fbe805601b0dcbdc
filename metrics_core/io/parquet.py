"""Parquet files (bytes) and directories of Parquet part files, via pyarrow.parquet.

Only the columns needed are read: every leaf of each named top-level field (a
dot in a name is part of the name). Rows are located as ``row N`` (1-based).
Before any data is read, the footers give the row count, checked against
``max_rows``. ``max_bytes`` bounds what the columns read take in memory once
decoded (Arrow arrays, every dictionary expanded; :mod:`.parquet_size`),
counted row group by row group as the file is read:

* a row group whose footer entries and dictionaries (their longest value
  times the rows) bound it within what is left of the limit is read at full
  speed, then its exact decoded size is counted;
* any other row group is first read with its text columns kept
  dictionary-encoded, in batches whose decoded size is counted from the
  dictionary's value lengths without expanding anything (when what the
  batches hold as read, each with its own copy of the dictionary, would pass
  the limit, those counted so far are expanded first; one batch as read must
  fit the limit too). Reading stops as soon as a count passes the limit, so a small file
  whose dictionary expands to gigabytes is refused while only its indices are
  in memory. The batches are expanded once every row group of the file has
  been counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from ..errors import MetricsError
from .convert import check_utf8
from .limits import ReadLimits, current, format_size
from .lines import ROWS, LineMap
from .parquet_size import decoded_nbytes, leaf_indices, longest_dictionary_value, prefix_shared, row_group_bound

if TYPE_CHECKING:
    import pyarrow.parquet as pq

#: rows per batch of a row group counted before it is expanded
COUNTED_BATCH_ROWS = 65_536
#: rows per batch when a text column repeats prefixes (DELTA_BYTE_ARRAY): decoded as read, so smaller
PREFIX_SHARED_BATCH_ROWS = 4_096


def _unreadable(name: str, e: Exception) -> MetricsError:
    return MetricsError(f"{name}: not a readable Parquet file ({e}); check the file")


def parquet_names(data: bytes | None, path: Path | None, name: str) -> list[str]:
    """Column names from the Parquet schema (no data read)."""
    import pyarrow.parquet as pq  # here: a process that reads no Parquet file never imports it

    try:
        if path is not None:
            return list(pq.ParquetDataset(path).schema.names)
        return list(pq.ParquetFile(pa.BufferReader(data)).schema_arrow.names)
    except (pa.ArrowException, OSError) as e:
        raise _unreadable(name, e) from None


def _parts(data: bytes | None, path: Path | None) -> list:
    """What to open for each Parquet file: the buffer, or each part file of a directory (or the file)."""
    if data is not None:
        return [data]
    if path is not None and path.is_file():
        return [str(path)]
    import pyarrow.parquet as pq

    return list(pq.ParquetDataset(path).files)


def _open(part, **options) -> pq.ParquetFile:
    import pyarrow.parquet as pq

    return pq.ParquetFile(pa.BufferReader(part) if isinstance(part, bytes) else part, **options)


class _Budget:
    """Decoded bytes counted so far against ``max_bytes``; raises the limit's error once passed."""

    def __init__(self, name: str, limits: ReadLimits):
        self.name, self.limits, self.used = name, limits, 0
        self.held = 0  # bytes of the batches kept dictionary-encoded until their file is counted

    def left(self) -> int:
        return self.limits.max_bytes - self.used

    def add(self, n: int, held: int = 0) -> None:
        """Count ``n`` decoded bytes (and ``held`` bytes of batches kept as read)."""
        self.used += n
        self.held += held
        if self.used > self.limits.max_bytes:
            raise self.limits.exceeded(
                "max_bytes", f"{self.name}: the columns read take at least {format_size(self.used)} in memory "
                             f"once decoded")
        if self.held > self.limits.max_bytes:
            raise self.limits.exceeded(
                "max_bytes", f"{self.name}: the columns read hold at least {format_size(self.held)} in memory as "
                             f"read (their dictionaries repeated in every batch)")


def check_rows(parts: list, name: str, limits: ReadLimits) -> None:
    """Refuse data whose footers announce more rows than ``max_rows`` (no data read)."""
    rows = sum(_open(part).metadata.num_rows for part in parts)
    if rows > limits.max_rows:
        raise limits.exceeded("max_rows", f"{name}: the Parquet data holds {rows:,} rows")


def _longest_value(reader: pq.ParquetFile, group, g: int, text: list[int]) -> int:
    """The longest value in row group ``g``'s dictionaries of the ``text`` leaves (read as dictionaries:
    one row decoded, plus each dictionary page)."""
    leaves = [i for i in text if group.column(i).has_dictionary_page]
    if not leaves or group.num_rows == 0:
        return 0
    batch = next(iter(reader.reader.iter_batches(1, [g], leaves, False)), None)
    return longest_dictionary_value(batch.columns) if batch is not None else 0


def _expand(piece, target: pa.Schema) -> pa.Table:
    """A counted batch as the plain table the file's schema gives (dictionaries expanded)."""
    return piece if isinstance(piece, pa.Table) else pa.Table.from_batches([piece]).cast(target)


def _read_file(part, name: str, columns: list[str], budget: _Budget) -> pa.Table:
    """The ``columns`` of one Parquet file, counted against ``budget`` (see the module docstring)."""
    plain = _open(part)
    meta, schema = plain.metadata, plain.schema
    fields = [f for f in plain.schema_arrow if f.name in set(columns)]
    missing = [c for c in columns if c not in {f.name for f in fields}]
    if missing:
        raise MetricsError(f"{name}: a Parquet part file has no column {missing[0]!r}; every part needs the "
                           f"same columns")
    target = pa.schema(fields)
    leaves = leaf_indices(plain.reader.column_paths, columns)
    groups = range(meta.num_row_groups)
    text = [i for i in leaves if schema.column(i).physical_type == "BYTE_ARRAY"]
    shared = {i for i in text if any(prefix_shared(meta.row_group(g).column(i)) for g in groups)}
    as_dictionary = [i for i in text if i not in shared]  # pyarrow cannot keep DELTA_BYTE_ARRAY as a dictionary
    counting = _open(part, read_dictionary=as_dictionary) if as_dictionary else plain

    direct, counted, reserved = [], {}, 0
    for g in groups:
        group = meta.row_group(g)
        bound = row_group_bound(group, schema, leaves, _longest_value(counting, group, g, as_dictionary))
        if bound is not None and reserved + bound <= budget.left():
            direct.append(g)
            reserved += bound
        else:
            counted[g] = []
    def expand_held() -> None:  # counted batches become plain arrays, freeing their dictionaries
        for pieces in counted.values():
            pieces[:] = [_expand(p, target) for p in pieces]
        budget.held = 0

    for g, pieces in counted.items():  # counted before anything is expanded
        rows = PREFIX_SHARED_BATCH_ROWS if any(i in shared for i in leaves) else COUNTED_BATCH_ROWS
        for batch in counting.reader.iter_batches(rows, [g], leaves, True):
            if budget.held and budget.held + batch.nbytes > budget.limits.max_bytes:
                expand_held()
            budget.add(sum(decoded_nbytes(c, f.type) for c, f in zip(batch.columns, target)), held=batch.nbytes)
            pieces.append(batch)
    tables = []
    for g in groups:
        if g in counted:
            pieces = [_expand(p, target) for p in counted.pop(g)]
            tables.append(pa.concat_tables(pieces) if pieces else target.empty_table())
        else:
            table = plain.reader.read_row_group(g, column_indices=leaves, use_threads=True)
            budget.add(sum(decoded_nbytes(c, f.type) for c, f in zip(table.columns, target)))
            tables.append(table.replace_schema_metadata(None))
    budget.held = 0  # the batches are expanded: what they held is freed
    return pa.concat_tables(tables) if tables else target.empty_table()


def read_parquet(data: bytes | None, path: Path | None, name: str, columns: list[str],
                 limits: ReadLimits | None = None) -> tuple[pa.Table, LineMap]:
    """Read ``columns`` of a Parquet file or directory within ``limits`` (default: those in force)."""
    limits = current() if limits is None else limits
    budget = _Budget(name, limits)
    try:
        parts = _parts(data, path)
        check_rows(parts, name, limits)
        tables = [_read_file(part, name, columns, budget) for part in parts]
        table = (tables[0] if len(tables) == 1 else pa.concat_tables(tables)).select(columns)
    except (pa.ArrowException, OSError) as e:
        raise _unreadable(name, e) from None
    if table.num_rows == 0:
        raise MetricsError(f"{name}: has columns but no rows")
    for column in columns:  # Parquet keeps text bytes as written; nothing else checks that they are UTF-8
        if pa.types.is_string(table[column].type) or pa.types.is_large_string(table[column].type):
            check_utf8(table[column], column, name, ROWS)
    return table, ROWS
