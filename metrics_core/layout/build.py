"""Build the ranked layout: tidy frames -> :class:`~metrics_core.layout.ranked.Ranked`.

``prepare(run, qrels)`` validates the columns, encodes user ids once, finds
each user's rows, chooses how item ids are compared, codes relevance values,
then one kernel pass per user (:mod:`.sort_and_join`) sorts each user's list
(score descending, ties by item id string descending, trec_eval's rule), joins
the ground truth and sorts each user's judged relevances for the ideal ranking.
Evaluating at any cutoff, gain or convention afterwards is a cheap pass over
these arrays; nothing is sorted again.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..encode import _as_id_series, _kind, _to_str
from ..errors import MetricsError
from ..frames import ACCEPTED, as_pandas
from ..grouping import balanced_chunks, group_users
from ..kernels import strings as kstr
from ..kernels._jit import interpreting, kernel_guard, n_threads, runs_as_python
from ..kernels.input_checks import first_non_finite
from . import kernels as layout_kernels
from . import plain
from .ranked import InputRows, ItemCodes, Ranked
from .sort_and_join import LayoutArrays, RunSide, TruthSide, rank_and_join

USER, ITEM, SCORE, REL = "user_id", "item_id", "score", "relevance"
RELEVANCE_ALIASES = ("relevance", "label")


def _relevance_column(df: pd.DataFrame) -> str | None:
    for name in RELEVANCE_ALIASES:
        if name in df.columns:
            return name
    return None


def _require(df, columns, what, allow_empty: bool = False):
    if not isinstance(df, pd.DataFrame):
        raise MetricsError(f"{what} must be {ACCEPTED}, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MetricsError(
            f"{what} is missing column(s) {', '.join(missing)}; columns found: {', '.join(map(str, df.columns))}"
        )
    if len(df) == 0 and not allow_empty:
        raise MetricsError(f"{what} has no rows")


def _numeric(df, column, what) -> np.ndarray:
    s = df[column]
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iuf":
        values = np.ascontiguousarray(s.to_numpy(dtype=np.float64))  # no copy for float64; NaN is caught below
    else:
        values = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    first = first_non_finite(values)
    if first >= 0:
        bad = int(np.count_nonzero(~np.isfinite(values)))
        raise MetricsError(
            f"{what}: column '{column}' has {bad} non-numeric, empty, NaN or infinite value(s), "
            f"first at row {first + 1} ({s.iloc[first]!r}); fix or drop those rows"
        )
    return values


def prepare(run: pd.DataFrame, qrels: pd.DataFrame | None = None, *, name: str = "run") -> Ranked:
    """Encode, join and sort once.

    ``run`` has columns ``user_id, item_id, score`` (one row per recommended
    item) and, when ``qrels`` is None, ``relevance`` or ``label`` as well.
    ``qrels`` has ``user_id, item_id, relevance`` (or ``label``). Relevance is
    graded; negative judgments are non-relevant with gain 0. A duplicate
    (user, item) in the run is an error; in the ground truth an exact repeat is
    dropped and a conflicting one is an error. Either may be a pandas or polars
    DataFrame, a pyarrow Table or any Arrow PyCapsule table (:mod:`metrics_core.frames`).
    Shown as the stage "preparing NAME" on the active progress reporter (:mod:`metrics_core.progress`).

    Parameters
    ----------
    run : DataFrame
        ``user_id, item_id, score`` (and ``relevance`` or ``label`` when ``qrels`` is None).
    qrels : DataFrame, optional
        The ground truth, ``user_id, item_id, relevance`` (or ``label``).
    name : str
        The run's name in messages and progress stages.

    Returns
    -------
    Ranked
        The prepared layout every metric reads; evaluate it as often as needed with
        ``mc.evaluate(ranked, metrics=[...])``.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "c", "a", "c"],
    ...                     "score": [0.9, 0.8, 0.1, 0.7, 0.6]})
    >>> qrels = pd.DataFrame({"user_id": ["u1", "u2"], "item_id": ["b", "c"], "relevance": [1, 2]})
    >>> ranked = mc.prepare(run, qrels)
    >>> list(ranked.user_ids)
    ['u1', 'u2']
    >>> mc.evaluate(ranked, metrics=["mrr@2"]).summary
    {'mrr@2': 0.5}
    """
    from ..progress import stage

    with kernel_guard(), stage(f"preparing {name}: encoding ids, joining the ground truth, sorting"):
        return _prepare(run, qrels, name, _layout_pass(run, qrels))


#: Inside :func:`~metrics_core.kernels._jit.interpret_until_compiled` (the command line's context),
#: inputs of at most this many rows (run and ground truth together) are laid out by the plain-Python
#: pass (:mod:`.plain`, the same result) while the layout kernel is not in numba's cache: about 0.07
#: CPU s at 22,000 rows, against about 7 CPU s (3 s quiet) to compile the kernel first; and, while numba
#: is not loaded, up to :data:`~metrics_core.kernels._jit.INTERPRET_CACHED_MAX_WORK` rows even when it is
#: cached (loading numba costs more; :func:`~metrics_core.kernels._jit.runs_as_python`, the kernels' rule).
#: Outside it (the library, the warm-up, which compiles the kernel through :func:`prepare`) the compiled
#: pass runs.
PLAIN_LAYOUT_MAX_ROWS = 50_000


def _layout_pass(run, qrels):
    """The layout pass :func:`prepare` runs (see :data:`PLAIN_LAYOUT_MAX_ROWS`)."""
    if not interpreting():
        return rank_and_join
    try:
        rows = len(run) + (0 if qrels is None else len(qrels))
    except TypeError:  # an Arrow PyCapsule table without a length: the compiled pass
        return rank_and_join
    plain_pass = rows <= PLAIN_LAYOUT_MAX_ROWS and runs_as_python(rows, layout_kernel_cached)
    return plain.rank_and_join if plain_pass else rank_and_join


def layout_kernel_cached() -> bool:
    """Whether the compiled layout pass of small inputs (the serial variant) is in numba's
    on-disk cache: False on a fresh install until it is first compiled (about 3 s)."""
    from .sort_and_join import _rank_and_join
    from ..kernels._jit import SERIAL

    return _rank_and_join.cached_on_disk(SERIAL)


def prepare_plain(run: pd.DataFrame, qrels: pd.DataFrame | None = None, *, name: str = "run") -> Ranked:
    """:func:`prepare` with the layout pass in plain Python (:mod:`.plain`): the same result
    without compiling the layout kernel, at Python speed (a few rows only; the warm-up uses it)."""
    with kernel_guard():
        return _prepare(run, qrels, name, plain.rank_and_join)


def prepare_unretrieved(run: pd.DataFrame, qrels: pd.DataFrame) -> Ranked:
    """:func:`prepare` where the run may have no rows: a group of ground-truth users the run does
    not list (each an empty list, as :func:`prepare` gives a user missing from a larger run), beside
    the run's own users if any. A distributed engine meets such groups when it splits users."""
    with kernel_guard():
        return _prepare(run, qrels, "run", rank_and_join, empty_run=True)


