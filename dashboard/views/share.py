"""Share: a saved analysis behind an unguessable link, a self-contained HTML report and
per-user exports.

* **Save** stores the exact bytes of every loaded file (with its name and column mapping)
  and the settings (K, gain, ties) with ``metrics_core.store.AnalysisStore`` (SQLite under
  ``$METRICS_CORE_STORE_DIR`` or the user data directory) and shows the link
  ``<this page>?analysis=<id>``.
* **Opening** that link loads exactly that data and those settings into the session; the
  saved analysis itself can never be changed (saving again creates a new id). A malformed or
  unknown id shows a one-line error.
* **Report**: ``metrics_core.report.build_report`` (plotly.js inlined, every string escaped).
* **Export**: per-user metrics of every model as CSV or Parquet.
"""

from __future__ import annotations

import io

import pandas as pd
import streamlit as st

from dashboard import state, text
from metrics_core.store import AnalysisStore, SavedFile, StoreError

_OPENED = "share_opened_analysis"
_SAVED = "share_saved_analysis"
_REPORT = "share_report_html"
ROLES = ("qrels", "item_features", "user_attributes")
# Widget keys of the shared sidebar controls (dashboard/state.py render_controls).
CONTROL_KEYS = ("k", "gain", "ties")


def _store() -> AnalysisStore:
    return AnalysisStore()


def _snapshot() -> tuple[list[SavedFile], dict]:
    """The current sources as files plus the settings that reproduce the view."""
    src = state.sources()
    files, runs = [], []
    for model, blob in src.runs.items():
        files.append(SavedFile(blob.name, blob.data, "run"))
        runs.append({"model": model, "mapping": dict(blob.mapping)})
    extra = {}
    for role in ROLES:
        blob = getattr(src, role)
        if blob is not None:
            files.append(SavedFile(blob.name, blob.data, role))
            extra[role] = {"mapping": dict(blob.mapping)}
    settings = {**state.controls(), "demo": state.is_demo(), "runs": runs, "files": extra}
    return files, settings


def _restore(saved) -> None:
    """Load a saved analysis into this session: its sources, then its controls."""
    settings = saved.settings
    runs_meta = list(settings.get("runs", []))
    run_files = saved.files_with_role("run")
    runs = {}
    for i, f in enumerate(run_files):
        meta = runs_meta[i] if i < len(runs_meta) else {}
        runs[str(meta.get("model") or state.model_name(f.name))] = state.Blob.of(f.name, f.data, meta.get("mapping"))
    others = {}
    for role in ROLES:
        found = saved.files_with_role(role)
        if found:
            meta = settings.get("files", {}).get(role, {})
            others[role] = state.Blob.of(found[0].name, found[0].data, meta.get("mapping"))
    state.load_sources(state.Sources(runs=runs, **others))
    try:
        k = int(settings.get("k", state.K_DEFAULT))
    except (TypeError, ValueError):
        k = state.K_DEFAULT
    wanted = {
        "k": k if 1 <= k <= state.K_MAX else state.K_DEFAULT,
        "gain": settings.get("gain") if settings.get("gain") in state.GAINS else state.GAINS[0],
        "ties": settings.get("ties") if settings.get("ties") in state.TIES else state.TIES[0],
    }
    # The controls were drawn earlier in this run: drop their widget state, then set it, so the
    # rerun below draws them with the saved values.
    for key in CONTROL_KEYS:
        if key in st.session_state:
            del st.session_state[key]
        st.session_state[key] = wanted[key]


st.title("Share")

analysis_id = st.query_params.get("analysis")
if analysis_id is not None and st.session_state.get(_OPENED) != analysis_id:
    try:
        saved = _store().load(analysis_id)
    except StoreError as exc:
        st.error(text.md(str(exc)))
    else:
        _restore(saved)
        st.session_state[_OPENED] = analysis_id
        st.session_state.pop(_REPORT, None)
        st.rerun()

opened = st.session_state.get(_OPENED)
if opened is not None and opened == analysis_id:
    st.success(f"Showing saved analysis {text.md(opened)} (read-only: it cannot be changed; saving again creates a "
               "new link). Every page now shows this data.", icon=":material/lock:")
    st.page_link("views/overview.py", label="Open the Overview of this analysis", icon=":material/leaderboard:")

