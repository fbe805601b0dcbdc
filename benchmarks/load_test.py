"""Bounded load test of the dashboard: N concurrent sessions on 127.0.0.1.

After one untimed visit (the server builds the demo once), N sessions open a page
of the demo (``--page``: overview, distributions, compare) at the same time, wait
for each other, then each changes K in the sidebar ``--steps`` times and waits for
the answer (the script run ends). With ``--think 0`` (the default, the worst case)
every session asks again as soon as it has its answer, all starting at the same
instant; with ``--think S`` each pauses S seconds on average (uniform between S/2
and 3S/2) before every change, so they drift apart as real users do. The
run stops by itself after the steps (or ``--timeout`` seconds) and prints, per
action, p50 / p95 / max seconds, the script runs per second the server sustained,
the server's CPU seconds per script run, and its resident memory before, at the
peak, and after the sessions closed.

    python benchmarks/load_test.py --sessions 8 --steps 10
    python benchmarks/load_test.py --sessions 8 --steps 10 --think 2 --ttl 10

Two clients (``--client``):

* ``websocket`` (the default): each session speaks Streamlit's websocket protocol
  without rendering (``benchmarks/streamlit_ws.py``), so the two cores belong to the
  server and the numbers are the server's. Each K change is checked: the run must
  finish, send no exception element and show the new K.
* ``browser``: each session is a headless Chromium context (Debian's
  ``/usr/bin/chromium`` or ``$CHROMIUM``, driven by Playwright's Python package).
  Eight renderers on the same cores take most of the CPU, so this measures what a
  user on this machine would see, not what the server does.

It starts its own server (``streamlit run dashboard/serve.py`` on a free port) unless
``--url`` names one; it never contacts another host. ``--ttl S`` starts that server
with disconnected sessions and cache entries kept S seconds
(``STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL``, ``METRICS_CORE_DASHBOARD_CACHE_TTL``)
and, after the sessions close, waits until the server's memory stops falling.

``--snapshot-mb MB`` puts a snapshot in the started server's store first (a result file of
about MB megabytes, CSV, and its ground truth) and every session opens it
(``?analysis=<id>``) instead of the demo: the memory probe then shows what N viewers of
one stored file cost the server. ``--hold S`` keeps every session open S seconds once all
have opened, and the server's memory is read then ("with the sessions open"):

    python benchmarks/load_test.py --sessions 50 --steps 0 --snapshot-mb 69 --hold 20 --ttl 20

``--probe`` says what holds the memory: the started server runs ``benchmarks/memory_probe``
(glibc's heap, Python's blocks, live objects by type, the dashboard cache, Streamlit's own
accounting, and with ``--tracemalloc`` the Python allocations by line), read after the first visit,
with the sessions open and after they left; the report prints what grew between them.

``--path reviewer`` measures the server on the clicks reviewers make at 3 x 1M rows. The started
server's store first holds one analysis: the browser benchmark's files
(``benchmarks/browser_data.py``: three models of ``--users`` x ``--items`` rows, default 20,000 x 50
= 1M rows each, in TREC, CSV and Parquet, a ground truth of 5 judged rows a user, user
attributes), written in ``--data-dir`` (reused there for the same size) and saved as Share saves
a session's data (``dashboard.sources.save_shared``). One untimed visit opens it (the server
reads the files once); then every session opens its link (``?analysis=<id>``) on the Overview
and walks ``--steps`` rounds of :func:`reviewer_round`: K changed on the Overview, Compare
opened, its compared metric changed (ndcg@K <-> map@K), recall@K added, K changed on Compare,
back to the Overview for the next round (step names of ``benchmarks/browser_plan.py`` where
they fit). Each action is timed from the message sent to the end of the script run it starts
and checked: the run finished, no exception element, and the page shows the new value (the K,
the verdict's metrics). The report adds p50 / p95 / max over every action after the opening:

    python benchmarks/load_test.py --path reviewer --sessions 8 --steps 2 --data-dir /tmp/lt3x1m
    python benchmarks/load_test.py --path reviewer --sessions 32 --steps 2 --data-dir /tmp/lt3x1m

With ``--url`` (a server running elsewhere) ``--store-dir`` names that server's store.

``--cpu-probe DIR`` says where the server's CPU goes, action by action: the started server runs
``benchmarks/cpu_probe`` (each script run's CPU seconds on its own thread, and with ``--cpu-profile``
its cProfile statistics) and the report gives every action the CPU of the runs that started while
it waited (one session: with several, their actions overlap), then, with ``--cpu-profile``, the
functions with the most CPU per action (the profiler inflates deep Python call chains such as
plotly's several times: compare CPU seconds from runs without it):

    python benchmarks/load_test.py --path reviewer --sessions 1 --steps 3 --data-dir /tmp/lt3x1m --cpu-probe /tmp/cpu
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import dataclasses
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Awaitable, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "tests" / "browser"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from benchmarks.procfs import process_cpu  # noqa: E402
from benchmarks.streamlit_ws import RunResult, Session  # noqa: E402
from dashboard_server import chromium_path, start_server, stop_process  # noqa: E402

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
RUNNING = '[data-testid="stApp"][data-test-script-state="running"]'
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
#: --page name -> (URL path, title)
PAGES = {"overview": ("", "Overview"), "distributions": ("distributions", "Distributions"),
         "compare": ("compare", "Compare")}
CUTOFFS = (5, 10, 20, 50, 100)
CLIENTS = ("websocket", "browser")
#: --path: ``k`` changes K on one page; ``reviewer`` walks the Overview and Compare (:func:`reviewer_round`)
PATHS = ("k", "reviewer")
#: The Compare page's heading and its notice when no metric (or challenger) is chosen.
COMPARE_TITLE, COMPARE_EMPTY = "Compare models", "Pick at least one challenger and one metric."


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def shows_cutoff(result: RunResult, k: int) -> bool:
    """The run's elements show cutoff ``k``: a table column ``<metric>@k``, the caption's
    ``K = k``, or a metric choice ``<metric>@k``."""
    if any(f"K = {k} " in text or text.endswith(f"K = {k}") or f"K = {k})" in text
           for text in result.texts()):
        return True
    if any(col.endswith(f"@{k}") for cols in result.table_columns() for col in cols):
        return True
    return any(option.endswith(f"@{k}") for kind, el in result.elements
               if kind in ("selectbox", "multiselect") for option in el.options)


class MemoryWatch:
    """Samples a process's resident memory every ``every`` seconds on a thread; ``peak`` is the largest."""

    def __init__(self, pid: int | None, every: float = 0.2):
        self.pid, self.every, self.peak = pid, every, float("nan")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = np.nanmax([self.peak, rss_mb(self.pid)])
            self._stop.wait(self.every)

    def __enter__(self) -> "MemoryWatch":
        if self.pid:
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self.pid:
            self._thread.join()
            self.peak = np.nanmax([self.peak, rss_mb(self.pid)])


