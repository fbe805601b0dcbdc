"""Explain: why a metric differs between libraries. The chosen metric of one model as
every library would report it on this data, and the path from one library's
conventions to another's, one convention at a time."""

from __future__ import annotations

import re

import streamlit as st

from dashboard import explain_tables, format as fmt, metric_lists, state, text, url

st.title("Explain")
st.caption("When a paper's number, another tool's and ours disagree, this page shows why: the same metric "
           "computed as each library defines it, on your data, and the conventions that make the difference. "
           "Download it and send it with your numbers.")
models = state.require_models()
names = list(models)
k = state.controls()["k"]
settings = state.settings()
metrics = metric_lists.labels(metric_lists.EXPLAIN, k)
presets = state.presets()
# the sidebar's conventions: the Overview's number is a row, and a start or end of the path
own = {explain_tables.THIS_DASHBOARD: state.evaluation_settings()}

left, right = st.columns(2)
model = url.bound(lambda: left.selectbox("Model", names, key="explain_model"), "explain_model", names[0],
                  options=names)
metric = url.bound(lambda: right.selectbox("Metric", metrics, key="explain_metric",
                                           help=metric_lists.help_for(st.session_state.get("explain_metric", metrics[0]),
                                                                      settings)),
                   "explain_metric", metrics[0], options=metrics)


with state.guard(), state.page_progress("Computing the metric as every library would", 1):
    explanation = state.explanation(model, metric, models[model], own)

st.subheader("As each library reports it", anchor=False)
st.caption(text.md(metric_lists.missing_by_library(presets), limit=2000))
values = explain_tables.values_table(explanation, presets)
state.shown_table(values, column_config={"value": st.column_config.NumberColumn(
    metric, help=metric_lists.help_for(metric, settings), format="%.4f"),
    "notes": st.column_config.TextColumn("known deviations", width="large")},
    height=(len(values) + 1) * 35 + 3, key="explain_values")

st.subheader("From one library to another", anchor=False)
# every row: a library with two functions for the metric (Microsoft Recommenders' map_at_k and map) has two
choices = [explain_tables.THIS_DASHBOARD, *[r for r in values.index if r != explain_tables.THIS_DASHBOARD]]
left, right = st.columns(2)
source = url.bound(lambda: left.selectbox(
    "From", choices, key="explain_from",
    help=f"{explain_tables.THIS_DASHBOARD}: the conventions set in the sidebar, as on the Overview"),
    "explain_from", explain_tables.THIS_DASHBOARD, options=choices)
target = url.bound(lambda: right.selectbox("To", choices, index=choices.index("rectools"),
                                           key="explain_to"), "explain_to", "rectools", options=choices)
with state.guard():
    path = explanation.path(source, target)
st.text(explain_tables.summary_sentence(path))
steps = explain_tables.steps_table(path)
state.shown_table(steps, hide_index=True, column_config={
    "change": st.column_config.NumberColumn("change", format="%+.4f", help="Change of the metric made by this step"),
    "value": st.column_config.NumberColumn("value after", format="%.4f"),
    "what it means": st.column_config.TextColumn(width="large")}, key="explain_steps")
st.caption(f"Start ({source}): {fmt.metric(path.start)} · end ({target}): {fmt.metric(path.end)} · the steps add up "
           f"to {fmt.signed(path.end - path.start)}. Conventions change in a fixed order; a step of 0 means that "
           "convention does not matter on this data.")

slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{model}_{metric}_{source}_to_{target}")
st.download_button("Download this explanation (Markdown)", data=explain_tables.markdown(model, path, presets),
                   file_name=f"explain_{slug}.md", mime="text/markdown", key="explain_download",
                   on_click="ignore", icon=":material/download:")
counted = ("" if state.users() == "all" else " The Overview counts only the users every model served "
           f"(users = {state.users()}); the rows here count every evaluated user.")
st.caption(text.md(f"Model {model}. The row {explain_tables.THIS_DASHBOARD} uses the conventions set in the "
                   f"sidebar (the Overview's number); each library's row uses that library's own conventions."
                   f"{counted}"))
