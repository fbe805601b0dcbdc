"""Overlap of one run's top-k lists with a reference run's: RecTools' ``Intersection``.

``intersection@k`` of a user is the share of the run's top k items that are also in the
reference run's top ``reference_k`` items of that user (``|A ∩ B| / |A|``, ``|A| = min(k,
list length)``). It is computed for every user with a list in ``run``; a user the reference
does not list scores 0; users only in the reference are not counted. The mean over users is
RecTools' ``Intersection(k, ref_k).calc(reco, ref_reco)``.

It reads two runs, so it is a function of its own and not a metric of ``mc.evaluate`` (whose
metrics read one run and its ground truth). The order of each list is score descending, ties
broken by a deterministic rule of :mod:`metrics_core.conventions` (``input``: the file's row
order, as RecTools' ranks; ``trec``; ``score_id``): the expectation over tie orders
(``average``) is not offered.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import MetricsError
from .frames import as_pandas
from .layout import Ranked, prepare
from .registry import MAX_K

#: tie rules with one order per list (the overlap of two lists is not averaged over tie orders)
TIES = ("input", "trec", "score_id")


def _k(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_K:
        raise MetricsError(f"{what} must be a whole number from 1 to {MAX_K}; got {value!r}")
    return int(value)


def _top(run, k: int, ties: str, what: str) -> pd.DataFrame:
    """``user_id, item_id`` of every user's top k under ``ties`` (users with a list only)."""
    if not isinstance(run, Ranked):
        table = as_pandas(run, what)
        if not isinstance(table, pd.DataFrame):
            raise MetricsError(f"{what} must be a table with user_id, item_id and score columns (or a prepared "
                               f"run); got {type(run).__name__}")
        # the run's own checks (columns, numeric scores, duplicate pairs); the relevance column is not read
        run = prepare(table.assign(relevance=0), None, name=what)
    order = run.positions_in_order(ties)
    lengths = run.list_lengths
    starts = np.repeat(run.offsets[:-1], lengths)
    rank = np.arange(run.n_rows) - starts  # 0-based rank of each ranked position within its user
    keep = rank < k
    users = np.repeat(np.arange(run.n_users), lengths)[keep]
    items = run.item[order][keep]
    return pd.DataFrame({"user_id": run.user_ids[users], "item_id": run.item_ids[items]})


def _comparable(a: pd.Series, b: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Ids of two runs as one kind: as strings when one run's ids are whole numbers and the other's not."""
    if pd.api.types.is_integer_dtype(a.dtype) != pd.api.types.is_integer_dtype(b.dtype):
        return a.astype(str), b.astype(str)
    return a, b


def intersection_per_user(run, reference, k: int, reference_k: int | None = None,
                          ties: str = "input") -> pd.Series:
    """``intersection@k`` of every user with a list in ``run`` (index ``user_id``): the share of its
    top ``k`` items in ``reference``'s top ``reference_k`` (default ``k``) of the same user.

    ``run`` and ``reference`` are runs (``user_id, item_id, score``; any table kind, or a prepared
    :class:`Ranked`); ``ties`` orders tied scores (``input``, ``trec`` or ``score_id``).
    """
    k = _k(k, "k")
    reference_k = k if reference_k is None else _k(reference_k, "reference_k")
    if ties not in TIES:
        raise MetricsError(f"intersection needs one order per list: ties must be one of {', '.join(TIES)}; "
                           f"got {ties!r}")
    mine = _top(run, k, ties, "run")
    ref = _top(reference, reference_k, ties, "reference run")
    mine_users, ref_users = _comparable(mine["user_id"], ref["user_id"])
    mine_items, ref_items = _comparable(mine["item_id"], ref["item_id"])
    ref_pairs = pd.MultiIndex.from_arrays([ref_users, ref_items])
    shared = pd.MultiIndex.from_arrays([mine_users, mine_items]).isin(ref_pairs)
    counts = pd.DataFrame({"user_id": mine["user_id"], "shared": shared}).groupby("user_id", sort=False)["shared"]
    out = (counts.sum() / counts.size()).astype(np.float64)
    return out.rename(f"intersection@{k}")


def intersection(run, reference, k: int, reference_k: int | None = None, ties: str = "input") -> float:
    """Mean of :func:`intersection_per_user` over the users with a list in ``run`` (RecTools'
    ``Intersection(k=k, ref_k=reference_k).calc(reco, ref_reco)``)."""
    per_user = intersection_per_user(run, reference, k, reference_k, ties)
    return float(per_user.mean()) if len(per_user) else float("nan")