class Probe:
    """Readings of ``benchmarks/memory_probe`` in a server started with :meth:`env`."""

    def __init__(self, folder: Path, tracemalloc: bool = False):
        self.folder, self.tracemalloc = folder, tracemalloc
        folder.mkdir(parents=True, exist_ok=True)

    def env(self) -> dict:
        env = {"MC_MEMORY_PROBE_DIR": str(self.folder),
               "PYTHONPATH": os.pathsep.join([str(ROOT / "benchmarks" / "memory_probe"), str(ROOT)])}
        if self.tracemalloc:
            env["PYTHONTRACEMALLOC"] = "1"
        return env

    def read(self, label: str, timeout: float = 300) -> dict:
        """Ask the server for a reading and wait for it (the server counts its objects meanwhile)."""
        answer = self.folder / f"{label}.json"
        (self.folder / f"{label}.request").write_text("")
        deadline = time.monotonic() + timeout
        while not answer.exists():
            if time.monotonic() > deadline:
                return {"error": f"no reading {label} within {timeout:g} s"}
            time.sleep(0.2)
        return json.loads(answer.read_text())

    def compare(self, before: str, after: str, top: int = 12) -> list[str]:
        """What grew from reading ``before`` to ``after``, as report lines."""
        a, b = (json.loads((self.folder / f"{x}.json").read_text()) for x in (before, after))
        if "error" in a or "error" in b:
            return [f"probe: {a.get('error') or b.get('error')}"]
        lines = [f"probe {before} -> {after}: RSS {a['rss_after_gc_mib']:.0f} -> {b['rss_after_gc_mib']:.0f} MiB "
                 f"(after a gc.collect; " + ", ".join(f"{k} {a['rss_parts'].get(k, 0):.0f} -> {b['rss_parts'].get(k, 0):.0f}"
                                                       for k in ("RssAnon", "RssFile")) + ")"]
        new = sorted(set(b["modules"]) - set(a["modules"]))
        packages: dict = {}
        for name in new:
            packages[name.split(".")[0]] = packages.get(name.split(".")[0], 0) + 1
        lines.append(f"  {len(new)} modules imported meanwhile: " + ", ".join(
            f"{p} {n}" for p, n in sorted(packages.items(), key=lambda t: -t[1])[:15]))
        ma, mb = a["malloc"], b["malloc"]
        if ma and mb:
            lines.append("  glibc heap " + ", ".join(f"{k} {ma[k]:.0f} -> {mb[k]:.0f}" for k in
                                                     ("heap_mib", "in_use_mib", "free_held_mib", "mmapped_mib")))
        lines.append(f"  Python blocks {a['python_blocks']:,} -> {b['python_blocks']:,}; its arenas "
                     f"{a['pymalloc']['arena_mib']:.0f} -> {b['pymalloc']['arena_mib']:.0f} MiB (in use "
                     f"{a['pymalloc']['used_mib']:.0f} -> {b['pymalloc']['used_mib']:.0f}); Arrow's pool "
                     f"({b['arrow'].get('backend', '-')}) {a['arrow'].get('allocated_mib', 0):.0f} -> "
                     f"{b['arrow'].get('allocated_mib', 0):.0f} MiB")
        da, db = a["dashboard"], b["dashboard"]
        lines.append(f"  dashboard cache {da.get('cache_entries')} entries {da.get('cache_mib', 0):.0f} MiB -> "
                     f"{db.get('cache_entries')} entries {db.get('cache_mib', 0):.0f} MiB; Streamlit sessions "
                     f"{da.get('sessions_all')} -> {db.get('sessions_all')}")
        kinds = sorted(set(da.get("streamlit_mib", {})) | set(db.get("streamlit_mib", {})))
        lines.append("  Streamlit's accounting MiB: " + ", ".join(
            f"{k} {da.get('streamlit_mib', {}).get(k, 0):.1f} -> {db.get('streamlit_mib', {}).get(k, 0):.1f}"
            for k in kinds))
        grown = sorted(((n, b["objects"][n], a["objects"].get(n, [0, 0])) for n in b["objects"]),
                       key=lambda t: t[2][1] - t[1][1])[:top]
        lines.append("  live objects grown (type: count, MiB by getsizeof): " + "; ".join(
            f"{n} {o[0]:,} -> {x[0]:,}, {o[1] / 2**20:.1f} -> {x[1] / 2**20:.1f}" for n, x, o in grown
            if x[1] > o[1]))
        ta, tb = self.folder / f"{before}.tracemalloc", self.folder / f"{after}.tracemalloc"
        if ta.exists() and tb.exists():
            import tracemalloc

            lines.append(f"  traced Python memory MiB {a['traced_mib']['current']:.0f} -> {b['traced_mib']['current']:.0f}")
            diff = tracemalloc.Snapshot.load(str(tb)).compare_to(tracemalloc.Snapshot.load(str(ta)), "lineno")
            for stat in diff[:top]:
                frame = stat.traceback[0]
                lines.append(f"    {stat.size_diff / 2**20:+.1f} MiB ({stat.count_diff:+,} blocks) "
                             f"{frame.filename.split('site-packages/')[-1]}:{frame.lineno}")
        return lines


