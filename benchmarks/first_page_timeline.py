"""Where a started dashboard's first page spends its time, as one timeline: the server and the browser.

Starts ``streamlit run`` on a server script (the dashboard's ``dashboard/serve.py`` by default) the way
:mod:`benchmarks.cold_start` does, opens the page in headless Chromium and records, in seconds from
``streamlit run``: the health check's first "ok"; the websocket opening; every message the server sent
(its size) with the server's CPU seconds when it arrived; in the page, when each kind of element first
appeared (the first table, the first chart drawn, the navigation) and when the script state changed;
every script and style file the page fetched (start and end); the page's main-thread tasks longer than
50 ms (Long Tasks API, summed by the second). The CPU seconds of the server at each moment say how much
of the wait is the server's work; the long tasks, how much the browser's. Nothing is asserted.

    python -m benchmarks.first_page_timeline [--app dashboard/serve.py] [--kernel-cache DIR] [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from benchmarks.cold_start import READY_JS  # noqa: E402
from benchmarks.procfs import process_cpu  # noqa: E402
from dashboard_server import CHROMIUM_ARGS, chromium_path, start_server, stop_process  # noqa: E402

#: records, in the page's clock, when each kind of element first appears and the script state changes
OBSERVER_JS = """(() => {
  window.__firsts = {}; window.__states = []; window.__long = [];
  const kinds = {table: '[data-testid="stDataFrame"]', chart_drawn: '.plotly-graph-div .main-svg',
                 chart_element: '[data-testid="stPlotlyChart"]', nav: '[data-testid="stSidebarNav"]',
                 title: 'h1', spinner: '[data-testid="stSpinner"]', app: '[data-testid="stApp"]'};
  let last = null;
  const look = () => {
    for (const [k, sel] of Object.entries(kinds)) {
      if (!(k in window.__firsts) && document.querySelector(sel)) window.__firsts[k] = performance.now();
    }
    const app = document.querySelector('[data-testid="stApp"]');
    const s = app && app.getAttribute('data-test-script-state');
    if (s !== last) { window.__states.push([s, performance.now()]); last = s; }
  };
  new MutationObserver(look).observe(document, {subtree: true, childList: true, attributes: true});
  try {
    new PerformanceObserver(l => { for (const e of l.getEntries()) window.__long.push([e.startTime, e.duration]); })
      .observe({type: 'longtask', buffered: true});
  } catch (e) {}
})();"""


def timeline(app: Path, cache_dir: Path, browser, root: Path = ROOT) -> dict:
    """One start of ``app``: the moments above, in seconds from ``streamlit run``."""
    with tempfile.TemporaryDirectory(prefix="timeline_store_") as store:
        env = {"PYTHONPATH": str(root), "NUMBA_CACHE_DIR": str(cache_dir), "METRICS_CORE_STORE_DIR": store}
        start_wall = time.time()
        start = time.perf_counter()
        proc, url = start_server(app, cwd=root, extra_env=env, log_path=Path(store) / "server.log",
                                 drop_env=("PYTHONDONTWRITEBYTECODE",))  # bytecode cache on, as for a user
        out: dict = {"health": time.perf_counter() - start, "cpu_at_health": process_cpu(proc.pid), "frames": []}
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.add_init_script(OBSERVER_JS)

            def on_socket(socket) -> None:
                out.setdefault("socket", time.perf_counter() - start)
                out.setdefault("cpu_at_socket", process_cpu(proc.pid))
                socket.on("framereceived", lambda payload: out["frames"].append(
                    (time.perf_counter() - start, len(payload), process_cpu(proc.pid))))

            page.on("websocket", on_socket)
            page.goto(url)
            page.wait_for_function(READY_JS, timeout=300_000, polling=50)
            out["ready"] = time.perf_counter() - start
            out["cpu_at_ready"] = process_cpu(proc.pid)
            origin = page.evaluate("performance.timeOrigin") / 1000 - start_wall  # page clock 0, from start
            page_s = lambda ms: origin + ms / 1000  # noqa: E731
            out["firsts"] = {k: page_s(v) for k, v in page.evaluate("window.__firsts").items()}
            out["states"] = [(s, page_s(t)) for s, t in page.evaluate("window.__states")]
            out["long_tasks"] = [(page_s(t), d / 1000) for t, d in page.evaluate("window.__long")]
            out["resources"] = [(e["name"].rsplit("/", 1)[-1][:60], page_s(e["startTime"]), page_s(e["responseEnd"]),
                                 e["encodedBodySize"]) for e in page.evaluate(
                "performance.getEntriesByType('resource').map(e => ({name: e.name, startTime: e.startTime, "
                "responseEnd: e.responseEnd, encodedBodySize: e.encodedBodySize}))")]
            context.close()
        finally:
            stop_process(proc)
    return out


def report(out: dict) -> str:
    lines = [f"health {out['health']:.2f} s (server CPU {out['cpu_at_health']:.2f} s); websocket "
             f"{out.get('socket', float('nan')):.2f} s (CPU {out.get('cpu_at_socket', float('nan')):.2f}); "
             f"usable {out['ready']:.2f} s (CPU {out['cpu_at_ready']:.2f})"]
    frames = [f for f in out["frames"] if f[0] <= out["ready"]]
    if frames:
        lines.append(f"server messages before usable: {len(frames)}, {sum(f[1] for f in frames) / 1024:.0f} KiB; "
                     f"first {frames[0][0]:.2f} s, last {frames[-1][0]:.2f} s (CPU {frames[-1][2]:.2f})")
        for t, size, cpu in frames:
            if size > 20_000:
                lines.append(f"  message {size / 1024:.0f} KiB at {t:.2f} s")
    lines.append("first seen: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(out["firsts"].items(), key=lambda x: x[1])))
    lines.append("script states: " + ", ".join(f"{s} {t:.2f}" for s, t in out["states"]))
    for name, t0, t1, size in sorted(out["resources"], key=lambda r: r[1]):
        if name.endswith((".js", ".css")) or size > 50_000:
            lines.append(f"  fetched {name:<60s} {t0:6.2f} -> {t1:6.2f} s  {size / 1024:7.0f} KiB")
    by_second: dict[int, float] = {}
    for t, d in out["long_tasks"]:
        by_second[int(t)] = by_second.get(int(t), 0.0) + d
    lines.append("browser main-thread long tasks, s busy per second from start: "
                 + ", ".join(f"[{s}] {d:.2f}" for s, d in sorted(by_second.items())))
    lines.append(f"long tasks in all: {sum(d for _, d in out['long_tasks']):.2f} s")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--app", type=Path, default=ROOT / "dashboard" / "serve.py")
    p.add_argument("--kernel-cache", type=Path, help="NUMBA_CACHE_DIR of the server (default: a new, empty one)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--root", type=Path, default=ROOT, help="checkout whose dashboard is started")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="timeline_") as tmp:
        browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        for repeat in range(args.repeats):
            print(f"repeat {repeat + 1}, load {os.getloadavg()[0]:.2f}")
            app = args.app if args.app.is_absolute() else args.root / args.app
            print(report(timeline(app.resolve(), args.kernel_cache or Path(tmp), browser, args.root.resolve())))
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
