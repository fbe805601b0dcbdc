"""Click-to-answer times of the dashboard in a real browser, on 3 models x 1M rows.

    python3 -m benchmarks.dashboard_browser [--users 20000] [--items 50] [--rounds 2]
        [--format parquet|csv] [--repo DIR] [--only REGEX] [--json PATH] [--timeout 1800]

1. Data (``benchmarks/browser_data.py``): three models' results of ``--users`` x ``--items``
   rows each (default 20,000 x 50 = 1M rows per model), graded ground truth and a
   user-attributes file (``segment``, ``activity``), deterministic, written as files.
2. The command line on the same files (``python3 -m metrics_core evaluate`` as a process,
   the Overview's metrics at K = 10), ``--cli-repeats`` times, for the upload's ratio.
3. ``streamlit run dashboard/app.py`` of ``--repo`` on 127.0.0.1 with a private analysis
   store (``METRICS_CORE_STORE_DIR`` in a temporary directory); stopped by its PID at the end.
4. One headless Chromium (Debian's, 1400 x 1000, every host but 127.0.0.1 unresolvable):
   upload the three files and the ground truth on the Data page and open the Overview
   (one action, the sum of its three steps), upload the attributes, then ``--rounds``
   rounds of the steps in ``benchmarks/browser_plan.py``, each timed by
   ``benchmarks/browser_actions.py`` from the click or key press to the answer.

Prints action -> n, p50, p95, max seconds; overall p50 / p95 / max of every interaction
after the upload, how many took over 1 s and 2 s, exceptions shown by the app, load
average at start and end, the server's peak RSS. Nothing is asserted (the machine is shared).
"""

from __future__ import annotations

import argparse
import faulthandler
import json
import os
import re
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
from benchmarks.browser_data import BenchFiles, write_files  # noqa: E402
from benchmarks.browser_plan import round_steps  # noqa: E402
from benchmarks.datagen import MAX_RELEVANT as MIN_ITEMS  # noqa: E402
from dashboard_server import chromium_path, start_server, stop_process  # noqa: E402

# every host but 127.0.0.1 fails to resolve: the browser can reach nothing else
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]
UPLOAD = "upload to Overview (3 runs + truth)"
UPLOAD_PARTS = ("upload: 3 run files", "upload: ground truth", "upload: open Overview")
NOT_INTERACTIONS = {UPLOAD, *UPLOAD_PARTS, "open app (demo data)", "upload: user attributes"}
ACTION_TIMEOUT_S = 300


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


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


def time_cli(repo: Path, files: BenchFiles, repeats: int) -> list[float]:
    """Seconds of ``python3 -m metrics_core evaluate`` on the same files, one process per repeat."""
    cmd = [sys.executable, "-m", "metrics_core", "evaluate", "--qrels", str(files.qrels), "--json",
           "--metrics", ",".join(cli_metrics())]
    for path in files.runs.values():
        cmd += ["--run", str(path)]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        times.append(time.perf_counter() - start)
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
    parts = [
        d.time(UPLOAD_PARTS[0], 0, "3 files", lambda: uploader(page, "Ranked results").set_input_files(
            [str(p) for p in files.runs.values()]), Ready("Data"), wait_upload),
        d.time(UPLOAD_PARTS[1], 0, files.qrels.name, lambda: uploader(page, "Ground truth").set_input_files(
            str(files.qrels)), Ready("Data"), wait_upload),
        d.time(UPLOAD_PARTS[2], 0, "Overview", d.nav("Overview").click, Ready.page("Overview")),
    ]
    d.record(Timing(UPLOAD, 0, "sum of the three steps", sum(p.seconds for p in parts),
                            all(p.rerun_seen for p in parts), any(p.timed_out for p in parts),
                            [e for p in parts for e in p.exceptions]))
    d.go("Data")
    d.time("upload: user attributes", 0, files.attributes.name, lambda: uploader(
        page, "User attributes").set_input_files(str(files.attributes)), Ready("Data"), wait_upload)