models = state.require_models()
c = state.controls()
k = c["k"]
per_user_metrics = [f"{m}@{k}" if m != "r_precision" else m for m in state.PER_USER_METRICS]

# ---------------------------------------------------------------- save
st.subheader("Save this analysis")
st.caption("Stores the files you loaded (exact bytes) and the settings on this server under a random id "
           "(192 bits). Anyone with the link on this deployment can open it; nobody can change it.")
if st.button("Save analysis and create link", key="share_save", icon=":material/save:"):
    with state.guard():
        files, settings = _snapshot()
        st.session_state[_SAVED] = _store().save(files, settings, title=", ".join(models))
saved_id = st.session_state.get(_SAVED)
if saved_id:
    base = (st.context.url or "").rstrip("/")
    link = f"{base}?analysis={saved_id}" if base else f"?analysis={saved_id}"
    st.success("Saved. Share this link:")
    st.code(link, language=None)
    st.markdown(f"[Open the saved analysis]({link})")

# ---------------------------------------------------------------- report
st.subheader("HTML report")
st.caption("One self-contained file (charts included, no internet needed): summary with 95% bootstrap CIs, "
           "paired comparison against the baseline, curves and per-user distributions.")
left, right = st.columns([3, 2])
report_metrics = left.multiselect("Metrics in the report", per_user_metrics + list(state.SCORED_METRICS),
                                  default=[m for m in (f"ndcg@{k}", f"recall@{k}", f"map@{k}", "auc")
                                           if m in per_user_metrics + list(state.SCORED_METRICS)],
                                  key="share_report_metrics")
names = list(models)
report_baseline = right.selectbox("Baseline", names, key="share_report_baseline")
if st.button("Build HTML report", key="share_build_report", icon=":material/description:",
             disabled=not report_metrics):
    from metrics_core.report import build_report

    with state.guard(), st.spinner("Building the report..."):
        evals = state.evaluate_all(report_metrics)
        settings = {"K": k, "gain": c["gain"], "ties": c["ties"], "baseline": report_baseline,
                    "test": "paired t-test", "correction": "Holm-Bonferroni",
                    "data": "demo dataset" if state.is_demo() else ", ".join(b.name for b in state.sources().runs.values())}
        ordered = {report_baseline: evals[report_baseline], **{n: e for n, e in evals.items() if n != report_baseline}}
        st.session_state[_REPORT] = build_report(ordered, title="metrics-core report", settings=settings,
                                                 baseline=report_baseline).encode("utf-8")
if st.session_state.get(_REPORT):
    st.download_button("Download HTML report", st.session_state[_REPORT], file_name="metrics_report.html",
                       mime="text/html", key="share_report_download", on_click="ignore",
                       icon=":material/download:")

# ---------------------------------------------------------------- per-user export
st.subheader("Per-user metrics")
st.caption(f"One row per model and user: {', '.join(per_user_metrics)} at the current K and gain.")
with state.guard():
    evals = state.evaluate_all(per_user_metrics)
frames = []
for name, ev in evals.items():
    pu = ev.per_user.reset_index()
    pu.insert(0, "model", name)
    frames.append(pu)
per_user = pd.concat(frames, ignore_index=True)
per_user["user_id"] = per_user["user_id"].astype(str)
st.dataframe(per_user.head(200), hide_index=True, key="share_per_user_preview")
col_csv, col_parquet = st.columns(2)
col_csv.download_button("Download per-user CSV", text.csv_bytes(per_user, index=False, float_format="%.17g"),
                        file_name=f"per_user_k{k}.csv", mime="text/csv", key="share_per_user_csv",
                        on_click="ignore", icon=":material/download:")
buf = io.BytesIO()
per_user.to_parquet(buf, index=False)
col_parquet.download_button("Download per-user Parquet", buf.getvalue(), file_name=f"per_user_k{k}.parquet",
                            mime="application/vnd.apache.parquet", key="share_per_user_parquet",
                            on_click="ignore", icon=":material/download:")
st.caption(text.SPREADSHEET_NOTE + " The Parquet file keeps every value exact.")
