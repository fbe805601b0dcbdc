"""Where the dashboard server's time goes when a page reruns after a K change.

Starts a server on 127.0.0.1, opens the page once (untimed: the demo is built), then
records the server process with py-spy (``pip install py-spy``; every thread: script
runner, event loop, websocket) while one websocket session changes K ``--changes``
times, one after the other, to values the server has not computed yet; then records
the same changes again (now answered from the server's cache, as most changes are
when several sessions share the data). For each phase it prints the CPU seconds per
rerun by kind of work, our functions with the time spent in them, and the functions
with the most time of their own.

    python benchmarks/profile_rerun.py --page overview --changes 15

Only samples of the thread holding the GIL are kept (``py-spy --gil``): the server is
one process, so whatever holds the GIL delays every other session (numba kernels keep
the GIL while they run). A sample is counted for the first kind, in the order of
``KINDS``, that any frame of its stack matches, so the Arrow conversion of a table
drawn by our code counts as "st.dataframe" and not as "dashboard code".
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests" / "browser"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from benchmarks.load_test import PAGES, warm_up  # noqa: E402
from benchmarks.streamlit_ws import Session  # noqa: E402
from dashboard_server import start_server, stop_process  # noqa: E402

#: The page files, which py-spy names without their folder ("overview.py").
PAGE_FILES = "|".join(sorted(p.stem for p in (ROOT / "dashboard" / "views").glob("*.py")))
DASHBOARD = rf"\((\S*/)?dashboard/|\(({PAGE_FILES})\.py:"
OURS = re.compile(rf"{DASHBOARD}|\((\S*/)?metrics_core/")
#: (kind, regular expression on a frame "function (file:line)"), first match wins.
KINDS = [
    ("ForwardMsg hashing and serialisation (Streamlit)", r"forward_msg_cache\.py|serialize_forward_msg"),
    ("bootstrap CIs", r"^\w*bootstrap\w* \((\S*/)?(metrics_core|dashboard)/"),
    ("Streamlit post-run clean-up: gc.collect(2) (runner.postScriptGC), stale widgets", r"^ScriptRunner\._on_script_finished "),
    ("metrics_core evaluate / curves (numba kernels and their Python)", r"\((\S*/)?metrics_core/"),
    ("pandas Styler (table formatting)", r"pandas/io/formats/style"),
    ("st.dataframe: DataFrame to Arrow", r"streamlit/(elements/arrow|dataframe_util)\.py|pyarrow/"),
    ("st.plotly_chart: figure to JSON", r"streamlit/elements/plotly_chart\.py"),
    ("plotly figure building (our chart code)", r"plotly/"),
    ("dashboard code (ours, the rest)", DASHBOARD),
    ("server event loop: websocket, HTTP, message queue, file-watcher polling",
     r"starlette/|uvicorn/|websockets/|asyncio/|selectors\.py|streamlit/watcher/"),
    ("pandas / numpy (called from Streamlit)", r"pandas/|numpy/"),
    ("Streamlit script runner, widgets, session state", r"streamlit/"),
]


def parse_raw(text: str) -> list[tuple[list[str], int]]:
    """py-spy's raw (collapsed) output: one ``frame;frame;...;leaf count`` per line."""
    stacks = []
    for line in text.splitlines():
        frames, _, count = line.rpartition(" ")
        if frames and count.isdigit():
            stacks.append((frames.split(";"), int(count)))
    return stacks


def by_kind(stacks) -> collections.Counter:
    patterns = [(kind, re.compile(rx)) for kind, rx in KINDS]
    counts: collections.Counter = collections.Counter()
    for frames, count in stacks:
        kind = next((k for k, rx in patterns if any(rx.search(f) for f in frames)), "other (interpreter, imports)")
        counts[kind] += count
    return counts


def _short(frame: str) -> str:
    """``func (/long/path/site-packages/pkg/mod.py:12)`` -> ``func (pkg/mod.py)``."""
    m = re.match(r"(.*) \((.*?)(?::\d+)?\)$", frame)
    if not m:
        return frame
    name, file = m.groups()
    file = re.sub(r".*/(site-packages|lib/python3\.\d+)/", "", file)
    file = file.replace(str(ROOT) + "/", "")
    return f"{name} ({file})"


def top_self(stacks, n: int) -> list[tuple[str, int]]:
    """Functions by the samples in which they are the innermost frame."""
    counts: collections.Counter = collections.Counter()
    for frames, count in stacks:
        counts[_short(frames[-1])] += count
    return counts.most_common(n)


def top_ours(stacks, n: int) -> list[tuple[str, int]]:
    """Our functions (dashboard/, metrics_core/) by the samples that pass through them."""
    counts: collections.Counter = collections.Counter()
    for frames, count in stacks:
        ours = {_short(f) for f in frames if OURS.search(f)}
        for name in ours:
            counts[name] += count
    return counts.most_common(n)