def run_steps(d: Driver, rounds: int, names: list[str], only: re.Pattern | None, deadline: float,
              errors: list[str], action_timeout: float) -> None:
    """Every round's steps matching ``only``, until done or ``deadline`` (monotonic seconds)."""
    visited = {"Overview"}  # its first visit is the end of the upload
    last_page = None
    for r in range(rounds):
        for step in round_steps(r, names):
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
                last_page = step.page
                d.page.keyboard.press("Escape")  # a multiselect's list stays open after a pick
                visited.add(step.page)
                if result.timed_out:
                    errors.append(f"round {r + 1}, {action} = {step.value}: no answer within "
                                  f"{d.timeout_ms / 1000:.0f} s")
                    d.current = None
            except Exception as exc:  # noqa: BLE001 - a widget not found: reported, the run goes on
                errors.append(f"round {r + 1}, {action} = {step.value}: {type(exc).__name__}: "
                              f"{str(exc).splitlines()[0][:200]}")
                d.page.keyboard.press("Escape")
                d.current = None


def drive(url: str, files: BenchFiles, rounds: int, only: re.Pattern | None, deadline: float,
          action_timeout: float) -> tuple[list, list]:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1400, "height": 1000}).new_page()
            page.set_default_timeout(30_000)  # clicks and fills; script runs have their own timeout
            d = Driver(page, int(1000 * (deadline - time.monotonic())))  # the demo and the upload: no limit of their own
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_selector('[data-testid="stApp"]')
            d.start_watch()
            _, end = d.wait_done(Ready.page("Overview"), grace_ms=0)
            d.record(Timing("open app (demo data)", 0, "demo", end - start, True))
            upload(d, files)
            run_steps(d, rounds, list(files.runs), only, deadline, errors, action_timeout)
        finally:
            browser.close()
    return d.results, errors


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
        table[action] = {**(stats(done) if done else {"n": 0}), "timeouts": sum(r.timed_out for r in rows),
                         "no_rerun": sum(not r.rerun_seen and not r.timed_out for r in rows),
                         "exceptions": sum(len(r.exceptions) for r in rows)}
    after = [r.seconds for r in results if r.action not in NOT_INTERACTIONS and counted(r)]
    overall = {**stats(after), "over_1s": sum(s > 1 for s in after), "over_2s": sum(s > 2 for s in after)} \
        if after else {"n": 0}
    return {"actions": table, "overall": overall}


def markdown(summary: dict) -> str:
    lines = ["| action | n | p50 s | p95 s | max s |", "|---|---:|---:|---:|---:|"]
    for action, s in summary["actions"].items():
        if s["n"]:
            note = "".join([f" ({s['timeouts']} timed out)" if s["timeouts"] else "",
                            f" ({s['no_rerun']} started no script run, not counted)" if s["no_rerun"] else "",
                            f" ({s['exceptions']} exceptions)" if s["exceptions"] else ""])
            lines.append(f"| {action}{note} | {s['n']} | {s['p50']:.2f} | {s['p95']:.2f} | {s['max']:.2f} |")
        else:
            lines.append(f"| {action} ({s['timeouts']} timed out, {s['no_rerun']} started no script run) | 0 | | | |")
    o = summary["overall"]
    if o["n"]:
        lines.append(f"\noverall, {o['n']} interactions after the upload: p50 {o['p50']:.2f} s, "
                     f"p95 {o['p95']:.2f} s, max {o['max']:.2f} s; over 1 s: {o['over_1s']}, over 2 s: {o['over_2s']}")
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