def cpu_probe_env(folder: Path, profile: bool, pythonpath: str | None = None) -> dict:
    """The environment of a server measured by ``benchmarks/cpu_probe`` into ``folder`` (emptied first)."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return {"MC_CPU_PROBE_DIR": str(folder), "MC_CPU_PROBE_PROFILE": "1" if profile else "0",
            "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "benchmarks" / "cpu_probe"), pythonpath, str(ROOT))
                                          if p)}


def cpu_by_action(folder: Path, spans: list) -> dict:
    """Each action's script runs as the server measured them (``benchmarks/cpu_probe``): a run belongs
    to the action whose span (message sent to answer received) holds its start (with several sessions
    at once spans overlap and a run counts for each: measure with one session). Per action: how many,
    the runs, the CPU seconds per action (mean, median) and, with profiles, the ``.prof`` files of its
    runs; ``(between actions)``: the runs that started in no span (a page's own rerun when the server
    thread finished what it waited for)."""
    runs = sorted((json.loads(p.read_text()) for p in folder.glob("*.json")), key=lambda r: r["start"])

    def holds(t0: float, t1: float, start: float) -> bool:
        # a run that starts inside a span is that span's; one that starts up to 0.05 s before a span (the
        # client notes the moment after sending) is the span's only when no span holds its start itself:
        # a quick run of the previous action can end within 0.05 s of the next action's send
        if t0 <= start <= t1:
            return True
        return t0 - 0.05 <= start < t0 and not any(u0 <= start <= u1 for _, u0, u1 in spans)

    out: dict = {}
    for name, t0, t1 in spans:
        mine = [r for r in runs if holds(t0, t1, r["start"])]
        row = out.setdefault(name, {"n": 0, "runs": 0, "cpu": [], "profiles": []})
        row["n"] += 1
        row["runs"] += len(mine)
        row["cpu"].append(sum(r["cpu"] for r in mine))
        row["profiles"] += [str(folder / f"{r['n']:05d}.prof") for r in mine
                            if (folder / f"{r['n']:05d}.prof").exists()]
    inside = {id(r) for _, t0, t1 in spans for r in runs if holds(t0, t1, r["start"])}
    first = min((t0 for _, t0, _ in spans), default=float("inf"))  # the untimed first visit is before
    outside = [r for r in runs if id(r) not in inside and r["start"] >= first - 0.05]
    if outside:
        out["(between actions)"] = {"n": len(outside), "runs": len(outside), "cpu": [r["cpu"] for r in outside],
                                    "profiles": []}
    for row in out.values():
        row["cpu_mean"], row["cpu_median"] = float(np.mean(row["cpu"])), float(np.median(row["cpu"]))
    return out


def profile_lines(by_action: dict, top: int = 14) -> list[str]:
    """Per action, the functions with the most cumulative CPU over its runs' profiles (seconds per action)."""
    import io
    import pstats

    lines = []
    for action, row in by_action.items():
        if not row["profiles"]:
            continue
        buf = io.StringIO()
        stats = pstats.Stats(*row["profiles"], stream=buf)
        stats.sort_stats("cumulative").print_stats(
            r"(dashboard/|metrics_core/|streamlit/elements|streamlit/runtime/(state|scriptrunner)|plotly/|pyarrow|pandas/)",
            top)
        lines.append(f"profile of {action} ({row['n']} actions, {row['runs']} runs; cumulative CPU s per action):")
        for line in buf.getvalue().splitlines():
            fields = line.split(None, 5)
            if len(fields) == 6 and fields[0][0].isdigit() and "function calls" not in line:
                lines.append(f"  {float(fields[3]) / row['n']:7.3f}  {fields[5].split('site-packages/')[-1]}")
    return lines


def settle(pid: int, budget: float, wait_first: float = 0.0, every: float = 2.0) -> float:
    """Wait ``wait_first`` seconds, then until the process's memory stops falling (or ``budget``
    seconds in all pass); the last reading."""
    deadline = time.monotonic() + budget
    time.sleep(min(wait_first, budget))
    readings = [rss_mb(pid)]
    while time.monotonic() < deadline:
        time.sleep(every)
        readings.append(rss_mb(pid))
        if len(readings) >= 4 and readings[-1] >= min(readings[:-3]) - 1:
            break  # three readings without a new low of more than 1 MiB
    return readings[-1]


async def _pause(rng: random.Random, think: float) -> None:
    """A user's pause before each action: ``think`` seconds on average, uniform between half and
    one and a half times it (so sessions that opened together drift apart, as users do)."""
    if think > 0:
        await asyncio.sleep(think * rng.uniform(0.5, 1.5))


# ---------------------------------------------------------------- the reviewer's path (websocket client)

@dataclasses.dataclass(frozen=True)
class Action:
    """One action of a session: the report's row (``name``, ``browser_plan``'s step names where they
    fit), the value it sets (for the messages), what it sends (``act``, answered by the end of the
    script run it starts) and what its answer must show (``check``: None when it does, else what
    is missing)."""

    name: str
    value: str
    act: Callable[[Session], Awaitable[RunResult]]
    check: Callable[[RunResult], str | None]


def verdict_metrics(result: RunResult) -> list[str] | None:
    """The metrics of Compare's verdict (the first table of the run with a ``metric`` column, in
    row order), or None when the run drew no such table."""
    for table in result.tables():
        if "metric" in table.column_names:
            return [str(m) for m in table.column("metric").to_pylist()]
    return None


def k_shown(k: int) -> Callable[[RunResult], str | None]:
    """Check: the answer shows cutoff ``k`` (:func:`shows_cutoff`)."""
    return lambda result: None if shows_cutoff(result, k) else f"the page does not show K = {k}"


def page_shown(title: str, k: int) -> Callable[[RunResult], str | None]:
    """Check: the page titled ``title`` is drawn, at cutoff ``k``."""
    def check(result: RunResult) -> str | None:
        if title not in result.headings():
            return f"no {title!r} heading (headings: {', '.join(result.headings()[:4]) or 'none'})"
        return k_shown(k)(result)
    return check


