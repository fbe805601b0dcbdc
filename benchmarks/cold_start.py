"""How long the first answer takes on a fresh install (numba's kernel cache empty).

Three measurements, each a whole process started the way a user starts it, each
with its own ``NUMBA_CACHE_DIR`` (numba keeps compiled kernels there instead of
``__pycache__``, so an empty directory is a fresh install):

* **cli**: ``python3 -m metrics_core evaluate --run run.csv --qrels qrels.csv
  --metrics ndcg@10,map@100,mrr@10,precision@10,recall@100`` on a small CSV pair
  (``--users`` users x 100 candidates of :mod:`benchmarks.datagen`), from process
  start to exit; then the same command again on the cache the first one left. (An input of at
  most 50,000 rows runs the kernels as Python while they are not cached, leaving the cache
  empty: then both runs are of that kind; see ``interpret_until_compiled`` in
  ``metrics_core/kernels/_jit.py``. The install part measures the same evaluate on a complete cache:
  up to 30,000 elements, ``INTERPRET_CACHED_MAX_WORK``, it too runs the kernels as Python, which is
  cheaper than loading numba; ``--users 400`` or more measures the cached kernels.)
* **install**: the README's install step ``python3 -m metrics_core warm`` on an empty cache (wall
  time), then the same ``evaluate`` as the first one a user runs after installing, then ``warm``
  again (a complete cache: it only checks the stamp).
* **dashboard cold**: ``python3 -m streamlit run dashboard/serve.py`` (headless, a
  free port on 127.0.0.1) until the Overview of the bundled demo is usable in
  headless Chromium: ``/_stcore/health`` answers "ok", then the page's script has
  finished (``[data-testid="stApp"][data-test-script-state="notRunning"]``), the
  Overview's ranking table (``[data-testid="stDataFrame"]``) is present and no
  ``[data-testid="stSpinner"]`` is left. Timed from ``streamlit run`` (Chromium is
  started before it). Two moments in between say where the time went: the page's websocket
  opening (the browser has loaded and run the page's code) and the last message the server
  sent before the Overview was usable (the server's part is done; what follows is drawing).
* **dashboard warm**: the same on a kernel cache filled by
  ``python3 -m metrics_core.warmup`` (``--parts warm`` measures only this one: a restarted
  server, the case where repeats are cheap and the spread between runs is large; ``--parts cold``
  only the fresh install, which needs no kernel cache filled first).
* **floor**: the same moments for bare Streamlit servers (``benchmarks/streamlit_floor``: ``st.App``
  as the dashboard starts, its configuration, one page with a small table, then one with a plotly
  chart too): what any Streamlit page costs on this machine, below which the dashboard cannot go.

For both dashboard measurements the CPU seconds (user + system) the server
process had used when the Overview became usable are printed too: unlike wall
time, a shared machine inflates them little (the background warm-up process
the dashboard starts is not counted).

Servers are stopped by PID (terminate, wait, then kill: a streamlit server can
hang after SIGTERM). ``--root DIR`` measures another checkout of the project
(for example ``git archive REV | tar -x -C DIR``), so that two versions can be
measured side by side in one run: ``--root A --root B``.

    python3 -m benchmarks.cold_start [--repeats 3] [--users 200] [--parts cli,install,dashboard|warm|cold|floor]
        [--root DIR ...] [--json PATH]

Times are printed, never asserted (the machine is shared: the load average is
printed with the table).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from benchmarks.procfs import process_cpu  # noqa: E402
from dashboard_server import CHROMIUM_ARGS, chromium_path, start_server, stop_process  # noqa: E402
CLI_METRICS = "ndcg@10,map@100,mrr@10,precision@10,recall@100"
PAGE_TIMEOUT_S = 300
# The Overview is usable: its script run has finished, the ranking table is drawn, no spinner is left.
READY_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('[data-testid="stDataFrame"]') !== null
        && document.querySelector('[data-testid="stSpinner"]') === null;
}"""


