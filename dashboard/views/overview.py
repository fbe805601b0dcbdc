"""Overview: every metric of every model at the current settings, with bootstrap 95%
confidence intervals over users, metric-versus-K curves and the summary CSV download;
first, over which users the numbers are and which model did not serve whom."""

from __future__ import annotations

import contextlib

import streamlit as st

from dashboard import background, format as fmt, metric_lists, sources, state, tables, text, url
from dashboard.state import figures

st.title("Overview")
opened = sources.current()
if opened is not None and opened.kind == sources.SNAPSHOT:
    st.subheader(text.md(opened.title or "Shared analysis"), anchor=False)
    if opened.notes:
        st.text(opened.notes)
    st.caption(text.md(f"Read-only snapshot saved {opened.created[:16].replace('T', ' ')} UTC."))
models = state.require_models()
c = state.controls()
k = c["k"]
settings = state.settings()
colors = figures.model_colors(list(models))

ranking = metric_lists.labels(metric_lists.RANKING, k)
scored = metric_lists.scored_labels()
diversity = metric_lists.labels(metric_lists.DIVERSITY, k)

described = " · ".join(f"{key} = {value:g}" if isinstance(value, float) else f"{key} = {value}"
                       for key, value in settings.items())
st.caption(f"{described} · {fmt.plural(len(models), 'model')}. Hover a column header for the metric's "
           "definition; change the conventions in the sidebar.")
# The summary download sits here, above the tables, and is offered only once this run has built the
# tables it holds: until then (a change of settings or files being computed) the previous run's button,
# which would save the previous state's numbers under the new caption, is replaced by a disabled one.
download_slot = st.empty()
download_label = f"Download summary CSV ({described})"
download_slot.button(download_label, disabled=True, key="overview_download_pending", icon=":material/download:",
                     help="Offered once the tables below are computed for these settings.")
with state.guard():
    state.show_population()

large = state.is_large()
if large:
    st.caption("Large data: bootstrap CIs, beyond-accuracy metrics and metric-versus-K curves are off "
               "until you switch them on (each takes a few seconds per model).")
toggles = st.columns(3)
show_ci = url.bound(lambda: toggles[0].toggle("Bootstrap 95% CIs", value=not large, key="overview_ci_on"),
                    "overview_ci_on", not large, kind=bool)
show_div = url.bound(lambda: toggles[1].toggle("Beyond-accuracy metrics", value=not large, key="overview_diversity",
                                               help="Coverage, novelty, personalization, ILS, entropy, Gini, "
                                                    "popularity and serendipity of the top-K lists"),
                     "overview_diversity", not large, kind=bool)
show_curves = url.bound(lambda: toggles[2].toggle("Metrics against K", value=not large, key="overview_curves_on"),
                        "overview_curves_on", not large, kind=bool)

# a bar with the step and metrics_core's stage, drawn only while a step computes (cached: nothing)
with state.guard(), state.page_progress(f"Evaluating {fmt.plural(len(models), 'model')}",
                                        2 + bool(show_div) + bool(show_ci)) as bar:
    with bar.step("ranking metrics"):
        ev_rank = state.evaluate_all(ranking)
    with bar.step("scored-row metrics"):  # they depend on neither K, gain nor tie rule: one cached evaluation
        ev_scored = state.evaluate_all(scored, gain="linear", ties="average")
    with bar.step("beyond-accuracy metrics") if show_div else contextlib.nullcontext():
        ev_div = state.evaluate_all(diversity) if show_div else {}
    with bar.step("bootstrap intervals") if show_ci else contextlib.nullcontext():
        cis = state.ci_table(ev_rank, ranking) if show_ci else None

st.subheader("Ranking metrics")
wide = state.summary_table(ev_rank, ranking).set_index("model")
st.dataframe(wide, column_config=fmt.metric_columns(ranking, settings), key="overview_ranking", placeholder=fmt.EMPTY)

if show_ci:
    with st.expander("95% bootstrap confidence intervals over users", expanded=True):
        if cis.attrs["pending"]:
            st.caption(f"Bootstrapping more than {fmt.plural(background.FOREGROUND_USERS, 'user')} runs on the server: "
                       "these are t intervals (mean ± t·sd/√n) until the 1,000 resamples are done; the page "
                       "updates itself.")
            background.refresh_when_ready(cis.attrs["pending"])
        shown = cis.assign(interval=[f"[{fmt.metric(lo)}, {fmt.metric(hi)}]" for lo, hi in zip(cis.ci_low, cis.ci_high)])
        ci_wide = shown.pivot(index="model", columns="metric", values="interval").loc[list(models), ranking]
        state.shown_table(ci_wide, key="overview_ci", placeholder=fmt.EMPTY)
        metric = url.bound(lambda: st.selectbox("Metric", ranking, key="overview_bar_metric",
                                                help=metric_lists.help_for(st.session_state.get(
                                                    "overview_bar_metric", ranking[0]), settings)),
                           "overview_bar_metric", ranking[0], options=ranking)
        st.plotly_chart(state.cached_figure("summary_bars", cis, figures.summary_bars, metric, colors),
                        key="overview_bars")

