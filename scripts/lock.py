"""Refresh the dependency locks: ``python3 scripts/lock.py [--upgrade | --upgrade-package NAME ...]``.

The locks pin every package the tests and the dashboard run on, with the SHA-256 of every
file, for CPython 3.11 on x86-64 Linux (manylinux 2.28):

- ``requirements/dev.txt``: the ``dev`` extra of ``pyproject.toml`` (everything the tests import,
  which includes the dashboard, Spark and PostgreSQL extras);
- ``requirements/dashboard.txt``: the ``dashboard`` extra, constrained to the versions of
  ``dev.txt`` so the dashboard runs on what the tests ran on;
- ``requirements/no-deps.txt``: the reference libraries of the preset parity tests
  (``requirements/no-deps.in``), installed without their dependencies.

They are resolved by uv's ``pip compile`` (installed with pip when missing). Without an option
the current pins are kept where ``pyproject.toml`` still allows them, so only what changed in
``pyproject.toml`` moves; ``--upgrade`` takes the newest releases it allows. ``tests/test_lock.py``
fails when ``pyproject.toml`` and the locks disagree.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCKS = REPO / "requirements"
TARGET = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]
HEADER = ["--generate-hashes", "--quiet", "--custom-compile-command", "python3 scripts/lock.py"]


def _packaging():
    """``packaging`` (a dependency of pytest), or the copy pip vendors before anything is installed."""
    try:
        from packaging.requirements import Requirement
        from packaging.utils import canonicalize_name
    except ImportError:  # a bare Python: pip carries its own copy
        from pip._vendor.packaging.requirements import Requirement
        from pip._vendor.packaging.utils import canonicalize_name
    return Requirement, canonicalize_name


def read_lock(path: Path) -> dict[str, tuple[str, int]]:
    """``{canonical name: (version, number of hashes)}`` of a lock written by ``uv pip compile``."""
    _, canonical = _packaging()
    pins: dict[str, tuple[str, int]] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)", line)
        if match:
            current = canonical(match.group(1))
            pins[current] = (match.group(2), 0)
        elif current and line.strip().startswith("--hash=sha256:"):
            version, hashes = pins[current]
            pins[current] = (version, hashes + 1)
    return pins


def declared(pyproject: Path, extra: str | None) -> list:
    """The requirements of the package and of ``extra``, the package's own extras expanded."""
    import tomllib

    Requirement, canonical = _packaging()
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    own = canonical(project["name"])
    out, todo, seen = [Requirement(r) for r in project["dependencies"]], [extra] if extra else [], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in project["optional-dependencies"][name]:
            req = Requirement(text)
            if canonical(req.name) == own:
                todo.extend(req.extras)
            else:
                out.append(req)
    return out


TARGET_ENV = {"python_version": "3.11", "python_full_version": "3.11.0", "sys_platform": "linux",
              "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
              "implementation_name": "cpython", "platform_python_implementation": "CPython"}


def disagreements(repo: Path = REPO, locks: Path | None = None) -> list[str]:
    """Every way ``pyproject.toml`` and the locks disagree, one line each (empty when they agree)."""
    _, canonical = _packaging()
    locks = locks or repo / "requirements"
    problems: list[str] = []
    dev = read_lock(locks / "dev.txt")
    for lock_name, extra, pins in (("dev.txt", "dev", dev), ("dashboard.txt", "dashboard",
                                                             read_lock(locks / "dashboard.txt"))):
        for req in declared(repo / "pyproject.toml", extra):
            if req.marker is not None and not req.marker.evaluate(TARGET_ENV):
                continue
            name = canonical(req.name)
            if name not in pins:
                problems.append(f"requirements/{lock_name}: {req.name} is required by pyproject.toml ({req}) "
                                "but not locked")
            elif not req.specifier.contains(pins[name][0], prereleases=True):
                problems.append(f"requirements/{lock_name}: {req.name}=={pins[name][0]} is outside pyproject.toml's "
                                f"'{req.specifier}'")
        for name, (version, hashes) in pins.items():
            if hashes == 0:
                problems.append(f"requirements/{lock_name}: {name}=={version} has no --hash")
            if lock_name == "dashboard.txt" and dev.get(name, (version,))[0] != version:
                problems.append(f"requirements/dashboard.txt: {name}=={version} but requirements/dev.txt has "
                                f"{name}=={dev[name][0]}")
    wanted = {}
    Requirement, _ = _packaging()
    for line in (locks / "no-deps.in").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            req = Requirement(line)
            wanted[canonical(req.name)] = req
    nodeps = read_lock(locks / "no-deps.txt")
    for name, req in wanted.items():
        if name not in nodeps or not req.specifier.contains(nodeps[name][0], prereleases=True):
            got = f"{name}=={nodeps[name][0]}" if name in nodeps else "nothing"
            problems.append(f"requirements/no-deps.txt: no-deps.in asks {req}, the lock has {got}")
    for name in set(nodeps) - set(wanted):
        problems.append(f"requirements/no-deps.txt: {name} is locked but not asked for in no-deps.in")
    return problems


def uv() -> list[str]:
    if shutil.which("uv"):
        return ["uv"]
    probe = subprocess.run([sys.executable, "-m", "uv", "--version"], capture_output=True)
    if probe.returncode != 0:
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "uv"], check=True)
    return [sys.executable, "-m", "uv"]


def compile_lock(source: list[str], output: Path, extra: list[str]) -> None:
    cmd = [*uv(), "pip", "compile", *source, "-o", str(output.relative_to(REPO)), *TARGET, *HEADER, *extra]
    print("[scripts/lock]", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, cwd=REPO)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upgrade", action="store_true", help="take the newest releases pyproject.toml allows")
    parser.add_argument("--upgrade-package", action="append", default=[], metavar="NAME",
                        help="take the newest release of this package only (repeatable)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing: list where pyproject.toml and the locks disagree (exit 1 if they do)")
    args = parser.parse_args(argv)
    if args.check:
        problems = disagreements()
        for line in problems:
            print(f"[scripts/lock] {line}", file=sys.stderr)
        if problems:
            print("[scripts/lock] run: python3 scripts/lock.py  (then commit requirements/)", file=sys.stderr)
        return 1 if problems else 0
    moves = (["--upgrade"] if args.upgrade else []) + [a for p in args.upgrade_package for a in ("-P", p)]
    compile_lock(["pyproject.toml", "--extra", "dev"], LOCKS / "dev.txt", moves)
    compile_lock(["pyproject.toml", "--extra", "dashboard", "-c", "requirements/dev.txt"],
                 LOCKS / "dashboard.txt", moves)
    compile_lock(["requirements/no-deps.in", "--no-deps"], LOCKS / "no-deps.txt", moves)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
