"""The sidebar: K, gain, tie rule, the users counted, and every other convention of ``mc.evaluate``.

K, gain, ties and the users counted (``users``: every evaluated user, or only those every
model served; see :mod:`metrics_core.analysis.population`) are always shown; the other conventions and a library preset
sit in a collapsed "Conventions" expander. Every control is generated from
:mod:`metrics_core.metrics.conventions` (name, choices, default, help) and bound to the
URL (``?k=20&gain=exponential&ideal=k``), so a reload, a copied address or a
shared view computes the same numbers. Choosing a preset fills the controls
with that library's conventions; each can then be changed on its own (the
expander says which differ from the preset).
"""

from __future__ import annotations

import functools
import re
from typing import Any

import streamlit as st

from metrics_core.metrics import conventions as conv
from metrics_core.analysis.population import DEFAULT_USERS, USERS, USERS_HELP
from metrics_core.errors import MetricsError
from metrics_core.metrics.registry import check_cutoff
from metrics_core.metrics.presets import PRESETS
from metrics_core.units import DEFAULT_UNIT, UNITS

K_DEFAULT = 10
K_MAX = 1000
#: Widget key and URL parameter of the users counted (``?users=served``).
USERS_KEY = "users"
#: Widget key and URL parameter of what a row is (``?unit=queries``), named by every page, file and brief.
UNIT_KEY = "unit"
#: Widget key and URL parameter of how ids are read (``?whole_number_ids=true``): off, ids are kept exactly as
#: written (``12.0`` and ``12`` are two ids, as in trec_eval); on, text writing a whole number with a zero
#: fraction is read as that number (``12.0`` -> ``12``), as ``--whole-number-ids`` does on the command line.
WHOLE_IDS_KEY = "whole_number_ids"
#: The sidebar's label of :data:`WHOLE_IDS_KEY`.
WHOLE_IDS_LABEL = "Read ids 12.0 and 12 as one id"
PRESET_KEY = "preset"
NO_PRESET = "none"
_SPECS = {spec["name"]: spec for spec in conv.widget_specs()}
#: Conventions (names in :data:`metrics_core.metrics.conventions.CONVENTIONS`) drawn at the top of the sidebar,
#: under K (the others go in the expander); with K they are what ``controls()`` returns and what every
#: metric's help states.
TOP = ("gain", "ties")
#: Conventions a page sets itself (the Curves page's threshold slider) are still shown here.
EXPANDER = tuple(name for name in _SPECS if name not in TOP)


def preset_names() -> list[str]:
    """``none`` followed by every library preset."""
    return [NO_PRESET, *(p.name for p in PRESETS)]


def _apply_preset() -> None:
    """Widget callback: set every convention control to the chosen preset's values."""
    name = st.session_state.get(PRESET_KEY, NO_PRESET)
    values = conv.Settings(None if name == NO_PRESET else name)  # a preset's values, checked once per process
    for key, value in values.items():
        st.session_state[key] = value


def _draw(spec: dict, where) -> None:
    help_text = f"{spec['help']} Applies to {spec['applies_to']}." if spec["applies_to"] else spec["help"]
    if spec["widget"] == "number":
        # the default is given only while the session has no value (a preset may have set one)
        default = None if spec["name"] in st.session_state else float(spec["default"])
        where.number_input(spec["label"], value=default, key=spec["name"],
                           bind="query-params", help=help_text, format="%g")
    else:
        where.selectbox(spec["label"], spec["options"], key=spec["name"], bind="query-params", help=help_text)