st.subheader("Scored-row metrics")
probabilistic = {name: state.scores_are_probabilities(r) for name, r in models.items()}
needs = list(metric_lists.NEEDS_PROBABILITIES)
REGRESSION = list(metric_lists.ERRORS)
if state.at_default("threshold"):  # the default threshold (0.5) only means something for probabilities
    needs += metric_lists.THRESHOLD
scored_all = state.summary_table(ev_scored, scored).set_index("model")
scored_wide, hidden, raw_models = tables.needs_probabilities_view(scored_all, probabilistic, needs)
# the error metrics compare the score with the relevance grade: only meaningful when the scores
# predict it (on that scale, or the user says so)
errors_when = url.bound(lambda: st.radio(
    "Error metrics (RMSE, MSE, MAE, R², explained variance)", tables.ERROR_METRICS_WHEN, horizontal=True,
    key="overview_errors",
    help="They compare each score with the row's relevance grade, so they mean something only when the "
         "scores predict that grade. By default they are shown for a model whose scores lie within the "
         "range of the grades (and use it when the grades go above 1)."),
    "overview_errors", tables.ERROR_METRICS_WHEN[0], options=list(tables.ERROR_METRICS_WHEN))
on_scale = {name: state.scores_on_relevance_scale(r) for name, r in models.items()}
scored_wide, hidden_scale, off_scale = tables.needs_probabilities_view(
    scored_wide, tables.error_metrics_shown(on_scale, errors_when), REGRESSION)
st.caption(f"Computed over every scored row of the results. {metric_lists.unjudged_sentence(state.conventions())} "
           f"`accuracy`, `precision`, `recall` and `f1` classify a row as positive when its score is at least "
           f"{state.conventions()['threshold']:g}; RMSE, MSE, MAE, R² and explained variance compare the score "
           "with the relevance grade. Hover a header for its formula.")
state.shown_table(scored_wide, column_config=fmt.metric_columns(list(scored_wide.columns), settings),
             key="overview_scored", placeholder=fmt.EMPTY)
if raw_models:
    names = ", ".join(text.md(m) for m in raw_models)
    st.caption(f"**Needs probabilities**: the scores of {names} are outside [0, 1], so "
               f"{', '.join(n for n in needs if n in scored_all.columns)} are left empty for them"
               + (f" ({', '.join(hidden)} hidden: no model has probabilities)" if hidden else "")
               + ". Classification at a threshold over the model's own score range is on the Curves page.")
if off_scale:
    names = ", ".join(text.md(m) for m in off_scale)
    errors = ", ".join(m for m in REGRESSION if m in scored_all.columns)
    if errors_when == tables.ERROR_METRICS_WHEN[2]:
        st.caption(f"**Error metrics hidden**: you chose that the scores only rank, so {errors} are not shown.")
    else:
        st.caption(f"**Needs scores on the relevance scale**: the scores of {names} are not on the scale of the "
                   f"relevance grades (outside their range, or within [0, 1] while the grades go above 1), so "
                   f"{errors} are left empty for them (they would measure the scale, not the model). If the "
                   "scores do predict the grade, choose \"always\" above.")

if show_div:
    st.subheader("Beyond accuracy")
    div_wide = state.summary_table(ev_div, diversity).set_index("model").dropna(axis=1, how="all")
    state.shown_table(div_wide, column_config=fmt.metric_columns(list(div_wide.columns), settings),
                 key="overview_diversity_table", placeholder=fmt.EMPTY)
    if metric_lists.NEEDS_FEATURES and not set(metric_lists.labels(metric_lists.NEEDS_FEATURES, k)) & set(
            div_wide.columns):
        st.caption(f"{' and '.join(n.upper() for n in metric_lists.NEEDS_FEATURES)} need an item-features table "
                   "(upload one on the Data page).")

# the file holds exactly the tables drawn above in this run
shown_tables = [wide, scored_wide, *([div_wide] if show_div else [])]
summary = tables.summary_download(shown_tables)
with download_slot.container():
    st.download_button(download_label, data=text.csv_bytes(summary, index=False, float_format="%.17g"),
                       file_name=f"summary_{state.settings_slug()}.csv", mime="text/csv", key="overview_download",
                       on_click="ignore", icon=":material/download:")
    st.caption(text.SPREADSHEET_NOTE)

# the Curves page's tables of large models, computed on the server thread once per upload and settings
# (before the optional section below, which is off on large data and ends the page when off)
state.prefetch_curves(models, tables.relevance_threshold(state.conventions()))
if not show_curves:
    st.stop()
st.subheader("Metrics against K")
k_max = 50
with state.guard():
    long, compiling = state.metric_curves_unless_compiling(metric_lists.CURVES, k_max=k_max)
st.caption(f"Mean over users of each metric at every cutoff K = 1..{k_max} (the tables above use K = {k}), "
           "over every evaluated user whatever the users counted (a missing list scores 0).")
if compiling:
    st.caption("First start after installing: the curves' compiled code is being built on the server; "
               "the chart appears here by itself in a few seconds.")
    background.refresh_when_ready([compiling])
else:
    st.plotly_chart(state.cached_figure("metric_vs_k", long, figures.metric_vs_k, colors), key="overview_vs_k")
