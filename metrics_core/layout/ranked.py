"""The ranked layout: a run joined with its ground truth and sorted once per user.

:class:`Ranked` is what every metric reads (CSR arrays, one slice per user);
:class:`InputRows` and :class:`ItemCodes` give input row numbers and item
codes on first use, since most metrics never need them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..encode import encode_pair
from ..errors import MetricsError
from . import kernels as layout_kernels

ITEM = "item_id"
_NO_INT = np.zeros(1, dtype=np.int64)  # placeholder for the permutation of grouped input


class _Lazy:
    """A value built on first use under a lock; picklable (the lock is made anew on load)."""

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()


class InputRows(_Lazy):
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
        layout_kernels.gather_ranked(values, self._offsets, self._start, self._local,
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


class ItemCodes(_Lazy):
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
            layout_kernels.count_at_least(self.q_offsets, self.ideal_rel, float(relevance_threshold), counts)
            self._cache[key] = counts
        return self._cache[key]

    @property
    def has_ties(self) -> bool:
        """Whether any user's list holds two neighbours of equal score (a tie group of two or more)."""
        if "has_ties" not in self._cache:
            same = self.tie_key[1:] == self.tie_key[:-1]
            starts = self.offsets[1:-1]  # no tie across two users' lists
            same[starts[(starts > 0) & (starts < self.n_rows)] - 1] = False
            self._cache["has_ties"] = bool(same.any())
        return self._cache["has_ties"]

    def codes_in_order(self, ties: str) -> np.ndarray:
        """Relevance codes per ranked position under a tie rule ('input' reorders tie groups, 'trec'
        the scores equal as 32-bit floats)."""
        if ties not in ("input", "trec"):
            return self.rel_code
        key = f"code_{ties}"
        if key not in self._cache:
            pos = self._reordered(ties)
            self._cache[key] = self.rel_code if pos is None else self.rel_code[pos]
        return self._cache[key]

    def positions_in_order(self, ties: str) -> np.ndarray:
        """Ranked positions in the order a tie rule presents them (identity but for 'input' and 'trec')."""
        pos = self._reordered(ties) if ties in ("input", "trec") else None
        return np.arange(self.n_rows) if pos is None else pos

    def _reordered(self, ties: str) -> np.ndarray | None:
        """The permutation of ranked positions of rule ``ties``, or None where it is the identity."""
        key = f"pos_{ties}"
        if key not in self._cache:
            if ties == "input":
                self._cache[key] = layout_kernels.input_order_within_ties(self.offsets, self.tie_key, self.row)
            else:
                self._cache[key] = self._trec_order()
        return self._cache[key]

    def _trec_order(self) -> np.ndarray | None:
        """trec_eval's order: its results file keeps each score as a C ``float``, so scores equal as
        32-bit floats are tied there and ordered by docno descending (``strcmp``). The layout sorts by the
        64-bit score, ties by item id descending as strings; rounding to float32 is monotone, so the
        scores one float32 value holds are adjacent, and only such runs holding more than one 64-bit
        score need their rows re-sorted by item id (None when there is none: the layout's order)."""
        score = self.score
        n = score.shape[0]
        if n < 2 or not layout_kernels.float32_merges(self.offsets, score):
            return None
        first = np.zeros(n, dtype=bool)  # first ranked row of each user
        first[self.offsets[:-1][self.list_lengths > 0]] = True
        s32 = score.astype(np.float32)
        same32 = ~first[1:] & (s32[1:] == s32[:-1])
        merged = same32 & (score[1:] != score[:-1])  # neighbours tied only in float32
        if not merged.any():
            return None
        group = np.concatenate([[0], np.cumsum(~same32)])  # runs of equal float32 scores within a user
        starts = np.flatnonzero(np.concatenate([[True], ~same32]))
        ends = np.append(starts[1:], n)
        pos = np.arange(n)
        for g in np.unique(group[1:][merged]):
            a, b = starts[g], ends[g]
            ids = self.items.run_ids(self.row[a:b])
            keys = [str(i).encode("utf-8") for i in ids]  # as the layout: ids compared as byte strings
            order = sorted(range(b - a), key=keys.__getitem__, reverse=True)
            pos[a:b] = a + np.asarray(order)
        return pos

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


def segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Sum of ``values[offsets[u]:offsets[u+1]]`` for every segment (empty segments give 0)."""
    cs = np.concatenate([[0], np.cumsum(values)])
    return cs[offsets[1:]] - cs[offsets[:-1]]
