"""What explains a model's failures against another (pure: no Streamlit).

For a pair of models on one per-user metric, the *failing users* are the users counted for
both where the model is worse than the other one (strictly, in the metric's direction).
:func:`overrepresented` then lists, for every value of every user attribute, how many of
the failing users have it against how many of all the users counted: a value whose share
among the failing users is well above its share among everyone points at the cause
(cold-start users, one country, ...). :func:`with_attributes` puts the attributes beside a
table of users.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from metrics_core.metrics import registry

MISSING = "(missing)"
COLUMNS = ["attribute", "value", "failing users", "share of failing", "users", "share of all", "ratio"]


def _labels(attributes: pd.DataFrame) -> pd.DataFrame:
    """The attributes indexed by user id as text, one row per user (the first one kept),
    every value as text."""
    ids = attributes["user_id"].astype(str)
    table = attributes.drop(columns="user_id").astype(str).set_axis(pd.Index(ids, name="user_id"))
    return table[~table.index.duplicated()]


def failing_users(per_user: Mapping[str, pd.DataFrame], model: str, other: str, metric: str) -> pd.Index:
    """Users (ids as text) in both models' per-user tables where ``model`` is worse than
    ``other`` on ``metric``."""
    mine = per_user[model][metric].set_axis(per_user[model].index.astype(str))
    theirs = per_user[other][metric].set_axis(per_user[other].index.astype(str))
    both = pd.concat({"mine": mine, "theirs": theirs}, axis=1, join="inner").dropna()
    worse = both["mine"] < both["theirs"] if registry.higher_is_better(metric) else both["mine"] > both["theirs"]
    return pd.Index(both.index[worse.to_numpy()])


def overrepresented(users: pd.Index, failing: pd.Index, attributes: pd.DataFrame) -> pd.DataFrame:
    """One row per attribute value among ``users`` (all users counted): its users among the
    ``failing`` ones and their share, its users among all and their share, and ``ratio`` =
    share of failing / share of all (above 1: over-represented). Users without a value are
    counted as "(missing)". Sorted by ratio, then failing users (largest first), then
    attribute and value. Empty without failing users or attributes."""
    users = pd.Index(pd.Index(users).astype(str)).drop_duplicates()
    failing = pd.Index(pd.Index(failing).astype(str)).drop_duplicates().intersection(users, sort=False)
    columns = [c for c in attributes.columns if c != "user_id"] if attributes is not None else []
    if not columns or len(failing) == 0:
        return pd.DataFrame(columns=COLUMNS)
    labels = _labels(attributes).reindex(users).fillna(MISSING)
    frames = []
    for column in columns:
        everyone = labels[column].value_counts()
        among = labels.loc[failing, column].value_counts().reindex(everyone.index, fill_value=0)
        frames.append(pd.DataFrame({
            "attribute": column, "value": everyone.index.astype(str),
            "failing users": among.to_numpy(dtype=int), "share of failing": among.to_numpy() / len(failing),
            "users": everyone.to_numpy(dtype=int), "share of all": everyone.to_numpy() / len(users)}))
    out = pd.concat(frames, ignore_index=True)
    out["ratio"] = out["share of failing"] / out["share of all"]
    out = out.sort_values(["ratio", "failing users", "attribute", "value"],
                          ascending=[False, False, True, True], kind="stable")
    return out.reset_index(drop=True)[COLUMNS]


def with_attributes(table: pd.DataFrame, attributes: pd.DataFrame | None) -> pd.DataFrame:
    """``table`` (a ``user_id`` column of text ids) with every user attribute as a column after
    ``user_id`` ("(missing)" for a user without one); a column name the table already has is
    suffixed " (attribute)"."""
    if attributes is None or len([c for c in attributes.columns if c != "user_id"]) == 0:
        return table
    labels = _labels(attributes)
    labels = labels.rename(columns={c: f"{c} (attribute)" for c in labels.columns if c in table.columns})
    joined = labels.reindex(table["user_id"].astype(str)).fillna(MISSING)
    out = table.copy()
    for i, column in enumerate(joined.columns):
        out.insert(1 + i, column, joined[column].to_numpy(dtype=object))
    return out


def pair_gap(per_user: Mapping[str, pd.DataFrame], model: str, other: str, metric: str,
             user_ids: pd.Series) -> np.ndarray:
    """For each of ``user_ids`` (text), how far ``model`` is behind ``other`` on ``metric``
    (other - model in the metric's direction; NaN where either has no value)."""
    ids = user_ids.astype(str)
    mine = per_user[model][metric].set_axis(per_user[model].index.astype(str)).reindex(ids).to_numpy(dtype=float)
    theirs = per_user[other][metric].set_axis(per_user[other].index.astype(str)).reindex(ids).to_numpy(dtype=float)
    return theirs - mine if registry.higher_is_better(metric) else mine - theirs
