"""Plotly figures of the dashboard's pages and of :mod:`metrics_core.outputs.plot` (one set of builders).

Each function takes tables computed by metrics_core (curves, per-user
metrics, summaries) and only lays them out: one colour per model (the same
on every page), hover text, axes and legends. No metric is computed here.

Model names and segment labels come from users: they pass through
:func:`metrics_core.outputs.report.plotly_text` (plotly renders links and a few other tags in text).
Importing this module needs plotly (``pip install 'metrics-core[dashboard]'``).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go

from metrics_core.colors import PALETTE, model_colors  # noqa: F401 - one palette with the report
from metrics_core.outputs.report import plotly_text as esc

from .labels import short_labels
from .template import use_template

MAX_CURVE_POINTS = 2000


def _escaped(long: pd.DataFrame, colors: Mapping[str, str], *columns: str) -> tuple[pd.DataFrame, dict]:
    """``long`` with the user-given text ``columns`` escaped for plotly, and ``colors``
    keyed by the escaped model names."""
    long = long.assign(**{c: long[c].astype(str).map(esc) for c in columns if c in long.columns})
    return long, {esc(k): v for k, v in colors.items()}


def _layout(fig: go.Figure, title: str | None = None, height: int = 420) -> go.Figure:
    use_template(fig)
    fig.update_layout(title=esc(title) if title else title, height=height, margin=dict(l=10, r=10, t=50 if title else 20, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.15, xanchor="left", x=0))
    return short_labels(fig)


def thin(curve: pd.DataFrame, max_points: int = MAX_CURVE_POINTS) -> pd.DataFrame:
    """Every n-th point of a curve (first and last kept) so huge curves stay drawable."""
    n = len(curve)
    if n <= max_points:
        return curve
    idx = np.unique(np.concatenate([np.linspace(0, n - 1, max_points).round().astype(int), [0, n - 1]]))
    return curve.iloc[idx]


def summary_bars(long: pd.DataFrame, metric: str, colors: Mapping[str, str]) -> go.Figure:
    """Bar per model of ``metric`` with its 95% CI as error bars.

    ``long``: columns model, metric, value, ci_low, ci_high.
    """
    d = long[long["metric"] == metric]
    fig = go.Figure()
    for _, row in d.iterrows():
        err = None
        if pd.notna(row["ci_low"]):
            err = dict(type="data", symmetric=False, array=[row["ci_high"] - row["value"]],
                       arrayminus=[row["value"] - row["ci_low"]],
                       color="#222222", thickness=2, width=10)
        fig.add_bar(x=[esc(row["model"])], y=[row["value"]], name=esc(row["model"]), error_y=err,
                    marker_color=colors.get(row["model"]), showlegend=False,
                    hovertemplate=f"{esc(row['model'])}<br>{metric} = %{{y:.4f}}<extra></extra>")
    fig.update_yaxes(title=metric)
    return _layout(fig, f"{metric} with 95% bootstrap CI", height=360)


def metric_vs_k(long: pd.DataFrame, colors: Mapping[str, str], current_k: int | None = None) -> go.Figure:
    """One panel per metric, value against K, one line per model.

    ``long``: columns model, metric, k, value.
    """
    long, colors = _escaped(long, colors, "model")
    metrics = list(dict.fromkeys(long["metric"]))
    fig = px.line(long, x="k", y="value", color="model", facet_col="metric", facet_col_wrap=3,
                  color_discrete_map=dict(colors), category_orders={"metric": metrics},
                  markers=False, labels={"k": "K (cutoff)", "value": "mean over users"})
    fig.for_each_annotation(lambda a: a.update(text=a.text.split("=")[-1]))
    fig.update_yaxes(matches=None, showticklabels=True)
    if current_k is not None:
        fig.add_vline(x=current_k, line_dash="dot", line_color="grey")
    rows = int(np.ceil(len(metrics) / 3))
    return _layout(fig, None, height=280 * rows + 80)


def roc(curves: Mapping[str, pd.DataFrame], auc: Mapping[str, float], colors: Mapping[str, str]) -> go.Figure:
    """ROC curves (fpr, tpr), AUC in the legend."""
    fig = go.Figure()
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dash", color="lightgrey"),
                    name="chance", hoverinfo="skip")
    for name, c in curves.items():
        c = thin(c)
        fig.add_scatter(x=c["fpr"], y=c["tpr"], mode="lines", name=f"{esc(name)} (AUC {auc[name]:.3f})",
                        line=dict(color=colors.get(name)),
                        hovertemplate="FPR %{x:.3f}<br>TPR %{y:.3f}<extra>" + esc(name) + "</extra>")
    fig.update_xaxes(title="False positive rate", range=[0, 1])
    fig.update_yaxes(title="True positive rate", range=[0, 1.02])
    return _layout(fig, "ROC", height=440)


def pr(curves: Mapping[str, pd.DataFrame], ap: Mapping[str, float], colors: Mapping[str, str]) -> go.Figure:
    """Precision-recall curves, AP (pr_auc) in the legend."""
    fig = go.Figure()
    for name, c in curves.items():
        c = thin(c)
        fig.add_scatter(x=c["recall"], y=c["precision"], mode="lines", name=f"{esc(name)} (AP {ap[name]:.3f})",
                        line=dict(color=colors.get(name), shape="hv"),
                        hovertemplate="recall %{x:.3f}<br>precision %{y:.3f}<extra>" + esc(name) + "</extra>")
    fig.update_xaxes(title="Recall", range=[0, 1])
    fig.update_yaxes(title="Precision", range=[0, 1.02])
    return _layout(fig, "Precision-recall", height=440)


def calibration(curves: Mapping[str, pd.DataFrame], pcopc: Mapping[str, float],
                colors: Mapping[str, str]) -> go.Figure:
    """Reliability diagram: fraction positive against mean predicted score per bin."""
    fig = go.Figure()
    fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(dash="dash", color="lightgrey"),
                    name="perfectly calibrated", hoverinfo="skip")
    for name, c in curves.items():
        fig.add_scatter(x=c["mean_predicted"], y=c["fraction_positive"], mode="lines+markers",
                        name=f"{esc(name)} (PCOPC {pcopc[name]:.3f})", line=dict(color=colors.get(name)),
                        customdata=c["count"],
                        hovertemplate="predicted %{x:.3f}<br>observed %{y:.3f}<br>%{customdata} rows"
                                      "<extra>" + esc(name) + "</extra>")
    fig.update_xaxes(title="Mean predicted score", range=[0, 1])
    fig.update_yaxes(title="Fraction positive", range=[0, 1.02])
    return _layout(fig, "Calibration (reliability)", height=440)


def confusion(cm: pd.DataFrame, title: str) -> go.Figure:
    """Heatmap of a 2x2 confusion matrix (index actual, columns predicted)."""
    fig = px.imshow(cm.values, x=[f"predicted {c}" for c in cm.columns],
                    y=[f"actual {i}" for i in cm.index], text_auto=",d",
                    color_continuous_scale="Blues", aspect="auto")
    fig.update_coloraxes(showscale=False)
    return _layout(fig, title, height=320)


def ecdf(steps: pd.DataFrame, metric: str, colors: Mapping[str, str]) -> go.Figure:
    """Empirical CDF of a per-user metric per model (``steps``: model, value, share from
    :func:`metrics_core.outputs.plot.distribution_tables.ecdf_steps`), drawn as a staircase."""
    fig = go.Figure()
    for name, part in steps.groupby("model", sort=False):
        fig.add_scatter(x=part["value"], y=part["share"], mode="lines", line=dict(shape="hv", color=colors.get(name)),
                        name=esc(name), hovertemplate=f"{esc(metric)} ≤ %{{x:.4f}}: %{{y:.1%}} of users"
                                                      f"<extra>{esc(name)}</extra>")
    fig.update_xaxes(title=esc(metric))
    fig.update_yaxes(title="share of users", range=[0, 1.02])
    return _layout(fig, f"ECDF of per-user {metric}", height=380)


def box(stats: pd.DataFrame, metric: str, colors: Mapping[str, str]) -> go.Figure:
    """Box plot of a per-user metric per model from precomputed quartiles and fences
    (``stats`` from :func:`metrics_core.outputs.plot.distribution_tables.box_stats`)."""
    fig = go.Figure()
    for row in stats.itertuples(index=False):
        name = esc(row.model)
        fig.add_trace(go.Box(x=[name], q1=[row.q1], median=[row.median], q3=[row.q3], mean=[row.mean],
                             lowerfence=[row.lower_fence], upperfence=[row.upper_fence], name=name,
                             marker_color=colors.get(row.model), boxpoints=False))
    fig.update_layout(showlegend=False)
    fig.update_yaxes(title=esc(metric))
    return _layout(fig, f"Per-user {metric}", height=380)


def segments(table: pd.DataFrame, metric: str, segment: str, colors: Mapping[str, str]) -> go.Figure:
    """Grouped bars: mean per-user metric per segment and model (``table``: model, segment, mean, users)."""
    table, colors = _escaped(table, colors, "model", "segment")
    fig = px.bar(table, x="segment", y="mean", color="model", barmode="group",
                 color_discrete_map=dict(colors), custom_data=["users"],
                 labels={"segment": esc(segment), "mean": f"mean {metric}"})
    fig.update_traces(hovertemplate="%{x}<br>mean %{y:.4f}<br>%{customdata[0]} users")
    return _layout(fig, f"{metric} by {segment}", height=380)
