"""Where the test suite's time goes: CPU seconds by kind of process, and the floor they set.

    python3 -m benchmarks.suite_cpu [--interval 1.0] [--top 15] [--json PATH] [-- scripts/test.py args]
    python3 -m benchmarks.suite_cpu --command "python3 -m benchmarks.dashboard_browser --sessions 8"

Runs ``python3 scripts/test.py`` (with the arguments after ``--``), or any other command given
with ``--command``, and, while it runs, reads every second:

* ``/proc/stat``: how busy the machine's cores were (the busy fraction of the run);
* ``/proc/<pid>/stat`` of every process started after the suite: its CPU seconds (user and
  system), grouped by what the process is (:func:`kind_of`: Chromium renderers, Spark JVMs,
  Streamlit servers, pytest workers...). A process that ends between two readings loses its last
  second, so the sum by kind is a little under the machine's total.

The plugin :mod:`benchmarks.suite_timeline` records every test's worker, start and end, so the
report also lists the test modules that held a worker longest.

What the report means: when the cores were busy nearly all the run, the suite is CPU-bound and
its wall time cannot go below ``CPU seconds / cores`` however the tests are spread over workers;
only less CPU (or more cores) makes it faster. Run it on an otherwise idle machine: processes
started by anything else are counted too. Nothing is asserted; times are printed.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.procfs import CLOCK_TICKS, stat_fields

ROOT = Path(__file__).resolve().parents[1]


def kind_of(cmdline: str) -> str:
    """What a process is, from its command line (arguments joined by spaces)."""
    if "chromium" in cmdline or "chrome" in cmdline:
        return "Chromium renderers" if "--type=renderer" in cmdline else "Chromium (browser, GPU, utility)"
    if "playwright" in cmdline and "node" in cmdline:
        return "Playwright driver"
    if re.search(r"(^|/)java\s", cmdline):
        return "Spark JVMs"
    if "pyspark.daemon" in cmdline or "pyspark.worker" in cmdline or "pyspark/daemon" in cmdline:
        return "Spark Python workers"
    if "streamlit" in cmdline:
        return "Streamlit servers"
    if "postgres" in cmdline:
        return "PostgreSQL"
    if "metrics_core.warmup" in cmdline or re.search(r"-m metrics_core warm(\s|$)", cmdline):
        return "kernel warm-up"
    if "exec(eval(" in cmdline or "xdist" in cmdline or "execnet" in cmdline:
        return "pytest workers"
    if "pytest" in cmdline.split("/tmp/")[0]:
        return "pytest (controller, nested runs)"
    if "python" in cmdline or "metrics-core" in cmdline:
        return "other Python (command lines, helpers)"
    return "other"


def machine_ticks() -> tuple[int, int]:
    """(all ticks, idle ticks) of every core since boot, from ``/proc/stat``."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return sum(fields), fields[3] + fields[4]  # idle + iowait


def processes() -> dict[tuple[int, int], tuple[float, str, float]]:
    """{(pid, start tick): (CPU seconds, command line or name, whether the command line was readable,
    start seconds since boot)} of every process."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = stat_fields(int(entry))
            raw = Path(f"/proc/{entry}/cmdline").read_bytes()
            name = Path(f"/proc/{entry}/comm").read_text().strip()
        except OSError:
            continue
        start = int(fields[19])
        cmd = raw.replace(b"\0", b" ").decode(errors="replace").strip()  # empty once the process is ending
        out[(int(entry), start)] = ((int(fields[11]) + int(fields[12])) / CLOCK_TICKS, cmd or name, bool(cmd),
                                    start / CLOCK_TICKS)
    return out


def uptime() -> float:
    return float(Path("/proc/uptime").read_text().split()[0])


class Sampler:
    """Reads the machine and its processes every ``interval`` seconds on a thread until stopped."""

    def __init__(self, interval: float):
        self.interval = interval
        self.since = uptime()
        self.ticks0 = machine_ticks()
        self.seen: dict[tuple[int, int], tuple[float, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _read(self) -> None:
        for key, (cpu, cmd, readable, started) in processes().items():
            if started >= self.since - 1:  # a process of the suite (started with it or after)
                # the latest readable command line (a process forked by Chromium's zygote takes its
                # own later; an ending process reads as its bare name)
                if not readable and key in self.seen:
                    cmd = self.seen[key][1]
                self.seen[key] = (cpu, cmd)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._read()
            self._stop.wait(self.interval)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._read()
        self.ticks1 = machine_ticks()
        self._stop.set()
        self._thread.join()

    def by_kind(self) -> dict[str, tuple[float, int]]:
        """{kind: (CPU seconds, processes)}, largest first."""
        cpu, count = collections.Counter(), collections.Counter()
        for seconds, cmd in self.seen.values():
            kind = kind_of(cmd)
            cpu[kind] += seconds
            count[kind] += 1
        return {kind: (seconds, count[kind]) for kind, seconds in cpu.most_common()}

    def largest(self, count: int) -> list[tuple[float, str]]:
        """The ``count`` processes that used the most CPU: (CPU seconds, command line)."""
        return sorted(self.seen.values(), key=lambda seen: -seen[0])[:count]

    def busy(self) -> tuple[float, float]:
        """(CPU seconds of the whole machine over the run, busy fraction of its cores)."""
        total = self.ticks1[0] - self.ticks0[0]
        idle = self.ticks1[1] - self.ticks0[1]
        return (total - idle) / CLOCK_TICKS, (1 - idle / total) if total else 0.0


def module_times(folder: Path) -> list[tuple[str, float, int]]:
    """[(test module, worker seconds, tests)] from the timeline files, longest first."""
    held, tests = collections.Counter(), collections.Counter()
    for path in folder.glob("timeline-*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            module = row["test"].split("::")[0]
            held[module] += row["end"] - row["start"]
            tests[module] += 1
    return [(module, seconds, tests[module]) for module, seconds in held.most_common()]


def module_cpu(folder: Path) -> list[tuple[str, float, float, int]]:
    """[(test module, worker CPU s, CPU s of the child processes its tests waited for, tests)] from the
    timeline files, most CPU first: unlike worker seconds, these hardly change with the machine's load."""
    own, children, tests = collections.Counter(), collections.Counter(), collections.Counter()
    for path in folder.glob("timeline-*.jsonl"):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            module = row["test"].split("::")[0]
            own[module] += row.get("cpu", 0.0)
            children[module] += row.get("children_cpu", 0.0)
            tests[module] += 1
    return sorted(((m, own[m], children[m], tests[m]) for m in tests), key=lambda row: -(row[1] + row[2]))