def compare_shows(metrics: list[str] | None = None, k: int | None = None) -> Callable[[RunResult], str | None]:
    """Check: Compare's verdict is drawn, for exactly ``metrics`` (in any order) when given, and with
    every metric at cutoff ``k`` when given (a metric without a cutoff, ``r_precision``, passes);
    with neither, the page's notice that no metric is chosen also passes (it is then picked again)."""
    def check(result: RunResult) -> str | None:
        if COMPARE_TITLE not in result.headings():
            return f"no {COMPARE_TITLE!r} heading"
        shown = verdict_metrics(result)
        if shown is None:
            if metrics is None and COMPARE_EMPTY in result.texts():
                return None
            return "no verdict table"
        if metrics is not None and set(shown) != set(metrics):
            return f"the verdict shows {', '.join(sorted(set(shown)))}, not {', '.join(sorted(metrics))}"
        if k is not None and any("@" in m and not m.endswith(f"@{k}") for m in shown):
            return f"the verdict shows {', '.join(sorted(set(shown)))}, not at K = {k}"
        return None
    return check


def _chosen(session: Session, key: str) -> list[str]:
    return list(session.widgets[session.widget_id(key)].string_array_value.data)


def _set_k(name: str, k: int, check: Callable[[RunResult], str | None]) -> Action:
    return Action(name, f"K = {k}", lambda s: s.set_widget("k", k), check)


def _repick(k: int) -> Action:
    """Compare's metric picked again when a new K dropped the chosen one (browser_plan's step)."""
    return Action("Compare: metric picked again after K", f"ndcg@{k}",
                  lambda s: s.set_widget("compare_metrics", [f"ndcg@{k}"]), compare_shows([f"ndcg@{k}"]))


def reviewer_round(round_: int, seed: int):
    """The actions of round ``round_`` of session ``seed`` on an analysis of several models, made
    one at a time by the generator (each may depend on what the previous answer showed, sent back
    with ``generator.send(result)``): back on the Overview (rounds after the first), K changed
    there, Compare opened, its compared metric changed (ndcg@K <-> map@K), recall@K added, K
    changed on Compare. A new K can drop Compare's chosen metrics (their labels change): when the
    page then asks for a metric it is picked again, as :mod:`benchmarks.browser_plan` does.
    The K values follow ``browser_plan.K_NEW`` from an offset per session, so sessions ask for
    different cutoffs at the same moment and every change is a change."""
    from benchmarks.browser_plan import K_NEW

    k_overview = K_NEW[(seed + 2 * round_) % len(K_NEW)]
    k_compare = K_NEW[(seed + 2 * round_ + 1) % len(K_NEW)]
    session: Session = yield None  # the caller sends the session first
    if round_ > 0:
        k = session.widgets[session.widget_id("k")].int_value
        yield Action("open Overview (again)", "Overview", lambda s: s.switch_page("overview"),
                     page_shown("Overview", k))
    yield _set_k("Overview: K", k_overview, page_shown("Overview", k_overview))
    result = yield Action("open Compare", "Compare", lambda s: s.switch_page("compare"),
                          compare_shows(k=k_overview))
    if verdict_metrics(result) is None:
        yield _repick(k_overview)
    metric = f"map@{k_overview}" if _chosen(session, "compare_metrics") != [f"map@{k_overview}"] \
        else f"ndcg@{k_overview}"
    yield Action("Compare: metric", metric, lambda s: s.set_widget("compare_metrics", [metric]),
                 compare_shows([metric]))
    added = f"recall@{k_overview}"
    yield Action("Compare: per-user metric", f"add {added}",
                 lambda s: s.set_widget("compare_metrics", [*_chosen(s, "compare_metrics"), added]),
                 compare_shows([metric, added]))
    result = yield _set_k("Compare: K", k_compare, compare_shows(k=k_compare))
    if verdict_metrics(result) is None:
        yield _repick(k_compare)


async def _reviewer_actions(session: Session, rounds: int, think: float, rng: random.Random, seed: int,
                            log: dict) -> None:
    """``rounds`` rounds of :func:`reviewer_round` (via ``reviewer_round`` looked up at call time),
    each action timed, counted and checked into ``log``."""
    for round_ in range(rounds):
        plan = reviewer_round(round_, seed)
        next(plan)
        action = plan.send(session)
        while True:
            await _pause(rng, think)
            result = await action.act(session)
            _record(log, action.name, result, f"session {seed}, round {round_ + 1}, {action.name} = {action.value}",
                    action.check)
            try:
                action = plan.send(result)
            except StopIteration:
                break


def _record(log: dict, name: str, result: RunResult, where: str,
            check: Callable[[RunResult], str | None] | None = None) -> None:
    """Time, count and check one answer: the run must finish without an exception element and,
    with ``check``, show what the action set."""
    log["timings"].append((name, result.seconds))
    log.setdefault("spans", []).append((name, time.time() - result.seconds, time.time()))
    log["runs"] += result.runs
    log["bytes"].append(result.bytes_received)
    log["errors"].extend(f"{where}: {e}" for e in result.exceptions)
    if result.status != "finished":
        log["errors"].append(f"{where}: script {result.status}")
    elif check is not None:
        missing = check(result)
        if missing:
            log["errors"].append(f"{where}: {missing}")


# ---------------------------------------------------------------- websocket client

