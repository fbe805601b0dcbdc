"""A self-contained HTML report of an analysis: one file that opens offline in any browser.

Contents: the users counted (``users="all"`` or ``"served"``, see
:mod:`metrics_core.analysis.population`) with each model's coverage, the settings, a summary table (every metric of every model with its bootstrap 95%
CI over users), input diagnostics, the comparison table (paired tests with corrected
p-values, see :mod:`metrics_core.analysis.compare`), ROC and precision-recall curves, and the
per-user distribution of every per-user metric.

Safety and portability:

* plotly.js is inlined once (``plotly.offline.get_plotlyjs()``); the page references no
  external URL (no CDN, no fonts, no MathJax).
* Every user-supplied string (model names, metric names, settings, ids, warnings) is passed
  through :func:`html.escape` before it reaches the page; chart labels go through
  :func:`plotly_text` (plotly's own label markup, in which quotes need no escaping), so a
  model named ``<img src=x onerror=alert(1)>`` or ``say "hi"`` is shown as typed and never
  becomes markup. Figure JSON is embedded by plotly with ``<``
  written as ``\\u003c``.
"""

from __future__ import annotations

import datetime as _dt
import html
import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from metrics_core.brief.html import brief_html
from metrics_core.colors import model_colors
from metrics_core.terminal import escape_surrogates
from metrics_core.analysis.compare import compare, per_user_table, summary_table
from metrics_core.errors import MetricsError
from metrics_core.analysis.population import population

__all__ = ["build_report", "write_report"]

