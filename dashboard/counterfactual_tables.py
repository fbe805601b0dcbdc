"""Tables and sentences of the Counterfactual page, built from ``mc.off_policy``'s result.

Pure functions of an :class:`metrics_core.ope.OffPolicy` (no Streamlit), tested on their own:
the verdict (each model's primary estimate against the logging policy's value, the lift and its
interval), every estimator side by side, the weights' diagnostics, the brief's line, and the
contexts that weigh most on a model's estimate (the Failures page's breakdown).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from metrics_core.ope.evaluate import LINES, NAMES

#: logs above this many rows get IPS and SNIPS only (the reward model of DM/DR is fitted per model)
LARGE_LOG_ROWS = 200_000
#: bootstrap resamples of the dashboard's intervals
N_BOOTSTRAP = 500


def estimator_name(code: str) -> str:
    """The estimator's name as people write it (``switch_dr`` -> ``switch-DR``)."""
    return NAMES.get(code, code)


def estimators_for(rows: int) -> list[str] | None:
    """The estimators the page asks for on a log of ``rows`` rows (None: every one the log allows)."""
    return ["ips", "snips"] if rows > LARGE_LOG_ROWS else None


def verdict_table(res) -> pd.DataFrame:
    """One row per model: its primary estimate with the interval, the lift over the logging policy with
    its interval, and the verdict (``better``/``worse``/``no clear difference``, ``(unreliable)`` when a
    warning holds)."""
    rows = []
    for _, v in res.verdicts.iterrows():
        e = res.estimates[(res.estimates["model"] == v["model"]) & (res.estimates["estimator"] == v["estimator"])]
        e = e.iloc[0]
        rows.append({"model": v["model"], "estimator": estimator_name(v["estimator"]), "value": e["value"],
                     "low": e["low"], "high": e["high"], "lift": e["lift"], "lift low": e["lift_low"],
                     "lift high": e["lift_high"], "verdict": v["verdict"]})
    return pd.DataFrame(rows, columns=["model", "estimator", "value", "low", "high", "lift", "lift low",
                                       "lift high", "verdict"])


def estimates_table(res) -> pd.DataFrame:
    """Every estimate: model, estimator, value, interval, lift and its interval."""
    out = res.estimates.copy()
    out["estimator"] = out["estimator"].map(estimator_name)
    return out.rename(columns={"lift_low": "lift low", "lift_high": "lift high"}).reset_index(drop=True)


def _clipping(settings: dict) -> str:
    clip = float(settings.get("clip", math.inf))
    return "none" if math.isinf(clip) else f"at {clip:g}"


def diagnostics_table(res) -> pd.DataFrame:
    """Per model: rounds, effective sample size and its share of the rounds, the largest and the mean
    importance weight, the weight clipping applied and the rounds it cut, the policy's probability on items the log never
    shows, the logged contexts without a list, and the number of warnings."""
    d = res.diagnostics
    return pd.DataFrame({
        "model": d["model"], "rounds": d["rounds"], "effective sample size": d["ess"],
        "ESS share": d["ess_share"], "max weight": d["max_weight"], "mean weight": d["mean_weight"],
        "clipping": _clipping(res.settings), "rounds clipped": d["clipped_rounds"],
        "unlogged probability": d["unlogged_mass"],
        "contexts without a list": d["contexts_without_list"],
        "warnings": [len(res.warnings.get(m, [])) for m in d["model"]]})


#: the diagnostics table's columns as the page shows them: (short heading, number format or None, hover text)
DIAGNOSTICS_COLUMNS = {
    "model": ("model", None, "The model whose scores define the evaluation policy."),
    "rounds": ("rounds", None, "Logged rounds (rows of the log) the estimate reads."),
    "effective sample size": ("ESS", "%.0f", "Kish's effective sample size of the importance weights w = "
                              "pi_e / pi_b: (sum w)^2 / sum w^2. Far below the rounds: a few rounds decide the "
                              "estimate."),
    "ESS share": ("ESS share", "percent", "The effective sample size as a share of the rounds (a warning below "
                  f"{LINES['ess_line']:.0%})."),
    "max weight": ("max w", "%.3g", "The largest importance weight pi_e / pi_b of one round."),
    "mean weight": ("mean w", "%.3f", "The mean importance weight: 1 in expectation when the logging policy "
                    "covers the evaluation policy (a warning beyond "
                    f"{LINES['mean_weight_se']:g} standard errors from 1)."),
    "clipping": ("clip", None, "The weight clipping IPS and DR use (the page's Clip weights at)."),
    "rounds clipped": ("clipped", None, "Rounds whose weight the clipping cut."),
    "unlogged probability": ("unlogged", "percent", "The policy's probability on items the log never shows, "
                             "averaged over the rounds: IPS, SNIPS and DR cannot see their reward (a warning "
                             f"above {LINES['unlogged_line']:.0%})."),
    "contexts without a list": ("no list", None, "Logged contexts (users) the model's run has no list for: "
                                "the policy counts as showing nothing there."),
    "warnings": ("warnings", None, "How many warnings the estimate has (written out under the table)."),
}


