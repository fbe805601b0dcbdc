"""What the address bar carries besides the bound widgets.

Widgets created with ``bind="query-params"`` write their own value into the
URL (and Streamlit forbids setting those keys by hand). Two values are not
widgets and are kept here: ``analysis`` (the id of the stored data the view
is built on) and ``user`` (the user opened on the Failures page). Both are
remembered in the session and written back into the URL on every run, so
that page navigation, which drops unbound parameters, never loses them.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

ANALYSIS = "analysis"
USER = "user"
_UNBOUND = (ANALYSIS, USER)
_PREFIX = "mcd_url_"


def get(key: str) -> str | None:
    """The session's value of an unbound URL parameter (``analysis`` or ``user``)."""
    return st.session_state.get(_PREFIX + key)


def set(key: str, value: Any) -> None:  # noqa: A001 - mirrors st.query_params
    """Remember ``value`` for ``key`` and put it in the URL (None removes it)."""
    if value is None:
        st.session_state.pop(_PREFIX + key, None)
        if key in st.query_params:
            del st.query_params[key]
        return
    value = str(value)
    st.session_state[_PREFIX + key] = value
    if st.query_params.get(key) != value:
        st.query_params[key] = value


def sync() -> None:
    """Write the session's unbound values back into the URL (after a page switch
    dropped them); a value already in the URL and not yet seen is adopted by the
    caller through :func:`requested`."""
    for key in _UNBOUND:
        value = get(key)
        if value is not None and st.query_params.get(key) != value:
            st.query_params[key] = value


def requested(key: str) -> str | None:
    """The value the URL asks for (e.g. a link opened in a new tab)."""
    return st.query_params.get(key)


def carried() -> dict[str, str]:
    """Unbound values to keep across ``st.switch_page`` (bound widgets restore themselves)."""
    return {key: value for key in _UNBOUND if (value := get(key)) is not None}


def switch_page(page: str, **extra: Any) -> None:
    """``st.switch_page`` that keeps the analysis id (and ``extra`` unbound values).

    Passing only unbound keys matters: without ``query_params`` Streamlit tries to
    clear the URL and fails when a bound widget is off its default; with a bound key
    in ``query_params`` it refuses to set it.
    """
    params = carried()
    params.update({k: str(v) for k, v in extra.items() if v is not None})
    for key, value in params.items():
        st.session_state[_PREFIX + key] = value
    st.switch_page(page, query_params=params)
