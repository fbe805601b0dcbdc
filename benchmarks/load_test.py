"""Bounded load test of the dashboard: N concurrent browser sessions on 127.0.0.1.

After one untimed visit (the server builds the demo once), each session opens the
Overview of the demo in its own headless Chromium context, waits for the others,
then changes K in the sidebar ``--steps`` times and waits for the answer (the
script run ends). The run stops by itself after the steps (or ``--timeout``
seconds) and prints, per action, p50 / p95 / max seconds, the page loads per
second the server sustained, and the server's resident memory before, at the
peak and after the sessions closed.

    python benchmarks/load_test.py --sessions 8 --steps 10

It starts its own server (``streamlit run dashboard/app.py`` on a free port) unless
``--url`` names one; it never contacts another host. Chromium is Debian's
(``/usr/bin/chromium`` or ``$CHROMIUM``), driven by Playwright's Python package.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))

from dashboard_server import chromium_path, start_server, stop_process  # noqa: E402

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
RUNNING = '[data-testid="stApp"][data-test-script-state="running"]'
BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _idle(page, timeout_ms: int) -> None:
    await page.wait_for_selector(IDLE, timeout=timeout_ms)
    await page.wait_for_timeout(150)
    await page.wait_for_selector(IDLE, timeout=timeout_ms)


async def _session(browser, url: str, steps: int, seed: int, timings: list, errors: list,
                   timeout_ms: int, opened: "asyncio.Barrier") -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    rng = random.Random(seed)
    try:
        start = time.perf_counter()
        await page.goto(url)
        await _idle(page, timeout_ms)
        timings.append(("open Overview", time.perf_counter() - start))
        await opened.wait()  # every session changes K at the same time
        k_input = page.locator('[data-testid="stSidebar"] .st-key-k input')
        for _ in range(steps):
            k = rng.choice([5, 10, 20, 50, 100])
            start = time.perf_counter()
            await k_input.fill(str(k))
            await k_input.press("Enter")
            try:
                await page.wait_for_selector(RUNNING, timeout=1500)
            except Exception:  # noqa: BLE001 - the same K again: no rerun
                pass
            await _idle(page, timeout_ms)
            timings.append(("change K", time.perf_counter() - start))
            if await page.locator('[data-testid="stException"]').count():
                errors.append(f"session {seed}: exception shown after K = {k}")
    except Exception as exc:  # noqa: BLE001 - reported in the results, the run goes on
        errors.append(f"session {seed}: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    finally:
        await context.close()


async def _drive(url: str, sessions: int, steps: int, timeout_ms: int) -> tuple[list, list, float]:
    from playwright.async_api import async_playwright

    timings: list = []
    errors: list = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=chromium_path(), args=BROWSER_ARGS)
        # one untimed visit first: the server builds the demo and loads its kernels once
        warm = await browser.new_context()
        page = await warm.new_page()
        await page.goto(url)
        await _idle(page, timeout_ms)
        await warm.close()
        opened = asyncio.Barrier(sessions)
        start = time.perf_counter()
        await asyncio.gather(*(_session(browser, url, steps, i, timings, errors, timeout_ms, opened)
                               for i in range(sessions)))
        elapsed = time.perf_counter() - start
        await browser.close()
    return timings, errors, elapsed


def summarise(timings: list, elapsed: float) -> dict:
    """p50 / p95 / max seconds per action, and script runs per second overall."""
    out: dict = {"actions": {}}
    for action in dict.fromkeys(a for a, _ in timings):
        values = np.array([t for a, t in timings if a == action])
        out["actions"][action] = {"n": int(values.size), "p50": float(np.percentile(values, 50)),
                                  "p95": float(np.percentile(values, 95)), "max": float(values.max())}
    out["runs_per_second"] = len(timings) / elapsed if elapsed > 0 else float("nan")
    return out


def run(sessions: int = 8, steps: int = 10, url: str | None = None, timeout: float = 600,
        extra_env: dict | None = None, settle: float = 0.0) -> dict:
    """Drive the sessions against ``url`` or a server started here; the results as a dict.

    ``settle`` seconds after the sessions closed, the server's memory is read again
    (the caches expire entries after their time to live; see dashboard/cache.py).
    """
    proc = None
    if url is None:
        proc, url = start_server(ROOT / "dashboard" / "app.py", extra_env=extra_env)
    try:
        pid = proc.pid if proc is not None else None
        before = rss_mb(pid) if pid else float("nan")
        # a thread of its own: the caller may already run an event loop (Playwright's sync API does)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
            timings, errors, elapsed = pool.submit(asyncio.run, asyncio.wait_for(
                _drive(url, sessions, steps, int(timeout * 1000)), timeout)).result()
        peak = rss_mb(pid) if pid else float("nan")
        if settle > 0:
            time.sleep(settle)
        after = rss_mb(pid) if pid else float("nan")
        healthy = proc is None or proc.poll() is None
        result = summarise(timings, elapsed)
        result.update(sessions=sessions, steps=steps, errors=errors, server_alive=healthy,
                      rss_mb={"before": before, "after_sessions": peak, "after_settle": after})
        return result
    finally:
        if proc is not None:
            stop_process(proc)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=8)
    parser.add_argument("--steps", type=int, default=10, help="K changes per session")
    parser.add_argument("--url", default=None, help="a running server on 127.0.0.1 (default: start one)")
    parser.add_argument("--timeout", type=float, default=600, help="stop after this many seconds")
    parser.add_argument("--json", default=None, help="also write the results here")
    args = parser.parse_args()
    if args.url and not args.url.startswith(("http://127.0.0.1", "http://localhost")):
        parser.error("the load test only targets a server on this machine (127.0.0.1)")
    result = run(args.sessions, args.steps, args.url, args.timeout)
    print(f"{args.sessions} sessions x {args.steps} K changes, {result['runs_per_second']:.2f} script runs/s")
    print("| action | n | p50 s | p95 s | max s |\n|---|---|---|---|---|")
    for action, r in result["actions"].items():
        print(f"| {action} | {r['n']} | {r['p50']:.2f} | {r['p95']:.2f} | {r['max']:.2f} |")
    print(f"server RSS MiB: {result['rss_mb']}; errors: {result['errors'] or 'none'}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    if result["errors"] or not result["server_alive"]:
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
