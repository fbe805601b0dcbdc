"""Every chart gets plotly's ``plotly_white`` template without it being validated again
(:mod:`metrics_core.outputs.plot.template`), and is the same figure as one given
``template="plotly_white"`` the validated way: each figure builder is run twice, once as shipped and
once with the template set by ``fig.update_layout(template="plotly_white")`` (plotly's public,
validating path, the reference), and the two figures' JSON must be equal."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from metrics_core.outputs.plot import compare_figures, figures, template
from metrics_core.outputs.plot.template import use_template

NAMES = ["pop", "mf <b>x</b>", "two-tower"]
COLORS = dict(zip(NAMES, ["#111111", "#222222", "#333333"]))
RNG = np.random.default_rng(3)


def _pairs(n: int) -> pd.DataFrame:
    base = RNG.random(n)
    return pd.DataFrame({"user_id": [f"u{i}" for i in range(n)], "baseline": base,
                         "challenger": np.clip(base + RNG.normal(0, 0.2, n), 0, 1),
                         "segment": RNG.choice(["a", "b", "(missing)"], n)})


TABLE = pd.DataFrame({"model": NAMES[1:], "baseline": NAMES[0], "metric": "ndcg@10", "wins": [3, 4],
                      "ties": [1, 1], "losses": [2, 1], "diff": [0.1, -0.1], "lift": [0.1, -0.1],
                      "lift_ci_low": [0.0, -0.2], "lift_ci_high": [0.2, 0.0], "ci_low": [0.0, -0.2],
                      "ci_high": [0.2, 0.0], "significant": [True, False]})
CURVE = pd.DataFrame({"fpr": [0, 0.5, 1], "tpr": [0, 0.7, 1], "precision": [1, 0.6, 0.5],
                      "recall": [0, 0.5, 1], "threshold": [1, 0.5, 0]})
BUILDERS = {
    "lift_forest": lambda: compare_figures.lift_forest(TABLE),
    "win_tie_loss": lambda: compare_figures.win_tie_loss(TABLE),
    "difference_forest": lambda: compare_figures.difference_forest(TABLE),
    "pair_scatter": lambda: compare_figures.pair_scatter(_pairs(50), "ndcg@10", NAMES[0], NAMES[1]),
    "pair_density": lambda: compare_figures.pair_scatter(_pairs(compare_figures.DENSITY_ABOVE + 1), "ndcg@10",
                                                         NAMES[0], NAMES[1]),
    "pair_differences": lambda: compare_figures.pair_differences(_pairs(80), "ndcg@10", NAMES[0], NAMES[1],
                                                                 -0.01, 0.02),
    "summary_bars": lambda: figures.summary_bars(pd.DataFrame(
        {"model": NAMES, "metric": "ndcg@10", "value": [0.3, 0.4, 0.5], "ci_low": [0.2, 0.3, 0.4],
         "ci_high": [0.4, 0.5, 0.6]}), "ndcg@10", COLORS),
    "metric_vs_k": lambda: figures.metric_vs_k(pd.DataFrame(
        [(m, "ndcg", k, 0.1 * k) for m in NAMES for k in (1, 2, 3)], columns=["model", "metric", "k", "value"]),
        COLORS, 2),
    "roc": lambda: figures.roc({n: CURVE for n in NAMES}, {n: 0.7 for n in NAMES}, COLORS),
    "pr": lambda: figures.pr({n: CURVE for n in NAMES}, {n: 0.6 for n in NAMES}, COLORS),
}


def _validated(fig, name=template.TEMPLATE):
    return fig.update_layout(template=name)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_each_chart_equals_the_one_given_the_template_the_validated_way(name, monkeypatch):
    state = RNG.bit_generator.state
    shipped = json.loads(BUILDERS[name]().to_json())
    for module in (compare_figures, figures):
        monkeypatch.setattr(module, "use_template", _validated)
    RNG.bit_generator.state = state  # the same random data for the reference
    reference = json.loads(BUILDERS[name]().to_json())
    assert reference["layout"]["template"]  # the reference does hold the template
    assert shipped == reference


def test_the_template_is_a_copy_the_figure_owns():
    import plotly.io as pio

    fig = use_template(go.Figure(go.Bar(x=[1], y=[2])))
    registered = pio.templates[template.TEMPLATE].to_plotly_json()
    assert fig.to_dict()["layout"]["template"] == registered
    fig.layout.template.layout.paper_bgcolor = "red"  # changing one figure's copy ...
    assert pio.templates[template.TEMPLATE].to_plotly_json() == registered  # ... leaves the registered one
    assert use_template(go.Figure()).to_dict()["layout"]["template"] == registered
