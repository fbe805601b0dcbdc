"""Compare: is a challenger better than its baseline, by how much, and for whom.

Opens on the verdict: per challenger and metric, both means, the lift with its 95%
interval, the adjusted p-value of the chosen test, a marker, the smallest lift the
data could detect, and one sentence. Full statistics, all pairs as a matrix, results
per user segment, and the per-user views (scatter, differences, largest regressions)
follow. The users paired are the analysis' users counted (the sidebar's "Users counted":
every evaluated user, a missing list scoring 0, or only the users every loaded model served);
the page says how many, and every verdict names a model that did not serve every user.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import (background, brief_text, comparisons, format as fmt, metric_lists, sampled_tables as sampled,
                       state, tables, text, url, verdict)
from dashboard.state import compare_figures
from dashboard.decision import ALPHAS, CORRECTIONS, DEFAULT_FAMILY, FAMILIES, TESTS, current as current_decision

TEST_LABELS = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "Fisher randomization"}
CORRECTION_LABELS = {"holm": "Holm-Bonferroni", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg (FDR)",
                     "none": "none"}
FAMILY_LABELS = {"analysis": "every attribute together", "attribute": "each attribute apart",
                 "attribute_metric": "each attribute and metric apart", "segment": "each segment apart"}
N_PERMUTATIONS = comparisons.N_PERMUTATIONS


def _comparison(keys: tuple, per_user: dict, metrics: tuple, baseline: str | None, test: str, correction: str,
                alpha: float, opt_key: tuple, bootstrap: bool = True):
    """The paired comparison with the chosen test only, each metric cached on the server
    (``dashboard.comparisons``); a progress bar names the test, the step and how far it is while
    anything is computed."""
    with state.page_progress(f"Running the {TEST_LABELS[test]}", comparisons.steps(metrics, bootstrap)) as bar:
        return comparisons.comparison(keys, per_user, metrics, baseline, test, correction, alpha, opt_key,
                                      bootstrap=bootstrap, step=bar.step)


_DRILL_USER = "mcd_compare_drill_user"  # the user of a selected regression row, opened on Failures
_WHOLE_PAGE = "mcd_compare_whole_page"  # set while the whole page runs (not one of its fragments)
# A regression row picked in the per-user section (a fragment) asked for a run of the whole page:
# the sidebar (drawn by app.py before this page) is part of it, so its settings (gain, K, ...) stay
# in the next page's URL. Failures opens now, before anything of this page is computed or drawn.
_picked = st.session_state.pop(_DRILL_USER, None)
if _picked is not None:
    url.switch_page("views/failures.py", user=_picked)

st.title("Compare models")
models = state.require_models()
names = list(models)
if len(names) < 2:
    st.info("Comparing needs at least two models: add another ranked-results file on the **Data** page.")
    st.stop()

k = state.controls()["k"]
settings = state.settings()
metric_options = metric_lists.labels(metric_lists.PER_USER, k)

left, right = st.columns(2)
baseline = url.bound(lambda: left.selectbox("Baseline", names, key="compare_baseline",
                                            help="The model the others are measured against."),
                     "compare_baseline", names[0], options=names)
others = [n for n in names if n != baseline]
_BEFORE = "mcd_compare_baseline_before"  # the baseline of the previous run, to swap it into the challengers
before = st.session_state.get(_BEFORE)
if before not in (None, baseline) and "compare_challengers" in st.session_state:
    st.session_state["compare_challengers"] = verdict.challengers_after_baseline_change(
        st.session_state["compare_challengers"], before, baseline, names)
st.session_state[_BEFORE] = baseline
# A widget whose state the script set (the baseline swap above) takes no default: Streamlit warns on both.
challengers = url.bound(lambda: right.multiselect("Challengers", others, key="compare_challengers",
                                                  default=None if "compare_challengers" in st.session_state
                                                  else others),
                        "compare_challengers", others, kind=list, options=others)
left, mid, right = st.columns([3, 2, 2])
metrics = url.bound(lambda: left.multiselect(
    "Per-user metrics", metric_options, default=metric_options[:1], key="compare_metrics",
    help="; ".join(f"{m}: {metric_lists.help_for(m)}" for m in metric_options[:6])),
    "compare_metrics", metric_options[:1], kind=list, options=metric_options)
test = url.bound(lambda: mid.selectbox("Test for significance", TESTS, format_func=TEST_LABELS.get, key="compare_test",
                                       help="Paired t-test (means), Wilcoxon signed-rank (medians of differences), or "
                                            f"Fisher randomization ({N_PERMUTATIONS:,} sign flips). Only this test "
                                            "is computed."),
                 "compare_test", TESTS[0], options=TESTS)
correction = url.bound(lambda: right.selectbox("Correction", CORRECTIONS, format_func=CORRECTION_LABELS.get,
                                              key="compare_correction",
                                              help="Adjusts the p-values for testing every challenger x metric, and "
                                                   "the segment tests within their family (below)."),
                       "compare_correction", CORRECTIONS[0], options=CORRECTIONS)
left, right = st.columns([3, 4])
alpha = url.bound(lambda: left.select_slider("Significance level (after correction)", options=ALPHAS, value=0.05,
                                             key="compare_alpha"),
                  "compare_alpha", 0.05, kind=float, options=ALPHAS)
family = url.bound(lambda: right.selectbox(
    "Segment tests adjusted together", list(FAMILIES), format_func=FAMILY_LABELS.get, key="compare_family",
    help="The family of segment tests whose p-values the correction adjusts together, saved with the analysis "
         "and used by the Brief, the report and a shared link: every segment of every attribute x metric x "
         "challenger; each attribute apart; each attribute and metric apart; or each segment apart (its "
         "metrics x challengers)."),
    "compare_family", DEFAULT_FAMILY, options=list(FAMILIES))
if not challengers or not metrics:
    st.info("Pick at least one challenger and one metric.")
    st.stop()

with state.guard():
    counted = state.show_population()
    evals = state.evaluate_all(metrics)  # over the users counted
    chosen = [baseline, *challengers]
    per_user = {n: evals[n].per_user[metrics] for n in names}
    keys = state.model_keys()
    opt_key = state.counted_key()  # the users counted depend on every loaded model
    table = _comparison(tuple(keys.get(n, n) for n in chosen), {n: per_user[n] for n in chosen},
                        tuple(metrics), baseline, test, correction, float(alpha), opt_key)

n_sig = int(table["significant"].sum())
who = counted.describe(state.unit())
coverage = state.coverage_by_model()
rows_are = state.unit()
st.caption(text.md(f"{fmt.plural(len(table), 'comparison')}, each paired over the {rows_are} counted ({who}); ",
                   limit=600)
           + f"{TEST_LABELS[test]}, "
           f"{CORRECTION_LABELS[correction]} correction, α = {alpha}: {n_sig} significant. "
           "Lift = challenger mean / baseline mean − 1, 95% interval by the delta method. "
           f"Detectable lift: the smallest lift a paired t-test would find with 80% power on these {rows_are}: "
           f"a non-significant result below it means too few {rows_are}, not no difference.")

if table.attrs["pending"]:
    waiting_for = comparisons.pending_parts(table.attrs["pending"])
    st.caption(verdict.resampling_note(test, max(len(t) for t in per_user.values()), **waiting_for),
               help=f"{N_PERMUTATIONS:,} sign flips, {comparisons.N_RESAMPLES:,} bootstrap resamples; up to "
                    f"{fmt.plural(background.FOREGROUND_USERS, 'user')} per model they are computed before the "
                    "page is shown.")

st.subheader("Verdict", anchor=False)
readable = verdict.verdict_table(table, correction, alpha, who, coverage, rows_are)
state.shown_table(readable.drop(columns="sentence"), hide_index=True, key="compare_verdict",
             column_config={"metric": st.column_config.TextColumn(help="Hover the metric selector for definitions"),
                            "adjusted p": st.column_config.TextColumn(help=f"{TEST_LABELS[test]}, adjusted by "
                                                                            f"{CORRECTION_LABELS[correction]}"),
                            "detectable lift": st.column_config.TextColumn(
                                help="Minimum detectable effect at 80% power and the chosen α, relative to the "
                                     "baseline mean")}, placeholder=fmt.EMPTY)
for line in readable["sentence"]:
    st.markdown("- " + text.md(line, limit=600))
overlap_pending: list[str] = []  # overlaps of many users still computed on the server thread
with state.guard():
    overlap, overlap_ties = state.overlap_with_baseline(baseline, challengers, k, overlap_pending)
st.caption(text.md(f"Overlap with the baseline: the share of a challenger's top {k} also in {baseline}'s top {k} "
                   "for the same user, averaged over the users the challenger served (RecTools Intersection@K; "
                   f"ties in {overlap_ties} order): "
                   + "; ".join(f"{name} {fmt.percent(value, signed_=False)}" if value is not None
                               else f"{name} being computed on the server" for name, value in overlap.items())
                   + ".", limit=900), help="metrics_core.intersection(run, baseline_run, k)")

sampled_on = bool(url.remembered("compare_sampled_items", None, kind=int))
with st.expander("Runs scored on sampled negatives (1+N protocol)", expanded=sampled_on):
    left, right = st.columns(2)
    n_items = url.bound(lambda: left.number_input(
        "Catalogue size (items)", min_value=0, max_value=sampled.MAX_ITEMS, value=None, step=1,
        key="compare_sampled_items", placeholder="off",
        help="When each user's held-out target was ranked among N sampled negatives instead of the whole "
             "catalogue: the number of items the negatives were drawn from. Empty or 0: off; at most "
             f"{sampled.MAX_ITEMS:,}, and catalogue x list length at most {sampled.MAX_ENTRIES:,}.") or None,
        "compare_sampled_items", None, kind=int, low=0, high=sampled.MAX_ITEMS)
    sampled_correction = url.bound(lambda: right.selectbox(
        "Correction of the sampled metrics", sampled.CORRECTIONS, format_func=sampled.CORRECTION_LABELS.get,
        key="compare_sampled_correction",
        help="Krichene and Rendle's corrected estimators of the full-ranking metric: bias-variance trade-off "
             "(γ = 0.1) or least squares (unbiased over ranks, high variance)."),
        "compare_sampled_correction", sampled.CORRECTIONS[0], options=list(sampled.CORRECTIONS))
    if not n_items:
        st.caption("Off. Give the catalogue size to see each model's sampled and corrected hr@K, recall@K, "
                   "ndcg@K and AP, and whether the baseline and a challenger may swap places under full ranking.")
    elif not sampled.covered(metrics):
        st.info(sampled.COVERED_NOTE)
    else:
        section, problem = sampled.cached_section(models, keys, metrics, int(n_items), sampled_correction, baseline,
                                                  challengers)
        if problem:
            st.error(text.md(problem, limit=600), icon=":material/error:")
        else:
            state.shown_table(section.table, hide_index=True, key="compare_sampled", column_config={
                "sampled": st.column_config.NumberColumn(format="%.4f"),
                "corrected": st.column_config.NumberColumn(format="%.4f")}, placeholder=fmt.EMPTY)
            st.caption(text.md(section.note, limit=900))
            for line in section.cautions:
                st.warning(text.md(line, limit=600), icon=":material/warning:")
            for line in section.reversals:
                st.warning(text.md(line, limit=600), icon=":material/swap_vert:")
            if not section.reversals:
                st.caption(text.md(f"No challenger's order against {baseline} differs between the sampled and "
                                   "the corrected values.", limit=600))

with st.expander("Full statistics"):
    numeric = table.drop(columns=["test"])
    st.dataframe(numeric, hide_index=True, key="compare_table", column_config={
        **{c: st.column_config.NumberColumn(format="%.4f") for c in
           ("baseline_mean", "model_mean", "diff", "ci_low", "ci_high", "lift", "lift_ci_low", "lift_ci_high",
            "mde", "mde_relative", "effect_size", "statistic")},
        "p_value": st.column_config.NumberColumn(format="%.6f"), "p_adjusted": st.column_config.NumberColumn(format="%.6f"),
        "model": "challenger", "n": f"{rows_are} paired", "diff": st.column_config.NumberColumn(
            "difference", format="%+.4f", help="challenger mean − baseline mean; ci_low/ci_high: its 95% bootstrap CI"),
        "effect_size": st.column_config.NumberColumn("Cohen's d", format="%.3f")}, placeholder=fmt.EMPTY)
    slug = state.settings_slug()
    # the CSV is written when the button is clicked (on a server thread), not on every run of the page
    st.download_button("Download comparison CSV", lambda: text.csv_bytes(table, index=False),
                       file_name=f"comparison_{test}_{correction}_users-{state.users()}_{slug}.csv",
                       mime="text/csv", key="compare_download", on_click="ignore", icon=":material/download:")
    st.caption(text.SPREADSHEET_NOTE)
    papers = comparisons.paper_tables(table)
    left, right = st.columns(2)
    left.download_button("Download LaTeX table", papers["latex"],
                         file_name=f"comparison_{test}_{correction}_users-{state.users()}_{slug}.tex",
                         mime="application/x-tex", key="compare_download_latex", on_click="ignore",
                         icon=":material/download:")
    right.download_button("Download Markdown table", papers["markdown"],
                          file_name=f"comparison_{test}_{correction}_users-{state.users()}_{slug}.md",
                          mime="text/markdown", key="compare_download_markdown", on_click="ignore",
                          icon=":material/download:")
    st.caption("The tables as ranx's report writes them, ready for a paper: each model's mean, the best of each "
               "metric in bold, superscript letters naming the models it is significantly better than (here "
               "each challenger against the baseline), and a legend of the test, correction and α.")

col_a, col_b = st.columns(2)
col_a.plotly_chart(state.cached_figure("compare_forest", table, compare_figures.lift_forest), key="compare_forest")
col_b.plotly_chart(state.cached_figure("compare_wtl", table, compare_figures.win_tie_loss), key="compare_wtl")

st.subheader("Every model against every other", anchor=False)
matrix_metric = url.bound(lambda: st.selectbox("Metric of the matrix", metrics, key="compare_matrix_metric"),
                          "compare_matrix_metric", metrics[0], options=metrics)
with state.guard():
    # the matrix shows lift, marker and significance: no bootstrap interval is needed
    by_base = {b: _comparison(tuple(keys.get(n, n) for n in names), per_user, (matrix_metric,), b, test,
                              correction, float(alpha), opt_key, bootstrap=False) for b in names}
state.shown_table(verdict.pair_matrix(by_base, matrix_metric), key="compare_matrix", placeholder=fmt.EMPTY)
st.caption(f"Cell: lift of the row's model over the column's model on {text.md(matrix_metric)}; ▲ / ▼ significant "
           f"({TEST_LABELS[test]}, {CORRECTION_LABELS[correction]} within each column), – not significant."
           + (" " + verdict.resampling_note(test, len(per_user[names[0]]), interval=False)
              if any(t.attrs["pending"] for t in by_base.values()) else ""))

attrs = state.user_attributes()
attr_cols = [c for c in attrs.columns if c != "user_id"] if attrs is not None else []
chosen_keys = tuple(keys.get(n, n) for n in chosen)
chosen_per_user = {n: per_user[n] for n in chosen}


_SIGN_FLIPS = "mcd_compare_sign_flips_for"  # the models whose sign flips were queued ahead


def prefetch_other_tests(segments: tuple | None) -> None:
    """The other tests' tables, matrix and (with ``segments`` = ``(labels, attribute)``) segments,
    computed on the server thread for the next choice; the randomization test's sign flips (seconds of
    CPU on many users) only for what the page first shows of these models, so that each later change
    (baseline, metric, sidebar) does not queue them again."""
    all_keys = tuple(keys.get(n, n) for n in names)
    first = st.session_state.get(_SIGN_FLIPS) != all_keys
    comparisons.prefetch_tests(TESTS, test, chosen_keys, chosen_per_user, tuple(metrics), baseline,
                               all_keys, per_user, matrix_metric, opt_key, segments, sign_flips=first)
    st.session_state[_SIGN_FLIPS] = all_keys


@st.fragment
def segment_section() -> None:
    """Results per segment of a user attribute. A fragment: choosing another attribute reruns this
    section only (the rest of the page is not rebuilt nor redrawn); what it reads is the page's."""
    st.subheader("By segment", anchor=False)
    seg_col = url.bound(lambda: st.selectbox("User attribute", attr_cols, key="compare_segment"),
                        "compare_segment", attr_cols[0], options=attr_cols)
    # one family of tests for the analysis: the brief's segment rows (every attribute's segments
    # adjusted together), so that a segment has one verdict here, on the Brief, in the report and
    # in metrics-core compare
    decision = current_decision(names)
    with state.guard(), state.page_progress(f"Running the {TEST_LABELS[test]} per segment", 1):
        # the brief's segment rows alone (the same cache entry), not the rest of the brief
        segments = state.decision_segments(decision, table.attrs["pending"], progressive=True)
        state.prefetch_brief_segments(decision, [t for t in TESTS if t != test])  # the next choice
    prefetch_other_tests(None)
    if segments.rows is None:
        st.caption("The segments of every user attribute are being compared on the server; they appear here "
                   "when that is done (the page updates itself).")
        background.refresh_when_ready(segments.pending,
                                      progress=(segments.key, f"Running the {TEST_LABELS[test]} per segment"))
        return
    rows = segments.rows[segments.rows["attribute"].astype(str) == str(seg_col)]
    state.shown_table(verdict.adjusted_segment_rows(rows, state.unit()), hide_index=True, key="compare_segments",
                 placeholder=fmt.EMPTY)
    st.caption(text.md("P-values " + brief_text.family_sentence(correction, decision.family, segments.rows,
                                                                  segments.attributes, decision.unit) + ".",
                       limit=900))

