"""Under CI a skipped test fails the run (tests/_ci_skips.py); locally it is a skip."""

from __future__ import annotations

import _deadlines as deadlines
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SKIPPING = '''
import pytest

def test_passes():
    assert True

def test_skips():
    pytest.skip("no widget installed")
'''

SKIPPED_MODULE = '''
import pytest
pytest.importorskip("a_module_that_does_not_exist_anywhere")

def test_never_runs():
    assert True
'''


def _pytest(tmp_path: Path, source: str, ci: bool, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    test_file = tmp_path / "test_sample.py"
    test_file.write_text(source)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if ci:
        env["CI"] = "true"
    env["PYTHONPATH"] = str(TESTS)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "_ci_skips", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", os.devnull, *extra, str(test_file)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=deadlines.SUBPROCESS)


@pytest.mark.parametrize("workers", [
    pytest.param((), id="one-process"),
    # a pytest run with two worker processes inside the test: left to the full suite
    pytest.param(("-n", "2"), id="xdist", marks=pytest.mark.long),
])
@pytest.mark.parametrize("source", [SKIPPING, SKIPPED_MODULE], ids=["skip-in-test", "skip-at-collection"])
def test_skip_fails_under_ci(tmp_path, source, workers):
    """Also on pytest-xdist workers, as scripts/test.py runs the suite."""
    proc = _pytest(tmp_path, source, ci=True, extra=workers)
    assert proc.returncode in (1, 2), proc.stdout  # 1: a test failed; 2: collection failed
    assert "skipped under CI" in proc.stdout


def test_skip_is_a_skip_locally(tmp_path):
    proc = _pytest(tmp_path, SKIPPING, ci=False)
    assert proc.returncode == 0, proc.stdout
    assert "1 passed, 1 skipped" in proc.stdout and "skipped tests: 1" in proc.stdout
