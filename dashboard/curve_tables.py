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
