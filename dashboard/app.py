"""Entry point: ``streamlit run dashboard/app.py`` from the repository root.

Draws the shared sidebar controls (K, gain, tie rule; bound to the URL) and
the page navigation: Brief (the default: the decision on one screen), Overview, Data,
Curves, Distributions, Failures, then Compare, Explain and Share when those page files exist.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import streamlit as st  # noqa: E402

from dashboard import (background, kernel_warmup, preload, snapshot_brief, sources, state,  # noqa: E402
                       tables, text, upload_replies, uploads, url, url_numbers)

from streamlit.runtime.scriptrunner import get_script_run_ctx  # noqa: E402

upload_replies.keep_file_url_replies()  # once per process (also set by serve.py, before any session)

PAGES_DIR = Path(__file__).resolve().parent / "views"
PAGES = [
    ("brief.py", "Brief", ":material/gavel:"),
    ("overview.py", "Overview", ":material/leaderboard:"),
    ("data.py", "Data", ":material/upload_file:"),
    ("curves.py", "Curves", ":material/show_chart:"),
    ("distributions.py", "Distributions", ":material/bar_chart:"),
    ("failures.py", "Failures", ":material/troubleshoot:"),
    ("counterfactual.py", "Counterfactual", ":material/science:"),
    ("compare.py", "Compare", ":material/compare_arrows:"),
    ("explain.py", "Explain", ":material/help:"),
    ("share.py", "Share", ":material/share:"),
]

def page_requested() -> str:
    """The page path the browser's address names on this run (``brief`` for ``/brief``), or ``""``
    (the root, or a rerun of a page already shown, which Streamlit names by its hash)."""
    pages = getattr(get_script_run_ctx(), "pages_manager", None)
    return str(getattr(pages, "intended_page_name", None) or "")


background.page_started()  # the server thread's queued jobs wait until this page is drawn (the finally below)
# A drawn icon, not ":material/...:" (the browser would fetch that favicon from Google's servers).
st.set_page_config(page_title="metrics_core workbench", page_icon=state.app_icon(), layout="wide")

# The URL names the data (?analysis=<id>): load it before the pages and the controls are made,
# so that a snapshot opens on its brief and a shared view's saved K, gain and ties seed the controls.
opening_error = None
try:
    view = sources.open_requested()
except sources.StoreError as exc:
    opening_error, view = exc, None
opened = sources.current()
if not state.is_demo():
    # this page computes (an opened analysis, uploaded files): the warm-up compiles the kernels it and
    # later pages need beside it; the shipped demo's first page compiles nothing (the finally below)
    kernel_warmup.start_once()
# The first page: the Brief for a snapshot or once a comparison was chosen (its choices are in
# the URL or the view being opened), else the Overview.
first = ("brief.py" if (opened is not None and opened.kind == sources.SNAPSHOT)
         or url.has_choices("compare_", view) else "overview.py")
# Streamlit serves the default page at the root only: an address naming it (/brief of an analysis
# that opens on the Brief, copied into a fresh browser) would say "Page not found". Then the other
# candidate is the default, and the page the address names keeps its path.
if page_requested() == Path(first).stem:
    first = "overview.py" if first == "brief.py" else "brief.py"
pages = [
    st.Page(PAGES_DIR / fname, title=title, icon=icon, default=(fname == first))
    for fname, title, icon in PAGES
    if (PAGES_DIR / fname).exists() and (fname != "counterfactual.py" or sources.sources().logged is not None)
]
nav = st.navigation(pages)
# a number in the address that metrics_core refuses (?k=inf) is dropped before any control reads it
url_problems = url_numbers.check_url_numbers()
conflict_slot = st.empty()  # a change another tab made first: said above every page


def show_conflict() -> None:
    conflict = sources.save_conflict()
    if conflict:
        conflict_slot.error(text.md(conflict, limit=600), icon=":material/sync_problem:")


if opening_error is not None:
    st.error(text.md(str(opening_error)))
uploads.render(expanded=nav.title == "Data")  # in the sidebar of every page: uploads survive navigation
for refusal in sources.refused_uploads():  # more than the analysis store can hold
    st.error(text.md(refusal, limit=600), icon=":material/block:")
# filled when the run ends (the save of an upload runs beside the page): this tab's working copy had
# expired, and the upload was saved in a new one
replaced_slot = st.empty()
if view:
    url.adopt(view)  # the saved page choices (Compare's decision) of the analysis being opened
url.sync()  # navigation drops unbound parameters: put the analysis id (and user) back
if view:
    state.apply_view(view)
state.render_controls()
url_numbers.show(url_problems)
if state.is_demo() and nav.title != "Data":
    st.info("**Demo data**: three synthetic models (popularity baseline, matrix factorization, "
            "two-tower) on 2,400 users with graded relevance. Upload your own results with "
            "**Add files** in the sidebar.", icon=":material/science:")
# (not on a snapshot's Brief before its files are prepared: the kept brief shows without them)
if nav.title != "Data" and not snapshot_brief.opening_without_data(nav.title):
    lengths = np.concatenate([ranked.list_lengths for ranked in state.get_models().values()] or [[]])
    notice = tables.k_exceeds_lists(lengths, state.controls()["k"])
    if notice:
        st.warning(notice, icon=":material/straighten:")
show_conflict()
try:
    nav.run()
finally:
    background.page_finished()
    # the kernels later pages need, compiled in another process (at once when the cache is complete)
    kernel_warmup.start_once()
    # heavy imports of later pages, in the background once this page is drawn: a thread started
    # before would hold the interpreter lock for about half of the first page's run
    preload.start()
    sources.finish_saving()  # the URL names what was saved before the run ends
    show_conflict()
    replaced = sources.replaced_working_copy()
    if replaced:
        replaced_slot.warning(text.md(replaced, limit=600), icon=":material/history:")
