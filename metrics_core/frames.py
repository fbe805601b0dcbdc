"""DataFrames of any kind as the pandas frames the evaluation reads.

Every function that takes a run, ground truth, item features or interactions accepts a pandas
DataFrame, a polars DataFrame, a pyarrow Table or RecordBatch, or any object with the Arrow
PyCapsule interface (``__arrow_c_stream__``: DuckDB, Ibis, cuDF, ...). Anything but pandas goes
through Arrow, and from Arrow to pandas without copying where Arrow allows it:

* numeric columns of one chunk without nulls become NumPy arrays over the Arrow buffers
  (``to_pandas(split_blocks=True)``; a column of several chunks is joined, one copy);
* ``large_string`` columns become pandas' Arrow-backed strings over the same buffers, which the
  layout hands to its kernels as they are (``string`` columns get 64-bit offsets, the text is
  not copied);
* polars is asked for its Arrow table (``to_arrow``): its strings arrive as ``large_string``
  (polars keeps text in another layout, so that one conversion is polars' own), and a
  ``string_view`` column of any other producer is cast to ``large_string`` (one copy).

Lazy tables are read once, batch by batch, into one Arrow table (never collected into their own
kind of frame and then converted again):

* a polars ``LazyFrame`` (``pl.scan_parquet(...)``): its query runs on polars' streaming engine
  and each batch it yields is taken as Arrow (``collect_batches``; on a polars without it,
  ``collect(engine="streaming")``);
* a pyarrow ``Dataset`` (``pyarrow.dataset.dataset(...)``) or ``Scanner``, or a
  ``RecordBatchReader``: their record batches;
* a DuckDB relation (``duckdb.sql(...)``, ``duckdb.read_parquet(...)``): its Arrow record batch
  reader (``fetch_record_batch``);
* any object with ``__arrow_c_stream__``: the stream, batch by batch.

``string_view`` columns are cast batch by batch. Nothing is renamed, re-typed or dropped: nulls stay missing (the checks of the evaluation then
name the column and row), dictionary columns become categoricals, and the table's own pandas
metadata (a stored index) is ignored, so the frame holds exactly the table's columns.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from .errors import MetricsError

#: what the messages call an accepted input
ACCEPTED = ("a DataFrame (pandas or polars), a polars LazyFrame, a pyarrow Table, Dataset or Scanner, a DuckDB "
            "relation or any object with the Arrow PyCapsule interface (__arrow_c_stream__)")

#: rows per batch asked of a DuckDB relation
DUCKDB_BATCH_ROWS = 1_000_000

# pandas before 3 turns Arrow text into Python objects unless asked for its Arrow-backed strings
_STRINGS = None if int(pd.__version__.split(".")[0]) >= 3 else {
    pa.string(): pd.StringDtype("pyarrow"), pa.large_string(): pd.StringDtype("pyarrow")}.get


def is_frame(obj) -> bool:
    """Whether ``obj`` is a table this module turns into a pandas DataFrame."""
    return (isinstance(obj, (pd.DataFrame, pa.Table, pa.RecordBatch, pa.RecordBatchReader)) or _is_polars(obj)
            or _is_lazy_polars(obj) or _is_duckdb(obj) or _is_arrow_dataset(obj) or hasattr(obj, "__arrow_c_stream__"))


def as_pandas(obj, what: str):
    """``obj`` as a pandas DataFrame when it is a table of any kind (module docstring); anything
    else (None, a prepared run) is returned as it is, for the caller's own checks."""
    if obj is None or isinstance(obj, pd.DataFrame):
        return obj
    if not is_frame(obj):
        return obj
    return arrow_to_pandas(as_arrow(obj, what))


def per_user_frame(obj, what: str):
    """A per-user table of any kind as pandas indexed by user id: a pandas frame as it is; another
    table through :func:`as_pandas`, its ``user_id`` column (when it has one) made the index."""
    if obj is None or isinstance(obj, pd.DataFrame) or not is_frame(obj):
        return obj
    frame = as_pandas(obj, what)
    return frame.set_index("user_id") if "user_id" in frame.columns else frame


