"""Click-to-answer times of the dashboard in a real browser, on 3 models x 1M rows.

    python3 -m benchmarks.dashboard_browser [--users 20000] [--items 50] [--rounds 1]
        [--formats trec,csv,parquet] [--plan path|full] [--sessions N] [--snapshot]
        [--repo DIR] [--only REGEX] [--json PATH] [--timeout 1800]

1. Data (``benchmarks/browser_data.py``): three models' results of ``--users`` x ``--items``
   rows each (default 20,000 x 50 = 1M rows per model), one file per format of ``--formats``
   (default one TREC run, one CSV file, one Parquet file; string ids), a ground truth of 5
   judged rows per user (100,000 rows at 20,000 users) and a user-attributes file
   (``segment``, ``activity``, ``country``, ``tenure`` in months), deterministic.
2. The command line on the same files (``python3 -m metrics_core evaluate`` as a process,
   the Overview's metrics at K = 10), ``--cli-repeats`` times, for the upload's ratio.
3. ``streamlit run dashboard/serve.py`` of ``--repo`` on 127.0.0.1 with a private analysis
   store (``METRICS_CORE_STORE_DIR`` in a temporary directory), fresh: no click before the
   measured ones; stopped by its PID at the end.
4. One headless Chromium (Debian's, 1400 x 1000, every host but 127.0.0.1 unresolvable):
   upload the three files and the ground truth on the Data page and open the Overview
   (one action, the sum of its three steps), upload the attributes, then ``--rounds``
   rounds of the steps of ``--plan`` (``benchmarks/browser_plan.py``: ``path`` is the
   reviewer's path through Compare, ``full`` every page and control), each timed by
   ``benchmarks/browser_actions.py`` from the click or key press to the answer.
5. ``--sessions N`` (N > 1): after the upload in one context, N browser contexts (each its
   own Chromium in its own thread) open the app, upload the same files (answered from the
   server's content-keyed cache) and run the plan at once; the table is over every session.
6. ``--snapshot``: the analysis is shared from the Share page, the server is restarted (same
   store, a new process that has not seen it), and the link is opened in a new browser
   context: the seconds until the brief is readable (title, verdict lines) and until it is
   complete (segments and failure groups drawn, no resampling pending). The restart waits until
   the snapshot's brief is kept in the store (computed once sharing, see
   ``dashboard/snapshot_brief.py``), and the report says how long that took.

Prints action -> n, p50, p95, max seconds; overall p50 / p95 / max of every interaction
after the upload, how many took over 1 s and 2 s, exceptions shown by the app, load
average at start and end, the server's peak RSS. Nothing is asserted (the machine is shared).
"""

from __future__ import annotations

import argparse
import sqlite3
import faulthandler
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
for _path in (ROOT, ROOT / "tests" / "browser"):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from benchmarks.browser_actions import Driver, Ready, Timing  # noqa: E402
from benchmarks.browser_data import FORMATS, BenchFiles, parse_formats, write_files  # noqa: E402
from benchmarks.browser_plan import path_steps, round_steps  # noqa: E402
from benchmarks.datagen import MAX_RELEVANT as MIN_ITEMS  # noqa: E402
from benchmarks.procfs import process_cpu  # noqa: E402
from dashboard_server import chromium_path, start_server, stop_process  # noqa: E402

# every host but 127.0.0.1 fails to resolve: the browser can reach nothing else
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
UPLOAD = "upload to Overview (3 runs + truth)"
UPLOAD_PARTS = ("upload: 3 run files", "upload: ground truth", "upload: open Overview")
SNAPSHOT_READABLE = "snapshot link, new server: brief readable"
SNAPSHOT_COMPLETE = "snapshot link, new server: brief complete"
NOT_INTERACTIONS = {UPLOAD, *UPLOAD_PARTS, "open app (demo data)", "upload: user attributes", "share: create the link",
                    SNAPSHOT_READABLE, SNAPSHOT_COMPLETE}
ATTRIBUTES = ["segment", "activity", "country", "tenure"]
ACTION_TIMEOUT_S = 300


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


