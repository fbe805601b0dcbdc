"""Readable verdicts of a paired comparison (rows of :func:`metrics_core.analysis.compare.compare`):
the marker, the lift with its interval and one sentence, shared by the dashboard, the HTML
report and the decision brief so that each says the same words about the same numbers."""

from __future__ import annotations

from metrics_core import formats as fmt
from metrics_core.metrics import registry
from metrics_core.units import count

BETTER, WORSE, SAME = "▲ better", "▼ worse", "– no significant difference"
CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "no correction"}
TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "Fisher randomization"}


def marker(row) -> str:
    """Better / worse / no significant difference, in the metric's direction."""
    if not bool(row["significant"]):
        return SAME
    higher = registry.higher_is_better(str(row["metric"]))
    return BETTER if (row["diff"] > 0) == higher else WORSE


def lift_text(lift: float, low: float, high: float) -> str:
    """``+121.0% [+115.0%, +127.0%]``."""
    return f"{fmt.percent(lift)} [{fmt.percent(low)}, {fmt.percent(high)}]"


def sentence(row, n_comparisons: int, correction: str, alpha: float, unit: str = "users") -> str:
    """"two_tower is better than popularity on ndcg@10 by +121.0% [+115.0%, +127.0%], significant after
    Holm over 6 comparisons (adjusted p < 0.0001, α = 0.05)"; a non-significant row says how large a
    lift the users (queries, sessions: ``unit``, :mod:`metrics_core.units`) compared could have detected."""
    mark = marker(row)
    lift = lift_text(row["lift"], row["lift_ci_low"], row["lift_ci_high"])
    comparisons = fmt.plural(n_comparisons, "comparison")
    corrected = (f"after {CORRECTION_NAMES.get(correction, correction)} over {comparisons}"
                 if correction != "none" else f"without correction ({comparisons})")
    if mark == SAME:
        mde = fmt.percent(row["mde_relative"], signed_=False)
        return (f"{row['model']} and {row['baseline']} do not differ significantly on {row['metric']} "
                f"({lift}, adjusted p {fmt.pvalue(row['p_adjusted'])} {corrected}); with "
                f"{count(row['n'], unit)} a difference of about {mde} would have been detected.")
    word = "better" if mark == BETTER else "worse"
    return (f"{row['model']} is {word} than {row['baseline']} on {row['metric']} by {lift}, "
            f"significant {corrected} (adjusted p {fmt.pvalue(row['p_adjusted'])}, α = {alpha:g}).")
