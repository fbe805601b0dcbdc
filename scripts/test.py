"""Set up everything the test suite needs, then run it: ``python3 scripts/test.py [options] [pytest args]``.

On a fresh Debian machine where this runs as root (or with sudo) and Python 3.11 is the
only thing installed, it:

1. installs the Debian packages the tests drive when they are missing: Chromium (the
   end-to-end browser tests), a Java runtime 17+ (the Spark backend) and PostgreSQL (the
   analysis store's server tests);
2. checks that ``pyproject.toml`` and the locks in ``requirements/`` agree (``scripts/lock.py
   --check``) and stops with the disagreement named when they do not;
3. makes a virtual environment ``.venv`` in the repository and re-runs itself there;
4. installs exactly the locked versions with their hashes (``requirements/dev.txt``, then the
   reference libraries of ``requirements/no-deps.txt`` without their dependencies), then the
   package itself, editable; skipped when ``.venv`` already holds these locks;
5. runs ``python -m pytest`` with the arguments given here, spread over worker processes
   (pytest-xdist), a test module whole on one worker, with Python's bytecode cache on
   (:func:`pytest_environment`).

Options (before any pytest argument):

``--latest``   the same run on the newest releases that ``pyproject.toml`` allows, in
               ``.venv-latest``: prints every package whose version differs from the lock
               before and after the tests, so a break shows up before the lock is refreshed
               (``python3 scripts/lock.py --upgrade``).
``--busy``     keeps every core busy with CPU-bound processes started here and stopped when
               the tests end (each also stops by itself after ``--busy-limit`` seconds, 7200 by
               default, or when this script is gone): the suite must pass on a loaded machine.
``--quick``    the quick tier, for a change to one module: every test but the browser tests
               (``tests/browser``, the random walks among them), the Spark tests and the long ones
               (``-m "not browser and not spark and not long"``), the generated-case tests with a
               smaller sample that still covers every value of each dimension (``METRICS_CORE_QUICK_CASES=1``,
               ``tests/_quick_cases.py``); the full suite, without it, stays the CI command.
``--jobs N``   worker processes (default: :func:`default_workers`, one per core plus one, 3 to 8
               as the memory allows; with ``--quick``, :func:`quick_workers`, one per core);
               ``--jobs 0`` runs in this process.

Set ``METRICS_CORE_SKIP_SETUP=1`` to run pytest in the current Python (steps 1-4 skipped).
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LOCKS = REPO / "requirements"
LOCKED_FILES = ("dev.txt", "no-deps.txt")
# pytest-xdist workers: one per core plus one (the browser and Spark tests wait on their servers
# part of the time: on two cores, three workers keep both busy), at least WORKERS, at most
# MAX_WORKERS, and no more than the memory holds at GIB_PER_WORKER each (a worker may run a
# Spark local cluster, three JVMs, or a browser beside a dashboard server holding 1M-row files).
WORKERS = 3
MAX_WORKERS = 8
GIB_PER_WORKER = 3.0  # three workers took 7.5 GiB at the peak of a full run (2026-11-27)
INSIDE = "METRICS_CORE_TEST_INSIDE_VENV"
#: how pytest-xdist hands out the tests: a test module at a time, so a module runs whole on one worker and its
#: module-scoped fixtures (a Spark session per master, a PostgreSQL server, executed notebooks, a prepared data
#: set) start once. (``--dist loadgroup`` spreads every test under pytest 9: its worker marks a group by
#: rewriting a private node-id attribute that pytest 9 no longer reads, so no test ever shared a group.)
XDIST_ARGS = ("--dist", "loadfile")
#: pytest arguments of ``--quick``: no browser (Chromium, dashboard servers, the random walks), no Spark, and
#: none of the long loops and heavy runs marked ``long``
QUICK_ARGS = ("--ignore=tests/browser", "-m", "not browser and not spark and not long")
#: the environment variable ``--quick`` sets: the generated-case tests draw a smaller sample (``tests/_quick_cases.py``)
QUICK_CASES = "METRICS_CORE_QUICK_CASES"
HOG = """
import os, sys, time
end, parent = time.monotonic() + float(sys.argv[1]), int(sys.argv[2])
while time.monotonic() < end and os.getppid() == parent:
    sum(i * i for i in range(200_000))
"""


def total_memory_gib() -> float:
    """The machine's memory in GiB (Linux ``/proc/meminfo``); 0 when it cannot be read."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return 0.0


