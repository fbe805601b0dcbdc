"""Counterfactual: what each model would have earned on the uploaded logs, estimated from the
logging policy's propensities (IPS, SNIPS, DR and the rest, as Open Bandit Pipeline defines them).

The verdict first (each model against the logging policy, lift with its interval), the brief's
line, the weights' diagnostics with every warning in words, then every estimator side by side, in a
table and in a figure (values beside the logging policy's, or lifts).
Computation and tables live in :mod:`dashboard.counterfactual` and
:mod:`dashboard.counterfactual_tables`; this page arranges them.
"""

from __future__ import annotations

import streamlit as st

from dashboard import counterfactual as cf, counterfactual_tables as cft, state, url

st.title("Counterfactual")
st.caption("What each model's policy would have earned on your logged feedback, estimated from the logging "
           "policy's propensities: an item the logs never showed was never clicked, so the offline metrics "
           "of the other pages favour what the logging policy chose. These estimators reweight the logs instead.")
log, problem = cf.logged_feedback()
if problem:
    st.error(cf.text_of(problem), icon=":material/error:")
    st.stop()
if log is None:
    st.info("Add a logged-feedback file under **Add files** in the sidebar: one row per item shown, with "
            "user_id, item_id, reward and the logging policy's propensity.", icon=":material/upload_file:")
    st.stop()
runs, keys, problems = cf.model_runs()
for p in problems:
    st.warning(cf.text_of(p), icon=":material/warning:")
if not runs:
    st.stop()

k = state.controls()["k"]
left, mid, right = st.columns(3)
policy = url.bound(lambda: left.selectbox("Policy from scores", cf.POLICIES, key="ope_policy", help=cf.POLICY_HELP),
                   "ope_policy", cf.POLICIES[0], options=list(cf.POLICIES))
temperature = url.bound(lambda: mid.number_input("Softmax temperature T", min_value=0.01, max_value=100.0, value=1.0,
                                                 step=0.1, key="ope_temperature", disabled=policy != "softmax"),
                        "ope_temperature", 1.0, kind=float, low=0.01, high=100.0)

clip = url.bound(lambda: right.number_input("Clip weights at (0: none)", min_value=0.0, max_value=1e6, value=0.0,
                                          step=1.0, key="ope_clip",
                                          help="IPS and DR use min(weight, this); a lower clip trades bias for "
                                               "variance. The diagnostics count the rounds it cuts."),
                "ope_clip", 0.0, kind=float, low=0.0, high=1e6)

with state.guard():
    res = cf.estimate(log, runs, keys, policy, k, temperature, clip)

st.subheader("Verdict", anchor=False)
with st.container(key="ope_verdict"):
    st.text(cft.brief_line(res))
    verdicts = cft.verdict_table(res)
    state.shown_table(verdicts, hide_index=True, key="ope_verdicts", column_config={
        "value": st.column_config.NumberColumn("estimated value", format="%.5f"),
        "low": st.column_config.NumberColumn("95% low", format="%.5f"),
        "high": st.column_config.NumberColumn("95% high", format="%.5f"),
        "lift": st.column_config.NumberColumn("lift", format="percent"),
        "lift low": st.column_config.NumberColumn("lift 95% low", format="percent"),
        "lift high": st.column_config.NumberColumn("lift 95% high", format="percent")})
st.caption(cft.logging_line(res) + f" Policy: {policy}" + (f" (T = {temperature:g})" if policy == "softmax" else "")
           + (f" (K = {k})" if policy == "topk" else "") + f"; intervals from {cft.N_BOOTSTRAP} seeded bootstrap "
           "resamples of the rounds." + ("" if cft.estimators_for(len(log)) is None else
                                         f" Over {cft.LARGE_LOG_ROWS:,} rows: IPS and SNIPS only (no reward model)."))

st.subheader("Diagnostics", anchor=False)
# short headings (each explained on hover; the CSV keeps the full names) so that the eleven columns fit
# the page's width; the model column stays in view when a narrow window scrolls the table sideways
state.shown_table(cft.diagnostics_table(res), hide_index=True, key="ope_diagnostics", column_config={
    name: (st.column_config.NumberColumn(label, format=number, help=hover) if number else
           st.column_config.Column(label, help=hover, pinned=name == "model"))
    for name, (label, number, hover) in cft.DIAGNOSTICS_COLUMNS.items()})
for model, sentence in cft.warning_lines(res):
    st.warning(cf.text_of(f"{model}: {sentence}"), icon=":material/warning:")

st.subheader("Every estimator", anchor=False)
state.shown_table(cft.estimates_table(res), hide_index=True, key="ope_estimates", column_config={
    "value": st.column_config.NumberColumn(format="%.5f"), "low": st.column_config.NumberColumn(format="%.5f"),
    "high": st.column_config.NumberColumn(format="%.5f"), "lift": st.column_config.NumberColumn(format="percent"),
    "lift low": st.column_config.NumberColumn(format="percent"),
    "lift high": st.column_config.NumberColumn(format="percent")})
st.caption("Each context's share of an estimate is on the Failures page.")
shown = st.radio("Figure", list(cft.FIGURE_MEASURES), horizontal=True, key="ope_figure",
                 format_func=cft.FIGURE_MEASURES.get)
st.plotly_chart(cft.estimates_figure(res, shown), key="ope_forest")
