"""Plotly figures of the dashboard's Compare page and of :mod:`metrics_core.outputs.plot` (layout only:
every number comes from metrics_core).

User-supplied strings (model names, metric names, segment labels) are passed through
:func:`metrics_core.outputs.report.plotly_text` before they reach plotly: plotly renders a small HTML subset in labels
and decodes ``&lt;``, ``&gt;`` and ``&amp;``, so an escaped name shows as literal text and can
never become markup.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metrics_core.outputs.report import plotly_text as esc

from .labels import short_labels
from .template import use_template
from metrics_core.formats import plural

WEBGL_ABOVE = 5000
#: above this many users the scatter becomes a density of users (points would hide each other)
DENSITY_ABOVE = 4000
#: cells of the density (per axis) and bars of the differences' histogram, counted before drawing
DENSITY_BINS = 40
HISTOGRAM_BINS = 60
WTL_COLORS = {"wins": "#2e7d32", "ties": "#9e9e9e", "losses": "#c62828"}
SEGMENT_PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                   "#7f7f7f", "#bcbd22", "#17becf"]



def _layout(fig: go.Figure, title: str, height: int = 420) -> go.Figure:
    """White template, the title on top and the legend below the plot (never over the title)."""
    use_template(fig)
    fig.update_layout(title=dict(text=title, x=0, xanchor="left", font=dict(size=15)), height=height,
                      margin=dict(l=10, r=10, t=50, b=10),
                      legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0,
                                  title_text=""))
    fig.update_xaxes(title_standoff=8)
    return short_labels(fig)


def pair_scatter(pairs: pd.DataFrame, metric: str, baseline: str, challenger: str) -> go.Figure:
    """Per-user ``metric`` of the baseline (x) against the challenger (y), one colour per segment.

    ``pairs``: columns ``user_id, baseline, challenger`` (paired users only) and optionally
    ``segment`` (the user's segment label). Points above the diagonal are users the challenger
    serves better.
    """
    fig = go.Figure()
    if len(pairs) > DENSITY_ABOVE:
        return _density(pairs, metric, baseline, challenger)
    trace = go.Scattergl if len(pairs) > WEBGL_ABOVE else go.Scatter
    if "segment" in pairs.columns:
        labels = pairs["segment"].fillna("(missing)").astype(str)
    else:
        labels = pd.Series("users", index=pairs.index)
    for i, (label, part) in enumerate(pairs.groupby(labels.to_numpy(), sort=True)):
        fig.add_trace(trace(
            x=part["baseline"], y=part["challenger"], mode="markers", name=esc(label),
            marker=dict(size=5, opacity=0.55, color=SEGMENT_PALETTE[i % len(SEGMENT_PALETTE)]),
            customdata=part["user_id"].astype(str).map(esc).to_numpy(),
            hovertemplate="user %{customdata}<br>baseline %{x:.4f}<br>challenger %{y:.4f}<extra></extra>"))
    lo = float(np.nanmin([pairs["baseline"].min(), pairs["challenger"].min(), 0.0])) if len(pairs) else 0.0
    hi = float(np.nanmax([pairs["baseline"].max(), pairs["challenger"].max(), 1.0])) if len(pairs) else 1.0
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="equal",
                             line=dict(color="#999", dash="dot"), hoverinfo="skip"))
    fig.update_xaxes(title=f"{esc(baseline)} · {esc(metric)}")
    fig.update_yaxes(title=f"{esc(challenger)} · {esc(metric)}", scaleanchor="x", scaleratio=1)
    return _layout(fig, f"Per-user {esc(metric)} (above the line: challenger better)", height=480)


def _density(pairs: pd.DataFrame, metric: str, baseline: str, challenger: str) -> go.Figure:
    """Users per cell of baseline (x) x challenger (y) values, for many users: counted here
    (40 x 40 cells of equal width), so the browser gets 1,600 counts, not every user's pair."""
    x, y = pairs["baseline"].to_numpy(dtype=float), pairs["challenger"].to_numpy(dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    counts, x_edges, y_edges = np.histogram2d(x[keep], y[keep], bins=DENSITY_BINS)
    fig = go.Figure(go.Heatmap(
        z=np.where(counts.T > 0, counts.T, np.nan), x=(x_edges[:-1] + x_edges[1:]) / 2,
        y=(y_edges[:-1] + y_edges[1:]) / 2, colorscale="Blues", colorbar=dict(title="users"),
        hovertemplate="baseline ≈ %{x:.4f}<br>challenger ≈ %{y:.4f}<br>%{z} users<extra></extra>"))
    lo = float(min(pairs["baseline"].min(), pairs["challenger"].min(), 0.0))
    hi = float(max(pairs["baseline"].max(), pairs["challenger"].max(), 1.0))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="equal", showlegend=False,
                             line=dict(color="#999", dash="dot"), hoverinfo="skip"))
    fig.update_xaxes(title=f"{esc(baseline)} · {esc(metric)}")
    fig.update_yaxes(title=f"{esc(challenger)} · {esc(metric)}")
    return _layout(fig, f"Users per cell ({plural(len(pairs), 'user')}; above the line: challenger better)", height=480)


