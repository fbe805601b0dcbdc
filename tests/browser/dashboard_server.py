"""Helpers for end-to-end tests of the dashboard: start and stop a Streamlit
server, find Chromium, wait for a script run to finish, detect exceptions.

Used by ``conftest.py`` (fixtures) and importable by any browser test
(``from dashboard_server import wait_idle``; pytest puts this folder on
``sys.path``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
#: the README's entry point: ``streamlit run dashboard/serve.py`` (its startup hook, then dashboard/app.py)
SERVER_SCRIPT = REPO_ROOT / "dashboard" / "serve.py"


def screenshot_dir() -> Path:
    """Where the browser tests save their screenshots: ``docs/screenshots`` (the README's pictures)
    only when ``METRICS_CORE_SCREENSHOTS=docs`` asks for them, else a folder of the system's
    temporary directory, so a test run never changes the checkout."""
    import tempfile

    if os.environ.get("METRICS_CORE_SCREENSHOTS") == "docs":
        return REPO_ROOT / "docs" / "screenshots"
    return Path(tempfile.gettempdir()) / "metrics-core-screenshots"
if str(REPO_ROOT / "tests") not in sys.path:  # the benchmarks import this module from outside the tests
    sys.path.append(str(REPO_ROOT / "tests"))
import _deadlines as deadlines  # noqa: E402
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-dev-shm-usage"]
SERVER_START_TIMEOUT = deadlines.SERVER_START
#: how often a starting server's health check is asked: a start is timed up to the first "ok" seen
#: (benchmarks/cold_start.py), so a longer pause would be counted into it
HEALTH_POLL_S = 0.05


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.status == 200 and r.read().decode().strip() == "ok"
    except OSError:
        return False


def stop_process(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM, wait ``grace`` seconds, then SIGKILL (a streamlit server can hang on SIGTERM)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=120)  # a killed server ends; giving back gigabytes on a busy machine takes seconds


def start_server(app: Path, cwd: Path = REPO_ROOT, extra_env: dict | None = None,
                 log_path: Path | None = None, drop_env: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """Start ``streamlit run app`` on a free port; returns (process, base URL) once healthy.
    ``drop_env``: variables of this process's environment the server does not get."""
    port = _free_port()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO_ROOT), env.get("PYTHONPATH")) if p)
    env.update(extra_env or {})
    for name in drop_env:
        env.pop(name, None)
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + SERVER_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}; see {log_path}")
        if _healthy(url):
            return proc, url
        time.sleep(HEALTH_POLL_S)
    stop_process(proc)
    raise RuntimeError(f"streamlit did not become healthy within {SERVER_START_TIMEOUT} s")


def local_files_only(page) -> list[str]:
    """Let ``page`` load ``file://`` URLs only; every other request is aborted and its URL kept in
    the list returned (a page opened from disk must draw without the network)."""
    external: list[str] = []

    def route(r):
        if r.request.url.startswith("file://"):
            r.continue_()
        else:
            external.append(r.request.url)
            r.abort()
    page.route("**/*", route)
    return external


def wait_charts_drawn(page, selector: str = ".plotly-graph-div") -> None:
    """Wait until the page has charts (``selector``) and plotly has drawn every one (its SVG)."""
    page.wait_for_function(
        "s => { const d = document.querySelectorAll(s);"
        " return d.length > 0 && Array.from(d).every(x => x.querySelector('.main-svg')); }",
        arg=selector, timeout=deadlines.ACTION_MS)


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(path).exists():
        raise FileNotFoundError("Chromium not found: install Debian's chromium (apt-get install chromium) "
                    "or set CHROMIUM to its path; never `playwright install`")
    return path


def wait_idle(page, settle_ms: int = 300, timeout: int = deadlines.SCRIPT_RUN_MS) -> None:
    """Wait until the script has finished running and stays finished for ``settle_ms``
    (a rerun triggered by the last action may start a moment later)."""
    idle = '[data-testid="stApp"][data-test-script-state="notRunning"]'
    page.wait_for_selector(idle, timeout=timeout)
    for _ in range(2):
        page.wait_for_timeout(settle_ms)
        page.wait_for_selector(idle, timeout=timeout)


def assert_no_exception(page, where: str = "") -> None:
    """No ``st.exception`` box (uncaught error) anywhere on the page."""
    n = page.locator('[data-testid="stException"]').count()
    assert n == 0, f"{where}: the page shows {n} exception(s): " + \
        page.locator('[data-testid="stException"]').first.inner_text()


def goto(page, url: str) -> None:
    """Open ``url`` and wait for its first script run to finish."""
    page.goto(url)
    page.wait_for_selector('[data-testid="stApp"]')
    wait_idle(page)


def wait_rerun(page, timeout: int = deadlines.SCRIPT_RUN_MS) -> None:
    """After an action: wait for the rerun it triggers to start (0.2-0.5 s later,
    or never when the action changed nothing), then for it to finish."""
    running = '[data-testid="stApp"][data-test-script-state="running"]'
    try:
        page.wait_for_selector(running, timeout=deadlines.RERUN_START_MS)
    except Exception:  # noqa: BLE001 - no rerun started: nothing to wait for
        pass
    wait_idle(page, timeout=timeout)


def choose_option(page, box, option: str) -> None:
    """Pick ``option`` in the selectbox ``box`` (a locator); the caller waits for the rerun. The box is
    scrolled into view first (a scroll while its list is open closes the list), the option's name is
    typed (the list opens as one types and shows only the matches, so a long list is never scrolled),
    and a click that opened no list (the box still being drawn, on a loaded machine) is made again, up
    to three times."""
    box.wait_for(timeout=deadlines.SCRIPT_RUN_MS)
    box.scroll_into_view_if_needed()
    wanted = page.get_by_role("option", name=option, exact=True)
    for attempt in range(3):
        box.click()
        page.keyboard.press("Control+a")
        page.keyboard.type(option)
        try:
            wanted.wait_for(timeout=deadlines.ACTION_MS // 3)
            break
        except Exception:  # noqa: BLE001 - the list did not open: close whatever opened, click again
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    wanted.click()


def open_page(page, title: str) -> None:
    """Click ``title`` in the sidebar navigation and wait for that page's script run."""
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    wait_rerun(page)
    page.wait_for_selector(f'h1:has-text("{title}")')


def upload_runs_and_truth(page, url: str, runs: list, truth) -> None:
    """Open the app at ``url``, then on the Data page upload the ranked-results files ``runs`` and the
    ground-truth file ``truth`` (paths), waiting for each upload's script run."""
    page.goto(url)
    wait_idle(page)
    open_page(page, "Data")
    page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first.locator(
        'input[type="file"]').set_input_files([str(p) for p in runs])
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").first.locator(
        'input[type="file"]').set_input_files(str(truth))
    wait_idle(page)


ROW_HEIGHT = 35


def click_table_row(page, key: str, row: int) -> None:
    """Select data row ``row`` (0-based) of the st.dataframe with widget key ``key``
    by clicking its row marker (the grid is a canvas)."""
    grid = page.locator(f'.st-key-{key} [data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 10, box["y"] + ROW_HEIGHT * (row + 1) + ROW_HEIGHT // 2)
    wait_rerun(page)
