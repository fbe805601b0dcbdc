"""Metric names by kind, derived from the metric table in :mod:`metrics_core.registry`.

Kept for callers that import the name parser from here; the table itself
lives in the registry.
"""

from __future__ import annotations

from .registry import ALIASES, MAX_K, METRIC_NAMES, MetricSpec, metrics_of_kind, parse_metric, parse_metrics, ranking_columns

# ranking metric name -> its ranking kernel column
RANKING = ranking_columns()
POOLED = {m.name for m in metrics_of_kind("pooled")}
SCORED = {m.name for m in metrics_of_kind("scored", "scored_per_user")}
DIVERSITY = {m.name for m in metrics_of_kind("diversity")}

__all__ = ["ALIASES", "DIVERSITY", "MAX_K", "METRIC_NAMES", "MetricSpec", "POOLED", "RANKING", "SCORED", "parse_metric",
           "parse_metrics"]
