"""What the address bar carries besides the bound widgets.

Widgets created with ``bind="query-params"`` write their own value into the
URL (and Streamlit forbids setting those keys by hand). Two values are not
widgets and are kept here: ``analysis`` (the id of the stored data the view
is built on) and ``user`` (the user opened on the Failures page). Both are
remembered in the session and written back into the URL on every run, so
that page navigation, which drops unbound parameters, never loses them.
"""

from __future__ import annotations

import math
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
    """Adopt unbound values the URL brings into a new session (a reload, a copied
    address), then write the session's values back into the URL (after a page switch
    dropped them). ``analysis`` is adopted by ``sources.open_requested`` only."""
    for key in _UNBOUND:
        if key != ANALYSIS and get(key) is None and requested(key) is not None:
            st.session_state[_PREFIX + key] = requested(key)
        value = get(key)
        if value is not None and st.query_params.get(key) != value:
            st.query_params[key] = value
    _sync_choices()


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


# ----------------------------------------------------------------------------- page choices
#
# A page's choices (Compare's baseline, Failures' model, ...) are kept in the URL on every
# page, not only while their page is shown (a widget bound with bind="query-params" leaves
# the URL when its page does). Each page calls :func:`choice` before drawing a widget and
# :func:`keep` after; :func:`sync` writes the remembered values back after navigation.

_CHOICES = "mcd_url_choices"
#: Every page choice kept in the URL (widget key = URL parameter).
CHOICE_KEYS = (
    "compare_baseline", "compare_challengers", "compare_metrics", "compare_test", "compare_correction",
    "compare_alpha", "compare_family", "compare_matrix_metric", "compare_segment", "compare_focus_model",
    "compare_focus_metric", "compare_n_regressions", "compare_sampled_items", "compare_sampled_correction",
    "dist_metric", "dist_segment", "failures_model", "failures_metric", "failures_n", "failures_group",
    "failures_attribute", "failures_segment", "failures_other",
    "curves_bins", "curves_threshold", "curves_recall", "curves_cm_model",
    "overview_ci_on", "overview_diversity", "overview_curves_on", "overview_errors",
    "overview_bar_metric", "explain_model", "explain_metric", "explain_from", "explain_to",
    "ope_policy", "ope_temperature", "ope_clip", "failures_ope_model",
)


def adopt(view: dict) -> None:
    """Take the page choices a stored view holds (a shared snapshot's Compare choices, saved by
    Share or by ``metrics-core publish``) when neither this session nor the URL has its own, so a
    link with only ``?analysis=<id>`` shows the saved decision."""
    memory = _memory()
    for key in CHOICE_KEYS:
        value = view.get(key)
        if value is None or key in memory or key in st.query_params or key in st.session_state:
            continue
        memory[key] = [str(v) for v in value] if isinstance(value, (list, tuple)) else str(value)


def _memory() -> dict[str, str | list[str]]:
    return st.session_state.setdefault(_CHOICES, {})


def _to_url(value: Any) -> str | list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _from_url(raw: str | list[str], kind: type) -> Any:
    try:
        if kind is list:
            return list(raw) if isinstance(raw, list) else [raw]
        raw = raw[-1] if isinstance(raw, list) else raw
        if kind is bool:
            return {"true": True, "false": False}[raw.lower()]
        if kind is int:
            return int(raw)
        if kind is float:  # nan and inf are no position of a slider or bound of a range
            value = float(raw)
            return value if math.isfinite(value) else None
        return str(raw)
    except (KeyError, ValueError, TypeError, IndexError):
        return None


