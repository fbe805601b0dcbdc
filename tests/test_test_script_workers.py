"""How many pytest-xdist workers ``scripts/test.py`` starts on a machine (``default_workers``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("test_script", REPO / "scripts" / "test.py")
script = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(script)


@pytest.mark.parametrize("cores, memory_gib, expected", [
    (1, 24, 3),     # at least three: the browser and Spark tests wait on their servers
    (2, 24, 3),     # this project's two-core machines: as before
    (4, 24, 5),     # one per core plus one
    (8, 64, 8),     # at most eight
    (32, 256, 8),
    (8, 10, 3),     # the memory holds three at 3 GiB each
    (4, 2, 1),      # never none
    (4, 0, 5),      # memory unknown: not a limit
])
def test_workers_follow_the_cores_within_the_memory(cores, memory_gib, expected):
    assert script.default_workers(cores, memory_gib) == expected


def test_this_machine_gets_a_worker_count_within_the_bounds():
    workers = script.default_workers()
    assert 1 <= workers <= script.MAX_WORKERS
    assert script.total_memory_gib() > 0  # Linux: /proc/meminfo is read


@pytest.mark.parametrize("cores, memory_gib, expected", [
    (1, 24, 2),     # at least two
    (2, 24, 2),     # this project's two-core machines: one per core, no worker waiting on a server
    (4, 24, 4),
    (32, 256, 8),   # never more than the full suite's workers
    (8, 4, 1),      # nor than the memory holds
])
def test_the_quick_tier_takes_one_worker_per_core(cores, memory_gib, expected):
    assert script.quick_workers(cores, memory_gib) == expected
