"""Encode user and item ids once as dense integer codes.

Ids may be strings or integers; they stay exact: the codes index an array of
the original values (never hashed to floats). Run and ground truth are encoded
jointly so that the same id gets the same code on both sides.

Ids compare by their canonical text, whatever the dtype:

* strings (``str``, ``object`` holding strings, Arrow strings, categoricals
  of strings) are their text, exactly as written: ``"007"``, ``"12.0"`` and
  ``"12"`` are three different ids (as trec_eval compares docnos);
* integers (NumPy, nullable ``Int64``, Arrow integers, Python ints in an
  ``object`` column, categoricals of integers) are their decimal text;
* floats that are whole numbers up to 2^53 are integer text (``12.0`` ->
  ``"12"``: a number has no written form of its own); beyond 2^53 a float id
  is refused (digits may have been lost).

So int ``2`` joins str ``'2'`` but not ``'2.0'``; :func:`whole_number_twins`
finds the ids that differ only in such a writing, to explain a join that
matched less than expected. Reading text ``"7.0"`` as ``"7"`` is a choice the
user makes when reading the files (``whole_number_ids``,
:func:`whole_decimal_text`). When both sides hold integers they are compared as
integers (the same result, faster); an ``object`` column mixing integers and
strings becomes text.
"""

from __future__ import annotations


import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .errors import MetricsError


def _as_id_series(values, what: str) -> pd.Series:
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iub":
        return s  # NumPy integers and booleans cannot be missing
    if s.isna().any():
        first = int(np.flatnonzero(s.isna().to_numpy())[0])
        raise MetricsError(
            f"{what}: {int(s.isna().sum())} empty id(s), first at row {first + 1}; every row needs an id"
        )
    return canonical_ids(s, what)


EXACT_FLOAT_INTEGER = 2**53


_SMALL_IDS = 100_000
#: a whole number written with a decimal point followed by zeros only: its id is the integer's text
_WHOLE_DECIMAL = r"^-?(0|[1-9][0-9]*)\.0+$"


def _holds_whole_decimal(arr) -> bool:
    """Whether any string of ``arr`` writes a whole number with a zero fraction (one compiled pass over
    the Arrow buffers, :func:`~metrics_core.kernels.input_checks.first_whole_decimal`); True when
    ``arr`` holds nulls (not looked into)."""
    from .kernels.input_checks import first_whole_decimal
    from .kernels.strings import arrow_buffers

    for chunk in (arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]):
        if len(chunk) == 0:
            continue
        if chunk.null_count or first_whole_decimal(*arrow_buffers(chunk)) >= 0:
            return True
    return False


def whole_decimal_text(arr):
    """Arrow strings (array or chunked) with each whole number written as ``"7.0"`` replaced by the
    integer's text ``"7"`` (``"-0.0"`` -> ``"0"``); ``arr`` itself, not copied, when none is.
    Large columns are looked through by a compiled pass first; below :data:`_SMALL_IDS` strings
    Arrow's regular expression alone is quicker than loading that kernel."""
    if len(arr) == 0 or (len(arr) >= _SMALL_IDS and not _holds_whole_decimal(arr)):
        return arr
    whole = pc.match_substring_regex(arr, _WHOLE_DECIMAL)
    if not pc.any(whole).as_py():
        return arr
    integer = pc.replace_substring_regex(arr, r"\.0+$", "")
    integer = pc.if_else(pc.equal(integer, "-0"), pa.scalar("0", integer.type), integer)
    return pc.if_else(whole, integer, arr)


def canonical_ids(s: pd.Series, what: str = "id") -> pd.Series:
    """``s`` as strings, integers or floats that compare as the module docstring says.

    Categoricals become their categories' values; whole floats become int64;
    an ``object`` column becomes int64 when it holds only integers that fit,
    else text.
    """
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(s.cat.categories.dtype)
    if _kind(s) == "float":
        values = s.to_numpy(dtype=np.float64)
        if (np.floor(values) == values).all():
            big = np.abs(values) > EXACT_FLOAT_INTEGER
            if big.any():
                _id_text(float(values[big][0]), what)
            return pd.Series(values.astype(np.int64), index=s.index)
        return s
    if s.dtype != object:
        return s
    inferred = pd.api.types.infer_dtype(s, skipna=False)
    if inferred == "string":
        return s
    if inferred == "integer":
        try:
            return s.astype(np.int64)
        except OverflowError:
            pass
    return pd.Series([_id_text(v, what) for v in s], index=s.index, dtype=object)