def choice(key: str, kind: type = str, options=None, low=None, high=None) -> None:
    """Before widget ``key`` is drawn: give it the value the session remembers or the
    URL asks for, when its own state is gone (another page was shown) and the value is
    valid (one of ``options``; within ``low``..``high``). A metric chosen at another
    cutoff (``map@10`` when the options are at K = 20) follows K: it becomes the same metric
    at the options' cutoff, in the widget's state as in the remembered value."""
    if key in st.session_state:
        if options is not None:
            current = st.session_state[key]
            moved = _at_cutoff(current, options)
            if moved != current:
                st.session_state[key] = moved
        return
    raw = _memory().get(key)
    if raw is None:
        raw = st.query_params.get_all(key) if key in st.query_params else None
        if raw is not None and kind is not list:
            raw = raw[-1] if raw else None
    if raw is None:
        return
    value = _from_url(raw, kind)
    if value is None:
        return
    if options is not None:
        value = _at_cutoff(value, options)
    if kind is list:
        allowed = list(options) if options is not None else value
        value = [v for v in dict.fromkeys(value) if v in allowed]
    elif options is not None and value not in list(options):
        return
    if (low is not None and value < low) or (high is not None and value > high):
        return
    st.session_state[key] = value


def has_choices(prefix: str, view: dict | None = None) -> bool:
    """Whether any page choice starting with ``prefix`` was made: in this session, in the URL or
    in a stored ``view`` being opened."""
    keys = [*_memory(), *st.query_params.keys(), *(view or {})]
    return any(str(key).startswith(prefix) for key in keys)


def remembered(key: str, default: Any, kind: type = str, options=None) -> Any:
    """Another page's choice, read without drawing its widget (the Brief reads Compare's): the
    widget's state while it exists, else the value the session remembers or the URL asks for,
    when valid (one of ``options``; a list keeps its valid items), else ``default``. Nothing is
    written: the widget keeps its own default when its page draws it."""
    if key in st.session_state:
        value = st.session_state[key]
    else:
        raw = _memory().get(key)
        if raw is None and key in st.query_params:
            raw = st.query_params.get_all(key)
            raw = raw if kind is list else (raw[-1] if raw else None)
        value = None if raw is None else _from_url(raw, kind)
    if value is None:
        return default
    if options is not None:
        value = _at_cutoff(value, options)
        if kind is list:
            value = [v for v in dict.fromkeys(value) if v in list(options)]
            return value or default
        if value not in list(options):
            return default
    return value


def remember(key: str, value: Any) -> None:
    """Set another page's choice before switching to it (its widget is not drawn here): the
    page adopts it when it draws the widget."""
    st.session_state.pop(key, None)
    _memory()[key] = _to_url(value)


def _at_cutoff(value: Any, options) -> Any:
    """``value`` (a label or a list of labels) with each ``metric@k`` that is not an option
    replaced by the one option ``metric@K`` of the same metric, when there is exactly one."""
    if isinstance(value, list):
        return [_at_cutoff(v, options) for v in value]
    options = list(options)
    if not isinstance(value, str) or "@" not in value or value in options:
        return value
    metric = value.rsplit("@", 1)[0]
    same = [o for o in options if isinstance(o, str) and "@" in o and o.rsplit("@", 1)[0] == metric]
    return same[0] if len(same) == 1 else value


def keep(key: str, value: Any, default: Any) -> None:
    """After widget ``key`` is drawn: remember its value and show it in the URL
    (left out of the URL while it equals ``default``)."""
    memory = _memory()
    if value == default or value is None:
        memory.pop(key, None)
        if key in st.query_params:
            del st.query_params[key]
        return
    form = _to_url(value)
    memory[key] = form
    current = st.query_params.get_all(key)
    if current != (form if isinstance(form, list) else [form]):
        st.query_params[key] = form


def bound(draw, key: str, default: Any, kind: type = str, options=None, low=None, high=None) -> Any:
    """Draw a widget with ``draw()`` between :func:`choice` and :func:`keep`; its value."""
    choice(key, kind, options, low, high)
    value = draw()
    keep(key, value, default)
    return value


def _sync_choices() -> None:
    memory = _memory()
    for key in CHOICE_KEYS:  # a new session (reload, copied address) adopts the URL's choices
        if key not in memory and key in st.query_params:
            values = st.query_params.get_all(key)
            memory[key] = values if len(values) != 1 else values[0]
    for key, form in memory.items():
        if st.query_params.get_all(key) != (form if isinstance(form, list) else [form]):
            st.query_params[key] = form
