"""The file uploaders, drawn in the sidebar of every page.

An upload belongs to the widget that receives it: a page switch that removes the widget
cancels a file still in transit. Drawn by the app's entry point on every page, the
uploaders stay in place while the user opens other pages, so a large upload carries on
and is taken in wherever the user is when it completes.
"""

from __future__ import annotations

import streamlit as st

from . import sources, text


READ_ONLY_TEXT = ("**Read-only**: this working copy belongs to the browser that created it. You can look at "
                  "every page and change the view; to change its files, make your own copy (same files and "
                  "settings, at a new address that only this browser can change).")


#: each uploader's key name and the start of its label (how a message names it)
UPLOADERS = (("upload_runs", "Ranked results"), ("upload_truth", "Ground truth"),
             ("upload_features", "Item features"), ("upload_attributes", "User attributes"),
             ("upload_logged", "Logged feedback"))


def make_copy_button(key: str) -> None:
    """The read-only view's way out: this browser's own working copy of what it shows."""
    st.button("Make my own copy", key=key, on_click=sources.make_own_copy, icon=":material/content_copy:",
              type="primary")


def render(expanded: bool) -> list[str]:
    """Draw the uploaders (under "Add files" in the sidebar) and take in what they hold;
    returns the names of the models added on this run. Another browser's working copy
    gets no uploaders: a sentence and "Make my own copy" instead."""
    if sources.read_only():
        with st.sidebar.expander("Add files", expanded=True, icon=":material/lock:"):
            st.info(READ_ONLY_TEXT, icon=":material/lock:")
            make_copy_button("make_own_copy")
        return []
    keys = {label: sources.uploader_key(name) for name, label in UPLOADERS}
    with st.sidebar.expander("Add files", expanded=expanded, icon=":material/upload_file:"):
        runs = st.file_uploader(
            "Ranked results: one file per model", accept_multiple_files=True, key=keys["Ranked results"],
            help="The file name is the model name; a file with the same name replaces that model.")
        truth = st.file_uploader(
            "Ground truth: user_id, item_id, relevance", key=keys["Ground truth"],
            help="Optional when the result files carry a relevance or label column.")
        features = st.file_uploader(
            "Item features (optional, for ILS)", key=keys["Item features"],
            help="item_id plus numeric feature columns (cosine) or a tags column (Jaccard).")
        attributes = st.file_uploader(
            "User attributes (optional, for segments)", key=keys["User attributes"],
            help="user_id plus attribute columns (e.g. segment).")
        logged = st.file_uploader(
            "Logged feedback with propensities (optional, counterfactual)", key=keys["Logged feedback"],
            help="One row per item shown: user_id (context), item_id, reward (click), propensity (the logging "
                 "policy's probability of showing it); optional position and slate_id. Opens the Counterfactual "
                 "page: what each model would have earned on these logs.")
        st.caption("Uploads carry on while you open other pages.")
    had_log = sources.sources().logged is not None
    added = sources.ingest_uploads(runs, truth, features, attributes, logged)
    sources.notice_unreceived(keys)
    if not had_log and sources.sources().logged is not None:
        st.rerun()  # the navigation, drawn before the uploaders, offers the Counterfactual page from now on
    if added:
        st.toast(text.md(f"Loaded {', '.join(added)}"))
    return added
