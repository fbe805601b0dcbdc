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

from .encode import encode_pair, string_order
from .errors import MetricsError
from .kernels import layout
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
    if pd.api.types.is_numeric_dtype(s.dtype) and not pd.api.types.is_bool_dtype(s.dtype) and not s.hasnans:
        values = np.ascontiguousarray(s.to_numpy(dtype=np.float64))
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


class ItemCodes:
    """Item codes of a Ranked, computed when first needed.

    Ranking and classification metrics never need global item codes (the ground
    truth is joined per user); diversity metrics, coverage and exports do. The
    codes are then built once from the original columns: ``get()`` returns
    ``(item_ids, run codes in ranked order, truth codes in CSR order)``.
    """

    def __init__(self, run_items: pd.Series, run_rows: np.ndarray, truth_items: pd.Series, truth_rows: np.ndarray,
                 codes=None):
        self._run_items, self._run_rows = run_items, run_rows
        self._truth_items, self._truth_rows = truth_items, truth_rows
        self._codes = codes
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
                    self._codes = (uniques, run_codes[self._run_rows], truth_codes[self._truth_rows])
        return self._codes

    def run_ids(self, rows: np.ndarray) -> np.ndarray:
        """Original item ids of run rows (input row numbers)."""
        return np.asarray(self._run_items.iloc[rows].to_numpy(dtype=object))

    def truth_ids(self, positions: np.ndarray) -> np.ndarray:
        """Original item ids of ground-truth rows (CSR positions)."""
        return np.asarray(self._truth_items.iloc[self._truth_rows[positions]].to_numpy(dtype=object))


@dataclass(frozen=True, eq=False)
class Ranked:
    """A run joined with its ground truth and sorted once per user (CSR layout).

    Users are coded ``0..n_users-1`` (``user_ids[code]`` is the original id);
    ``offsets[u]:offsets[u+1]`` index user ``u``'s ranked rows in ``item``,
    ``score``, ``rel``, ``judged`` and ``row`` (the input row number), sorted by
    score descending with ties by item id string descending. The ground truth is
    a second CSR (``q_offsets``, ``q_item``, ``q_rel``) and ``ideal_rel`` holds
    each user's judged relevances sorted descending.
    """

    user_ids: pd.Index
    items: "ItemCodes"
    offsets: np.ndarray
    score: np.ndarray
    rel: np.ndarray
    judged: np.ndarray
    row: np.ndarray
    q_offsets: np.ndarray
    q_rel: np.ndarray
    ideal_rel: np.ndarray
    in_truth: np.ndarray
    truth_from_run: bool
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

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
        return int(self.score.shape[0])

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
            hit = (self.q_rel >= relevance_threshold).astype(np.float64)
            self._cache[key] = segment_sums(hit, self.q_offsets)
        return self._cache[key]

    def rel_in_order(self, ties: str) -> np.ndarray:
        """Relevance per ranked position under a tie rule ('input' reorders tie groups)."""
        if ties != "input":
            return self.rel
        if "rel_input" not in self._cache:
            pos = layout.input_order_within_ties(self.offsets, self.score, self.row)
            self._cache["rel_input"] = self.rel[pos]
            self._cache["pos_input"] = pos
        return self._cache["rel_input"]

    def positions_in_order(self, ties: str) -> np.ndarray:
        """Ranked positions in the order a tie rule presents them (identity but for 'input')."""
        if ties != "input":
            return np.arange(self.n_rows)
        self.rel_in_order("input")
        return self._cache["pos_input"]

    def labels(self, relevance_threshold: float = 1) -> np.ndarray:
        """Binary label per ranked row: relevance >= threshold (unjudged rows are 0)."""
        key = ("labels", float(relevance_threshold))
        if key not in self._cache:
            self._cache[key] = (self.rel >= relevance_threshold).astype(np.float64)
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
        u_run, _, users = encode_pair(run[USER], what=f"{name} column {USER}")
        u_q = u_run
    else:
        u_run, u_q, users = encode_pair(run[USER], truth[USER], what=f"column {USER}")
    n_users = len(users)
    threads = n_threads()
    run_items, truth_items = run[ITEM], truth[ITEM]
    q_offsets, q_rows = _group(u_q, n_users)
    offsets, perm = _group(u_run, n_users)
    _, tied = layout.sort_within_users(offsets, perm, score, threads)

    strings = _string_buffers(run_items, truth_items, truth_from_run)
    if strings is not None:
        # string ids: join per user by hash, confirmed byte by byte; no global item table
        (r_off, r_data), (q_off, q_data) = strings
        r_hash = kstr.hash_strings(r_off, r_data)
        q_hash = r_hash if truth_from_run else kstr.hash_strings(q_off, q_data)
        kstr.sort_rows_by_hash(q_offsets, q_rows, q_hash)
        keep, conflict = kstr.truth_conflicts(q_offsets, q_rows, q_hash, q_off, q_data, q_rel_raw)
        if conflict >= 0:
            _conflict_error(truth, truth_name, int(q_rows[conflict]))
        q_offsets, q_rows = _drop(q_offsets, q_rows, keep)
        q_rel = q_rel_raw[q_rows]
        if tied:  # trec_eval's tie rule: item id descending as byte strings
            layout.order_ties(offsets, perm, score, True, _NO_INT, _NO_INT, r_off, r_data)
        rel, judged, dup = kstr.join_relevance_hashed(offsets, perm, r_hash, r_off, r_data, q_offsets, q_rows,
                                                      q_hash, q_off, q_data, q_rel, threads)
        items = ItemCodes(run_items, perm, truth_items, q_rows)
    else:
        if truth_from_run:
            i_run, _, item_ids = encode_pair(run_items, what=f"{name} column {ITEM}")
            i_q = i_run
        else:
            i_run, i_q, item_ids = encode_pair(run_items, truth_items, what=f"column {ITEM}")
        n_items = len(item_ids)
        keep, conflict = layout.qrels_conflicts(q_offsets, i_q[q_rows], q_rel_raw[q_rows], n_items, threads)
        if conflict >= 0:
            _conflict_error(truth, truth_name, int(q_rows[conflict]))
        q_offsets, q_rows = _drop(q_offsets, q_rows, keep)
        q_rel = q_rel_raw[q_rows]
        if tied:  # trec_eval's tie rule: item id descending as strings (key computed only when needed)
            layout.order_ties(offsets, perm, score, False, i_run, string_order(item_ids), _NO_INT, _NO_BYTES)
        item = i_run if layout.is_identity(perm) else i_run[perm]
        q_item = i_q[q_rows]
        rel, judged, dup = layout.join_relevance(offsets, item, q_offsets, q_item, q_rel, n_items, threads)
        items = ItemCodes(run_items, perm, truth_items, q_rows, codes=(item_ids, item, q_item))
    if dup >= 0:
        row = int(perm[dup])
        raise MetricsError(
            f"{name}: user {run[USER].iloc[row]!r} recommends item {run_items.iloc[row]!r} more than once "
            f"(row {row + 1}); keep one row per (user, item)"
        )
    ranked_score = score if layout.is_identity(perm) else score[perm]
    in_truth = np.diff(q_offsets) > 0
    ideal_rel = layout.sort_desc_within_users(q_offsets, q_rel)
    return Ranked(
        user_ids=users, items=items, offsets=offsets, score=ranked_score, rel=rel, judged=judged, row=perm,
        q_offsets=q_offsets, q_rel=q_rel, ideal_rel=ideal_rel, in_truth=in_truth, truth_from_run=truth_from_run,
    )


