"""Plot-ready tables: ROC and precision-recall curve points, reliability curve, confusion matrix.

Rows are the scored rows of users present in the ground truth; the label is
relevance >= ``relevance_threshold``. Curve points follow scikit-learn's
``roc_curve`` / ``precision_recall_curve`` (one point per distinct score).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import MetricsError
from .reductions import confusion_counts, scored_rows
from ..layout import Ranked

MAX_BINS = 1_000_000  # one count per bin is allocated


def _cumulative(ranked: Ranked, relevance_threshold):
    """``(tps, fps, thresholds)``: at each distinct score, from the highest down, the positive and
    negative rows scored at least that high. Counts at a threshold do not depend on the order of
    tied rows, so three plain sorts and binary searches replace an argsort of every row.
    Kept with the prepared data (read-only arrays), so the ROC and precision-recall curves of a
    model share one computation."""
    key = ("curve_counts", float(relevance_threshold))
    if key not in ranked._cache:
        counts = _count_at_thresholds(ranked, relevance_threshold)
        for a in counts:
            a.flags.writeable = False
        ranked._cache[key] = counts
    return ranked._cache[key]


def _count_at_thresholds(ranked: Ranked, relevance_threshold):
    rows = scored_rows(ranked, relevance_threshold, 0.5)
    p, y = rows.score, rows.label
    positives = np.sort(p[y > 0])
    negatives = np.sort(p[y <= 0])
    ordered = np.sort(p)
    thresholds = ordered[np.r_[ordered[1:] != ordered[:-1], True]][::-1]
    tps = (positives.size - np.searchsorted(positives, thresholds, "left")).astype(np.float64)
    fps = (negatives.size - np.searchsorted(negatives, thresholds, "left")).astype(np.float64)
    return tps, fps, thresholds


def roc_curve(ranked: Ranked, relevance_threshold: float = 1) -> pd.DataFrame:
    """ROC points (fpr, tpr, threshold), starting at (0, 0) with threshold +inf.

    Parameters
    ----------
    ranked : Ranked
        A prepared run whose rows carry scores and labels.
    relevance_threshold : float
        Rows with relevance >= this are the positives.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> rows = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "c"],
    ...                      "score": [0.9, 0.2, 0.6, 0.4], "label": [1, 0, 0, 1]})
    >>> ranked = mc.prepare(rows)  # one table holding scores and labels (qrels=None)
    >>> mc.roc_curve(ranked).to_dict("list")
    {'fpr': [0.0, 0.0, 0.5, 0.5, 1.0], 'tpr': [0.0, 0.5, 0.5, 1.0, 1.0], 'threshold': [inf, 0.9, 0.6, 0.4, 0.2]}
    """
    tps, fps, thr = _cumulative(ranked, relevance_threshold)
    if tps[-1] == 0 or fps[-1] == 0:
        raise MetricsError("a ROC curve needs both relevant and non-relevant scored rows")
    return pd.DataFrame({
        "fpr": np.r_[0.0, fps / fps[-1]],
        "tpr": np.r_[0.0, tps / tps[-1]],
        "threshold": np.r_[np.inf, thr],
    })


RECALL_OVER = ("retrieved", "all_relevant")


def pr_curve(ranked: Ranked, relevance_threshold: float = 1, recall_over: str = "retrieved") -> pd.DataFrame:
    """Precision-recall points (recall, precision, threshold), one per distinct score by
    decreasing threshold, after scikit-learn's (recall 0, precision 1) starting point.

    ``recall_over="retrieved"`` divides by the relevant scored rows (scikit-learn's pooled
    curve, which always reaches 1); ``"all_relevant"`` by every relevant item of the ground
    truth's users, retrieved or not (a model that retrieves 13% of them ends at 0.13).

    Parameters
    ----------
    ranked : Ranked
        A prepared run.
    relevance_threshold : float
        Rows with relevance >= this are relevant.
    recall_over : {"retrieved", "all_relevant"}
        What recall divides by (above).

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> rows = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "c"],
    ...                      "score": [0.9, 0.2, 0.6, 0.4], "label": [1, 0, 0, 1]})
    >>> ranked = mc.prepare(rows)  # one table holding scores and labels (qrels=None)
    >>> mc.pr_curve(ranked).round(4).to_dict("list")
    {'recall': [0.0, 0.5, 0.5, 1.0, 1.0], 'precision': [1.0, 1.0, 0.5, 0.6667, 0.5], 'threshold': [inf, 0.9, 0.6, 0.4, 0.2]}
    """
    if recall_over not in RECALL_OVER:
        raise MetricsError(f"recall_over must be one of {', '.join(RECALL_OVER)}; got {recall_over!r}")
    tps, fps, thr = _cumulative(ranked, relevance_threshold)
    if tps[-1] == 0:
        raise MetricsError("a precision-recall curve needs at least one relevant scored row")
    precision = tps / (tps + fps)
    if recall_over == "all_relevant":
        recall = tps / ranked.n_relevant(relevance_threshold)[ranked.in_truth].sum()
    else:
        recall = tps / tps[-1]
    return pd.DataFrame({
        "recall": np.r_[0.0, recall],
        "precision": np.r_[1.0, precision],
        "threshold": np.r_[np.inf, thr],
    })


def calibration_curve(ranked: Ranked, n_bins: int = 10, relevance_threshold: float = 1) -> pd.DataFrame:
    """Reliability curve over equal-width score bins on [0, 1]: mean predicted score,
    observed fraction of positives and row count per non-empty bin.

    Parameters
    ----------
    ranked : Ranked
        A prepared run with scores in [0, 1].
    n_bins : int
        Equal-width bins over [0, 1].
    relevance_threshold : float
        Rows with relevance >= this are the positives.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> rows = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "c"],
    ...                      "score": [0.9, 0.2, 0.6, 0.4], "label": [1, 0, 0, 1]})
    >>> ranked = mc.prepare(rows)  # one table holding scores and labels (qrels=None)
    >>> mc.calibration_curve(ranked, n_bins=2)
       bin  mean_predicted  fraction_positive  count
    0    0            0.30                0.5      2
    1    1            0.75                0.5      2
    """
    if not isinstance(n_bins, (int, np.integer)) or isinstance(n_bins, bool) or not 1 <= n_bins <= MAX_BINS:
        raise MetricsError(f"n_bins must be a whole number from 1 to {MAX_BINS:,}, got {n_bins!r}")
    rows = scored_rows(ranked, relevance_threshold, 0.5)
    p, y = rows.score, rows.label
    if (p < 0).any() or (p > 1).any():
        raise MetricsError("a calibration curve needs scores that are probabilities in [0, 1]")
    bins = np.minimum((p * n_bins).astype(np.int64), n_bins - 1)
    count = np.bincount(bins, minlength=n_bins)
    sum_p = np.bincount(bins, weights=p, minlength=n_bins)
    sum_y = np.bincount(bins, weights=y, minlength=n_bins)
    keep = count > 0
    return pd.DataFrame({
        "bin": np.arange(n_bins)[keep],
        "mean_predicted": sum_p[keep] / count[keep],
        "fraction_positive": sum_y[keep] / count[keep],
        "count": count[keep],
    })


def confusion_matrix(ranked: Ranked, threshold: float = 0.5, relevance_threshold: float = 1) -> pd.DataFrame:
    """2x2 counts: rows actual (negative, positive), columns predicted (score >= threshold).

    Parameters
    ----------
    ranked : Ranked
        A prepared run.
    threshold : float
        A row is predicted positive when its score >= threshold.
    relevance_threshold : float
        Rows with relevance >= this are actually positive.

    Examples
    --------
    >>> import pandas as pd
    >>> import metrics_core as mc
    >>> rows = pd.DataFrame({"user_id": ["u1", "u1", "u2", "u2"], "item_id": ["a", "b", "a", "c"],
    ...                      "score": [0.9, 0.2, 0.6, 0.4], "label": [1, 0, 0, 1]})
    >>> ranked = mc.prepare(rows)  # one table holding scores and labels (qrels=None)
    >>> mc.confusion_matrix(ranked, threshold=0.5)
    predicted  negative  positive
    actual
    negative          1         1
    positive          1         1
    """
    counts = confusion_counts(scored_rows(ranked, relevance_threshold, threshold))
    tp, fp, fn, tn = (counts[key] for key in ("tp", "fp", "fn", "tn"))
    return pd.DataFrame([[tn, fp], [fn, tp]],
                        index=pd.Index(["negative", "positive"], name="actual"),
                        columns=pd.Index(["negative", "positive"], name="predicted"))
