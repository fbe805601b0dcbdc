"""A real server gives back what closed sessions held: uploaded files, session state and
computed results are released once the sessions have ended, and the resident memory
returns near its level before those sessions instead of growing with every upload.

The server runs with short lifetimes (cache entries 8 s after last use, disconnected
sessions 4 s) so that the test sees a whole cycle in about two minutes. Uploaded
files are watched through Streamlit's own ``/_stcore/metrics`` endpoint; memory is
read from ``/proc/<pid>/status``.
"""

from __future__ import annotations

import _deadlines as deadlines
import re
import time
import urllib.request

import numpy as np
import pandas as pd
import pytest

from dashboard_server import SERVER_SCRIPT, REPO_ROOT, open_page, start_server, stop_process, wait_idle, wait_rerun

pytestmark = pytest.mark.browser

USERS, ITEMS = 5_000, 40  # 200,000 rows per model file (about 7 MB of CSV)
SESSIONS = 3


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS line")


def uploaded_bytes(url: str) -> int:
    """Bytes Streamlit's upload manager holds for all sessions (0 when it holds none)."""
    text = urllib.request.urlopen(url + "/_stcore/metrics", timeout=deadlines.SUBPROCESS).read().decode()
    total = 0
    for line in text.splitlines():
        if "UploadedFileManager" in line and not line.startswith("#"):
            total += int(float(line.rsplit(" ", 1)[-1]))
    return total


def write_files(directory, seed: int) -> tuple[str, str]:
    rng = np.random.default_rng(seed)
    users = np.repeat([f"u{u}" for u in range(USERS)], ITEMS)
    items = np.tile([f"i{i}" for i in range(ITEMS)], USERS)
    run = pd.DataFrame({"user_id": users, "item_id": items, "score": rng.random(USERS * ITEMS).round(6)})
    qrels = run.iloc[::7][["user_id", "item_id"]].assign(relevance=1)
    run_path, qrels_path = directory / f"model_{seed}.csv", directory / f"truth_{seed}.csv"
    run.to_csv(run_path, index=False)
    qrels.to_csv(qrels_path, index=False)
    return str(run_path), str(qrels_path)


def upload_and_browse(browser, url: str, run_path: str, qrels_path: str) -> None:
    context = browser.new_context()
    page = context.new_page()
    page.goto(url + "/data")
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first.locator(
        'input[type="file"]').set_input_files(run_path)
    wait_rerun(page)
    page.locator('[data-testid="stFileUploader"]', has_text="Ground truth").first.locator(
        'input[type="file"]').set_input_files(qrels_path)
    wait_rerun(page)
    open_page(page, "Overview")
    assert page.locator('[data-testid="stException"]').count() == 0
    open_page(page, "Distributions")
    context.close()


def settle(url: str, pid: int, timeout: float = deadlines.BACKGROUND) -> float:
    """Wait until no uploaded file is held and the resident memory has stopped falling;
    returns the memory then (MB)."""
    deadline = time.monotonic() + timeout
    while uploaded_bytes(url) > 0:
        assert time.monotonic() < deadline, (
            f"closed sessions still hold {uploaded_bytes(url):,} bytes of uploads after {timeout:.0f} s")
        time.sleep(1.0)
    readings = [rss_mb(pid)]
    while time.monotonic() < deadline:
        time.sleep(4.0)
        readings.append(rss_mb(pid))
        if readings[-1] >= min(readings[:-1]) - 2:  # no longer falling
            break
    return min(readings[-2:])


def test_memory_returns_after_sessions_close(browser, tmp_path):
    files = [write_files(tmp_path, seed) for seed in range(SESSIONS + 1)]
    proc, url = start_server(
        SERVER_SCRIPT, log_path=tmp_path / "server.log",
        extra_env={"METRICS_CORE_STORE_DIR": str(tmp_path / "store"),
                   "METRICS_CORE_DASHBOARD_CACHE_TTL": "8",
                   "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "4"})
    try:
        # one whole cycle first, so that modules, compiled kernels and thread pools are in place
        upload_and_browse(browser, url, *files[0])
        baseline = settle(url, proc.pid)
        peak = baseline
        for run_path, qrels_path in files[1:]:
            upload_and_browse(browser, url, run_path, qrels_path)
            peak = max(peak, rss_mb(proc.pid))
        after = settle(url, proc.pid)
        log = (tmp_path / "server.log").read_text(errors="replace")
        assert not re.search(r"Traceback|Exception", log), log[-2000:]
    finally:
        stop_process(proc)
    # Before closed sessions were shut down, each distinct upload kept 65-100 MB for the
    # server's lifetime; what may stay now is allocator slack that does not grow with uploads.
    grown = after - baseline
    assert grown < max(80.0, 0.5 * (peak - baseline)), (
        f"resident memory {baseline:.0f} MB before {SESSIONS} upload sessions, {peak:.0f} MB at most during, "
        f"{after:.0f} MB after they closed")