async def _ws_session(url: str, page: str, steps: int, think: float, seed: int, log: dict,
                      timeout: float, opened: "asyncio.Barrier", query: str = "", hold: float = 0.0,
                      probe=None, walk: str = "k") -> None:
    rng = random.Random(seed)
    path, title = PAGES[page]
    path = path or (title.lower() if query else "")  # a snapshot opens on its Brief by default
    session = None
    try:
        session, first = await Session.open(url, query_string=query, page=path, timeout=timeout)
        _record(log, f"open {title}", first, f"session {seed}, open",
                page_shown(title, 10) if walk == "reviewer" else None)
        await opened.wait()  # every session changes K at the same time
        if hold > 0:
            await asyncio.sleep(hold)
            if seed == 0 and probe is not None:
                log["rss_open"] = probe()  # every session is open (and idle) now
            await opened.wait()  # none leaves before the reading
        if walk == "reviewer":
            await _reviewer_actions(session, steps, think, rng, seed, log)
            return
        k = session.widgets[session.widget_id("k")].int_value
        for step in range(steps):
            await _pause(rng, think)
            k = rng.choice([c for c in CUTOFFS if c != k])  # always a change, so always a run
            result = await session.set_widget("k", k)
            _record(log, "change K", result, f"session {seed}, K = {k}", k_shown(k))
    except Exception as exc:  # noqa: BLE001 - reported in the results, the run goes on
        log["errors"].append(f"session {seed}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        opened.abort()  # the others must not wait for this one
    finally:
        if session is not None:
            await session.close()


async def _drive_websocket(url: str, sessions: int, steps: int, think: float, page: str,
                           timeout: float, query: str = "", hold: float = 0.0, probe=None, walk: str = "k") -> dict:
    log: dict = {"timings": [], "errors": [], "runs": 0, "bytes": []}
    opened = asyncio.Barrier(sessions)
    await asyncio.gather(*(_ws_session(url, page, steps, think, i, log, timeout, opened, query, hold, probe, walk)
                           for i in range(sessions)))
    return log


# ---------------------------------------------------------------- browser client

async def _idle(page, timeout_ms: int) -> None:
    await page.wait_for_selector(IDLE, timeout=timeout_ms)
    await page.wait_for_timeout(150)
    await page.wait_for_selector(IDLE, timeout=timeout_ms)


async def _browser_session(browser, url: str, page_name: str, steps: int, think: float, seed: int,
                           log: dict, timeout_ms: int, opened: "asyncio.Barrier") -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    rng = random.Random(seed)
    path, title = PAGES[page_name]
    try:
        start = time.perf_counter()
        await page.goto(f"{url}/{path}")
        await _idle(page, timeout_ms)
        log["timings"].append((f"open {title}", time.perf_counter() - start))
        log["runs"] += 1
        await opened.wait()  # every session changes K at the same time
        k_input = page.locator('[data-testid="stSidebar"] .st-key-k input')
        for _ in range(steps):
            await _pause(rng, think)
            k = rng.choice(CUTOFFS)
            start = time.perf_counter()
            await k_input.fill(str(k))
            await k_input.press("Enter")
            try:
                await page.wait_for_selector(RUNNING, timeout=1500)
                log["runs"] += 1
            except Exception:  # noqa: BLE001 - the same K again: no rerun
                pass
            await _idle(page, timeout_ms)
            log["timings"].append(("change K", time.perf_counter() - start))
            if await page.locator('[data-testid="stException"]').count():
                log["errors"].append(f"session {seed}: exception shown after K = {k}")
    except Exception as exc:  # noqa: BLE001 - reported in the results, the run goes on
        log["errors"].append(f"session {seed}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        opened.abort()
    finally:
        await context.close()


async def _drive_browser(url: str, sessions: int, steps: int, think: float, page: str,
                         timeout: float) -> dict:
    from playwright.async_api import async_playwright

    timeout_ms = int(timeout * 1000)
    log: dict = {"timings": [], "errors": [], "runs": 0, "bytes": []}
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
        opened = asyncio.Barrier(sessions)
        await asyncio.gather(*(_browser_session(browser, url, page, steps, think, i, log, timeout_ms, opened)
                               for i in range(sessions)))
        await browser.close()
    return log


# ---------------------------------------------------------------- the run and its report

def _stats(values: list[float]) -> dict:
    array = np.array(values, dtype=float)
    return {"n": int(array.size), "p50": float(np.percentile(array, 50)),
            "p95": float(np.percentile(array, 95)), "max": float(array.max())}


def summarise(timings: list, elapsed: float, runs: int | None = None, opening: str | None = None) -> dict:
    """p50 / p95 / max seconds per action and over every action but ``opening`` (the link each
    session opens first; ``overall``, absent when nothing else was timed), and script runs per
    second overall."""
    out: dict = {"actions": {}}
    for action in dict.fromkeys(a for a, _ in timings):
        out["actions"][action] = _stats([t for a, t in timings if a == action])
    after_opening = [t for a, t in timings if a != opening]
    if after_opening:
        out["overall"] = _stats(after_opening)
    count = len(timings) if runs is None else runs
    out["runs_per_second"] = count / elapsed if elapsed > 0 else float("nan")
    return out


async def warm_up(url: str, page: str, timeout: float, query: str = "") -> None:
    """One untimed visit: the server imports the page, builds the demo and loads its kernels
    (with ``query``, opens that analysis: the code a first analysis loads is loaded then)."""
    path, title = PAGES[page]
    session, _ = await Session.open(url, query_string=query, page=path or (title.lower() if query else ""),
                                    timeout=timeout)
    await session.close()


def make_snapshot(store_dir: Path, megabytes: float) -> tuple[str, int]:
    """Save, in the analysis store at ``store_dir``, a snapshot of a synthetic result file of about
    ``megabytes`` MB (CSV: user_id, item_id, score; 100 candidates a user) and its ground truth;
    its id and the result file's size in bytes."""
    from benchmarks.datagen import generate
    from metrics_core.store import AnalysisStore

    users = max(1, int(megabytes * 1e6 / 3870))  # about 38.7 bytes a row, 100 rows a user
    data = generate(users)
    run_csv = data.run.to_csv(index=False).encode()
    qrels_csv = data.qrels.to_csv(index=False).encode()
    settings = {"kind": "snapshot", "runs": [{"model": "big_model", "mapping": {}}],
                "files": {"qrels": {"mapping": {}}}, "notes": "", "view": {}, "demo": False}
    store = AnalysisStore(store_dir)
    try:
        receipt = store.save_snapshot([("big_model.csv", run_csv, "run"), ("qrels.csv", qrels_csv, "qrels")],
                                      settings, title="load test")
    finally:
        store.close()
    return receipt.id, len(run_csv)


def bench_files(directory: Path, users: int, items: int):
    """The browser benchmark's files (:func:`benchmarks.browser_data.write_files`: three models of
    ``users`` x ``items`` rows in TREC, CSV and Parquet, a ground truth, user attributes) in
    ``directory``: written there, or the ones written before for the same size (its
    ``load_test_files.json`` names them)."""
    from benchmarks.browser_data import BenchFiles, write_files

    manifest = directory / "load_test_files.json"
    try:
        kept = json.loads(manifest.read_text())
        paths = [Path(p) for p in [*kept["runs"].values(), kept["qrels"], kept["attributes"]]]
        if (kept["users"], kept["items"]) == (users, items) and all(p.exists() for p in paths):
            return BenchFiles(runs={m: Path(p) for m, p in kept["runs"].items()}, qrels=Path(kept["qrels"]),
                              attributes=Path(kept["attributes"]), users=users, rows_per_model=users * items,
                              judgments=kept["judgments"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # no manifest, or not one this function wrote: the files are written again
    files = write_files(directory, users, items)
    manifest.write_text(json.dumps({"users": users, "items": items, "judgments": files.judgments,
                                    "runs": {m: str(p) for m, p in files.runs.items()},
                                    "qrels": str(files.qrels), "attributes": str(files.attributes)}))
    return files


def make_analysis(store_dir: Path, files) -> tuple[str, int]:
    """Save ``files`` (:func:`bench_files`) in the analysis store at ``store_dir`` as a snapshot,
    through the dashboard's own saving (:func:`dashboard.sources.save_shared`: each run file a
    model named after its file, the ground truth and the user attributes in their roles, exact
    bytes, default view), as an upload followed by Share would store them; its id and the bytes
    of the three result files."""
    from dashboard import sources
    from metrics_core.store import AnalysisStore

    src = sources.Sources(
        runs={sources.model_name(p.name): sources.Blob.of(p.name, p.read_bytes()) for p in files.runs.values()},
        qrels=sources.Blob.of(files.qrels.name, files.qrels.read_bytes()),
        user_attributes=sources.Blob.of(files.attributes.name, files.attributes.read_bytes()))
    store = AnalysisStore(store_dir)
    try:
        receipt = sources.save_shared(src, "load test: three models", store=store)
    finally:
        store.close()
    return receipt.id, sum(blob.size for blob in src.runs.values())


def _in_thread(coroutine, timeout: float):
    # a thread of its own: the caller may already run an event loop (Playwright's sync API does)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coroutine, timeout)).result()


def run(sessions: int = 8, steps: int = 10, url: str | None = None, timeout: float = 600,
        extra_env: dict | None = None, settle_budget: float = 0.0, client: str = "websocket",
        think: float = 0.0, page: str = "overview", ttl: float | None = None,
        snapshot_mb: float = 0.0, hold: float = 0.0, probe: str | None = None,
        warm_analysis: bool = False, walk: str = "k", users: int = 20_000, items: int = 50,
        data_dir: Path | None = None, store_dir: Path | None = None, cpu_probe: Path | None = None,
        cpu_profile: bool = False) -> dict:
    """Drive the sessions against ``url`` or a server started here; the results as a dict.

    ``ttl``: the server started here keeps disconnected sessions and cache entries that many
    seconds, and after the sessions close the memory is read once it stops falling (at most
    ``settle_budget`` seconds, by default four times the ttl plus 30 s). ``snapshot_mb``: every
    session opens a snapshot of a result file that large (websocket client, a server started
    here); ``hold``: seconds every session stays open once all have opened, when the memory
    "with the sessions open" is read. ``probe``: None, ``"memory"`` or ``"tracemalloc"``: readings of
    ``benchmarks/memory_probe`` in the server started here (see :class:`Probe`), compared in
    ``result["probe"]``. ``warm_analysis``: the untimed first visit opens the snapshot, and the
    memory "before" is read once its cache entries expired (what stays is what any first analysis
    loads once per server: code), so what the N sessions leave is theirs alone.
    ``walk="reviewer"``: the started server's store holds one analysis of three models of ``users``
    x ``items`` rows (:func:`bench_files`, written in ``data_dir`` or a temporary folder, saved by
    :func:`make_analysis`); the untimed first visit opens it on the Overview, then every session
    opens it on the Overview and walks ``steps`` rounds of :func:`reviewer_round`; with ``url`` (a
    server running elsewhere), ``store_dir`` names that server's store (METRICS_CORE_STORE_DIR).
    ``cpu_probe``: a folder where the server started here writes each script run's CPU seconds
    (``benchmarks/cpu_probe``; with ``cpu_profile``, its cProfile statistics too); ``result["cpu_by_action"]``
    then gives the CPU seconds of every timed action's runs (attributed by time: one session).
    """
    if snapshot_mb and (url is not None or client != "websocket"):
        raise ValueError("--snapshot-mb needs the websocket client and a server started here")
    if walk == "reviewer" and (client != "websocket" or (url is None) == (store_dir is not None)):
        raise ValueError("--path reviewer needs the websocket client, and --store-dir exactly when --url is given")
    if client not in CLIENTS or page not in PAGES or walk not in PATHS:
        raise ValueError(f"client must be one of {CLIENTS}, page one of {tuple(PAGES)}, path one of {PATHS}")
    if walk == "reviewer" and (snapshot_mb or page != "overview"):
        raise ValueError("--path reviewer opens its own analysis on the Overview (no --snapshot-mb, no --page)")
    env = dict(extra_env or {})
    if ttl:
        env.update(STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL=str(max(1, round(ttl))),  # an integer option
                   METRICS_CORE_DASHBOARD_CACHE_TTL=f"{ttl:g}")
        settle_budget = settle_budget or 4 * ttl + 30
    proc, log_dir, keep_log, reader = None, None, True, None
    if cpu_probe is not None and url is not None:
        raise ValueError("--cpu-probe needs a server started here (no --url)")
    if url is None:
        log_dir = Path(tempfile.mkdtemp(prefix="load_test_"))
        env.setdefault("METRICS_CORE_STORE_DIR", str(log_dir / "store"))
        reader = Probe(log_dir / "probe", tracemalloc=probe == "tracemalloc") if probe else None
        if reader is not None:
            env.update(reader.env())
        if cpu_probe is not None:
            env.update(cpu_probe_env(cpu_probe, cpu_profile, env.get("PYTHONPATH")))
        proc, url = start_server(ROOT / "dashboard" / "serve.py", extra_env=env, log_path=log_dir / "server.log")
    query, file_bytes, own_data = "", 0, None
    try:
        pid = proc.pid if proc is not None else None
        if snapshot_mb:
            analysis, file_bytes = make_snapshot(Path(env["METRICS_CORE_STORE_DIR"]), snapshot_mb)
            query = f"analysis={analysis}"
        elif walk == "reviewer":
            if data_dir is None:
                own_data = data_dir = Path(tempfile.mkdtemp(prefix="load_test_data_"))
            files = bench_files(data_dir, users, items)
            analysis, file_bytes = make_analysis(store_dir or Path(env["METRICS_CORE_STORE_DIR"]), files)
            query, warm_analysis = f"analysis={analysis}", True  # the analysis is read once, untimed
        # the demo's (or the snapshot's) first visit: not what is measured
        _in_thread(warm_up(url, page, timeout, query if warm_analysis else ""), timeout)
        if warm_analysis and pid and ttl:
            settle(pid, settle_budget, wait_first=1.25 * ttl + 3)
        load_start = os.getloadavg()
        if reader is not None:
            reader.read("before")
        with MemoryWatch(pid) as watch:
            before = rss_mb(pid) if pid else float("nan")
            cpu_start, start = (process_cpu(pid) if pid else float("nan")), time.perf_counter()
            if client == "websocket":
                def read_open() -> float:
                    rss = rss_mb(pid)
                    if reader is not None:
                        reader.read("open")
                    return rss
                log = _in_thread(_drive_websocket(url, sessions, steps, think, page, timeout, query, hold,
                                                  read_open if pid else None, walk), timeout)
            else:
                log = _in_thread(_drive_browser(url, sessions, steps, think, page, timeout), timeout)
            elapsed = time.perf_counter() - start
            cpu = (process_cpu(pid) - cpu_start) if pid else float("nan")
        closed = rss_mb(pid) if pid else float("nan")
        # sessions and cache entries expire ttl seconds after their last use; the sweeper looks
        # every ttl / 4 seconds (at least 1 s) and then returns the freed memory
        after = settle(pid, settle_budget, wait_first=1.25 * (ttl or 0) + 3) \
            if pid and settle_budget > 0 else float("nan")
        healthy = proc is None or proc.poll() is None
        compared = []
        if reader is not None and healthy:
            reader.read("settled")
            compared = [*(reader.compare("before", "open") if (reader.folder / "open.json").exists() else []),
                        *reader.compare("before", "settled")]
        result = summarise(log["timings"], elapsed, log["runs"], opening=f"open {PAGES[page][1]}")
        result.update(
            client=client, page=page, sessions=sessions, warm_analysis=warm_analysis, steps=steps, think=think, ttl=ttl,
            snapshot_file_mb=file_bytes / 1e6, hold=hold, path=walk,
            models_rows=(users * items) if walk == "reviewer" else 0,
            errors=log["errors"], server_alive=healthy, script_runs=log["runs"], seconds=elapsed,
            server_cpu_seconds=cpu, loadavg={"start": load_start, "end": os.getloadavg()},
            received_kib_median=float(np.median(log["bytes"]) / 1024) if log["bytes"] else float("nan"),
            # "before": after the untimed first visit (demo built and cached, kernels loaded)
            cpu_by_action=cpu_by_action(cpu_probe, log.get("spans", [])) if cpu_probe is not None else None,
            rss_mb={"before": before, "open": log.get("rss_open", float("nan")), "peak": watch.peak,
                    "after_sessions": closed, "after_settle": after}, probe=compared)
        keep_log = bool(log["errors"]) or not healthy
        if log_dir is not None and keep_log:
            result["server_log"] = str(log_dir / "server.log")
        return result
    finally:
        if proc is not None:
            stop_process(proc)
        if log_dir is not None and not keep_log:  # the server's log and store are kept after a failure
            shutil.rmtree(log_dir, ignore_errors=True)
        if own_data is not None:
            shutil.rmtree(own_data, ignore_errors=True)


def report(result: dict) -> str:
    """The results as the lines the command prints."""
    r = result
    cpu = r["server_cpu_seconds"]
    cpu_text = ("server CPU not measured (a server started elsewhere)" if np.isnan(cpu) else
                f"server CPU {cpu:.1f} s ({cpu / max(r['script_runs'], 1):.2f} s per run)")
    opened = (f", every session on a snapshot of a {r['snapshot_file_mb']:.0f} MB result file"
              if r.get("snapshot_file_mb") else "")
    reviewer = r.get("path") == "reviewer"
    if reviewer:
        opened = (f", every session on one stored analysis of 3 models x {r['models_rows']:,} rows "
                  f"({r['snapshot_file_mb']:.0f} MB of result files), opened once before (untimed)")
        done = f"{r['steps']} rounds of the reviewer's path (Overview K, open Compare, metric, add a metric, K)"
    else:
        opened += ", memory before read after a first visit to it expired" if r.get("warm_analysis") else ""
        done = f"{r['steps']} K changes"
    lines = [f"{r['client']} client, page {r['page']}{opened}, {r['sessions']} sessions x {done}, "
             f"think {r['think']:g} s: {r['script_runs']} script runs in {r['seconds']:.1f} s = "
             f"{r['runs_per_second']:.2f} runs/s; {cpu_text}",
             "| action | n | p50 s | p95 s | max s |", "|---|---|---|---|---|"]
    rows = list(r["actions"].items())
    if r.get("overall") and len(rows) > 2:
        rows.append(("every action after the opening", r["overall"]))
    for action, a in rows:
        lines.append(f"| {action} | {a['n']} | {a['p50']:.2f} | {a['p95']:.2f} | {a['max']:.2f} |")
    mem = r["rss_mb"]
    held = (f", with the sessions open ({r['hold']:g} s after the last opened) {mem['open']:.0f}"
            if not np.isnan(mem.get("open", float("nan"))) else "")
    lines.append(("server RSS MiB: before {before:.0f}" + held + ", peak {peak:.0f}, after the sessions closed "
                  "{after_sessions:.0f}").format(**mem)
                 + (f", after settling {mem['after_settle']:.0f}" if not np.isnan(mem["after_settle"]) else ""))
    if r["client"] == "websocket":
        lines.append(f"median bytes received per action: {r['received_kib_median']:.0f} KiB")
    load = r["loadavg"]
    lines.append("load average (1, 5, 15 min) at start {}; at end {}".format(
        *(", ".join(f"{x:.2f}" for x in load[when]) for when in ("start", "end"))))
    lines.extend(r.get("probe") or [])
    if r.get("cpu_by_action"):
        lines += ["| action (server CPU per action) | n | runs | mean CPU s | median CPU s |", "|---|---|---|---|---|"]
        lines += [f"| {a} | {c['n']} | {c['runs']} | {c['cpu_mean']:.3f} | {c['cpu_median']:.3f} |"
                  for a, c in r["cpu_by_action"].items()]
        lines += profile_lines(r["cpu_by_action"])
    lines.append(f"errors: {'; '.join(r['errors'][:10]) if r['errors'] else 'none'}"
                 + (f" (and {len(r['errors']) - 10} more)" if len(r["errors"]) > 10 else "")
                 + (f"; server log: {r['server_log']}" if r.get("server_log") else ""))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", choices=CLIENTS, default="websocket",
                        help="websocket: the server alone (default); browser: headless Chromium sessions")
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10, help="K changes per session")
    parser.add_argument("--think", type=float, default=0.0,
                        help="mean pause in seconds between a session's actions (default 0: worst case)")
    parser.add_argument("--page", choices=tuple(PAGES), default="overview", help="the page every session opens")
    parser.add_argument("--ttl", type=float, default=None,
                        help="seconds the started server keeps closed sessions and cache entries; "
                             "then wait for its memory to settle")
    parser.add_argument("--snapshot-mb", type=float, default=0.0,
                        help="every session opens a snapshot of a result file of about this many MB (CSV)")
    parser.add_argument("--hold", type=float, default=0.0,
                        help="seconds every session stays open once all have opened (memory read then)")
    parser.add_argument("--probe", choices=("memory", "tracemalloc"), default=None,
                        help="read what holds the started server's memory (tracemalloc: also Python "
                             "allocations by line, slower) after the first visit, with the sessions open "
                             "and after they left")
    parser.add_argument("--warm-analysis", action="store_true",
                        help="the first (untimed) visit opens the snapshot and the memory before is read once "
                             "its cache entries expired (needs --snapshot-mb and --ttl)")
    parser.add_argument("--path", choices=PATHS, default="k", dest="walk",
                        help="k: change K on --page (default); reviewer: every session opens one stored analysis "
                             "of three models on the Overview and walks the Overview and Compare (--steps rounds)")
    parser.add_argument("--users", type=int, default=20_000,
                        help="--path reviewer: users per model (default 20,000 x --items 50 = 1M rows a model)")
    parser.add_argument("--items", type=int, default=50, help="--path reviewer: rows per user and model")
    parser.add_argument("--data-dir", type=Path, default=None,
                        help="--path reviewer: folder of the generated files, reused when it holds them for the "
                             "same size (default: a temporary folder)")
    parser.add_argument("--url", default=None, help="a running server on 127.0.0.1 (default: start one)")
    parser.add_argument("--store-dir", type=Path, default=None,
                        help="--path reviewer with --url: that server's analysis store (its METRICS_CORE_STORE_DIR)")
    parser.add_argument("--timeout", type=float, default=600, help="stop after this many seconds")
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--cpu-probe", type=Path, default=None,
                        help="folder (emptied) where the started server writes each script run's CPU seconds; "
                             "the report adds the CPU seconds per action (use --sessions 1)")
    parser.add_argument("--cpu-profile", action="store_true",
                        help="with --cpu-probe: also a cProfile of every script run, and the report the functions "
                             "with the most CPU per action (the profiler's overhead inflates the CPU seconds)")
    args = parser.parse_args()
    if args.url and not args.url.startswith(("http://127.0.0.1", "http://localhost")):
        parser.error("the load test only targets a server on this machine (127.0.0.1)")
    if args.sessions < 1 or args.steps < 0 or args.think < 0 or (args.ttl is not None and args.ttl <= 0):
        parser.error("--sessions must be >= 1, --steps and --think >= 0, --ttl > 0")
    if args.snapshot_mb < 0 or args.hold < 0:
        parser.error("--snapshot-mb and --hold must be >= 0")
    if args.warm_analysis and not (args.snapshot_mb and args.ttl):
        parser.error("--warm-analysis needs --snapshot-mb and --ttl")
    if args.snapshot_mb and (args.url or args.client != "websocket"):
        parser.error("--snapshot-mb needs the websocket client and a server started here (no --url)")
    if args.walk == "reviewer" and (args.client != "websocket" or bool(args.url) != bool(args.store_dir)):
        parser.error("--path reviewer needs the websocket client, and --store-dir (the server's "
                     "METRICS_CORE_STORE_DIR) exactly when --url is given")
    if args.walk == "reviewer" and (args.snapshot_mb or args.page != "overview" or args.warm_analysis):
        parser.error("--path reviewer opens its own analysis on the Overview: no --snapshot-mb, --page or "
                     "--warm-analysis")
    from benchmarks.datagen import MAX_RELEVANT

    if args.users < 2 or args.items < MAX_RELEVANT:
        parser.error(f"--users must be at least 2 and --items at least {MAX_RELEVANT} (the generator gives a user "
                     f"up to {MAX_RELEVANT} relevant items)")
    try:
        result = run(args.sessions, args.steps, args.url, args.timeout, client=args.client,
                     think=args.think, page=args.page, ttl=args.ttl, snapshot_mb=args.snapshot_mb, hold=args.hold,
                     probe=args.probe, warm_analysis=args.warm_analysis, walk=args.walk, users=args.users,
                     items=args.items, data_dir=args.data_dir, store_dir=args.store_dir,
                     cpu_probe=args.cpu_probe, cpu_profile=args.cpu_profile)
    except (TimeoutError, asyncio.TimeoutError):
        sys.exit(f"load test: stopped after --timeout {args.timeout:g} s")
    except RuntimeError as exc:  # the server did not start
        sys.exit(f"load test: {exc}")
    except OSError as exc:  # --data-dir or --store-dir cannot be written
        sys.exit(f"load test: {exc.filename or ''}: {exc.strerror or exc}; give a folder this user can write")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    print(report(result))
    if result["errors"] or not result["server_alive"]:
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
