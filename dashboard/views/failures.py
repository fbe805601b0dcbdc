"""Failures: the worst users of a model by a per-user metric; selecting one
shows their ranked list (hit or miss), the relevant items the model missed
and their metrics for every model."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import metric_lists, state, tables, text, url

st.title("Failures")
models = state.require_models()
c = state.controls()
k = c["k"]

focus = state.pop_drilldown()
if focus is not None and focus[0] in models:
    st.session_state["failures_model"] = focus[0]
    url.set(url.USER, focus[1])
elif url.requested(url.USER) is not None and url.requested(url.USER) != url.get(url.USER):
    url.set(url.USER, url.requested(url.USER))  # a link or a reload names the user

left, mid, right = st.columns([2, 2, 1])
names = list(models)
model = url.bound(lambda: left.selectbox("Model", names, key="failures_model"),
                  "failures_model", names[0], options=names)
options = metric_lists.labels(metric_lists.PER_USER, k)
metric = url.bound(lambda: mid.selectbox("Metric", options, key="failures_metric"),
                   "failures_metric", options[0], options=options)
n = url.bound(lambda: right.number_input("Users shown", min_value=5, max_value=1000, value=25, step=5,
                                        key="failures_n"),
              "failures_n", 25, kind=int, low=5, high=1000)

all_metrics = metric_lists.labels(metric_lists.PER_USER, k)
with state.guard():
    evals = state.evaluate_all(all_metrics)
ev = evals[model]
worst = state.worst_users(ev, metric, int(n))

st.subheader(text.md(f"Worst {len(worst)} users of {model} by {metric}"))
st.caption("Select a row to inspect that user.")
selection = st.dataframe(worst, on_select="rerun", selection_mode="single-row", hide_index=True,
                         column_config={metric: st.column_config.NumberColumn(format="%.4f")},
                         key="failures_worst")
picked = tables.selected_value(worst, "user_id", selection.selection.rows if selection is not None else [])
# A selection is taken once: it outlives the table it pointed into (another model,
# metric or number of users shown) and must not override a later choice.
signature = (model, metric, int(n), picked)
if picked is not None and st.session_state.get("failures_taken") != signature:
    st.session_state["failures_taken"] = signature
    url.set(url.USER, picked)
user = url.get(url.USER)

if user is None:
    st.info("Select a user in the table above to see their ranked list.")
    st.stop()
if not tables.has_user(models[model], user):
    st.info(text.md(f"User {user} is not among the users of {model}. Select a user in the table above."))
    st.stop()

ranked = models[model]
order = c["ties"] if c["ties"] != "average" else "trec"
threshold = tables.relevance_threshold(ev.conventions)  # the threshold the metrics used
with state.guard():
    full = ranked.user_list(user, ties=order)
    relevant = ranked.user_relevant_items(user, threshold)

st.subheader(text.md(f"User {user}"))
top = full.head(k).assign(hit=lambda d: tables.hit_or_miss(d["relevance"], threshold))
if c["ties"] == "average":
    st.caption("Tied scores are shown in trec_eval order (score, then item id descending); the metrics "
               "average over every order of the ties.")
col_list, col_missed = st.columns([3, 2])
col_list.markdown(f"**Top {k} of {text.md(model)}** ({len(full)} items in the list)")
col_list.dataframe(top[["rank", "item_id", "score", "relevance", "hit"]], hide_index=True,
                   key="failures_list")
missed = relevant[~relevant["item_id"].isin(top["item_id"])]
rank_of = pd.Series(full["rank"].to_numpy(), index=full["item_id"].astype(str))
ranks = missed["item_id"].astype(str).map(rank_of)
missed = missed.assign(**{"rank in list": [f"{int(r)}" if pd.notna(r) else "not retrieved" for r in ranks]})
col_missed.markdown(f"**Relevant items not in the top {k}** ({len(missed)} of {len(relevant)})")
col_missed.dataframe(missed, hide_index=True, key="failures_missed")

st.markdown("**This user's metrics for every model**")
per_model = {}
for name, e in evals.items():
    if user in e.per_user.index.astype(str):
        per_model[name] = e.per_user.loc[e.per_user.index.astype(str) == user].iloc[0]
    else:
        per_model[name] = pd.Series({m: float("nan") for m in all_metrics})
st.dataframe(pd.DataFrame(per_model).T[all_metrics],
             column_config={m: st.column_config.NumberColumn(format="%.4f") for m in all_metrics},
             key="failures_user_metrics")
