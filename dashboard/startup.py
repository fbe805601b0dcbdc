"""What the dashboard's server does once, while it waits for its first browser.

:mod:`dashboard.serve` (the ``streamlit run`` entry point) starts :func:`prepare` on a thread
from its startup hook (:func:`start`): the server answers at once, and the first browser loads
the page's code (about a second on two cores) while the thread imports the modules every page
script imports (about 0.7 s of CPU that the first visitor would otherwise wait for inside the
first script run: pandas, numba, the metric table, the analysis store); a script run that needs
one of them before the thread is done waits for its import (Python imports a module once). The
thread also checks whether the kernel cache is complete (:func:`dashboard.kernel_warmup.cache_complete`;
the warm-up process itself is started by the entry script), then loads what the first page (the Overview) reads on
its first run beyond those imports (:data:`FIRST_PAGE`: plotly's figure factory and its
template, the image library of the tab's icon) on a second thread. The imports of later pages
(:mod:`dashboard.preload`: scipy, the report) wait until the first page has been drawn: beside
it they would hold the interpreter lock for half of its run. Nothing here reads data or changes
a result; ``dashboard/app.py`` run directly (as the tests' AppTest does) works the same, only its
first run is slower.
"""

from __future__ import annotations

import importlib
import threading

#: the dashboard's own modules the entry script and every page import
PAGE_MODULES = (
    "dashboard.state", "dashboard.counterfactual", "dashboard.counterfactual_tables", "dashboard.fused", "dashboard.sources", "dashboard.owner", "dashboard.uploads", "dashboard.url",
    "dashboard.url_numbers", "dashboard.tables", "dashboard.text", "dashboard.snapshot_brief",
    "dashboard.brief_text", "dashboard.decision", "dashboard.metric_lists",
    "dashboard.comparisons", "dashboard.verdict", "dashboard.curve_tables",
    "dashboard.explain_tables", "dashboard.failure_tables",
    "dashboard.triage", "dashboard.files", "dashboard.background", "dashboard.cache", "dashboard.upload_replies", "dashboard.sampled_tables",
    "metrics_core.brief.record",
)


def import_pages() -> list[str]:
    """Import :data:`PAGE_MODULES`; returns those that failed (a page that needs one reports the
    failure itself when it runs)."""
    failed = []
    for name in PAGE_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - reported by the page that imports it
            failed.append(name)
    return failed


#: modules the Overview's first run imports beyond :data:`PAGE_MODULES` (its charts, the tab's icon)
FIRST_PAGE = ("plotly.express", "plotly.io", "PIL.ImageDraw")


def load_first_page() -> None:
    """Import :data:`FIRST_PAGE` and load the chart template the figures use (plotly reads and
    validates it on first use, about a quarter of a second). A failure is left to the page."""
    for name in FIRST_PAGE:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - the page that imports it reports the failure itself
            return
    try:
        import plotly.io as pio

        pio.templates["plotly_white"]  # noqa: B018 - loaded once, then shared by every figure
    except Exception:  # noqa: BLE001 - as above
        pass


def skip_repl_check() -> None:
    """Tell Streamlit that this process is its server, not a Python prompt.

    On the first element any script draws, Streamlit checks once whether it runs in a REPL, to
    print a hint on how to start an app: ``inspect.stack()`` in the script's thread, which
    resolves the module of every frame against all loaded modules and reads their sources,
    about 0.1 s of the first visitor's run. Under ``streamlit run`` the answer is known; the
    flag Streamlit keeps for "hint already given" is set here instead (it only silences that
    hint). A Streamlit without the flag fails ``tests/test_startup.py``."""
    from streamlit import delta_generator

    if not hasattr(delta_generator, "_use_warning_has_been_displayed"):
        return
    delta_generator._use_warning_has_been_displayed = True


def start() -> threading.Thread:
    """Run :func:`prepare` on a thread (returned), so that the server answers its first browser while
    it runs: the browser loads the page's code (about a second on two cores) meanwhile."""
    skip_repl_check()
    thread = threading.Thread(target=prepare, name="metrics-core-startup", daemon=True)
    thread.start()
    return thread


def prepare() -> threading.Thread:
    """Import the pages' modules, check whether the kernel cache is complete (numba's import with it:
    the first page reads the demo's results from that cache's folder), then load what the first page
    reads on a thread (returned). The warm-up itself is started by the entry script
    (:mod:`dashboard.kernel_warmup`: after the first page when that page is the shipped demo)."""
    from . import kernel_warmup

    import_pages()
    kernel_warmup.cache_complete()
    thread = threading.Thread(target=load_first_page, name="metrics-core-first-page", daemon=True)
    thread.start()
    return thread