def as_arrow(obj, what: str) -> pa.Table:
    """A pyarrow Table of any accepted table (``string_view`` columns as ``large_string``)."""
    try:
        if isinstance(obj, pa.Table):
            table = obj
        elif _is_polars(obj):
            table = obj.to_arrow()
        elif _is_lazy_polars(obj):
            return _lazy_polars(obj)
        elif _is_duckdb(obj):
            return _from_batches(obj.fetch_record_batch(DUCKDB_BATCH_ROWS))
        elif _is_arrow_dataset(obj):
            return _from_batches(obj.to_reader() if hasattr(obj, "to_reader") else obj.scanner().to_reader())
        elif isinstance(obj, pa.RecordBatchReader):
            return _from_batches(obj)
        elif hasattr(obj, "__arrow_c_stream__") and not isinstance(obj, pa.RecordBatch):
            return _from_batches(pa.RecordBatchReader.from_stream(obj))
        else:
            table = pa.table(obj)
    except MetricsError:
        raise
    except Exception as exc:  # noqa: BLE001 - any producer's failure becomes the one line below
        raise MetricsError(f"{what}: could not be read as an Arrow table ({type(obj).__name__}: "
                           f"{str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}); "
                           f"pass {ACCEPTED}") from None
    return _without_views(table)


def arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
    """A pandas DataFrame over the Table's buffers (module docstring)."""
    return table.to_pandas(split_blocks=True, ignore_metadata=True, types_mapper=_STRINGS)


def _from_batches(reader) -> pa.Table:
    """One Table of a reader's batches, each batch's ``string_view`` columns cast as it arrives."""
    schema = pa.schema([pa.field(f.name, _plain_type(f.type), f.nullable, f.metadata) for f in reader.schema],
                       reader.schema.metadata)
    batches = [b if b.schema.equals(schema) else b.cast(schema) for b in reader]
    return pa.Table.from_batches(batches, schema=schema)


def _lazy_polars(frame) -> pa.Table:
    """A LazyFrame's result read once, batch by batch, on polars' streaming engine."""
    if hasattr(frame, "collect_batches"):
        batches = [b.to_arrow() for b in frame.collect_batches(engine="streaming")]
    else:  # older polars: one streaming collect
        batches = [frame.collect(engine="streaming").to_arrow()]
    if not batches:
        return frame.clear().collect().to_arrow()
    parts = [_without_views(t) for t in batches]
    return pa.concat_tables(parts, promote_options="permissive") if len(parts) > 1 else parts[0]


def _is_lazy_polars(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "polars" and hasattr(obj, "collect") and not hasattr(obj, "to_arrow")


def _is_duckdb(obj) -> bool:
    return type(obj).__module__.split(".")[0] == "duckdb" and hasattr(obj, "fetch_record_batch")


def _is_arrow_dataset(obj) -> bool:
    """A ``pyarrow.dataset`` Dataset or Scanner (found by its module: nothing imported here)."""
    return type(obj).__module__.startswith("pyarrow._dataset") and hasattr(obj, "to_batches")


def _is_polars(obj) -> bool:
    """A polars DataFrame (found by its module, so polars is never imported here)."""
    return type(obj).__module__.split(".")[0] == "polars" and hasattr(obj, "to_arrow")


def _without_views(table: pa.Table) -> pa.Table:
    """``string_view`` (and dictionaries of them) cast to ``large_string``, the layout the rest reads."""
    fields = [pa.field(f.name, _plain_type(f.type), f.nullable, f.metadata) for f in table.schema]
    target = pa.schema(fields, table.schema.metadata)
    return table if target.equals(table.schema) else table.cast(target)


# the view types exist from pyarrow 16 on
_is_string_view = getattr(pa.types, "is_string_view", lambda t: False)
_is_binary_view = getattr(pa.types, "is_binary_view", lambda t: False)


def _plain_type(t: pa.DataType) -> pa.DataType:
    if _is_string_view(t):
        return pa.large_string()
    if _is_binary_view(t):
        return pa.large_binary()
    if pa.types.is_dictionary(t) and (_is_string_view(t.value_type) or _is_binary_view(t.value_type)):
        return pa.dictionary(t.index_type, _plain_type(t.value_type), t.ordered)
    return t
