"""What every page does around its widgets: stop with a one-line error, require
loaded models, say over which users the page's numbers are, and hand a pair of models
and a user over to the Failures page."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import metrics_core as mc
import streamlit as st
from metrics_core.errors import MetricsError

from . import text
from .loading import get_models, load_errors

_FOCUS = "mcd_focus"


def request_drilldown(model: str, user_id: Any, other: str | None = None) -> None:
    """Make the Failures page open on ``user_id`` of ``model``, beside ``other`` (the model it
    was compared with)."""
    st.session_state[_FOCUS] = (model, user_id, other)


def pop_drilldown() -> tuple[str, Any, str | None] | None:
    """The pending drill-down request ``(model, user, other)``, consumed (used by the Failures page)."""
    return st.session_state.pop(_FOCUS, None)


def show_population(warn: bool = True) -> Any:
    """Say over which users the page's numbers are (the sidebar's "Users counted") and name
    every model that did not serve every user, with how many and in which segments of the
    user attributes: as warnings (``warn``) or as one caption. Returns the population."""
    from .compute import coverage_lines, population

    from .controls import unit

    counted = population()
    lines = coverage_lines()
    head = f"{unit().capitalize()} counted: {counted.describe(unit())}."
    if warn:
        st.caption(text.md(head, limit=600))
        for line in lines:
            st.warning(text.md(line, limit=600), icon=":material/person_off:")
    else:
        st.caption(text.md(" ".join([head, *lines]), limit=1200))
    return counted


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


def shown_table(data: Any, *, key: str, **dataframe: Any) -> Any:
    """``st.dataframe(data, key=key, ...)`` with a "Download CSV" button under it whose bytes
    (:func:`dashboard.exports.table_csv`, built on click) are spreadsheet-safe; Streamlit's own
    toolbar export is off. Returns what ``st.dataframe`` returns (the selection, when asked)."""
    from . import exports

    shown = st.dataframe(data, key=key, **dataframe)
    st.download_button(exports.LABEL, data=lambda: exports.table_csv(data), file_name=exports.file_name(key),
                       mime="text/csv", key=f"{key}_csv", on_click="ignore", type="tertiary",
                       icon=":material/download:", help=text.SPREADSHEET_NOTE)
    return shown
