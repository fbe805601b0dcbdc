"""Long names in charts: legend entries and category tick labels cut to a fixed width.

A model is named after its file, and a file name may hold a thousand characters: drawn whole as
a legend entry or an axis label it takes the chart's width and squeezes the plot to nothing.
:func:`short_labels` cuts each such text to :data:`MAX_LABEL_CHARS` characters, keeping its start
and its end around an ellipsis (``a_very_long_na…model_v2 · ndcg@10``: names that differ only at
the end stay apart), after the figure is built; the whole text stays in the hover, which the
figure builders write from the data (a tick's hover shows its category, not the cut label), and a
cut trace name is kept whole in the trace's ``meta`` (``%{meta}`` in a hover template).
Texts are escaped for plotly already (:func:`metrics_core.outputs.report.plotly_text`): a cut never
splits an HTML entity such as ``&lt;``.
"""

from __future__ import annotations

import re

#: the longest legend entry or category label drawn whole
MAX_LABEL_CHARS = 40
_ELLIPSIS = "…"
_PARTIAL_ENTITY_END = re.compile(r"&[#\w]*$")
_PARTIAL_ENTITY_START = re.compile(r"^[#\w]*;")


def shorten(text: str, limit: int = MAX_LABEL_CHARS) -> str:
    """``text`` when at most ``limit`` characters, else its start and end around ``…`` (``limit``
    characters or fewer, never cutting inside an HTML entity)."""
    if len(text) <= limit:
        return text
    tail = max((limit - 1) // 3, 1)
    head = text[: limit - 1 - tail]
    end = text[len(text) - tail:]
    head = _PARTIAL_ENTITY_END.sub("", head)
    if "&" in text[len(text) - tail - 8: len(text) - tail]:  # the end may start inside an entity
        end = _PARTIAL_ENTITY_START.sub("", end)
    return head + _ELLIPSIS + end


def _axis_name(trace, letter: str) -> str:
    """The layout key of the ``letter`` axis (x or y) a trace is drawn on: ``xaxis``, ``xaxis2``..."""
    ref = getattr(trace, f"{letter}axis", None) or letter
    return f"{letter}axis{ref[1:]}"


def short_labels(fig, limit: int = MAX_LABEL_CHARS):
    """``fig`` (changed in place and returned) with every trace name and every category of an axis
    longer than ``limit`` characters drawn cut (:func:`shorten`); a cut trace name stays whole in
    its ``meta`` unless the trace has one already."""
    for trace in fig.data:
        name = getattr(trace, "name", None)
        if isinstance(name, str) and len(name) > limit:
            if trace.meta is None:
                trace.meta = name
            trace.name = shorten(name, limit)
    for letter in ("x", "y"):
        categories: dict[str, dict[str, None]] = {}
        for trace in fig.data:
            values = getattr(trace, letter, None) if letter in trace else None
            if values is None:
                continue
            texts = categories.setdefault(_axis_name(trace, letter), {})
            texts.update((v, None) for v in values if isinstance(v, str))
        for axis, texts in categories.items():
            if any(len(t) > limit for t in texts):
                fig.layout[axis].update(tickmode="array", tickvals=list(texts),
                                        ticktext=[shorten(t, limit) for t in texts])
    return fig
