"""Curves: what each model finds at every cutoff K (per-user precision and recall), then
the pooled views over scored rows (ROC, precision-recall), calibration with its bin
counts, and a confusion matrix at a threshold within each model's own score range (opening at
0.5 for probabilities, else at the threshold with the highest F1)."""

from __future__ import annotations

import streamlit as st

from dashboard import curve_tables, format as fmt, metric_lists, state, tables, text, url
from dashboard.state import figures

st.title("Curves")
models = state.require_models()
colors = figures.model_colors(list(models))
settings = state.settings()
conv = state.conventions()
threshold_rel = tables.relevance_threshold(conv)

st.subheader("Ranking metrics at every cutoff K", anchor=False)
st.caption("The ranking view: for each K, the mean over users of precision@K (relevant items in the top K / K), "
           "recall@K (relevant items in the top K / all the user's relevant items, retrieved or not), rank-biased "
           "precision, expected reciprocal rank and the share of the top K that is judged at all (a low share "
           "means the other values rest on few judgments). This is what the @K metrics report. "
           f"{metric_lists.missing_sentence(conv)}")
with state.guard():
    long = state.metric_curves(list(metric_lists.CURVES_K), k_max=metric_lists.CURVES_K_MAX)
st.plotly_chart(state.cached_figure("precision_recall_vs_k", long, figures.metric_vs_k, colors), key="curves_vs_k")

st.subheader("Pooled over every scored row", anchor=False)
st.caption(f"Every row of the results is one prediction, labelled positive when its relevance is at least "
           f"{threshold_rel:g}. {metric_lists.unjudged_sentence(conv)} AUC, PR-AUC, GAUC and PCOPC (sum of "
           "scores / sum of labels) all read these labels. Rows of all users are pooled: a model "
           "that scores popular items high for everyone can rank positives of one user above negatives of "
           "another and get a high pooled AUC while its per-user lists are poor; GAUC (AUC within each user) "
           "and the @K metrics judge the lists.")
with state.guard():
    evals = state.evaluate_all(list(metric_lists.POOLED_ROWS))
    roc = {n: state.curve("roc", n, r, relevance_threshold=threshold_rel) for n, r in models.items()}
probabilistic = {n: state.scores_are_probabilities(r) for n, r in models.items()}
table, hidden, raw = tables.needs_probabilities_view(
    state.summary_table(evals, list(metric_lists.POOLED_ROWS)).set_index("model"), probabilistic,
    list(metric_lists.NEEDS_PROBABILITIES))
state.shown_table(table, column_config=fmt.metric_columns(list(table.columns), settings), key="curves_summary",
             placeholder=fmt.EMPTY)
if raw:
    st.caption(text.md(f"Needs probabilities: PCOPC is left out for {', '.join(raw)} (scores outside [0, 1])."))

recall_base = url.bound(lambda: st.radio(
    "Recall of the precision-recall curve counts", ["all relevant items", "retrieved relevant rows"],
    horizontal=True, key="curves_recall",
    help="All relevant items: recall = relevant rows above the threshold / every relevant item of the ground "
         "truth (a model that retrieves 13% of them ends at 0.13). Retrieved relevant rows: the usual pooled "
         "curve over scored rows only, which always reaches 1.0."),
    "curves_recall", "all relevant items", options=["all relevant items", "retrieved relevant rows"])
recall_over = "all_relevant" if recall_base == "all relevant items" else "retrieved"
with state.guard():
    pr = {n: state.curve("pr", n, r, relevance_threshold=threshold_rel, recall_over=recall_over)
          for n, r in models.items()}
left, right = st.columns(2)
# the figures are built once per models, labels and conventions (what the curves and their AUCs depend on)
drawn = (f"{tuple((n, state.model_keys().get(n, n)) for n in models)!r}|{threshold_rel}|{state.users()}|"
         f"{sorted(state.evaluation_options().items())!r}")
left.plotly_chart(state.keyed_figure("curves_roc", drawn, figures.roc, roc, {n: evals[n].summary[metric_lists.one("roc")] for n in roc},
                                     colors), key="curves_roc")
right.plotly_chart(state.keyed_figure("curves_pr", f"{drawn}|{recall_over}", figures.pr, pr,
                                      {n: evals[n].summary[metric_lists.one("pr_curve")] for n in pr}, colors), key="curves_pr")

st.subheader("Calibration", anchor=False)
calibrated = {n: r for n, r in models.items() if probabilistic[n]}
if not calibrated:
    st.info("Needs probabilities: no model has scores in [0, 1], so there is no reliability plot.")
else:
    n_bins = url.bound(lambda: st.slider("Bins", min_value=5, max_value=30, value=10, key="curves_bins"),
                       "curves_bins", 10, kind=int, low=5, high=30)
    with state.guard():
        cal = {n: state.curve("calibration", n, r, n_bins=n_bins, relevance_threshold=threshold_rel)
               for n, r in calibrated.items()}
    st.plotly_chart(state.keyed_figure("curves_calibration", f"{drawn}|{n_bins}", figures.calibration, cal,
                                       {n: evals[n].summary[metric_lists.one("calibration")] for n in cal}, colors),
                    key="curves_calibration")
    st.caption("Rows per score bin (a point from a few rows says little):")
    state.shown_table(curve_tables.calibration_counts(cal, n_bins), key="curves_bin_counts",
                 column_config={n: st.column_config.NumberColumn(format="localized") for n in cal},
                 placeholder=fmt.EMPTY)
    skipped = sorted(set(models) - set(calibrated))
    if skipped:
        st.caption(text.md(f"Needs probabilities, not shown (scores outside [0, 1]): {', '.join(skipped)}."))

st.subheader("Confusion matrix", anchor=False)
names = list(models)
cm_model = url.bound(lambda: st.selectbox("Model", names, key="curves_cm_model"), "curves_cm_model", names[0],
                     options=names)
low, high = curve_tables.score_range(models[cm_model].score)
with state.guard():
    default, opening = state.curve("opening_threshold", cm_model, models[cm_model],
                                   relevance_threshold=threshold_rel, probabilistic=probabilistic[cm_model])
threshold = url.bound(lambda: st.slider(
    f"Threshold: a row is predicted positive when its score is at least this (scores of this model: "
    f"{low:.4g} to {high:.4g})", min_value=low, max_value=high, value=default, step=(high - low) / 200,
    key="curves_threshold"), "curves_threshold", default, kind=float, low=low, high=high)
with state.guard():
    cm_eval = state.evaluate_all(list(metric_lists.THRESHOLD), threshold=threshold)[cm_model]
    cm = state.curve("confusion", cm_model, models[cm_model], threshold=threshold, relevance_threshold=threshold_rel)
left, right = st.columns([2, 3])
left.plotly_chart(figures.confusion(cm, cm_model), key="curves_cm")
s = cm_eval.summary
right.dataframe({"metric": list(metric_lists.THRESHOLD),
                 "value": [s.get(m, float("nan")) for m in metric_lists.THRESHOLD]},
                hide_index=True, key="curves_cm_metrics",
                column_config={"value": st.column_config.NumberColumn(format="%.4f")}, placeholder=fmt.EMPTY)
right.caption(f"Threshold {threshold:.4g}; counts over every scored row of {text.md(cm_model)}. The slider "
              f"opens at {text.md(opening, limit=300)}.")