def write_small_pair(folder: Path, n_users: int) -> tuple[Path, Path]:
    """A run and its ground truth as CSV (``n_users`` x 100 candidates, string ids)."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import datagen

    ds = datagen.generate(n_users, id_type="str")
    run, qrels = folder / "run.csv", folder / "qrels.csv"
    ds.run.to_csv(run, index=False)
    ds.qrels.to_csv(qrels, index=False)
    return run, qrels


def process_env(root: Path, cache_dir: Path, store_dir: Path | None = None) -> dict[str, str]:
    """The environment of a measured process: ``root`` first on the path, its own kernel cache, Python's
    bytecode cache on (``PYTHONDONTWRITEBYTECODE`` dropped: the user's case)."""
    env = dict(os.environ)
    # Python's bytecode cache on, as a user's server has it (pip compiles at install, a checkout on its
    # first run): without it every start compiles the package's and the dashboard's ~160 modules again
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH")) if p)
    env["NUMBA_CACHE_DIR"] = str(cache_dir)
    if store_dir is not None:
        env["METRICS_CORE_STORE_DIR"] = str(store_dir)
    return env


def time_cli(root: Path, run: Path, qrels: Path, cache_dir: Path) -> tuple[float, float, str]:
    """Wall seconds from start to exit of one ``metrics_core evaluate``, its CPU seconds (user +
    system: what a loaded machine does not inflate much) and its standard output."""
    cmd = [sys.executable, "-m", "metrics_core", "evaluate", "--run", str(run), "--qrels", str(qrels),
           "--metrics", CLI_METRICS]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=root, env=process_env(root, cache_dir), capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"metrics_core evaluate exited with {done.returncode}: {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


def fill_cache(root: Path, cache_dir: Path, command: tuple[str, ...] = ("metrics_core.warmup",)) -> float:
    """``python -m metrics_core.warmup`` (or ``command``) into ``cache_dir``; returns its wall time."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", *command], cwd=root, env=process_env(root, cache_dir),
                   check=True, capture_output=True)
    return time.perf_counter() - start


def time_dashboard(root: Path, cache_dir: Path, browser, log_path: Path, app: Path | None = None) -> dict[str, float]:
    """Seconds from ``streamlit run`` to: a healthy server (``health``), the page's websocket
    opened, that is the page's own code loaded and run (``socket``), the last message the server
    sent before the Overview was usable (``answered``), a usable Overview (``ready``); and the CPU
    seconds the server process had used by then (``cpu``). The two websocket times are taken when
    Playwright reports the events, within a few milliseconds while it waits for the page. ``app``:
    another server script to start the same way (the floor's bare pages, :data:`FLOOR_APPS`)."""
    with tempfile.TemporaryDirectory(prefix="cold_start_store_") as store:
        env = process_env(root, cache_dir, Path(store))
        start = time.perf_counter()
        proc, url = start_server(app or root / "dashboard" / "serve.py", cwd=root, log_path=log_path,
                                 extra_env={k: env[k] for k in ("PYTHONPATH", "NUMBA_CACHE_DIR",
                                                                "METRICS_CORE_STORE_DIR")},
                                 drop_env=("PYTHONDONTWRITEBYTECODE",))
        try:
            t_health = time.perf_counter() - start
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            socket_times: dict[str, float] = {}

            def on_socket(socket) -> None:
                socket_times.setdefault("socket", time.perf_counter() - start)
                socket.on("framereceived", lambda _payload: socket_times.__setitem__(
                    "answered", time.perf_counter() - start))

            try:
                page = context.new_page()
                page.on("websocket", on_socket)
                page.goto(url)
                page.wait_for_function(READY_JS, timeout=PAGE_TIMEOUT_S * 1000, polling=50)
                t_ready = time.perf_counter() - start
                cpu = process_cpu(proc.pid)
                seen = dict(socket_times)  # frames after this moment came after the Overview was usable
                if page.locator('[data-testid="stException"]').count():
                    raise RuntimeError(f"the Overview shows an exception; see {log_path}")
            finally:
                context.close()
        finally:
            stop_process(proc)  # terminate, wait, then kill
    return {"health": t_health, "socket": seen.get("socket", float("nan")),
            "answered": seen.get("answered", float("nan")), "ready": t_ready, "cpu": cpu}


#: what :func:`time_dashboard` returns, as the table names it, in the order of a page's start
DASHBOARD_LABELS = {"health": "server healthy", "socket": "page's code run, websocket open",
                    "answered": "server's last message before usable", "ready": "Overview usable",
                    "cpu": "server CPU s until usable"}


#: bare Streamlit servers (``st.App`` as ``dashboard/serve.py``, the dashboard's configuration): the
#: least any Streamlit page takes on this machine, one small table, then the same with a plotly chart
FLOOR_APPS = {"table": "serve_table.py", "table and chart": "serve_chart.py"}


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def measure_root(root: Path, parts: set[str], run: Path, qrels: Path, browser, work: Path,
                 results: dict[str, list[float]]) -> None:
    """One repeat of every part for one checkout; appends seconds to ``results[label]``."""
    def add(label: str, value: float) -> None:
        results.setdefault(label, []).append(value)
        print(f"  {label:<48s} {value:7.2f} s   (load {load_average()})", flush=True)

    def add_dashboard(kind: str, times: dict[str, float]) -> None:
        for key, label in DASHBOARD_LABELS.items():
            add(f"dashboard {kind}: {label}", times[key])

    if "floor" in parts:
        for kind, script in FLOOR_APPS.items():
            app = ROOT / "benchmarks" / "streamlit_floor" / script
            add_dashboard(f"floor, {kind}", time_dashboard(root, work / "numba_cache_floor", browser,
                                                            work / "server_floor.log", app=app))
    if "cli" in parts:
        cache = Path(tempfile.mkdtemp(prefix="numba_cache_", dir=work))
        first, first_cpu, first_out = time_cli(root, run, qrels, cache)
        add("cli: first evaluate, empty kernel cache", first)
        add("cli: first evaluate, empty kernel cache (CPU s)", first_cpu)
        again, again_cpu, again_out = time_cli(root, run, qrels, cache)
        add("cli: the same again, on the cache it left", again)
        add("cli: the same again (CPU s)", again_cpu)
        if again_out != first_out:
            raise RuntimeError("the cached kernels printed other numbers than the freshly compiled ones")
    if "install" in parts:
        # the README's install command ends with ``python3 -m metrics_core warm``: the first evaluate
        # a user runs after installing finds every kernel in the cache
        cache = Path(tempfile.mkdtemp(prefix="numba_cache_", dir=work))
        add("install: metrics_core warm on an empty cache", fill_cache(root, cache, ("metrics_core", "warm")))
        installed, installed_cpu, _ = time_cli(root, run, qrels, cache)
        add("install: first evaluate after metrics_core warm", installed)
        add("install: first evaluate after metrics_core warm (CPU s)", installed_cpu)
        add("install: metrics_core warm again (cache complete)", fill_cache(root, cache, ("metrics_core", "warm")))
    if parts & {"dashboard", "cold"}:
        cache = Path(tempfile.mkdtemp(prefix="numba_cache_", dir=work))
        add_dashboard("cold", time_dashboard(root, cache, browser, work / "server_cold.log"))
    if parts & {"dashboard", "warm"}:
        warm = work / f"numba_cache_warm_{abs(hash(str(root)))}"
        if not warm.exists():  # filled once per checkout, then reused by every repeat
            warm.mkdir()
            fill_cache(root, warm)
        add_dashboard("warm", time_dashboard(root, warm, browser, work / "server_warm.log"))


def table(all_results: dict[str, dict[str, list[float]]]) -> str:
    """Markdown table: one row per measurement, median and min per checkout."""
    roots = list(all_results)
    labels = list(dict.fromkeys(label for res in all_results.values() for label in res))
    head = "| measurement | " + " | ".join(f"{r} median s | {r} min s" for r in roots) + " |"
    rule = "|---|" + "---:|---:|" * len(roots)
    rows = [head, rule]
    for label in labels:
        cells = []
        for r in roots:
            values = all_results[r].get(label, [])
            cells += [f"{statistics.median(values):.2f}", f"{min(values):.2f}"] if values else ["", ""]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--users", type=int, default=200, help="users of the CLI's CSV pair (x 100 candidates)")
    p.add_argument("--parts", default="cli,dashboard",
                   help="comma-separated: cli, install (metrics_core warm, then the CLI's first evaluate), "
                        "dashboard (cold and warm), warm / cold (the warm / cold dashboard only), floor (bare Streamlit "
                        "pages: one table, then a table and a plotly chart)")
    p.add_argument("--root", action="append", type=Path,
                   help="checkout to measure (repeatable; default: this repository)")
    p.add_argument("--json", type=Path, help="write the raw seconds here")
    args = p.parse_args(argv)
    parts = {x.strip() for x in args.parts.split(",") if x.strip()}
    unknown = parts - {"cli", "install", "dashboard", "warm", "cold", "floor"}
    if unknown:
        p.error(f"unknown part(s): {', '.join(sorted(unknown))}")
    roots = [r.resolve() for r in (args.root or [ROOT])]
    print(f"{os.cpu_count()} CPUs; load average at start: {load_average()}")
    results: dict[str, dict[str, list[float]]] = {str(r): {} for r in roots}
    with tempfile.TemporaryDirectory(prefix="cold_start_") as tmp:
        work = Path(tmp)
        run, qrels = write_small_pair(work, args.users)
        print(f"CLI input: {args.users} users x 100 candidates ({run.stat().st_size / 2**20:.1f} MiB CSV run)")
        browser = pw = None
        if parts & {"dashboard", "warm", "cold", "floor"}:
            from playwright.sync_api import sync_playwright

            pw = sync_playwright().start()
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        try:
            for repeat in range(args.repeats):
                for root in roots:  # interleaved, so that every checkout sees the same load
                    print(f"repeat {repeat + 1}/{args.repeats}: {root}", flush=True)
                    measure_root(root, parts, run, qrels, browser, work, results[str(root)])
        finally:
            if browser is not None:
                browser.close()
                pw.stop()
    print()
    print(table(results))
    print(f"\nload average at end: {load_average()}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
