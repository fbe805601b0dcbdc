"""Data: upload result files (one model per file), ground truth, item
features and user attributes; map unrecognised columns; read metrics_core's
diagnostics; remove models or return to the demo data."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import state, text
from metrics_core.io import ROLES, SUPPORTED_FORMATS

st.title("Data")
gen = state.upload_generation()

st.markdown(f"Supported formats: {SUPPORTED_FORMATS}. Ids are kept as exact strings.")
up_runs = st.file_uploader(
    "Ranked results: one file per model (the file name is the model name; uploading a file "
    "with the same name replaces that model)",
    accept_multiple_files=True, key=f"upload_runs_{gen}")
up_truth = st.file_uploader(
    "Ground truth: user_id, item_id, relevance (optional when the result files carry a "
    "relevance or label column)", key=f"upload_truth_{gen}")
with st.expander("Optional tables: item features (for ILS) and user attributes (for segments)"):
    up_feats = st.file_uploader("Item features: item_id plus numeric feature columns (cosine) "
                                "or a tags column (Jaccard)", key=f"upload_features_{gen}")
    up_attrs = st.file_uploader("User attributes: user_id plus attribute columns (e.g. segment)",
                                key=f"upload_attributes_{gen}")
added = state.ingest_uploads(up_runs, up_truth, up_feats, up_attrs)
if added:
    st.toast(text.md(f"Loaded {', '.join(added)}"))

src = state.sources()
if state.is_demo():
    st.info("The dashboard shows the **demo data**. Upload ranked results above to analyse your own models.")
else:
    st.button("Return to the demo data", on_click=state.reset_to_demo, icon=":material/restart_alt:",
              key="data_demo")

# --- problems first, each with a way to fix it --------------------------------
for model, msg in state.load_problems():
    st.error(text.md(msg, limit=600))
    blob = src.qrels if model is None else src.runs.get(model)
    if blob is None:
        continue
    try:
        names = state.file_columns(blob)
    except Exception:  # the file itself is unreadable: the error above says why
        names = []
    if names:
        label = "the ground truth" if model is None else f"model {model}"
        with st.form(f"mapping_{model}"):
            st.write(f"Map the columns of **{text.md(blob.name)}** ({text.md(label)}):")
            cols = st.columns(len(ROLES))
            current = dict(blob.mapping)
            choice = {}
            for col, role in zip(cols, ROLES):
                options = ["(none)"] + names
                default = options.index(current[role]) if current.get(role) in options else 0
                choice[role] = col.selectbox(role, options, index=default, key=f"map_{model}_{role}")
            if st.form_submit_button("Apply mapping"):
                state.set_mapping(model, {r: c for r, c in choice.items() if c != "(none)"})
                st.rerun()
    if model is not None:
        st.button(f"Remove {text.md(model)}", key=f"remove_bad_{model}", on_click=state.remove_run, args=(model,))
for msg in state.side_errors():
    st.error(text.md(msg, limit=600))

# --- what is loaded -------------------------------------------------------------
models = state.get_models()
st.subheader("Models")
if not models:
    st.info("No model is loaded yet.")
    st.stop()

rows = []
for name, ranked in models.items():
    blob = src.runs.get(name)
    mapping = state.read_mapping(name) if blob is not None else None
    rows.append({"model": name, "file": blob.name if blob else "demo",
                 "rows": ranked.n_rows, "users in run": int(ranked.in_run.sum()),
                 "columns used": mapping.describe().split(": ", 1)[-1] if mapping else "user_id, item_id, score",
                 "scores in [0, 1]": state.scores_are_probabilities(ranked)})
st.dataframe(pd.DataFrame(rows).set_index("model"), key="data_models")
if not state.is_demo():
    cols = st.columns(min(len(models), 6) or 1)
    for i, name in enumerate(models):
        cols[i % len(cols)].button(f"Remove {text.md(name)}", key=f"remove_{name}", on_click=state.remove_run,
                                   args=(name,), icon=":material/delete:")

truth_mapping = state.read_mapping(None)
if src.qrels is not None:
    st.write(f"Ground truth: **{text.md(src.qrels.name)}**" +
             (f" ({text.md(truth_mapping.describe().split(': ', 1)[-1])})" if truth_mapping else ""))
    st.button("Remove the ground truth", key="remove_truth", on_click=state.set_blob, args=("qrels", None))
elif not state.is_demo():
    st.write("Ground truth: taken from the relevance column of each result file.")
feats = state.item_features()
attrs = state.user_attributes()
st.write(f"Item features: {'%d items, %d columns' % (len(feats), feats.shape[1] - 1) if feats is not None else 'none'}"
         f" · User attributes: {text.md(', '.join(c for c in attrs.columns if c != 'user_id')) if attrs is not None else 'none'}")

# --- diagnostics ----------------------------------------------------------------
st.subheader("Diagnostics")
c = state.controls()
with state.guard():
    evals = state.evaluate_all([f"ndcg@{c['k']}"])
any_warning = False
for name, ev in evals.items():
    for w in ev.diagnostics.warnings():
        st.warning(f"**{text.md(name)}**: {text.md(w, limit=600)}")
        any_warning = True
if not any_warning:
    st.success(f"No warnings at K = {c['k']}.")
diag = pd.DataFrame({name: ev.diagnostics.to_dict() for name, ev in evals.items()})
with st.expander("All diagnostics", expanded=False):
    st.dataframe(diag.astype(str), key="data_diagnostics")