#: K values a profile sets (the session opens at the default K = 10): each is new to the
#: server the first time (computed), the second time it comes from the server's cache.
PROFILE_CUTOFFS = (5, 20, 50, 100, 3, 7, 15, 25, 30, 40, 60, 75, 90, 8, 12)


async def _change_k(session: Session, ks) -> float:
    total = 0.0
    for k in ks:
        result = await session.set_widget("k", k)
        if result.exceptions or result.status != "finished":
            raise RuntimeError(f"K = {k}: {result.status} {result.exceptions}")
        total += result.seconds
    return total


def _record(loop, spy: str, pid: int, rate: int, raw: Path, session: Session, ks) -> tuple[list, float]:
    """py-spy's stacks of the server while ``session`` sets each K of ``ks``; the wall seconds."""
    recorder = subprocess.Popen([spy, "record", "--pid", str(pid), "--rate", str(rate), "--format", "raw",
                                 "--gil", "--output", str(raw)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.0)  # py-spy attaches
        wall = loop.run_until_complete(_change_k(session, ks))
    finally:
        recorder.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
        recorder.wait(timeout=60)
    return parse_raw(raw.read_text()), wall


def profile(page: str, changes: int, rate: int, timeout: float) -> dict:
    """Two recordings: each K set for the first time (computed), then the same K again (cached)."""
    spy = shutil.which("py-spy")
    if spy is None:
        raise RuntimeError("py-spy is not installed (pip install py-spy)")
    work = Path(tempfile.mkdtemp(prefix="profile_rerun_"))
    proc, url = start_server(ROOT / "dashboard" / "serve.py", log_path=work / "server.log",
                             extra_env={"METRICS_CORE_STORE_DIR": str(work / "store")})
    loop = asyncio.new_event_loop()
    ks = PROFILE_CUTOFFS[:changes]
    try:
        loop.run_until_complete(warm_up(url, page, timeout))
        session, _ = loop.run_until_complete(Session.open(url, page=PAGES[page][0], timeout=timeout))
        phases = {}
        for phase in ("new K (computed)", "K seen before (server cache)"):
            stacks, wall = _record(loop, spy, proc.pid, rate, work / f"{len(phases)}.raw", session, ks)
            phases[phase] = {"stacks": stacks, "wall": wall}
        loop.run_until_complete(session.close())
    finally:
        loop.close()
        stop_process(proc)
    shutil.rmtree(work, ignore_errors=True)  # kept (server log, py-spy output) when something failed
    return {"phases": phases, "changes": len(ks), "rate": rate}


def report(page: str, result: dict, top: int) -> str:
    n, rate = result["changes"], result["rate"]
    lines = [f"{PAGES[page][1]}, {n} K changes per phase; load average "
             + ", ".join(f"{x:.2f}" for x in os.getloadavg())]
    for phase, data in result["phases"].items():
        stacks = data["stacks"]
        total = sum(c for _, c in stacks) or 1
        lines += ["", f"### {phase}: wall {data['wall'] / n:.2f} s per change, GIL held "
                      f"{total / rate / n:.2f} s per change ({total} samples at {rate}/s)", "",
                  "| kind of work | GIL s per rerun | share |", "|---|---:|---:|"]
        lines += [f"| {kind} | {count / rate / n:.3f} | {count / total:.0%} |"
                  for kind, count in by_kind(stacks).most_common()]
        lines += ["", f"our functions, time in them and in what they call (top {top}):", "",
                  "| function | GIL s per rerun | share |", "|---|---:|---:|"]
        lines += [f"| `{name}` | {count / rate / n:.3f} | {count / total:.0%} |"
                  for name, count in top_ours(stacks, top)]
        lines += ["", f"functions with the most time of their own (top {top}):", "",
                  "| function | GIL s per rerun | share |", "|---|---:|---:|"]
        lines += [f"| `{name}` | {count / rate / n:.3f} | {count / total:.0%} |"
                  for name, count in top_self(stacks, top)]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", choices=tuple(PAGES), default="overview")
    parser.add_argument("--changes", type=int, default=len(PROFILE_CUTOFFS),
                        help=f"K changes recorded per phase (at most {len(PROFILE_CUTOFFS)})")
    parser.add_argument("--rate", type=int, default=200, help="py-spy samples per second")
    parser.add_argument("--top", type=int, default=25, help="functions listed by their own time")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    if not 1 <= args.changes <= len(PROFILE_CUTOFFS) or args.rate < 1:
        parser.error(f"--changes must be 1..{len(PROFILE_CUTOFFS)} and --rate >= 1")
    try:
        result = profile(args.page, args.changes, args.rate, args.timeout)
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        sys.exit(f"profile_rerun: {exc}")
    print(report(args.page, result, args.top))


if __name__ == "__main__":
    main()