def _prepare(run, qrels, name, layout_pass, empty_run: bool = False) -> Ranked:
    run, qrels = as_pandas(run, name), as_pandas(qrels, "ground truth")
    _require(run, [USER, ITEM, SCORE], name, allow_empty=empty_run and qrels is not None)
    run_rel_col = _relevance_column(run)
    if qrels is None:
        if run_rel_col is None:
            raise MetricsError(
                f"{name} has no 'relevance' or 'label' column and no ground truth was given; "
                "pass qrels or add a relevance column"
            )
        truth, truth_name, truth_rel_col, truth_from_run = run, name, run_rel_col, True
    else:
        truth_rel_col = _relevance_column(qrels)
        _require(qrels, [USER, ITEM, truth_rel_col or REL], "ground truth")
        truth, truth_name, truth_from_run = qrels, "ground truth", False

    score = _numeric(run, SCORE, name)
    q_rel_raw = _numeric(truth, truth_rel_col, truth_name)

    if truth_from_run:
        users, run_rows, _ = group_users(run[USER], what=f"{name} column {USER}")
        truth_rows = run_rows
    else:
        users, run_rows, truth_rows = group_users(run[USER], truth[USER], what=f"column {USER}")
    run_items, truth_items = run[ITEM], truth[ITEM]
    r_ids, q_ids = _item_keys(run_items, truth_items, truth_from_run)

    offsets = _offsets(run_rows.length)
    q_offsets = _offsets(truth_rows.length)
    n, nq = int(offsets[-1]), int(q_offsets[-1])
    local_rows = int(run_rows.length.max(initial=0)) <= 256
    q_code, rel_values = _relevance_codes(q_rel_raw)
    tie_key, rel_code = np.empty(n, dtype=np.uint8), np.empty(n, dtype=q_code.dtype)
    row = np.empty(1 if local_rows else n, dtype=np.int64)
    local = np.empty(n if local_rows else 1, dtype=np.uint8)
    ideal_rel, q_keep = np.empty(nq), np.empty(nq, dtype=bool)
    kept = np.empty(len(users), dtype=np.int64)
    run_side = RunSide(run_rows.rows, run_rows.grouped, run_rows.start, score, r_ids)
    truth_side = TruthSide(truth_rows.rows, truth_rows.grouped, truth_rows.start, q_rel_raw, q_code, q_ids)
    out = LayoutArrays(tie=tie_key, row=row, local=local, local_rows=local_rows, code=rel_code, ideal=ideal_rel,
                       q_keep=q_keep, kept=kept)
    dup, conflict = layout_pass(balanced_chunks(offsets + q_offsets, n_threads()), offsets, q_offsets,
                                run_side, truth_side, out)
    run_perm = None if run_rows.grouped else run_rows.rows
    truth_perm = None if truth_rows.grouped else truth_rows.rows
    rows = (InputRows(offsets, run_rows.start, run_perm, local=local) if local_rows
            else InputRows(full=row))
    q_rows = InputRows(q_offsets, truth_rows.start, truth_perm)
    if conflict >= 0:
        _conflict_error(truth, truth_name, q_rows.at(conflict))
    if dup >= 0:
        at = int(rows.get()[dup])
        raise MetricsError(
            f"{name}: user {run[USER].iloc[at]!r} recommends item {run_items.iloc[at]!r} more than once "
            f"(row {at + 1}); keep one row per (user, item)"
        )
    if kept.sum() < nq:  # exact repeats in the ground truth: drop them
        q_lengths = np.diff(q_offsets)
        within = np.arange(nq) - np.repeat(q_offsets[:-1], q_lengths)
        ideal_rel = ideal_rel[within < np.repeat(kept, q_lengths)]
        q_rows = InputRows(q_offsets, truth_rows.start, truth_perm, keep=q_keep)
        q_offsets = _offsets(kept)
    return Ranked(
        user_ids=users, items=ItemCodes(run_items, rows, truth_items, q_rows), offsets=offsets,
        input_score=score, tie_key=tie_key, rel_code=rel_code, rel_values=rel_values, rows=rows,
        q_offsets=q_offsets, q_rows=q_rows, input_relevance=q_rel_raw, ideal_rel=ideal_rel,
        in_truth=kept > 0, truth_from_run=truth_from_run,
    )


