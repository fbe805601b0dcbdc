"""Plotly figures for the dashboard pages: the builders of :mod:`metrics_core.plot.figures`, which
``mc.plot`` draws from as well, so a notebook and the dashboard show the same figure."""

from metrics_core.plot.figures import (MAX_CURVE_POINTS, PALETTE, box, calibration, confusion,  # noqa: F401
                                       ecdf, metric_vs_k, model_colors, pr, roc, segments, summary_bars, thin)
