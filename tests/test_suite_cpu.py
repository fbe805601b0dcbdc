"""The suite's CPU report (``benchmarks/suite_cpu.py``): process kinds, CPU accounting, the
timeline plugin and a whole run on one small test module. Nothing about speed is asserted."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from benchmarks import suite_cpu

#: runs pytest and scripts/test.py in subprocesses: left out of the quick tier (python3 scripts/test.py --quick)
pytestmark = pytest.mark.long


@pytest.mark.parametrize("cmdline, kind", [
    ("/usr/lib/chromium/chromium --type=renderer --lang=en-US", "Chromium renderers"),
    ("/usr/lib/chromium/chromium --type=gpu-process --no-sandbox", "Chromium (browser, GPU, utility)"),
    ("/usr/lib/chromium/chromium --no-sandbox --remote-debugging-pipe", "Chromium (browser, GPU, utility)"),
    ("/repo/.venv/lib/python3.11/site-packages/playwright/driver/node /x/cli.js run-driver", "Playwright driver"),
    ("/usr/lib/jvm/java-17-openjdk-amd64/bin/java -cp /tmp/spark/conf org.apache.spark.deploy.SparkSubmit",
     "Spark JVMs"),
    ("/repo/.venv/bin/python -m pyspark.daemon", "Spark Python workers"),
    ("/repo/.venv/bin/python -m streamlit run /repo/dashboard/serve.py --server.port 4100", "Streamlit servers"),
    ("postgres: checkpointer", "PostgreSQL"),
    ("/repo/.venv/bin/python -m metrics_core.warmup --jobs 2", "kernel warm-up"),
    ("/repo/.venv/bin/python -m metrics_core warm --jobs 2 --quiet", "kernel warm-up"),
    ("/repo/.venv/bin/python -c import sys;exec(eval(sys.stdin.readline()))", "pytest workers"),
    ("/repo/.venv/bin/python -m pytest -n 3 --dist loadgroup", "pytest (controller, nested runs)"),
    ("/repo/.venv/bin/python -m metrics_core evaluate --run /tmp/pytest-of-root/x/run.csv", "other Python (command lines, helpers)"),
    ("kworker/0:1", "other"),
])
def test_every_process_of_the_suite_has_a_kind(cmdline, kind):
    assert suite_cpu.kind_of(cmdline) == kind


def test_a_process_started_during_the_sampling_is_counted_with_its_cpu():
    """A child that spends 0.4 CPU seconds (by its own clock) and stays alive until the last reading."""
    sampler = suite_cpu.Sampler(interval=0.1)
    sampler.start()
    child = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "while time.process_time() < 0.4: pass\n"
        "print('done', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline().strip() == "done"
        sampler.stop()
    finally:
        child.stdin.close()
        child.wait()
    seconds, count = sampler.by_kind()["other Python (command lines, helpers)"]
    assert count >= 1 and seconds >= 0.35
    machine_cpu, busy = sampler.busy()
    assert machine_cpu >= 0.35 and 0 < busy <= 1


def test_the_timeline_is_read_by_module(tmp_path):
    rows = [("tests/a.py::t1", 0, 10), ("tests/a.py::t2", 10, 15), ("tests/b.py::t[x]", 0, 40)]
    with open(tmp_path / "timeline-gw0.jsonl", "w") as out:
        for test, start, end in rows:
            out.write(json.dumps({"test": test, "worker": "gw0", "start": start, "end": end, "cpu": 0.1}) + "\n")
    assert suite_cpu.module_times(tmp_path) == [("tests/b.py", 40, 1), ("tests/a.py", 15, 2)]


def test_the_timeline_sums_worker_and_child_cpu_by_module(tmp_path):
    rows = [("tests/a.py::t1", 1.0, 0.0), ("tests/a.py::t2", 0.5, 2.0), ("tests/b.py::t", 3.0, None)]
    with open(tmp_path / "timeline-gw1.jsonl", "w") as out:
        for test, cpu, children in rows:  # a line written before children_cpu was recorded has none
            row = {"test": test, "worker": "gw1", "start": 0, "end": 1, "cpu": cpu}
            out.write(json.dumps(row | ({} if children is None else {"children_cpu": children})) + "\n")
    assert suite_cpu.module_cpu(tmp_path) == [("tests/a.py", 1.5, 2.0, 2), ("tests/b.py", 3.0, 0.0, 1)]
    text = suite_cpu.report(wall=1, cores=2, machine_cpu=2, busy=1.0, kinds={}, modules=[], top=5,
                            cpu_modules=suite_cpu.module_cpu(tmp_path))
    assert "| tests/a.py | 3.5 | 1.5 | 2.0 | 2 |" in text


def test_the_report_states_the_floor_per_core_count():
    text = suite_cpu.report(wall=700, cores=2, machine_cpu=1300, busy=0.93,
                            kinds={"Chromium renderers": (400.0, 12), "Spark JVMs": (100.0, 3)},
                            modules=[("tests/b.py", 40.0, 1)], top=5)
    assert "floor set by the CPU: 650 s on 2 cores, 325 s on 4, 162 s on 8" in text
    assert "| Chromium renderers | 400 | 80% | 12 |" in text
    assert "| tests/b.py | 40 | 1 |" in text


def test_a_whole_run_on_one_module(tmp_path, monkeypatch, capsys):
    """``scripts/test.py`` in this interpreter (setup skipped), one worker process, one small module:
    the report names the module and the JSON holds the same numbers."""
    monkeypatch.setenv("METRICS_CORE_SKIP_SETUP", "1")
    out = tmp_path / "suite.json"
    status = suite_cpu.main(["--interval", "0.2", "--json", str(out), "--", "--jobs", "0", "-q",
                             "-p", "no:cacheprovider", "tests/test_xdist_groups.py"])
    assert status == 0
    printed = capsys.readouterr().out
    assert "| tests/test_xdist_groups.py |" in printed and "floor set by the CPU" in printed
    saved = json.loads(out.read_text())
    assert saved["status"] == 0 and saved["machine_cpu"] > 0
    assert [m["module"] for m in saved["modules"]] == ["tests/test_xdist_groups.py"]
    assert saved["modules"][0]["tests"] >= 4


def test_a_process_keeps_the_command_line_it_had_while_it_ran(monkeypatch):
    """A Chromium renderer reads as its bare name once it is ending: it stays a renderer."""
    readings = iter([
        {(7, 100): (1.0, "/usr/lib/chromium/chromium --type=renderer", True, 1e9)},
        {(7, 100): (3.0, "chromium", False, 1e9)},
    ])
    monkeypatch.setattr(suite_cpu, "processes", lambda: next(readings))
    sampler = suite_cpu.Sampler(interval=60)
    sampler._read()
    sampler._read()
    assert sampler.by_kind() == {"Chromium renderers": (3.0, 1)}
