"""Turn parsed columns into exact string ids and checked float64 numbers.

Ids: text is trimmed and otherwise kept exactly as written (``"12.0"``, ``"12"``
and ``"007"`` are three different ids, as trec_eval reads them); integers
become their decimal text (``7`` -> ``"7"``) and floats that are all whole
numbers integer text (``12.0`` -> ``"12"``, a Parquet/JSON artefact of missing
values): a number has no written form of its own. ``whole_numbers=True`` is the
user's explicit choice to read text writing a whole number with a zero fraction
as that integer too (``"7.0"`` -> ``"7"``, see
:func:`metrics_core.encode.whole_decimal_text`), for files whose ids went through
a spreadsheet or a float column. An empty id is an error.

Numbers (score, rank, relevance): text is trimmed and must be a finite
decimal number. Empty, NaN (``nan``, ``NA``, ``null``...), infinite and
non-numeric values are errors naming the first offending row and counting
each kind. Negative values are accepted (TREC marks non-relevant as -1).

Numbers are computed as 64-bit floats, which hold every integer up to 2^53
but only some beyond. A value written as a whole number in positional
notation (``9007199254740993``, ``-12``, ``9007199254740993.00``; an integer
column of Parquet or JSON; a decimal column) must be held exactly: one the
float would round (``9007199254740993`` -> ``9007199254740992``) is refused,
naming its row, so no grade or score is silently changed. Whole numbers the
float holds exactly stay accepted at any size (``9007199254740994``,
``2^60``). A value written with an exponent (``1e300``,
``9.007199254740993e15``) is read as a float, rounded to the nearest one, as
scientific notation means.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..encode import EXACT_FLOAT_INTEGER, whole_decimal_text
from ..errors import MetricsError
from ..kernels import input_checks
from ..kernels import strings as kstr
from .lines import LineMap
from .quote import quoted

_NUMBER = r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$"
_NAN = r"^[+-]?(nan|na|n/a|null|none)$"
_INF = r"^[+-]?(inf|infinity)$"


def _flat(col) -> pa.Array:
    col = kstr.one_array(col)
    if pa.types.is_dictionary(col.type):
        col = col.dictionary_decode()
    return col


def _clip(value) -> str:
    return quoted(value, 40)


def _already_trimmed(col) -> bool:
    """Whether a text column holds no null, no empty id and nothing to trim (checked in place, chunk by chunk)."""
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) or col.null_count:
        return False
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    return all(input_checks.first_untrimmed(*kstr.arrow_buffers(c)) < 0 for c in chunks if len(c))


def ids(col, role: str, src: str, name: str, lines: LineMap, *,
        whole_numbers: bool = False) -> pa.Array | pa.ChunkedArray:
    """Exact string ids (pyarrow string or large_string, possibly chunked) from any id column.

    Text that needs no trimming and holds no empty id (the usual case) is
    returned as read, without a copy; anything else is trimmed and checked
    with Arrow kernels. ``whole_numbers``: text such as ``"7.0"`` becomes ``"7"``
    (off by default: text ids are exact).
    """
    finish = whole_decimal_text if whole_numbers else (lambda text: text)
    if _already_trimmed(col):
        return finish(col)
    col = _flat(col)
    t = col.type
    if pa.types.is_nested(t):
        raise MetricsError(f"{name}: column {src!r} ({role}) holds nested values ({t}); ids must be text or integers")
    if pa.types.is_floating(t):
        valid = col.drop_null()
        whole = pc.all(pc.equal(pc.floor(valid), valid)).as_py() if len(valid) else True
        if whole:
            _check_exact_floats(col, role, src, name, lines)
            col = col.cast(pa.int64())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        check_utf8(col, src, name, lines)
        col = col.cast(pa.string())
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        col = col.cast(pa.string())
    col = pc.utf8_trim_whitespace(col)
    empty = pc.or_kleene(pc.is_null(col), pc.equal(pc.utf8_length(col), 0)).fill_null(True)
    if pc.any(empty).as_py():
        bad = np.flatnonzero(empty.to_numpy(zero_copy_only=False))
        raise MetricsError(
            f"{name}: {lines(int(bad[0]))}: empty {role} in column {src!r}; {len(bad)} row(s) have an empty "
            f"{role}. Every row needs a user and an item id"
        )
    return finish(col.cast(pa.string()))


#: rows decoded one by one at a time to find the first value that is not UTF-8
_UTF8_SEARCH_ROWS = 65_536


def check_utf8(col, src: str, name: str, lines: LineMap) -> None:
    """Refuse a text or bytes column holding a value that is not UTF-8 (Parquet stores bytes as
    written: an encoded lone surrogate such as ``b"\\xed\\xa0\\x80"`` is no character), naming its row."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    offset = 0
    for chunk in chunks:
        large = pa.types.is_large_string(chunk.type) or pa.types.is_large_binary(chunk.type)
        try:
            chunk.view(pa.large_string() if large else pa.string()).validate(full=True)
        except pa.ArrowInvalid:
            raw = chunk.view(pa.large_binary() if large else pa.binary())
            for start in range(0, len(raw), _UTF8_SEARCH_ROWS):
                for i, value in enumerate(raw.slice(start, _UTF8_SEARCH_ROWS).to_pylist()):
                    if value is not None and not _is_utf8(value):
                        raise MetricsError(
                            f"{name}: {lines(offset + start + i)}: column {quoted(src)} holds {_clip(value)}, "
                            f"{_not_utf8(value)}; write the values as UTF-8 text") from None
        offset += len(chunk)


