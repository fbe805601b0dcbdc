"""Metrics of one ranked list, for worked examples and quick checks.

``relevances`` / ``hits`` are given in rank order (rank 1 first). They run the
same compiled kernel as :func:`metrics_core.evaluate` on a one-user layout.
"""

from __future__ import annotations

import numpy as np

from .metrics import conventions
from .metrics.kernel_settings import check_relevance, kernel_options, relevance_views
from .errors import MetricsError
from .metrics.registry import MAX_K
from .kernels.ranking import FAMILIES, FAMILY_INDEX, KERNEL_FAMILIES, discount_table, one_list, ranking_families


def _finite(values, what: str) -> np.ndarray:
    """A 1-D float64 array of finite numbers; MetricsError otherwise."""
    try:
        out = np.ascontiguousarray(np.asarray(values, dtype=np.float64).ravel())
    except (TypeError, ValueError):
        raise MetricsError(f"{what} must be numbers in rank order, e.g. [3, 2, 0, 1]; got {str(values)[:80]}") from None
    if not np.isfinite(out).all():
        raise MetricsError(f"{what} must be finite numbers")
    return out


def _one_list(relevances, k, *, gain="linear", ideal_relevances=None, n_relevant=None,
              ap_norm="relevant", threshold=1.0) -> dict:
    """Every kernel family of one list at cutoff ``k`` (None: the whole list), as :func:`metrics_core.evaluate`
    computes it for one user: each position its own tie group, the ideal the list re-sorted unless
    ``ideal_relevances`` is given, R the relevant items of the ideal unless ``n_relevant`` is given."""
    rel = _finite(relevances, "relevances")
    if k is not None and (not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not 1 <= k <= MAX_K):
        raise MetricsError(f"k must be a whole number from 1 to 2^62, got {k!r}")
    settings = conventions.settle(gain=gain, ap_norm=ap_norm, relevance_threshold=float(threshold), ties="input",
                                  ideal="retrieved" if ideal_relevances is None else "judged")
    ideal = rel if ideal_relevances is None else _finite(ideal_relevances, "ideal_relevances")
    check_relevance(settings, rel, "relevances")
    if ideal_relevances is not None:
        check_relevance(settings, ideal, "ideal_relevances")
    lists = relevance_views(one_list(rel, ideal, n_relevant, float(threshold)), settings).gain
    out = np.empty((len(FAMILIES), 1))
    # a discount per position of the list and of the ideal: a larger k reads no further
    options = kernel_options(settings, discount_table(max(len(rel), len(ideal)) + 1))
    ranking_families(lists, 0 if k is None else int(k), options, np.arange(len(FAMILIES), dtype=np.int64), out)
    return {name: float(out[FAMILY_INDEX[name], 0]) for name in KERNEL_FAMILIES}


def dcg_at_k(relevances, k=None, gain="linear") -> float:
    """DCG@k of one list = sum_{i<=k} g(rel_i) / log2(i + 1), the per-user term of the metric ``dcg@k``.

    Parameters
    ----------
    relevances : sequence of numbers
        Relevance of each item in rank order (rank 1 first), finite.
    k : int, optional
        The cutoff (a whole number from 1 to 2^62); None: the whole list.
    gain : {"linear", "exponential", "binary"}
        g = rel, g = 2^rel - 1, or 1 for a relevant item (rel >= 1) and 0 otherwise.

    Examples
    --------
    >>> import metrics_core as mc
    >>> round(mc.dcg_at_k([3, 2, 0], k=2), 12)  # 3 / log2(2) + 2 / log2(3)
    4.261859507143
    >>> mc.dcg_at_k([3, 2, 0], k=1, gain="exponential")  # (2^3 - 1) / log2(2)
    7.0
    """
    return _one_list(relevances, k, gain=gain)["dcg"]


def ndcg_at_k(relevances, k=None, gain="linear", ideal_relevances=None) -> float:
    """NDCG@k of one list = DCG@k / IDCG@k (0 when IDCG is 0), the per-user term of ``ndcg@k``.

    Parameters
    ----------
    relevances : sequence of numbers
        Relevance of each item in rank order (rank 1 first), finite.
    k : int, optional
        The cutoff (a whole number from 1 to 2^62); None: the whole list.
    gain : {"linear", "exponential", "binary"}
        As :func:`dcg_at_k`.
    ideal_relevances : sequence of numbers, optional
        The relevances the ideal list is sorted from, e.g. every judged item of the user (the
        ``ideal="judged"`` convention of ``mc.evaluate``); default: ``relevances`` re-sorted.

    Examples
    --------
    >>> import metrics_core as mc
    >>> round(mc.ndcg_at_k([0, 1], k=2), 6)  # (1 / log2(3)) / (1 / log2(2))
    0.63093
    >>> round(mc.ndcg_at_k([1, 0], k=2, ideal_relevances=[1, 1]), 12)  # 1 / (1 + 1 / log2(3))
    0.613147192765
    """
    return _one_list(relevances, k, gain=gain, ideal_relevances=ideal_relevances)["ndcg"]


