"""Tables behind the Curves page (pure: no Streamlit)."""

from __future__ import annotations

import numpy as np
import pandas as pd


def score_range(scores: np.ndarray) -> tuple[float, float]:
    """(min, max) of a model's finite scores, widened to a non-empty range."""
    s = np.asarray(scores, dtype=float)
    s = s[np.isfinite(s)]
    if s.size == 0:
        return 0.0, 1.0
    low, high = float(s.min()), float(s.max())
    return (low, high) if high > low else (low - 0.5, high + 0.5)


def calibration_counts(curves: dict[str, pd.DataFrame], n_bins: int) -> pd.DataFrame:
    """Rows per calibration bin of ``n_bins`` equal-width bins over [0, 1] (rows: bin range,
    columns: model; empty bins are left out)."""
    parts = []
    for name, c in curves.items():
        parts.append(pd.Series(c["count"].to_numpy(), index=c["bin"].to_numpy(), name=name))
    table = pd.concat(parts, axis=1).fillna(0).astype(int) if parts else pd.DataFrame()
    table.index = [f"[{b / n_bins:.2f}, {(b + 1) / n_bins:.2f}{']' if b == n_bins - 1 else ')'}" for b in table.index]
    return table.rename_axis("score bin")


#: Where the confusion matrix opens for a model whose scores are probabilities.
PROBABILITY_THRESHOLD = 0.5


def best_f1_threshold(scores, labels) -> tuple[float, float] | None:
    """``(threshold, F1)`` of the threshold with the highest F1 when a row is predicted positive
    at ``score >= threshold``, over the model's distinct scores (the highest such threshold on a
    tie); None when no row is positive (every threshold has F1 0)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=float)
    keep = np.isfinite(s)
    s, y = s[keep], y[keep]
    positives = float(y.sum())
    if s.size == 0 or positives == 0:
        return None
    order = np.argsort(-s, kind="stable")
    s, y = s[order], y[order]
    tp = np.cumsum(y)
    predicted = np.arange(1, s.size + 1)
    # a threshold predicts every row of its score: read the counts at the last row of each score
    last = np.r_[s[1:] != s[:-1], True]
    f1 = np.where(last, 2 * tp / (positives + predicted), -1.0)
    best = int(np.argmax(f1))  # the first maximum: the highest threshold
    return float(s[best]), float(f1[best])


def opening_threshold(scores, labels, probabilistic: bool) -> tuple[float, str]:
    """The confusion matrix's first threshold and the sentence saying why: 0.5 for probabilities
    (within the score range); otherwise the threshold with the highest F1 over the model's rows
    (raw scores or logits have no natural cut); the middle of the score range when no row is
    positive."""
    low, high = score_range(scores)
    if probabilistic:
        value = min(max(PROBABILITY_THRESHOLD, low), high)
        return value, f"{value:.4g}, as this model's scores are probabilities"
    best = best_f1_threshold(scores, labels)
    if best is None:
        value = (low + high) / 2
        return value, f"{value:.4g}, the middle of the score range (no row is positive, so F1 cannot choose)"
    return best[0], (f"{best[0]:.4g}, the threshold with the highest F1 ({best[1]:.4f}) over this model's "
                     "rows, as its scores are not probabilities")
