"""Share: a read-only snapshot of this analysis behind an unguessable link, a
self-contained HTML report and per-user exports.

* The data the pages show is already kept on the server as a working copy named in the
  URL (``?analysis=<id>``, see ``dashboard/sources.py``): copying the address bar shares
  the current view, read-only for every other browser (they can make their own copy).
* **Share** saves a read-only *snapshot* of the files, with a title, notes and the view
  settings (K, gain, ties and the pages' choices in the URL); its link opens on the
  Brief. Changing the data afterwards saves a new working copy, never the snapshot.
* **Report**: ``metrics_core.outputs.report.build_report`` (plotly.js inlined, every string escaped).
* **Export**: per-user metrics of every model as CSV (spreadsheet-safe) or Parquet (exact).
"""

from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from dashboard import format as fmt, metric_lists, snapshot_brief, sources, state, text, url
from dashboard.decision import current as current_decision

_SHARED = "share_snapshot_link"
_DELETE = "share_delete_link"
_REPORT = "share_report_html"


def _base_url() -> str:
    """The app's root URL as the browser sees it (``st.context.url`` of this page)."""
    page_url = (st.context.url or "").split("?", 1)[0].rstrip("/")
    return page_url[: -len("/share")] if page_url.endswith("/share") else page_url


st.title("Share")
models = state.require_models()
c = state.controls()
k = c["k"]
per_user_metrics = metric_lists.labels(metric_lists.PER_USER, k)

opened = sources.current()
if opened is not None and opened.kind == sources.SNAPSHOT:
    st.info(text.md(f"This is the shared snapshot \"{opened.title or 'untitled'}\" (read-only). "
                    "Changing its data on the Data page starts a new working copy; the snapshot "
                    "stays as it is."), icon=":material/lock:")

# ---------------------------------------------------------------- share
st.subheader("Share a snapshot")
st.caption("Saves the files you loaded (exact bytes) and the current settings on this server under a "
           "random id (192 bits). Anyone with the link on this deployment can open it; nobody can change "
           "it. The link opens on the Brief.")
with st.form("share_form"):
    title = st.text_input("Title", max_chars=200, key="share_title",
                          placeholder="e.g. Two-tower v3 against the popularity baseline")
    notes = st.text_area("Notes", max_chars=5000, key="share_notes",
                         placeholder="What was compared and what to look at")
    submitted = st.form_submit_button("Share: create a read-only link", icon=":material/share:")
if submitted:
    view = {key: st.query_params.get_all(key) if len(st.query_params.get_all(key)) > 1
            else st.query_params.get(key) for key in st.query_params
            if key not in (url.ANALYSIS, "delete")}
    with state.guard():
        receipt = sources.share(title.strip(), notes.strip(), view)
    if len(state.get_models()) >= 2:  # the brief the link opens on, kept with the snapshot once complete
        snapshot_brief.keep_when_shared(receipt.id, current_decision(list(state.get_models())),
                                        title.strip(), notes.strip())
    base = _base_url()
    st.session_state[_SHARED] = f"{base}/?{urlencode({url.ANALYSIS: receipt.id, **view}, doseq=True)}"
    st.session_state[_DELETE] = f"{base}/share?{urlencode({url.ANALYSIS: receipt.id, 'delete': receipt.delete_token})}"
link = st.session_state.get(_SHARED)
if link:
    st.success("Shared. Anyone with this link sees this snapshot; the link opens on the Brief:")
    st.code(link, language=None)
# The delete link lives in this session only (never in the URL; the store keeps only its hash) and
# stays on the page until the user says it is saved.
delete_link = st.session_state.get(_DELETE)
if delete_link:
    st.warning("Keep this second link to yourself: it deletes the snapshot for everyone. The server keeps "
               "no copy of it: once you dismiss it, it cannot be shown again.", icon=":material/key:")
    st.code(delete_link, language=None)
    st.button("I saved the delete link: hide it", key="share_delete_saved", icon=":material/check:",
              on_click=st.session_state.pop, args=(_DELETE, None))

