"""Decoded sizes of Parquet data: what the columns read take in memory as Arrow arrays
once every dictionary is expanded.

A Parquet file stores a dictionary-encoded column as its distinct values once
plus a small index per row, so a file of a few kilobytes may decode to
gigabytes. Two measures keep the read limit honest:

* :func:`row_group_bound`, an upper bound on a row group's decoded size from
  its footer entries and the longest value of each dictionary (``None`` when
  the footer cannot bound it, e.g. prefix-shared ``DELTA_BYTE_ARRAY`` text);
* :func:`decoded_nbytes`, the exact decoded size of arrays already read,
  counting a dictionary-encoded array as the plain array it stands for
  (offsets of the plain type, the length of the value each row points to),
  without expanding it.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

#: bytes per value of Parquet's fixed-width physical types as Arrow decodes them, at most
#: (INT96 becomes an 8-byte timestamp; 12 keeps the bound safe)
_FIXED_WIDTH = {"BOOLEAN": 1, "INT32": 4, "INT64": 8, "INT96": 12, "FLOAT": 4, "DOUBLE": 8}
#: a decimal of any physical type may become Arrow's decimal256
_DECIMAL_WIDTH = 32
#: bytes of one offset of a large list, string or binary array
_OFFSET = 8


def leaf_indices(paths: list, columns: list[str]) -> list[int]:
    """Parquet leaf columns of the top-level fields named in ``columns``.

    ``paths`` is ``ParquetReader.column_paths``: each leaf's path as a list of
    names, the top-level field first, so a dot inside a name stays part of it
    (``"user.id"`` is one field, never field ``user``'s child ``id``).
    """
    wanted = set(columns)
    return [i for i, path in enumerate(paths) if path and path[0] in wanted]


def prefix_shared(chunk) -> bool:
    """Whether a column chunk uses ``DELTA_BYTE_ARRAY`` (each value may repeat a prefix of the
    previous one, so its decoded size is not bounded by its encoded size)."""
    return "DELTA_BYTE_ARRAY" in chunk.encodings


def row_group_bound(group, schema, leaves: list[int], longest_value: int) -> int | None:
    """At most how many bytes the ``leaves`` of one row group decode to, or None when unknown.

    ``group`` is a ``RowGroupMetaData``, ``schema`` the file's ``ParquetSchema``,
    ``longest_value`` the longest value in this group's dictionaries of text or
    binary leaves (0 when they have none). Per value: the fixed width (or, for
    text and binary, the chunk's uncompressed pages plus the longest dictionary
    value for every row, as each row may point to it), an offset per list
    level and for text, and a validity bit per nullable level.
    """
    total = 0
    for leaf in leaves:
        chunk, column = group.column(leaf), schema.column(leaf)
        values = chunk.num_values
        uncompressed = chunk.total_uncompressed_size
        if values < 0 or uncompressed < 0:
            return None
        physical = column.physical_type
        offsets = column.max_repetition_level + (physical == "BYTE_ARRAY")  # lists, then the text itself
        bits = 1 + column.max_definition_level  # a validity bit per nullable level (one more as slack)
        total += values * offsets * _OFFSET + (values * bits + 7) // 8 + 64 * (offsets + bits)
        if physical == "BYTE_ARRAY":
            if prefix_shared(chunk):
                return None
            total += uncompressed + (values * longest_value if chunk.has_dictionary_page else 0)
        elif "Decimal" in str(column.logical_type):
            total += values * _DECIMAL_WIDTH
        elif physical == "FIXED_LEN_BYTE_ARRAY":
            total += values * max(int(column.length or 0), 0)
        else:
            total += values * _FIXED_WIDTH.get(physical, _DECIMAL_WIDTH)
    return total


def _dictionaries(arr: pa.Array):
    """Every dictionary-encoded array inside ``arr`` (itself included)."""
    t = arr.type
    if pa.types.is_dictionary(t):
        yield arr
    elif pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _dictionaries(arr.field(i))
    elif isinstance(arr, (pa.ListArray, pa.LargeListArray, pa.FixedSizeListArray, pa.MapArray)):
        yield from _dictionaries(arr.values)


def longest_dictionary_value(arrays) -> int:
    """The longest value (bytes) in the text or binary dictionaries inside ``arrays``."""
    longest = 0
    for arr in arrays:
        for chunk in arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]:
            for d in _dictionaries(chunk):
                if _is_text(d.type.value_type) and len(d.dictionary):
                    longest = max(longest, int(pc.max(pc.binary_length(d.dictionary)).as_py() or 0))
    return longest


def _is_text(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t))


def _is_large(t: pa.DataType) -> bool:
    return pa.types.is_large_string(t) or pa.types.is_large_binary(t)


def _expanded(arr: pa.DictionaryArray, plain: pa.DataType) -> int:
    """Bytes of the plain array a dictionary-encoded array stands for."""
    plain = plain.value_type if pa.types.is_dictionary(plain) else plain
    n = len(arr)
    validity = (n + 7) // 8 if arr.null_count else 0
    values = arr.type.value_type
    if not _is_text(values):
        if pa.types.is_primitive(values):
            width = max(values.bit_width // 8, 1)
        else:  # e.g. fixed-size binary or nested values: their average size, rounded up
            width = -(-arr.dictionary.nbytes // max(len(arr.dictionary), 1))
        return validity + n * width
    offset = 8 if _is_large(plain) or _is_large(values) else 4
    lengths = pc.take(pc.binary_length(arr.dictionary), arr.indices)
    return validity + n * offset + int(pc.sum(lengths).as_py() or 0)  # as Array.nbytes counts offsets


def decoded_nbytes(arr, plain: pa.DataType | None = None) -> int:
    """Bytes of ``arr`` (an Arrow array or chunked array, freshly read, not a slice) with every
    dictionary expanded into an array of ``plain`` type (default: ``arr``'s own type with
    dictionaries replaced by their values)."""
    if isinstance(arr, pa.ChunkedArray):
        return sum(decoded_nbytes(c, plain) for c in arr.chunks)
    plain = arr.type if plain is None else plain
    t = arr.type
    if pa.types.is_dictionary(t):
        return _expanded(arr, plain)
    if pa.types.is_struct(t):
        kids = [(arr.field(i), plain.field(i).type if pa.types.is_struct(plain) else None)
                for i in range(t.num_fields)]
    elif isinstance(arr, pa.MapArray):
        entries = pa.struct([plain.key_field, plain.item_field]) if pa.types.is_map(plain) else None
        kids = [(arr.values, entries)]
    elif isinstance(arr, (pa.ListArray, pa.LargeListArray, pa.FixedSizeListArray)):
        kids = [(arr.values, plain.value_type if hasattr(plain, "value_type") else None)]
    else:
        return int(arr.nbytes)
    # the array's own buffers (validity, offsets) as Array.nbytes counts them, then each child decoded
    return int(arr.nbytes) - sum(int(k.nbytes) for k, _ in kids) + sum(decoded_nbytes(k, p) for k, p in kids)
