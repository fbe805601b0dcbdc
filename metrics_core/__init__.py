"""metrics_core: every ranking and scored-row metric, vectorised, with explicit conventions.

Prepare once, evaluate many::

    import metrics_core as mc
    ranked = mc.prepare(run, qrels)
    ev = mc.evaluate(ranked, metrics=["ndcg@10", "map@100"], gain="linear", ties="average")
    ev.summary, ev.per_user, ev.diagnostics

Compare models on their per-user metrics (paired tests, p-values corrected over
every pair x metric; :mod:`metrics_core.analysis.compare` also holds ``summary_table``)::

    table = mc.compare({"bm25": ev_bm25, "dense": ev_dense}, baseline="bm25", test="t", correction="holm")

The decision brief a product team reads first (verdicts, coverage, segments, failure groups)::

    brief = mc.build_brief(evaluations, mc.Decision("bm25", ("dense",), ("ndcg@10",)), attributes=users)

What a model's policy would have earned on logged feedback with propensities (DM, IPS, SNIPS, DR,
switch-DR, DRos; slate IPS), with intervals, weight diagnostics and a verdict (:mod:`metrics_core.ope`)::

    ope = mc.off_policy(log, {"dense": run}, policy="softmax", temperature=1.0)
    ope.estimates, ope.diagnostics, ope.verdicts
    prepared = mc.prepare_log(log, runs)  # ids coded once; then off_policy(prepared, ...) per setting

Runs scored on the target plus N sampled negatives, corrected as Krichene and Rendle (KDD 2020)
(:mod:`metrics_core.metrics.sampled`)::

    mc.sampled_metrics(run, qrels, ["hr@10", "ndcg@10"], n_items=50_000, correction="bv").summary
"""

from .launch import announce as _announce

_announce()  # the command line's first sign of life, before the libraries load (metrics_core.launch)

from .metrics import conventions, registry
from .outputs import plot
from .brief.build import Decision, build_brief
from .analysis.compare import compare
from .analysis.segment_compare import compare_segments
from .metrics.curves import calibration_curve, confusion_matrix, pr_curve, roc_curve
from .diagnostics import Diagnostics
from .errors import MetricsError
from .evaluation import Evaluation, evaluate, metric_curve
from .analysis.explain import explain
from .fusion import fuse, optimize_weights as optimize_fusion_weights
from .analysis.gate import CheckReport, check
from .metrics.intersection import intersection, intersection_per_user
from .metrics.conventions import Settings, presets  # every convention of a call; the presets' conventions as a table
from .outputs.publish import Published, publish
from .layout import Ranked, prepare
from .ope import OffPolicy, off_policy, prepare_log
from .metrics.debias import debias
from .metrics.sampled import SampledMetrics, may_reverse, sampled_metrics
from .metrics.registry import METRIC_NAMES, MetricSpec, parse_metric, parse_metrics
from .outputs.tracking import log_mlflow
from .outputs import notebook  # noqa: F401 - gives Evaluation, Brief and Explanation their notebook view
from .single import (average_precision_at_k, dcg_at_k, hit_ratio, ndcg_at_k, precision_at_k, recall_at_k,
                     reciprocal_rank)

from .version import __version__

__all__ = [
    "CheckReport", "Diagnostics", "Evaluation", "check", "conventions", "plot", "registry", "METRIC_NAMES", "MetricSpec",
    "MetricsError", "OffPolicy", "debias", "Ranked", "SampledMetrics", "may_reverse", "sampled_metrics", "Decision", "average_precision_at_k", "build_brief", "calibration_curve", "compare", "compare_segments", "confusion_matrix", "dcg_at_k",
    "evaluate", "explain", "fuse", "optimize_fusion_weights", "hit_ratio", "intersection", "intersection_per_user", "log_mlflow",
    "metric_curve", "off_policy", "prepare_log", "presets", "Published", "publish",
    "ndcg_at_k", "parse_metric", "parse_metrics", "pr_curve", "precision_at_k", "prepare", "recall_at_k",
    "reciprocal_rank", "roc_curve", "Settings",
]

#: former names kept for a while: name -> (the object, what to write instead)
_DEPRECATED = {
    "average_precision": (average_precision_at_k,
                          "mc.average_precision is the average precision of one ranked list; call it "
                          "mc.average_precision_at_k (the metric 'average_precision' of mc.evaluate is pr_auc, "
                          "over scored rows). The old name will be removed in a later release."),
}


def __getattr__(name: str):
    """A former public name: the object, with a DeprecationWarning naming its new name."""
    if name in _DEPRECATED:
        import warnings

        value, message = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return value
    raise AttributeError(f"module 'metrics_core' has no attribute {name!r}")
