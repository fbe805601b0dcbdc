"""Charts of models named after 1,204-character files: legend entries and category labels are cut to
40 characters around an ellipsis (start and end kept, no HTML entity split), the whole name stays in
the data the hover shows, and names differing only at their end stay apart."""

from __future__ import annotations

import pandas as pd
import pytest

from metrics_core.outputs.plot import compare_figures, figures
from metrics_core.outputs.plot.labels import MAX_LABEL_CHARS, shorten
from metrics_core.outputs.report import plotly_text

LONG = ("a_very_long_model_name_" * 60)[:1200]
NAMES = [LONG + "_v1", LONG + "_v2", "<b>short</b>"]


def drawn_texts(fig) -> list[str]:
    """Every legend entry and every category tick label the figure draws."""
    texts = [t.name for t in fig.data if isinstance(t.name, str) and t.showlegend is not False]
    for key in fig.layout:
        if key.startswith(("xaxis", "yaxis")) and fig.layout[key].ticktext is not None:
            texts += list(fig.layout[key].ticktext)
    return texts


def test_shorten_keeps_start_and_end_and_never_splits_an_entity():
    assert shorten("short") == "short"
    cut = shorten(LONG + "_v2")
    assert len(cut) <= MAX_LABEL_CHARS and cut.startswith(LONG[:20]) and cut.endswith("_v2") and "…" in cut
    assert shorten(LONG + "_v1") != cut
    escaped = plotly_text("<" * 30 + ">" * 30)  # &lt;&lt;...&gt;&gt;
    cut = shorten(escaped)
    head, tail = cut.split("…")
    assert head == "&lt;" * (len(head) // 4) and tail == "&gt;" * (len(tail) // 4)


def test_charts_cut_long_names_and_keep_them_whole_in_the_data():
    colors = dict(zip(NAMES, ["#111111", "#222222", "#333333"]))
    bars = figures.summary_bars(pd.DataFrame({"model": NAMES, "metric": "ndcg@10", "value": [0.3, 0.4, 0.5],
                                              "ci_low": [0.2, 0.3, 0.4], "ci_high": [0.4, 0.5, 0.6]}),
                                "ndcg@10", colors)
    curves = figures.metric_vs_k(pd.DataFrame([(m, "ndcg", k, 0.1 * k) for m in NAMES for k in (1, 2)],
                                              columns=["model", "metric", "k", "value"]), colors)
    table = pd.DataFrame({"model": NAMES[:2], "baseline": "base", "metric": "ndcg@10", "wins": [3, 4],
                          "ties": [1, 1], "losses": [2, 1], "diff": [0.1, -0.1], "lift": [0.1, -0.1],
                          "lift_ci_low": [0.0, -0.2], "lift_ci_high": [0.2, 0.0], "ci_low": [0.0, -0.2],
                          "ci_high": [0.2, 0.0], "significant": [True, False]})
    for fig in (bars, curves, compare_figures.win_tie_loss(table), compare_figures.lift_forest(table)):
        texts = drawn_texts(fig)
        assert texts and all(len(t) <= MAX_LABEL_CHARS for t in texts), [len(t) for t in texts]
        data = [v for t in fig.data for axis in ("x", "y") for v in list(getattr(t, axis, None) if getattr(
            t, axis, None) is not None else []) if isinstance(v, str)] + [t.hovertemplate or "" for t in fig.data]
        assert any(LONG in v for v in data)  # the whole name, shown on hover
    assert {t.name for t in curves.data} >= {shorten(plotly_text(n)) for n in NAMES}
    assert len({t.name for t in curves.data}) == 3


@pytest.mark.parametrize("name", ["x" * MAX_LABEL_CHARS, "short"])
def test_names_that_fit_are_drawn_as_they_are(name):
    fig = figures.summary_bars(pd.DataFrame({"model": [name], "metric": "m", "value": [1.0], "ci_low": [0.5],
                                             "ci_high": [1.5]}), "m", {name: "#000000"})
    assert fig.data[0].name == name and fig.layout.xaxis.ticktext is None
