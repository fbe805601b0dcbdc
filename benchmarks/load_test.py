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
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

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


# ---------------------------------------------------------------- websocket client

async def _ws_session(url: str, page: str, steps: int, think: float, seed: int, log: dict,
                      timeout: float, opened: "asyncio.Barrier", query: str = "", hold: float = 0.0,
                      probe=None) -> None:
    rng = random.Random(seed)
    path, title = PAGES[page]
    path = path or (title.lower() if query else "")  # a snapshot opens on its Brief by default
    session = None
    try:
        session, first = await Session.open(url, query_string=query, page=path, timeout=timeout)
        log["timings"].append((f"open {title}", first.seconds))
        log["runs"] += first.runs
        log["bytes"].append(first.bytes_received)
        log["errors"].extend(f"session {seed}, open: {e}" for e in first.exceptions)
        if first.status != "finished":
            log["errors"].append(f"session {seed}, open: script {first.status}")
        await opened.wait()  # every session changes K at the same time
        if hold > 0:
            await asyncio.sleep(hold)
            if seed == 0 and probe is not None:
                log["rss_open"] = probe()  # every session is open (and idle) now
            await opened.wait()  # none leaves before the reading
        k = session.widgets[session.widget_id("k")].int_value
        for step in range(steps):
            await _pause(rng, think)
            k = rng.choice([c for c in CUTOFFS if c != k])  # always a change, so always a run
            result = await session.set_widget("k", k)
            log["timings"].append(("change K", result.seconds))
            log["runs"] += result.runs
            log["bytes"].append(result.bytes_received)
            where = f"session {seed}, K = {k}"
            log["errors"].extend(f"{where}: {e}" for e in result.exceptions)
            if result.status != "finished":
                log["errors"].append(f"{where}: script {result.status}")
            elif not shows_cutoff(result, k):
                log["errors"].append(f"{where}: the page does not show the new K")
    except Exception as exc:  # noqa: BLE001 - reported in the results, the run goes on
        log["errors"].append(f"session {seed}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
        opened.abort()  # the others must not wait for this one
    finally:
        if session is not None:
            await session.close()


async def _drive_websocket(url: str, sessions: int, steps: int, think: float, page: str,
                           timeout: float, query: str = "", hold: float = 0.0, probe=None) -> dict:
    log: dict = {"timings": [], "errors": [], "runs": 0, "bytes": []}
    opened = asyncio.Barrier(sessions)
    await asyncio.gather(*(_ws_session(url, page, steps, think, i, log, timeout, opened, query, hold, probe)
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

def summarise(timings: list, elapsed: float, runs: int | None = None) -> dict:
    """p50 / p95 / max seconds per action, and script runs per second overall."""
    out: dict = {"actions": {}}
    for action in dict.fromkeys(a for a, _ in timings):
        values = np.array([t for a, t in timings if a == action])
        out["actions"][action] = {"n": int(values.size), "p50": float(np.percentile(values, 50)),
                                  "p95": float(np.percentile(values, 95)), "max": float(values.max())}
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


def _in_thread(coroutine, timeout: float):
    # a thread of its own: the caller may already run an event loop (Playwright's sync API does)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, asyncio.wait_for(coroutine, timeout)).result()


def run(sessions: int = 8, steps: int = 10, url: str | None = None, timeout: float = 600,
        extra_env: dict | None = None, settle_budget: float = 0.0, client: str = "websocket",
        think: float = 0.0, page: str = "overview", ttl: float | None = None,
        snapshot_mb: float = 0.0, hold: float = 0.0, probe: str | None = None,
        warm_analysis: bool = False) -> dict:
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
    """
    if snapshot_mb and (url is not None or client != "websocket"):
        raise ValueError("--snapshot-mb needs the websocket client and a server started here")
    if client not in CLIENTS or page not in PAGES:
        raise ValueError(f"client must be one of {CLIENTS} and page one of {tuple(PAGES)}")
    env = dict(extra_env or {})
    if ttl:
        env.update(STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL=str(max(1, round(ttl))),  # an integer option
                   METRICS_CORE_DASHBOARD_CACHE_TTL=f"{ttl:g}")
        settle_budget = settle_budget or 4 * ttl + 30
    proc, log_dir, keep_log, reader = None, None, True, None
    if url is None:
        log_dir = Path(tempfile.mkdtemp(prefix="load_test_"))
        env.setdefault("METRICS_CORE_STORE_DIR", str(log_dir / "store"))
        reader = Probe(log_dir / "probe", tracemalloc=probe == "tracemalloc") if probe else None
        if reader is not None:
            env.update(reader.env())
        proc, url = start_server(ROOT / "dashboard" / "serve.py", extra_env=env, log_path=log_dir / "server.log")
    query, file_bytes = "", 0
    try:
        pid = proc.pid if proc is not None else None
        if snapshot_mb:
            analysis, file_bytes = make_snapshot(Path(env["METRICS_CORE_STORE_DIR"]), snapshot_mb)
            query = f"analysis={analysis}"
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
                                                  read_open if pid else None), timeout)
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
        result = summarise(log["timings"], elapsed, log["runs"])
        result.update(
            client=client, page=page, sessions=sessions, warm_analysis=warm_analysis, steps=steps, think=think, ttl=ttl,
            snapshot_file_mb=file_bytes / 1e6, hold=hold,
            errors=log["errors"], server_alive=healthy, script_runs=log["runs"], seconds=elapsed,
            server_cpu_seconds=cpu, loadavg={"start": load_start, "end": os.getloadavg()},
            received_kib_median=float(np.median(log["bytes"]) / 1024) if log["bytes"] else float("nan"),
            # "before": after the untimed first visit (demo built and cached, kernels loaded)
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


def report(result: dict) -> str:
    """The results as the lines the command prints."""
    r = result
    cpu = r["server_cpu_seconds"]
    cpu_text = ("server CPU not measured (a server started elsewhere)" if np.isnan(cpu) else
                f"server CPU {cpu:.1f} s ({cpu / max(r['script_runs'], 1):.2f} s per run)")
    opened = (f", every session on a snapshot of a {r['snapshot_file_mb']:.0f} MB result file"
              if r.get("snapshot_file_mb") else "")
    opened += ", memory before read after a first visit to it expired" if r.get("warm_analysis") else ""
    lines = [f"{r['client']} client, page {r['page']}{opened}, {r['sessions']} sessions x {r['steps']} K changes, "
             f"think {r['think']:g} s: {r['script_runs']} script runs in {r['seconds']:.1f} s = "
             f"{r['runs_per_second']:.2f} runs/s; {cpu_text}",
             "| action | n | p50 s | p95 s | max s |", "|---|---|---|---|---|"]
    for action, a in r["actions"].items():
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
    parser.add_argument("--url", default=None, help="a running server on 127.0.0.1 (default: start one)")
    parser.add_argument("--timeout", type=float, default=600, help="stop after this many seconds")
    parser.add_argument("--json", default=None, help="also write the results here")
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
    try:
        result = run(args.sessions, args.steps, args.url, args.timeout, client=args.client,
                     think=args.think, page=args.page, ttl=args.ttl, snapshot_mb=args.snapshot_mb, hold=args.hold,
                     probe=args.probe, warm_analysis=args.warm_analysis)
    except (TimeoutError, asyncio.TimeoutError):
        sys.exit(f"load test: stopped after --timeout {args.timeout:g} s")
    except RuntimeError as exc:  # the server did not start
        sys.exit(f"load test: {exc}")
    print(report(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    if result["errors"] or not result["server_alive"]:
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
