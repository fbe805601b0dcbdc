"""A tiny run of the browser benchmark (benchmarks/dashboard_browser.py): 200 users x 20
items per model, one round, a few actions on several pages. Every action asked for gets
its rows, none times out, the app shows no exception and the server stays up. Nothing
here asserts a time."""

from __future__ import annotations

import _deadlines as deadlines
import sys

import pytest

from dashboard_server import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
from benchmarks import dashboard_browser as bench  # noqa: E402

pytestmark = pytest.mark.browser

ONLY = (r"open (Compare|Overview)|Overview: (K|bootstrap)|Distributions: metric|Compare: (baseline|test)"
        r"|Failures: select|Share: build")
# each action changes a value and sets it back (the test tries three values); pages are opened twice
EXPECTED = {"upload to Overview (3 runs + truth)": 1, "open Compare (first visit)": 1, "open Compare (again)": 1,
            "open Overview (again)": 2, "Overview: K": 2, "Overview: bootstrap CIs": 2, "Distributions: metric": 2,
            "Compare: baseline": 2, "Compare: test": 3, "Failures: select a user": 2, "Share: build report": 2}


def test_tiny_benchmark_times_every_action_without_exceptions(tmp_path, monkeypatch):
    from concurrent.futures import ThreadPoolExecutor

    from benchmarks import browser_actions

    # on a loaded machine a page switch may start its run later than the benchmark's 1.5 s look-out:
    # this test counts actions, so it looks longer (a probe, not a measured time)
    monkeypatch.setattr(browser_actions, "GRACE_MS", 3 * deadlines.RERUN_START_MS)

    # on a thread of its own: in the browser suite Playwright's sync API already runs an event
    # loop on the main thread (the session's browser), where a second sync Playwright is refused
    with ThreadPoolExecutor(max_workers=1) as pool:
        out = pool.submit(bench.run, users=200, items=20, rounds=1, plan="full", only=ONLY,
                          timeout=deadlines.SUBPROCESS, cli_repeats=1,
                          action_timeout=deadlines.SCRIPT_RUN, work=tmp_path).result()
    actions = out["summary"]["actions"]
    assert out["errors"] == []
    for action, n in EXPECTED.items():
        assert action in actions, f"no row for {action}; rows: {list(actions)}"
        row = actions[action]
        # every try is a row: measured (n), or recorded apart when the browser's click started no run
        # (a click on the table's canvas can miss on a loaded machine); none timed out, one at least measured
        assert row["n"] + row["no_rerun"] == n and row["n"] >= 1 and row["timeouts"] == 0, (action, row)
    assert all(row["exceptions"] == 0 for row in actions.values()), actions
    assert all(t["exceptions"] == [] for t in out["timings"])
    assert out["server_alive"] and out["server_peak_rss_mib"] > 0
    assert out["data"]["rows_per_model"] == 200 * 20 and len(out["cli_seconds"]) == 1
    assert out["summary"]["overall"]["n"] == sum(row["n"] for a, row in actions.items()
                                                 if a in EXPECTED and not a.startswith("upload"))