def warning_lines(res) -> list[tuple[str, str]]:
    """(model, sentence) of every warning, in model order."""
    return [(model, w) for model in res.diagnostics["model"] for w in res.warnings.get(model, [])]


def logging_line(res) -> str:
    """The logging policy's value (the mean logged reward) with its interval and the rounds."""
    lg = res.logging
    interval = "" if not np.isfinite(lg.get("low", math.nan)) else \
        f" (95% {lg['low']:.4g} to {lg['high']:.4g})"
    return f"Logging policy: mean reward {lg['value']:.4g}{interval} over {lg['rounds']:,} logged rounds."


def brief_line(res) -> str:
    """One sentence for the brief: the models the primary estimator finds better than the logging policy,
    the best of them with its lift, and how many are unreliable."""
    table = verdict_table(res)
    if table.empty:
        return "Counterfactual: no model to estimate."
    estimator = table["estimator"].iloc[0]
    better = table[table["verdict"] == "better"]
    unreliable = int(table["verdict"].str.endswith("(unreliable)").sum())
    tail = f"; {unreliable} of {len(table)} estimate(s) unreliable (see the diagnostics)" if unreliable else ""
    if better.empty:
        best = table.loc[table["value"].idxmax()]
        lift = f"{best['lift']:+.1%}" if np.isfinite(best["lift"]) else "n/a"
        return (f"Counterfactual ({estimator}): no model is clearly better than the logging policy on these logs; "
                f"the highest estimate is {best['model']}'s ({lift}){tail}.")
    top = better.loc[better["lift"].idxmax()]
    return (f"Counterfactual ({estimator}): {len(better)} of {len(table)} model(s) would earn more than the logging "
            f"policy; best {top['model']}, {top['lift']:+.1%} (95% {top['lift low']:+.1%} to {top['lift high']:+.1%})"
            f"{tail}.")


def context_table(res, model: str, estimator: str, n: int = 20) -> pd.DataFrame:
    """The ``n`` contexts that weigh most on ``model``'s ``estimator`` estimate (largest absolute
    contribution first): user_id, rounds, logged reward, importance weight, contribution (the context's
    terms over the log's rounds: the contributions add up to the estimate) and its share of the estimate."""
    per = res.per_context[res.per_context["model"] == model]
    if estimator not in per.columns:
        return pd.DataFrame(columns=["user_id", "rounds", "reward", "weight", "contribution", "share"])
    total = float(per[estimator].sum())
    out = pd.DataFrame({"user_id": per["user_id"].astype(str), "rounds": per["rounds"], "reward": per["reward"],
                        "weight": per["weight"], "contribution": per[estimator]})
    out["share"] = out["contribution"] / total if total else np.nan
    order = np.argsort(-np.abs(out["contribution"].to_numpy()), kind="stable")
    return out.iloc[order[:n]].reset_index(drop=True)


__all__ = ["LARGE_LOG_ROWS", "N_BOOTSTRAP", "brief_line", "context_table", "diagnostics_table", "estimates_table",
           "estimator_name", "estimators_for", "logging_line", "verdict_table", "warning_lines"]


#: the figure of every estimator (:func:`estimates_figure`): what it shows, as the page's choice labels it
FIGURE_MEASURES = {"value": "estimated values", "lift": "lift over the logging policy"}


def estimates_figure(res, measure: str):
    """Every estimator of every model with its bootstrap interval (``mc.plot.off_policy``): the estimated
    values beside the logging policy's (``measure="value"``) or the lifts over it (``"lift"``)."""
    from metrics_core.outputs import plot

    return plot.off_policy(res, measure)
