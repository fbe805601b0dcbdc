"""Number parameters of the address (``?k=``, ``?beta=``, ``?threshold=``, ...) checked
before the sidebar's controls read them.

The controls are bound to the URL (``bind="query-params"``), and Streamlit seeds a bound
control from the address as the browser first sent it. A value metrics_core refuses
(``?k=inf``, ``?beta=1e308``, ``?threshold=nan``) would otherwise reach the control:
Streamlit 1.67's whole-number input raises ``OverflowError`` on ``inf`` and ``1e999``,
and a float input keeps a finite value such as ``1e308`` that the evaluation then
refuses. :func:`check_url_numbers` runs first: each number parameter is checked by
metrics_core (:func:`metrics_core.metrics.registry.check_cutoff` for K within the sidebar's
range, :func:`metrics_core.metrics.conventions.check` for the conventions), and a refused one
is taken out of the address and of Streamlit's seed, so its control starts at the
default; the page then shows metrics_core's one-line message, as text.
"""

from __future__ import annotations

import functools

import streamlit as st
from streamlit.runtime.state.session_state_proxy import get_session_state

from metrics_core.metrics import conventions as conv
from metrics_core.errors import MetricsError
from metrics_core.metrics.registry import check_cutoff

from . import text
from .controls import K_DEFAULT, K_MAX

#: the URL parameters of number controls, with their defaults
NUMBER_PARAMS = {"k": K_DEFAULT, **{c.name: c.default for c in conv.CONVENTIONS if c.is_number}}


@functools.lru_cache(maxsize=1024)
def problem(key: str, raw: str) -> str | None:
    """metrics_core's one-line message for number parameter ``key`` given as ``raw``, or None when valid
    (each text checked once per server process: the address is read again on every rerun)."""
    try:
        if key == "k":
            check_cutoff(raw, K_MAX, "k")
        else:
            conv.check(key, raw)
    except MetricsError as e:
        return str(e)
    return None


def _forget(key: str) -> None:
    """Take ``key`` out of the address and out of the values Streamlit seeds bound controls from
    (the address as first received: deleting it from ``st.query_params`` alone is not enough)."""
    with get_session_state().query_params() as qp:
        getattr(qp, "_initial_query_params", {}).pop(key, None)
        qp.remove_param(key)


def check_url_numbers() -> list[str]:
    """Check every number parameter of the address before the controls are drawn; returns the
    messages of those refused (each then dropped, its control at the default)."""
    messages = []
    for key, default in NUMBER_PARAMS.items():
        if key not in st.query_params:
            continue
        values = st.query_params.get_all(key)
        raw = values[-1] if values else ""
        message = problem(key, raw)
        if message is not None:
            _forget(key)
            messages.append(f"The address's {key}={raw[:40]!r} was not used: {message}. "
                            f"Showing the default {key} = {default:g}.")
    return messages


def show(messages: list[str]) -> None:
    """Each message as a warning, shown as plain text (never markdown)."""
    for message in messages:
        st.warning(text.md(message, limit=400), icon=":material/link_off:")
