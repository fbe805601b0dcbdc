"""Prepare once: tidy frames -> :class:`Ranked`, the sorted CSR layout every metric reads.

``prepare(run, qrels)`` encodes ids once, joins the ground truth to the run,
sorts each user's list once (score descending, ties by item id string
descending, trec_eval's rule) and sorts each user's judged relevances once for
the ideal ranking. Evaluating at any cutoff, gain or convention afterwards is
a cheap pass over these arrays; nothing is sorted again.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from .encode import _as_id_series, _kind, _to_str, encode_pair
from .errors import MetricsError
from .grouping import balanced_chunks, group_users
from .kernels import assemble, layout
from .kernels import strings as kstr
from .kernels._jit import kernel_guard, n_threads

USER, ITEM, SCORE, REL = "user_id", "item_id", "score", "relevance"
RELEVANCE_ALIASES = ("relevance", "label")
_NO_INT = np.zeros(1, dtype=np.int64)  # placeholders for the comparator a kernel call does not use
_NO_BYTES = np.zeros(1, dtype=np.uint8)


def _relevance_column(df: pd.DataFrame) -> str | None:
    for name in RELEVANCE_ALIASES:
        if name in df.columns:
            return name
    return None


def _require(df, columns, what):
    if not isinstance(df, pd.DataFrame):
        raise MetricsError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise MetricsError(
            f"{what} is missing column(s) {', '.join(missing)}; columns found: {', '.join(map(str, df.columns))}"
        )
    if len(df) == 0:
        raise MetricsError(f"{what} has no rows")


def _numeric(df, column, what) -> np.ndarray:
    s = df[column]
    if isinstance(s.dtype, np.dtype) and s.dtype.kind in "iuf":
        values = np.ascontiguousarray(s.to_numpy(dtype=np.float64))  # no copy for float64; NaN is caught below
    else:
        values = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    first = layout.first_non_finite(values)
    if first >= 0:
        bad = int(np.count_nonzero(~np.isfinite(values)))
        raise MetricsError(
            f"{what}: column '{column}' has {bad} non-numeric, empty, NaN or infinite value(s), "
            f"first at row {first + 1} ({s.iloc[first]!r}); fix or drop those rows"
        )
    return values


class InputRows:
    """The input row number of each position of a CSR layout, built on first use.

    Position ``j`` of user ``u`` (``offsets[u] <= j < offsets[u + 1]``) comes
    from input row ``start[u] + local[j]``, through the grouping permutation
    ``perm`` when the input was not grouped. ``local`` is each ranked row's
    index within its user's input rows (one byte per row: the layout keeps
    nothing else); without it a position's index within its user is its own
    order (the ground truth keeps input order). ``keep`` drops positions
    afterwards (exact repeats in the ground truth). ``full`` gives the row
    numbers outright (lists longer than 256 rows).
    """

    def __init__(self, offsets=None, start=None, perm=None, local=None, keep=None, full=None):
        self._offsets, self._start, self._perm, self._local, self._keep = offsets, start, perm, local, keep
        self._full = full
        self._lock = threading.Lock()

    def at(self, position: int) -> int:
        """Input row of one position (counted before ``keep``)."""
        u = int(np.searchsorted(self._offsets, position, side="right") - 1)
        within = int(self._local[position]) if self._local is not None else position - int(self._offsets[u])
        row = int(self._start[u]) + within
        return row if self._perm is None else int(self._perm[row])

    def gather(self, values: np.ndarray) -> np.ndarray:
        """``values`` (one per input row) in layout order, without building the row numbers."""
        if self._full is not None or self._local is None or self._keep is not None:
            return values[self.get()]
        out = np.empty(self._local.shape[0], dtype=values.dtype)
        grouped = self._perm is None
        assemble.gather_ranked(values, self._offsets, self._start, self._local,
                               _NO_INT if grouped else self._perm, grouped, out)
        return out

    def get(self) -> np.ndarray:
        if self._full is None:
            with self._lock:
                if self._full is None:
                    lengths = np.diff(self._offsets)
                    if self._local is not None:
                        rows = np.repeat(self._start, lengths)
                        rows += self._local
                    else:
                        rows = np.arange(int(self._offsets[-1]), dtype=np.int64)
                        rows += np.repeat(self._start - self._offsets[:-1], lengths)
                    if self._perm is not None:
                        rows = self._perm[rows]
                    self._full = rows if self._keep is None else rows[self._keep]
        return self._full


class ItemCodes:
    """Item codes of a Ranked, computed when first needed.

    Ranking and classification metrics never need global item codes (the ground
    truth is joined per user); diversity metrics, coverage and exports do. The
    codes are then built once from the original columns: ``get()`` returns
    ``(item_ids, run codes in ranked order, truth codes in CSR order)``.
    """

    def __init__(self, run_items: pd.Series, run_rows: InputRows, truth_items: pd.Series, truth_rows: InputRows):
        self._run_items, self._run_rows = run_items, run_rows
        self._truth_items, self._truth_rows = truth_items, truth_rows
        self._codes = None
        self._lock = threading.Lock()

    def get(self):
        if self._codes is None:
            with self._lock:
                if self._codes is None:
                    same = self._truth_items is self._run_items
                    run_codes, truth_codes, uniques = encode_pair(
                        self._run_items, None if same else self._truth_items, what=f"column {ITEM}")
                    if same:
                        truth_codes = run_codes
                    self._codes = (uniques, run_codes[self._run_rows.get()], truth_codes[self._truth_rows.get()])
        return self._codes

    def run_ids(self, rows: np.ndarray) -> np.ndarray:
        """Original item ids of run rows (input row numbers)."""
        return np.asarray(self._run_items.iloc[rows].to_numpy(dtype=object))

    def truth_ids(self, positions: np.ndarray) -> np.ndarray:
        """Original item ids of ground-truth rows (CSR positions)."""
        return np.asarray(self._truth_items.iloc[self._truth_rows.get()[positions]].to_numpy(dtype=object))


@dataclass(frozen=True, eq=False)
class Ranked:
    """A run joined with its ground truth and sorted once per user (CSR layout).

    Users are coded ``0..n_users-1`` (``user_ids[code]`` is the original id);
    ``offsets[u]:offsets[u+1]`` index user ``u``'s ranked rows in ``item``,
    ``score``, ``rel``, ``judged``, ``tie_key`` and ``row`` (the input row
    number), sorted by score descending with ties by item id string
    descending. ``tie_key`` is 0 or 1, alternating from one run of equal
    scores to the next: the ranking kernels find tie groups with it (one byte
    per row). ``rel_code`` codes each row's judgment (0: unjudged, relevance
    ``rel_values[code]``; one byte per row when the ground truth has at most
    254 distinct relevance values). ``score``, ``rel``, ``judged``, ``row``
    and item codes are built from these on first use. The ground truth is
    a second CSR (``q_offsets``, ``q_item``, ``q_rel``) and ``ideal_rel`` holds
    each user's judged relevances sorted descending.
    """

    user_ids: pd.Index
    items: "ItemCodes"
    offsets: np.ndarray
    input_score: np.ndarray
    tie_key: np.ndarray
    rel_code: np.ndarray
    rel_values: np.ndarray
    rows: InputRows
    q_offsets: np.ndarray
    q_rows: InputRows
    input_relevance: np.ndarray
    ideal_rel: np.ndarray
    in_truth: np.ndarray
    truth_from_run: bool
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def q_rel(self) -> np.ndarray:
        """Relevance of each ground-truth position (CSR order)."""
        if "q_rel" not in self._cache:
            self._cache["q_rel"] = self.input_relevance[self.q_rows.get()]
        return self._cache["q_rel"]

    @property
    def rel(self) -> np.ndarray:
        """Relevance of each ranked row (0.0 when unjudged)."""
        if "rel" not in self._cache:
            self._cache["rel"] = self.rel_values[self.rel_code]
        return self._cache["rel"]

    @property
    def judged(self) -> np.ndarray:
        """Whether each ranked row is in the ground truth."""
        return self.rel_code != 0

    @property
    def score(self) -> np.ndarray:
        """Score of each ranked row (descending within each user)."""
        if "score" not in self._cache:
            self._cache["score"] = self.rows.gather(self.input_score)
        return self._cache["score"]

    @property
    def row(self) -> np.ndarray:
        """Input run row number of each ranked position."""
        return self.rows.get()

    @property
    def item_ids(self) -> pd.Index:
        """Original item id of each item code."""
        return self.items.get()[0]

    @property
    def item(self) -> np.ndarray:
        """Item code of each ranked row."""
        return self.items.get()[1]

    @property
    def q_item(self) -> np.ndarray:
        """Item code of each ground-truth row (CSR order)."""
        return self.items.get()[2]

    @property
    def n_users(self) -> int:
        return len(self.user_ids)

    @property
    def n_rows(self) -> int:
        return int(self.rel_code.shape[0])

    @property
    def n_items_seen(self) -> int:
        """Distinct items in the run or the ground truth (the default catalogue)."""
        seen = np.zeros(len(self.item_ids), dtype=bool)
        seen[self.item] = True
        seen[self.q_item] = True
        return int(seen.sum())

    @property
    def list_lengths(self) -> np.ndarray:
        """Number of ranked rows of each user (0 for users only in the ground truth)."""
        if "lengths" not in self._cache:
            self._cache["lengths"] = np.diff(self.offsets)
        return self._cache["lengths"]

    @property
    def in_run(self) -> np.ndarray:
        return self.list_lengths > 0

    def n_relevant(self, relevance_threshold: float = 1) -> np.ndarray:
        """Relevant ground-truth items per user (relevance >= threshold)."""
        key = ("n_rel", float(relevance_threshold))
        if key not in self._cache:
            counts = np.empty(self.n_users)  # the ideal gains hold each user's judgments
            assemble.count_at_least(self.q_offsets, self.ideal_rel, float(relevance_threshold), counts)
            self._cache[key] = counts
        return self._cache[key]

    def codes_in_order(self, ties: str) -> np.ndarray:
        """Relevance codes per ranked position under a tie rule ('input' reorders tie groups)."""
        if ties != "input":
            return self.rel_code
        if "code_input" not in self._cache:
            pos = layout.input_order_within_ties(self.offsets, self.tie_key, self.row)
            self._cache["code_input"] = self.rel_code[pos]
            self._cache["pos_input"] = pos
        return self._cache["code_input"]

    def positions_in_order(self, ties: str) -> np.ndarray:
        """Ranked positions in the order a tie rule presents them (identity but for 'input')."""
        if ties != "input":
            return np.arange(self.n_rows)
        self.codes_in_order("input")
        return self._cache["pos_input"]

    def labels(self, relevance_threshold: float = 1) -> np.ndarray:
        """Binary label per ranked row: relevance >= threshold (unjudged rows are 0)."""
        key = ("labels", float(relevance_threshold))
        if key not in self._cache:
            self._cache[key] = (self.rel_values >= relevance_threshold)[self.rel_code].astype(np.float64)
        return self._cache[key]

    def user_code(self, user_id) -> int:
        """Code of a user id (accepts the id or its string form)."""
        loc = self.user_ids.get_indexer([user_id])[0]
        if loc < 0:
            loc = pd.Index(self.user_ids.astype(str)).get_indexer([str(user_id)])[0]
        if loc < 0:
            raise MetricsError(f"unknown user id {user_id!r}")
        return int(loc)

    def user_list(self, user_id, ties: str = "trec") -> pd.DataFrame:
        """One user's ranked list: rank, item_id, score, relevance, judged."""
        u = self.user_code(user_id)
        a, b = self.offsets[u], self.offsets[u + 1]
        pos = self.positions_in_order(ties)[a:b]
        return pd.DataFrame({
            "rank": np.arange(1, b - a + 1),
            "item_id": self.items.run_ids(self.row[pos]),
            "score": self.score[pos],
            "relevance": self.rel[pos],
            "judged": self.judged[pos],
        })

    def user_relevant_items(self, user_id, relevance_threshold: float = 1) -> pd.DataFrame:
        """The user's ground-truth items with relevance >= threshold, most relevant first."""
        u = self.user_code(user_id)
        a, b = self.q_offsets[u], self.q_offsets[u + 1]
        rel = self.q_rel[a:b]
        keep = rel >= relevance_threshold
        df = pd.DataFrame({"item_id": self.items.truth_ids(np.arange(a, b)[keep]), "relevance": rel[keep]})
        return df.sort_values("relevance", ascending=False, kind="stable").reset_index(drop=True)


