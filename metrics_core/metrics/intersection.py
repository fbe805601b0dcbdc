"""Overlap of one run's top-k lists with a reference run's: RecTools' ``Intersection``.

``intersection@k`` of a user is the share of the run's top k items that are also in the
reference run's top ``reference_k`` items of that user (``|A ∩ B| / |A|``, ``|A| = min(k,
list length)``). It is computed for every user with a list in ``run``; a user the reference
does not list scores 0; users only in the reference are not counted. The mean over users is
RecTools' ``Intersection(k, ref_k).calc(reco, ref_reco)``.

It reads two runs, so it is a function of its own and not a metric of ``mc.evaluate`` (whose
metrics read one run and its ground truth). The order of each list is score descending, ties
broken by a deterministic rule of :mod:`metrics_core.metrics.conventions` (``input``: the file's row
order, as RecTools' ranks; ``trec``; ``score_id``): the expectation over tie orders
(``average``) is not offered.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..frames import as_pandas
from ..layout import Ranked, prepare
from .registry import MAX_K

#: tie rules with one order per list (the overlap of two lists is not averaged over tie orders)
TIES = ("input", "trec", "score_id")


def _k(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= MAX_K:
        raise MetricsError(f"{what} must be a whole number from 1 to {MAX_K}; got {value!r}")
    return int(value)


def _ranked(run, what: str) -> Ranked:
    """``run`` prepared (a prepared run as it is)."""
    if isinstance(run, Ranked):
        return run
    table = as_pandas(run, what)
    if not isinstance(table, pd.DataFrame):
        raise MetricsError(f"{what} must be a table with user_id, item_id and score columns (or a prepared "
                           f"run); got {type(run).__name__}")
    # the run's own checks (columns, numeric scores, duplicate pairs); the relevance column is not read
    return prepare(table.assign(relevance=0), None, name=what)


def _top(run: Ranked, k: int, ties: str) -> tuple[np.ndarray, np.ndarray]:
    """``(user codes, item codes)`` of every user's top k under ``ties`` (users with a list only),
    users in code order: codes into ``run.user_ids`` and ``run.item_ids``."""
    order = run.positions_in_order(ties)
    lengths = run.list_lengths
    starts = np.repeat(run.offsets[:-1], lengths)
    rank = np.arange(run.n_rows) - starts  # 0-based rank of each ranked position within its user
    keep = rank < k
    return np.repeat(np.arange(run.n_users), lengths)[keep], run.item[order][keep]


def _comparable(a: pd.Series, b: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Ids of two runs as one kind: as strings when one run's ids are whole numbers and the other's not."""
    if pd.api.types.is_integer_dtype(a.dtype) != pd.api.types.is_integer_dtype(b.dtype):
        return a.astype(str), b.astype(str)
    return a, b


def _positions_in(ids: pd.Index, reference_ids: pd.Index) -> np.ndarray:
    """The position of each of ``ids`` among ``reference_ids`` (both unique; -1: absent), the
    ids compared as text when one side's are whole numbers and the other's not."""
    mine, ref = _comparable(pd.Series(ids), pd.Series(reference_ids))
    return pd.Index(ref).get_indexer(pd.Index(mine))


def intersection_per_user(run, reference, k: int, reference_k: int | None = None,
                          ties: str = "input") -> pd.Series:
    """``intersection@k`` of every user with a list in ``run`` (index ``user_id``): the share of its
    top ``k`` items in ``reference``'s top ``reference_k`` (default ``k``) of the same user.

    ``run`` and ``reference`` are runs (``user_id, item_id, score``; any table kind, or a prepared
    :class:`Ranked`); ``ties`` orders tied scores (``input``, ``trec`` or ``score_id``).

    Parameters
    ----------
    run, reference : DataFrame or Ranked
        Two runs, ``user_id, item_id, score``.
    k : int
        The cutoff of ``run``'s lists.
    reference_k : int, optional
        The cutoff of ``reference``'s lists (default ``k``).
    ties : {"input", "trec", "score_id"}
        How tied scores are ordered.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "c", "a", "c"],
    ...                     "score": [0.9, 0.8, 0.1, 0.7, 0.6]})
    >>> reference = pd.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["b", "a", "z"], "score": [2, 1, 1]})
    >>> mc.intersection_per_user(run, reference, k=2).to_dict()
    {'u1': 1.0, 'u2': 0.0}
    """
    k = _k(k, "k")
    reference_k = k if reference_k is None else _k(reference_k, "reference_k")
    if ties not in TIES:
        raise MetricsError(f"intersection needs one order per list: ties must be one of {', '.join(TIES)}; "
                           f"got {ties!r}")
    run, reference = _ranked(run, "run"), _ranked(reference, "reference run")
    users, items = _top(run, k, ties)
    ref_users, ref_items = _top(reference, reference_k, ties)
    # the items of the reference's top lists, numbered 0..n-1, and each run top item's number (-1: none)
    ref_listed, ref_number = np.unique(ref_items, return_inverse=True)
    listed, number = np.unique(items, return_inverse=True)
    item_at = _positions_in(run.item_ids[listed], reference.item_ids[ref_listed])[number]
    user_at = _positions_in(run.user_ids, reference.user_ids)[users]
    # each (user, item) pair as one number: user x items + item, in the reference's numbering
    n_items = max(len(ref_listed), 1)
    pair = np.where((user_at >= 0) & (item_at >= 0), user_at.astype(np.int64) * n_items + item_at, -1)
    shared = np.isin(pair, ref_users.astype(np.int64) * n_items + ref_number)
    top = np.bincount(users, minlength=run.n_users)
    found = np.bincount(users, weights=shared, minlength=run.n_users)
    has_list = top > 0
    index = pd.Index(run.user_ids[has_list], name="user_id")
    return pd.Series(found[has_list] / top[has_list], index=index, dtype=np.float64, name=f"intersection@{k}")


def intersection(run, reference, k: int, reference_k: int | None = None, ties: str = "input") -> float:
    """Mean of :func:`intersection_per_user` over the users with a list in ``run`` (RecTools'
    ``Intersection(k=k, ref_k=reference_k).calc(reco, ref_reco)``).

    Parameters
    ----------
    run, reference : DataFrame or Ranked
        Two runs, ``user_id, item_id, score``.
    k : int
        The cutoff of ``run``'s lists.
    reference_k : int, optional
        The cutoff of ``reference``'s lists (default ``k``).
    ties : {"input", "trec", "score_id"}
        How tied scores are ordered.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> run = pd.DataFrame({"user_id": ["u1", "u1", "u1", "u2", "u2"], "item_id": ["a", "b", "c", "a", "c"],
    ...                     "score": [0.9, 0.8, 0.1, 0.7, 0.6]})
    >>> reference = pd.DataFrame({"user_id": ["u1", "u1", "u2"], "item_id": ["b", "a", "z"], "score": [2, 1, 1]})
    >>> mc.intersection(run, reference, k=2)  # u1: {a, b} all in the reference's top 2; u2: none
    0.5
    """
    per_user = intersection_per_user(run, reference, k, reference_k, ties)
    return float(per_user.mean()) if len(per_user) else float("nan")