#: the server process being measured (set by :func:`run`), whose CPU seconds the upload reads
SERVER_PID: int | None = None
#: server CPU seconds (user + system) of each upload step of the first session, filled by :func:`upload`
UPLOAD_CPU: dict[str, float] = {}


def peak_rss_mib(pid: int) -> float:
    """The process's high-water mark of resident memory (VmHWM), MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cli_metrics() -> list[str]:
    """The metrics the Overview computes on large data at K = 10 (ranking and scored rows)."""
    from dashboard import metric_lists

    return metric_lists.labels(metric_lists.RANKING, 10) + metric_lists.scored_labels()


def time_cli(repo: Path, files: BenchFiles, repeats: int, cpu: list[float] | None = None) -> list[float]:
    """Seconds of ``python3 -m metrics_core evaluate`` on the same files, one process per repeat
    (the CPU seconds of each, user + system, are appended to ``cpu`` when given)."""
    cmd = [sys.executable, "-m", "metrics_core", "evaluate", "--qrels", str(files.qrels), "--json",
           "--metrics", ",".join(cli_metrics())]
    for path in files.runs.values():
        cmd += ["--run", str(path)]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if cpu is not None:
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        if done.returncode != 0:
            raise RuntimeError(f"metrics_core evaluate failed: {done.stderr.strip().splitlines()[-1:]}")
    return times


def uploader(page, label: str):
    return page.locator('[data-testid="stFileUploader"]', has_text=label).first.locator('input[type="file"]')


def upload(d: Driver, files: BenchFiles) -> None:
    """The three run files, then the ground truth on the Data page, then the Overview: one
    action (the sum of the three steps, each from its trigger to its answer); then the attributes."""
    page = d.page
    d.go("Data")
    wait_upload = 120_000  # the script run starts only once the files have reached the server
    first = not UPLOAD_CPU  # concurrent sessions: the server's CPU is counted for the first upload only

    def step(name: str, *args):
        before = process_cpu(SERVER_PID)
        timing = d.time(name, *args)
        if first:
            UPLOAD_CPU[name] = process_cpu(SERVER_PID) - before
        return timing

    parts = [
        step(UPLOAD_PARTS[0], 0, "3 files", lambda: uploader(page, "Ranked results").set_input_files(
            [str(p) for p in files.runs.values()]), Ready("Data"), wait_upload),
        step(UPLOAD_PARTS[1], 0, files.qrels.name, lambda: uploader(page, "Ground truth").set_input_files(
            str(files.qrels)), Ready("Data"), wait_upload),
        step(UPLOAD_PARTS[2], 0, "Overview", d.nav("Overview").click, Ready.page("Overview")),
    ]
    d.record(Timing(UPLOAD, 0, "sum of the three steps", sum(p.seconds for p in parts),
                            all(p.rerun_seen for p in parts), any(p.timed_out for p in parts),
                            [e for p in parts for e in p.exceptions]))
    d.go("Data")
    d.time("upload: user attributes", 0, files.attributes.name, lambda: uploader(
        page, "User attributes").set_input_files(str(files.attributes)), Ready("Data"), wait_upload)


def steps_of(plan: str, round_: int, names: list[str]):
    return path_steps(round_, names, ATTRIBUTES) if plan == "path" else round_steps(round_, names)


def run_steps(d: Driver, rounds: int, names: list[str], only: re.Pattern | None, deadline: float,
              errors: list[str], action_timeout: float, plan: str = "path") -> None:
    """Every round's steps matching ``only``, until done or ``deadline`` (monotonic seconds)."""
    visited = {"Overview"}  # its first visit is the end of the upload
    last_page = None
    for r in range(rounds):
        for step in steps_of(plan, r, names):
            action = step.action
            if action.startswith("open "):
                action += " (again)" if step.page in visited else " (first visit)"
            repair = step.needed is not None and step.page == last_page  # puts the page back in order
            if only and not only.search(action) and not repair:
                continue
            remaining = deadline - time.monotonic()
            if remaining < 5:
                errors.append(f"stopped at round {r + 1}, {action}: the global timeout was reached")
                return
            d.timeout_ms = int(1000 * min(action_timeout, remaining))
            try:
                if not action.startswith("open "):
                    d.go(step.page)
                if step.needed and not step.needed(d):
                    continue
                trigger = step.prepare(d)
                result = d.time(action, r, step.value, trigger, step.answer())
                last_page = d.current  # the page the answer is on (Failures, after a regression row)
                d.page.keyboard.press("Escape")  # a multiselect's list stays open after a pick
                visited.add(d.current or step.page)
                if result.timed_out:
                    errors.append(f"round {r + 1}, {action} = {step.value}: no answer within "
                                  f"{d.timeout_ms / 1000:.0f} s")
                    d.current = None
            except Exception as exc:  # noqa: BLE001 - a widget not found: reported, the run goes on
                errors.append(f"round {r + 1}, {action} = {step.value}: {type(exc).__name__}: "
                              f"{str(exc).splitlines()[0][:200]}")
                d.page.keyboard.press("Escape")
                d.current = None