def _is_utf8(value: bytes) -> bool:
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _not_utf8(value: bytes) -> str:
    """What is wrong with bytes that are not UTF-8: an encoded lone surrogate, or other bytes."""
    try:
        text = value.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return "bytes that are not UTF-8 text"
    half = next(ch for ch in text if 0xD800 <= ord(ch) <= 0xDFFF)
    return f"an encoded lone surrogate \\u{ord(half):04x} (a UTF-16 half, not a character)"


def _check_exact_floats(col: pa.Array, role: str, src: str, name: str, lines: LineMap) -> None:
    """Refuse whole-number float ids beyond 2^53: another id may have been rounded to the same value."""
    big = pc.greater(pc.abs(col), float(EXACT_FLOAT_INTEGER)).fill_null(False)
    if pc.any(big).as_py():
        bad = np.flatnonzero(big.to_numpy(zero_copy_only=False))
        raise MetricsError(
            f"{name}: {lines(int(bad[0]))}: {role} column {src!r} holds the floating-point id {col[int(bad[0])].as_py():g}, "
            f"beyond 2^53 where floating point cannot keep every integer ({len(bad)} such id(s)); store ids as "
            f"text or integers"
        )


#: a whole number in positional notation: digits, then at most a decimal point and zeros
_WHOLE_WRITTEN = r"^[+-]?[0-9]+(\.0*)?$"
#: whole numbers with fewer characters than this are below 2^53 (16 digits), so exact
_SHORTEST_INEXACT = 16


def _inexact_integers(col: pa.Array) -> np.ndarray:
    """Per value of an integer column: whether float64 cannot hold it exactly."""
    low, high = pc.min_max(col).values()
    if low.as_py() is None or max(abs(low.as_py()), abs(high.as_py())) <= EXACT_FLOAT_INTEGER:
        return np.zeros(len(col), bool)
    values = col.fill_null(0).to_numpy(zero_copy_only=False)
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(np.float64).astype(values.dtype) != values


def _inexact_whole_text(text: pa.Array) -> np.ndarray:
    """Per value of a text column: whether it writes a whole number in positional notation
    (:data:`_WHOLE_WRITTEN`) that float64 cannot hold exactly (compared with the written digits).

    Values of 18 digits at most are compared as int64; longer ones (rare) one by one.
    """
    text = pc.utf8_trim_whitespace(text).fill_null("")
    out = np.zeros(len(text), bool)
    rows = np.flatnonzero(pc.greater_equal(pc.utf8_length(text), _SHORTEST_INEXACT).to_numpy(zero_copy_only=False))
    if not len(rows):
        return out
    long = text.take(pa.array(rows))
    whole = pc.match_substring_regex(long, _WHOLE_WRITTEN)
    rows, long = rows[whole.to_numpy(zero_copy_only=False)], long.filter(whole)
    if not len(rows):
        return out
    digits = pc.replace_substring_regex(long, r"\.0*$", "")
    short = pc.less_equal(pc.utf8_length(pc.utf8_ltrim(digits, characters="+-")), 18).to_numpy(zero_copy_only=False)
    if short.any():
        whole = digits.filter(pa.array(short)).cast(pa.int64()).to_numpy()
        out[rows[short]] = whole.astype(np.float64).astype(np.int64) != whole
    for row, written in zip(rows[~short], digits.filter(pa.array(~short)).to_pylist()):
        whole = int(written)
        try:
            out[row] = int(float(whole)) != whole
        except OverflowError:
            pass  # beyond the largest float: named as such by the caller
    return out


