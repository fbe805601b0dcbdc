"""Exact ROC AUC and average precision over all scored rows, with Spark.

Input: rows ``(score, a, b)`` = positives and negatives at one distinct score
of one group of users (a score can repeat across groups). With ``P``
positives, ``N`` negatives and, for a distinct score ``s``, ``pos(s)``,
``neg(s)``, ``TP(s)`` / ``FP(s)`` the positives / negatives with score >= s:

- AUC = sum_s pos(s) * (N - FP(s) + neg(s) / 2) / (P N): every positive-negative
  pair ordered correctly counts 1, a tie 1/2 (the Mann-Whitney statistic).
  ``2 * numerator`` is an integer and is summed exactly as such.
- AP (scikit-learn's ``average_precision_score``) = sum_s pos(s) / P *
  TP(s) / (TP(s) + FP(s)), thresholds at the distinct scores, descending.

No binning: the score axis is cut into ranges at approximate quantiles (they
only balance the work; every row of one score falls in one range). One task
per range computes the prefix sums of its range with NumPy; the driver adds
the ranges in descending order, correcting each for the counts above it
(exact: the AUC numerator is linear in them). AP is not linear in them, so a
second pass gives each range its counts above.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def range_partials(pdf: pd.DataFrame, above: dict | None, total_neg: int) -> pd.DataFrame:
    """Exact partial sums for one score range: ``(range, pos, neg, num2, ap_sum)``.

    ``above[r] = (positives, negatives)`` with a higher score than range ``r``;
    with ``above=None`` the sums assume nothing above (``num2`` is then
    corrected on the driver, which is exact because it is linear in the
    negatives above; ``ap_sum`` is not linear and is not used).
    """
    r = int(pdf["_range"].iloc[0])
    pos_above, neg_above = above[r] if above is not None else (0, 0)
    values, inverse = np.unique(pdf["score"].to_numpy(dtype=np.float64), return_inverse=True)
    pos = np.bincount(inverse, weights=pdf["a"].to_numpy(dtype=np.float64), minlength=len(values))
    neg = np.bincount(inverse, weights=pdf["b"].to_numpy(dtype=np.float64), minlength=len(values))
    pos, neg = pos[::-1].astype(np.int64), neg[::-1].astype(np.int64)  # descending score
    tp = pos_above + np.cumsum(pos)
    fp = neg_above + np.cumsum(neg)
    num2 = int(np.sum(pos * (2 * (total_neg - fp) + neg)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ap_terms = np.where(pos > 0, pos * (tp / (tp + fp)), 0.0)
    return pd.DataFrame({"range": [r], "pos": [int(pos.sum())], "neg": [int(neg.sum())], "num2": [num2],
                         "ap_sum": [float(ap_terms.sum())]})


def merge_splits(points: list[list[float]], weights: list[float], n_ranges: int) -> list[float]:
    """Range boundaries from the score quantiles each group reported (weighted by its rows).

    Any boundaries give exact results; these only balance the work per range.
    """
    pts = np.concatenate([np.asarray(p, dtype=np.float64) for p in points]) if points else np.empty(0)
    if n_ranges <= 1 or pts.shape[0] == 0:
        return [-math.inf, math.inf]
    w = np.concatenate([np.full(len(p), wt / max(len(p), 1)) for p, wt in zip(points, weights)])
    order = np.argsort(pts, kind="stable")
    pts, cum = pts[order], np.cumsum(w[order])
    at = np.searchsorted(cum, cum[-1] * np.arange(1, n_ranges) / n_ranges, side="left")
    cuts = np.unique(pts[np.minimum(at, len(pts) - 1)])
    return [-math.inf] + [float(c) for c in cuts if math.isfinite(c)] + [math.inf]


def exact_auc_ap(score_rows, total_pos: int, total_neg: int, splits: list[float],
                 want_ap: bool) -> tuple[float, float]:
    """(ROC AUC, average precision) over the ``(score, a, b)`` Spark DataFrame ``score_rows``.

    One Spark job for AUC, a second one for AP (it needs the counts above each
    range first). AUC is NaN with a single class; AP is NaN without positives.
    """
    from pyspark.ml.feature import Bucketizer
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if total_pos == 0:
        return float("nan"), float("nan")
    if len(splits) < 3:  # one range (Bucketizer needs at least three split points)
        ranged = score_rows.withColumn("_range", F.lit(0))
    else:
        ranged = Bucketizer(splits=splits, inputCol="score", outputCol="_rangef").transform(score_rows)
        ranged = ranged.withColumn("_range", F.col("_rangef").cast("int")).drop("_rangef")
    schema = T.StructType([T.StructField("range", T.IntegerType()), T.StructField("pos", T.LongType()),
                           T.StructField("neg", T.LongType()), T.StructField("num2", T.LongType()),
                           T.StructField("ap_sum", T.DoubleType())])

    def first(pdf: pd.DataFrame) -> pd.DataFrame:
        return range_partials(pdf, None, total_neg)

    rows = ranged.groupBy("_range").applyInPandas(first, schema).collect()
    counts = {int(r["range"]): (int(r["pos"]), int(r["neg"]), int(r["num2"])) for r in rows}
    above, pos_acc, neg_acc, num2 = {}, 0, 0, 0
    for r in sorted(counts, reverse=True):
        above[r] = (pos_acc, neg_acc)
        p, n, local = counts[r]
        num2 += local - 2 * neg_acc * p  # the negatives above range r sit above all its positives
        pos_acc += p
        neg_acc += n
    auc = num2 / (2.0 * total_pos * total_neg) if total_neg > 0 else float("nan")
    ap = float("nan")
    if want_ap:
        def second(pdf: pd.DataFrame) -> pd.DataFrame:
            return range_partials(pdf, above, total_neg)

        parts = ranged.groupBy("_range").applyInPandas(second, schema).collect()
        ap = math.fsum(float(r["ap_sum"]) for r in parts) / total_pos
    return float(auc), float(ap)
