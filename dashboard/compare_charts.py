"""Plotly figures for the Compare page: the builders of :mod:`metrics_core.plot.compare_figures`,
which ``mc.plot`` draws from as well."""

from metrics_core.plot.compare_figures import (DENSITY_ABOVE, SEGMENT_PALETTE, WEBGL_ABOVE,  # noqa: F401
                                               WTL_COLORS, diff_histogram, difference_forest, lift_forest,
                                               pair_differences, pair_scatter, win_tie_loss)
