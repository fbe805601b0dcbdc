"""What the dashboard's server does once, before it accepts its first browser.

:mod:`dashboard.serve` (the ``streamlit run`` entry point) calls :func:`prepare` from its
startup hook. It imports the modules every page script imports (about 0.7 s of CPU that the
first visitor would otherwise wait for inside the first script run: pandas, numba, the metric
table, the analysis store), and starts the two background helpers the first page would
otherwise start itself: the kernel warm-up process (:mod:`dashboard.kernel_warmup`, which
returns at once when the kernel cache is complete) and the imports of later pages
(:mod:`dashboard.preload`). Nothing here reads data or changes a result; ``dashboard/app.py``
run directly (as the tests' AppTest does) works the same, only its first run is slower.
"""

from __future__ import annotations

import importlib
import threading

#: the dashboard's own modules the entry script and every page import
PAGE_MODULES = (
    "dashboard.state", "dashboard.sources", "dashboard.owner", "dashboard.uploads", "dashboard.url",
    "dashboard.url_numbers", "dashboard.tables", "dashboard.text", "dashboard.snapshot_brief",
    "dashboard.brief_text", "dashboard.decision", "dashboard.metric_lists", "dashboard.charts",
    "dashboard.compare_charts", "dashboard.comparisons", "dashboard.verdict", "dashboard.curve_tables",
    "dashboard.distribution_tables", "dashboard.explain_tables", "dashboard.failure_tables",
    "dashboard.triage", "dashboard.files", "dashboard.background", "dashboard.cache", "metrics_core.brief_record",
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


def prepare() -> None:
    """Import the pages' modules, then start the kernel warm-up and the later pages' imports."""
    from . import kernel_warmup, preload

    import_pages()
    kernel_warmup.start_once()
    threading.Thread(target=preload.import_all, name="metrics-core-preload", daemon=True).start()
