"""Failures: which users a model fails against another, and what they share.

The pair (model, compared with) comes from the Compare page when a regression is opened
there. Users are grouped (not served, no hit in the top K, hit but low, fine), filtered by
group, by any user attribute's value or by id, and sorted by how far each user is from the
best other model, with every user attribute as a column. A table lists the attribute values
over-represented among the users where the model is worse than the one compared with
(``dashboard.failure_tables``). A user's list is shown beside the compared model's, aligned
by item. Every number is over the analysis' users counted (the sidebar's "Users counted").
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import brief_text, counterfactual, counterfactual_tables, failure_tables, format as fmt, metric_lists, state, tables, text, triage, url
from dashboard.decision import current as current_decision



def _new_attribute() -> None:
    """Another attribute: its values differ, so the value filter starts at "all"."""
    st.session_state["failures_segment"] = "all"


def _opening(key: str, options: list, value) -> dict:
    """The selectbox's opening choice ``value`` while the session has none for ``key`` (a choice the
    session or the URL holds is the widget's state already, which an index would contradict)."""
    return {} if key in st.session_state else {"index": options.index(value)}


st.title("Failures")
if counterfactual.has_log():  # the contexts that weigh most on a model's counterfactual estimate
    with st.expander("Counterfactual: the contexts that weigh most on each estimate", icon=":material/science:"):
        with state.guard():
            off_policy = counterfactual.current_estimate(state.controls()["k"])
        if off_policy is not None:
            ope_models = list(off_policy.verdicts["model"])
            ope_model = url.bound(lambda: st.selectbox("Model", ope_models, key="failures_ope_model"),
                                  "failures_ope_model", ope_models[0], options=ope_models)
            estimator = off_policy.settings["primary"]
            state.shown_table(counterfactual_tables.context_table(off_policy, ope_model, estimator), hide_index=True,
                         key="failures_ope_contexts", column_config={
                             "contribution": st.column_config.NumberColumn(format="%.6f"),
                             "share": st.column_config.NumberColumn(format="percent"),
                             "weight": st.column_config.NumberColumn(format="%.3g")})
            st.caption(f"Largest absolute contributions to {counterfactual_tables.estimator_name(estimator)} first: "
                       "a context's contribution is its rounds' terms over all the logged rounds, so the "
                       "contributions add up to the estimate; weight is the sum of its importance weights.")
        else:
            st.caption("The Counterfactual page says why no estimate is available.")
models = state.require_models()
c = state.controls()
k = c["k"]
settings = state.settings()

focus = state.pop_drilldown()
if focus is not None and focus[0] in models:
    focus_model, focus_user, *compared = focus
    st.session_state["failures_model"] = focus_model
    if compared and compared[0] in models and compared[0] != focus_model:  # the model it was compared with
        st.session_state["failures_other"] = compared[0]
    url.set(url.USER, focus_user)
elif url.requested(url.USER) is not None and url.requested(url.USER) != url.get(url.USER):
    url.set(url.USER, url.requested(url.USER))  # a link or a reload names the user

rows_are = state.unit()  # what a row is (users, queries, sessions): every sentence below says it
left, beside, mid, right = st.columns([2, 2, 2, 1])
names = list(models)
# opened from the sidebar, the page shows the pair under study: the decision's first challenger
# against its baseline (the Brief and Compare set the pair they open)
studied = current_decision(names) if len(names) >= 2 else None
first = studied.challengers[0] if studied is not None and studied.challengers else names[0]
model = url.bound(lambda: left.selectbox("Model", names, key="failures_model", **_opening("failures_model", names, first)),
                  "failures_model", first, options=names)
others = [m for m in names if m != model]
against = studied.baseline if studied is not None and studied.baseline in others else (others or [None])[0]
other = url.bound(lambda: beside.selectbox("Compared with", others, key="failures_other",
                                           **_opening("failures_other", others, against),
                                           help=f"The failing {rows_are} are those where the model is worse than "
                                                f"this one; a {state.units.noun(rows_are, 1)}'s list is shown beside this model's"),
                  "failures_other", against, options=others) if others else None
options = metric_lists.labels(metric_lists.PER_USER, k)
metric = url.bound(lambda: mid.selectbox("Metric", options, key="failures_metric",
                                         help=metric_lists.help_for(st.session_state.get("failures_metric", options[0]),
                                                                    settings)),
                   "failures_metric", options[0], options=options)
n = url.bound(lambda: right.number_input(f"{rows_are.capitalize()} shown", min_value=5, max_value=1000, value=25, step=5,
                                        key="failures_n"),
              "failures_n", 25, kind=int, low=5, high=1000)

