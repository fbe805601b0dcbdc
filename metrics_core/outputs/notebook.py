"""HTML tables for Jupyter: what an :class:`~metrics_core.evaluation.Evaluation`, a
:class:`~metrics_core.brief.build.Brief` and an :class:`~metrics_core.analysis.explain.Explanation` show in a notebook.

This module gives each of those classes, and :class:`~metrics_core.ope.evaluate.OffPolicy`, its ``_repr_html_`` when it is imported (``import metrics_core``
imports it), so the classes, which sit below the outputs in the package's layers, never import it.

Every string that comes from the user (model, metric, column and preset names, titles, notes,
warnings) passes through :func:`html.escape`, so a name such as ``<script>`` shows as text. The
numbers use :mod:`metrics_core.formats` (the digits the dashboard shows); intervals are the
dashboard's: the 95% percentile bootstrap over users (1,000 resamples, seed 0) of each per-user
metric's mean, from :func:`metrics_core.analysis.compare.summary_table`. An ``mc.compare`` result is a pandas
DataFrame, whose own HTML repr escapes its cells, shown whole (:func:`metrics_core.analysis.paper_table.show_whole`).
"""

from __future__ import annotations

import html
from typing import Any, Iterable, Mapping, Sequence

from .. import formats as fmt
from ..brief.build import Brief
from ..brief.html import brief_html as brief_section
from ..colors import model_colors
from ..analysis.compare import summary_table
from ..evaluation import Evaluation
from ..analysis.explain import Explanation
from ..ope.evaluate import NAMES as ESTIMATOR_NAMES, OffPolicy

_STYLE = ("<style>.mc-nb table{border-collapse:collapse;margin:4px 0}.mc-nb th,.mc-nb td{padding:2px 8px;"
          "border-bottom:1px solid #ddd;text-align:left}.mc-nb td.n{text-align:right;font-variant-numeric:"
          "tabular-nums}.mc-nb .note{color:#555}.mc-nb .warn{color:#9a4d00}"
          ".mc-nb .swatch{display:inline-block;width:.8em;height:.8em;margin-right:4px;border-radius:2px}"
          ".mc-nb .sig-up{color:#1b5e20}.mc-nb .sig-down{color:#b71c1c}</style>")


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    """An HTML table, every cell escaped; the columns ``numeric`` are right-aligned."""
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td class='n'>{_e(v)}</td>" if i in numeric else f"<td>{_e(v)}</td>"
                                    for i, v in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _block(title: str, *parts: str) -> str:
    return f"<div class='mc-nb'>{_STYLE}<strong>{_e(title)}</strong>{''.join(parts)}</div>"


def _settings(conventions: Mapping[str, Any]) -> str:
    shown = ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}" for k, v in conventions.items())
    return f"<p class='note'>Settings: {_e(shown)}.</p>" if shown else ""


def evaluation_html(ev: Any) -> str:
    """Each metric's value with its 95% bootstrap interval (per-user metrics), the users
    evaluated, every convention used and the data's warnings."""
    rows = summary_table({"model": ev}, n_resamples=1000, seed=0)
    body = []
    for r in rows.itertuples(index=False):
        interval = "" if r.ci_low != r.ci_low else f"[{fmt.metric(r.ci_low)}, {fmt.metric(r.ci_high)}]"
        body.append((r.metric, fmt.metric(r.value), interval, fmt.count(r.n) if r.n else ""))
    warnings = "".join(f"<li class='warn'>{_e(w)}</li>" for w in ev.diagnostics.warnings())
    return _block(f"Evaluation of {fmt.plural(ev.n_users, 'user')}",
                  table(("metric", "value", "95% CI (bootstrap over users)", "users"), body, numeric=(1, 3)),
                  _settings(ev.conventions), f"<ul>{warnings}</ul>" if warnings else "")


def brief_html(brief: Any) -> str:
    """The brief's title and the report's brief section (:func:`metrics_core.brief.html.brief_html`):
    notes, decision, verdict lines with their intervals, coverage, segments and failure groups."""
    colors = model_colors([brief.decision.baseline, *brief.decision.challengers])
    return _block(brief.title or "Decision brief", brief_section(brief, colors))


def explanation_html(ex: Any) -> str:
    """The metric under every preset, and the path between two presets one convention at a time."""
    values = [(preset, r["library"], r["library_metric"], fmt.metric(r["value"]))
              for preset, r in ex.values.iterrows()]
    steps = [(r["convention"], r["from"], r["to"], fmt.metric(r["value"]), fmt.signed(r["change"]))
             for r in ex.steps.to_dict("records")]
    return _block(f"{ex.metric} as each library computes it",
                  table(("preset", "library", "library's name", "value"), values, numeric=(3,)),
                  f"<p class='note'>From {_e(ex.source)} ({_e(fmt.metric(ex.start))}) to {_e(ex.target)} "
                  f"({_e(fmt.metric(ex.end))}), one convention at a time:</p>",
                  table(("convention", "from", "to", "value after", "change"), steps, numeric=(3, 4)))


def _interval(low: float, high: float, number) -> str:
    return "" if low != low or high != high else f"[{number(low)}, {number(high)}]"


def off_policy_html(result: Any) -> str:
    """An ``mc.off_policy`` result: the verdict lines, every estimate with its bootstrap interval and
    its lift over the logging policy, the logging policy's value, the weights' diagnostics and every
    warning in words."""
    conf = f"{float(result.settings.get('confidence', 0.95)):.0%}"
    estimates = [(r["model"], ESTIMATOR_NAMES.get(r["estimator"], r["estimator"]), fmt.metric(r["value"]),
                  _interval(r["low"], r["high"], fmt.metric),
                  "" if r["lift"] != r["lift"] else f"{r['lift']:+.1%}",
                  _interval(r["lift_low"], r["lift_high"], lambda v: f"{v:+.1%}"))
                 for r in result.estimates.to_dict("records")]
    diagnostics = [(r["model"], fmt.count(r["rounds"]), fmt.count(r["ess"]), f"{r['ess_share']:.1%}",
                    f"{r['max_weight']:.4g}", f"{r['mean_weight']:.4g}", f"{r['unlogged_mass']:.1%}")
                   for r in result.diagnostics.to_dict("records")]
    logging = result.logging
    warnings = "".join(f"<li class='warn'>{_e(model)}: {_e(w)}</li>"
                       for model, items in result.warnings.items() for w in items)
    verdicts = "".join(f"<li>{_e(line)}</li>" for line in result.verdicts["line"])
    return _block("Off-policy estimates",
                  f"<ul>{verdicts}</ul>",
                  table(("model", "estimator", "value", f"{conf} interval", "lift", f"{conf} interval"),
                        estimates, numeric=(2, 4)),
                  f"<p class='note'>Logging policy (the mean logged reward): {_e(fmt.metric(logging['value']))} "
                  f"over {_e(fmt.count(logging['rounds']))} rounds.</p>",
                  table(("model", "rounds", "effective sample size", "share of rounds", "largest weight",
                         "mean weight", "probability on unlogged items"), diagnostics, numeric=(1, 2, 3, 4, 5, 6)),
                  f"<ul>{warnings}</ul>" if warnings else "")


Evaluation._repr_html_ = evaluation_html
Brief._repr_html_ = brief_html
Explanation._repr_html_ = explanation_html
OffPolicy._repr_html_ = off_policy_html
