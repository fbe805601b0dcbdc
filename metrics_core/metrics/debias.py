"""Popularity debiasing of the ground truth, as RecTools' ``DebiasConfig`` (rectools 0.19).

Popular items dominate a test set: a model that recommends them scores well
without serving anyone in particular. :func:`debias` down-samples the ground
truth before any metric, exactly as ``rectools.metrics.debias.debias_interactions``:

1. each item's popularity is its number of distinct users in the ground truth;
2. ``Q1`` and ``Q3`` are the 25 % and 75 % quantiles of those popularities
   (pandas' linear interpolation), ``IQR = Q3 - Q1``;
3. the border is ``int(Q3 + iqr_coef * IQR)`` (truncated toward zero);
4. every row of an item above the border is shuffled with
   ``DataFrame.sample(frac=1.0, random_state=seed)`` and each such item keeps
   its first ``border`` rows; the other items keep every row.

The rows kept come first for the items at or below the border, then the
down-sampled ones (RecTools' order). Every row given counts toward popularity:
pass the relevant rows (RecTools' interactions are all positives). The same
seed gives the same rows as RecTools with ``DebiasConfig(iqr_coef, random_state=seed)``;
``mc.evaluate(run, mc.debias(qrels, seed=0), preset="rectools")`` is then its
debiased metric.
"""

from __future__ import annotations

import pandas as pd

from ..errors import MetricsError


def popularity_border(qrels: pd.DataFrame, iqr_coef: float = 1.5) -> int:
    """``int(Q3 + iqr_coef * (Q3 - Q1))`` of the items' distinct-user counts."""
    users = qrels.groupby("item_id", sort=False)["user_id"].nunique()
    q1, q3 = users.quantile([0.25, 0.75])
    return int(q3 + iqr_coef * (q3 - q1))


def debias(qrels: pd.DataFrame, iqr_coef: float = 1.5, seed: int | None = 0) -> pd.DataFrame:
    """The ground truth with each item above the popularity border down-sampled to the border (see the
    module docstring); ``seed`` is the shuffle's ``random_state`` (None: not reproducible, refused).

    Parameters
    ----------
    qrels : DataFrame
        The ground truth, ``user_id, item_id, relevance``.
    iqr_coef : float
        The border is ``Q3 + iqr_coef * (Q3 - Q1)`` of the items' interaction counts.
    seed : int
        The shuffle's seed: the same rows for the same seed.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> qrels = pd.DataFrame({"user_id": [f"u{i}" for i in range(8)] + ["u0", "u1", "u2", "u3"],
    ...                       "item_id": ["pop"] * 8 + ["a", "b", "c", "d"], "relevance": 1})
    >>> debiased = mc.debias(qrels, iqr_coef=1.5, seed=0)  # counts 8, 1, 1, 1, 1: the border is 1
    >>> sorted(debiased.item_id.value_counts().items())
    [('a', 1), ('b', 1), ('c', 1), ('d', 1), ('pop', 1)]
    """
    if not isinstance(qrels, pd.DataFrame) or not {"user_id", "item_id"} <= set(qrels.columns):
        raise MetricsError("debias needs the ground truth as a DataFrame with user_id and item_id")
    if seed is None:
        raise MetricsError("debias needs a seed: an unseeded down-sampling cannot be reproduced")
    if not iqr_coef >= 0:
        raise MetricsError(f"iqr_coef must be a number >= 0, got {iqr_coef}")
    if not len(qrels):
        return qrels
    border = popularity_border(qrels, iqr_coef)
    users = qrels.groupby("item_id", sort=False)["user_id"].nunique()
    over = qrels["item_id"].isin(users[users > border].index)
    sampled = qrels[over].sample(frac=1.0, random_state=seed).groupby("item_id").head(border)
    return pd.concat([qrels[~over], sampled], ignore_index=True)


__all__ = ["debias", "popularity_border"]
