"""``python3 scripts/test.py --quick`` selects every test but the browser, Spark and long tests."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import _deadlines as deadlines
import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("test_script", REPO / "scripts" / "test.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


def _report(done: subprocess.CompletedProcess) -> str:
    """What a collection printed but its test ids and selection: its errors and its summary."""
    lines = [x for x in done.stdout.splitlines() if not x.startswith(("tests/", "SELECTION "))]
    return f"exit status {done.returncode}\n" + "\n".join(lines)[-6000:] + done.stderr[-2000:]


def _selection() -> tuple[set[str], set[str]]:
    """Every test, and the quick tier's tests, from one collection (nothing runs): the quick tier's
    ``-m`` expression deselects through pytest itself, its ``--ignore`` folder is left out by path."""
    ignored = [a.split("=", 1)[1] for a in script.QUICK_ARGS if a.startswith("--ignore=")]
    rest = [a for a in script.QUICK_ARGS if not a.startswith("--ignore=")]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # as in CI: the script finds the root itself
    done = subprocess.run([sys.executable, str(REPO / "tests" / "_collect_selection.py"), "-p", "no:cacheprovider",
                           *rest], cwd=REPO, env=env, capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert done.returncode == 0, _report(done)
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("SELECTION ")]
    found = json.loads(line.removeprefix("SELECTION "))
    everything = set(found["collected"])
    quick = everything - set(found["deselected"])
    quick = {t for t in quick if not t.startswith(tuple(f"{folder.rstrip('/')}/" for folder in ignored))}
    return everything, quick


#: the modules marked ``long`` (named in docs/contributing.md)
LONG = ("tests/test_dashboard_upload_atomic.py", "tests/test_example_notebooks.py", "tests/test_cold_start_smoke.py",
        "tests/test_suite_cpu.py")
#: single tests marked ``long`` in modules that are otherwise quick
LONG_TESTS = ("tests/test_demo_bundle.py::test_a_fresh_install_draws_the_overview_without_compiling_a_metric_kernel",
              "tests/test_compare_dashboard.py::test_large_data_overlap_and_other_segments_come_from_the_server_thread",
              "tests/test_kernel_variants.py::"
              "test_first_page_warmup_compiles_what_the_overview_asks_for_without_the_layout_kernel",
              "tests/test_benchmarks_smoke.py::test_file_path_benchmark_cli_and_script_agree",
              "tests/test_benchmarks_smoke.py::test_runner_at_200_users_metrics_core_and_floor_agree",
              "tests/test_benchmarks_smoke.py::test_upload_profile_times_each_step_of_a_small_upload",
              "tests/test_ci_skips.py::test_skip_fails_under_ci[skip-in-test-xdist]",
              "tests/test_ci_skips.py::test_skip_fails_under_ci[skip-at-collection-xdist]",
              "tests/test_readme_pipeline_ci.py::test_in_a_pipeline", "tests/test_readme_pipeline_ci.py::test_in_ci")


def test_the_quick_tier_leaves_out_exactly_the_browser_spark_and_long_tests():
    assert script.QUICK_ARGS == ("--ignore=tests/browser", "-m", "not browser and not spark and not long")
    everything, quick = _selection()
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


def test_the_quick_sample_covers_every_value_of_every_key_with_the_fewest_cases_a_grid_allows():
    from _quick_cases import QUICK, chosen, cover

    grid = [(p, c) for p in "abcdefgh" for c in range(9) if (p, c) != ("h", 4)]  # a grid with a hole
    picked = cover(grid, lambda x: x[0], lambda x: x[1])
    assert {p for p, _ in picked} == set("abcdefgh") and {c for _, c in picked} == set(range(9))
    assert len(picked) == 9 and picked == [x for x in grid if x in picked]  # the diagonal, in the grid's order
    assert cover([], len) == [] and cover([3, 1, 2]) == [3]
    assert chosen(("x", "y", "z"), ("z", "x")) == (["x", "z"] if QUICK else ["x", "y", "z"])
    with pytest.raises(ValueError, match="w"):
        chosen(("x", "y"), ("w",))


def test_the_quick_tier_asks_for_the_smaller_sample_and_the_full_suite_does_not(monkeypatch):
    calls = []
    monkeypatch.setattr(script.subprocess, "call", lambda cmd, env: calls.append(env) or 0)
    monkeypatch.setenv("METRICS_CORE_SKIP_SETUP", "1")
    monkeypatch.delenv(script.QUICK_CASES, raising=False)
    monkeypatch.chdir(REPO)
    assert script.main(["--quick", "--jobs", "0", "-k", "nothing"]) == 0
    assert script.main(["--jobs", "0", "-k", "nothing"]) == 0
    assert calls[0].get(script.QUICK_CASES) == "1" and script.QUICK_CASES not in calls[1]


def test_every_sampled_module_is_named_in_the_contributing_guide():
    """The guide's table of the quick tier's samples names every module that samples its cases."""
    guide = (REPO / "docs" / "contributing.md").read_text(encoding="utf-8")
    sampling = sorted(path.name for path in (REPO / "tests").glob("test_*.py")
                      if re.search(r"^from _quick_cases import (chosen|covering)", path.read_text(encoding="utf-8"),
                                   re.M))
    assert len(sampling) >= 6, sampling
    assert [name for name in sampling if f"`{name}::" not in guide and f"`{name}`" not in guide] == []
