"""Tables of the Explain page (pure: no Streamlit), from :func:`metrics_core.explain`.

``values_table``: the metric as every library would report it on the user's data.
``steps_table``: the path from one library's conventions to another's, one convention
at a time, with the change each step makes (the changes add up to the difference).
``markdown``: the whole explanation as a Markdown document to send to a product team.
"""

from __future__ import annotations

import pandas as pd

from metrics_core.metrics.conventions import BY_NAME, defaults
from metrics_core.analysis.explain import VARIANT

from . import format as fmt
from .text import md

NAME = "library's name"
#: The row (and the choice of "From"/"To") holding the sidebar's conventions: the Overview's number.
THIS_DASHBOARD = "this dashboard"


def settings_text(conventions: dict) -> str:
    """Conventions that differ from metrics_core's defaults (``gain=exponential, ideal=k``), or
    "metrics_core's defaults"."""
    base = defaults()
    changed = [f"{key}={_setting(value)}" for key, value in conventions.items() if value != base.get(key)]
    return ", ".join(changed) if changed else "metrics_core's defaults"


def values_table(explanation, presets: pd.DataFrame) -> pd.DataFrame:
    """One row per library (and per named convention set, such as :data:`THIS_DASHBOARD`): its
    metric name, the value and the library's known deviations (``notes``; for a named set, the
    conventions it sets apart from the defaults)."""
    values = explanation.values
    notes = pd.Series(presets["notes"].reindex([preset_of(row) for row in values.index]).fillna("").to_numpy(),
                      index=values.index)
    for name, conventions in getattr(explanation, "settings", {}).items():
        if name in notes.index:
            notes[name] = f"conventions: {settings_text(conventions)}"
    fixed = values["conventions"] if "conventions" in values.columns else pd.Series("", index=values.index)
    names = [f"{name} ({own})" if own else name for name, own in zip(values["library_metric"], fixed)]
    return pd.DataFrame({"library": values["library"], NAME: names,
                         "value": values["value"].astype(float), "notes": notes}, index=values.index)


def preset_of(row: str) -> str:
    """The preset of a row of the explanation (``ms_recommenders:map`` -> ``ms_recommenders``)."""
    return str(row).partition(VARIANT)[0]


def _setting(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def steps_table(explanation) -> pd.DataFrame:
    """One row per convention that differs between the two libraries: ``step``
    ("ideal: judged → k"), ``what it means`` (the convention's help), ``change`` and
    ``value`` after the step."""
    rows = []
    for r in explanation.steps.to_dict("records"):
        rows.append({"step": f"{r['convention']}: {_setting(r['from'])} → {_setting(r['to'])}",
                     "what it means": BY_NAME[r["convention"]].help.replace("`", ""),
                     "change": float(r["change"]), "value": float(r["value"])})
    return pd.DataFrame(rows, columns=["step", "what it means", "change", "value"])


def summary_sentence(explanation) -> str:
    """One line: "rectools reports 0.3101 and trec_eval 0.4205: −0.1095, of which ideal: …"."""
    diff = explanation.end - explanation.start
    steps = explanation.steps
    if steps.empty:
        return (f"{explanation.target} and {explanation.source} compute {explanation.metric} the same way here: "
                f"{fmt.metric(explanation.end)}.")
    largest = steps.loc[steps["change"].abs().idxmax()]
    return (f"{explanation.target} reports {fmt.metric(explanation.end)} and {explanation.source} "
            f"{fmt.metric(explanation.start)} for {explanation.metric}: a difference of {fmt.signed(diff)}, "
            f"{len(steps)} convention(s) apart; the largest step is {largest['convention']} "
            f"({_setting(largest['from'])} → {_setting(largest['to'])}: {fmt.signed(largest['change'])}).")


def markdown(model: str, explanation, presets: pd.DataFrame) -> str:
    """The explanation as Markdown: values per library, then the path (user strings escaped)."""
    values = values_table(explanation, presets)
    lines = [f"# Why {md(explanation.metric)} differs between libraries: model {md(model)}", "",
             md(summary_sentence(explanation), limit=2000), "",
             "| library | its name | value |", "| --- | --- | --- |"]
    lines += [f"| {md(r['library'])} | {md(r[NAME] or '–')} | "
              f"{fmt.metric(r['value'])} |" for _, r in values.iterrows()]
    lines += ["", f"## From {md(explanation.source)} to {md(explanation.target)}, one convention at a time", "",
              f"Start ({md(explanation.source)}): {fmt.metric(explanation.start)}", ""]
    for _, r in steps_table(explanation).iterrows():
        lines.append(f"- {md(r['step'])}: {fmt.signed(r['change'])} (now {fmt.metric(r['value'])})")
    lines += ["", f"End ({md(explanation.target)}): {fmt.metric(explanation.end)}; the steps add up to "
              f"{fmt.signed(explanation.end - explanation.start)}.", ""]
    named = getattr(explanation, "settings", {})
    noted = values[(values["notes"] != "") & ~values.index.isin(list(named))]
    if not noted.empty:
        lines += ["## Known deviations of the libraries", ""]
        lines += [f"- {md(r['library'])}: {md(r['notes'], limit=2000)}" for _, r in noted.iterrows()]
    defaults_text = ", ".join(f"{k}={_setting(v)}" for k, v in defaults().items())
    lines += ["", f"metrics_core's defaults: {md(defaults_text, limit=2000)}."]
    lines += [f"{md(name)}: {md(settings_text(conventions), limit=2000)}." for name, conventions in named.items()]
    return "\n".join(lines) + "\n"
