"""The load test's memory probe (``benchmarks/memory_probe``) answers readings in the process that
loads it, and the load test compares two of them: the modules imported between the readings and the
objects that appeared, as counted here independently."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.load_test import Probe  # noqa: E402


class ProbeMarker:
    """Objects of a type nothing else creates, counted by the probe."""


def test_the_probe_answers_readings_and_the_load_test_compares_them(tmp_path, monkeypatch):
    monkeypatch.setenv("MC_MEMORY_PROBE_DIR", str(tmp_path))
    spec = importlib.util.spec_from_file_location("memory_probe_under_test",
                                                  ROOT / "benchmarks" / "memory_probe" / "sitecustomize.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # starts the probe's thread on tmp_path
    probe = Probe(tmp_path)
    first = probe.read("first", timeout=60)
    markers = [ProbeMarker() for _ in range(200_000)]  # noqa: F841 - alive at the second reading
    # a module no other test imports (its own file): the first reading cannot have listed it
    (tmp_path / "probe_fresh_module.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "probe_fresh_module", raising=False)
    importlib.import_module("probe_fresh_module")
    assert "probe_fresh_module" not in first["modules"]
    second = probe.read("second", timeout=60)
    name = f"{ProbeMarker.__module__}.{ProbeMarker.__qualname__}"
    count = second["objects"].get(name, [0, 0])[0]
    assert count == 200_000, count  # about 10 MiB of them: among the 40 types holding most
    assert 0 < first["rss_mib"] and 0 < second["rss_parts"]["RssAnon"] <= second["rss_mib"]
    lines = probe.compare("first", "second")
    assert lines[0].startswith("probe first -> second: RSS ")
    assert any("probe_fresh_module 1" in line for line in lines), lines
    assert not list(tmp_path.glob("*.request"))  # every request answered
