"""Number formats shared by the dashboard, the HTML report and the command line: one look for
metrics, differences, counts, p-values and percentages, so a number reads the same everywhere.

Metrics show 4 decimals, counts thousands separators, p-values 4 decimals or ``< 0.0001``;
a missing value is an en dash.
"""

from __future__ import annotations

import math

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


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 comparison``, ``2 comparisons``, ``1,204 users`` (thousands separators)."""
    word = one if int(n) == 1 else (many or one + "s")
    return f"{count(n)} {word}"
