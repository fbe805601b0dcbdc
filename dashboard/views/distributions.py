"""Distributions: a per-user metric per model as ECDF and box plot (one panel each, no
overlaid histograms),
the shares of users at exactly 0 and 1, and a breakdown by user segment, over the users the
analysis counts (the sidebar's "Users counted")."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import format as fmt, metric_lists, state, tables, url
from dashboard.state import distribution_tables, figures

st.title("Distributions")
models = state.require_models()
colors = figures.model_colors(list(models))
k = state.controls()["k"]

options = metric_lists.labels(metric_lists.PER_USER, k)
metric = url.bound(lambda: st.selectbox("Per-user metric", options, key="dist_metric",
                                        help=metric_lists.help_for(st.session_state.get("dist_metric", options[0]),
                                                                   state.settings())),
                   "dist_metric", options[0], options=options)
with state.guard():
    state.show_population(warn=False)
    evals = state.evaluate_all([metric])  # over the users counted
long = state.per_user_long(evals, metric)

st.subheader("Summary")
state.shown_table(state.distribution_summary(long),
             column_config={"users": st.column_config.NumberColumn(format="localized"),
                            "mean": st.column_config.NumberColumn(format="%.4f"),
                            "median": st.column_config.NumberColumn(format="%.4f"),
                            "share at 0": st.column_config.NumberColumn(format="percent"),
                            "share at 1": st.column_config.NumberColumn(format="percent")},
             key="dist_summary", placeholder=fmt.EMPTY)

left, right = st.columns(2)
left.plotly_chart(state.cached_figure("dist_ecdf", distribution_tables.ecdf_steps(long), figures.ecdf, metric, colors),
                  key="dist_ecdf")
right.plotly_chart(state.cached_figure("dist_box", distribution_tables.box_stats(long), figures.box, metric, colors),
                   key="dist_box")
st.caption("ECDF: share of users with a value at most x (a curve further right is better for a metric where "
           "higher is better); box: median, quartiles and the spread of the per-user values of each model.")

st.subheader("By segment")
attrs = state.user_attributes()
attr_cols = [c for c in attrs.columns if c != "user_id"] if attrs is not None else []
attr_col = None
if attr_cols:
    attr_col = url.bound(lambda: st.selectbox("User attribute", attr_cols, key="dist_segment"),
                         "dist_segment", attr_cols[0], options=attr_cols)
else:
    st.caption("No user attribute table: users are grouped by their number of relevant items.")
segment, segment_col = state.user_segments(pd.Index(long["user_id"]), models, attrs, attr_col,
                                           tables.relevance_threshold(state.conventions()))
table = state.segment_table(long, segment)
st.plotly_chart(state.cached_figure("dist_segments", table, figures.segments, metric, segment_col, colors),
                key="dist_segments")
state.shown_table(table.pivot(index="segment", columns="model", values="mean")[list(evals)],
             key="dist_segment_table", placeholder=fmt.EMPTY)
