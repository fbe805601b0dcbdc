"""Benchmark of metrics_core against ranx, pytrec_eval and a compiled-loop floor .

Usage (from the repository root)::

    python benchmarks/run_bench.py --users 10000 100000 --repeats 3
    python benchmarks/run_bench.py --users 1000000 --tools metrics_core,floor --ties
    python benchmarks/run_bench.py --users 100000 --parquet --first-call --classification 1000000

Each tool runs in its own process (``python -m benchmarks.tools``) on the same
deterministic data (:mod:`benchmarks.datagen`), from the in-memory DataFrames
to the means of ndcg@10, map@100, mrr@10, precision@10 and recall@100
(ranx/trec_eval conventions: linear gain, ideal over all judged items, AP
normalised by all relevant items).  The data has no tied scores, so every tool
must give the same means to 1e-9; the run exits with status 1 otherwise.
Peak memory is the worker's peak RSS after its data was generated (the kernel's
high-water mark is reset before the tool starts); ``wait4`` gives the whole
process's peak as well.  Load averages are printed because the machine is
shared.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import report  # noqa: E402
from benchmarks.tools import METRICS  # noqa: E402

TOOLS = ("metrics_core", "ranx", "pytrec_eval", "floor")
BASELINES = ("ranx", "pytrec_eval")
BASELINE_MAX_USERS = 100_000  # beyond this ranx needs more than the 24 GiB of this machine


def machine() -> str:
    """nproc, CPU model, RAM, Python and library versions, load averages."""
    cpu = "unknown"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = 0
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) * 1024
    versions = []
    for mod in ("numpy", "pandas", "pyarrow", "numba", "ranx", "pytrec_eval", "metrics_core"):
        try:
            from importlib import metadata

            dist = {"pytrec_eval": "pytrec-eval-terrier", "metrics_core": "metrics-core"}.get(mod, mod)
            versions.append(f"{mod} {metadata.version(dist)}")
        except Exception:
            versions.append(f"{mod} (not installed)")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (f"- machine: {os.cpu_count()} CPUs ({cpu}), {report.fmt_bytes(mem)} RAM, "
            f"{platform.system()} {platform.release()}\n"
            f"- Python {platform.python_version()}; {', '.join(versions)}\n"
            f"- load average (1, 5, 15 min) at start: {load}")


def run_worker(spec: dict, timeout: float, env_extra: dict | None = None) -> dict:
    """Run one measurement in a fresh process; return its result with the process peak RSS."""
    fd, out = tempfile.mkstemp(prefix="mc_bench_", suffix=".json")
    os.close(fd)
    log = out[:-5] + ".log"
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.update(env_extra or {})
    start = time.perf_counter()
    with open(log, "w") as log_fh:
        proc = subprocess.Popen([sys.executable, "-m", "benchmarks.tools", json.dumps(spec), out],
                                cwd=ROOT, env=env, stdout=log_fh, stderr=subprocess.STDOUT)
        deadline = start + timeout
        status, rusage = 0, None
        while True:
            pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                _, status, rusage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        proc.returncode = os.waitstatus_to_exitcode(status)
    try:
        if proc.returncode != 0:
            with open(log) as fh:
                tail = fh.read()[-2000:]
            reason = "timed out" if time.perf_counter() > deadline else f"exit status {proc.returncode}"
            return {"error": f"{spec['tool']} {reason}: {tail.strip().splitlines()[-1] if tail.strip() else ''}",
                    "log_tail": tail}
        with open(out) as fh:
            result = json.load(fh)
    finally:
        for path in (out, log):
            if os.path.exists(path):
                os.remove(path)
    result["process_peak_rss"] = rusage.ru_maxrss * 1024 if rusage else 0
    result["wall_s"] = time.perf_counter() - start
    return result


def _label(tool: str, ties: bool) -> str:
    return f"{tool} (tied scores)" if ties else tool


def bench_users(n_users: int, args) -> tuple[bool, dict, list[dict]]:
    ids = args.ids if args.ids != "auto" else ("int" if n_users >= 1_000_000 else "str")
    runs = [(t, False) for t in args.tools]
    if args.ties and "metrics_core" in args.tools:
        runs.append(("metrics_core", True))
    results, notes = [], []
    for tool, ties in runs:
        if tool in BASELINES and n_users > BASELINE_MAX_USERS and not args.force_baselines:
            notes.append(f"- {tool} skipped at {n_users:,} users: it runs out of this machine's memory "
                         f"(ranx > 24 GiB, pytrec_eval ~19 GiB and ~100 s); --force-baselines runs it.")
            continue
        spec = {"tool": tool, "users": n_users, "ids": ids, "ties": ties, "repeats": args.repeats,
                "profile": args.profile}
        print(f"  running {_label(tool, ties)} ...", file=sys.stderr, flush=True)
        r = run_worker(spec, args.timeout)
        if "error" in r:
            notes.append(f"- {_label(tool, ties)} failed: {r['error']}")
            print(r["log_tail"], file=sys.stderr)
            continue
        r["label"] = _label(tool, ties)
        results.append(r)
        if args.profile and r["extra"].get("profile"):
            notes.append(f"<details><summary>profile of {r['label']}</summary>\n\n```\n"
                         f"{r['extra']['profile']}\n```\n</details>")
    by_label = {r["label"]: r for r in results}
    untied = [r for r in results if not r["spec"]["ties"]]
    ok, agree = report.agreement(untied, METRICS)
    first = results[0] if results else None
    head = f"### {n_users:,} users x 100 candidates"
    if first:
        load = ", ".join(f"{x:.2f}" for x in first["loadavg"])
        head += (f" ({first['n_rows']:,} run rows + {first['n_qrels']:,} ground-truth rows, {ids} ids, "
                 f"input {report.fmt_bytes(first['input_bytes'])} in memory; load average during the first "
                 f"tool {load})")
    body = [head, "", report.timing_table(results), "", agree, ""]
    body += notes
    print("\n".join(body), flush=True)
    return ok, by_label, results


def bench_extra(tool: str, n_users: int, args, env_extra: dict | None = None, note: str = "") -> dict | None:
    ids = "int" if n_users >= 1_000_000 else "str"
    spec = {"tool": tool, "users": n_users, "ids": ids, "ties": False, "repeats": args.repeats,
            "profile": args.profile}
    print(f"  running {tool} at {n_users:,} users ...", file=sys.stderr, flush=True)
    r = run_worker(spec, args.timeout, env_extra)
    if "error" in r:
        print(f"- {tool} failed: {r['error']}\n{r['log_tail']}", flush=True)
        return None
    r["label"] = tool
    load = ", ".join(f"{x:.2f}" for x in r["loadavg"])
    titles = {
        "parquet": "Split of `metrics-core evaluate` on a Parquet pair",
        "classification": "Classification metrics on prepared data vs one sort of the score column",
        "first_call": "First call of a fresh process (import + JIT or on-disk cache)",
    }
    extra = ""
    if tool == "parquet":
        extra = f", files {report.fmt_bytes(r['extra']['parquet_bytes'])}"
    if tool == "classification":
        extra = f", mc.prepare {report.fmt_s(r['extra']['prepare_s'])} s (not in the ratios)"
    if tool == "first_call":
        extra = f", {note}NUMBA_CACHE_DIR {(env_extra or {}).get('NUMBA_CACHE_DIR', 'default')}"
    print(f"### {titles[tool]} ({n_users:,} users, {r['n_rows']:,} rows, {ids} ids{extra}; load {load})\n",
          flush=True)
    print(report.timing_table([r]) + "\n", flush=True)
    if "cli_max_abs_diff" in r["extra"]:
        print(f"CLI means vs in-process means: max |difference| {r['extra']['cli_max_abs_diff']:.1e}\n")
    if "cli_error" in r["extra"]:
        print(f"CLI failed: {r['extra']['cli_error']}\n")
    if args.profile and r["extra"].get("profile"):
        print(f"```\n{r['extra']['profile']}\n```\n")
    return r


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, nargs="+", default=[10_000, 100_000], help="user counts to measure")
    p.add_argument("--repeats", type=int, default=3, help="repeats per tool (min and median reported)")
    p.add_argument("--tools", default=",".join(TOOLS), help=f"comma-separated subset of {','.join(TOOLS)}")
    p.add_argument("--ties", action="store_true",
                   help="also measure metrics_core on tied scores (ties=average) for the 1.5x target")
    p.add_argument("--ids", choices=["auto", "str", "int"], default="auto",
                   help="id type (auto: str below 1M users, int at 1M where string ids would not fit in memory)")
    p.add_argument("--parquet", type=int, metavar="USERS", nargs="?", const=100_000,
                   help="also split metrics-core evaluate on a Parquet pair (default 100000 users = 10M rows)")
    p.add_argument("--classification", type=int, metavar="USERS", nargs="?", const=1_000_000,
                   help="also time auc, logloss, gauc, pcopc vs np.sort (default 1000000 users = 100M rows)")
    p.add_argument("--first-call", action="store_true",
                   help="also time the first call of a fresh process, with a cold and a warm JIT disk cache")
    p.add_argument("--force-baselines", action="store_true", help="run ranx/pytrec_eval above 100000 users")
    p.add_argument("--profile", action="store_true", help="cProfile each worker, print the top functions")
    p.add_argument("--timeout", type=float, default=3600, help="seconds per worker before it is killed")
    p.add_argument("--json", metavar="PATH", help="write every raw result to PATH")
    args = p.parse_args(argv)
    args.tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    unknown = [t for t in args.tools if t not in TOOLS]
    if unknown:
        p.error(f"unknown tool(s) {', '.join(unknown)}; choose from {', '.join(TOOLS)}")
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    print("## metrics_core benchmark\n")
    print(f"command: `python benchmarks/run_bench.py {' '.join(sys.argv[1:] if argv is None else argv)}`\n")
    print(machine() + "\n", flush=True)
    all_ok = True
    raw: dict = {"users": {}, "extras": {}}
    for n in args.users:
        ok, by_label, results = bench_users(n, args)
        all_ok &= ok
        raw["users"][str(n)] = results
        print(f"#### Targets at {n:,} users (speed targets are set at 100,000 users; floor and memory "
              f"at 1,000,000)\n\n{report.targets(by_label, {})}\n", flush=True)
    extras = {}
    if args.parquet:
        extras["parquet"] = bench_extra("parquet", args.parquet, args)
    if args.first_call:
        with tempfile.TemporaryDirectory(prefix="mc_numba_cache_") as cache:
            env = {"NUMBA_CACHE_DIR": cache}
            cold = bench_extra("first_call", 1_000, args, env, note="cold cache (compiles): ")
            warm = bench_extra("first_call", 1_000, args, env, note="warm cache (the target): ")
        extras["first_call_cold"] = cold
        extras["first_call"] = warm
    if args.classification:
        extras["classification"] = bench_extra("classification", args.classification, args)
    extras = {k: v for k, v in extras.items() if v}
    raw["extras"] = extras
    if extras:
        print(f"#### Targets of the extra measurements\n\n{report.targets({}, extras)}\n")
    print(f"load average at the end: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(raw, fh, indent=1)
    if not all_ok:
        print("ERROR: the tools' means disagree (see above)", file=sys.stderr)
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