def average_precision_at_k(hits, k=None, n_relevant=None, ap_norm="relevant") -> float:
    """AP@k of one list = (1/D) sum_{i<=k} hit_i * P@i: the per-user term of the metric ``map@k``
    (not the scored-row metric ``average_precision``, which is ``pr_auc``); ``mc.average_precision``
    is this function's former name (deprecated).

    Parameters
    ----------
    hits : sequence of numbers
        Relevance of each item in rank order (rank 1 first); an item counts as a hit when it is >= 1.
    k : int, optional
        The cutoff (a whole number from 1 to 2^62); None: the whole list.
    n_relevant : int, optional
        R, the user's relevant items in the ground truth (also those not retrieved); default: the hits
        in the list.
    ap_norm : {"relevant", "min_k", "retrieved", "k"}
        D: R, min(k, R), the hits in the top k, or k (the ``ap_norm`` convention).

    Examples
    --------
    >>> import metrics_core as mc
    >>> mc.average_precision_at_k([1, 0, 1, 0], n_relevant=3)  # (1/1 + 2/3) / 3
    0.5555555555555555
    >>> mc.average_precision_at_k([1, 0, 1, 0], k=2, n_relevant=3, ap_norm="min_k")  # (1/1) / 2
    0.5
    """
    return _one_list(hits, k, n_relevant=n_relevant, ap_norm=ap_norm)["ap"]


def precision_at_k(hits, k) -> float:
    """P@k of one list = (relevant items in the top k) / k, also for a list shorter than k.

    Parameters
    ----------
    hits : sequence of numbers
        Relevance of each item in rank order; an item with relevance >= 1 is relevant.
    k : int
        The cutoff, a whole number from 1 to 2^62.

    Examples
    --------
    >>> import metrics_core as mc
    >>> mc.precision_at_k([1, 0, 1], k=2)
    0.5
    >>> mc.precision_at_k([1], k=4)  # divides by k, as trec_eval
    0.25
    """
    return _one_list(hits, k)["precision"]


def recall_at_k(hits, k, n_relevant) -> float:
    """R@k of one list = (relevant items in the top k) / R.

    Parameters
    ----------
    hits : sequence of numbers
        Relevance of each item in rank order; an item with relevance >= 1 is relevant.
    k : int
        The cutoff, a whole number from 1 to 2^62.
    n_relevant : int
        R, the user's relevant items in the ground truth, also those not retrieved.

    Examples
    --------
    >>> import metrics_core as mc
    >>> mc.recall_at_k([1, 0, 1], k=2, n_relevant=4)
    0.25
    """
    return _one_list(hits, k, n_relevant=n_relevant)["recall"]


def reciprocal_rank(hits, k=None) -> float:
    """Reciprocal rank of one list: 1 / rank of the first relevant item within the top k (0 if none).

    Parameters
    ----------
    hits : sequence of numbers
        Relevance of each item in rank order; an item with relevance >= 1 is relevant.
    k : int, optional
        The cutoff (a whole number from 1 to 2^62); None: the whole list.

    Examples
    --------
    >>> import metrics_core as mc
    >>> mc.reciprocal_rank([0, 0, 1, 1])
    0.3333333333333333
    >>> mc.reciprocal_rank([0, 0, 1], k=2)
    0.0
    """
    return _one_list(hits, k)["rr"]


def hit_ratio(hits_per_user, n_relevant_per_user) -> float:
    """Pooled hit ratio over users: the sum of their hits over the sum of their relevant items (the
    metric ``hit_ratio@k`` given each user's hits in the top k); 0 when no user has a relevant item.

    Parameters
    ----------
    hits_per_user : sequence of numbers
        Each user's relevant items in the top k.
    n_relevant_per_user : sequence of numbers
        Each user's relevant items in the ground truth, in the same order.

    Examples
    --------
    >>> import metrics_core as mc
    >>> mc.hit_ratio([1, 0, 2], [2, 1, 2])  # (1 + 0 + 2) / (2 + 1 + 2)
    0.6
    """
    total = float(np.sum(n_relevant_per_user))
    return float(np.sum(hits_per_user)) / total if total > 0 else 0.0
