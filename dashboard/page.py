"""What every page does around its widgets: stop with a one-line error, require
loaded models, and hand a user over to the Failures page."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import metrics_core as mc
import streamlit as st
from metrics_core.errors import MetricsError

from . import text
from .loading import get_models, load_errors

_FOCUS = "mcd_focus"


def request_drilldown(model: str, user_id: Any) -> None:
    """Make the Failures page open on ``user_id`` of ``model``."""
    st.session_state[_FOCUS] = (model, user_id)


def pop_drilldown() -> tuple[str, Any] | None:
    """The pending drill-down request, consumed (used by the Failures page)."""
    return st.session_state.pop(_FOCUS, None)


@contextlib.contextmanager
def guard() -> Iterator[None]:
    """Show a MetricsError as a one-line ``st.error`` and stop the page."""
    try:
        yield
    except MetricsError as exc:
        st.error(text.md(str(exc), limit=600))
        st.stop()


def require_models() -> dict[str, mc.Ranked]:
    """The loaded models; stops the page with a hint when there are none."""
    models = get_models()
    errs = load_errors()
    for msg in errs:
        st.error(text.md(msg, limit=600))
    if not models:
        st.info("No model could be loaded. Open the **Data** page to upload ranked results "
                "or return to the demo data.")
        st.stop()
    return models