def diff_histogram(diff: np.ndarray, metric: str, baseline: str, challenger: str,
                   ci: tuple[float, float] | None = None) -> go.Figure:
    """Histogram of per-user differences (challenger - baseline), mean and its CI marked."""
    d = np.asarray(diff, dtype=float)
    d = d[np.isfinite(d)]
    if d.size > DENSITY_ABOVE:  # counted here: the browser gets 60 bars, not every user's difference
        counts, edges = np.histogram(d, bins=HISTOGRAM_BINS)
        fig = go.Figure(go.Bar(x=(edges[:-1] + edges[1:]) / 2, y=counts, width=np.diff(edges),
                               customdata=np.column_stack([edges[:-1], edges[1:]]), marker_color="#5c6bc0",
                               name="users", hovertemplate="difference %{customdata[0]:.4f} to %{customdata[1]:.4f}"
                                                           "<br>%{y} users<extra></extra>"))
        fig.update_layout(bargap=0)
    else:
        fig = go.Figure(go.Histogram(x=d, nbinsx=HISTOGRAM_BINS, marker_color="#5c6bc0", name="users",
                                     hovertemplate="difference %{x}<br>%{y} users<extra></extra>"))
    fig.add_vline(x=0, line_color="#999", line_dash="dot")
    if d.size:
        fig.add_vline(x=float(d.mean()), line_color="#1b5e20",
                      annotation_text=f"mean {d.mean():+.4f}", annotation_position="top right")
    if ci is not None and np.all(np.isfinite(ci)):
        fig.add_vrect(x0=ci[0], x1=ci[1], fillcolor="#1b5e20", opacity=0.12, line_width=0)
    fig.update_xaxes(title=f"{esc(challenger)} - {esc(baseline)} ({esc(metric)})")
    fig.update_yaxes(title="users")
    return _layout(fig, "Per-user differences (mean and 95% CI shaded)", height=380)


def pair_differences(pairs: pd.DataFrame, metric: str, baseline: str, challenger: str,
                     ci_low: float, ci_high: float) -> go.Figure:
    """:func:`diff_histogram` of ``pairs`` (columns ``baseline``, ``challenger``)."""
    return diff_histogram((pairs["challenger"] - pairs["baseline"]).to_numpy(), metric, baseline, challenger,
                          ci=(ci_low, ci_high))


def win_tie_loss(table: pd.DataFrame) -> go.Figure:
    """Stacked horizontal bars of wins / ties / losses per (challenger, metric) row of a
    :func:`metrics_core.analysis.compare.compare` table."""
    labels = [f"{esc(r.model)} · {esc(r.metric)}" for r in table.itertuples()]
    fig = go.Figure()
    for col in ("wins", "ties", "losses"):
        fig.add_bar(y=labels, x=table[col], name=col, orientation="h", marker_color=WTL_COLORS[col],
                    hovertemplate=f"%{{y}}<br>{col}: %{{x}} users<extra></extra>")
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title="users")
    fig.update_yaxes(autorange="reversed")
    fig = _layout(fig, "Users won / tied / lost", height=max(300, 150 + 38 * len(labels)))
    fig.update_layout(legend=dict(y=1.0, yanchor="bottom", x=1.0, xanchor="right"))  # top right, beside the title
    return fig


def difference_forest(table: pd.DataFrame) -> go.Figure:
    """Mean difference with its bootstrap CI per row of a comparison table; significant rows
    (after correction) in colour."""
    labels = [f"{esc(r.model)} vs {esc(r.baseline)} · {esc(r.metric)}" for r in table.itertuples()]
    diff = table["diff"].to_numpy(dtype=float)
    colors = ["#2e7d32" if s and d > 0 else "#c62828" if s else "#757575"
              for s, d in zip(table["significant"], diff)]
    fig = go.Figure(go.Scatter(
        x=diff, y=labels, mode="markers", marker=dict(size=10, color=colors), name="difference",
        error_x=dict(type="data", symmetric=False,
                     array=table["ci_high"].to_numpy(dtype=float) - diff,
                     arrayminus=diff - table["ci_low"].to_numpy(dtype=float)),
        hovertemplate="%{y}<br>difference %{x:.4f}<extra></extra>"))
    fig.add_vline(x=0, line_color="#999", line_dash="dot")
    fig.update_xaxes(title="challenger - baseline")
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Mean difference with 95% bootstrap CI (colour: significant after correction)",
                   height=max(260, 90 + 38 * len(labels)))


def lift_forest(table: pd.DataFrame) -> go.Figure:
    """Relative lift with its 95% interval per row of a comparison table; rows significant
    after correction in colour (green: better in the metric's direction)."""
    from metrics_core.metrics import registry

    labels = [f"{esc(r.model)} · {esc(r.metric)}" for r in table.itertuples()]
    lift = 100 * table["lift"].to_numpy(dtype=float)
    better = [(d > 0) == registry.higher_is_better(m) for d, m in zip(table["diff"], table["metric"])]
    colors = ["#2e7d32" if s and b else "#c62828" if s else "#757575" for s, b in zip(table["significant"], better)]
    fig = go.Figure(go.Scatter(
        x=lift, y=labels, mode="markers", marker=dict(size=10, color=colors), name="lift",
        error_x=dict(type="data", symmetric=False, array=100 * table["lift_ci_high"].to_numpy(dtype=float) - lift,
                     arrayminus=lift - 100 * table["lift_ci_low"].to_numpy(dtype=float)),
        hovertemplate="%{y}<br>lift %{x:+.1f}%<extra></extra>"))
    fig.add_vline(x=0, line_color="#999", line_dash="dot")
    fig.update_xaxes(title="lift over the baseline (%)", ticksuffix="%")
    fig.update_yaxes(autorange="reversed")
    return _layout(fig, "Lift with 95% interval", height=max(260, 110 + 38 * len(labels)))
