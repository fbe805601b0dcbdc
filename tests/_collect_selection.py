"""``python tests/_collect_selection.py [pytest args]``: collect the suite once (nothing runs) and print,
as JSON, every test collected (``collected``) and those pytest's own ``-m``/``-k`` selection deselected
(``deselected``), so one collection shows both sides of a selection.

Collecting runs no assertion, so the test modules are imported without pytest's assertion rewriting
(``--assert=plain``): rewriting every module's asserts was over half the collection's CPU time."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

# the repository's root on the path, as ``python -m pytest`` run there puts it (a script's own folder is put
# there instead): the test modules import ``dashboard`` and ``benchmarks`` from it
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


class Selection:
    def __init__(self) -> None:
        self.collected: list[str] = []
        self.deselected: list[str] = []

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items) -> None:
        self.collected = [item.nodeid for item in items]

    def pytest_deselected(self, items) -> None:
        self.deselected += [item.nodeid for item in items]


if __name__ == "__main__":
    selection = Selection()
    status = pytest.main(["--collect-only", "-q", "-p", "no:xdist", "--assert=plain", *sys.argv[1:]], plugins=[selection])
    print("SELECTION " + json.dumps({"collected": selection.collected, "deselected": selection.deselected}))
    raise SystemExit(status)
