"""Recognise a DataFrame that is nothing but a scan of local Parquet files, and read its footers.

``spark.read.parquet(path)`` (optionally with columns selected or renamed) is
the most common input of the Spark engine. Such a DataFrame holds exactly the
rows of its files, so a task may read them with pyarrow instead of receiving
them from the JVM. :func:`plain_parquet_scan` says whether a DataFrame is one
(its optimized plan is a Parquet relation without partition columns, under at
most a projection of plain or renamed columns, over files of the local file
system) and :func:`row_group_keys` reads, from the files' footers, the key
range and row count of every row group: the driver plans key ranges from them
(:mod:`._key_ranges`). Anything else returns None and the caller takes the
general path.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote, urlparse

#: Footers read on the driver before giving up the file path (one read per file)
MAX_FILES = 10_000


@dataclass(frozen=True)
class ParquetScan:
    """Local Parquet files and, for each DataFrame column, the file column it reads."""

    paths: tuple[str, ...]
    columns: dict  # DataFrame column name -> column name in the files


@dataclass(frozen=True)
class RowGroupKeys:
    """A row group's smallest and largest key (from its statistics) and its number of rows."""

    low: object
    high: object
    rows: int


def _simple_name(obj) -> str:
    return obj.getClass().getSimpleName()


def _projected_sources(project) -> dict | None:
    """Output column -> source column of a Project made of plain or renamed columns only."""
    sources = {}
    items = project.projectList()
    for i in range(items.length()):
        expr = items.apply(i)
        kind = _simple_name(expr)
        if kind == "AttributeReference":
            sources[expr.name()] = expr.name()
        elif kind == "Alias" and _simple_name(expr.child()) == "AttributeReference":
            sources[expr.name()] = expr.child().name()
        else:
            return None
    return sources


def _local_path(uri: str) -> str | None:
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return None
    return unquote(parsed.path)


def plain_parquet_scan(df, columns: list[str]) -> ParquetScan | None:
    """The files and column mapping of ``df.select(columns)`` when it is a plain local Parquet scan, else None."""
    try:
        plan = df.select(*columns)._jdf.queryExecution().optimizedPlan()
        mapping = {c: c for c in columns}
        if _simple_name(plan) == "Project":
            sources = _projected_sources(plan)
            if sources is None:
                return None
            mapping = {c: sources[c] for c in columns}
            plan = plan.child()
        if _simple_name(plan) != "LogicalRelation":
            return None
        relation = plan.relation()
        if (_simple_name(relation) != "HadoopFsRelation"
                or _simple_name(relation.fileFormat()) != "ParquetFileFormat"
                or relation.partitionSchema().length() > 0):
            return None
        uris = df.inputFiles()
    except Exception:  # a plan this module does not know: the general path
        return None
    paths = [_local_path(u) for u in uris]
    if not paths or len(paths) > MAX_FILES or any(p is None for p in paths):
        return None
    return ParquetScan(paths=tuple(sorted(paths)), columns=mapping)


def file_types(scan: ParquetScan):
    """pyarrow type of every mapped column, the same in every file, or None (missing column, differing types)."""
    import pyarrow.parquet as pq

    types = None
    for path in scan.paths:
        schema = pq.read_schema(path)
        found = {}
        for column, source in scan.columns.items():
            if source not in schema.names or schema.names.count(source) != 1:
                return None
            found[column] = schema.field(source).type
        if types is None:
            types = found
        elif found != types:
            return None
    return types


def row_group_keys(scan: ParquetScan, key: str) -> list[RowGroupKeys] | None:
    """Key range and rows of every non-empty row group of the files, or None when a row group has no
    min/max statistics for the key or may hold a null key (those rows would escape a range filter)."""
    import pyarrow.parquet as pq

    source = scan.columns[key]
    groups = []
    for path in scan.paths:
        meta = pq.read_metadata(path)
        names = [meta.schema.column(j).path for j in range(meta.num_columns)]
        if source not in names:
            return None
        j = names.index(source)
        for i in range(meta.num_row_groups):
            group = meta.row_group(i)
            if group.num_rows == 0:
                continue
            stats = group.column(j).statistics
            if stats is None or not stats.has_min_max or not stats.has_null_count or stats.null_count != 0:
                return None
            groups.append(RowGroupKeys(low=stats.min, high=stats.max, rows=int(group.num_rows)))
    return groups
