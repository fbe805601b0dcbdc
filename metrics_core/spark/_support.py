"""What the Spark engine computes, read from the metric registry and the declared conventions.

Each :class:`metrics_core.metrics.registry.Metric` says how Spark combines it over
groups of users (``spark``), why Spark refuses it (``spark_refusal``) and
whether Spark needs the item-features table as its catalogue
(``spark_catalogue``). The conventions that Spark does not implement are those
that shape only the metrics Spark combines with code of its own rather than
with mc.evaluate on each group (:data:`OWN_CODE`), found from the registry entries each
convention's ``applies_to`` names (:meth:`metrics_core.metrics.conventions.Convention.entries`).
Nothing here imports pyspark.
"""

from __future__ import annotations

from ..metrics.conventions import CONVENTIONS, entries_of
from ..errors import MetricsError

#: combinations in which Spark computes across groups with code of its own (item popularity, per-item sums),
#: where mc.evaluate's handling of the users and of popularity does not run
OWN_CODE = ("item_coverage", "item_pairs", "popularity")


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
    """Conventions each of whose metrics or kinds (``applies_to``, :func:`metrics_core.metrics.conventions.entries_of`)
    includes a metric Spark combines with its own code (novelty's popularity, the users of the diversity
    kind): mc.evaluate's handling of them does not run there, so the Spark engine takes only their defaults."""
    return tuple(c.name for c in CONVENTIONS
                 if c.applies_to and all(any(m.spark in OWN_CODE for m in entries_of(item)) for item in c.applies_to))


#: computed once: the registry and the conventions are fixed tables
LOCAL_ONLY = local_only_conventions()
