"""The dashboard's figures from evaluations, for a notebook: ``mc.plot.<name>(...)`` returns the
plotly figure the dashboard draws for the same models (the builders of
:mod:`metrics_core.outputs.plot.figures` and :mod:`metrics_core.outputs.plot.compare_figures`, which the dashboard
imports; the tables behind them are computed as the dashboard computes them).

``evaluations``: ``{model name: Evaluation}`` (:func:`metrics_core.evaluate`), in the order the
models are drawn and coloured; curves use each evaluation's prepared run and conventions. Plotly is
an optional dependency: without it each function raises a one-line
:class:`~metrics_core.errors.MetricsError` naming ``pip install 'metrics-core[dashboard]'``.

``mc.plot(what, kind=None, *args, **options)`` is the same by the kind's name: ``what`` is
``{name: Evaluation}`` (or one Evaluation, named "model"; default kind ``metric_vs_k``) or an
``mc.compare`` table (default ``lift_forest``); ``mc.plot(evaluations, "ecdf", "ndcg@10")`` is
``mc.plot.ecdf(evaluations, "ndcg@10")``. An :func:`metrics_core.off_policy` result draws its estimates
(``mc.plot(result)``, or ``mc.plot(result, "lift")``: :func:`off_policy`).

Each figure is a :class:`~metrics_core.outputs.plot.notebook_figure.NotebookFigure` (a plotly ``Figure``):
in a notebook it shows in JupyterLab, VS Code and classic Jupyter and survives an export to HTML,
with one plotly.js per notebook.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import types
from typing import Any, Mapping, Sequence

import pandas as pd

from ...metrics import registry
from ...errors import MetricsError

__all__ = ["draw", "metric_vs_k", "roc", "pr", "calibration", "ecdf", "box", "segments", "lift_forest",
           "difference_forest", "win_tie_loss", "off_policy", "CURVE_METRICS"]

#: The metrics the dashboard draws against K (its Overview's panels): the registry's ``metric_vs_k`` section.
CURVE_METRICS = registry.curve_metrics()


def _figures(module: str = "figures"):
    """The figure builders (importing plotly), or a one-line MetricsError saying how to install it."""
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise MetricsError("mc.plot needs plotly: pip install 'metrics-core[dashboard]'") from None
    return importlib.import_module(f"{__name__}.{module}")


def _notebook(builder):
    """``builder`` returning its figure as a NotebookFigure (drawn in every notebook front end)."""

    @functools.wraps(builder)
    def wrapped(*args, **kwargs):
        from .notebook_figure import for_notebook

        return for_notebook(builder(*args, **kwargs))

    return wrapped


def _checked(evaluations: Mapping[str, Any]) -> dict[str, Any]:
    from ...evaluation import Evaluation

    if not isinstance(evaluations, Mapping) or not evaluations:
        raise MetricsError("give the models as a non-empty {name: Evaluation} dict (from mc.evaluate)")
    for name, ev in evaluations.items():
        if not isinstance(ev, Evaluation):
            raise MetricsError(f"model {str(name)!r} is a {type(ev).__name__}, not an Evaluation; "
                               "pass {name: mc.evaluate(run, qrels, metrics)}")
    return {str(k): v for k, v in evaluations.items()}


def _colors(names) -> dict[str, str]:
    from ...colors import model_colors

    return model_colors(list(names))


def _keywords(ev, func) -> dict[str, Any]:
    """The evaluation's conventions that ``func`` takes."""
    accepted = inspect.signature(func).parameters
    return {k: v for k, v in ev.conventions.items() if k in accepted}


def _summary(ev, metric: str) -> float:
    """``metric`` of an evaluation: its summary's value, else evaluated on its prepared run."""
    if metric in ev.summary:
        return float(ev.summary[metric])
    from ...evaluation import evaluate

    return float(evaluate(ev.ranked, metrics=[metric], **ev.conventions).summary[metric])