def render_controls() -> None:
    """Draw the shared sidebar controls (called once by app.py on every page)."""
    st.sidebar.header("Settings")
    st.sidebar.number_input(
        "K (cutoff)", min_value=1, max_value=K_MAX, value=K_DEFAULT, step=1, key="k",
        bind="query-params", help="Cutoff of the @K metrics: only the top K items of each list count. "
                                  "Changing it never re-reads the files.")
    # No format_func: the URL holds the option text itself (?gain=exponential).
    for name in TOP:
        _draw(_SPECS[name], st.sidebar)
    st.sidebar.selectbox(
        "Users counted", USERS, key=USERS_KEY, bind="query-params",
        help=f"Which users every page, table, chart, verdict and file counts. all: {USERS_HELP['all']}. "
             f"served: {USERS_HELP['served']}. Every page says how many users that is and which model "
             "did not serve whom.")
    st.sidebar.selectbox(
        "Lists are of", list(UNITS), key=UNIT_KEY, bind="query-params",
        help="What one list of the runs is: a user (recommendations), a query (search) or a session. Saved with "
             "the analysis; every page, the brief, the report and a shared link name the rows so.")
    st.sidebar.checkbox(
        WHOLE_IDS_LABEL, key=WHOLE_IDS_KEY, bind="query-params",
        help="Off (the default): ids are kept exactly as written, so 12.0 and 12 are two different ids, as "
             "trec_eval reads them. On: every file is read again with ids that write a whole number with a zero "
             "fraction read as that number (12.0 -> 12, 7.000 -> 7), for files whose ids went through a "
             "spreadsheet or a float column; the same choice as --whole-number-ids on the command line. Saved "
             "with the analysis and a shared link.")
    with st.sidebar.expander("Conventions", expanded=False):
        st.selectbox("Library preset", preset_names(), key=PRESET_KEY, bind="query-params",
                     on_change=_apply_preset,
                     help="Set every convention as this library computes its metrics (K, gain and ties "
                          "included); change any control below to override it.")
        for name in EXPANDER:
            _draw(_SPECS[name], st)
        changed = overridden()
        if changed:
            st.caption("Differs from the preset: " + ", ".join(changed))


def apply_view(view: dict) -> None:
    """Seed the sidebar controls from a stored view (before they are drawn); values the
    URL already sets win, invalid ones are ignored."""
    def one(value):
        return value[-1] if isinstance(value, list) and value else value

    try:
        k = check_cutoff(one(view.get("k", K_DEFAULT)), K_MAX)
    except MetricsError:  # not a whole number from 1 to K_MAX (inf, 2.5, ...): the default
        k = K_DEFAULT
    wanted: dict[str, Any] = {"k": k}
    if one(view.get(USERS_KEY)) in USERS:
        wanted[USERS_KEY] = one(view.get(USERS_KEY))
    if one(view.get(UNIT_KEY)) in UNITS:
        wanted[UNIT_KEY] = one(view.get(UNIT_KEY))
    if str(one(view.get(WHOLE_IDS_KEY))).lower() in ("true", "false"):
        wanted[WHOLE_IDS_KEY] = str(one(view.get(WHOLE_IDS_KEY))).lower() == "true"
    preset = one(view.get(PRESET_KEY))
    if preset in preset_names():
        wanted[PRESET_KEY] = preset
    for name in _SPECS:
        if name in view:
            try:
                wanted[name] = conv.check(name, one(view[name]))
            except Exception:  # noqa: BLE001 - a stored value this version does not know is ignored
                continue
    for key, value in wanted.items():
        if key not in st.query_params:
            st.session_state[key] = value


@functools.lru_cache(maxsize=256)
def _sidebar_settings(raw: tuple) -> conv.Settings:
    """The frozen settings of the controls' raw values (``(name, type name, value)`` in :data:`_SPECS`' order):
    each value checked here, once per server process and combination, a value this version does not accept
    taken at its default. Every convention counts as set (the controls show a preset's values)."""
    values = {}
    for name, _, value in raw:
        try:
            values[name] = conv.check(name, value)
        except Exception:  # noqa: BLE001 - a value this version does not accept falls back to the default
            values[name] = _SPECS[name]["default"]
    return conv.Settings.checked(values, values, None)


@functools.lru_cache(maxsize=64)
def _page_values(page: tuple) -> dict:
    """A page's own keywords (``(name, type name, value)`` triples), checked once per server process."""
    return conv.validate(**{name: value for name, _, value in page})


@functools.lru_cache(maxsize=256)
def _settings_of(raw: tuple, page: tuple) -> conv.Settings:
    """:func:`_sidebar_settings` with a page's own keywords (:func:`_page_values`) over them: nothing checked
    again."""
    values = {**_sidebar_settings(raw), **_page_values(page)}
    return conv.Settings.checked(values, values, None)