def prepare(run: pd.DataFrame, qrels: pd.DataFrame | None = None, *, name: str = "run") -> Ranked:
    """Encode, join and sort once.

    ``run`` has columns ``user_id, item_id, score`` (one row per recommended
    item) and, when ``qrels`` is None, ``relevance`` or ``label`` as well.
    ``qrels`` has ``user_id, item_id, relevance`` (or ``label``). Relevance is
    graded; negative judgments are non-relevant with gain 0. A duplicate
    (user, item) in the run is an error; in the ground truth an exact repeat is
    dropped and a conflicting one is an error.
    """
    with kernel_guard():
        return _prepare(run, qrels, name)


def _prepare(run, qrels, name) -> Ranked:
    _require(run, [USER, ITEM, SCORE], name)
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
    by_bytes, (r_ints, r_off, r_data), (q_ints, q_off, q_data) = _item_keys(run_items, truth_items, truth_from_run)

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
    dup, conflict = assemble.rank_and_join(
        balanced_chunks(offsets + q_offsets, n_threads()), offsets, q_offsets,
        run_rows.rows, run_rows.grouped, run_rows.start, score, r_ints, r_off, r_data,
        truth_rows.rows, truth_rows.grouped, truth_rows.start, q_rel_raw, q_code, q_ints, q_off, q_data, by_bytes,
        tie_key, row, local, local_rows, rel_code, ideal_rel, q_keep, kept)
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

    Integer grades spanning at most 254 values take one pass; other values are
    coded through :func:`numpy.unique` (uint8 codes up to 254 distinct values,
    int32 beyond).
    """
    codes = np.empty(rel.shape[0], dtype=np.uint8)
    lo, hi = assemble.relevance_codes(rel, codes)
    if not np.isnan(lo):
        return codes, np.r_[0.0, np.arange(lo, hi + 1.0)]
    values, inverse = np.unique(rel, return_inverse=True)
    dtype = np.uint8 if len(values) <= 254 else np.int32
    return (inverse + 1).astype(dtype), np.r_[0.0, values]


def _offsets(lengths: np.ndarray) -> np.ndarray:
    out = np.zeros(lengths.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=out[1:])
    return out


def _item_keys(run_items: pd.Series, truth_items: pd.Series, truth_from_run: bool):
    """How item ids are compared: ``(by_bytes, run (ints, off, data), truth (ints, off, data))``.

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
        return False, (a, _NO_INT, _NO_BYTES), (b, _NO_INT, _NO_BYTES)
    mixed = _kind(sa) != _kind(sb)
    a_off, a_data = _string_buffers(sa, mixed)
    b_off, b_data = (a_off, a_data) if truth_from_run else _string_buffers(sb, mixed)
    return True, (_NO_INT, a_off, a_data), (_NO_INT, b_off, b_data)


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


def segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of ``values[offsets[u]:offsets[u+1]]`` for every segment (empty segments give 0)."""
    cs = np.concatenate([[0], np.cumsum(values)])
    return cs[offsets[1:]] - cs[offsets[:-1]]