@_notebook
def metric_vs_k(evaluations: Mapping[str, Any], metrics: Sequence[str] = CURVE_METRICS, k_max: int = 50,
                current_k: int | None = None):
    """Each metric's mean over users at K = 1..``k_max``, one panel per metric and one line per
    model (:func:`metrics_core.metric_curve`); ``current_k`` draws a dotted line at that K."""
    from ...evaluation import metric_curve

    figures = _figures()
    evaluations = _checked(evaluations)
    parts = []
    for name, ev in evaluations.items():
        wide = metric_curve(ev.ranked, list(metrics), k_max, **_keywords(ev, metric_curve))
        parts.append(wide.melt(id_vars="k", var_name="metric", value_name="value").assign(model=name))
    long = pd.concat(parts, ignore_index=True)[["model", "metric", "k", "value"]]
    return figures.metric_vs_k(long, _colors(evaluations), current_k)


@_notebook
def roc(evaluations: Mapping[str, Any]):
    """ROC curve of each model's scored rows, its AUC in the legend."""
    from ...metrics.curves import roc_curve

    figures = _figures()
    evaluations = _checked(evaluations)
    curves = {n: roc_curve(ev.ranked, **_keywords(ev, roc_curve)) for n, ev in evaluations.items()}
    return figures.roc(curves, {n: _summary(ev, "auc") for n, ev in evaluations.items()}, _colors(evaluations))


@_notebook
def pr(evaluations: Mapping[str, Any], recall_over: str = "retrieved"):
    """Precision-recall curve of each model's scored rows, its AP (``pr_auc``) in the legend."""
    from ...metrics.curves import pr_curve

    figures = _figures()
    evaluations = _checked(evaluations)
    curves = {n: pr_curve(ev.ranked, recall_over=recall_over, **_keywords(ev, pr_curve))
              for n, ev in evaluations.items()}
    return figures.pr(curves, {n: _summary(ev, "pr_auc") for n, ev in evaluations.items()}, _colors(evaluations))


@_notebook
def calibration(evaluations: Mapping[str, Any], n_bins: int = 10):
    """Reliability diagram over ``n_bins`` equal-width score bins (scores must be probabilities),
    PCOPC in the legend."""
    from ...metrics.curves import calibration_curve

    figures = _figures()
    evaluations = _checked(evaluations)
    curves = {n: calibration_curve(ev.ranked, n_bins=n_bins, **_keywords(ev, calibration_curve))
              for n, ev in evaluations.items()}
    return figures.calibration(curves, {n: _summary(ev, "pcopc") for n, ev in evaluations.items()},
                               _colors(evaluations))


def _long(evaluations: Mapping[str, Any], metric: str) -> pd.DataFrame:
    from .distribution_tables import per_user_long

    evaluations = _checked(evaluations)
    missing = [n for n, ev in evaluations.items() if metric not in ev.per_user.columns]
    if missing:
        raise MetricsError(f"model {missing[0]!r} has no per-user {metric!r}: evaluate it with that metric "
                           f"(per-user metrics: {', '.join(map(str, evaluations[missing[0]].per_user.columns))})")
    return per_user_long(evaluations, metric)


@_notebook
def ecdf(evaluations: Mapping[str, Any], metric: str):
    """Empirical CDF of the per-user ``metric`` of each model (the Distributions page's chart)."""
    from .distribution_tables import ecdf_steps

    figures = _figures()
    return figures.ecdf(ecdf_steps(_long(evaluations, metric)), metric, _colors(evaluations))


@_notebook
def box(evaluations: Mapping[str, Any], metric: str):
    """Box plot of the per-user ``metric`` of each model (quartiles and Tukey's fences)."""
    from .distribution_tables import box_stats

    figures = _figures()
    return figures.box(box_stats(_long(evaluations, metric)), metric, _colors(evaluations))


@_notebook
def segments(evaluations: Mapping[str, Any], metric: str, attributes: pd.DataFrame, column: str):
    """Mean per-user ``metric`` of each model per segment of ``attributes[column]`` (a table with
    ``user_id`` and the column; users without a label are "(missing)")."""
    from ...frames import as_pandas
    from .distribution_tables import segment_table

    figures = _figures()
    attributes = as_pandas(attributes, "attributes")
    for needed in ("user_id", column):
        if needed not in attributes.columns:
            raise MetricsError(f"the attributes table has no column {needed!r}; its columns: "
                               f"{', '.join(map(str, attributes.columns))}")
    labels = pd.Series(attributes[column].astype(str).to_numpy(), index=attributes["user_id"].astype(str))
    table = segment_table(_long(evaluations, metric), labels[~labels.index.duplicated()])
    return figures.segments(table, metric, column, _colors(evaluations))


