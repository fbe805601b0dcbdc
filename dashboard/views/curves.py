"""Curves: ROC and precision-recall per model (AUC and AP in the legend),
a reliability plot with PCOPC, and a confusion matrix at a chosen threshold."""

from __future__ import annotations

import streamlit as st

from dashboard import charts, state, text, url

st.title("Curves")
models = state.require_models()
colors = charts.model_colors(list(models))
st.caption("Every scored row of the results is a prediction; its label is relevance >= 1 in the ground "
           "truth (unjudged rows are negatives). These curves do not depend on K.")

with state.guard():
    evals = state.evaluate_all(["auc", "gauc", "pr_auc", "pcopc"])
    roc = {n: state.curve("roc", n, r) for n, r in models.items()}
    pr = {n: state.curve("pr", n, r) for n, r in models.items()}

table = state.summary_table(evals, ["auc", "gauc", "pr_auc", "pcopc"]).set_index("model")
st.dataframe(table, column_config={m: st.column_config.NumberColumn(m, format="%.4f") for m in table.columns},
             key="curves_summary")

left, right = st.columns(2)
left.plotly_chart(charts.roc(roc, {n: evals[n].summary["auc"] for n in roc}, colors), key="curves_roc")
right.plotly_chart(charts.pr(pr, {n: evals[n].summary["pr_auc"] for n in pr}, colors), key="curves_pr")

st.subheader("Calibration")
probabilistic = {n: r for n, r in models.items() if state.scores_are_probabilities(r)}
if not probabilistic:
    st.info("No model has scores in [0, 1], so there is no reliability plot.")
else:
    n_bins = url.bound(lambda: st.slider("Bins", min_value=5, max_value=30, value=10, key="curves_bins"),
                       "curves_bins", 10, kind=int, low=5, high=30)
    with state.guard():
        cal = {n: state.curve("calibration", n, r, n_bins=n_bins) for n, r in probabilistic.items()}
    st.plotly_chart(charts.calibration(cal, {n: evals[n].summary["pcopc"] for n in cal}, colors),
                    key="curves_calibration")
    skipped = sorted(set(models) - set(probabilistic))
    if skipped:
        st.caption(text.md(f"Not shown (scores outside [0, 1]): {', '.join(skipped)}."))

st.subheader("Confusion matrix")
threshold = url.bound(lambda: st.slider("Threshold: a row is predicted positive when score >= threshold",
                                        min_value=0.0, max_value=1.0, value=0.5, step=0.01, key="curves_threshold"),
                      "curves_threshold", 0.5, kind=float, low=0.0, high=1.0)
with state.guard():
    cm_evals = state.evaluate_all(["accuracy", "precision", "recall"], threshold=threshold)
cols = st.columns(min(len(models), 3))
for i, (name, ranked) in enumerate(models.items()):
    with state.guard():
        cm = state.curve("confusion", name, ranked, threshold=threshold)
    col = cols[i % len(cols)]
    col.plotly_chart(charts.confusion(cm, name), key=f"curves_cm_{name}")
    s = cm_evals[name].summary
    col.caption(" · ".join(f"{m} {s[m]:.4f}" for m in ("accuracy", "precision", "recall") if m in s))
