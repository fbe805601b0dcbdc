"""Compare: a baseline against one or more challengers on per-user metrics.

Every test, corrected p-value and interval comes from ``metrics_core.compare.compare``
(paired over users evaluated for both models); this page only arranges them: the full
table, the difference of each challenger with its CI, win/tie/loss, a per-user scatter
coloured by segment, the histogram of differences and the users with the largest
regressions (a click opens them on the Failures page).
"""

from __future__ import annotations

import contextlib

import pandas as pd
import streamlit as st

from dashboard import cache, compare_charts as cc, metric_lists, state, tables, text, url
from metrics_core.compare import compare
from metrics_core.stats import CORRECTIONS, TESTS, align_pairs

TEST_LABELS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "Fisher randomization"}
CORRECTION_LABELS = {"holm": "Holm-Bonferroni", "bh": "Benjamini-Hochberg (FDR)", "none": "none"}
N_PERMUTATIONS = 10000


def _compare_cached(keys: tuple, metrics: tuple, baseline: str, test: str, correction: str, alpha: float,
                    opt_key: tuple, _evals: dict) -> pd.DataFrame:
    """metrics_core.compare, cached (in the server's byte-bounded cache) by the models'
    content keys and every option."""
    key = f"compare|{keys!r}|{metrics!r}|{baseline}|{test}|{correction}|{alpha!r}|{opt_key!r}"
    with st.spinner("Running paired tests...") if key not in cache.SHARED else contextlib.nullcontext():
        return cache.SHARED.get_or_compute(key, lambda: compare(
            _evals, baseline=baseline, metrics=list(metrics), test=test, correction=correction,
            alpha=alpha, tests="all", n_permutations=N_PERMUTATIONS, seed=0))


st.title("Compare models")
models = state.require_models()
names = list(models)
if len(names) < 2:
    st.info("Comparing needs at least two models: add another ranked-results file on the **Data** page.")
    st.stop()

c = state.controls()
k = c["k"]
metric_options = metric_lists.labels(metric_lists.PER_USER, k)

left, right = st.columns(2)
baseline = url.bound(lambda: left.selectbox("Baseline", names, key="compare_baseline"),
                     "compare_baseline", names[0], options=names)
others = [n for n in names if n != baseline]
challengers = url.bound(lambda: right.multiselect("Challengers", others, default=others, key="compare_challengers"),
                        "compare_challengers", others, kind=list, options=others)
left, mid, right = st.columns([3, 2, 2])
metrics = url.bound(lambda: left.multiselect("Per-user metrics", metric_options, default=metric_options[:1],
                                             key="compare_metrics"),
                    "compare_metrics", metric_options[:1], kind=list, options=metric_options)
test = url.bound(lambda: mid.selectbox("Test for significance", TESTS, format_func=TEST_LABELS.get, key="compare_test"),
                 "compare_test", TESTS[0], options=TESTS)
correction = url.bound(lambda: right.selectbox("Correction over all pairs x metrics", CORRECTIONS,
                                              format_func=CORRECTION_LABELS.get, key="compare_correction"),
                       "compare_correction", CORRECTIONS[0], options=CORRECTIONS)
ALPHAS = [0.001, 0.01, 0.05, 0.1]
alpha = url.bound(lambda: st.select_slider("Significance level (after correction)", options=ALPHAS, value=0.05,
                                           key="compare_alpha"),
                  "compare_alpha", 0.05, kind=float, options=ALPHAS)
if not challengers or not metrics:
    st.info("Pick at least one challenger and one metric.")
    st.stop()

with state.guard():
    evals = state.evaluate_all(metrics)
    chosen = {n: evals[n] for n in [baseline, *challengers]}
    keys = state.model_keys()
    table = _compare_cached(tuple(keys.get(n, n) for n in chosen), tuple(metrics), baseline, test, correction,
                            float(alpha), tuple(sorted(state.evaluation_options().items())), _evals=chosen)

n_sig = int(table["significant"].sum())
st.caption(f"{len(table)} comparisons (challengers x metrics), paired over users evaluated for both models; "
           f"{TEST_LABELS[test]} with {CORRECTION_LABELS[correction]} correction: "
           f"**{n_sig} significant** at {alpha}. Gain {c['gain']}, ties {c['ties']}.")