def new_page(browser):
    page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
    page.set_default_timeout(30_000)  # clicks and fills; script runs have their own timeout
    return page


def open_app(d: Driver, url: str, label: str = "open app (demo data)") -> None:
    start = time.perf_counter()
    d.page.goto(url)
    d.page.wait_for_selector('[data-testid="stApp"]')
    d.start_watch()
    _, end = d.wait_done(Ready.page("Overview"), grace_ms=0)
    d.record(Timing(label, 0, "demo", end - start, True))


def share_link(d: Driver) -> str:
    """Share the analysis from the Share page; the link it shows."""
    d.go("Share")
    d.page.locator(".st-key-share_title input, [data-testid='stTextInput'] input").first.fill("Benchmark decision")
    button = d.page.get_by_role("button", name=re.compile("create a read-only link"))
    d.time("share: create the link", 0, "Share", button.click, Ready("Share", "Share a snapshot"))
    code = d.page.locator('[data-testid="stCode"]', has_text="analysis=").first
    code.wait_for(timeout=120_000)
    return code.inner_text().strip()


def open_snapshot(browser, link: str, url: str, timeout_ms: int) -> list[Timing]:
    """The link (its host replaced by ``url``) in a new context: seconds to a readable brief (its
    title and verdict lines) and to a complete one (segments and failure groups, nothing pending)."""
    page = new_page(browser)
    target = url + link[link.index("/?"):]
    d = Driver(page, timeout_ms)
    start = time.perf_counter()
    page.goto(target)
    readable = complete = None
    end_by = time.monotonic() + timeout_ms / 1000
    js = """() => {
      const main = document.querySelector('[data-testid="stMain"]');
      if (!main) return [false, false];
      const fresh = e => !e.closest('[data-stale="true"]');
      const h1 = [...main.querySelectorAll('h1')].some(h => fresh(h) && h.textContent.includes('Benchmark decision'));
      const lines = [...main.querySelectorAll('li')].some(l => fresh(l) && /ndcg/.test(l.textContent));
      const heads = ['Where a challenger loses', 'What explains the loss'].every(t =>
        [...main.querySelectorAll('h3')].some(h => fresh(h) && h.textContent.includes(t)));
      const pending = /Resampled statistics are running|being (compared|computed) on the server/
        .test(main.innerText);
      const busy = document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"]');
      return [h1 && lines, h1 && lines && heads && !pending && !busy];
    }"""
    while time.monotonic() < end_by and complete is None:
        ok_read, ok_all = page.evaluate(js)
        now = time.perf_counter() - start
        if ok_read and readable is None:
            readable = now
        if ok_all:
            complete = now
        page.wait_for_timeout(50)
    page.context.close()
    return [Timing(SNAPSHOT_READABLE, 0, "brief", readable or float("nan"), True, readable is None),
            Timing(SNAPSHOT_COMPLETE, 0, "brief", complete or float("nan"), True, complete is None)]


def wait_for_kept_brief(db: Path, deadline: float) -> float | None:
    """Seconds until the shared snapshot's brief is kept in the store (the server computes it once
    its resampled statistics and segments are done; a restart before that would lose it), or None
    when it is not kept by the deadline (the link then computes it from the files)."""
    start = time.perf_counter()
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
                if conn.execute("SELECT COUNT(*) FROM store_briefs").fetchone()[0]:
                    return time.perf_counter() - start
        except sqlite3.Error:  # no such table (a version without kept briefs) or the file is busy
            if time.perf_counter() - start > 120:
                return None
        time.sleep(0.1)
    return None