def run(users: int = 20_000, items: int = 50, rounds: int = 2, fmt: str = "parquet", repo: Path = ROOT,
        only: str | None = None, timeout: float = 1800, cli_repeats: int = 3, work: Path | None = None,
        action_timeout: float = ACTION_TIMEOUT_S) -> dict:
    """The whole benchmark; the results as a dict (``timings`` holds every raw measurement)."""
    started = time.monotonic()
    deadline = started + timeout
    procs: list = []
    timer = watchdog(timeout + 60, procs)
    out: dict = {"users": users, "items": items, "rounds": rounds, "format": fmt, "repo": str(repo),
                 "load_start": load()}
    with tempfile.TemporaryDirectory(prefix="dashboard_browser_", dir=work) as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        files = write_files(tmp / "data", users, items, fmt)
        out["data"] = {"seconds": time.perf_counter() - t, "rows_per_model": files.rows_per_model,
                       "users": files.users, "judgments": files.judgments,
                       "bytes": {p.name: p.stat().st_size for p in [*files.runs.values(), files.qrels, files.attributes]}}
        say(f"data written in {out['data']['seconds']:.1f} s; warming the kernels up")
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "metrics_core.warmup"], cwd=repo, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out["warmup_seconds"] = time.perf_counter() - t
        say("timing the command line")
        out["cli_seconds"] = time_cli(repo, files, cli_repeats) if cli_repeats else []
        proc, url = start_server(repo / "dashboard" / "app.py", cwd=repo, log_path=tmp / "server.log",
                                 extra_env={"METRICS_CORE_STORE_DIR": str(tmp / "store"), "PYTHONPATH": str(repo)})
        procs.append(proc)
        say(f"server at {url} (pid {proc.pid}); driving the browser")
        try:
            results, errors = drive(url, files, rounds, re.compile(only) if only else None, deadline, action_timeout)
            out["server_peak_rss_mib"] = peak_rss_mib(proc.pid)
            out["server_alive"] = proc.poll() is None
        finally:
            stop_process(proc)
            timer.cancel()
        log = (tmp / "server.log").read_text(errors="replace")
        out["server_log_problems"] = [line for line in log.splitlines()
                                      if re.search(r"Traceback|Error|Warning", line)][:50]
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
             f"load average at start {out['load_start']}, at end {out['load_end']}; "
             f"server peak RSS {out.get('server_peak_rss_mib', float('nan')):,.0f} MiB; "
             f"whole run {out['seconds']:.0f} s", "", markdown(out["summary"]), ""]
    if out.get("cli_median"):
        lines.append(f"command line (`python3 -m metrics_core evaluate`, 3 runs + truth, {len(cli_metrics())} metrics): "
                     f"{', '.join(f'{s:.2f}' for s in out['cli_seconds'])} s (median {out['cli_median']:.2f} s); "
                     f"upload to Overview / command line = {out['upload_over_cli']:.2f}x")
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
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--format", choices=["parquet", "csv"], default="parquet")
    ap.add_argument("--repo", type=Path, default=ROOT, help="repository whose dashboard is measured")
    ap.add_argument("--only", default=None, help="regular expression: run only the actions it matches")
    ap.add_argument("--timeout", type=float, default=1800, help="stop after this many seconds")
    ap.add_argument("--action-timeout", type=float, default=ACTION_TIMEOUT_S,
                    help="seconds one action may take before it is recorded as never answered")
    ap.add_argument("--cli-repeats", type=int, default=3, help="runs of the command line (0: none)")
    ap.add_argument("--json", type=Path, default=None, help="write the raw results here")
    args = ap.parse_args()
    repo = args.repo.resolve()
    if not (repo / "dashboard" / "app.py").is_file():
        ap.error(f"{repo} has no dashboard/app.py")
    if args.items < MIN_ITEMS or args.users < 2 or args.rounds < 1:
        ap.error(f"--items must be at least {MIN_ITEMS} (the generator gives a user up to {MIN_ITEMS} "
                 "relevant items), --users at least 2, --rounds at least 1")
    if args.only:
        try:
            re.compile(args.only)
        except re.error as exc:
            ap.error(f"--only is not a regular expression: {exc}")
    out = run(args.users, args.items, args.rounds, args.format, repo, args.only, args.timeout, args.cli_repeats,
              action_timeout=args.action_timeout)
    print(report(out))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
