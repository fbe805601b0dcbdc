"""Number formats shared by every page and download: one look for metrics, counts,
p-values, lifts and shares, the empty cell of every table, and Streamlit column settings that carry them with the
metric's help text.

Metrics show 4 decimals, counts thousands separators, p-values 4 decimals or
``< 0.0001``; a missing value is an en dash. The functions are pure (tested without
a running app); :func:`metric_columns` builds ``st.column_config`` objects, which
needs Streamlit importable but no script run.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from . import metric_lists

# The formats themselves live in metrics_core, so the report and the command line read the same.
from metrics_core.formats import MISSING, METRIC_DECIMALS, P_FLOOR, count, metric, percent, plural, pvalue, signed  # noqa: E402,F401


#: What a table cell without a value shows (``st.dataframe(..., placeholder=EMPTY)``; Streamlit
#: writes "None" otherwise): every table of the dashboard leaves such cells empty.
EMPTY = ""


def metric_columns(metric_labels: Sequence[str], settings: Mapping[str, object] | None = None) -> dict:
    """``column_config`` for ``st.dataframe``: each metric column as a number with 4 decimals and its
    help (meaning, formula, direction, current settings) as the header tooltip."""
    import streamlit as st

    return {m: st.column_config.NumberColumn(m, help=metric_lists.help_for(m, settings) or None,
                                             format=f"%.{METRIC_DECIMALS}f")
            for m in metric_labels}