def _inexact_whole(col: pa.Array) -> np.ndarray:
    """Per value: a whole number written in ``col`` that float64 cannot hold exactly (all False for
    float columns, whose values are floats already)."""
    t = col.type
    if pa.types.is_integer(t):
        return _inexact_integers(col)
    if pa.types.is_decimal(t):
        return _inexact_whole_text(col.cast(pa.string()))
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return _inexact_whole_text(col)
    return np.zeros(len(col), bool)


def _describe_bad(col: pa.Array, numeric: bool, role: str, src: str, name: str, lines: LineMap) -> MetricsError:
    """Build the message for a column with at least one bad number."""
    if numeric:
        f = col.cast(pa.float64(), safe=False) if not pa.types.is_floating(col.type) else col
        null = pc.is_null(f).to_numpy(zero_copy_only=False)
        vals = f.fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float64)
        kinds = {"empty": null, "NaN": np.isnan(vals) & ~null, "infinite": np.isinf(vals) & ~null}
        kinds["non-numeric"] = np.zeros(len(vals), bool)
        kinds["beyond 2^53"] = _inexact_whole(col) & ~null
    else:
        text = pc.utf8_trim_whitespace(col)
        null = pc.is_null(text).to_numpy(zero_copy_only=False)
        text = text.fill_null("")
        lower = pc.utf8_lower(text)
        empty = pc.equal(pc.utf8_length(text), 0).to_numpy(zero_copy_only=False)
        nan = pc.match_substring_regex(lower, _NAN).to_numpy(zero_copy_only=False)
        inf = pc.match_substring_regex(lower, _INF).to_numpy(zero_copy_only=False)
        num = pc.match_substring_regex(text, _NUMBER).to_numpy(zero_copy_only=False)
        kinds = {"empty": empty | null, "NaN": nan, "infinite": inf}
        kinds["non-numeric"] = ~(num | nan | inf | empty | null)
        written = text.to_numpy(zero_copy_only=False)[num]
        with np.errstate(over="ignore"):
            overflow = np.zeros(len(col), bool)
            overflow[np.flatnonzero(num)] = np.isinf(written.astype(np.float64))
        kinds["beyond the largest float"] = overflow
        kinds["beyond 2^53"] = _inexact_whole(col) & num
    any_bad = np.zeros(len(col), bool)
    for mask in kinds.values():
        any_bad |= mask
    if not any_bad.any():
        return MetricsError(f"{name}: {role} column {src!r} cannot be converted to numbers; check its values")
    first = int(np.flatnonzero(any_bad)[0])
    kind = next(k for k, m in kinds.items() if m[first])
    value = col[first].as_py()
    shown = {"empty": "an empty value",
             "beyond 2^53": f"the whole number {_clip(value)}, which a 64-bit float (in which {role}s are "
                            f"computed) cannot hold exactly: it would be read as {_rounded(value)} (beyond 2^53 = "
                            f"{EXACT_FLOAT_INTEGER:,} a float holds only some integers)",
             "beyond the largest float": f"the value {_clip(value)}, beyond the largest 64-bit float (about 1.8e308)",
             }.get(kind, f"{kind} value {_clip(value)}")
    advice = (f"Scale the {role}s down, or write them with an exponent (e.g. 9.1e15) to accept the rounding"
              if kind == "beyond 2^53" else f"Every {role} must be a finite number")
    counts = ", ".join(f"{int(m.sum())} {k}" for k, m in kinds.items() if m.any())
    return MetricsError(
        f"{name}: {lines(first)}: {role} column {src!r} has {shown}; {int(any_bad.sum())} bad {role} value(s) "
        f"({counts}). {advice}"
    )


def _rounded(value) -> str:
    """The float64 a written whole number becomes, as integer text."""
    try:
        return f"{int(float(str(value).strip().split('.')[0])):d}"
    except (ValueError, OverflowError):
        return "another number"


def numbers(col, role: str, src: str, name: str, lines: LineMap) -> np.ndarray:
    """Finite float64 values of a score, rank or relevance column; a whole number the float would
    round is refused (see the module docstring)."""
    col = _flat(col)
    t = col.type
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_boolean(t)
    if not numeric and not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise MetricsError(f"{name}: column {src!r} ({role}) holds {t} values; it must hold numbers")
    try:
        values = (col if numeric else pc.utf8_trim_whitespace(col)).cast(pa.float64(), safe=False)
        ok = values.null_count == 0 and (pa.types.is_floating(t) or not _inexact_whole(col).any())
        out = values.to_numpy(zero_copy_only=False) if ok else None
        ok = ok and input_checks.first_non_finite(out) < 0
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        ok = False
    if not ok:
        raise _describe_bad(col, numeric, role, src, name, lines)
    return np.ascontiguousarray(out, dtype=np.float64)
