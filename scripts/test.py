"""Set up everything the test suite needs, then run it: ``python scripts/test.py [pytest args]``.

On a fresh Debian machine where this runs as root (or with sudo) and Python 3.11 is the
only thing installed, it:

1. installs the Debian packages the tests drive when they are missing: Chromium (the
   end-to-end browser tests), a Java runtime 17+ (the Spark backend) and PostgreSQL (the
   analysis store's server tests);
2. uses a virtual environment ``.venv`` in the repository when this Python is managed by
   the system (PEP 668: its pip refuses to install), and re-runs itself there;
3. installs the package with its ``dev`` extra (everything the tests import), then the three
   libraries whose declared pins conflict with ours (``NO_DEPS``: pandas<2 or <3, plotly 4)
   without their dependencies: the parity tests import only modules that work with ours;
4. runs ``python -m pytest`` with the arguments given here.

Set ``METRICS_CORE_SKIP_SETUP=1`` to run pytest directly (steps 1-3 skipped).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV = REPO / ".venv"
# Reference libraries of the preset parity tests, installed without their dependency pins
# (what they import is in the dev extra). Exact versions: the ones the tests were checked on.
NO_DEPS = ("rectools==0.19.0", "recommenders==1.2.1", "recmetrics==0.1.5")


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


def externally_managed() -> bool:
    """True for a system Python whose pip refuses to install outside a virtual environment."""
    in_venv = sys.prefix != sys.base_prefix
    marker = Path(sysconfig.get_paths()["stdlib"]) / "EXTERNALLY-MANAGED"
    return not in_venv and marker.exists()


def venv_available() -> bool:
    return subprocess.run([sys.executable, "-c", "import ensurepip, venv"], capture_output=True).returncode == 0


def main(argv: list[str]) -> int:
    if os.environ.get("METRICS_CORE_SKIP_SETUP") != "1":
        use_venv = externally_managed()
        install_debian_packages(python_venv_missing=use_venv and not venv_available())
        if use_venv:
            python = VENV / "bin" / "python"
            if not python.exists():
                run([sys.executable, "-m", "venv", str(VENV)])
            say(f"this Python is managed by the system: continuing in {VENV}")
            os.execv(str(python), [str(python), __file__, *argv])
        env = dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1")
        run([sys.executable, "-m", "pip", "install", "-q", "-e", f"{REPO}[dev]"], env=env)
        run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", *NO_DEPS], env=env)
    os.chdir(REPO)
    say(f"{sys.executable} -m pytest {' '.join(argv)}")
    return subprocess.call([sys.executable, "-m", "pytest", *argv])


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
