"""What the Distributions page draws, computed on the server (pure: no Streamlit).

A chart of every per-user value would send each value to the browser (60,000 points for
three models of 20,000 users) and let plotly compute the quartiles there. Instead:

* :func:`ecdf_steps`: the empirical CDF of each model at its distinct values,
  ``share(v) = #{users with value <= v} / users``; beyond ``max_points`` distinct values,
  an evenly spaced subset of them (first and last kept), each still at its exact share;
* :func:`per_user_long` and :func:`segment_table`: the per-user values of every model in one
  long table, and their mean per segment;
* :func:`box_stats`: each model's quartiles (linear interpolation between order
  statistics, plotly's and NumPy's default), mean, and whiskers at the most extreme
  values within 1.5 interquartile ranges of the box (Tukey's fences, as plotly draws them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

MAX_ECDF_POINTS = 2000


def _values_by_model(long: pd.DataFrame):
    """``(model, finite values sorted)`` per model, in order of first appearance."""
    for name, part in long.groupby("model", sort=False)["value"]:
        values = part.to_numpy(dtype=float)
        yield name, np.sort(values[np.isfinite(values)])


def ecdf_steps(long: pd.DataFrame, max_points: int = MAX_ECDF_POINTS) -> pd.DataFrame:
    """``model, value, share`` (``long``: model, value): see the module docstring."""
    parts = []
    for name, x in _values_by_model(long):
        if x.size == 0:
            continue
        last = np.flatnonzero(np.r_[x[1:] != x[:-1], True])  # last position of each distinct value
        values, shares = x[last], (last + 1) / x.size
        if values.size > max_points:
            keep = np.unique(np.r_[np.linspace(0, values.size - 1, max_points).round().astype(int), values.size - 1])
            values, shares = values[keep], shares[keep]
        parts.append(pd.DataFrame({"model": name, "value": values, "share": shares}))
    if not parts:
        return pd.DataFrame(columns=["model", "value", "share"])
    return pd.concat(parts, ignore_index=True)


def box_stats(long: pd.DataFrame) -> pd.DataFrame:
    """One row per model: ``users, mean, q1, median, q3, lower_fence, upper_fence``."""
    rows = []
    for name, x in _values_by_model(long):
        if x.size == 0:
            continue
        q1, median, q3 = np.percentile(x, [25, 50, 75])
        reach = 1.5 * (q3 - q1)
        rows.append({"model": name, "users": int(x.size), "mean": float(x.mean()), "q1": float(q1),
                     "median": float(median), "q3": float(q3),
                     "lower_fence": float(x[x >= q1 - reach].min()),
                     "upper_fence": float(x[x <= q3 + reach].max())})
    return pd.DataFrame(rows, columns=["model", "users", "mean", "q1", "median", "q3", "lower_fence", "upper_fence"])


def per_user_long(evals: dict[str, Any], metric: str) -> pd.DataFrame:
    """``model, user_id, value``: the per-user column ``metric`` of every model."""
    parts = []
    for name, ev in evals.items():
        if metric in ev.per_user.columns:
            col = ev.per_user[metric]
            parts.append(pd.DataFrame({"model": name, "user_id": col.index.astype(str),
                                       "value": col.to_numpy(dtype=float)}))
    if not parts:
        return pd.DataFrame(columns=["model", "user_id", "value"])
    return pd.concat(parts, ignore_index=True)


def segment_table(long: pd.DataFrame, segment: pd.Series) -> pd.DataFrame:
    """``model, segment, mean, users``: the mean per-user value within each segment.

    ``segment`` maps user id (string) -> segment label; users without a label
    are grouped as "(missing)".
    """
    seg = long["user_id"].map(segment).fillna("(missing)").astype(str)
    out = (long.assign(segment=seg).groupby(["model", "segment"], sort=False)["value"]
           .agg(mean="mean", users="size").reset_index())
    return out
