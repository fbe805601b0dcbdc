"""The decision brief as HTML, the first section of the report: the same lines and tables the
dashboard's Brief page shows (:mod:`metrics_core.brief.text`), every string escaped."""

from __future__ import annotations

import html
from typing import Any, Mapping

import pandas as pd

from metrics_core.brief import text as bt
from metrics_core.units import noun


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _table(frame: pd.DataFrame, table_id: str, colors: Mapping[str, str]) -> str:
    head = "".join(f"<th class='l'>{_e(c)}</th>" for c in frame.columns)
    rows = []
    for _, r in frame.iterrows():
        cells = []
        for column, value in r.items():
            swatch = (f"<span class='swatch' style='background:{_e(colors[value])}'></span>"
                      if column == "challenger" and value in colors else "")
            cells.append(f"<td class='l'>{swatch}{_e(value)}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return f"<table id='{table_id}'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def brief_html(brief: Any, colors: Mapping[str, str]) -> str:
    """The brief's section: notes, decision, verdict lines, coverage, segments, failure groups."""
    parts = ["<section id='brief'>"]
    if brief.notes:
        parts.append(f"<p id='notes' class='notes'>{_e(brief.notes)}</p>")
    parts.append(f"<p class='meta' id='decision'>{_e(bt.headline(brief))} Over {_e(brief.population)}.</p>")
    lines = []
    for line, (_, r) in zip(bt.verdict_lines(brief), brief.verdicts.iterrows()):
        cls = {"▲": " class='sig-up'", "▼": " class='sig-down'"}.get(str(r["verdict"])[:1], "")
        swatch = f"<span class='swatch' style='background:{_e(colors.get(r['model'], '#888'))}'></span>"
        lines.append(f"<li{cls}>{swatch}{_e(line)}</li>")
    parts.append(f"<ul id='verdicts'>{''.join(lines)}</ul>")
    best_two = bt.head_to_head_lines(brief)
    if best_two:
        parts.append("<ul id='head-to-head'>" + "".join(f"<li>{_e(line)}</li>" for line in best_two) + "</ul>")
    if brief.accounting:
        parts.append(f"<p class='note' id='accounting'>{_e(bt.accounting_text(brief))}</p>")
    if brief.coverage:
        parts.append("<ul id='brief-coverage'>" + "".join(f"<li class='warn'>{_e(c)}</li>" for c in brief.coverage)
                     + "</ul>")
    parts.append("<h3>Where a challenger loses</h3>")
    losses = bt.segment_loss_rows(brief, limit=8)
    if len(losses):
        parts.append(_table(losses, "brief-segments", colors))
    parts.append(f"<p class='note'>{_e(bt.segment_note(brief))}</p>")
    parts.append("<h3>What explains the loss</h3>")
    groups = bt.failure_rows(brief, per_pair=3)
    if len(groups):
        parts.append(_table(groups, "brief-failures", colors))
        parts.append(f"<p class='note'>{_e(bt.failure_note(brief))}</p>")
    else:
        parts.append(f"<p class='note'>No challenger scores below the baseline for any "
                     f"{_e(noun(brief.decision.unit, 1))}.</p>")
    parts.append("</section>")
    return "".join(parts)
