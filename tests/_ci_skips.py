"""A pytest plugin: when the environment variable ``CI`` is set, a skip is a failure.

CI must exercise every test: a test skipped for a missing browser, Java runtime or
package would otherwise pass unseen. Both skips inside a test and skips of a whole
module at collection (``pytest.importorskip`` at module level) become failures that
name the skip's reason. The skip count is printed on its own line either way.
"""

from __future__ import annotations

import os

import pytest


def _in_ci() -> bool:
    return bool(os.environ.get("CI"))


def _reason(longrepr) -> str:
    return longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI (every test must run in CI): {_reason(report.longrepr)}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if _in_ci() and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"module skipped under CI (every test must run in CI): {_reason(report.longrepr)}"


def pytest_terminal_summary(terminalreporter):
    skipped = len(terminalreporter.stats.get("skipped", []))
    terminalreporter.write_line(f"skipped tests: {skipped}")
