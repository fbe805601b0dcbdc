"""The Compare page's readable tables (pure: no Streamlit), from
:func:`metrics_core.analysis.compare.compare` results.

``verdict_table``: one row per challenger x metric with both means, the difference, the
relative lift with its 95% interval, the adjusted p-value of the chosen test, a marker,
the minimum detectable effect and one sentence that says over which users and names a
model of the pair that did not serve every user. ``pair_matrix``: lift of every model
(rows) against every other (columns). ``regressions``: users sorted by how much the
challenger loses.
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from . import format as fmt

# The words of a verdict are metrics_core's, so the Brief, Compare and the report say the same.
from metrics_core.analysis.verdicts import (BETTER, CORRECTION_NAMES, SAME, WORSE, lift_text, marker,
                                            sentence as _sentence)


def sentence(row, n_comparisons: int, correction: str, alpha: float, who: str | None = None,
             coverage: Mapping[str, str] | None = None, unit: str = "users") -> str:
    """"two_tower is better than popularity on ndcg@10 by +121.0% [+115.0%, +127.0%], significant after
    Holm over 6 comparisons", then over whom (``who``) and, for the baseline and the challenger,
    their ``coverage`` sentence when they did not serve every user."""
    tail = (f" {unit.capitalize()}: {who}." if who else "") + "".join(
        f" {coverage[m]}" for m in dict.fromkeys([row["baseline"], row["model"]]) if coverage and m in coverage)
    return _sentence(row, n_comparisons, correction, alpha, unit) + tail


def verdict_table(table: pd.DataFrame, correction: str, alpha: float, who: str | None = None,
                  coverage: Mapping[str, str] | None = None, unit: str = "users") -> pd.DataFrame:
    """The readable table of a comparison (formatted strings, in the order of ``table``; the
    baseline is the same for every row and stated by the page); ``who`` / ``coverage``: see
    :func:`sentence`."""
    n = len(table)
    rows = []
    for _, r in table.iterrows():
        rows.append({
            "metric": r["metric"], "challenger": r["model"], "verdict": marker(r),
            "lift [95% CI]": lift_text(r["lift"], r["lift_ci_low"], r["lift_ci_high"]),
            "adjusted p": fmt.pvalue(r["p_adjusted"]),
            "baseline mean": fmt.metric(r["baseline_mean"]), "challenger mean": fmt.metric(r["model_mean"]),
            "difference": fmt.signed(r["diff"]), f"{unit} paired": fmt.count(r["n"]),
            "detectable lift": fmt.percent(r["mde_relative"], signed_=False),
            "sentence": sentence(r, n, correction, alpha, who, coverage, unit),
        })
    return pd.DataFrame(rows)


def pair_matrix(tables: Mapping[str, pd.DataFrame], metric: str) -> pd.DataFrame:
    """Model x model matrix of ``lift [CI] marker`` from comparison tables keyed by baseline
    (rows: challenger, columns: baseline; the diagonal is empty)."""
    names = list(tables)
    out = pd.DataFrame("", index=names, columns=names)
    for base, table in tables.items():
        for _, r in table[table["metric"] == metric].iterrows():
            out.loc[r["model"], base] = f"{fmt.percent(r['lift'])} {marker(r).split(' ')[0]}"
    return out.rename_axis("challenger \\ baseline")


def regressions(pairs: pd.DataFrame, higher_is_better: bool, n: int) -> pd.DataFrame:
    """The ``n`` users where the challenger loses most (largest loss first, in the metric's
    direction); users without a loss are left out. ``pairs``: ``user_id, baseline, challenger``."""
    diff = pairs["challenger"] - pairs["baseline"]
    loss = -diff if higher_is_better else diff
    out = pairs.assign(difference=diff, _loss=loss)
    out = out[out["_loss"] > 0].sort_values(["_loss", "user_id"], ascending=[False, True], kind="stable")
    return out.drop(columns="_loss").head(int(n)).reset_index(drop=True)


def segment_rows(tables: Mapping[str, pd.DataFrame], correction: str, alpha: float) -> pd.DataFrame:
    """Per-segment comparison rows (``tables``: segment -> compare table computed without a
    correction), adjusted together over every segment x comparison, as readable rows."""
    from metrics_core.analysis.stats import adjust_pvalues

    frames = [t.assign(segment=seg) for seg, t in tables.items() if len(t)]
    if not frames:
        return pd.DataFrame(columns=["segment", "metric", "challenger", "users paired", "lift [95% CI]",
                                     "adjusted p", "verdict"])
    both = pd.concat(frames, ignore_index=True)
    both["p_adjusted"] = adjust_pvalues(both["p_value"].to_numpy(), correction)
    both["significant"] = (both["p_adjusted"] < alpha).fillna(False).astype(bool)
    return adjusted_segment_rows(both)


def adjusted_segment_rows(rows: pd.DataFrame, unit: str = "users") -> pd.DataFrame:
    """Segment rows already adjusted over their family (:func:`metrics_core.brief.build.brief_segments`:
    ``segment``, ``metric``, ``model``, ``n``, the lift and its interval, ``p_adjusted``,
    ``significant``, ``diff``) as the readable rows of :func:`segment_rows`."""
    return pd.DataFrame({
        "segment": rows["segment"].astype(str), "metric": rows["metric"], "challenger": rows["model"],
        f"{unit} paired": [fmt.count(v) for v in rows["n"]],
        "lift [95% CI]": [lift_text(a, b, c) for a, b, c in zip(rows["lift"], rows["lift_ci_low"],
                                                                 rows["lift_ci_high"])],
        "adjusted p": [fmt.pvalue(p) for p in rows["p_adjusted"]],
        "verdict": [marker(r) for r in rows[["significant", "metric", "diff"]].to_dict("records")],
    })


def resampling_note(test: str, users: int, interval: bool, sign_flips: bool = True) -> str:
    """What is shown while the resampled statistics of many users are computed on the server:
    the randomization test's ``sign_flips`` (under that test) and/or the difference's ``interval``."""
    parts = []
    if test == "randomization" and sign_flips:
        parts.append("randomization p-values are the normal approximation of the sign-flip distribution until "
                     "the sign flips are done")
    if interval:
        parts.append("the bootstrap interval of the difference follows")
    return (f"Resampling {fmt.plural(users, 'user')} runs on the server: {'; '.join(parts)}. "
            "The page updates itself when it is done.")


def challengers_after_baseline_change(challengers, old: str, new: str, names) -> list[str]:
    """The challengers once the baseline moves from ``old`` to ``new``: the new baseline
    leaves them and the old one takes its place (order kept, only models of ``names``)."""
    moved = [old if c == new else c for c in challengers]
    return [c for c in dict.fromkeys(moved) if c in names and c != new]
