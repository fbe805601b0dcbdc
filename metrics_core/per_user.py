"""The per-user table of an evaluation: one row per user, indexed by user id, one column per
per-user metric (what :func:`metrics_core.analysis.compare.compare`, :mod:`metrics_core.analysis.population` and
the brief read)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from metrics_core.errors import MetricsError


def per_user_table(evaluation: Any) -> pd.DataFrame:
    """The per-user table of an evaluation (an object with ``.per_user``) or a DataFrame itself."""
    table = getattr(evaluation, "per_user", evaluation)
    if not isinstance(table, pd.DataFrame):
        raise MetricsError(
            f"expected an Evaluation (with .per_user) or a per-user DataFrame, got {type(evaluation).__name__}")
    return table
