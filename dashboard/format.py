"""Number formats shared by every page and download: one look for metrics, counts,
p-values, lifts and shares, and Streamlit column settings that carry them with the
metric's help text.

Metrics show 4 decimals, counts thousands separators, p-values 4 decimals or
``< 0.0001``; a missing value is an en dash. The functions are pure (tested without
a running app); :func:`metric_columns` builds ``st.column_config`` objects, which
needs Streamlit importable but no script run.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from . import metric_lists

MISSING = "–"
METRIC_DECIMALS = 4
P_FLOOR = 1e-4


def _missing(value) -> bool:
    try:
        return value is None or math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def metric(value) -> str:
    """A metric value with 4 decimals (``0.1610``); ``–`` when missing."""
    return MISSING if _missing(value) else f"{float(value):.{METRIC_DECIMALS}f}"


def signed(value) -> str:
    """A difference with its sign and 4 decimals (``+0.0240``)."""
    return MISSING if _missing(value) else f"{float(value):+.{METRIC_DECIMALS}f}"


def count(value) -> str:
    """A whole number with thousands separators (``18,240``)."""
    return MISSING if _missing(value) else f"{int(round(float(value))):,}"


def pvalue(value) -> str:
    """A p-value with 4 decimals, or ``< 0.0001`` below that (never ``2.14e-18``)."""
    if _missing(value):
        return MISSING
    p = float(value)
    return f"< {P_FLOOR:.4f}" if p < P_FLOOR else f"{p:.4f}"


def percent(value, signed_: bool = True, decimals: int = 1) -> str:
    """A share or lift given as a fraction, as a percentage (``+12.5%``)."""
    if _missing(value) or math.isinf(float(value)):
        return MISSING
    sign = "+" if signed_ else ""
    return f"{100 * float(value):{sign}.{decimals}f}%"


def metric_columns(metric_labels: Sequence[str], settings: Mapping[str, object] | None = None) -> dict:
    """``column_config`` for ``st.dataframe``: each metric column as a number with 4 decimals and its
    help (meaning, formula, direction, current settings) as the header tooltip."""
    import streamlit as st

    return {m: st.column_config.NumberColumn(m, help=metric_lists.help_for(m, settings) or None,
                                             format=f"%.{METRIC_DECIMALS}f")
            for m in metric_labels}
