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

No binning: the score axis is cut into ranges at approximate quantiles
(``approxQuantile`` only balances the work; every row of one score falls in
one range), Spark totals each range, the driver turns the totals into the
positives and negatives above each range, and one task per range finishes the
exact prefix sums with NumPy.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def range_partials(pdf: pd.DataFrame, above: dict, total_neg: int) -> pd.DataFrame:
    """Exact partial sums for one score range: ``(num2, ap_sum)``.

    ``above[r] = (positives, negatives)`` with a higher score than range ``r``.
    """
    r = int(pdf["_range"].iloc[0])
    pos_above, neg_above = above[r]
    values, inverse = np.unique(pdf["score"].to_numpy(dtype=np.float64), return_inverse=True)
    pos = np.bincount(inverse, weights=pdf["a"].to_numpy(dtype=np.float64), minlength=len(values))
    neg = np.bincount(inverse, weights=pdf["b"].to_numpy(dtype=np.float64), minlength=len(values))
    pos, neg = pos[::-1].astype(np.int64), neg[::-1].astype(np.int64)  # descending score
    tp = pos_above + np.cumsum(pos)
    fp = neg_above + np.cumsum(neg)
    num2 = int(np.sum(pos * (2 * (total_neg - fp) + neg)))
    with np.errstate(invalid="ignore", divide="ignore"):
        ap_terms = np.where(pos > 0, pos * (tp / (tp + fp)), 0.0)
    return pd.DataFrame({"num2": [num2], "ap_sum": [float(ap_terms.sum())]})


def exact_auc_ap(score_rows, total_pos: int, total_neg: int, n_ranges: int) -> tuple[float, float]:
    """(ROC AUC, average precision) over the ``(score, a, b)`` Spark DataFrame ``score_rows``.

    AUC is NaN with a single class; AP is NaN without positives (as mc.evaluate).
    """
    from pyspark.ml.feature import Bucketizer
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    if total_pos == 0:
        return float("nan"), float("nan")
    n_ranges = max(1, int(n_ranges))
    cuts = []
    if n_ranges > 1:
        probs = [i / n_ranges for i in range(1, n_ranges)]
        cuts = sorted(set(score_rows.approxQuantile("score", probs, 1.0 / (10 * n_ranges))))
    splits = [-math.inf] + [c for c in cuts if math.isfinite(c)] + [math.inf]
    ranged = Bucketizer(splits=splits, inputCol="score", outputCol="_rangef").transform(score_rows)
    ranged = ranged.withColumn("_range", F.col("_rangef").cast("int")).drop("_rangef")
    totals = ranged.groupBy("_range").agg(F.sum("a").alias("p"), F.sum("b").alias("n")).collect()
    counts = {int(r["_range"]): (int(r["p"]), int(r["n"])) for r in totals}
    above, pos_acc, neg_acc = {}, 0, 0
    for r in sorted(counts, reverse=True):
        above[r] = (pos_acc, neg_acc)
        pos_acc += counts[r][0]
        neg_acc += counts[r][1]

    schema = T.StructType([T.StructField("num2", T.LongType()), T.StructField("ap_sum", T.DoubleType())])

    def partials(pdf: pd.DataFrame) -> pd.DataFrame:
        return range_partials(pdf, above, total_neg)

    parts = ranged.groupBy("_range").applyInPandas(partials, schema).collect()
    num2 = sum(int(r["num2"]) for r in parts)
    ap = math.fsum(float(r["ap_sum"]) for r in parts) / total_pos
    auc = num2 / (2.0 * total_pos * total_neg) if total_neg > 0 else float("nan")
    return float(auc), float(ap)
