"""A short run of the bounded load test (benchmarks/load_test.py) against a real server:
it completes without an error and the server stays up. Nothing here asserts a time."""

from __future__ import annotations

import _deadlines as deadlines
import sys

import pytest

from dashboard_server import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT))
from benchmarks import load_test  # noqa: E402

pytestmark = pytest.mark.browser


def test_bounded_load_test_runs_and_leaves_the_server_healthy():
    result = load_test.run(sessions=2, steps=2, timeout=deadlines.SCRIPT_RUN, client="browser")
    assert result["errors"] == [] and result["server_alive"]
    assert result["actions"]["change K"]["n"] == 4 and result["actions"]["open Overview"]["n"] == 2
    for row in result["actions"].values():
        assert 0 < row["p50"] <= row["p95"] <= row["max"]