def report(wall: float, cores: int, machine_cpu: float, busy: float, kinds: dict, modules: list, top: int,
           cpu_modules: list = ()) -> str:
    lines = [f"wall {wall:.0f} s on {cores} cores; the cores were busy {busy:.0%} of it: "
             f"{machine_cpu:.0f} CPU s in all",
             f"floor set by the CPU: {machine_cpu / cores:.0f} s on {cores} cores"
             + "".join(f", {machine_cpu / n:.0f} s on {n}" for n in (4, 8) if n > cores),
             "", "| process kind | CPU s | share | processes |", "|---|---:|---:|---:|"]
    counted = sum(seconds for seconds, _ in kinds.values()) or 1.0
    for kind, (seconds, count) in kinds.items():
        lines.append(f"| {kind} | {seconds:.0f} | {seconds / counted:.0%} | {count} |")
    if modules:
        lines += ["", "| test module | worker s | tests |", "|---|---:|---:|"]
        lines += [f"| {module} | {seconds:.0f} | {count} |" for module, seconds, count in modules[:top]]
    if cpu_modules:
        lines += ["", "| test module | CPU s (worker + children) | worker | children | tests |",
                  "|---|---:|---:|---:|---:|"]
        lines += [f"| {module} | {own + kids:.1f} | {own:.1f} | {kids:.1f} | {count} |"
                  for module, own, kids, count in cpu_modules[:top]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    passed = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--interval", type=float, default=1.0, help="seconds between readings")
    p.add_argument("--top", type=int, default=15, help="test modules listed")
    p.add_argument("--json", type=Path, help="write the numbers here")
    p.add_argument("--command", help="measure this command instead of the test suite (split as a shell would)")
    args = p.parse_args(own)
    command = shlex.split(args.command) if args.command else [
        sys.executable, str(ROOT / "scripts" / "test.py"), *passed, "-p", "benchmarks.suite_timeline"]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="suite_cpu_") as tmp:
        env = dict(os.environ, SUITE_TIMELINE_DIR=tmp)
        sampler = Sampler(args.interval)
        sampler.start()
        start = time.monotonic()
        status = subprocess.call(command, cwd=ROOT, env=env)
        wall = time.monotonic() - start
        sampler.stop()
        modules = module_times(Path(tmp))
        cpu_modules = module_cpu(Path(tmp))
    machine_cpu, busy = sampler.busy()
    kinds = sampler.by_kind()
    print()
    print(f"{' '.join(command[:4])} ... exit status {status}")
    print(report(wall, cores, machine_cpu, busy, kinds, modules, args.top, cpu_modules))
    if args.json:
        args.json.write_text(json.dumps({
            "wall": wall, "cores": cores, "machine_cpu": machine_cpu, "busy": busy, "status": status,
            "kinds": {k: {"cpu": s, "processes": n} for k, (s, n) in kinds.items()},
            "modules": [{"module": m, "worker_seconds": s, "tests": n} for m, s, n in modules],
            "module_cpu": [{"module": m, "cpu": own, "children_cpu": kids, "tests": n}
                           for m, own, kids, n in cpu_modules],
            "processes": [{"cpu": s, "command": c[:300]} for s, c in sampler.largest(40)]}, indent=2))
    return status


if __name__ == "__main__":
    raise SystemExit(main())
