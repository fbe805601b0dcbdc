"""``python3 scripts/test.py --quick`` selects every test but the browser, Spark and long tests."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import _deadlines as deadlines

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("test_script", REPO / "scripts" / "test.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


def _collected(*args: str) -> set[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:xdist", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return {line.strip() for line in done.stdout.splitlines() if "::" in line}


#: the modules marked ``long`` (named in docs/contributing.md)
LONG = ("tests/test_dashboard_upload_atomic.py", "tests/test_example_notebooks.py", "tests/test_cold_start_smoke.py",
        "tests/test_suite_cpu.py")
#: single tests marked ``long`` in modules that are otherwise quick
LONG_TESTS = ("tests/test_demo_bundle.py::test_a_fresh_install_draws_the_overview_without_compiling_a_metric_kernel",)


def test_the_quick_tier_leaves_out_exactly_the_browser_spark_and_long_tests():
    everything = _collected()
    quick = _collected(*script.QUICK_ARGS)
    left_out = everything - quick
    assert quick < everything and left_out
    spark_files = ("tests/test_spark.py", "tests/test_spark_key_ranges.py", "tests/test_cli_spark.py",
                   "tests/test_spark_worker_python.py")
    for test in left_out:  # every test left out drives Chromium, starts a Spark session or is a long one
        assert (test.startswith(("tests/browser/", *spark_files, *LONG, *LONG_TESTS))
                or "spark" in test.lower()), test
    assert {t.split("::")[0] for t in left_out} >= set(LONG) and left_out >= set(LONG_TESTS)
    assert not any(t.startswith((*LONG, *LONG_TESTS)) for t in quick)
    assert not any(t.startswith("tests/browser/") for t in quick)
    assert not any(t.startswith(spark_files) for t in quick)
    # a Spark session taken as a fixture (the mark added in conftest) or started by the test itself
    assert "tests/test_presets_libraries.py::test_spark_mllib_preset_matches_ranking_metrics" in left_out
    assert any(t.startswith("tests/test_spark.py::") for t in left_out)
    # the rest stays: the kernels' references, the statistics, the dashboard's page logic
    for kept in ("tests/test_reference_pytrec_eval.py::", "tests/test_stats.py::", "tests/test_dashboard_pages.py::"):
        assert any(t.startswith(kept) for t in quick), kept
