"""Brief: the decision on one screen, the page a shared link opens on.

The analysis' title and notes, then for the baseline, challengers and primary metrics chosen
on Compare (and saved with the analysis): one verdict line per challenger and metric, each
model's coverage, the segments where a challenger that does not lose overall is significantly
worse, and the failure groups that explain its loss, each opening Failures already filtered.
Everything comes from :func:`metrics_core.brief.build.build_brief` (the HTML report starts with the
same brief), read through :mod:`dashboard.brief_text`; this page only arranges it. A snapshot's
brief kept in the store is drawn from there at once while its files load on the server
(:mod:`dashboard.snapshot_brief`).
"""

from __future__ import annotations

import streamlit as st

from dashboard import (background, brief_text, counterfactual, counterfactual_tables, format as fmt, snapshot_brief,
                       sources, state, text, url)
from dashboard.decision import current as current_decision

opened = sources.current()
snapshot = opened is not None and opened.kind == sources.SNAPSHOT
title = (opened.title if snapshot else "") or "Decision brief"
notes = opened.notes if snapshot and opened.notes else ""
st.title(text.md(title, limit=120), anchor=False)
if notes:
    st.text(notes)
if counterfactual.has_log():  # logged feedback with propensities: its verdict opens the brief
    with state.guard():
        off_policy = counterfactual.current_estimate(state.controls()["k"])
    if off_policy is not None:
        with st.container(key="brief_counterfactual"):
            st.subheader("Counterfactual verdict", anchor=False)
            st.text(counterfactual_tables.brief_line(off_policy))
            for line in off_policy.verdicts["line"]:
                st.markdown("- " + text.md(line, limit=600))
            st.page_link("views/counterfactual.py", label="Estimators, intervals and diagnostics",
                         icon=":material/science:")
# A snapshot's brief kept in the store comes at once, without reading its files; they load meanwhile.
kept = None
run_names = list(sources.sources().runs)
if snapshot and len(run_names) >= 2:
    decision = current_decision(run_names)
    kept = snapshot_brief.stored(decision, title, notes)
if kept is None:
    models = state.require_models()
    names = list(models)
    if snapshot:
        snapshot_brief.mark_loaded()
    if len(names) < 2:
        st.info("A decision needs at least two models: add another ranked-results file under **Add files** in "
                "the sidebar. The Overview shows every metric of this one.")
        st.page_link("views/overview.py", label="Overview", icon=":material/leaderboard:")
        st.stop()
    decision = current_decision(names)
    with state.guard():
        # the segments (every attribute's segments compared) follow from the server thread on large data
        brief = state.decision_brief(decision, title if snapshot else "", notes, progressive=True)
    if snapshot:
        snapshot_brief.keep(decision, title, notes, brief)
else:
    brief = kept
    if not snapshot_brief.data_loaded():
        with st.container(key="brief_from_snapshot"):
            st.caption("As computed when this snapshot was made; its files are being loaded on the server for "
                       "the other pages.")
        background.refresh_when_ready([snapshot_brief.load_data_later()])
segments_pending = brief.verdicts.attrs.get("segments_pending", False)

st.caption(text.md(f"{brief_text.headline(brief)} Over {brief.population}.", limit=900))
for line in brief_text.verdict_lines(brief):
    st.markdown("- " + text.md(line, limit=600))
for line in brief_text.head_to_head_lines(brief):
    st.markdown("- " + text.md(line, limit=600))
if brief.accounting:
    st.caption(text.md(brief_text.accounting_text(brief), limit=1200))
for line in brief.coverage:
    st.warning(text.md(line, limit=600), icon=":material/person_off:")

left, right = st.columns(2)
with left:
    st.subheader("Where a challenger loses", anchor=False)
    if segments_pending:
        st.caption("The segments of every user attribute are being compared on the server; they appear here "
                   "when that is done (the page updates itself).")
    else:
        losses = brief_text.segment_loss_rows(brief, limit=5)
        if len(losses):
            chosen = state.shown_table(losses, hide_index=True, key="brief_segments", on_select="rerun",
                                       selection_mode="single-row", placeholder=fmt.EMPTY)
        st.caption(text.md(brief_text.segment_note(brief)
                           + (" Select a row to open that attribute's segments on Compare." if len(losses) else ""),
                           limit=600))
        picked_rows = chosen.selection.rows if len(losses) and chosen is not None else []
        if picked_rows:  # Compare's segment table of that attribute: the same rows, the same family
            url.remember("compare_segment", str(brief.segment_losses["attribute"].iloc[picked_rows[0]]))
            url.switch_page("views/compare.py")
with right:
    st.subheader("What explains the loss", anchor=False)
    groups = brief_text.failure_rows(brief, per_pair=3)
    if len(groups):
        picked = state.shown_table(groups, hide_index=True, key="brief_failures", on_select="rerun",
                              selection_mode="single-row", placeholder=fmt.EMPTY)
        st.caption(text.md(brief_text.failure_note(brief) + f" Select a row to open those {brief.decision.unit} "
                           "on Failures.", limit=600))
        rows = picked.selection.rows if picked is not None else []
        if rows:
            row = groups.iloc[rows[0]]
            url.remember("failures_model", row["challenger"])
            url.remember("failures_other", decision.baseline)
            url.remember("failures_metric", row["metric"] if "metric" in groups.columns else decision.metrics[0])
            url.remember("failures_group", brief_text.FAILURES_GROUP.get(row["group"], "all"))
            url.switch_page("views/failures.py")
    else:
        st.caption("No challenger scores below the baseline for any user.")

pending = list(brief.verdicts.attrs.get("pending", []))
if pending and not (segments_pending and len(pending) == 1):
    st.caption("Resampled statistics are running on the server; the brief updates itself when they are done.")
background.refresh_when_ready(pending)
links = st.columns(4)
links[0].page_link("views/compare.py", label="Change on Compare", icon=":material/compare_arrows:")
links[1].page_link("views/overview.py", label="All metrics", icon=":material/leaderboard:")
links[2].page_link("views/failures.py", label="Failures", icon=":material/troubleshoot:")
links[3].page_link("views/share.py", label="Share", icon=":material/share:")
