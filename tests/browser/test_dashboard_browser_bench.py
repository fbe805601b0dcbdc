"""A tiny run of the browser benchmark (benchmarks/dashboard_browser.py): 200 users x 20
items per model, one round, an action of each kind on three pages, the browsers started one step
below the normal priority (``--browser-nice``, so that its wrapper is run). Every action asked for gets
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

# a page switch, a control of the Overview, a statistical test on Compare and the report: the
# benchmark's other actions go through the same timing code, and the random walks press them too
ONLY = r"open (Compare|Overview)|Overview: K|Compare: test|Share: build"
# each action changes a value and sets it back (the test tries three values); pages are opened twice
EXPECTED = {"upload to Overview (3 runs + truth)": 1, "open Compare (first visit)": 1, "open Compare (again)": 1,
            "open Overview (again)": 2, "Overview: K": 2, "Compare: test": 3, "Share: build report": 2}


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
                          action_timeout=deadlines.SCRIPT_RUN, work=tmp_path, browser_nice=1).result()
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
    # the answered clicks after the upload have the server's part (the request the page sent to the
    # server's last message before the answer, no longer than the whole click), but for a click whose
    # frame events reached the benchmark only after its answer (a loaded machine): that one has none
    answered = [t for t in out["timings"] if t["action"] in actions and t["action"] in EXPECTED
                and not t["action"].startswith("upload") and t["rerun_seen"] and not t["timed_out"]]
    with_part = [t for t in answered if t["server_seconds"] is not None]
    assert answered and len(with_part) >= 0.8 * len(answered), answered
    assert all(0 < t["server_seconds"] <= t["seconds"] for t in with_part), with_part
    assert out["summary"]["server"]["n"] == len(with_part)


def test_browser_nice_starts_the_browser_that_many_steps_lower(tmp_path, monkeypatch):
    """``--browser-nice N``: the wrapper the browsers are launched through runs the browser at the
    caller's nice value + N, with every argument passed on."""
    import os
    import subprocess

    fake = tmp_path / "fake-chromium"
    fake.write_text('#!/bin/sh\necho "$(nice) $*"\n')  # `nice` alone prints the niceness it runs at
    fake.chmod(0o755)
    monkeypatch.setattr(bench, "chromium_path", lambda: str(fake))
    try:
        bench.use_browser_niceness(3, tmp_path)
        wrapper = bench.browser_executable()
        assert wrapper != str(fake)
        out = subprocess.run([wrapper, "--headless", "a b"], capture_output=True, text=True,
                             timeout=deadlines.SUBPROCESS, check=True).stdout.split()
        assert out == [str(min(19, os.nice(0) + 3)), "--headless", "a", "b"]
        bench.use_browser_niceness(0, tmp_path)
        assert bench.browser_executable() == str(fake)
    finally:
        bench.use_browser_niceness(0, tmp_path)
