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

from importlib import import_module as _import_module

from .launch import announce as _announce, is_command_line as _is_command_line

_announce()  # the command line's first sign of life, before the libraries load (metrics_core.launch)

#: every public name -> (module relative to the package, attribute; None: the module itself)
_PUBLIC = {
    "conventions": (".metrics.conventions", None),
    "registry": (".metrics.registry", None),
    "plot": (".outputs.plot", None),
    "Decision": (".brief.build", "Decision"),
    "build_brief": (".brief.build", "build_brief"),
    "compare": (".analysis.compare", "compare"),
    "compare_segments": (".analysis.segment_compare", "compare_segments"),
    "calibration_curve": (".metrics.curves", "calibration_curve"),
    "confusion_matrix": (".metrics.curves", "confusion_matrix"),
    "pr_curve": (".metrics.curves", "pr_curve"),
    "roc_curve": (".metrics.curves", "roc_curve"),
    "Diagnostics": (".diagnostics", "Diagnostics"),
    "MetricsError": (".errors", "MetricsError"),
    "Evaluation": (".evaluation", "Evaluation"),
    "evaluate": (".evaluation", "evaluate"),
    "metric_curve": (".evaluation", "metric_curve"),
    "explain": (".analysis.explain", "explain"),
    "fuse": (".fusion", "fuse"),
    "optimize_fusion_weights": (".fusion", "optimize_weights"),
    "CheckReport": (".analysis.gate", "CheckReport"),
    "check": (".analysis.gate", "check"),
    "intersection": (".metrics.intersection", "intersection"),
    "intersection_per_user": (".metrics.intersection", "intersection_per_user"),
    "Settings": (".metrics.conventions", "Settings"),  # every convention of a call
    "presets": (".metrics.conventions", "presets"),  # the presets' conventions as a table
    "Published": (".outputs.publish", "Published"),
    "publish": (".outputs.publish", "publish"),
    "Ranked": (".layout", "Ranked"),
    "prepare": (".layout", "prepare"),
    "OffPolicy": (".ope", "OffPolicy"),
    "off_policy": (".ope", "off_policy"),
    "prepare_log": (".ope", "prepare_log"),
    "debias": (".metrics.debias", "debias"),
    "SampledMetrics": (".metrics.sampled", "SampledMetrics"),
    "may_reverse": (".metrics.sampled", "may_reverse"),
    "sampled_metrics": (".metrics.sampled", "sampled_metrics"),
    "METRIC_NAMES": (".metrics.registry", "METRIC_NAMES"),
    "MetricSpec": (".metrics.registry", "MetricSpec"),
    "parse_metric": (".metrics.registry", "parse_metric"),
    "parse_metrics": (".metrics.registry", "parse_metrics"),
    "log_mlflow": (".outputs.tracking", "log_mlflow"),
    "average_precision_at_k": (".single", "average_precision_at_k"),
    "dcg_at_k": (".single", "dcg_at_k"),
    "hit_ratio": (".single", "hit_ratio"),
    "ndcg_at_k": (".single", "ndcg_at_k"),
    "precision_at_k": (".single", "precision_at_k"),
    "recall_at_k": (".single", "recall_at_k"),
    "reciprocal_rank": (".single", "reciprocal_rank"),
}


def _load(name: str):
    """The public object ``name`` (imported now if it was not), kept in the package's namespace."""
    module, attribute = _PUBLIC[name]
    value = _import_module(module, __name__)
    value = value if attribute is None else getattr(value, attribute)
    globals()[name] = value
    return value


# The library loads every public name at once, and the notebook views that metrics_core.outputs.notebook gives
# Evaluation, Brief, Explanation and OffPolicy. The command line (metrics_core.launch.is_command_line) loads a
# name on its first use only (__getattr__ below): a command imports the modules it runs, not the whole library
# (an evaluate of a small file spends about a third of its time less on imports).
if not _is_command_line():
    for _name in _PUBLIC:
        _load(_name)
    from .outputs import notebook  # noqa: F401 - gives Evaluation, Brief and Explanation their notebook view

from .version import __version__

__all__ = list(_PUBLIC)

#: former names kept for a while: name -> (the public name of the object, what to write instead)
_DEPRECATED = {
    "average_precision": ("average_precision_at_k",
                          "mc.average_precision is the average precision of one ranked list; call it "
                          "mc.average_precision_at_k (the metric 'average_precision' of mc.evaluate is pr_auc, "
                          "over scored rows). The old name will be removed in a later release."),
}


def __getattr__(name: str):
    """A public name not loaded yet (the command line's, see above): the object; a former public name: the
    object, with a DeprecationWarning naming its new name."""
    if name in _PUBLIC:
        return _load(name)
    if name in _DEPRECATED:
        import warnings

        value, message = _DEPRECATED[name]
        warnings.warn(message, DeprecationWarning, stacklevel=2)
        return _load(value)
    raise AttributeError(f"module 'metrics_core' has no attribute {name!r}")