hit_label = metric_lists.label(metric_lists.one("triage"), k)
all_metrics = metric_lists.labels(metric_lists.PER_USER, k)
with state.guard():
    state.show_population(warn=False)
    evals = state.evaluate_all(all_metrics)  # over the users counted
ev = evals[model]
threshold = tables.relevance_threshold(ev.conventions)  # the threshold the metrics used
ranked = models[model]
ids = ranked.user_ids.astype(str)
table = triage.triage_table({name: e.per_user for name, e in evals.items()}, model, metric, hit_label,
                            pd.Series(ranked.list_lengths, index=ids),
                            pd.Series(ranked.n_relevant(threshold), index=ids))
if other:
    table.insert(table.columns.get_loc("gap") + 1, f"behind {other}",
                 failure_tables.pair_gap({n: e.per_user for n, e in evals.items()}, model, other, metric,
                                         table["user_id"]))

counts = triage.group_counts(table)
st.caption(f"Groups of the {fmt.count(len(table))} evaluated {rows_are} of this model at K = {k}: not served = no list; "
           f"no hit = no relevant item (relevance ≥ {threshold:g}) in the top K; hit but low = {metric} in the "
           f"lowest quarter of the {rows_are} with a hit; gap = best other model's value minus this model's, "
           f"per {state.units.noun(rows_are, 1)}.")
state.shown_table(counts.assign(users=[fmt.count(v) for v in counts["users"]],
                           share=[fmt.percent(v, signed_=False) for v in counts["share"]]).rename(columns={"users": rows_are}),
             hide_index=True, key="failures_groups", placeholder=fmt.EMPTY)

f1, f2, f3, f4 = st.columns([2, 2, 2, 2])
group_options = ["all", *triage.GROUPS, *(brief_text.FAILURES_GROUP.values() if other else ())]
group = url.bound(lambda: f1.selectbox(
    "Group", group_options, key="failures_group",
    help=f"The brief's groups (below the compared model: ...) are the {rows_are} where this model scores below "
         "the compared one on the metric, by what went wrong, counted as the Brief counts them"),
    "failures_group", "all", options=group_options)
below = None  # the brief's failure group: exactly the users the Brief counts in it
if group in brief_text.FAILURES_GROUP.values():
    lost = state.failure_groups(evals[other].per_user[metric], evals[model].per_user[metric], metric,
                          state.population().unserved.get(model))
    wanted = next(g for g, label in brief_text.FAILURES_GROUP.items() if label == group)
    below = pd.Index(lost.index[lost["group"].to_numpy() == wanted]).astype(str)
attrs = state.user_attributes()
attr_cols = [col for col in attrs.columns if col != "user_id"] if attrs is not None else []
segment = segment_value = None
if attr_cols:
    attribute = url.bound(lambda: f2.selectbox("Filter by attribute", attr_cols, key="failures_attribute",
                                               on_change=_new_attribute),
                          "failures_attribute", attr_cols[0], options=attr_cols)
    segment, seg_name = state.user_segments(pd.Index(table["user_id"]), models, attrs, attribute)
    values = ["all", *sorted(segment.unique())]
    chosen = url.bound(lambda: f3.selectbox(f"Value of {text.md(seg_name, limit=80)}", values,
                                            key="failures_segment"),
                       "failures_segment", "all", options=values)
    segment_value = None if chosen == "all" else chosen
search = f4.text_input(f"{state.units.noun(rows_are, 1).capitalize()} id starts with", key="failures_search", max_chars=200)
shown = triage.filter_users(table, None if group == "all" or below is not None else group, segment,
                            segment_value, search, users=below)
worst = failure_tables.with_attributes(shown.head(int(n)), attrs)

st.subheader(text.md(f"Worst {state.units.count(len(worst), rows_are)} of {model} by {metric}"), anchor=False)
st.caption(f"{state.units.count(len(shown), rows_are)} {'matches' if len(shown) == 1 else 'match'}; sorted by gap "
           f"(largest first). Select a row to inspect that {state.units.noun(rows_are, 1)}.")
selection = state.shown_table(worst, on_select="rerun", selection_mode="single-row", hide_index=True,
                         column_config={**fmt.metric_columns([metric], settings),
                                        "best other": st.column_config.NumberColumn(format="%.4f"),
                                        "gap": st.column_config.NumberColumn(format="%+.4f",
                                                                             help="best other model − this model"),
                                        **({f"behind {other}": st.column_config.NumberColumn(
                                            format="%+.4f", help=f"{other} − this model, in the metric's "
                                                                 "direction (positive: this model is worse)")}
                                           if other else {})},
                         key="failures_worst", placeholder=fmt.EMPTY)