token = st.query_params.get("delete")
if token is not None and opened is not None and opened.kind == sources.SNAPSHOT:
    st.subheader("Delete this snapshot")
    st.write("This link deletes the shared snapshot for everyone who has its link.")
    if st.button("Delete the snapshot", key="share_delete", icon=":material/delete:", type="primary"):
        try:
            sources.delete_snapshot(opened.id, token)
        except sources.StoreError as exc:
            st.error(text.md(str(exc)))
        else:
            del st.query_params["delete"]
            st.success("The snapshot is deleted. Its link no longer opens anything.")

# ---------------------------------------------------------------- report
st.subheader("HTML report")
st.caption("One self-contained file (charts included, no internet needed): the users counted and each model's "
           "coverage, summary with 95% bootstrap CIs, paired comparison against the baseline, curves and "
           "per-user distributions, over the same users as the other pages (the sidebar's \"Users counted\").")
left, right = st.columns([3, 2])
report_metrics = left.multiselect("Metrics in the report", per_user_metrics + metric_lists.scored_labels(),
                                  default=[m for m in metric_lists.labels(metric_lists.SHARE_DEFAULT, k)
                                           if m in per_user_metrics + metric_lists.scored_labels()],
                                  key="share_report_metrics",
                                  help="Every metric's definition is on the Overview (hover its column); "
                                       "per-user metrics get intervals and paired tests in the report.")
names = list(models)
decision = current_decision(names) if len(names) >= 2 else None
if decision is not None:
    right.caption(text.md(f"Opens on the brief: {decision.baseline} against {', '.join(decision.challengers)} on "
                          f"{', '.join(decision.metrics)} (chosen on Compare).", limit=400))
if st.button("Build HTML report", key="share_build_report", icon=":material/description:",
             disabled=not report_metrics):
    with state.guard(), state.page_progress("Building the report", 3) as bar:
        wanted = list(dict.fromkeys([*(decision.metrics if decision else ()), *report_metrics]))
        with bar.step("evaluating every model"):
            evals = state.evaluate_all(wanted, counted=False)  # the report counts the users itself
        opened = sources.current()
        snapshot = opened is not None and opened.kind == sources.SNAPSHOT
        with bar.step("the brief"):
            brief = (state.decision_brief(decision, opened.title if snapshot else "",
                                          opened.notes if snapshot else "") if decision is not None else None)
        baseline = decision.baseline if decision is not None else names[0]
        settings = {"K": k, "gain": c["gain"], "ties": c["ties"], "users": state.users(), "baseline": baseline,
                    "test": decision.test if decision else "t", "correction": decision.correction if decision else "holm",
                    **({"family": decision.family} if decision else {}), "unit": state.unit(),
                    "data": "demo dataset" if state.is_demo() else ", ".join(b.name for b in state.sources().runs.values())}
        with bar.step("figures and tables"):
            st.session_state[_REPORT] = state.report_html(evals, baseline, settings, brief)
if st.session_state.get(_REPORT):
    st.download_button("Download HTML report", st.session_state[_REPORT], file_name="metrics_report.html",
                       mime="text/html", key="share_report_download", on_click="ignore",
                       icon=":material/download:")

# ---------------------------------------------------------------- per-user export
st.subheader("Per-user metrics")
st.caption(f"One row per model and user counted: {', '.join(per_user_metrics)} at the current K and gain.")
with state.guard():
    evals = state.evaluate_all(per_user_metrics)
frames = []
for name, ev in evals.items():
    pu = ev.per_user.reset_index()
    pu.insert(0, "model", name)
    frames.append(pu)
per_user = pd.concat(frames, ignore_index=True)
per_user["user_id"] = per_user["user_id"].astype(str)
st.dataframe(per_user.head(200), hide_index=True, key="share_per_user_preview", placeholder=fmt.EMPTY)
col_csv, col_parquet = st.columns(2)
# the files are written only when a button is clicked (on another thread), not on every rerun
col_csv.download_button("Download per-user CSV", lambda: text.csv_bytes(per_user, index=False, float_format="%.17g"),
                        file_name=f"per_user_k{k}.csv", mime="text/csv", key="share_per_user_csv",
                        on_click="ignore", icon=":material/download:")
col_parquet.download_button("Download per-user Parquet", lambda: text.parquet_bytes(per_user),
                            file_name=f"per_user_k{k}.parquet",
                            mime="application/vnd.apache.parquet", key="share_per_user_parquet",
                            on_click="ignore", icon=":material/download:")
st.caption(text.SPREADSHEET_NOTE + " The Parquet file keeps every value exact.")
