"""Which metrics the dashboard offers, and the help text shown beside each.

The lists come from :mod:`metrics_core.registry`, the one table that declares
every metric, so a metric added there joins the lists below without editing them.
Only orders and selections are named here or in a page: the order ranking
metrics are offered in (``_FIRST``), the metrics drawn against K (``CURVES``),
and a few pages' default or fixed selections (Overview's error metrics, Curves'
scored-row metrics, Explain's metrics, Share's report defaults). A metric's help
is its meaning, its formula, its direction and the settings it is computed
with right now (K, gain, tie rule and any convention that shapes it).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from metrics_core import registry
from metrics_core.plot import CURVE_METRICS
from metrics_core.errors import MetricsError

#: Order in which the pages offer ranking metrics (the first is each selector's default);
#: metrics the registry adds later follow in the registry's order.
_FIRST = ("ndcg", "map", "recall", "precision", "f1", "mrr", "hit_rate", "dcg", "cg", "r_precision")


def _ordered(names) -> tuple[str, ...]:
    names = list(dict.fromkeys(names))
    return tuple(sorted(names, key=lambda n: (_FIRST.index(n) if n in _FIRST else len(_FIRST), names.index(n))))


#: Ranking metrics with one value per user (Overview, Distributions, Failures, Compare, Share).
PER_USER = _ordered(m.name for m in registry.metrics_of_kind("ranking") if m.per_user)
#: The Overview's ranking table adds the pooled metrics (one value over all users).
RANKING = PER_USER + tuple(m.name for m in registry.metrics_of_kind("pooled"))
#: Metrics over scored rows (classification, regression, calibration) and per-user AUC.
SCORED = tuple(dict.fromkeys(m.name for m in registry.metrics_of_kind("scored", "scored_per_user")))
#: Beyond-accuracy metrics of the top-k lists. The dashboard has no upload for a user history
#: table, so metrics that require one (Microsoft Recommenders' serendipity) are not offered;
#: popularity comes from the ground truth, as ``mc.evaluate`` does without an interactions table.
DIVERSITY = tuple(m.name for m in registry.metrics_of_kind("diversity") if "history" not in m.needs)
#: Metrics drawn against K on the metric-vs-K panels (cheap, per user, one kernel pass); mc.plot draws the same.
CURVES = CURVE_METRICS
#: Scored-row metrics that read the score as a probability of the label.
NEEDS_PROBABILITIES = tuple(dict.fromkeys(
    m.name for m in registry.METRICS if "probabilities" in m.needs))


def label(name: str, k: int) -> str:
    """The label a metric is requested with at cutoff ``k``: ``ndcg@10``; ``r_precision`` and the
    scored-row metrics take no cutoff."""
    entries = [m for m in registry.METRICS if m.name == name]
    with_cutoff = [m for m in entries if m.cutoff != registry.CUTOFF_NONE and m.kind != "scored"]
    return f"{name}@{k}" if with_cutoff else name


def labels(names: Sequence[str], k: int) -> list[str]:
    """:func:`label` of each name, in order."""
    return [label(n, k) for n in names]


def scored_labels() -> list[str]:
    """Scored-row metric labels (no cutoff: ``precision`` is classification precision here)."""
    return list(SCORED)


def _settings_text(settings: Mapping[str, object] | None) -> str:
    if not settings:
        return ""
    shown = ", ".join(f"{key} {value}" for key, value in settings.items() if value not in (None, ""))
    return f" Computed with: {shown}." if shown else ""


def unjudged_sentence(conventions: Mapping[str, object] | None = None) -> str:
    """What the scored-row metrics do with rows that have no judgment, under the ``unjudged_rows``
    convention in force (its default when ``conventions`` does not set it)."""
    from metrics_core.conventions import BY_NAME

    value = (conventions or {}).get("unjudged_rows") or BY_NAME["unjudged_rows"].default
    if value == "exclude":
        return ("Rows without a judgment in the ground truth are left out (convention unjudged_rows = "
                "exclude).")
    return ("Rows without a judgment in the ground truth count as negatives (label 0, relevance 0; "
            "convention unjudged_rows = negative; the sidebar's Conventions can leave them out).")


def help_for(metric_label: str, settings: Mapping[str, object] | None = None) -> str:
    """Tooltip text of a metric label: meaning, formula, direction, default convention and the
    settings in force (``{"K": 10, "gain": "linear", "ties": "average"}``); for a metric over
    scored rows, what it does with unjudged rows. Unknown labels (e.g. a column the page added)
    get an empty string."""
    try:
        entry = registry.lookup(str(metric_label))
    except MetricsError:
        return ""
    convention = f" Convention: {entry.convention}." if entry.convention else ""
    rows = f" {unjudged_sentence(settings)}" if entry.kind in ("scored", "scored_per_user") else ""
    return f"{entry.tooltip}{convention}{rows}{_settings_text(settings)}"


def help_table(metric_labels: Sequence[str], settings: Mapping[str, object] | None = None) -> dict[str, str]:
    """``{label: help_for(label)}`` for the labels that are metrics."""
    return {m: h for m in metric_labels if (h := help_for(m, settings))}