st.subheader("All tests")
shown = table.assign(**{"95% CI": [f"[{lo:+.4f}, {hi:+.4f}]" for lo, hi in zip(table.ci_low, table.ci_high)]})
columns = ["metric", "model", "baseline", "n", "baseline_mean", "model_mean", "diff", "95% CI",
           "p_t", "p_t_adjusted", "p_wilcoxon", "p_wilcoxon_adjusted", "p_randomization",
           "p_randomization_adjusted", "effect_size", "wins", "ties", "losses", "significant"]
fmt4 = st.column_config.NumberColumn(format="%.4f")
pfmt = st.column_config.NumberColumn(format="%.2e")
st.dataframe(
    shown[columns], hide_index=True, key="compare_table",
    column_config={
        "model": "challenger", "n": st.column_config.NumberColumn("users paired"),
        "baseline_mean": fmt4, "model_mean": fmt4, "diff": st.column_config.NumberColumn("difference", format="%+.4f"),
        "p_t": pfmt, "p_t_adjusted": pfmt, "p_wilcoxon": pfmt, "p_wilcoxon_adjusted": pfmt,
        "p_randomization": pfmt, "p_randomization_adjusted": pfmt,
        "effect_size": st.column_config.NumberColumn("Cohen's d", format="%.3f"),
        "significant": st.column_config.CheckboxColumn(f"significant ({TEST_LABELS[test]})"),
    })
st.download_button("Download comparison CSV", text.csv_bytes(table, index=False), file_name="comparison.csv",
                   mime="text/csv", key="compare_download", on_click="ignore", icon=":material/download:")
st.caption(text.SPREADSHEET_NOTE)

col_a, col_b = st.columns(2)
col_a.plotly_chart(cc.difference_forest(table), key="compare_forest")
col_b.plotly_chart(cc.win_tie_loss(table), key="compare_wtl")

st.subheader("Per user")
left, right = st.columns(2)
focus_model = url.bound(lambda: left.selectbox("Challenger", challengers, key="compare_focus_model"),
                        "compare_focus_model", challengers[0], options=challengers)
focus_metric = url.bound(lambda: right.selectbox("Metric", metrics, key="compare_focus_metric"),
                         "compare_focus_metric", metrics[0], options=metrics)
a_vals, b_vals, users = align_pairs(evals[baseline].per_user[focus_metric], evals[focus_model].per_user[focus_metric])
pairs = pd.DataFrame({"user_id": users.astype(str), "baseline": a_vals, "challenger": b_vals})
row = table[(table["model"] == focus_model) & (table["metric"] == focus_metric)].iloc[0]

attrs = state.user_attributes()
segment, segment_name = state.user_segments(pd.Index(pairs["user_id"]), models, attrs, "segment",
                                            tables.relevance_threshold(state.conventions()))
st.caption(f"{len(pairs)} users evaluated for both models; colour: {segment_name}. "
           f"Win / tie / loss: {row['wins']} / {row['ties']} / {row['losses']}.")
col_a, col_b = st.columns(2)
col_a.plotly_chart(cc.pair_scatter(pairs, focus_metric, baseline, focus_model, segment), key="compare_scatter")
col_b.plotly_chart(cc.diff_histogram(pairs["challenger"] - pairs["baseline"], focus_metric, baseline, focus_model,
                                     ci=(row["ci_low"], row["ci_high"])), key="compare_hist")

st.subheader("Largest regressions")
n_show = url.bound(lambda: st.number_input("Users shown", min_value=5, max_value=500, value=20, step=5,
                                           key="compare_n_regressions"),
                   "compare_n_regressions", 20, kind=int, low=5, high=500)
worst = (pairs.assign(difference=pairs["challenger"] - pairs["baseline"])
         .sort_values(["difference", "user_id"], kind="stable").head(int(n_show)))
worst = worst[worst["difference"] < 0].rename(columns={"baseline": f"{baseline}", "challenger": f"{focus_model}"})
if worst.empty:
    st.success(text.md(f"{focus_model} is never worse than {baseline} on {focus_metric}."))
else:
    st.caption(text.md(f"Users where {focus_model} loses most against {baseline} on {focus_metric}. ")
               + "Select a row to open that user on the Failures page.")
    picked = st.dataframe(worst, hide_index=True, on_select="rerun", selection_mode="single-row",
                          key="compare_regressions",
                          column_config={col: fmt4 for col in worst.columns if col != "user_id"})
    user = tables.selected_value(worst, "user_id", picked.selection.rows if picked is not None else [])
    if user is not None:
        state.request_drilldown(focus_model, user)
        url.switch_page("views/failures.py", user=user)