def opened(browser, url: str, files: BenchFiles, deadline: float, upload_files: bool = True) -> "Driver":
    """A new page of ``browser`` on the app at ``url``, with ``files`` uploaded unless told otherwise."""
    d = Driver(new_page(browser), int(1000 * (deadline - time.monotonic())))  # no limit of their own
    open_app(d, url)
    if upload_files:
        upload(d, files)
    return d


#: ``--browser-nice N``: the browsers' processes run N steps below the server's scheduling priority
#: (a wrapper script in the run's work folder starts Chromium through ``nice``), as if they were on
#: the users' own machines: with several browsers on the same cores, the server is then served first
_NICE_WRAPPER: dict[str, str | None] = {"path": None}


def browser_executable() -> str:
    """Chromium, or the ``nice`` wrapper of ``--browser-nice``."""
    return _NICE_WRAPPER["path"] or chromium_path()


def use_browser_niceness(niceness: int, folder: Path) -> None:
    """Start every browser of this run ``niceness`` steps below the normal priority (0: as is)."""
    _NICE_WRAPPER["path"] = None
    if niceness:
        wrapper = folder / "chromium-niced"
        wrapper.write_text(f'#!/bin/sh\nexec nice -n {int(niceness)} "{chromium_path()}" "$@"\n')
        wrapper.chmod(0o755)
        _NICE_WRAPPER["path"] = str(wrapper)


def session(url: str, files: BenchFiles, rounds: int, only: re.Pattern | None, deadline: float,
            action_timeout: float, plan: str, upload_files: bool = True) -> tuple[list, list]:
    """One browser, one context: open the app, upload, run the plan."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_executable(), args=BROWSER_ARGS, headless=True)
        try:
            d = opened(browser, url, files, deadline, upload_files)
            run_steps(d, rounds, list(files.runs), only, deadline, errors, action_timeout, plan)
        finally:
            browser.close()
    return d.results, errors


def drive(url: str, files: BenchFiles, rounds: int, only: re.Pattern | None, deadline: float,
          action_timeout: float, plan: str = "path", sessions: int = 1, snapshot: bool = False,
          restart=None) -> tuple[list, list]:
    """One session (or ``sessions`` at once, after a first upload); then the snapshot link."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_executable(), args=BROWSER_ARGS, headless=True)
        try:
            d = opened(browser, url, files, deadline)
            if sessions <= 1:
                run_steps(d, rounds, list(files.runs), only, deadline, errors, action_timeout, plan)
            else:
                d.results += concurrent(url, files, rounds, only, deadline, action_timeout, plan, sessions, errors)
            if snapshot:
                link = share_link(d)
                url = restart()
                d.results += open_snapshot(browser, link, url, int(1000 * max(60, deadline - time.monotonic())))
        finally:
            browser.close()
    return d.results, errors


def concurrent(url: str, files: BenchFiles, rounds: int, only, deadline: float, action_timeout: float,
               plan: str, n: int, errors: list[str]) -> list[Timing]:
    """``n`` sessions at once, each its own thread and browser; their results, tagged by session."""
    out: list[list] = [[] for _ in range(n)]

    def one(i: int) -> None:
        try:
            results, errs = session(url, files, rounds, only, deadline, action_timeout, plan)
        except Exception as exc:  # noqa: BLE001 - a session that fails is reported, the others go on
            results, errs = [], [f"session {i + 1}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"]
        for r in results:
            r.session = i + 1
        out[i] = results
        errors.extend(f"session {i + 1}: {e}" for e in errs)

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(1.0, deadline - time.monotonic()))
    return [r for results in out for r in results]


def counted(r: Timing) -> bool:
    """A measurement of an answer: no timeout, and a script run was seen (or none is expected)."""
    return not r.timed_out and (r.rerun_seen or r.action in NOT_INTERACTIONS)


