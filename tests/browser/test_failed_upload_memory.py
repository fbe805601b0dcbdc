"""A real server gives back what failed uploads cost: sessions that upload Parquet dictionary
"bombs" (a small file that decodes to gigabytes) and text files that fail late (a bad score on
the last line, after every row was parsed) see one-line errors, and once those sessions have
closed and the cache entries expired, the server's resident memory is back within 10% of its
level before them.

Short lifetimes (cache entries 8 s after last use, disconnected sessions 4 s) make one cycle
last about two minutes. Memory is read from ``/proc/<pid>/status``; the default read limits
apply (each bomb decodes to more than the 2 GiB ``max_bytes``).
"""

from __future__ import annotations

import _deadlines as deadlines
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dashboard_server import SERVER_SCRIPT, REPO_ROOT, start_server, stop_process, wait_idle, wait_rerun
from test_session_memory import rss_mb, settle

pytestmark = pytest.mark.browser

SESSIONS = 4
BOMB_ROWS, BOMB_WIDTH = 250_000, 10_000  # 2.5 GB once decoded, about 60 KB on disk
LATE_ROWS = 200_000  # about 5 MB of CSV, every row parsed before the last one fails


def write_bomb(path, seed: int) -> str:
    rows = np.arange(BOMB_ROWS, dtype=np.int32)  # the indices as NumPy arrays, not Python lists of ints
    values = pa.array([chr(97 + k) * BOMB_WIDTH for k in range(3)] + [f"s{seed}"])  # distinct content per seed
    users = pa.DictionaryArray.from_arrays(pa.array(rows % 3), values)
    items = pa.DictionaryArray.from_arrays(pa.array(rows % 5), pa.array([f"i{k}" for k in range(5)]))
    pq.write_table(pa.table({"user_id": users, "item_id": items, "score": pa.array(np.full(BOMB_ROWS, 0.5))}), path,
                   store_schema=seed % 2 == 0)
    return str(path)


def write_late_failure(path, seed: int) -> str:
    scores = [f"{k / 97:.4f}" for k in range(97)]  # each distinct score and item formatted once
    items = [f"i{k}_{seed}" for k in range(50)]
    rows = "".join(f"u{i // 50},{items[i % 50]},{scores[i % 97]}\n" for i in range(LATE_ROWS - 1))
    path.write_text("user_id,item_id,score\n" + rows + f"u_last,i_last,not-a-number\n")
    return str(path)


def upload_failing(browser, url: str, path: str, expected: str) -> None:
    """One session: upload ``path`` as a result file, see the one-line error, close."""
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(deadlines.ACTION_MS)
    page.goto(url + "/data")
    wait_idle(page)
    page.locator('[data-testid="stFileUploader"]', has_text="Ranked results").first.locator(
        'input[type="file"]').set_input_files(path)
    wait_rerun(page)
    page.wait_for_selector(f'[data-testid="stAlert"]:has-text("{expected}")')
    assert page.locator('[data-testid="stException"]').count() == 0
    context.close()


def test_memory_returns_after_failed_uploads(browser, tmp_path):
    bombs = [write_bomb(tmp_path / f"bomb_{seed}.parquet", seed) for seed in range(SESSIONS + 1)]
    late = [write_late_failure(tmp_path / f"late_{seed}.csv", seed) for seed in range(SESSIONS + 1)]
    proc, url = start_server(
        SERVER_SCRIPT, log_path=tmp_path / "server.log",
        extra_env={"METRICS_CORE_STORE_DIR": str(tmp_path / "store"),
                   "METRICS_CORE_DASHBOARD_CACHE_TTL": "8",
                   "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "4"})
    try:
        # one cycle of each first, so that modules, compiled kernels and thread pools are in place
        upload_failing(browser, url, bombs[0], "max_bytes")
        upload_failing(browser, url, late[0], "score")
        baseline = settle(url, proc.pid)
        peak = baseline
        for bomb, text in zip(bombs[1:], late[1:]):
            upload_failing(browser, url, bomb, "max_bytes")
            peak = max(peak, rss_mb(proc.pid))
            upload_failing(browser, url, text, "score")
            peak = max(peak, rss_mb(proc.pid))
        after = settle(url, proc.pid)
        log = (tmp_path / "server.log").read_text(errors="replace")
        assert not re.search(r"Traceback|Exception", log), log[-2000:]
    finally:
        stop_process(proc)
    report = (f"resident memory {baseline:.0f} MB before {SESSIONS} sessions of failing uploads, {peak:.0f} MB at "
              f"most during, {after:.0f} MB after they closed")
    print(report)
    # each bomb decodes to 2.5 GB: reading must stop long before, while only its indices are in memory
    assert peak - baseline < 1024, report
    assert after <= 1.10 * baseline, report
