"""How deeply a JSON-lines text nests arrays and objects, found without parsing it.

One pass over the bytes keeps the state a JSON tokenizer needs to tell
structure from text: inside a string or not, and whether the previous byte
was a backslash escaping the next one. Outside strings ``[`` and ``{`` open
a level and ``]`` and ``}`` close one. A newline ends a record (JSON lines;
a raw newline cannot occur inside a JSON string), so the depth and the
string state start again at every line.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

_NEWLINE, _QUOTE, _BACKSLASH = 10, 34, 92
_OPEN_ARRAY, _CLOSE_ARRAY, _OPEN_OBJECT, _CLOSE_OBJECT = 91, 93, 123, 125


@njit
def first_too_deep(data, limit):
    """``(line, column)`` (1-based) of the first byte of ``data`` (uint8) that opens nesting
    level ``limit + 1`` of a line, or ``(0, 0)`` when no line nests deeper than ``limit``."""
    line = 1
    line_start = 0
    depth = 0
    in_string = False
    escaped = False
    for i in range(data.shape[0]):
        b = data[i]
        if b == _NEWLINE:
            line += 1
            line_start = i + 1
            depth = 0
            in_string = False
            escaped = False
        elif in_string:
            if escaped:
                escaped = False
            elif b == _BACKSLASH:
                escaped = True
            elif b == _QUOTE:
                in_string = False
        elif b == _QUOTE:
            in_string = True
        elif b == _OPEN_ARRAY or b == _OPEN_OBJECT:
            depth += 1
            if depth > limit:
                return np.int64(line), np.int64(i - line_start + 1)
        elif (b == _CLOSE_ARRAY or b == _CLOSE_OBJECT) and depth > 0:
            depth -= 1
    return np.int64(0), np.int64(0)
