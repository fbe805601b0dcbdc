"""Item popularity and user history for the popularity-based beyond-accuracy metrics.

Popularity of an item = the number of distinct users who interacted with it,
counted over ``interactions`` (user_id, item_id; duplicate pairs count once),
or, without it, over the relevant pairs of the ground truth (as novelty).
Counts cover every item of the interactions, also those never ranked: the long
tail's 80% share and the popularity ranks are taken over all of them.

- ``arp``: the count itself; ``aplt``: 1 for an item of the long tail, every
  item outside the short head (the most popular items, taken by decreasing
  popularity while the items strictly more popular hold less than 80% of all
  interactions; items of equal popularity fall on the same side);
- ``serendipity_pop``: the dense popularity rank (1 = most popular, 0 = no interaction);
- ``serendipity_sim``: for each ranked row, 1 minus the mean co-occurrence
  cosine ``|U_i & U_j| / sqrt(|U_i| |U_j|)`` between its item and the items of
  the user's history (Microsoft Recommenders' ``user_item_serendipity``; an
  item without interactions has similarity 0; a user without history gets NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..kernels.serendipity import serendipity_pop
from ..layout import Ranked, segment_sums

HEAD_SHARE = 0.8


@dataclass
class Popularity:
    """Distinct interacting users per ranked item code (``counts``) and per other interacted item
    (``other_counts``), and the number of interacting users."""

    counts: np.ndarray
    other_counts: np.ndarray
    n_users: int

    @property
    def all_counts(self) -> np.ndarray:
        return np.concatenate([self.counts, self.other_counts])

    def long_tail(self) -> np.ndarray:
        """1.0 for ranked item codes in the long tail (see the module docstring), else 0.0."""
        counts = self.all_counts
        total = counts.sum()
        values, inverse = np.unique(counts, return_inverse=True)
        per_value = np.bincount(inverse, weights=counts, minlength=len(values))
        more_popular = total - np.cumsum(per_value)  # interactions of items strictly more popular
        head = (more_popular[inverse] < HEAD_SHARE * total) & (counts > 0)
        return (~head[: len(self.counts)]).astype(np.float64)

    def dense_rank(self) -> np.ndarray:
        """Dense popularity rank of the ranked item codes (1 = most popular; 0 = no interaction)."""
        counts = self.all_counts
        levels = np.unique(counts[counts > 0])[::-1]
        rank = np.searchsorted(-levels, -self.counts) + 1.0
        return np.where(self.counts > 0, rank, 0.0)


def _item_codes(ranked: Ranked, ids: pd.Series) -> np.ndarray:
    """Codes of item ids in ``ranked.item_ids``; ids it does not hold get codes after them."""
    index = ranked.item_ids
    if pd.api.types.is_integer_dtype(ids.dtype) != pd.api.types.is_integer_dtype(index.dtype):
        ids, index = ids.astype(str), pd.Index(index.astype(str))
    code = index.get_indexer(ids)
    unknown = code < 0
    if unknown.any():
        code[unknown] = len(index) + pd.factorize(ids[unknown])[0]
    return code


def interaction_pairs(ranked: Ranked, relevance_threshold: float, interactions) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (user label, item code) pairs: of ``interactions``, else of the relevant ground truth."""
    if interactions is None:
        positive = ranked.q_rel >= relevance_threshold
        users = np.repeat(np.arange(ranked.n_users), np.diff(ranked.q_offsets))[positive]
        pairs = pd.DataFrame({"u": users, "i": ranked.q_item[positive]}).drop_duplicates()
        return pairs["u"].to_numpy(), pairs["i"].to_numpy()
    if not isinstance(interactions, pd.DataFrame) or not {"user_id", "item_id"} <= set(interactions.columns):
        raise MetricsError("interactions must be a DataFrame with user_id and item_id columns")
    inter = interactions[["user_id", "item_id"]].drop_duplicates()
    return inter["user_id"].to_numpy(), _item_codes(ranked, inter["item_id"].reset_index(drop=True))


def popularity(ranked: Ranked, relevance_threshold: float, interactions) -> Popularity:
    """Interactions per item (and users with any). Without an ``interactions`` table it depends on
    the prepared data and the threshold only, and is kept with the prepared data (novelty, ARP,
    APLT and serendipity of one evaluation, and later evaluations, share it)."""
    if interactions is None:
        key = ("popularity", float(relevance_threshold))
        if key not in ranked._cache:
            ranked._cache[key] = _popularity(ranked, relevance_threshold, None)
        return ranked._cache[key]
    return _popularity(ranked, relevance_threshold, interactions)


def _popularity(ranked: Ranked, relevance_threshold: float, interactions) -> Popularity:
    users, items = interaction_pairs(ranked, relevance_threshold, interactions)
    n_ranked = len(ranked.item_ids)
    counts = np.bincount(items, minlength=n_ranked).astype(np.float64) if len(items) else np.zeros(n_ranked)
    return Popularity(counts[:n_ranked], counts[n_ranked:], int(len(pd.unique(users))))


