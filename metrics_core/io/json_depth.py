"""A bound on how deeply a JSON-lines record nests, checked before any parser sees it.

JSON parsers recurse once per level of nesting: pyarrow's JSON reader ends
the process with a segmentation fault on a line nesting about 10,000 arrays
(a 40 KB line), and Python's ``json`` raises ``RecursionError`` far below
that. :func:`check_json_depth` scans the bytes (strings skipped, see
:mod:`metrics_core.kernels.json_depth`) and refuses a text whose lines nest
deeper than :data:`MAX_JSON_DEPTH` levels, the row object included, with a
message naming the file, line and column.
"""

from __future__ import annotations

import numpy as np

from ..errors import MetricsError
from ..kernels.json_depth import first_too_deep

#: the deepest nesting of arrays and objects a JSON-lines record may have (the row object is level 1)
MAX_JSON_DEPTH = 100


def check_json_depth(text: bytes, name: str, limit: int = MAX_JSON_DEPTH) -> None:
    """Raise :class:`MetricsError` when a line of ``text`` nests arrays and objects deeper than ``limit``."""
    if text.count(b"[") + text.count(b"{") <= limit:
        return  # not enough opening brackets to reach the limit: nothing to scan
    line, column = first_too_deep(np.frombuffer(text, dtype=np.uint8), limit)
    if line:
        raise MetricsError(
            f"{name}: line {line}: JSON nested deeper than {limit} levels of arrays and objects "
            f"(column {column}); a record may nest at most {limit} levels: flatten this field or remove it")
