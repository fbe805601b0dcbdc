"""The decision brief as text: the sentences and readable tables the dashboard's Brief page, the
HTML report and a notebook show, one set of strings, so all of them read the same digits.

Each function reads a :class:`metrics_core.brief.build.Brief` (built by :func:`metrics_core.brief.build.build_brief`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from metrics_core import formats as fmt
from metrics_core.analysis.segment_compare import family_sizes
from metrics_core.units import count, noun
from metrics_core.analysis.verdicts import CORRECTION_NAMES, SAME, TEST_NAMES, lift_text


def headline(brief: Any) -> str:
    """``Baseline popularity; challengers two_tower, reranker; ndcg@10 and recall@10; paired t-test,
    Holm correction, α = 0.05.``"""
    d = brief.decision
    metrics = " and ".join(d.metrics) if len(d.metrics) <= 2 else ", ".join(d.metrics)
    return (f"Baseline {d.baseline}; {'challenger' if len(d.challengers) == 1 else 'challengers'} "
            f"{', '.join(d.challengers)}; {metrics}; {TEST_NAMES.get(d.test, d.test)}, "
            f"{CORRECTION_NAMES.get(d.correction, d.correction)} correction, α = {d.alpha:g}.")


def verdict_lines(brief: Any) -> list[str]:
    """One line per challenger x metric: the verdict, the lift with its interval, the adjusted
    p-value, the detectable lift, the users (queries, sessions: the decision's unit) compared and
    the challenger's coverage."""
    unit = brief.decision.unit
    lines = []
    for _, r in brief.verdicts.iterrows():
        mark = r["verdict"]
        if mark == SAME:
            head = f"{r['model']}: no significant difference from {r['baseline']} on {r['metric']}"
        else:
            word = "better" if mark.startswith("▲") else "worse"
            head = f"{r['model']}: {mark.split(' ')[0]} {word} than {r['baseline']} on {r['metric']}"
        served = brief.served.get(r["model"])
        coverage = ("" if served is None or served == brief.n_evaluated else
                    f"; served {fmt.count(served)} of {count(brief.n_evaluated, unit)}")
        lines.append(f"{head}: {lift_text(r['lift'], r['lift_ci_low'], r['lift_ci_high'])}, "
                     f"adjusted p {fmt.pvalue(r['p_adjusted'])}, detectable lift "
                     f"{fmt.percent(r['mde_relative'], signed_=False)}, {count(r['n'], unit)} compared"
                     f"{coverage}")
    return lines


def head_to_head_lines(brief: Any) -> list[str]:
    """The winner against the runner-up, for each primary metric whose best two models are both
    challengers: ``Best two on ndcg@10: hybrid against dense directly: hybrid is better than dense ...``."""
    table = brief.head_to_head
    if table is None or not len(table):
        return []
    unit = brief.decision.unit
    return [f"Best two on {r['metric']}, compared directly over {count(r['n'], unit)}: {r['sentence']}"
            for _, r in table.iterrows()]


def verdict_rows(brief: Any) -> pd.DataFrame:
    """One readable row per challenger x metric."""
    v = brief.verdicts
    return pd.DataFrame({
        "challenger": v["model"].astype(str), "metric": v["metric"].astype(str), "verdict": v["verdict"],
        "lift [95% CI]": [lift_text(a, b, c) for a, b, c in zip(v["lift"], v["lift_ci_low"], v["lift_ci_high"])],
        "adjusted p": [fmt.pvalue(p) for p in v["p_adjusted"]],
        "baseline mean": [fmt.metric(x) for x in v["baseline_mean"]],
        "challenger mean": [fmt.metric(x) for x in v["model_mean"]],
        "detectable lift": [fmt.percent(x, signed_=False) for x in v["mde_relative"]],
        brief.decision.unit: [fmt.count(n) for n in v["n"]],
    })


def segment_loss_rows(brief: Any, limit: int = 8) -> pd.DataFrame:
    """The segments where a challenger loses (largest loss first), at most ``limit``; the metric
    column only when the brief has several primary metrics."""
    s = brief.segment_losses.head(limit)
    out = pd.DataFrame({
        "segment": [f"{a}: {v}" for a, v in zip(s["attribute"].astype(str), s["segment"].astype(str))],
        "challenger": s["model"].astype(str), "metric": s["metric"].astype(str),
        "lift [95% CI]": [lift_text(a, b, c) for a, b, c in zip(s["lift"], s["lift_ci_low"], s["lift_ci_high"])],
        "adjusted p": [fmt.pvalue(p) for p in s["p_adjusted"]],
        brief.decision.unit: [fmt.count(n) for n in s["n"]],
    })
    return out if len(brief.decision.metrics) > 1 else out.drop(columns="metric")


def family_sentence(correction: str, family: str, segments: pd.DataFrame, attributes,
                    unit: str = "users") -> str:
    """The family of tests the segment p-values are adjusted over, named as every surface names it.

    ``family``: the scope (:data:`metrics_core.analysis.segment_compare.FAMILIES`); ``segments``: the segment
    rows (:func:`metrics_core.analysis.segment_compare.segment_rows`), whose families are counted;
    ``attributes``: the attributes compared; ``unit``: what a row is (``"queries"``: "every segment
    of every query attribute")."""
    sizes = family_sizes(segments, family)
    total = sum(sizes)
    owner = f"{noun(unit, 1)} attribute"
    listed = ", ".join(map(str, attributes))
    name = CORRECTION_NAMES.get(correction, correction)
    scope = {"analysis": f"every segment of every {owner} ({listed}) x metric x challenger",
             "attribute": f"each {owner} apart ({listed}): its segments x metric x challenger",
             "attribute_metric": f"each {owner} and metric apart ({listed}): the segments x challenger",
             "segment": "each segment apart: metric x challenger"}[family]
    counted = fmt.plural(total, "test")
    if len(sizes) > 1:
        counted += f" in {fmt.count(len(sizes))} families of up to {fmt.count(max(sizes))}"
    if correction == "none":
        return f"not adjusted ({counted}: {scope}; no correction)"
    return f"adjusted over {counted}: {scope}, {name} correction"


def segment_note(brief: Any) -> str:
    """What the segment rows are about: how many tests, which family, which correction."""
    d = brief.decision
    if not brief.attributes:
        return f"No {noun(d.unit, 1)} attributes: no segment was compared."
    found = len(brief.segment_losses)
    lead = (f"{fmt.plural(found, 'segment row')} where a challenger that does not lose overall is significantly worse"
            if found else "No segment where a challenger that does not lose overall is significantly worse")
    return (f"{lead}: p-values {family_sentence(d.correction, d.family, brief.segments, brief.attributes, d.unit)}, "
            f"α = {d.alpha:g}.")


def accounting_text(brief: Any) -> str:
    """Why the ground truth's rows became the rows counted, in one paragraph
    (:func:`metrics_core.analysis.population.accounting`)."""
    return " ".join(brief.accounting)


def failure_note(brief: Any) -> str:
    """What the failure table counts, in the decision's unit."""
    return (f"{noun(brief.decision.unit).capitalize()} where the challenger scores below the baseline, by what "
            "went wrong (not served; nothing relevant found: a score of 0; relevant items ranked lower), and each "
            "group's share of the summed loss.")


def failure_rows(brief: Any, per_pair: int = 3) -> pd.DataFrame:
    """For each challenger x metric with a loss, its failure groups, largest share of the loss first;
    the metric column only when the brief has several primary metrics."""
    f = brief.failures.groupby(["challenger", "metric"], sort=False).head(per_pair)
    out = pd.DataFrame({
        "challenger": f["challenger"].astype(str), "metric": f["metric"].astype(str), "group": f["group"],
        brief.decision.unit: [fmt.count(n) for n in f["users"]],
        "share of loss": [fmt.percent(x, signed_=False) for x in f["share"]],
    })
    return out if len(brief.decision.metrics) > 1 else out.drop(columns="metric")
