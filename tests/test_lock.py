"""The dependency locks agree with ``pyproject.toml``, and the tests run on what is locked.

Reference: ``pyproject.toml``'s requirements read with ``packaging`` (the same rules pip applies)
and the installed distributions as ``importlib.metadata`` reports them.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from importlib import metadata
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("lock_script", REPO / "scripts" / "lock.py")
lock = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(lock)


def test_committed_locks_agree_with_pyproject():
    assert lock.disagreements() == [], "run: python3 scripts/lock.py"


@pytest.fixture
def copied(tmp_path):
    """A copy of the repository's pyproject.toml and requirements/ to edit by hand."""
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(REPO / "requirements", tmp_path / "requirements")
    return tmp_path


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_a_pin_bumped_past_pyproject_is_named(copied):
    pinned = lock.read_lock(copied / "requirements" / "dev.txt")["pytest"][0]
    _edit(copied / "requirements" / "dev.txt", f"pytest=={pinned}", "pytest==10.0.0")
    problems = lock.disagreements(copied)
    assert any("requirements/dev.txt: pytest==10.0.0 is outside pyproject.toml's" in p for p in problems), problems


def test_a_range_tightened_in_pyproject_is_named(copied):
    pinned = lock.read_lock(copied / "requirements" / "dev.txt")["numpy"][0]
    _edit(copied / "pyproject.toml", '"numpy>=1.26,<3"', f'"numpy>=1.26,!={pinned}"')
    problems = lock.disagreements(copied)
    assert any(f"numpy=={pinned} is outside" in p and "dev.txt" in p for p in problems), problems
    assert any(f"numpy=={pinned} is outside" in p and "dashboard.txt" in p for p in problems), problems


def test_a_new_requirement_not_locked_is_named(copied):
    _edit(copied / "pyproject.toml", '"pytest>=', '"tabulate-does-not-exist>=1",\n    "pytest>=')
    problems = lock.disagreements(copied)
    assert any("tabulate-does-not-exist" in p and "not locked" in p for p in problems), problems


def test_a_pin_without_hash_and_diverging_locks_are_named(copied):
    dev = (copied / "requirements" / "dev.txt").read_text(encoding="utf-8")
    start = dev.index("\nscipy==") + 1
    line_end = dev.index("\n", start)
    version = dev[start:line_end].split("==")[1].split()[0]
    block_end = dev.index("\n    # via", start)
    (copied / "requirements" / "dev.txt").write_text(dev[:start] + f"scipy=={version}" + dev[block_end:],
                                                    encoding="utf-8")
    _edit(copied / "requirements" / "dashboard.txt", "\nnumpy==", "\nnumpy==0.0.1 \\\n    --hash=sha256:00\n#==")
    problems = lock.disagreements(copied)
    assert any(f"dev.txt: scipy=={version} has no --hash" in p for p in problems), problems
    assert any("dashboard.txt: numpy==0.0.1 but requirements/dev.txt has numpy==" in p for p in problems), problems


def test_no_deps_lock_follows_its_input(copied):
    _edit(copied / "requirements" / "no-deps.in", "recmetrics==0.1.5", "recmetrics==0.1.4")
    problems = lock.disagreements(copied)
    assert any("no-deps.in asks recmetrics==0.1.4" in p for p in problems), problems


def _installed() -> dict[str, str]:
    return {canonicalize_name(d.metadata["Name"]): d.version for d in metadata.distributions()}


def test_the_tests_run_on_the_locked_versions():
    """``scripts/test.py`` says which environment it made: the lock (exact versions) or the newest
    releases (``--latest``: every version within pyproject.toml's ranges). Run by hand, pytest is
    held to the ranges."""
    installed = _installed()
    mode = os.environ.get("METRICS_CORE_TEST_ENV", "")
    if mode == "locked":
        pins = {**lock.read_lock(REPO / "requirements" / "dev.txt"),
                **lock.read_lock(REPO / "requirements" / "no-deps.txt")}
        wrong = {name: (version, installed.get(name)) for name, (version, _) in pins.items()
                 if installed.get(name) != version}
        assert wrong == {}, f"installed versions differ from the lock (locked, installed): {wrong}"
    else:
        outside = [f"{req.name} {installed.get(canonicalize_name(req.name))} not in '{req.specifier}'"
                   for req in lock.declared(REPO / "pyproject.toml", "dev")
                   if (req.marker is None or req.marker.evaluate())
                   and not req.specifier.contains(installed.get(canonicalize_name(req.name), "0.0.0.dev0"),
                                                  prereleases=True)]
        assert outside == [], outside
