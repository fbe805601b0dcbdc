"""Code user ids and find each user's rows, without copying input that is already grouped.

Run and ground-truth files almost always keep a user's rows together. Only the
first row of each run of equal ids (a *head*) is then looked at: the heads are
factorised jointly across run and ground truth (:func:`encode.encode_pair`), and
each user's rows are ``start[u] : start[u] + length[u]`` of the input, in any
order of users. When some user's rows are split into several runs, every row
gets its head's code and a counting sort groups them (``rows``), keeping the
input order within a user.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .encode import _as_id_series, _kind, encode_pair
from .kernels import group_rows
from .kernels._jit import n_threads
from .kernels import strings as kstr

_NO_ROWS = np.zeros(1, dtype=np.int64)
_NO_BYTES = np.zeros(1, dtype=np.uint8)


@dataclass(frozen=True)
class UserRows:
    """Where each user's rows are: input rows ``start[u] + j`` (``grouped``) or ``rows[start[u] + j]``."""

    grouped: bool
    rows: np.ndarray
    start: np.ndarray
    length: np.ndarray


def group_users(run_users: pd.Series, truth_users: pd.Series | None = None, *, what: str = "user id"):
    """``(user_ids, run rows, truth rows)``: codes index ``user_ids``; truth rows are None without ``truth_users``.

    Codes follow :func:`encode.encode_pair` applied to the heads: first
    appearance in the run, then in the ground truth (id order for small
    non-negative integer ids).
    """
    sa = _as_id_series(run_users, what)
    sb = None if truth_users is None else _as_id_series(truth_users, what)
    heads_a = _heads(sa)
    heads_b = None if sb is None else _heads(sb)
    codes_a, codes_b, users = encode_pair(
        _at(sa, heads_a), None if sb is None else _at(sb, heads_b), what=what)
    n_users = len(users)
    run_rows = _user_rows(codes_a, heads_a, len(sa), n_users)
    truth_rows = None if sb is None else _user_rows(codes_b, heads_b, len(sb), n_users)
    return users, run_rows, truth_rows


def _at(s: pd.Series, positions: np.ndarray) -> pd.Series:
    return s.iloc[positions].reset_index(drop=True)


def _heads(s: pd.Series) -> np.ndarray:
    """Positions where the id differs from the row before (always position 0)."""
    n = len(s)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    chunks = 4 * n_threads()
    kind = _kind(s)
    if kind in ("int", "float") and not pd.api.types.is_bool_dtype(s.dtype):
        values = s.to_numpy()
        if values.dtype.kind in "iuf":
            return group_rows.heads(values, _NO_ROWS, _NO_BYTES, False, n, chunks)
    if kind == "str" and pd.api.types.is_string_dtype(s.dtype) and hasattr(s.array, "__arrow_array__"):
        try:
            off, data = kstr.arrow_buffers(s.array.__arrow_array__())
        except TypeError:
            off = None
        if off is not None:
            return string_heads(off, data)
    values = s.to_numpy(dtype=object)
    return np.flatnonzero(np.r_[True, values[1:] != values[:-1]])


def string_heads(off: np.ndarray, data: np.ndarray) -> np.ndarray:
    """Heads of a string column given as Arrow buffers (strings are compared once, into a byte mask)."""
    mask = np.empty(off.shape[0] - 1, dtype=np.uint8)
    group_rows.changes_bytes(off, data, mask)
    return np.flatnonzero(mask)


def balanced_chunks(work: np.ndarray, n_chunks: int) -> np.ndarray:
    """Bounds of ``n_chunks`` contiguous blocks of segments holding about equal work.

    ``work`` is cumulative (``work[s]`` = work before segment ``s``, one entry
    per segment plus the total); returns segment bounds ``chunks[t]:chunks[t+1]``.
    """
    bounds = np.searchsorted(work, np.linspace(0, work[-1], n_chunks + 1)).astype(np.int64)
    bounds[0], bounds[-1] = 0, work.shape[0] - 1
    return np.maximum.accumulate(bounds)


def _user_rows(head_codes: np.ndarray, heads: np.ndarray, n_rows: int, n_users: int) -> UserRows:
    lengths = np.diff(np.r_[heads, n_rows]).astype(np.int64)
    runs_per_user = np.bincount(head_codes, minlength=n_users)
    if runs_per_user.max(initial=0) <= 1:
        start = np.zeros(n_users, dtype=np.int64)
        length = np.zeros(n_users, dtype=np.int64)
        start[head_codes] = heads
        length[head_codes] = lengths
        return UserRows(True, _NO_ROWS, start, length)
    codes = np.repeat(head_codes.astype(np.int64, copy=False), lengths)
    offsets, perm = group_rows.group_by_user(codes, n_users)
    return UserRows(False, perm, offsets[:-1].copy(), np.diff(offsets))