def _string_buffers(run_items: pd.Series, truth_items: pd.Series, truth_from_run: bool):
    """Arrow buffers of both item columns when both hold strings (else None: codes are used)."""
    def buffers(s: pd.Series):
        if not (pd.api.types.is_string_dtype(s.dtype) and hasattr(s.array, "__arrow_array__")):
            return None
        if s.isna().any():
            return None  # encode_pair reports the empty ids
        try:
            return kstr.arrow_buffers(s.array.__arrow_array__())
        except TypeError:
            return None
    run_buf = buffers(run_items)
    if run_buf is None:
        return None
    truth_buf = run_buf if truth_from_run else buffers(truth_items)
    if truth_buf is None:
        return None
    return run_buf, truth_buf


def _drop(q_offsets: np.ndarray, q_rows: np.ndarray, keep: np.ndarray):
    """Remove dropped ground-truth positions and recompute the CSR offsets."""
    if keep.all():
        return q_offsets, q_rows
    kept = np.concatenate([[0], np.cumsum(segment_sums(keep.astype(np.int64), q_offsets))])
    return kept, q_rows[keep]


def _conflict_error(truth: pd.DataFrame, truth_name: str, row: int):
    raise MetricsError(
        f"{truth_name}: user {truth[USER].iloc[row]!r} item {truth[ITEM].iloc[row]!r} is judged twice "
        f"with different relevance (row {row + 1}); keep one judgment per (user, item)"
    )


def segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of ``values[offsets[u]:offsets[u+1]]`` for every segment (empty segments give 0)."""
    cs = np.concatenate([[0], np.cumsum(values)])
    return cs[offsets[1:]] - cs[offsets[:-1]]


def _group(user_codes: np.ndarray, n_users: int):
    """CSR offsets and row permutation grouping rows by user (no work if already grouped)."""
    if user_codes.shape[0] == 0 or bool(np.all(user_codes[1:] >= user_codes[:-1])):
        return layout.offsets_from_sorted(user_codes, n_users), np.arange(user_codes.shape[0], dtype=np.int64)
    return layout.group_by_user(user_codes, n_users)