def default_workers(cores: int | None = None, memory_gib: float | None = None) -> int:
    """Worker processes for this machine: ``cores + 1`` between :data:`WORKERS` and
    :data:`MAX_WORKERS`, fewer when the memory holds fewer at :data:`GIB_PER_WORKER` (never under 1;
    unknown memory does not limit)."""
    cores = cores if cores is not None else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                             else os.cpu_count() or 2)
    memory_gib = total_memory_gib() if memory_gib is None else memory_gib
    workers = min(max(cores + 1, WORKERS), MAX_WORKERS)
    if memory_gib > 0:
        workers = min(workers, max(1, int(memory_gib // GIB_PER_WORKER)))
    return workers


def quick_workers(cores: int | None = None, memory_gib: float | None = None) -> int:
    """Worker processes for the quick tier: one per core (at least 2, never more than
    :func:`default_workers`). Its tests start no browser and no Spark session, so no worker waits on a
    server and the extra worker of the full suite would only pay its start-up and collection again
    (about 12 CPU s here)."""
    cores = cores if cores is not None else (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                                             else os.cpu_count() or 2)
    return min(max(cores, 2), default_workers(cores, memory_gib))


def say(message: str) -> None:
    print(f"[scripts/test] {message}", flush=True)


def fail(message: str) -> None:
    print(f"[scripts/test] error: {message}", file=sys.stderr, flush=True)
    raise SystemExit(2)


def run(cmd: list[str], **kwargs) -> None:
    say(" ".join(cmd))
    result = subprocess.run(cmd, **kwargs)
    if result.returncode != 0:
        fail(f"{' '.join(cmd)} exited with status {result.returncode}")


def has_chromium() -> bool:
    return any(shutil.which(name) for name in ("chromium", "chromium-browser")) or os.path.exists("/usr/bin/chromium")


def has_java() -> bool:
    home = os.environ.get("JAVA_HOME")
    return bool(home and os.path.isfile(os.path.join(home, "bin", "java"))) or shutil.which("java") is not None


def has_postgresql() -> bool:
    return bool(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")) or shutil.which("pg_ctl") is not None


def apt_has_candidate(package: str) -> bool:
    out = subprocess.run(["apt-cache", "policy", package], capture_output=True, text=True).stdout
    return "Candidate:" in out and "Candidate: (none)" not in out


def install_debian_packages(python_venv_missing: bool) -> None:
    wanted = {"chromium": not has_chromium(), "java": not has_java(), "postgresql": not has_postgresql(),
              "python3-venv": python_venv_missing}
    missing = [name for name, needed in wanted.items() if needed]
    if not missing:
        return
    if shutil.which("apt-get") is None:
        fail(f"missing {', '.join(missing)} and no apt-get on this machine: install them with the system's "
             "package manager (Chromium, a Java runtime 17+, PostgreSQL server), then run this again")
    prefix: list[str] = []
    if os.geteuid() != 0:
        if shutil.which("sudo") is None:
            fail(f"missing {', '.join(missing)}: run this as root or install sudo")
        prefix = ["sudo"]
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    run(prefix + ["apt-get", "update", "-qq"], env=env)
    packages = []
    if "chromium" in missing:
        packages.append("chromium")
    if "java" in missing:
        packages.append("openjdk-17-jre-headless" if apt_has_candidate("openjdk-17-jre-headless")
                        else "default-jre-headless")
    if "postgresql" in missing:
        packages.append("postgresql")
    if "python3-venv" in missing:
        packages.append(f"python{sys.version_info.major}.{sys.version_info.minor}-venv")
    run(prefix + ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *packages], env=env)


def venv_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import ensurepip, venv"], capture_output=True).returncode == 0


def lock_stamp() -> str:
    """What the locked environment is made from: the locks and pyproject.toml, hashed."""
    digest = hashlib.sha256()
    for path in [REPO / "pyproject.toml", *(LOCKS / name for name in LOCKED_FILES)]:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def check_locks() -> None:
    spec = importlib.util.spec_from_file_location("lock_script", REPO / "scripts" / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    problems = module.disagreements()
    if problems:
        for line in problems:
            print(f"[scripts/test] lock: {line}", file=sys.stderr)
        fail("pyproject.toml and requirements/ disagree: run python3 scripts/lock.py, then commit requirements/")


def install_locked(env: dict) -> None:
    stamp_file = Path(sys.prefix) / "metrics-core-lock.sha256"
    stamp = lock_stamp()
    if stamp_file.exists() and stamp_file.read_text() == stamp:
        say(f"{sys.prefix} already holds the locked versions")
        return
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    run(pip + ["--require-hashes", "-r", str(LOCKS / "dev.txt")], env=env)
    run(pip + ["--no-deps", "--require-hashes", "-r", str(LOCKS / "no-deps.txt")], env=env)
    run(pip + ["--no-deps", "-e", str(REPO)], env=env)
    stamp_file.write_text(stamp)


def installed_versions() -> dict[str, str]:
    out = subprocess.run([sys.executable, "-m", "pip", "list", "--format=json"], capture_output=True, text=True,
                         check=True).stdout
    return {row["name"].lower().replace("_", "-"): row["version"] for row in json.loads(out)}


def differences_from_lock() -> list[str]:
    spec = importlib.util.spec_from_file_location("lock_script", REPO / "scripts" / "lock.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    pins = module.read_lock(LOCKS / "dev.txt")
    installed = installed_versions()
    return [f"{name}: locked {version}, newest {installed.get(name, 'not installed')}"
            for name, (version, _) in sorted(pins.items()) if installed.get(name) != version]


def install_latest(env: dict) -> list[str]:
    pip = [sys.executable, "-m", "pip", "install", "-q"]
    run(pip + ["--upgrade", "--upgrade-strategy", "eager", "-e", f"{REPO}[dev]"], env=env)
    run(pip + ["--no-deps", "--require-hashes", "-r", str(LOCKS / "no-deps.txt")], env=env)
    changed = differences_from_lock()
    say(f"newest releases: {len(changed)} package(s) differ from requirements/dev.txt")
    for line in changed:
        say(f"  {line}")
    return changed


def pytest_environment(mode: str, environ: dict | None = None) -> dict:
    """The environment pytest runs in: this one, with ``METRICS_CORE_TEST_ENV`` set to ``mode`` and
    Python's bytecode cache on (``PYTHONDONTWRITEBYTECODE`` removed). Without the cache every process
    of the run (the workers, each command-line and dashboard server the tests start, several hundred
    in all) compiles every source of the repository it imports again: about 0.7 CPU s a process."""
    env = dict(os.environ if environ is None else environ, METRICS_CORE_TEST_ENV=mode)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def start_hogs(limit: float) -> list[subprocess.Popen]:
    count = os.cpu_count() or 1
    say(f"--busy: {count} CPU-bound process(es), each stopping by itself after {limit:.0f} s at the latest")
    return [subprocess.Popen([sys.executable, "-c", HOG, str(limit), str(os.getpid())]) for _ in range(count)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for hog in hogs:
        hog.kill()
    for hog in hogs:
        hog.wait()


def take_option(argv: list[str], name: str, has_value: bool = False):
    """Remove ``name`` (and its value) from ``argv``; returns the value, True, or None when absent."""
    if name not in argv:
        return None
    i = argv.index(name)
    if not has_value:
        del argv[i]
        return True
    if i + 1 >= len(argv):
        fail(f"{name} needs a value")
    value = argv[i + 1]
    del argv[i:i + 2]
    return value


def main(argv: list[str]) -> int:
    argv = list(argv)
    latest = bool(take_option(argv, "--latest"))
    busy = bool(take_option(argv, "--busy"))
    quick = bool(take_option(argv, "--quick"))
    busy_limit = float(take_option(argv, "--busy-limit", has_value=True) or 7200)
    jobs_text = take_option(argv, "--jobs", has_value=True)
    jobs = (quick_workers() if quick else default_workers()) if jobs_text is None else int(jobs_text)
    mode = "latest" if latest else "locked"
    changed: list[str] = []
    if os.environ.get("METRICS_CORE_SKIP_SETUP") != "1":
        venv = REPO / (".venv-latest" if latest else ".venv")
        if os.environ.get(INSIDE) != str(venv):
            check_locks()
            install_debian_packages(python_venv_missing=not venv_available())
            python = venv / "bin" / "python"
            if not python.exists():
                run([sys.executable, "-m", "venv", str(venv)])
            say(f"continuing in {venv}")
            os.execve(str(python), [str(python), __file__, *sys.argv[1:]], dict(os.environ, **{INSIDE: str(venv)}))
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
        changed = install_latest(env) if latest else install_locked(env) or []
    os.chdir(REPO)
    if quick:
        argv = [*QUICK_ARGS, *argv]
    if jobs > 0:
        argv = ["-n", str(jobs), *XDIST_ARGS, *argv]
    env = pytest_environment(mode if os.environ.get("METRICS_CORE_SKIP_SETUP") != "1" else "")
    if quick:
        env[QUICK_CASES] = "1"
    hogs = start_hogs(busy_limit) if busy else []
    say(f"{sys.executable} -m pytest {' '.join(argv)}")
    try:
        status = subprocess.call([sys.executable, "-m", "pytest", *argv], env=env)
    finally:
        stop_hogs(hogs)
    if latest:
        say(f"on the newest releases ({len(changed)} package(s) newer than the lock): pytest exit status {status}")
        for line in changed:
            say(f"  {line}")
        say("all passed: refresh the lock with python3 scripts/lock.py --upgrade" if status == 0 else
            "failures above: fix them (or bound the release in pyproject.toml) before refreshing the lock")
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