def summarise(results: list[Timing]) -> dict:
    """Per action n / p50 / p95 / max seconds, and the overall figures. Timeouts and actions
    that started no script run (the widget did not take the value) are counted apart."""
    def stats(values) -> dict:
        v = np.asarray(values, dtype=float)
        return {"n": int(v.size), "p50": float(np.percentile(v, 50)), "p95": float(np.percentile(v, 95)),
                "max": float(v.max())}

    table = {}
    for action in dict.fromkeys(r.action for r in results):
        rows = [r for r in results if r.action == action]
        done = [r.seconds for r in rows if counted(r)]
        server = [r.server_seconds for r in rows if counted(r) and r.server_seconds is not None]
        table[action] = {**(stats(done) if done else {"n": 0}), "timeouts": sum(r.timed_out for r in rows),
                         "server_p95": float(np.percentile(server, 95)) if server else None,
                         "no_rerun": sum(not r.rerun_seen and not r.timed_out for r in rows),
                         "exceptions": sum(len(r.exceptions) for r in rows)}
    after = [r.seconds for r in results if r.action not in NOT_INTERACTIONS and counted(r)]
    overall = {**stats(after), "over_1s": sum(s > 1 for s in after), "over_2s": sum(s > 2 for s in after)} \
        if after else {"n": 0}
    server = [r.server_seconds for r in results
              if r.action not in NOT_INTERACTIONS and counted(r) and r.server_seconds is not None]
    return {"actions": table, "overall": overall, "server": stats(server) if server else {"n": 0}}


def markdown(summary: dict) -> str:
    lines = ["| action | n | p50 s | p95 s | max s | server p95 s |", "|---|---:|---:|---:|---:|---:|"]
    for action, s in summary["actions"].items():
        if s["n"]:
            note = "".join([f" ({s['timeouts']} timed out)" if s["timeouts"] else "",
                            f" ({s['no_rerun']} started no script run, not counted)" if s["no_rerun"] else "",
                            f" ({s['exceptions']} exceptions)" if s["exceptions"] else ""])
            server = "" if s.get("server_p95") is None else f"{s['server_p95']:.2f}"
            lines.append(f"| {action}{note} | {s['n']} | {s['p50']:.2f} | {s['p95']:.2f} | {s['max']:.2f} | {server} |")
        else:
            lines.append(f"| {action} ({s['timeouts']} timed out, {s['no_rerun']} started no script run) | 0 | | | | |")
    o = summary["overall"]
    if o["n"]:
        lines.append(f"\noverall, {o['n']} interactions after the upload: p50 {o['p50']:.2f} s, "
                     f"p95 {o['p95']:.2f} s, max {o['max']:.2f} s; over 1 s: {o['over_1s']}, over 2 s: {o['over_2s']}")
    server = summary.get("server", {"n": 0})
    if server["n"]:
        lines.append(f"the server's part of them (request sent to last answer received, {server['n']} with both): "
                     f"p50 {server['p50']:.2f} s, p95 {server['p95']:.2f} s, max {server['max']:.2f} s")
    return "\n".join(lines)


def watchdog(seconds: float, proc_holder: list) -> threading.Timer:
    """Last resort: a run stuck past its timeout stops the server and exits."""
    def fire() -> None:
        print(f"hard timeout after {seconds:.0f} s: stopping; where the run was:", file=sys.stderr, flush=True)
        faulthandler.dump_traceback(all_threads=True)
        for proc in proc_holder:
            stop_process(proc)
        os._exit(2)
    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    return timer