def _comparison(table: pd.DataFrame) -> pd.DataFrame:
    needed = {"model", "baseline", "metric", "diff", "lift", "lift_ci_low", "lift_ci_high", "significant"}
    if not isinstance(table, pd.DataFrame) or not needed <= set(table.columns):
        raise MetricsError("give the table mc.compare(...) returns (columns model, baseline, metric, diff, lift, ...)")
    return table


@_notebook
def lift_forest(table: pd.DataFrame):
    """Relative lift with its 95% interval per row of an ``mc.compare`` table (the Compare page's
    forest; rows significant after correction in colour)."""
    return _figures("compare_figures").lift_forest(_comparison(table))


@_notebook
def difference_forest(table: pd.DataFrame):
    """Mean difference with its bootstrap CI per row of an ``mc.compare`` table."""
    return _figures("compare_figures").difference_forest(_comparison(table))


@_notebook
def win_tie_loss(table: pd.DataFrame):
    """Users won, tied and lost per row of an ``mc.compare`` table."""
    return _figures("compare_figures").win_tie_loss(_comparison(table))


@_notebook
def off_policy(result, measure: str = "value"):
    """Every estimator of every model of an ``mc.off_policy`` result with its bootstrap interval:
    ``measure="value"`` the estimated policy values beside the logging policy's (the mean logged
    reward, a dotted line), ``"lift"`` the lift ``V_e / V_b - 1`` over it in percent."""
    from ...ope.evaluate import NAMES, OffPolicy

    if not isinstance(result, OffPolicy):
        raise MetricsError(f"mc.plot.off_policy draws the result of mc.off_policy(...), not a {type(result).__name__}")
    figures = _figures("ope_figures")
    if measure not in figures.MEASURES:
        raise MetricsError(f"mc.plot.off_policy: measure {str(measure)!r} is not one of {', '.join(figures.MEASURES)}")
    estimates = result.estimates
    return figures.estimates_forest(estimates, float(result.logging["value"]), NAMES,
                                    _colors(estimates["model"].unique()), measure,
                                    float(result.settings.get("confidence", 0.95)))


#: what ``mc.plot(what, kind)`` draws: the kinds of evaluations and of an ``mc.compare`` table
EVALUATION_KINDS = ("metric_vs_k", "roc", "pr", "calibration", "ecdf", "box", "segments")
TABLE_KINDS = ("lift_forest", "difference_forest", "win_tie_loss")
#: the kinds of an ``mc.off_policy`` result (``mc.plot(result, "lift")``)
OFF_POLICY_MEASURES = ("value", "lift")


def draw(what, kind: str | None = None, *args, **options):
    """The figure ``kind`` of ``what`` (module docstring); a one-line MetricsError for anything else."""
    from ...evaluation import Evaluation
    from ...ope.evaluate import OffPolicy

    if isinstance(what, Evaluation):
        what = {"model": what}
    if isinstance(what, OffPolicy):
        if kind not in (None, *OFF_POLICY_MEASURES):
            raise MetricsError(f"mc.plot: no figure {str(kind)!r} of an off-policy result; use one of: "
                               f"{', '.join(OFF_POLICY_MEASURES)}")
        return off_policy(what, kind or "value", *args, **options)
    if isinstance(what, pd.DataFrame):
        kinds, default = TABLE_KINDS, "lift_forest"
    elif isinstance(what, Mapping):
        kinds, default = EVALUATION_KINDS, "metric_vs_k"
    else:
        raise MetricsError(f"mc.plot draws {{name: Evaluation}} (mc.evaluate), an mc.compare table or an "
                           f"mc.off_policy result, "
                           f"not a {type(what).__name__}")
    kind = default if kind is None else kind
    if kind not in kinds:
        raise MetricsError(f"mc.plot: no figure {str(kind)!r} of {'a comparison table' if kinds is TABLE_KINDS else 'evaluations'}; "
                           f"use one of: {', '.join(kinds)}")
    return globals()[kind](what, *args, **options)


class _PlotModule(types.ModuleType):
    """``mc.plot`` itself callable: ``mc.plot(evaluations)`` is :func:`draw`."""

    def __call__(self, what, kind: str | None = None, *args, **options):
        return draw(what, kind, *args, **options)


sys.modules[__name__].__class__ = _PlotModule
