"""The cold-start benchmark's CLI part runs on tiny data: a first ``metrics_core evaluate``
on an empty kernel cache and a second one on the cache it left (empty too: tiny inputs run the
kernels as Python until they are compiled) print the same numbers (the script checks that), and
the table names every measurement. No time is asserted."""

from __future__ import annotations

import pytest

from benchmarks import cold_start

#: two processes that load the package: left out of the quick tier (python3 scripts/test.py --quick)
pytestmark = pytest.mark.long


def test_cli_part_on_tiny_data(capsys, tmp_path):
    out = tmp_path / "raw.json"
    assert cold_start.main(["--parts", "cli", "--repeats", "1", "--users", "20", "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    for label in ("cli: first evaluate, empty kernel cache", "cli: the same again, on the cache it left"):
        assert f"| {label} |" in printed
    raw = next(iter(__import__("json").loads(out.read_text()).values()))
    assert all(len(v) == 1 and v[0] > 0 for v in raw.values())
