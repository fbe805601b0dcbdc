"""Plotly figure of an off-policy estimate (:func:`metrics_core.off_policy`): every estimator of
every model with its bootstrap interval, against the logging policy (layout only: every number comes
from the :class:`~metrics_core.ope.evaluate.OffPolicy` result).

Model names pass through :func:`metrics_core.outputs.report.plotly_text` before they reach plotly,
so a name such as ``<b>x</b>`` shows as text.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metrics_core.outputs.report import plotly_text as esc

from .compare_figures import _layout

#: what the forest draws: the estimated policy value, or its lift over the logging policy's value
MEASURES = ("value", "lift")


def estimates_forest(estimates: pd.DataFrame, logging_value: float, names: Mapping[str, str],
                     colors: Mapping[str, str], measure: str = "value", confidence: float = 0.95) -> go.Figure:
    """One row per estimator, one marker per model with its ``confidence`` interval as error bars.

    ``estimates``: the ``OffPolicy.estimates`` table (``model``, ``estimator``, ``value``, ``low``,
    ``high``, ``lift``, ``lift_low``, ``lift_high``); ``names``: estimator code -> shown name.
    ``measure="value"`` draws the values and the logging policy's value (the mean logged reward) as a
    dotted line; ``"lift"`` draws ``V_e / V_b - 1`` in percent and 0 as the line. An interval that is
    NaN (no bootstrap, or a lift over logged rewards summing to 0) draws the marker alone."""
    scale, low, high = (1.0, "low", "high") if measure == "value" else (100.0, "lift_low", "lift_high")
    column = "value" if measure == "value" else "lift"
    fig = go.Figure()
    for model, rows in estimates.groupby("model", sort=False):
        x = scale * rows[column].to_numpy(dtype=float)
        upper = np.nan_to_num(scale * rows[high].to_numpy(dtype=float) - x)
        lower = np.nan_to_num(x - scale * rows[low].to_numpy(dtype=float))
        labels = [names.get(e, e) for e in rows["estimator"]]
        fig.add_trace(go.Scatter(
            x=x, y=labels, mode="markers", orientation="h", name=esc(model), marker=dict(size=10, color=colors.get(model)),
            error_x=dict(type="data", symmetric=False, array=upper, arrayminus=lower),
            hovertemplate=f"{esc(model)}<br>%{{y}}: %{{x:{'.4g' if measure == 'value' else '+.1f'}}}"
                          f"{'' if measure == 'value' else '%'}<extra></extra>"))
    pct = f"{confidence:.0%}"
    if measure == "value":
        fig.add_vline(x=logging_value, line_color="#999", line_dash="dot",
                      annotation_text=f"logging policy {logging_value:.4g}", annotation_position="top")
        fig.update_xaxes(title="estimated policy value (mean reward per round)")
        title = f"Estimated value of each model's policy, {pct} bootstrap interval"
    else:
        fig.add_vline(x=0, line_color="#999", line_dash="dot")
        fig.update_xaxes(title="lift over the logging policy (%)", ticksuffix="%")
        title = f"Lift over the logging policy, {pct} bootstrap interval"
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(scattermode="group")
    return _layout(fig, title, height=max(280, 130 + 34 * estimates["estimator"].nunique()))
