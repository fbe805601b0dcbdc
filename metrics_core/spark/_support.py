"""What the Spark engine computes, read from the metric registry and the declared conventions.

Each :class:`metrics_core.metrics.registry.Metric` says how Spark combines it over
groups of users (``spark``), why Spark refuses it (``spark_refusal``) and
whether Spark needs the item-features table as its catalogue
(``spark_catalogue``). The conventions that Spark takes at their default only are read from the
declared conventions (:meth:`metrics_core.metrics.conventions.Convention.spark_refusal`): those
that shape only the metrics Spark combines with code of its own rather than with mc.evaluate on
each group (:data:`metrics_core.metrics.registry.SPARK_OWN_CODE`, found from the registry entries
each convention's ``applies_to`` names), and those declared so (``spark_default_only``).
Nothing here imports pyspark.
"""

from __future__ import annotations

from ..metrics.conventions import CONVENTIONS
from ..errors import MetricsError


def refuse_unsupported(specs, item_features) -> None:
    """One-line MetricsError for the first metric the Spark engine does not compute on these inputs."""
    for s in specs:
        entry = s.entry
        if not entry.on_spark:
            raise MetricsError(f"{s.label} is not available in the Spark backend: {entry.spark_refusal}; "
                               "compute it with mc.evaluate on a pandas sample or drop it")
        if entry.spark_catalogue and item_features is None:
            raise MetricsError(f"{s.label} on Spark needs item_features (its catalogue of N items); "
                               "pass the item table or compute it with mc.evaluate")


def missing_features_diagnosed(spec) -> bool:
    """Whether the metric's items without features are counted in the diagnostics: a per-user diversity
    metric over item features that Spark computes (ILS), as mc.evaluate counts them."""
    entry = spec.entry
    return entry.kind == "diversity" and "item_features" in entry.needs and entry.spark == "user_mean"


def local_only_conventions() -> tuple[str, ...]:
    """Conventions the Spark engine takes at their default only because every metric they shape is one it
    combines with code of its own (novelty's popularity, the users of the diversity kind): a preset's other
    value counts only when a diversity metric is asked
    (:meth:`~metrics_core.metrics.conventions.Convention.spark_refusal`)."""
    return tuple(c.name for c in CONVENTIONS if c.spark_refusal() and not c.spark_default_only)


def default_only_conventions() -> tuple[str, ...]:
    """Conventions the Spark engine takes at their default only whatever the metrics (declared
    ``spark_default_only``): another value, by keyword or by a preset, is always refused."""
    return tuple(c.name for c in CONVENTIONS if c.spark_default_only)


#: computed once: the registry and the conventions are fixed tables
LOCAL_ONLY = local_only_conventions()
DEFAULT_ONLY = default_only_conventions()
