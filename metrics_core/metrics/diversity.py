"""The diversity metrics over the top-k lists, one function each with one signature.

Each function takes the :class:`Lists` of one evaluation and a cutoff ``k``
(0 = whole list) and returns ``(value, per_user)``: the metric's value and its
values per user (aligned with ``Lists.users``), or None for a metric across
users. The registry's entries point at them (:attr:`metrics_core.metrics.registry.Metric.compute`).

Each ranked row enters the top k with probability ``top_k_inclusion`` (0 or
1, or c/m for a tie group cut by k under ``ties="average"``), which makes
every value below the exact expectation over the orders of tied scores.
ILS and ILD are computed by :mod:`metrics_core.kernels.diversity`, coverage,
personalization, entropy and Gini from the partials of
:mod:`metrics_core.metrics.reductions`, the popularity-based ones by :mod:`metrics_core.metrics.popularity`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from . import popularity, reductions
from ..diagnostics import Diagnostics
from ..errors import MetricsError
from .features import align_features
from ..kernels import diversity as div
from ..layout import Ranked, segment_sums


def catalogue_size(ranked: Ranked, item_features=None) -> int:
    """N, the catalogue of coverage, gini, MCC@k, accuracy@k and serendipity_pop: the distinct items of
    ``item_features`` when given, else every item seen in the run or the ground truth."""
    if item_features is not None:
        return int(len(pd.unique(item_features["item_id"])))
    return ranked.n_items_seen


def positions(ranked: Ranked, ties: str) -> np.ndarray:
    """Item codes in ranked order under the tie rule (the layout's order for 'average')."""
    return ranked.item[ranked.positions_in_order(ties)] if ties in ("input", "trec") else ranked.item


@dataclass
class Lists:
    """The top-k lists the diversity metrics read: the prepared data, the users they cover (codes:
    evaluated users, or every user with a list under ``beyond_users="listed"``), the resolved
    conventions (:class:`metrics_core.metrics.conventions.Settings`), the side tables and the diagnostics
    they report into. Shared work (top-k inclusion per k, features, catalogue) is kept here."""

    ranked: Ranked
    users: np.ndarray
    settings: Mapping
    item_features: pd.DataFrame | None
    interactions: pd.DataFrame | None
    diagnostics: Diagnostics
    _by_k: dict = field(default_factory=dict, repr=False)
    _shared: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.items = positions(self.ranked, self.settings["ties"])
        self.average = self.settings["ties"] == "average"
        self.threshold = float(self.settings["relevance_threshold"])

    def inclusion(self, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(incl, weight): each ranked row's probability of being in its user's top k, and the same
        for rows of ``users`` only (0 elsewhere); read-only, shared by the metrics at k."""
        if k not in self._by_k:
            incl = div.top_k_inclusion(self.ranked.offsets, self.ranked.tie_key, k, self.average)
            mask = np.zeros(self.ranked.n_users, dtype=bool)
            mask[self.users] = True
            self._by_k[k] = incl, np.where(np.repeat(mask, self.ranked.list_lengths), incl, 0.0)
            for shared in self._by_k[k]:
                shared.flags.writeable = False
        return self._by_k[k]

    def features(self, k: int):
        """The item features aligned with the item codes; on first use, the recommended items (of the
        top k) without features are counted in the diagnostics."""
        if "features" not in self._shared:
            features = align_features(self.item_features, self.ranked.item_ids)
            recommended = np.unique(self.items[self.inclusion(k)[1] > 0])
            self.diagnostics.items_missing_features = int((~features.known[recommended]).sum())
            self._shared["features"] = features
        return self._shared["features"]

    def catalogue(self) -> int:
        if "catalogue" not in self._shared:
            self._shared["catalogue"] = catalogue_size(self.ranked, self.item_features)
        return self._shared["catalogue"]

    @property
    def n_items(self) -> int:
        return len(self.ranked.item_ids)


def _mean(values: np.ndarray) -> tuple[float, np.ndarray]:
    """A per-user metric: the mean over users with a finite value, and the values."""
    return reductions.finalize_mean(reductions.mean_partial(values)), values


def _pairwise(lists: Lists, k: int, distance: bool) -> tuple[float, np.ndarray]:
    """ILS (similarities) or ILD (distances, ``ild_distance``: Hamming, or cosine ``1 - cos``) of the users'
    top k; ``short_lists="zero"`` scores a list without a pair 0 (users without a list stay out).

    The cosine distance of a pair is ``1 - s`` with ``s`` its cosine similarity, so a user's mean cosine
    distance is ``1 - ILS`` over the same pairs (also the expectation over tie orders: it is linear)."""
    features = lists.features(k)
    ranked = lists.ranked
    cosine = distance and lists.settings["ild_distance"] == "cosine"
    if cosine and features.kind != "cosine":
        raise MetricsError("ild_distance='cosine' needs numeric feature columns in item_features (tags have "
                           "no cosine here); use ild_distance='hamming' for tag sets")
    if cosine:
        values = 1.0 - ils_values(ranked, lists.items, k, lists.average, features)[lists.users]
    else:
        values = (ild_values if distance else ils_values)(ranked, lists.items, k, lists.average,
                                                         features)[lists.users]
    if lists.settings["short_lists"] == "zero":
        lengths = ranked.list_lengths[lists.users]
        # ILD (RecTools): only a top k of one item has no pair; ILS: also lists with < 2 featured items
        short = ((np.minimum(lengths, k) if k else lengths) < 2) if distance else np.isnan(values)
        values = np.where(short & (lengths > 0), 0.0, values)
    return _mean(values)


def ils(lists: Lists, k: int):
    """ILS@k: mean pairwise similarity (NaN for lists with fewer than two items with features)."""
    return _pairwise(lists, k, distance=False)


def ild(lists: Lists, k: int):
    """ILD@k: mean pairwise distance, Hamming or cosine (``ild_distance``; NaN for lists with fewer than
    two items with features)."""
    return _pairwise(lists, k, distance=True)


def novelty(lists: Lists, k: int):
    """novelty@k per user, or over every recommended row with ``novelty_average="rows"`` (no per-user values)."""
    info = self_information(lists.ranked, lists.threshold, lists.interactions, lists.settings["novelty_popularity"])
    incl = lists.inclusion(k)[0]
    if lists.settings["novelty_average"] == "rows":
        return novelty_over_rows(lists.ranked, lists.items, incl, info, k, lists.users), None
    return _mean(novelty_values(lists.ranked, lists.items, incl, info, k)[lists.users])


def coverage(lists: Lists, k: int):
    """Expected distinct items of the users' top k over the catalogue."""
    weight = lists.inclusion(k)[1]
    expected = reductions.coverage_expected_items(*reductions.coverage_partial(lists.items, weight, lists.n_items))
    return reductions.finalize_coverage(expected, lists.catalogue()), None


def entropy(lists: Lists, k: int):
    """Shannon entropy of the top-k slots per item."""
    return reductions.finalize_entropy(reductions.exposure_partial(lists.items, lists.inclusion(k)[1],
                                                                   lists.n_items)), None


def gini(lists: Lists, k: int):
    """Gini index of the top-k slots per catalogue item."""
    slots = reductions.exposure_partial(lists.items, lists.inclusion(k)[1], lists.n_items)
    return reductions.finalize_gini(slots, lists.catalogue()), None


def personalization(lists: Lists, k: int):
    """1 - the expected share of shared items between two users' top k."""
    users = personalization_users(lists.ranked, lists.users)
    partial = reductions.personalization_partial(lists.items, lists.inclusion(k)[1], lists.n_items)
    shared = reductions.personalization_shared_pairs(*partial)
    return reductions.finalize_personalization(shared, len(users), personalization_k(lists.ranked, users, k)), None


def _popularity_based(values_of):
    """A popularity-based per-user metric of :mod:`metrics_core.metrics.popularity` in the common signature."""
    def compute(lists: Lists, k: int):
        values = values_of(lists.ranked, lists.items, lists.inclusion(k)[0], k, ties=lists.settings["ties"],
                           relevance_threshold=lists.threshold, interactions=lists.interactions,
                           catalogue=lists.catalogue())
        return _mean(values[lists.users])
    compute.__doc__ = values_of.__doc__
    return compute


arp = _popularity_based(popularity.arp_values)
aplt = _popularity_based(popularity.aplt_values)
serendipity_pop = _popularity_based(popularity.serendipity_pop_values)
serendipity_sim = _popularity_based(popularity.serendipity_sim_values)


#: diversity metric name (:attr:`metrics_core.metrics.registry.Metric.name` of a ``diversity`` entry) -> its
#: function ``compute(lists, k) -> (value, per-user values or None)``
BY_METRIC = {
    "aplt": aplt,
    "arp": arp,
    "coverage": coverage,
    "entropy": entropy,
    "gini": gini,
    "ild": ild,
    "ils": ils,
    "novelty": novelty,
    "personalization": personalization,
    "serendipity_pop": serendipity_pop,
    "serendipity_sim": serendipity_sim,
}


def ils_values(ranked: Ranked, items: np.ndarray, k: int, average: bool, features) -> np.ndarray:
    """ILS@k of every user code (NaN for lists with fewer than two items with features)."""
    return div.ils(ranked.offsets, items, ranked.tie_key, k, average, features.known, *_similarity_args(features))


def ild_values(ranked: Ranked, items: np.ndarray, k: int, average: bool, features) -> np.ndarray:
    """ILD@k of every user code: mean pairwise Hamming distance (NaN for lists with fewer than two
    items with features)."""
    return div.ils(ranked.offsets, items, ranked.tie_key, k, average, features.known,
                   *_similarity_args(features, distance=True))


def novelty_values(ranked: Ranked, items: np.ndarray, incl: np.ndarray, info: np.ndarray, k: int) -> np.ndarray:
    """novelty@k of every user code: sum of P(row in top k) * info(item) over min(k, n) (NaN for empty lists)."""
    lengths = ranked.list_lengths if k == 0 else np.minimum(ranked.list_lengths, k)
    sums = segment_sums(incl * info[items], ranked.offsets)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lengths > 0, sums / lengths, np.nan)


def novelty_over_rows(ranked: Ranked, items: np.ndarray, incl: np.ndarray, info: np.ndarray, k: int,
                      codes: np.ndarray) -> float:
    """novelty@k averaged over every recommended row of the users ``codes`` (not per user first)."""
    lengths = ranked.list_lengths if k == 0 else np.minimum(ranked.list_lengths, k)
    sums = segment_sums(incl * info[items], ranked.offsets)
    rows = float(lengths[codes].sum())
    return float(sums[codes].sum() / rows) if rows > 0 else float("nan")


def personalization_users(ranked: Ranked, codes: np.ndarray) -> np.ndarray:
    """The users personalization compares: evaluated users with a non-empty list."""
    return codes[ranked.list_lengths[codes] > 0]


def personalization_k(ranked: Ranked, users: np.ndarray, k: int) -> int:
    """The list size of personalization: k, or the longest list without a cutoff."""
    return k if k > 0 else int(ranked.list_lengths[users].max(initial=0))


def _similarity_args(features, distance: bool = False):
    """(mode, feat_row, matrix, tag_start, tag_end, tags) for the ILS kernel (dummies for the unused mode):
    similarities, or with ``distance`` the Hamming distances of ILD (raw feature rows, or tag sets)."""
    none_i, none_f = np.zeros(1, dtype=np.int64), np.zeros((1, 1))
    if features.kind == "cosine":
        if distance:
            return 2, features.feat_row, features.raw, none_i, none_i, none_i
        return 0, features.feat_row, features.matrix, none_i, none_i, none_i
    return 3 if distance else 1, none_i, none_f, features.tag_start, features.tag_end, features.tags


def self_information(ranked: Ranked, relevance_threshold: float, interactions,
                     popularity: str = "users") -> np.ndarray:
    """-log2 of each item's popularity: share of users who interacted with it (``"users"``), or share of
    all interactions (``"interactions"``); from ``interactions``, else the relevant ground truth."""
    if interactions is None:
        positive = ranked.q_rel >= relevance_threshold
        users = np.repeat(np.arange(ranked.n_users), np.diff(ranked.q_offsets))[positive]
        items = ranked.q_item[positive]
        if popularity == "interactions":
            return div.self_information(np.bincount(items, minlength=len(ranked.item_ids)), len(items))
        n_users = len(np.unique(users))
        pairs = np.unique(users.astype(np.int64) * len(ranked.item_ids) + items)
        counts = np.bincount(pairs % len(ranked.item_ids), minlength=len(ranked.item_ids))
        return div.self_information(counts, n_users)
    if not isinstance(interactions, pd.DataFrame) or not {"user_id", "item_id"} <= set(interactions.columns):
        raise MetricsError("interactions must be a DataFrame with user_id and item_id columns")
    inter = interactions[["user_id", "item_id"]]
    if popularity == "users":
        inter = inter.drop_duplicates()
    ids = inter["item_id"]
    index = ranked.item_ids
    if pd.api.types.is_integer_dtype(ids.dtype) != pd.api.types.is_integer_dtype(index.dtype):
        ids, index = ids.astype(str), pd.Index(index.astype(str))
    code = index.get_indexer(ids)
    counts = np.bincount(code[code >= 0], minlength=len(ranked.item_ids))
    total = len(inter) if popularity == "interactions" else inter["user_id"].nunique()
    return div.self_information(counts, total)