def _relevance_codes(rel: np.ndarray):
    """``(code per ground-truth row, rel_values)``: relevance ``rel_values[code]``, code 0 unused (unjudged).

    Integer grades below 2^53 spanning at most 254 values take one pass; other
    values (any finite number) are coded through :func:`numpy.unique` (uint8 codes
    up to 254 distinct values, int32 beyond), which is exact for every float64.
    """
    codes = np.empty(rel.shape[0], dtype=np.uint8)
    lo, hi = layout_kernels.relevance_codes(rel, codes)
    if not np.isnan(lo):
        return codes, np.r_[0.0, lo + np.arange(int(hi - lo) + 1, dtype=np.float64)]
    values, inverse = np.unique(rel, return_inverse=True)
    dtype = np.uint8 if len(values) <= 254 else np.int32
    return (inverse + 1).astype(dtype), np.r_[0.0, values]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _item_keys(run_items: pd.Series, truth_items: pd.Series, truth_from_run: bool):
    """How item ids are compared: ``(run ids, truth ids)``, each an int64 array or the Arrow
    ``(offsets, data)`` buffers of the ids' strings.

    Integer ids on both sides compare as int64 (ties ordered by their decimal
    strings); anything else compares as the bytes of its string
    form (Arrow buffers), with integers and strings mixed compared as strings.
    """
    sa = _as_id_series(run_items, f"column {ITEM}")
    sb = sa if truth_from_run else _as_id_series(truth_items, f"column {ITEM}")
    if _kind(sa) == _kind(sb) == "int" and not (
            pd.api.types.is_bool_dtype(sa.dtype) or pd.api.types.is_bool_dtype(sb.dtype)):
        a = sa.to_numpy(dtype=np.int64)
        b = a if truth_from_run else sb.to_numpy(dtype=np.int64)
        return a, b
    mixed = _kind(sa) != _kind(sb)
    a = _string_buffers(sa, mixed)
    return a, (a if truth_from_run else _string_buffers(sb, mixed))


def _string_buffers(s: pd.Series, mixed: bool):
    """Arrow (offsets, data) buffers of the ids' string form."""
    if _kind(s) != "str" or mixed:
        s = _to_str(s)
    elif not (pd.api.types.is_string_dtype(s.dtype) and hasattr(s.array, "__arrow_array__")):
        s = s.astype(str)
    if hasattr(s.array, "__arrow_array__"):
        try:
            return kstr.arrow_buffers(s.array.__arrow_array__())
        except TypeError:
            pass
    return kstr.arrow_buffers(pa.array(s.astype(str).to_numpy(dtype=object), type=pa.large_string()))


def _conflict_error(truth: pd.DataFrame, truth_name: str, row: int):
    raise MetricsError(
        f"{truth_name}: user {truth[USER].iloc[row]!r} item {truth[ITEM].iloc[row]!r} is judged twice "
        f"with different relevance (row {row + 1}); keep one judgment per (user, item)"
    )


