"""Fixtures for end-to-end tests in headless Chromium.

``streamlit_server``: a ``streamlit run dashboard/serve.py`` process on a free
port (session scope), started from the repository root so that
``.streamlit/config.toml`` applies; ready when ``/_stcore/health`` answers
"ok", with its analysis store in a temporary directory (``streamlit_store_dir``). Stopped with SIGTERM, then SIGKILL if it has not exited in 5 s.

``browser``: Debian's Chromium (``/usr/bin/chromium``, or ``$CHROMIUM``)
driven by Playwright's Python package. Browsers are never downloaded
(no ``playwright install``): a missing Chromium is a test failure.

``app_page``: a fresh page (1400 x 1000, downloads accepted) per test.

Helpers live in ``dashboard_server.py``.
"""

from __future__ import annotations

import _deadlines as deadlines
import pytest

from dashboard_server import SERVER_SCRIPT, CHROMIUM_ARGS, REPO_ROOT, chromium_path, start_server, stop_process


@pytest.fixture(scope="session")
def streamlit_store_dir(tmp_path_factory):
    """The directory of the shared server's analysis store (a test may open it with ``AnalysisStore``)."""
    return tmp_path_factory.mktemp("streamlit") / "store"


@pytest.fixture(scope="session")
def streamlit_server(streamlit_store_dir):
    proc, url = start_server(SERVER_SCRIPT, log_path=streamlit_store_dir.parent / "server.log",
                             extra_env={"METRICS_CORE_STORE_DIR": str(streamlit_store_dir)})
    try:
        yield url
    finally:
        stop_process(proc)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright  # a dev dependency: missing is a failure

    try:
        path = chromium_path()
    except FileNotFoundError as exc:
        pytest.fail(str(exc))
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=path, args=CHROMIUM_ARGS, headless=True)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def app_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    try:
        yield page
    finally:
        context.close()
