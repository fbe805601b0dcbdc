"""Encode user and item ids once as dense integer codes.

Ids may be strings or integers; they stay exact: the codes index an array of
the original values (never hashed to floats). Run and ground truth are encoded
jointly so that the same id gets the same code on both sides. When one side
holds integers and the other strings, both are compared as strings (a TREC
qrels file read as text against a run whose ids pandas parsed as numbers).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .errors import MetricsError


def _as_id_series(values, what: str) -> pd.Series:
    s = values if isinstance(values, pd.Series) else pd.Series(values)
    if s.isna().any():
        first = int(np.flatnonzero(s.isna().to_numpy())[0])
        raise MetricsError(
            f"{what}: {int(s.isna().sum())} empty id(s), first at row {first + 1}; every row needs an id"
        )
    return s


def _kind(s: pd.Series) -> str:
    if pd.api.types.is_integer_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype):
        return "int"
    if pd.api.types.is_float_dtype(s.dtype):
        return "float"
    return "str"


def _to_str(s: pd.Series) -> pd.Series:
    if _kind(s) == "float":
        # ids read as floats only because of a missing value elsewhere: 12.0 -> "12"
        as_int = s.astype("int64")
        if (as_int == s).all():
            return as_int.astype(str)
    return s.astype(str)


def encode_pair(a, b=None, *, what: str = "id"):
    """Factorise one or two id columns jointly.

    Returns ``(codes_a, codes_b, uniques)``: int64 code arrays (``codes_b`` is
    None without ``b``) and an array of the original id values, ``uniques[code]``.
    Codes are assigned in order of first appearance in ``a``, then ``b``.
    """
    sa = _as_id_series(a, what)
    sb = None if b is None else _as_id_series(b, what)
    if sb is not None and _kind(sa) != _kind(sb):
        sa, sb = _to_str(sa), _to_str(sb)
    codes_a, uniq = pd.factorize(sa, sort=False, use_na_sentinel=True)
    uniq = pd.Index(uniq)
    if sb is None:
        return codes_a.astype(np.int64, copy=False), None, uniq
    codes_b = uniq.get_indexer(sb)
    missing = codes_b < 0
    if missing.any():
        extra_codes, extra_uniq = pd.factorize(sb[missing], sort=False)
        codes_b[missing] = extra_codes + len(uniq)
        uniq = uniq.append(pd.Index(extra_uniq))
    return codes_a.astype(np.int64, copy=False), codes_b.astype(np.int64, copy=False), uniq


def string_order(uniques: pd.Index) -> np.ndarray:
    """Rank of each unique id in byte-wise string order (trec_eval's strcmp).

    ``rank[code]`` is 0 for the smallest id string. Integer ids are ordered as
    their decimal strings ("10" < "9"), exactly as trec_eval compares docnos.
    """
    strings = pa.array(np.asarray(uniques.astype(str), dtype=object), type=pa.string())
    order = pc.array_sort_indices(strings).to_numpy()
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank
