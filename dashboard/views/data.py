"""Data: upload result files (one model per file), ground truth, item
features and user attributes in any order; see what is loaded and what each
file still needs; map columns where a mapping can help; remove any file on its
own; read metrics_core's diagnostics as one table."""

from __future__ import annotations

import pandas as pd
import streamlit as st


from dashboard import (background, cache, files, format as fmt, fused, metric_lists, sources, state, tables, text,
                       uploads)

st.title("Data")
st.caption(f"Supported formats: {files.SUPPORTED_FORMATS}. "
           + ("Ids writing a whole number are read as that number (12.0 is 12), as the sidebar's "
              f"\"{state.WHOLE_IDS_LABEL}\" asks; other ids are kept exactly as written. " if state.whole_number_ids()
              else "Ids are kept exactly as written: 12.0 and 12 are two ids, as in trec_eval (the sidebar's "
                   f"\"{state.WHOLE_IDS_LABEL}\" reads them as one). ")
           + "Files may be "
           f"uploaded in any order. {sources.upload_limits_text()} {cache.limits_text()} "
           f"{background.limits_text()}")


src = state.sources()
report = state.load_report()
problem = sources.store_problem()
if problem:
    st.warning(text.md(f"Your files are kept in this browser tab only: they could not be saved as a working "
                       f"copy ({problem}).", limit=600))
locked = sources.read_only()  # another browser's working copy: nothing here changes it
if locked:
    st.info(uploads.READ_ONLY_TEXT, icon=":material/lock:")
    uploads.make_copy_button("data_make_own_copy")

# --- what is loaded -------------------------------------------------------------
st.subheader("Your files")
if src.empty:
    st.info("The dashboard shows the **demo data**. Upload ranked results with **Add files** in the sidebar "
            "to analyse your own models, in any order. The panel stays on every page: an upload in "
            "progress carries on while you look at other pages.", icon=":material/science:")
else:
    st.caption("Add or replace files with **Add files** in the sidebar; an upload in progress carries on "
               "while you look at other pages.")
    listing = tables.loaded_files(src, report)
    state.shown_table(listing, hide_index=True, key="data_files", placeholder=fmt.EMPTY, column_config={
        "file": st.column_config.TextColumn(width="medium"), "model": st.column_config.TextColumn(width="medium")})
    removers = [(row.role, row.model, row.file) for row in listing.itertuples()]
    cols = st.columns(min(len(removers), 4))
    for i, (role, model, fname) in enumerate(removers):
        full = f"Remove {text.md(fname, tables.MAX_NAME_SHOWN)}"  # a long name: cut on the button, whole here
        if role == "model":
            cols[i % len(cols)].button(f"Remove {text.md(fname, 60)}", key=f"remove_{model}", disabled=locked,
                                       on_click=state.remove_run, args=(model,), icon=":material/delete:",
                                       help=full)
        else:
            kind = tables.ROLE_KINDS[role]
            cols[i % len(cols)].button(f"Remove {text.md(fname, 60)}", key=f"remove_{kind}", disabled=locked,
                                       on_click=state.set_blob, args=(kind, None), icon=":material/delete:",
                                       help=full)
    st.button("Return to the demo data", on_click=state.reset_to_demo, icon=":material/restart_alt:",
              key="data_demo")
    if not src.runs:
        st.info(text.md(tables.loaded_without_models(src), limit=600))
    if report.waiting:
        st.info(text.md(f"Waiting for a ground truth: {', '.join(report.waiting)} "
                        f"{'has' if len(report.waiting) == 1 else 'have'} no relevance column. "
                        "Upload the ground truth with Add files in the sidebar to evaluate "
                        f"{'it' if len(report.waiting) == 1 else 'them'}."))

# --- problems, each with a way to fix it -------------------------------------------
for p in report.problems:
    st.error(text.md(p.message, limit=600))
    if p.role not in ("run", "qrels"):
        continue
    blob = src.qrels if p.role == "qrels" else src.runs.get(p.model)
    if blob is None:
        continue
    kind = "qrels" if p.role == "qrels" else ("run" if src.qrels is not None else "auto")
    proposal = files.mapping_proposal(blob.data, blob.name, kind, dict(blob.mapping))
    if proposal is None:
        continue
    names = files.columns_of(blob.data, blob.name)
    what = "the ground truth" if p.model is None else f"model {p.model}"
    roles = files.roles_for(kind)
    with st.form(f"mapping_{p.model}"):
        st.write(f"Which column of **{text.md(blob.name)}** ({text.md(what)}) holds each role?")
        st.caption(files.ROLE_HINTS[kind] + " The choices are guessed from the column names: check them "
                   "before applying.")
        cols = st.columns(len(roles))
        choice = {}
        options = ["(none)"] + names
        for col, role in zip(cols, roles):
            default = options.index(proposal[role]) if proposal.get(role) in options else 0
            choice[role] = col.selectbox(role, options, index=default, key=f"map_{p.model}_{role}")
        if st.form_submit_button("Apply mapping", disabled=locked):
            # roles this form does not offer keep what was mapped before
            kept = {r: c for r, c in dict(blob.mapping).items() if r not in roles}
            state.set_mapping(p.model, {**kept, **{r: c for r, c in choice.items() if c != "(none)"}})
            st.rerun()

# --- models and diagnostics -------------------------------------------------------
models = {e.name: e.ranked for e in report.entries}
if not models:
    st.stop()
st.subheader("Models" if src.runs else "Models (demo data)")
rows = []
for name, ranked in models.items():
    blob = src.runs.get(name)
    mapping = state.read_mapping(name) if blob is not None else None
    rows.append({"model": name, "file": blob.name if blob else "demo",
                 "rows": ranked.n_rows, "users in run": int(ranked.in_run.sum()),
                 "columns used": mapping.describe().split(": ", 1)[-1] if mapping else "user_id, item_id, score",
                 "scores in [0, 1]": state.scores_are_probabilities(ranked)})
state.shown_table(pd.DataFrame(rows).set_index("model"), key="data_models", placeholder=fmt.EMPTY)
if src.qrels is not None:  # ids that miss the ground truth only by how a whole number is written
    for name, ranked in models.items():
        for sentence in state.id_writing_notes(ranked, src.runs[name].name if name in src.runs else name,
                                               src.qrels.name, f"the sidebar's \"{state.WHOLE_IDS_LABEL}\""):
            st.warning(text.md(sentence, limit=600))

with st.expander("Fuse models into a new one", expanded=False, icon=":material/merge:"):
    fusable = fused.fusable(models, src)
    if len(fusable) < 2:
        st.caption("Fusion combines two or more models: upload them with Add files in the sidebar.")
    else:
        st.caption("The fused run is added as a model, as if you had uploaded it: every page shows it, the working "
                   "copy keeps it, and a snapshot's link opens it. Scores are normalised per user in each run, "
                   "then combined per item (ranx's methods); RRF, ISR and Borda read only each list's order."
                   + (" On the demo data, the demo's models, ground truth, item features and user attributes "
                      "become files of a working copy of your own, beside the fused model." if src.empty else ""))
        # a choice made among other models (the demo's, or files since removed) starts again from the first two
        if not set(st.session_state.get("fuse_models", [None])) <= set(fusable):
            st.session_state["fuse_models"] = fusable[:2]
        with st.form("fuse_form"):
            chosen = st.multiselect("Models to fuse", fusable, key="fuse_models")
            left, mid, right = st.columns(3)
            method = left.selectbox("Method", list(fused.METHOD_LABELS), format_func=fused.METHOD_LABELS.get,
                                    key="fuse_method")
            norm = mid.selectbox("Score normalisation", list(fused.NORM_LABELS), format_func=fused.NORM_LABELS.get,
                                 key="fuse_norm", help="Per user and run, before combining (not read by RRF, ISR "
                                                       "and Borda).")
            rrf_k = right.number_input("RRF's k", min_value=0.0, value=60.0, step=10.0, key="fuse_rrf_k",
                                       help="score = sum over runs of 1 / (k + rank); read by RRF only")
            wleft, wright = st.columns(2)
            weights_text = wleft.text_input("Weights of the weighted sum (one per model, in the order chosen)",
                                            key="fuse_weights", placeholder="e.g. 0.7, 0.3 (default: equal weights)")
            typed = "(the weights typed)"
            optimize = wright.selectbox(
                "Or choose them on a metric", [typed] + metric_lists.labels(metric_lists.PER_USER, state.controls()["k"]),
                key="fuse_optimize", help=f"Weighted sum only: every weight combination on a grid of step "
                f"{fused.OPTIMIZE_STEP:g} is tried on half of the ground truth's users (seed {fused.OPTIMIZE_SEED}); "
                "the best is kept and its value on the other half is reported.")
            name = st.text_input("Name of the fused model", key="fuse_name", max_chars=fused.MAX_NAME,
                                 placeholder=fused.default_name(chosen, method))
            if st.form_submit_button("Add the fused model", disabled=locked, icon=":material/merge:",
                                     key="fuse_submit"):
                try:
                    weights = fused.read_weights(weights_text, len(chosen)) if method == "wsum" and optimize == typed \
                        else None
                    added, chosen_on = fused.add_fused(chosen, method, norm, name or fused.default_name(chosen, method),
                                                       weights=weights, k=rrf_k,
                                                       optimize=None if optimize == typed else optimize)
                    st.session_state["fuse_added"] = added
                    st.session_state["fuse_optimized"] = chosen_on
                    st.rerun()
                except fused.MetricsError as exc:
                    st.error(text.md(str(exc), limit=600))
        if st.session_state.get("fuse_added") in models:
            st.success(text.md(f"Added the fused model {st.session_state['fuse_added']}.", limit=300))
            if st.session_state.get("fuse_optimized"):
                st.caption(text.md(st.session_state["fuse_optimized"], limit=600))

truth_mapping = state.read_mapping(None)
if src.qrels is not None:
    st.write(f"Ground truth: **{text.md(src.qrels.name)}**" +
             (f" ({text.md(truth_mapping.describe().split(': ', 1)[-1])})" if truth_mapping else ""))
elif src.runs:
    st.write("Ground truth: taken from the relevance column of each result file.")
feats = state.item_features()
attrs = state.user_attributes()
features_said = (f"{fmt.plural(len(feats), 'item')}, {fmt.plural(feats.shape[1] - 1, 'column')}"
                 if feats is not None else "none")
st.write(f"Item features: {features_said}"
         f" · User attributes: {text.md(', '.join(c for c in attrs.columns if c != 'user_id')) if attrs is not None else 'none'}")

st.subheader("Diagnostics")
c = state.controls()
# the Overview's tables, computed on the server thread once this page is drawn (a new upload is
# usually followed by the Overview)
state.prefetch_evaluations()
with state.guard():
    # the diagnostics of an evaluation at the current K (the first per-user metric offered)
    evals = state.evaluate_all(metric_lists.labels(metric_lists.PER_USER[:1], c["k"]))
diags = {name: ev.diagnostics for name, ev in evals.items()}
state.shown_table(tables.diagnostics_table(diags), key="data_diagnostics", placeholder=fmt.EMPTY)
for sentence in tables.diagnostics_facts(diags):
    st.caption(text.md(sentence, limit=600))
serious = tables.diagnostics_problems(diags, state.users())
for sentence in serious:
    st.warning(text.md(sentence, limit=600))
if not serious:
    st.success(f"No problem found at K = {c['k']}: every model served every user of the ground truth.")
with state.guard():
    state.show_population(warn=False)