def history_dissimilarity(ranked: Ranked, items: np.ndarray, rows: np.ndarray, interactions) -> np.ndarray:
    """For the ranked rows ``rows`` (items ``items[rows]``): 1 - mean cosine to the user's history (NaN
    for users without history). Sparse products: the users' history times the item-user matrix."""
    # imported here, not with the module: scipy.sparse takes a few tenths of a second to import, and only
    # serendipity against an interaction history needs it (the command line and the Overview do not)
    import scipy.sparse as sp

    users, codes = interaction_pairs(ranked, 0.0, interactions)
    n_all = max(int(codes.max(initial=-1)) + 1, len(ranked.item_ids))
    user_codes, user_ids = pd.factorize(pd.Series(users))
    x = sp.csr_matrix((np.ones(len(codes)), (user_codes, codes)), shape=(len(user_ids), n_all))
    count = np.asarray(x.sum(axis=0)).ravel()
    scale = sp.diags(np.where(count > 0, 1.0 / np.sqrt(np.maximum(count, 1.0)), 0.0))
    # history row of each ranked user (by id), if any
    ranked_ids = pd.Index(ranked.user_ids)
    if pd.api.types.is_integer_dtype(user_ids.dtype) != pd.api.types.is_integer_dtype(ranked_ids.dtype):
        user_ids, ranked_ids = pd.Index(user_ids.astype(str)), pd.Index(ranked_ids.astype(str))
    history_row = pd.Index(user_ids).get_indexer(ranked_ids)
    row_user = np.repeat(np.arange(ranked.n_users), ranked.list_lengths)[rows]
    out = np.full(len(rows), np.nan)
    has = history_row[row_user] >= 0
    if not has.any():
        return out
    needed = np.unique(history_row[row_user[has]])
    h = x[needed] @ scale  # the users' history, each item j weighted 1 / sqrt(|U_j|)
    sums = (h @ x.T) @ x @ scale  # sum_j |U_i & U_j| / sqrt(|U_i| |U_j|) per (user, item i)
    sizes = np.asarray(x[needed].sum(axis=1)).ravel()
    local = np.searchsorted(needed, history_row[row_user[has]])
    sim = np.asarray(sums[local, items[rows][has]]).ravel() / sizes[local]
    out[has] = 1.0 - sim
    return out


def _labels(ranked: Ranked, ties: str, relevance_threshold: float) -> np.ndarray:
    """1.0 for relevant ranked rows, in ranked order under the tie rule."""
    return ranked.labels(relevance_threshold)[ranked.positions_in_order(ties)]


def _mean_of_terms(ranked: Ranked, incl: np.ndarray, term: np.ndarray, k: int) -> np.ndarray:
    """Per user code: ``sum_rows incl * term / min(k, n)``, the exact expectation over tie orders when
    the term depends on the item only (NaN for users without a list, or with a NaN term: no history)."""
    lengths = ranked.list_lengths if k == 0 else np.minimum(ranked.list_lengths, k)
    unknown = np.isnan(term)  # rows of users without history (segment sums must not see a NaN)
    sums = segment_sums(np.where((incl > 0) & ~unknown, incl * term, 0.0), ranked.offsets)
    lacking = segment_sums(unknown.astype(np.float64), ranked.offsets) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((lengths > 0) & ~lacking, sums / lengths, np.nan)


# The per-user values of the popularity-based metrics at cutoff k for every user code, one signature:
# ``items`` are item codes in ranked order under the tie rule, ``incl`` each row's probability of being
# in its user's top k.

def arp_values(ranked: Ranked, items: np.ndarray, incl: np.ndarray, k: int, *, ties: str,
               relevance_threshold: float, interactions, catalogue: int) -> np.ndarray:
    """ARP@k: mean popularity of the top k."""
    term = popularity(ranked, relevance_threshold, interactions).counts[items]
    return _mean_of_terms(ranked, incl, term, k)


def aplt_values(ranked: Ranked, items: np.ndarray, incl: np.ndarray, k: int, *, ties: str,
                relevance_threshold: float, interactions, catalogue: int) -> np.ndarray:
    """APLT@k: share of the top k in the long tail."""
    term = popularity(ranked, relevance_threshold, interactions).long_tail()[items]
    return _mean_of_terms(ranked, incl, term, k)


def serendipity_pop_values(ranked: Ranked, items: np.ndarray, incl: np.ndarray, k: int, *, ties: str,
                           relevance_threshold: float, interactions, catalogue: int) -> np.ndarray:
    """RecTools' serendipity@k (its kernel takes the tie groups itself: the term depends on the rank)."""
    prank = popularity(ranked, relevance_threshold, interactions).dense_rank()
    return serendipity_pop(ranked.offsets, items, _labels(ranked, ties, relevance_threshold), ranked.tie_key,
                           int(k), ties == "average", prank, float(catalogue))


def serendipity_sim_values(ranked: Ranked, items: np.ndarray, incl: np.ndarray, k: int, *, ties: str,
                           relevance_threshold: float, interactions, catalogue: int) -> np.ndarray:
    """Microsoft Recommenders' serendipity@k: relevant items unlike the user's history (NaN without history)."""
    labels = _labels(ranked, ties, relevance_threshold)
    rows = np.flatnonzero(incl > 0)
    term = np.zeros(len(items))
    term[rows] = history_dissimilarity(ranked, items, rows, interactions) * labels[rows]
    return _mean_of_terms(ranked, incl, term, k)
