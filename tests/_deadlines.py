"""Every deadline the tests wait on, stated once.

A deadline bounds a wait for something that will happen (a server to answer, a script run to
finish, a background thread to deliver, a subprocess to exit); it never measures speed, and
no test asserts how long anything took. The values are generous, so that the suite passes on a
machine whose cores are all busy (``python3 scripts/test.py --busy``);
``METRICS_CORE_TEST_DEADLINE_SCALE`` multiplies them all for a slower machine still.
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("METRICS_CORE_TEST_DEADLINE_SCALE", "1"))

# Seconds.
SERVER_START = 180 * SCALE  # a `streamlit run` server answering /_stcore/health
SCRIPT_RUN = 300 * SCALE  # one dashboard script run (AppTest's default_timeout, a rerun in the browser)
BACKGROUND = 300 * SCALE  # work a page hands to a server thread (bootstrap, curves), Spark executors
SUBPROCESS = 600 * SCALE  # a command-line or Python subprocess a test starts
SERVICE_STOP = 60 * SCALE  # a server asked to stop (PostgreSQL, Streamlit) before it is killed

# Milliseconds, for Playwright.
SCRIPT_RUN_MS = int(SCRIPT_RUN * 1000)
ACTION_MS = int(60_000 * SCALE)  # a click, a fill, a locator appearing
# A random walk's click or fill on an element its last rerun may have removed or moved: a probe, not
# a deadline; when it runs out the step is taken as a no-op and skipped. A click that must land (a
# page of the sidebar) waits ACTION_MS.
WALK_PROBE_MS = int(4_000 * SCALE)
# How long to look for the rerun an action may start (0.2-0.5 s later on a quiet machine) before
# taking it that the action started none: a probe, not a deadline; the rerun's end is then awaited
# with SCRIPT_RUN_MS.
RERUN_START_MS = int(2_000 * SCALE)
# How long to look for the message a browser action sends to ask the server for a rerun (a widget's
# new value, a page switch: sent at once, a slider's after a 0.2 s debounce) before taking it that
# the action asked for none: a probe, like RERUN_START_MS, which is then skipped.
RERUN_REQUEST_MS = int(700 * SCALE)
