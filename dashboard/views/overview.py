"""Overview: every metric of every model at the current K and gain, with
bootstrap 95% confidence intervals over users, metric-versus-K curves and the
summary CSV download."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import charts, sources, state, text, url

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
colors = charts.model_colors(list(models))

ranking = [f"{m}@{k}" for m in state.RANKING_METRICS if m != "r_precision"] + ["r_precision"]
scored = list(state.SCORED_METRICS)
diversity = [f"{m}@{k}" for m in state.DIVERSITY_METRICS]

st.caption(f"K = {k} · gain = {state.GAIN_LABELS[c['gain']]} · ties = {state.TIE_LABELS[c['ties']]} · "
           f"{len(models)} models")

large = state.is_large()
if large:
    st.caption("Large data: bootstrap CIs, beyond-accuracy metrics and metric-versus-K curves are off "
               "until you switch them on (each takes a few seconds per model).")
toggles = st.columns(3)
show_ci = url.bound(lambda: toggles[0].toggle("Bootstrap 95% CIs", value=not large, key="overview_ci_on"),
                    "overview_ci_on", not large, kind=bool)
show_div = url.bound(lambda: toggles[1].toggle("Beyond-accuracy metrics", value=not large, key="overview_diversity",
                                               help="coverage, novelty, personalization and ILS at K"),
                     "overview_diversity", not large, kind=bool)
show_curves = url.bound(lambda: toggles[2].toggle("Metrics against K", value=not large, key="overview_curves_on"),
                        "overview_curves_on", not large, kind=bool)

with state.guard():
    ev_rank = state.evaluate_all(ranking)
    # scored-row metrics depend on neither K, gain nor tie rule: one cached evaluation
    ev_scored = state.evaluate_all(scored, gain="linear", ties="average")
    ev_div = state.evaluate_all(diversity) if show_div else {}
    cis = state.ci_table(ev_rank, ranking) if show_ci else None

st.subheader("Ranking metrics")
wide = state.summary_table(ev_rank, ranking).set_index("model")
st.dataframe(wide, column_config={m: st.column_config.NumberColumn(m, format="%.4f") for m in ranking},
             key="overview_ranking")

if show_ci:
    with st.expander("95% bootstrap confidence intervals over users", expanded=True):
        shown = cis.assign(interval=[f"[{lo:.4f}, {hi:.4f}]" for lo, hi in zip(cis.ci_low, cis.ci_high)])
        ci_wide = shown.pivot(index="model", columns="metric", values="interval").loc[list(models), ranking]
        st.dataframe(ci_wide, key="overview_ci")
        metric = url.bound(lambda: st.selectbox("Metric", ranking, key="overview_bar_metric"),
                           "overview_bar_metric", ranking[0], options=ranking)
        st.plotly_chart(charts.summary_bars(cis, metric, colors), key="overview_bars")

st.subheader("Scored-row metrics")
st.caption("Computed over every scored row of the results (unjudged rows count as negatives). "
           "`precision`, `recall`, `f1` and `accuracy` use the threshold 0.5; GAUC averages per-user AUC "
           "weighted by rows; PCOPC = sum of scores / sum of labels (1.0 is perfectly calibrated).")
scored_wide = state.summary_table(ev_scored, scored).set_index("model")
st.dataframe(scored_wide, column_config={m: st.column_config.NumberColumn(m, format="%.4f") for m in scored},
             key="overview_scored")
if scored_wide["logloss"].isna().any():
    st.caption("logloss is left empty for models whose scores are not probabilities in [0, 1].")

if show_div:
    st.subheader("Beyond accuracy")
    div_wide = state.summary_table(ev_div, diversity).set_index("model")
    st.dataframe(div_wide, column_config={m: st.column_config.NumberColumn(m, format="%.4f")
                                          for m in diversity}, key="overview_diversity_table")
    if div_wide[f"ils@{k}"].isna().all():
        st.caption("ILS needs an item-features table (upload one on the Data page).")

all_metrics = ranking + scored + (diversity if show_div else [])
summary = pd.concat([state.summary_table(ev_rank, ranking).set_index("model"),
                     state.summary_table(ev_scored, scored).set_index("model"),
                     state.summary_table(ev_div, diversity).set_index("model") if show_div else None], axis=1)
summary = summary.reset_index()[["model", *all_metrics]]
st.download_button(f"Download summary CSV (K={k}, {c['gain']} gain)",
                   data=text.csv_bytes(summary, index=False, float_format="%.17g"),
                   file_name=f"summary_k{k}_{c['gain']}.csv", mime="text/csv", key="overview_download",
                   on_click="ignore", icon=":material/download:")
st.caption(text.SPREADSHEET_NOTE)

if not show_curves:
    st.stop()
st.subheader("Metrics against K")
k_max = 50
with state.guard():
    long = state.metric_curves(state.CURVE_METRICS, k_max=k_max)
st.plotly_chart(charts.metric_vs_k(long, colors, current_k=k if k <= k_max else None), key="overview_vs_k")