picked = tables.selected_value(worst, "user_id", selection.selection.rows if selection is not None else [])
# A selection is taken once: it outlives the table it pointed into (another model,
# metric or number of users shown) and must not override a later choice.
signature = (model, metric, int(n), group, search, picked)
if picked is not None and st.session_state.get("failures_taken") != signature:
    st.session_state["failures_taken"] = signature
    url.set(url.USER, picked)
user = url.get(url.USER)

if other and attr_cols:
    st.subheader(text.md(f"What the {rows_are} where {model} is worse than {other} share"), anchor=False)
    failing = failure_tables.failing_users({n: e.per_user for n, e in evals.items()}, model, other, metric)
    explained = failure_tables.overrepresented(pd.Index(table["user_id"]), failing, attrs)
    st.caption(text.md(f"{fmt.count(len(failing))} of the {state.units.count(len(table), rows_are)} counted "
                       f"{'has' if len(failing) == 1 else 'have'} a lower {metric} with {model} "
                       f"than with {other} (in the metric's direction). For every value of every user attribute: "
                       f"its {rows_are} among them and among all {rows_are} counted; ratio = share of failing / share of "
                       "all (above 1: over-represented). Largest ratio first.", limit=800))
    explained = explained.rename(columns={"failing users": f"failing {rows_are}", "users": rows_are})
    state.shown_table(explained, hide_index=True, key="failures_explained", column_config={
        f"failing {rows_are}": st.column_config.NumberColumn(format="localized"),
        rows_are: st.column_config.NumberColumn(format="localized"),
        "share of failing": st.column_config.NumberColumn(format="percent"),
        "share of all": st.column_config.NumberColumn(format="percent"),
        "ratio": st.column_config.NumberColumn(format="%.2f")}, placeholder=fmt.EMPTY)
elif other:
    st.caption(f"Upload a user-attributes table on the Data page to see which kinds of {rows_are} the failures "
               "concentrate in.")

if user is None:
    st.info(f"Select a {state.units.noun(rows_are, 1)} in the table above to see its ranked list.")
    st.stop()
if not tables.has_user(ranked, user):
    st.info(text.md(f"User {user} is not among the users of {model}. Select a user in the table above."))
    st.stop()

order = c["ties"] if c["ties"] != "average" else "trec"
st.subheader(text.md(f"User {user}"))
with state.guard():
    full = ranked.user_list(user, ties=order)
    relevant = ranked.user_relevant_items(user, threshold)
    second = models[other].user_list(user, ties=order) if other and tables.has_user(models[other], user) else None
if second is None:
    second = full.iloc[0:0]
aligned = triage.side_by_side(full, second, (model, other or "-"), k, state.item_features())
st.caption(f"Items in the top {k} of either model, aligned by item; relevance is the judged grade, "
           f"\"{triage.UNJUDGED}\" when the item is not in the ground truth (it counts as not relevant). "
           "An empty rank: not in that model's list.")
state.shown_table(aligned, hide_index=True, key="failures_list",
             column_config={col: st.column_config.NumberColumn(format="%.4f") for col in aligned.columns
                            if col.startswith("score")}, placeholder=fmt.EMPTY)
if c["ties"] == "average" and triage.has_ties_in_top(full, k):
    st.caption("This list has tied scores in its top K. With the tie rule \"average\" the user's metrics are the "
               "exact expected values over every order of the tied items, so hit_rate can be 0.5 or cg 4.5; the "
               "list is shown in trec_eval order (score, then item id descending).")

missed = relevant[~relevant["item_id"].astype(str).isin(full.head(k)["item_id"].astype(str))]
rank_of = pd.Series(full["rank"].to_numpy(), index=full["item_id"].astype(str))
ranks = missed["item_id"].astype(str).map(rank_of)
missed = missed.assign(**{"rank in list": [f"{int(r)}" if pd.notna(r) else "not retrieved" for r in ranks]})
st.markdown(f"**Relevant items not in the top {k} of {text.md(model)}** ({len(missed)} of {len(relevant)})")
state.shown_table(missed, hide_index=True, key="failures_missed", placeholder=fmt.EMPTY)

st.markdown("**This user's metrics for every model**")
per_model = {}
for name, e in evals.items():
    if user in e.per_user.index.astype(str):
        per_model[name] = e.per_user.loc[e.per_user.index.astype(str) == user].iloc[0]
    else:
        per_model[name] = pd.Series({m: float("nan") for m in all_metrics})
state.shown_table(pd.DataFrame(per_model).T[all_metrics], column_config=fmt.metric_columns(all_metrics, settings),
             key="failures_user_metrics", placeholder=fmt.EMPTY)