def run(users: int = 20_000, items: int = 50, rounds: int = 1, formats: str | tuple = FORMATS, repo: Path = ROOT,
        only: str | None = None, timeout: float = 1800, cli_repeats: int = 3, work: Path | None = None,
        action_timeout: float = ACTION_TIMEOUT_S, plan: str = "path", sessions: int = 1,
        snapshot: bool = False, browser_nice: int = 0) -> dict:
    """The whole benchmark; the results as a dict (``timings`` holds every raw measurement)."""
    started = time.monotonic()
    deadline = started + timeout
    procs: list = []
    timer = watchdog(timeout + 60, procs)
    formats = parse_formats(formats) if isinstance(formats, str) else tuple(formats)
    out: dict = {"users": users, "items": items, "rounds": rounds, "format": ",".join(formats), "repo": str(repo),
                 "plan": plan, "sessions": sessions, "browser_nice": browser_nice, "load_start": load()}
    with tempfile.TemporaryDirectory(prefix="dashboard_browser_", dir=work) as tmp:
        tmp = Path(tmp)
        use_browser_niceness(browser_nice, tmp)
        t = time.perf_counter()
        files = write_files(tmp / "data", users, items, formats)
        out["data"] = {"seconds": time.perf_counter() - t, "rows_per_model": files.rows_per_model,
                       "users": files.users, "judgments": files.judgments,
                       "bytes": {p.name: p.stat().st_size for p in [*files.runs.values(), files.qrels, files.attributes]}}
        say(f"data written in {out['data']['seconds']:.1f} s; warming the kernels up")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "metrics_core.warmup"], cwd=repo, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out["warmup_seconds"] = time.perf_counter() - t
        say("timing the command line")
        out["cli_cpu_seconds"] = []
        out["cli_seconds"] = time_cli(repo, files, cli_repeats, out["cli_cpu_seconds"]) if cli_repeats else []
        env = {"METRICS_CORE_STORE_DIR": str(tmp / "store"), "PYTHONPATH": str(repo)}
        proc, url = start_server(repo / "dashboard" / "serve.py", cwd=repo, log_path=tmp / "server.log", extra_env=env)
        procs.append(proc)
        peaks: list[float] = []

        def restart() -> str:
            """A new server process on the same store (the snapshot link's first opening)."""
            nonlocal proc
            peaks.append(peak_rss_mib(proc.pid))
            out["server_cpu_seconds"] = process_cpu(proc.pid)  # the first server's, up to the snapshot link
            out["brief_kept_seconds"] = wait_for_kept_brief(tmp / "store" / "analyses.sqlite3", deadline)
            stop_process(proc)
            proc, new_url = start_server(repo / "dashboard" / "serve.py", cwd=repo, log_path=tmp / "server2.log",
                                         extra_env=env)
            procs.append(proc)
            return new_url

        global SERVER_PID
        SERVER_PID = proc.pid
        UPLOAD_CPU.clear()
        say(f"server at {url} (pid {proc.pid}); driving the browser")
        try:
            results, errors = drive(url, files, rounds, re.compile(only) if only else None, deadline, action_timeout,
                                    plan, sessions, snapshot, restart)
            out["server_peak_rss_mib"] = max([*peaks, peak_rss_mib(proc.pid)])
            out.setdefault("server_cpu_seconds", process_cpu(proc.pid))
            out["server_alive"] = proc.poll() is None
        finally:
            for p in procs:
                stop_process(p)
            timer.cancel()
        log = "".join(f.read_text(errors="replace") for f in sorted(tmp.glob("server*.log")))
        out["server_log_problems"] = [line for line in log.splitlines()
                                      if re.search(r"Traceback|Error|Warning", line)][:50]
    out["upload_server_cpu_seconds"] = dict(UPLOAD_CPU)
    out.update(load_end=load(), seconds=time.monotonic() - started, errors=errors,
               timings=[asdict(r) for r in results], summary=summarise(results))
    upload_s = out["summary"]["actions"].get(UPLOAD, {}).get("p50")
    if out["cli_seconds"] and upload_s:
        out["cli_median"] = float(np.median(out["cli_seconds"]))
        out["upload_over_cli"] = upload_s / out["cli_median"]
    return out


