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
