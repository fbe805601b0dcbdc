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
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..encode import whole_decimal_text
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
        try:
            col = col.cast(pa.string())
        except pa.ArrowInvalid:
            raise MetricsError(f"{name}: column {src!r} ({role}) holds bytes that are not UTF-8 text") from None
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


#: floats represent every integer up to 2^53 exactly; beyond, ids stored as floats may have lost digits
EXACT_FLOAT_INTEGER = 2**53


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


def _describe_bad(col: pa.Array, numeric: bool, role: str, src: str, name: str, lines: LineMap) -> MetricsError:
    """Build the message for a column with at least one bad number."""
    if numeric:
        f = col.cast(pa.float64(), safe=False) if not pa.types.is_floating(col.type) else col
        null = pc.is_null(f).to_numpy(zero_copy_only=False)
        vals = f.fill_null(0.0).to_numpy(zero_copy_only=False).astype(np.float64)
        kinds = {"empty": null, "NaN": np.isnan(vals) & ~null, "infinite": np.isinf(vals) & ~null}
        kinds["non-numeric"] = np.zeros(len(vals), bool)
        if pa.types.is_integer(col.type):  # a 64-bit float holds every integer up to 2^53 only
            beyond = pc.or_(pc.greater(col, EXACT_FLOAT_INTEGER), pc.less(col, -EXACT_FLOAT_INTEGER))
            kinds["beyond 2^53"] = beyond.fill_null(False).to_numpy(zero_copy_only=False)
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
    any_bad = np.zeros(len(col), bool)
    for mask in kinds.values():
        any_bad |= mask
    if not any_bad.any():
        return MetricsError(f"{name}: {role} column {src!r} cannot be converted to numbers; check its values")
    first = int(np.flatnonzero(any_bad)[0])
    kind = next(k for k, m in kinds.items() if m[first])
    value = col[first].as_py()
    shown = {"empty": "an empty value",
             "beyond 2^53": f"the integer {value}, beyond 2^53 = {EXACT_FLOAT_INTEGER:,} (a 64-bit float, in which "
                            f"{role}s are computed, holds every integer up to there only; scale the {role}s down)",
             "beyond the largest float": f"the value {_clip(value)}, beyond the largest 64-bit float (about 1.8e308)",
             }.get(kind, f"{kind} value {_clip(value)}")
    counts = ", ".join(f"{int(m.sum())} {k}" for k, m in kinds.items() if m.any())
    return MetricsError(
        f"{name}: {lines(first)}: {role} column {src!r} has {shown}; {int(any_bad.sum())} bad {role} value(s) "
        f"({counts}). Every {role} must be a finite number"
    )


def numbers(col, role: str, src: str, name: str, lines: LineMap) -> np.ndarray:
    """Finite float64 values of a score, rank or relevance column."""
    col = _flat(col)
    t = col.type
    numeric = pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_boolean(t)
    if not numeric and not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise MetricsError(f"{name}: column {src!r} ({role}) holds {t} values; it must hold numbers")
    try:
        values = (col if numeric else pc.utf8_trim_whitespace(col)).cast(pa.float64())
        ok = values.null_count == 0
        out = values.to_numpy(zero_copy_only=False) if ok else None
        ok = ok and input_checks.first_non_finite(out) < 0
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        ok = False
    if not ok:
        raise _describe_bad(col, numeric, role, src, name, lines)
    return np.ascontiguousarray(out, dtype=np.float64)