def evaluation_settings(**page) -> conv.Settings:
    """Every convention as the sidebar sets it, with a page's own keywords ``page`` over them (the scored-row
    table's ``gain="linear"``), as the one frozen :class:`metrics_core.Settings` an evaluation of the page
    receives (``mc.evaluate(..., settings=...)``: nothing below checks it again). Each value is checked once
    per server process: the same controls on a rerun give the same object."""
    values = ((name, st.session_state.get(name, _SPECS[name]["default"])) for name in _SPECS)
    raw = tuple((name, type(value).__name__, value) for name, value in values)  # True is not 1 here
    keywords = tuple(sorted((name, type(value).__name__, value) for name, value in page.items()))
    try:
        return _settings_of(raw, keywords)
    except TypeError:  # a value that cannot be a cache key (not one a control sets): built uncached
        values = {**_sidebar_settings.__wrapped__(raw), **conv.validate(**page)}
        return conv.Settings.checked(values, values, None)


def _current(name: str):
    return evaluation_settings()[name]


def preset() -> str | None:
    """The chosen library preset, or None."""
    name = st.session_state.get(PRESET_KEY, NO_PRESET)
    return name if name in preset_names() and name != NO_PRESET else None


def conventions() -> dict[str, Any]:
    """Every convention as the sidebar sets it (numbers as floats)."""
    return dict(evaluation_settings())


def overridden() -> list[str]:
    """Conventions whose control differs from the chosen preset's value."""
    name = preset()
    if name is None:
        return []
    wanted = conv.Settings(name)
    now = conventions()
    return [key for key in _SPECS if now[key] != wanted[key]]


def controls() -> dict[str, Any]:
    """Current ``k`` and the :data:`TOP` conventions, ``gain`` and ``ties`` (defaults when not yet drawn)."""
    k = st.session_state.get("k", K_DEFAULT)
    return {"k": int(k if k is not None else K_DEFAULT), **{name: _current(name) for name in TOP}}


def users() -> str:
    """The users counted: ``"all"`` or ``"served"`` (the default when not yet drawn)."""
    value = st.session_state.get(USERS_KEY, DEFAULT_USERS)
    return value if value in USERS else DEFAULT_USERS


def unit() -> str:
    """What a row is: ``"users"``, ``"queries"`` or ``"sessions"`` (the default when not yet drawn)."""
    value = st.session_state.get(UNIT_KEY, DEFAULT_UNIT)
    return value if value in UNITS else DEFAULT_UNIT


def whole_number_ids() -> bool:
    """Whether ids writing a whole number are read as that number (:data:`WHOLE_IDS_KEY`; off when not yet
    drawn or off a page's thread)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if get_script_run_ctx(suppress_warning=True) is None:
        return False
    return st.session_state.get(WHOLE_IDS_KEY, False) is True


def evaluation_options() -> dict[str, Any]:
    """The ``mc.evaluate`` keywords the sidebar sets: every convention (K is per metric)."""
    return conventions()


def at_default(name: str) -> bool:
    """Whether the convention ``name`` is at metrics_core's default."""
    return conventions()[name] == _SPECS[name]["default"]


def non_default() -> dict[str, Any]:
    """Conventions that differ from metrics_core's defaults."""
    defaults = conv.defaults()
    return {key: value for key, value in conventions().items() if value != defaults[key]}


def settings() -> dict[str, Any]:
    """What a metric's help states as "computed with": K, gain, ties, the preset and
    every convention that is not at its default."""
    out: dict[str, Any] = {"K": controls()["k"], **{name: _current(name) for name in TOP}}
    if preset():
        out["preset"] = preset()
    if users() != DEFAULT_USERS:
        out["users"] = users()
    if unit() != DEFAULT_UNIT:
        out["unit"] = unit()
    if whole_number_ids():
        out["whole-number ids"] = True
    out.update({key: value for key, value in non_default().items() if key not in TOP})
    return out


def settings_slug() -> str:
    """The settings as a file-name part: ``k10_gain-linear_ties-average_ideal-k``."""
    parts = [f"k{controls()['k']}"]
    parts += [f"{key}-{value:g}" if isinstance(value, float) else f"{key}-{value}"
              for key, value in settings().items() if key != "K"]
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "_".join(parts))
