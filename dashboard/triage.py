"""Failure triage tables (pure: no Streamlit), from metrics_core's per-user results.

``triage_table`` puts every evaluated user of a model in one group:

* ``not served``: the user is in the ground truth but the model returned no list;
* ``no hit in the top K``: a list, but no relevant item in its top K (per-user
  ``hit_rate@K`` is 0: under averaged ties, not under any order of the ties);
* ``hit but low``: a relevant item in the top K, but the metric is in the lowest
  quarter of the model's users with a hit (below their 25th percentile, in the
  metric's direction);
* ``fine``: everyone else.

Users are sorted by how far they are from the best other model on that user
(the gap, in the metric's direction), largest first. ``side_by_side`` aligns two
models' lists of one user by item.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from metrics_core.metrics import registry

NOT_SERVED, NO_HIT, LOW, FINE = "not served", "no hit in the top K", "hit but low", "fine"
GROUPS = (NOT_SERVED, NO_HIT, LOW, FINE)
LOW_QUANTILE = 0.25
UNJUDGED = "unjudged"


def triage_table(per_user: Mapping[str, pd.DataFrame], model: str, metric: str, hit_column: str,
                 list_lengths: pd.Series, n_relevant: pd.Series) -> pd.DataFrame:
    """One row per evaluated user of ``model``: ``user_id, group, <metric>, best other, best other
    model, gap, relevant items, list length``, sorted by gap (largest shortfall first).

    ``per_user``: model -> per-user table (index user id) holding ``metric`` and, for ``model``,
    ``hit_column`` (``hit_rate@K``). ``list_lengths`` / ``n_relevant``: by user id (strings).
    """
    own = per_user[model]
    ids = own.index.astype(str)
    higher = registry.higher_is_better(metric)
    values = own[metric].to_numpy(dtype=float)
    lengths = list_lengths.reindex(ids).fillna(0).to_numpy(dtype=int)
    hits = own[hit_column].to_numpy(dtype=float)
    served = lengths > 0
    signed = values if higher else -values
    with_hit = served & (hits > 0)
    cut = np.quantile(signed[with_hit], LOW_QUANTILE) if with_hit.any() else np.nan
    group = np.where(~served, NOT_SERVED, np.where(hits <= 0, NO_HIT, np.where(signed < cut, LOW, FINE)))
    others = [m for m in per_user if m != model]
    if others:
        other = pd.DataFrame({m: per_user[m][metric].set_axis(per_user[m].index.astype(str)).reindex(ids)
                              for m in others})
        best_values = (other.max(axis=1) if higher else other.min(axis=1)).to_numpy(dtype=float)
        filled = other.fillna(-np.inf if higher else np.inf)
        best_model = filled.idxmax(axis=1) if higher else filled.idxmin(axis=1)
        best_model = best_model.where(other.notna().any(axis=1), "")
    else:
        best_values, best_model = np.full(len(ids), np.nan), pd.Series("", index=ids)
    gap = (best_values - values) if higher else (values - best_values)
    out = pd.DataFrame({"user_id": ids, "group": group, metric: values, "best other": best_values,
                        "best other model": np.asarray(best_model, dtype=object), "gap": gap,
                        "relevant items": n_relevant.reindex(ids).fillna(0).to_numpy(dtype=int),
                        "list length": lengths})
    out["_order"] = np.where(np.isnan(gap), -np.inf, gap)
    out = out.sort_values(["_order", "user_id"], ascending=[False, True], kind="stable")
    return out.drop(columns="_order").reset_index(drop=True)


def group_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Users per group (every group listed, in order) and their share."""
    counts = table["group"].value_counts().reindex(list(GROUPS), fill_value=0)
    total = max(int(counts.sum()), 1)
    return pd.DataFrame({"group": counts.index, "users": counts.to_numpy(),
                         "share": counts.to_numpy() / total})


def filter_users(table: pd.DataFrame, group: str | None = None, segment: pd.Series | None = None,
                 segment_value: str | None = None, search: str = "", users: pd.Index | None = None) -> pd.DataFrame:
    """Rows of one group (None: all), one segment value, and user ids starting with ``search``;
    ``users``: only these user ids (strings; None: every user)."""
    out = table
    if users is not None:
        out = out[out["user_id"].isin(users)]
    if group:
        out = out[out["group"] == group]
    if segment is not None and segment_value is not None:
        out = out[out["user_id"].map(segment).fillna("(missing)").astype(str) == str(segment_value)]
    text = str(search).strip()
    if text:
        out = out[out["user_id"].str.startswith(text)]
    return out.reset_index(drop=True)


def _judged(frame: pd.DataFrame) -> pd.Series:
    """Relevance as shown: the judged grade, or "unjudged" for items not in the ground truth."""
    return pd.Series(np.where(frame["judged"].to_numpy(dtype=bool),
                              frame["relevance"].map(lambda v: f"{v:g}").to_numpy(dtype=object), UNJUDGED),
                     index=frame.index)


def side_by_side(first: pd.DataFrame, second: pd.DataFrame, names: tuple[str, str], k: int,
                 features: pd.DataFrame | None = None) -> pd.DataFrame:
    """Two models' lists of one user aligned by item (an item in both is one row).

    ``first`` / ``second``: ``Ranked.user_list`` frames (rank, item_id, score, relevance,
    judged). Items in either top ``k`` are kept; ranks beyond a list are empty. Relevance is
    the judged grade or "unjudged". Item features are joined when given.
    """
    a, b = names
    left = first.assign(item_id=first["item_id"].astype(str))
    right = second.assign(item_id=second["item_id"].astype(str))
    left = left.assign(relevance=_judged(left))
    right = right.assign(relevance=_judged(right))
    keep = set(left.loc[left["rank"] <= k, "item_id"]) | set(right.loc[right["rank"] <= k, "item_id"])
    merged = pd.merge(left[["item_id", "rank", "score", "relevance"]],
                      right[["item_id", "rank", "score", "relevance"]],
                      on="item_id", how="outer", suffixes=(f" · {a}", f" · {b}"))
    merged = merged[merged["item_id"].isin(keep)]
    merged["relevance"] = merged[f"relevance · {a}"].fillna(merged[f"relevance · {b}"])
    merged = merged.drop(columns=[f"relevance · {a}", f"relevance · {b}"])
    order = merged[[f"rank · {a}", f"rank · {b}"]].min(axis=1)
    merged = merged.assign(_o=order).sort_values(["_o", "item_id"], kind="stable").drop(columns="_o")
    cols = ["item_id", "relevance", f"rank · {a}", f"rank · {b}", f"score · {a}", f"score · {b}"]
    merged = merged[cols].reset_index(drop=True)
    if features is not None and "item_id" in features.columns:
        feats = features.assign(item_id=features["item_id"].astype(str)).drop_duplicates("item_id")
        merged = merged.merge(feats, on="item_id", how="left")
    return merged


def has_ties_in_top(frame: pd.DataFrame, k: int) -> bool:
    """Whether the user's top ``k`` shares a score with another item of the list (so averaged
    ties give expected values)."""
    tied = pd.Series(frame["score"].to_numpy(dtype=float)).duplicated(keep=False).to_numpy()
    return bool(tied[: int(k)].any())