background.refresh_when_ready([*table.attrs["pending"], *overlap_pending,
                               *(k for t in by_base.values() for k in t.attrs["pending"])])
if attr_cols:
    segment_section()
else:
    prefetch_other_tests(None)


@st.fragment
def per_user_section() -> None:
    """The per-user views of one challenger and metric, and its largest regressions. A fragment:
    choosing another challenger, metric or number of users shown reruns this section only."""
    st.subheader("Per user", anchor=False)
    left, right = st.columns(2)
    focus_model = url.bound(lambda: left.selectbox("Challenger", challengers, key="compare_focus_model"),
                            "compare_focus_model", challengers[0], options=challengers)
    focus_metric = url.bound(lambda: right.selectbox("Metric", metrics, key="compare_focus_metric",
                                                     help=metric_lists.help_for(
                                                         st.session_state.get("compare_focus_metric", metrics[0]),
                                                         settings)),
                             "compare_focus_metric", metrics[0], options=metrics)
    # cached by what determines them (the models, settings and metric): the charts below are keyed the
    # same way, so a run that finds them hashes no per-user table
    pairs_key, pairs = state.paired_values(focus_metric, baseline, focus_model, per_user[baseline][focus_metric],
                                           per_user[focus_model][focus_metric])
    row = table[(table["model"] == focus_model) & (table["metric"] == focus_metric)].iloc[0]
    threshold = tables.relevance_threshold(state.conventions())
    segment_name = state.segment_name(attrs, "segment")
    unserved = {n: counted.n_evaluated - (counted.served(n) or 0) for n in (baseline, focus_model)}
    st.caption(f"{fmt.plural(len(pairs), 'user')} paired ({text.md(who, limit=600)}); "
               f"colour: {text.md(segment_name)}. "
               f"Win / tie / loss: {fmt.count(row['wins'])} / {fmt.count(row['ties'])} / "
               f"{fmt.count(row['losses'])}. "
               + text.md(f"Evaluated users without a list: {baseline} {unserved[baseline]:,}, "
                         f"{focus_model} {unserved[focus_model]:,}."))
    col_a, col_b = st.columns(2)

    def scatter():
        segment, _ = state.user_segments(pd.Index(pairs["user_id"]), models, attrs, "segment", threshold)
        plotted = pairs.assign(segment=pairs["user_id"].map(segment).to_numpy())
        return compare_figures.pair_scatter(plotted, focus_metric, baseline, focus_model)
    col_a.plotly_chart(state.keyed_figure("compare_scatter", f"{pairs_key}|{state.attributes_key()}|{threshold!r}",
                                          scatter, drawn=pairs), key="compare_scatter")
    ci_low, ci_high = float(row["ci_low"]), float(row["ci_high"])
    col_b.plotly_chart(state.keyed_figure("compare_hist", f"{pairs_key}|{ci_low!r}|{ci_high!r}",
                                          compare_figures.pair_differences, pairs, focus_metric, baseline, focus_model,
                                          ci_low, ci_high, drawn=pairs), key="compare_hist")

    st.subheader("Largest regressions", anchor=False)
    n_show = url.bound(lambda: st.number_input("Users shown", min_value=5, max_value=500, value=20, step=5,
                                               key="compare_n_regressions"),
                       "compare_n_regressions", 20, kind=int, low=5, high=500)
    worst = verdict.regressions(pairs, metric_lists.higher_is_better(focus_metric), int(n_show))
    worst = worst.rename(columns={"baseline": f"{baseline}", "challenger": f"{focus_model}"})
    if worst.empty:
        st.success(text.md(f"{focus_model} is never worse than {baseline} on {focus_metric} "
                           "for the users compared."))
    else:
        st.caption(text.md(f"Users where {focus_model} loses most against {baseline} on {focus_metric}, "
                           f"largest loss first (of the users counted: {who}). ", limit=600)
                   + "Select a row to open that user on the Failures page, beside the baseline.")
        picked = state.shown_table(worst, hide_index=True, on_select="rerun", selection_mode="single-row",
                              key="compare_regressions",
                              column_config={col: st.column_config.NumberColumn(format="%.4f")
                                             for col in worst.columns if col != "user_id"}, placeholder=fmt.EMPTY)
        user = tables.selected_value(worst, "user_id", picked.selection.rows if picked is not None else [])
        if user is not None:
            state.request_drilldown(focus_model, user, baseline)
            st.session_state[_DRILL_USER] = user
            if not st.session_state.get(_WHOLE_PAGE):
                # a rerun of this section alone: the page is switched from a run of the whole page,
                # whose sidebar widgets keep their values (gain, K, ...) in the URL of the next page
                st.rerun(scope="app")


st.session_state[_WHOLE_PAGE] = True
try:
    per_user_section()
finally:
    st.session_state[_WHOLE_PAGE] = False
drill_user = st.session_state.pop(_DRILL_USER, None)
if drill_user is not None:
    url.switch_page("views/failures.py", user=drill_user)