def _id_text(v, what: str) -> str:
    """The canonical text of one id (see the module docstring)."""
    if isinstance(v, str):
        return v
    if isinstance(v, (bool, np.bool_)):
        return str(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        if abs(v) > EXACT_FLOAT_INTEGER:
            raise MetricsError(f"{what}: the floating-point id {v:g} is beyond 2^53, where floating point cannot "
                               f"keep every integer; store ids as text or integers")
        return str(int(v))
    return str(v)


def _kind(s: pd.Series) -> str:
    if pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return "int"
    if pd.api.types.is_float_dtype(s.dtype):
        return "float"
    return "str"


def _to_str(s: pd.Series) -> pd.Series:
    return s.astype(str)  # whole floats were made integers by canonical_ids


def encode_pair(a, b=None, *, what: str = "id"):
    """Factorise one or two id columns jointly.

    Returns ``(codes_a, codes_b, uniques)``: int64 code arrays (``codes_b`` is
    None without ``b``) and an array of the original id values, ``uniques[code]``.
    Codes are assigned in order of first appearance in ``a``, then ``b`` (in id
    order for small non-negative integer ids).
    """
    sa = _as_id_series(a, what)
    sb = None if b is None else _as_id_series(b, what)
    if sb is not None and _kind(sa) != _kind(sb):
        sa, sb = _to_str(sa), _to_str(sb)
    dense = _dense_ints(sa, sb)
    if dense is not None:
        return dense
    codes_a, uniq = factorize(sa)
    if sb is None:
        return codes_a, None, uniq
    codes_b = _lookup(uniq, sb)
    missing = codes_b < 0
    if missing.any():
        extra_codes, extra_uniq = pd.factorize(sb[missing], sort=False)
        codes_b[missing] = extra_codes + len(uniq)
        uniq = uniq.append(pd.Index(extra_uniq))
    return codes_a.astype(np.int64, copy=False), codes_b.astype(np.int64, copy=False), uniq


def _dense_ints(sa: pd.Series, sb: pd.Series | None):
    """Small non-negative integer ids: codes by a presence table instead of hashing.

    When every id lies in [0, 4 * rows], a boolean table marks the ids present and
    each id's code is its rank among them (codes in id order, no unused codes).
    """
    parts = [sa] if sb is None else [sa, sb]
    if not all(_kind(p) == "int" for p in parts):
        return None
    values = [p.to_numpy(dtype=np.int64) for p in parts]
    lo = min(int(v.min()) for v in values)
    hi = max(int(v.max()) for v in values)
    if lo < 0 or hi >= 4 * sum(len(v) for v in values) + 1024:
        return None
    present = np.zeros(hi + 1, dtype=bool)
    for v in values:
        present[v] = True
    if present.all():
        codes = values
        uniq = pd.Index(np.arange(hi + 1, dtype=np.int64))
    else:
        rank = np.cumsum(present, dtype=np.int64) - 1
        codes = [rank[v] for v in values]
        uniq = pd.Index(np.flatnonzero(present).astype(np.int64))
    return codes[0], (codes[1] if sb is not None else None), uniq


def factorize(s: pd.Series):
    """(int64 codes, uniques) in order of first appearance.

    Ids usually arrive grouped (all rows of a user together): then only the
    first row of each run of equal ids is hashed, and the codes are repeated.
    """
    n = len(s)
    if n > 1:
        values = _arrow(s)
        change = np.flatnonzero(np.r_[True, _not_equal_adjacent(values, s)])
        if len(change) < n // 2:
            heads = s.iloc[change]
            head_codes, uniq = pd.factorize(heads, sort=False)
            if len(uniq) == len(change):  # every run is a different id: the column is grouped
                lengths = np.diff(np.r_[change, n])
                return np.repeat(np.arange(len(change), dtype=np.int64), lengths), pd.Index(uniq)
    codes, uniq = pd.factorize(s, sort=False)
    return codes.astype(np.int64, copy=False), pd.Index(uniq)


def _arrow(s: pd.Series):
    arr = s.array
    return arr.__arrow_array__() if hasattr(arr, "__arrow_array__") and _kind(s) == "str" else s.to_numpy()


def _not_equal_adjacent(values, s: pd.Series) -> np.ndarray:
    if isinstance(values, np.ndarray):
        return values[1:] != values[:-1]
    ne = pc.not_equal(values.slice(1), values.slice(0, len(values) - 1))
    return ne.to_numpy(zero_copy_only=False)


def _lookup(uniq: pd.Index, s: pd.Series) -> np.ndarray:
    """Codes of ``s`` in ``uniq`` (-1 where absent)."""
    if _kind(s) == "str" and hasattr(s.array, "__arrow_array__"):
        arr = uniq.array
        value_set = arr.__arrow_array__() if hasattr(arr, "__arrow_array__") else pa.array(arr.astype(str))
        if isinstance(value_set, pa.ChunkedArray):
            value_set = value_set.combine_chunks()
        found = pc.index_in(s.array.__arrow_array__(), value_set=value_set.cast(pa.large_string()))
        return pc.fill_null(found, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return uniq.get_indexer(s).astype(np.int64, copy=False)




def ids_in(values, allowed) -> np.ndarray:
    """Boolean mask: which of ``values`` occur in ``allowed``, ids compared by their
    canonical text (module docstring), so int ``2`` is in ``["2"]``; a missing id is in
    no set.

    One hash lookup per value (Arrow's ``is_in``); pandas' ``isin`` on Arrow strings
    loops in Python, which costs tens of milliseconds per 10,000 ids.
    """
    left = pd.Series(values.array if isinstance(values, pd.Index) else values)
    out = np.zeros(len(left), dtype=bool)
    present = ~left.isna().to_numpy(dtype=bool)
    right = pd.Series(allowed.array if isinstance(allowed, pd.Index) else allowed)
    right = right[~right.isna().to_numpy(dtype=bool)]
    if not present.any() or len(right) == 0:
        return out
    found = pc.is_in(_as_text_arrow(left[present], "ids"),
                     value_set=_as_text_arrow(right, "allowed ids"))
    out[present] = found.to_numpy(zero_copy_only=False).astype(bool, copy=False)
    return out


def _as_text_arrow(s: pd.Series, what: str) -> pa.Array:
    """Ids without missing values as an Arrow string array of their canonical text."""
    s = canonical_ids(s.reset_index(drop=True), what)
    if _kind(s) == "str" and hasattr(s.array, "__arrow_array__"):
        arr = s.array.__arrow_array__()
    else:
        arr = pa.array(_to_str(s).to_numpy(dtype=object), type=pa.large_string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    return arr.cast(pa.large_string())


def whole_number_twins(ids, others) -> tuple[int, str, str] | None:
    """Ids of ``ids`` absent from ``others`` that an id of ``others`` equals once both are read
    as whole numbers (``"12.0"`` and ``"12"``, or a float column's ``12`` and the text ``"12.0"``),
    where that id of ``others`` is absent from ``ids`` too (a side that writes both ``"12"`` and
    ``"12.0"`` means two ids): ``(how many, one such id, its twin in others)``, None when there is none.

    Ids compare as exact text (module docstring), so such ids do not join; this says why a join
    matched less than expected. ``whole_decimal_text`` is the writing that makes them one id.

    Two different ids read as one whole number only if one of them is written with a zero fraction
    (``"12.0"``), so when no id of either side can be (:func:`_may_write_whole_decimal`: one compiled
    pass over the bytes of a text column, nothing for an integer column) the answer is None without
    hashing a row; otherwise the distinct ids of each side are compared."""
    if not (_may_write_whole_decimal(ids) or _may_write_whole_decimal(others)):
        return None
    mine = _unique_text(ids)
    theirs = _unique_text(others)
    absent = mine.filter(pc.invert(pc.is_in(mine, value_set=theirs)))
    theirs = theirs.filter(pc.invert(pc.is_in(theirs, value_set=mine)))
    if len(absent) == 0 or len(theirs) == 0:
        return None
    absent_whole = whole_decimal_text(absent)
    theirs_whole = whole_decimal_text(theirs)
    twin = pc.is_in(absent_whole, value_set=theirs_whole).to_numpy(zero_copy_only=False)
    if not twin.any():
        return None
    first = int(np.flatnonzero(twin)[0])
    key = absent_whole[first]
    partner = theirs.filter(pc.equal(theirs_whole, key))[0].as_py()
    return int(twin.sum()), absent[first].as_py(), partner


def _may_write_whole_decimal(values) -> bool:
    """Whether a canonical text of ``values`` may write a whole number with a zero fraction
    (``"7.0"``, :data:`_WHOLE_DECIMAL`). Exact for integer and text columns held by Arrow (the
    categories of a categorical); True, to be looked at id by id, for anything else (a float column
    that keeps fractions writes ``12.0`` as ``"12.0"``; an ``object`` column; missing ids)."""
    s = values if isinstance(values, (pd.Series, pd.Index)) else pd.Series(values)
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.cat.categories if isinstance(s, pd.Series) else s.categories
    if pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return False
    if pd.api.types.is_float_dtype(s.dtype) or not hasattr(s.array, "__arrow_array__"):
        return True
    arr = s.array.__arrow_array__()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        return True
    if len(arr) < _SMALL_IDS:  # Arrow's regular expression is quicker than loading the compiled pass
        return arr.null_count > 0 or bool(pc.any(pc.match_substring_regex(arr, _WHOLE_DECIMAL)).as_py())
    return _holds_whole_decimal(arr)


def _unique_text(values) -> pa.Array:
    """The distinct canonical texts of ``values`` (missing ids left out) as an Arrow string array."""
    s = pd.Series(values.array if isinstance(values, pd.Index) else values)
    s = s[~s.isna().to_numpy(dtype=bool)]
    if pd.api.types.is_integer_dtype(s.dtype):  # one text per distinct number: written once each
        s = pd.Series(pd.unique(s.to_numpy()))
    if len(s) == 0:
        return pa.array([], type=pa.large_string())
    return pc.unique(_as_text_arrow(s, "ids"))
