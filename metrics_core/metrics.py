"""The metric registry: names such as ``"ndcg@10"`` -> what to compute.

Names are case-insensitive; ``@k`` is optional and means the whole list when
absent. ``k`` is a whole number from 1 to ``MAX_K`` (2^62), kept as given (P@k
divides by it) while memory is sized by the longest list, so ``ndcg@1000000000``
on a short file costs what ``ndcg`` costs. ``precision``, ``recall`` and ``f1`` *with* ``@k`` are ranking metrics;
without it they are the classification metrics at ``threshold``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from .errors import MetricsError

# base name -> (kind, family in the ranking kernel or None)
RANKING = {
    "cg": "cg", "dcg": "dcg", "ndcg": "ndcg", "map": "ap", "mrr": "rr",
    "precision": "precision", "recall": "recall", "f1": "f1",
    "hit_rate": "hit", "r_precision": "r_precision",
}
POOLED = {"hit_ratio"}
SCORED = {"auc", "pr_auc", "logloss", "rmse", "mae", "accuracy", "precision", "recall", "f1", "gauc", "pcopc"}
DIVERSITY = {"ils", "coverage", "novelty", "personalization"}
ALIASES = {
    "p": "precision", "r": "recall", "ndcg_cut": "ndcg", "map_cut": "map", "ap": "map",
    "recip_rank": "mrr", "rr": "mrr", "success": "hit_rate", "hr": "hit_rate", "hit": "hit_rate",
    "rprec": "r_precision", "r-precision": "r_precision", "roc_auc": "auc", "log_loss": "logloss",
    "average_precision": "pr_auc", "ap_score": "pr_auc", "copc": "pcopc", "ctr_calibration": "pcopc",
    "intra_list_similarity": "ils",
}
METRIC_NAMES = sorted(set(RANKING) | POOLED | SCORED | DIVERSITY)
_TAKES_K = set(RANKING) | POOLED | DIVERSITY
_NO_K = {"r_precision"} | (SCORED - {"precision", "recall", "f1"})
MAX_K = 2**62
_PATTERN = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_\-]*)\s*(?:@\s*(-?[0-9]+(?:\.[0-9]*)?))?\s*$")


@dataclass(frozen=True)
class MetricSpec:
    """A parsed metric name: ``name`` (canonical base), ``k`` (0 = whole list), ``label`` as given."""

    name: str
    k: int
    label: str
    kind: str  # "ranking" | "pooled" | "scored" | "diversity"

    @property
    def per_user(self) -> bool:
        return self.kind in ("ranking", "diversity") and self.name not in ("coverage", "personalization")


def parse_metric(label: str) -> MetricSpec:
    """Parse ``"NDCG@10"`` -> MetricSpec(name="ndcg", k=10, ...); clear errors otherwise."""
    if not isinstance(label, str):
        raise MetricsError(f"a metric name must be a string such as 'ndcg@10', got {type(label).__name__}")
    if not label.strip():
        raise MetricsError(f"empty metric name {label!r}; known metrics: {', '.join(METRIC_NAMES)}")
    m = _PATTERN.match(label)
    if not m:
        raise MetricsError(f"cannot read metric name {label[:80]!r}; write it as name or name@k, e.g. ndcg@10")
    base, k_text = m.group(1).lower().replace("-", "_"), m.group(2)
    base = ALIASES.get(base, base)
    if base not in METRIC_NAMES:
        close = difflib.get_close_matches(base, METRIC_NAMES + list(ALIASES), n=1, cutoff=0.5)
        hint = f"; did you mean '{close[0]}'?" if close else f"; known metrics: {', '.join(METRIC_NAMES)}"
        raise MetricsError(f"unknown metric '{label[:80]}'{hint}")
    k = 0
    if k_text is not None:
        if base in _NO_K:
            raise MetricsError(f"metric '{base}' takes no cutoff; write '{base}' instead of '{label}'")
        whole, _, fraction = k_text.partition(".")
        digits = whole.lstrip("-").lstrip("0")
        k = -1 if fraction.strip("0") else MAX_K + 1 if len(digits) > 19 else int(whole)
        if k <= 0:
            raise MetricsError(f"cutoff k must be a whole number >= 1 in '{label}'")
        if k > MAX_K:
            raise MetricsError(f"cutoff k in '{label[:40]}' is larger than the largest supported cutoff 2^62; "
                               f"leave out @k to use the whole list")
    if base in RANKING and (k_text is not None or base not in SCORED):
        kind = "ranking"
    elif base in POOLED:
        kind = "pooled"
    elif base in DIVERSITY:
        kind = "diversity"
    else:
        kind = "scored"
    return MetricSpec(name=base, k=k, label=label, kind=kind)


def parse_metrics(labels) -> list[MetricSpec]:
    """Parse a list (or a comma-separated string) of metric names."""
    if isinstance(labels, str):
        labels = [x for x in labels.split(",") if x.strip()]
    if labels is None:
        raise MetricsError("metrics is None; pass metric names, e.g. metrics=['ndcg@10', 'map@100']")
    try:
        labels = list(labels)
    except TypeError:
        raise MetricsError(f"metrics must be a list of names such as ['ndcg@10'], got {type(labels).__name__}") from None
    if not all(isinstance(x, str) for x in labels):
        bad = next(x for x in labels if not isinstance(x, str))
        raise MetricsError(f"a metric name must be a string such as 'ndcg@10', got {bad!r}")
    specs = [parse_metric(x.strip()) for x in labels]
    if not specs:
        raise MetricsError("no metric requested; e.g. --metrics ndcg@10,map@100")
    return specs
