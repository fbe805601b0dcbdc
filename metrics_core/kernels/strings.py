"""Arrow string buffers for the compiled kernels, and byte-wise comparison.

A string column is its Arrow ``offsets`` (int64) and ``data`` (uint8) buffers:
string ``i`` is ``data[offsets[i]:offsets[i + 1]]``. The layout kernel
(:mod:`metrics_core.layout.sort_and_join`, via :mod:`.item_ids`) hashes and compares ids inside each user's short list with
these, so ids stay exact and no table over the whole catalogue is built (with a
million distinct items such tables are what makes id encoding slow).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ._jit import njit


def one_array(array):
    """An Arrow array as one array: a chunked array of one chunk is that chunk (``combine_chunks``
    would copy it), of several chunks their concatenation; a plain array as it is."""
    if isinstance(array, pa.ChunkedArray):
        return array.chunk(0) if array.num_chunks == 1 else array.combine_chunks()
    return array


def arrow_buffers(array) -> tuple[np.ndarray, np.ndarray]:
    """(offsets as int64, data as uint8) of a string / large_string Arrow array without nulls."""
    arr = one_array(array)
    if pa.types.is_string(arr.type):
        offsets_type = np.int32
    elif pa.types.is_large_string(arr.type):
        offsets_type = np.int64
    else:
        raise TypeError(f"not a string array: {arr.type}")
    _, off_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(off_buf, dtype=offsets_type)[arr.offset:arr.offset + len(arr) + 1]
    offsets = offsets.astype(np.int64, copy=False)  # large_string: no copy
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return offsets, data


@njit(inline="always")
def compare_bytes(off_a, data_a, i, off_b, data_b, j):
    """-1, 0 or 1 as string i of A is below, equal to or above string j of B (byte order, strcmp)."""
    a0, a1 = off_a[i], off_a[i + 1]
    b0, b1 = off_b[j], off_b[j + 1]
    la, lb = a1 - a0, b1 - b0
    m = la if la < lb else lb
    for x in range(m):
        ca, cb = data_a[a0 + x], data_b[b0 + x]
        if ca != cb:
            return -1 if ca < cb else 1
    if la == lb:
        return 0
    return -1 if la < lb else 1