def report(out: dict) -> str:
    d = out["data"]
    lines = [f"data: 3 models x {d['users']:,} users x {out['items']} items = {d['rows_per_model']:,} rows per model, "
             f"{d['judgments']:,} judgments, {out['format']} (generated in {d['seconds']:.1f} s)",
             f"plan {out['plan']}, {out['rounds']} round(s), {out['sessions']} concurrent session(s)"
             + (f", browsers at nice +{out['browser_nice']}" if out.get("browser_nice") else ""),
             f"load average at start {out['load_start']}, at end {out['load_end']}; "
             f"server peak RSS {out.get('server_peak_rss_mib', float('nan')):,.0f} MiB; "
             f"server CPU {out.get('server_cpu_seconds', float('nan')):,.1f} s (start, upload and path); "
             f"whole run {out['seconds']:.0f} s", "", markdown(out["summary"]), ""]
    if "brief_kept_seconds" in out:
        kept = out["brief_kept_seconds"]
        lines.append("snapshot's brief kept in the store " + (f"{kept:.1f} s after the link was shown (the server "
                     "was restarted then)" if kept is not None else "never: the link computed it from the files"))
    if out.get("cli_median"):
        lines.append(f"command line (`python3 -m metrics_core evaluate`, 3 runs + truth, {len(cli_metrics())} metrics): "
                     f"{', '.join(f'{s:.2f}' for s in out['cli_seconds'])} s (median {out['cli_median']:.2f} s); "
                     f"upload to Overview / command line = {out['upload_over_cli']:.2f}x")
    if out.get("upload_server_cpu_seconds"):
        cpu = out["upload_server_cpu_seconds"]
        lines.append("server CPU s of the upload: " + ", ".join(f"{name.split(': ', 1)[-1]} {s:.2f}"
                                                                for name, s in cpu.items())
                     + f" (sum {sum(cpu.values()):.2f})" + (f"; command line CPU s: "
                     f"{', '.join(f'{s:.2f}' for s in out['cli_cpu_seconds'])}" if out.get("cli_cpu_seconds") else ""))
    exceptions = [f"{t['action']} = {t['value']}: {e}" for t in out["timings"] for e in t["exceptions"]]
    lines.append(f"app exceptions: {len(exceptions)}" + "".join(f"\n  {e}" for e in exceptions[:20]))
    lines.append(f"errors: {len(out['errors'])}" + "".join(f"\n  {e}" for e in out["errors"]))
    if out["server_log_problems"]:
        lines.append("server log: " + "\n  ".join(out["server_log_problems"][:10]))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=20_000)
    ap.add_argument("--items", type=int, default=50, help="rows per user and model")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--formats", default=",".join(FORMATS),
                    help="one format per model file, comma-separated (trec, csv, parquet); one name: every file")
    ap.add_argument("--plan", choices=["path", "full"], default="path",
                    help="path: the reviewer's path through Compare; full: every page and control")
    ap.add_argument("--sessions", type=int, default=1, help="concurrent browser sessions running the plan")
    ap.add_argument("--snapshot", action="store_true",
                    help="share the analysis, restart the server, time the link in a new browser context")
    ap.add_argument("--repo", type=Path, default=ROOT, help="repository whose dashboard is measured")
    ap.add_argument("--only", default=None, help="regular expression: run only the actions it matches")
    ap.add_argument("--timeout", type=float, default=1800, help="stop after this many seconds")
    ap.add_argument("--action-timeout", type=float, default=ACTION_TIMEOUT_S,
                    help="seconds one action may take before it is recorded as never answered")
    ap.add_argument("--cli-repeats", type=int, default=3, help="runs of the command line (0: none)")
    ap.add_argument("--json", type=Path, default=None, help="write the raw results here")
    ap.add_argument("--browser-nice", type=int, default=0, choices=range(0, 20), metavar="N",
                    help="run the browsers N steps below the server's priority (0-19), as if they were on the "
                         "users' own machines; the table's 'server p95' column is then the server's own answer")
    args = ap.parse_args()
    repo = args.repo.resolve()
    if not (repo / "dashboard" / "serve.py").is_file():
        ap.error(f"{repo} has no dashboard/serve.py")
    if args.items < MIN_ITEMS or args.users < 2 or args.rounds < 1 or args.sessions < 1:
        ap.error(f"--items must be at least {MIN_ITEMS} (the generator gives a user up to {MIN_ITEMS} "
                 "relevant items), --users at least 2, --rounds and --sessions at least 1")
    try:
        formats = parse_formats(args.formats)
    except ValueError as exc:
        ap.error(f"--formats: {exc}")
    if args.only:
        try:
            re.compile(args.only)
        except re.error as exc:
            ap.error(f"--only is not a regular expression: {exc}")
    out = run(args.users, args.items, args.rounds, formats, repo, args.only, args.timeout, args.cli_repeats,
              action_timeout=args.action_timeout, plan=args.plan, sessions=args.sessions, snapshot=args.snapshot,
              browser_nice=args.browser_nice)
    print(report(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
