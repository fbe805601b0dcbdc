"""Input diagnostics returned with every evaluation and printed as warnings.

They describe how the run and the ground truth fit together, so that a
surprising number can be traced to the data: users only on one side, users
without relevant items, tied scores inside the top K, short lists, unjudged
items in the top K, items without features, users skipped by GAUC.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from .kernels._jit import nb, njit


@njit(parallel=True, work="rel_code")
def top_k_facts(offsets, tie_key, rel_code, k):
    """Per user: tied scores inside the top k, list shorter than k, unjudged rows (code 0) in the top k."""
    n_users = offsets.shape[0] - 1
    tied = np.zeros(n_users, dtype=np.bool_)
    short = np.zeros(n_users, dtype=np.bool_)
    unjudged = np.zeros(n_users, dtype=np.int64)
    for u in nb.prange(n_users):
        a = offsets[u]
        n = offsets[u + 1] - a
        K = min(k, n)
        short[u] = n < k
        missing = 0
        for j in range(K):
            if rel_code[a + j] == 0:
                missing += 1
        unjudged[u] = missing
        for j in range(1, K):
            if tie_key[a + j] == tie_key[a + j - 1]:
                tied[u] = True
                break
    return tied, short, unjudged


@dataclass
class Diagnostics:
    """Counts and shares describing the evaluated data (see ``warnings()``)."""

    k: int
    n_users_evaluated: int
    n_users_run: int
    n_users_truth: int
    users_only_in_run: int
    users_only_in_truth: int
    users_without_relevant: int
    share_users_ties_in_top_k: float
    users_short_lists: int
    share_unjudged_in_top_k: float | None
    items_missing_features: int | None = None
    gauc_users_skipped: int | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON-serialisable dict of every field."""
        return asdict(self)

    def warnings(self) -> list[str]:
        """One plain sentence per noteworthy fact (empty when the data fit perfectly)."""
        w = []
        k = self.k
        if self.users_only_in_run:
            w.append(f"{self.users_only_in_run} user(s) appear only in the run (no ground truth): excluded")
        if self.users_only_in_truth:
            w.append(f"{self.users_only_in_truth} user(s) of the ground truth are missing from the run: "
                     "they score 0 if they have relevant items, unless missing_users=\"exclude\" leaves them out")
        if self.users_without_relevant:
            w.append(f"{self.users_without_relevant} user(s) have no relevant item in the ground truth")
        if self.share_users_ties_in_top_k > 0:
            w.append(f"{self.share_users_ties_in_top_k:.1%} of evaluated users have tied scores in their top {k}")
        if self.users_short_lists:
            w.append(f"{self.users_short_lists} evaluated user(s) have fewer than {k} recommended items")
        if self.share_unjudged_in_top_k:
            w.append(f"{self.share_unjudged_in_top_k:.1%} of the items in the top {k} are unjudged (counted non-relevant)")
        if self.items_missing_features:
            w.append(f"{self.items_missing_features} recommended item(s) have no entry in the item features")
        if self.gauc_users_skipped:
            w.append(f"GAUC skipped {self.gauc_users_skipped} user(s) whose rows hold a single class")
        return w + list(self.notes)


def diagnose(ranked, evaluated: np.ndarray, n_rel: np.ndarray, k: int) -> Diagnostics:
    """Diagnostics for the users of ``ranked`` (``evaluated`` mask, cutoff ``k``)."""
    in_run, in_truth = ranked.in_run, ranked.in_truth
    tied, short, unjudged = top_k_facts(ranked.offsets, ranked.tie_key, ranked.rel_code, k)
    ev_run = evaluated & in_run
    n_ev = int(evaluated.sum())
    top_rows = np.minimum(ranked.list_lengths, k)[ev_run].sum()
    share_unjudged = None
    if not ranked.truth_from_run:
        share_unjudged = float(unjudged[ev_run].sum() / top_rows) if top_rows else 0.0
    return Diagnostics(
        k=int(k),
        n_users_evaluated=n_ev,
        n_users_run=int(in_run.sum()),
        n_users_truth=int(in_truth.sum()),
        users_only_in_run=int((in_run & ~in_truth).sum()),
        users_only_in_truth=int((in_truth & ~in_run).sum()),
        users_without_relevant=int((in_truth & (n_rel == 0)).sum()),
        share_users_ties_in_top_k=float(tied[evaluated].mean()) if n_ev else 0.0,
        users_short_lists=int(short[ev_run].sum()),
        share_unjudged_in_top_k=share_unjudged,
    )


def id_writing_sentence(twins: tuple[int, str, str] | None, unit: str, run_name: str, truth_name: str,
                        choice: str = "--whole-number-ids") -> str | None:
    """The one line that explains ids of the run matching none of the ground truth only because a whole
    number is written differently (``twins`` from :func:`metrics_core.encode.whole_number_twins`);
    ``choice``: where the user makes the other choice (the command line's flag, the dashboard's control)."""
    if twins is None:
        return None
    from .io.quote import quoted

    count, mine, theirs = twins
    return (f"{run_name}: {count:,} {unit} id(s) match no id of {truth_name} but write the same whole number as "
            f"one of its ids ({quoted(mine, 40)} against {quoted(theirs, 40)}); ids are kept exactly as written, "
            f"so they are different ids; reading the files with whole numbers as one id ({choice}) "
            f"joins them")


def id_writing_notes(ranked, run_name: str = "the run", truth_name: str = "the ground truth",
                     choice: str = "--whole-number-ids") -> list[str]:
    """:func:`id_writing_sentence` for the users and the items of a prepared run (empty when its
    ground truth came from the run itself or every id joins as written)."""
    from .encode import whole_number_twins

    if ranked.truth_from_run:
        return []
    users = ranked.user_ids
    out = [id_writing_sentence(whole_number_twins(users[ranked.in_run], users[ranked.in_truth]), "user",
                               run_name, truth_name, choice),
           id_writing_sentence(whole_number_twins(ranked.items._run_items, ranked.items._truth_items), "item",
                               run_name, truth_name, choice)]
    return [line for line in out if line]

