"""The load test's CPU probe (``benchmarks/cpu_probe``) measures each script run on its own thread,
and the load test gives each timed action the CPU of the runs that started while it waited: checked
on an AppTest script that spends a known amount of CPU, measured here with ``time.thread_time``."""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load_test import cpu_by_action  # noqa: E402

SCRIPT = """
import time
import streamlit as st
spin = st.number_input("spin ms", value=20, key="spin")
began = time.thread_time()
while time.thread_time() - began < spin / 1000:
    pass
st.write("done")
"""


def test_each_run_is_measured_and_given_to_the_action_that_waited_for_it(tmp_path, monkeypatch):
    from streamlit.runtime.scriptrunner import script_runner
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(script_runner.ScriptRunner, "_run_script", script_runner.ScriptRunner._run_script)
    monkeypatch.setenv("MC_CPU_PROBE_DIR", str(tmp_path))
    monkeypatch.setenv("MC_CPU_PROBE_PROFILE", "1")
    spec = importlib.util.spec_from_file_location("cpu_probe_under_test",
                                                  ROOT / "benchmarks" / "cpu_probe" / "sitecustomize.py")
    spec.loader.exec_module(importlib.util.module_from_spec(spec))  # wraps ScriptRunner._run_script
    at = AppTest.from_string(SCRIPT, default_timeout=120)  # a loaded machine: no wall-clock limit in effect
    before_first = time.time()
    at.run()
    spans = [("open", before_first, time.time())]
    began = time.time()
    at.number_input(key="spin").set_value(120).run()
    spans.append(("spin 120 ms", began, time.time()))
    began = time.time()
    at.number_input(key="spin").set_value(20).run()
    spans.append(("spin 20 ms", began, time.time()))
    assert not at.exception
    runs = sorted((json.loads(p.read_text()) for p in tmp_path.glob("*.json")), key=lambda r: r["n"])
    assert len(runs) == 3 and all((tmp_path / f"{r['n']:05d}.prof").exists() for r in runs)
    assert runs[1]["cpu"] >= 0.12 and runs[2]["cpu"] >= 0.02
    assert 0.09 <= runs[1]["cpu"] - runs[2]["cpu"] <= 0.5  # the 100 ms more the script spun, and its overhead
    by_action = cpu_by_action(tmp_path, spans)
    assert [by_action[a]["runs"] for a in ("open", "spin 120 ms", "spin 20 ms")] == [1, 1, 1]
    assert by_action["spin 120 ms"]["cpu_mean"] == runs[1]["cpu"]
    assert "(between actions)" not in by_action


def test_a_quick_run_belongs_to_its_own_action_not_the_next(tmp_path):
    """A run is given to the span that holds its start; the 0.05 s before a span (the client notes the
    moment after sending) counts only for a run that no span holds: a quick run of one action that ends
    within 0.05 s of the next action's send stays the first action's (on a quiet machine a small script
    run takes less than that)."""
    starts = {0: 10.00, 1: 10.03, 2: 10.98, 3: 12.50}  # 1: a quick run inside "a"; 2: just before "b"
    for n, start in starts.items():
        (tmp_path / f"{n:05d}.json").write_text(json.dumps({"n": n, "start": start, "end": start + 0.01,
                                                            "cpu": 0.001 * (n + 1)}))
    spans = [("a", 10.00, 10.05), ("b", 11.00, 11.50), ("c", 12.00, 12.60)]
    by_action = cpu_by_action(tmp_path, spans)
    assert {a: by_action[a]["runs"] for a in ("a", "b", "c")} == {"a": 2, "b": 1, "c": 1}
    assert by_action["b"]["cpu"] == [0.003] and by_action["a"]["cpu"] == [0.001 + 0.002]
    assert "(between actions)" not in by_action
    # the last run of "a" 0.03 s before "b" starts is still "a"'s
    (tmp_path / "00001.json").write_text(json.dumps({"n": 1, "start": 10.04, "end": 10.05, "cpu": 0.002}))
    assert cpu_by_action(tmp_path, [("a", 10.00, 10.05), ("b", 10.07, 10.5)])["b"]["runs"] == 0