_MAX_CURVE_POINTS = 1500

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d2433;background:#fafbfc}
main{max-width:1180px;margin:0 auto;padding:24px}
h1{font-size:1.6rem;margin:0 0 4px} h2{font-size:1.2rem;margin:32px 0 8px;border-bottom:1px solid #dde1e7;padding-bottom:4px}
.meta{color:#5a6376;font-size:.9rem}
table{border-collapse:collapse;font-size:.85rem;background:#fff;margin:8px 0}
th,td{border:1px solid #dde1e7;padding:4px 8px;text-align:right;white-space:nowrap}
th{background:#f0f2f5} td.l,th.l{text-align:left}
.sig-up{color:#11723b;font-weight:600} .sig-down{color:#b3261e;font-weight:600}
.chart{background:#fff;border:1px solid #dde1e7;margin:10px 0;min-height:380px}
.warn{color:#8a5a00} .note{color:#5a6376;font-size:.85rem}
.swatch{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:baseline}
#verdicts li{margin:4px 0} .notes{white-space:pre-wrap}
"""


def _e(value: Any) -> str:
    """Escape any value for HTML text or attribute context."""
    return html.escape(str(value), quote=True)


def plotly_text(value: Any) -> str:
    """``value`` for plotly text (legend, title, axis, hover): its tags shown, never rendered.

    Plotly renders a small HTML subset in its labels and decodes only a few named
    entities (``&amp;``, ``&lt;``, ``&gt;`` among them, not ``&quot;``), so only
    ``&``, ``<`` and ``>`` are escaped: quotes stay quotes.
    """
    return str(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _fmt(x: Any, digits: int = 4) -> str:
    if x is None:
        return ""
    try:
        f = float(x)
    except (TypeError, ValueError):
        return _e(x)
    if math.isnan(f):
        return "&ndash;"
    if math.isinf(f):
        return "&infin;" if f > 0 else "&minus;&infin;"
    return f"{f:.{digits}f}"


def _fmt_p(p: Any) -> str:
    try:
        f = float(p)
    except (TypeError, ValueError):
        return ""
    if math.isnan(f):
        return "&ndash;"
    return "&lt;0.0001" if f < 1e-4 else f"{f:.4f}"


def _plotly():
    try:
        import plotly.graph_objects as go
        import plotly.offline
    except ImportError:
        raise MetricsError("the HTML report needs plotly: pip install 'metrics-core[dashboard]'") from None
    return go, plotly.offline


def _thin(curve: pd.DataFrame, max_points: int = _MAX_CURVE_POINTS) -> pd.DataFrame:
    n = len(curve)
    if n <= max_points:
        return curve
    idx = np.unique(np.linspace(0, n - 1, max_points).round().astype(int))
    return curve.iloc[idx]


def _summary_html(summary: pd.DataFrame) -> str:
    if summary.empty:
        return "<p class='note'>No metric was computed.</p>"
    models = list(dict.fromkeys(summary["model"]))
    metrics = list(dict.fromkeys(summary["metric"]))
    table = summary.set_index(["model", "metric"])
    head = "".join(f"<th>{_e(m)}</th>" for m in metrics)
    rows = []
    for model in models:
        cells = []
        for m in metrics:
            if (model, m) not in table.index:
                cells.append("<td></td>")
                continue
            r = table.loc[(model, m)]
            ci = ""
            if not (pd.isna(r["ci_low"]) or pd.isna(r["ci_high"])):
                ci = f"<br><span class='note'>[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]</span>"
            cells.append(f"<td>{_fmt(r['value'])}{ci}</td>")
        rows.append(f"<tr><th class='l'>{_e(model)}</th>{''.join(cells)}</tr>")
    return (f"<table id='summary'><thead><tr><th class='l'>model</th>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>"
            "<p class='note'>Mean over the users counted (see Users); brackets: percentile bootstrap 95% CI over users "
            "(none for global metrics such as AUC).</p>")


def _population_html(counted) -> str:
    """Over whom every number of the report is, and each model that did not serve everyone."""
    lines = "".join(f"<li class='warn'>{_e(line)}</li>" for line in counted.coverage())
    return (f"<p id='population'>{_e(counted.describe())}.</p>"
            + (f"<ul id='coverage'>{lines}</ul>" if lines else ""))


def _comparison_html(comparison: pd.DataFrame) -> str:
    if comparison is None or comparison.empty:
        return "<p class='note'>Only one model: nothing to compare.</p>"
    attrs = comparison.attrs
    test = _e(comparison["test"].iloc[0]) if "test" in comparison else ""
    rows = []
    for _, r in comparison.iterrows():
        cls = ""
        mark = ""
        if bool(r.get("significant", False)):
            up = float(r["diff"]) > 0
            cls = " class='sig-up'" if up else " class='sig-down'"
            mark = " &#9650;" if up else " &#9660;"
        rows.append(
            "<tr>"
            f"<td class='l'>{_e(r['metric'])}</td><td class='l'>{_e(r['baseline'])}</td>"
            f"<td class='l'>{_e(r['model'])}</td><td>{int(r['n'])}</td>"
            f"<td>{_fmt(r['baseline_mean'])}</td><td>{_fmt(r['model_mean'])}</td>"
            f"<td{cls}>{_fmt(r['diff'])}{mark}</td><td>[{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]</td>"
            f"<td>{_fmt_p(r['p_value'])}</td><td>{_fmt_p(r['p_adjusted'])}</td>"
            f"<td>{_fmt(r['effect_size'], 3)}</td>"
            f"<td>{int(r['wins'])} / {int(r['ties'])} / {int(r['losses'])}</td>"
            "</tr>")
    correction = _e(attrs.get("correction", ""))
    alpha = _e(attrs.get("alpha", 0.05))
    return ("<table id='comparison'><thead><tr><th class='l'>metric</th><th class='l'>baseline</th>"
            "<th class='l'>model</th><th>users</th><th>baseline mean</th><th>model mean</th>"
            "<th>difference</th><th>95% CI</th><th>p</th><th>p adjusted</th><th>Cohen's d</th>"
            f"<th>win / tie / loss</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
            f"<p class='note'>Paired over {_e(attrs.get('users', 'the users evaluated for both models'))}. "
            f"Test: {test}; correction "
            f"over all rows: {correction}; &#9650;/&#9660; significant at {alpha} after correction.</p>")


def _diagnostics_html(evaluations: Mapping[str, Any]) -> str:
    items = []
    for name, ev in evaluations.items():
        diag = getattr(ev, "diagnostics", None)
        warnings = list(diag.warnings()) if diag is not None and hasattr(diag, "warnings") else []
        n = getattr(ev, "n_users", None)
        users = f"{int(n)} users evaluated" if n is not None else ""
        body = "".join(f"<li class='warn'>{_e(w)}</li>" for w in warnings) or "<li>no warnings</li>"
        items.append(f"<li><b>{_e(name)}</b> &ndash; {_e(users)}<ul>{body}</ul></li>")
    return f"<ul id='diagnostics'>{''.join(items)}</ul>"


def _curve_figures(go, evaluations: Mapping[str, Any], relevance_threshold: float, colors: dict) -> list:
    from ..metrics.curves import pr_curve, roc_curve

    rocs, prs = {}, {}
    for name, ev in evaluations.items():
        ranked = getattr(ev, "ranked", None)
        if ranked is None:
            continue
        try:
            rocs[name] = _thin(roc_curve(ranked, relevance_threshold=relevance_threshold))
            prs[name] = _thin(pr_curve(ranked, relevance_threshold=relevance_threshold))
        except (MetricsError, ValueError):
            continue  # e.g. no negative rows: no curve for this model
    figs = []
    if rocs:
        fig = go.Figure()
        for name, c in rocs.items():
            fig.add_scatter(x=c["fpr"], y=c["tpr"], mode="lines", name=plotly_text(name),
                            line=dict(color=colors[name]))
        fig.add_scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance",
                        line=dict(color="#999", dash="dot"))
        fig.update_layout(title="ROC curve", xaxis_title="false positive rate", yaxis_title="true positive rate")
        figs.append(fig)
    if prs:
        fig = go.Figure()
        for name, c in prs.items():
            fig.add_scatter(x=c["recall"], y=c["precision"], mode="lines", name=plotly_text(name),
                            line=dict(color=colors[name]))
        fig.update_layout(title="Precision-recall curve", xaxis_title="recall", yaxis_title="precision")
        figs.append(fig)
    return figs


def _distribution_figures(go, evaluations: Mapping[str, Any], colors: dict) -> list:
    metrics: list[str] = []
    for ev in evaluations.values():
        table = per_user_table(ev)
        metrics += [c for c in table.columns if c not in metrics]
    figs = []
    for m in metrics:
        fig = go.Figure()
        for name, ev in evaluations.items():
            table = per_user_table(ev)
            if m not in table.columns:
                continue
            values = pd.to_numeric(table[m], errors="coerce").dropna().to_numpy()
            fig.add_histogram(x=values, name=plotly_text(name), opacity=0.6, nbinsx=40,
                              marker_color=colors[name], histnorm="percent")
        fig.update_layout(title=f"Per-user {plotly_text(m)}", barmode="overlay", xaxis_title=plotly_text(m),
                          yaxis_title="% of users")
        figs.append(fig)
    return figs


def _comparison_figures(go, comparison: pd.DataFrame | None) -> list:
    if comparison is None or comparison.empty:
        return []
    fig = go.Figure()
    labels = [f"{plotly_text(r.model)} vs {plotly_text(r.baseline)} · {plotly_text(r.metric)}"
              for r in comparison.itertuples()]
    diff = comparison["diff"].to_numpy(dtype=float)
    fig.add_scatter(
        x=diff, y=labels, mode="markers", name="difference", marker=dict(size=9, color="#1f77b4"),
        error_x=dict(type="data", symmetric=False,
                     array=(comparison["ci_high"].to_numpy(dtype=float) - diff),
                     arrayminus=(diff - comparison["ci_low"].to_numpy(dtype=float))))
    fig.add_vline(x=0, line_dash="dot", line_color="#999")
    fig.update_layout(title="Mean per-user difference with 95% bootstrap CI", xaxis_title="model - baseline",
                      height=max(300, 60 + 40 * len(labels)), showlegend=False)
    fig.update_yaxes(autorange="reversed")
    return [fig]


def build_report(evaluations: Mapping[str, Any], comparison: pd.DataFrame | None = None, *,
                 title: str = "metrics-core report", settings: Mapping[str, Any] | None = None,
                 baseline: str | None = None, test: str = "t", correction: str = "holm",
                 summary: pd.DataFrame | None = None, relevance_threshold: float = 1,
                 n_resamples: int = 1000, seed: int = 0, users: str = "all", brief: Any = None) -> str:
    """Render the report of ``evaluations`` (``{model name: Evaluation}``) as one HTML string.

    ``comparison`` is a :func:`metrics_core.analysis.compare.compare` table; when omitted and there are at
    least two models with shared per-user metrics it is computed against ``baseline`` (default:
    the first model) with ``test`` and ``correction``. ``summary`` is a
    :func:`metrics_core.analysis.compare.summary_table` (computed when omitted). ``settings`` (K, gain,
    ties, ...) is shown as a table. ``users`` chooses the users every per-user number counts
    (:mod:`metrics_core.analysis.population`); the report says over whom at the top, with the models that
    did not serve every user.

    ``brief``: a :class:`metrics_core.brief.build.Brief` of these evaluations; the report then opens on
    it (its title, notes, verdicts, coverage, segments and failure groups, the same lines the
    dashboard's Brief page shows) and takes its baseline, users, test and correction for the
    rest. Model colours follow the order of ``evaluations``, as in the dashboard.
    """
    if brief is not None:
        title = brief.title or title
        baseline, users = brief.decision.baseline, brief.decision.users
        test, correction = brief.decision.test, brief.decision.correction
    if not evaluations:
        raise MetricsError("the report needs at least one evaluated model")
    go, offline = _plotly()
    names = [str(n) for n in evaluations]
    evaluations = {str(k): v for k, v in evaluations.items()}
    counted = population(evaluations, users)
    full = evaluations
    evaluations = {name: counted.restrict(ev) for name, ev in evaluations.items()}
    colors = model_colors(names)
    if summary is None:
        summary = summary_table(evaluations, n_resamples=n_resamples, seed=seed)
    if comparison is None and len(names) >= 2:
        shared = set(per_user_table(evaluations[names[0]]).columns)
        for n in names[1:]:
            shared &= set(per_user_table(evaluations[n]).columns)
        if shared:
            comparison = compare(full, baseline=baseline or names[0], test=test, users=users,
                                          correction=correction, n_resamples=n_resamples, seed=seed)

    figures = (_comparison_figures(go, comparison) + _curve_figures(go, evaluations, relevance_threshold, colors)
               + _distribution_figures(go, evaluations, colors))
    from .plot.template import use_template

    charts = []
    for i, fig in enumerate(figures):
        use_template(fig)
        fig.update_layout(margin=dict(l=10, r=10, t=50, b=10))
        if fig.layout.height is None:
            fig.update_layout(height=380)
        charts.append("<div class='chart'>" + fig.to_html(
            full_html=False, include_plotlyjs=False, div_id=f"chart-{i}",
            config={"displaylogo": False, "responsive": True}) + "</div>")

    settings_rows = "".join(f"<tr><th class='l'>{_e(k)}</th><td class='l'>{_e(v)}</td></tr>"
                            for k, v in (settings or {}).items())
    settings_html = (f"<table id='settings'>{settings_rows}</table>" if settings_rows
                     else "<p class='note'>Default settings.</p>")
    generated = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:\">"
        f"<title>{_e(title)}</title><style>{_CSS}</style>"
        f"<script type='text/javascript'>{offline.get_plotlyjs()}</script></head><body><main>"
        f"<h1>{_e(title)}</h1><p class='meta'>{len(names)} model(s): {', '.join(_e(n) for n in names)}"
        f" &middot; generated {generated} by metrics-core</p>"
        + (f"<h2>Decision</h2>{brief_html(brief, colors)}" if brief is not None else "")
        + f"<h2>Users</h2>{_population_html(counted)}"
        f"<h2>Settings</h2>{settings_html}"
        f"<h2>Summary</h2>{_summary_html(summary)}"
        f"<h2>Comparison</h2>{_comparison_html(comparison) if comparison is not None else _comparison_html(None)}"
        f"<h2>Input diagnostics</h2>{_diagnostics_html(evaluations)}"
        f"<h2>Charts</h2>{''.join(charts) or '<p class=note>No chart.</p>'}"
        "</main></body></html>\n")


def write_report(path: str | Path, evaluations: Mapping[str, Any], **kwargs: Any) -> Path:
    """Write :func:`build_report` to ``path`` (UTF-8) and return the path. A name holding bytes that
    are not UTF-8 (a file name's, held by Python as lone surrogates) is written with those bytes as
    ``\\xNN`` (:func:`metrics_core.terminal.escape_surrogates`)."""
    from ..progress import stage

    path = Path(path)
    with stage(f"building the report {path.name}"):
        text = escape_surrogates(build_report(evaluations, **kwargs))
    try:
        with stage(f"writing {path.name}"):
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise MetricsError(f"cannot write the report to {path}: {exc.strerror or exc}") from None
    return path
