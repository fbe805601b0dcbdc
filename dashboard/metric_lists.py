"""Which metrics the dashboard offers, and the help text shown beside each.

The lists come from :mod:`metrics_core.metrics.registry`, the one table that declares
every metric: a metric's ``sections`` say on which pages it is shown and where it
is a default selection, so a metric added there joins the lists below without
editing them, and no page names a metric. Ranking metrics are offered with the
``headline`` ones first (the first is each selector's default), then the others,
each in the registry's order. A metric's help is its meaning, its formula, its
direction and the settings it is computed with right now (K, gain, tie rule and
any convention that shapes it).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from metrics_core.metrics import registry
from metrics_core.errors import MetricsError

_HEADLINE = {m.name for m in registry.metrics_in("headline", "ranking")}


def _names(section: str, *kinds: str) -> tuple[str, ...]:
    """Names of the metrics of ``section`` (of ``kinds``), in the registry's order."""
    return tuple(dict.fromkeys(m.name for m in registry.metrics_in(section, *kinds)))


def _offered(names: Sequence[str]) -> tuple[str, ...]:
    """``names`` with the headline ranking metrics first, the order of each part kept."""
    return (*(n for n in names if n in _HEADLINE), *(n for n in names if n not in _HEADLINE))


#: Ranking metrics with one value per user (Overview, Distributions, Failures, Compare, Share).
PER_USER = _offered(_names("per_user", "ranking"))
#: The Overview's ranking table: its per-user ranking metrics, then the pooled ones (one value over all users).
RANKING = _offered(_names("overview", "ranking")) + _names("overview", "pooled")
#: Metrics over scored rows (classification, regression, calibration) and per-user AUC.
SCORED = _names("overview", "scored", "scored_per_user")
#: Beyond-accuracy metrics of the top-k lists. The dashboard has no upload for a user history
#: table: a metric that requires one is in no section; popularity comes from the ground truth,
#: as ``mc.evaluate`` does without an interactions table.
DIVERSITY = _names("overview", "diversity")
#: Metrics drawn against K on the metric-vs-K panels (the registry's ``metric_vs_k``); mc.plot draws the same.
CURVES = registry.curve_metrics()
#: The Curves page's chart of the metric at every cutoff K.
CURVES_K = _names("curves_k")
#: the largest K of the Curves page's ranking metrics at every cutoff
CURVES_K_MAX = 50
#: The Curves page's table over every scored row pooled.
POOLED_ROWS = _names("pooled_rows")
#: Scored-row metrics that classify a row at the ``threshold`` convention (the confusion matrix's table).
THRESHOLD = _names("threshold")
#: Scored-row metrics that compare the score with the relevance grade (the Overview's error metrics).
ERRORS = _names("errors")
#: The metrics the Explain page offers.
EXPLAIN = _offered(_names("explain"))
#: The Share page's default metrics of the HTML report.
SHARE_DEFAULT = _names("share_default")
#: Scored-row metrics that read the score as a probability of the label.
NEEDS_PROBABILITIES = tuple(dict.fromkeys(
    m.name for m in registry.METRICS if "probabilities" in m.needs))
#: Metrics that read the item-features table (left out while none is uploaded).
NEEDS_FEATURES = tuple(dict.fromkeys(m.name for m in registry.METRICS if "item_features" in m.needs))


def one(section: str) -> str:
    """The one metric a page shows in ``section`` (``roc``: the value named beside the ROC curves)."""
    names = _names(section)
    if len(names) != 1:
        raise MetricsError(f"metric section {section!r} holds {len(names)} metrics; the page shows one")
    return names[0]


def higher_is_better(metric_label: str) -> bool:
    """Whether a larger value of this metric is better (unknown labels: higher)."""
    return registry.higher_is_better(metric_label)


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
    from metrics_core.metrics.conventions import BY_NAME

    value = (conventions or {}).get("unjudged_rows") or BY_NAME["unjudged_rows"].default
    if value == "exclude":
        return ("Rows without a judgment in the ground truth are left out (convention unjudged_rows = "
                "exclude).")
    return ("Rows without a judgment in the ground truth count as negatives (label 0, relevance 0; "
            "convention unjudged_rows = negative; the sidebar's Conventions can leave them out).")


def missing_sentence(conventions: Mapping[str, object] | None = None, unit: str = "user") -> str:
    """How a ``unit`` (user, query, ...) of the ground truth that a model's run does not answer counts
    in the ranking metrics, under the ``missing_users`` convention in force (its default when
    ``conventions`` does not set it)."""
    from metrics_core.metrics.conventions import BY_NAME

    value = (conventions or {}).get("missing_users") or BY_NAME["missing_users"].default
    if value == "exclude":
        return (f"A {unit} of the ground truth that a model's run does not answer is left out of that model's "
                f"means (convention missing_users = exclude).")
    return (f"A {unit} of the ground truth that a model's run does not answer counts as 0 at every K "
            f"(convention missing_users = zero; the sidebar's Conventions can leave it out).")


def missing_by_library(presets) -> str:
    """Which libraries score a missing user 0 and which leave it out, from the presets table
    (:func:`metrics_core.presets`, its ``missing_users`` column)."""
    groups = presets.groupby("missing_users").groups
    zero = ", ".join(sorted(groups.get("zero", [])))
    left_out = ", ".join(sorted(groups.get("exclude", [])))
    return (f"A user of the ground truth missing from the run counts as 0 for {zero or 'no library'}; "
            f"it is left out for {left_out or 'no library'} (convention missing_users). When the two "
            f"libraries compared below differ there, the path shows that step.")


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
