"""Whole-process time of ``metrics-core evaluate`` on files against a pyarrow + ``mc.evaluate`` script.

Usage (from the repository root)::

    python -m benchmarks.file_path --users 100000 --repeats 3 [--dir DIR] [--formats parquet,csv] [--code DIR]

Writes one run/ground-truth pair of :mod:`benchmarks.datagen` (string ids,
graded truth) as Parquet (``DataFrame.to_parquet``), as CSV
(``pyarrow.csv.write_csv``) and as TREC run and qrels files (single spaces), then times, each in its own fresh process and
alternating, the command line
``python -m metrics_core evaluate --run RUN --qrels QRELS --metrics ... --json``
and ``python -m benchmarks.pyarrow_evaluate RUN QRELS`` (pyarrow reader,
``to_pandas``, ``mc.evaluate``). Prints min and median of each and the ratio of
the medians, checks that both give the same means (exit status 1 otherwise),
and the load average before and after. Numba's on-disk kernel cache is warmed
first by one untimed run of each.
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

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.pyarrow_evaluate import METRICS  # noqa: E402

FORMATS = ("parquet", "csv", "trec")


def write_pair(users: int, directory: str, formats: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """Write the pair in each format (skipped when the files exist); ``{format: (run, qrels)}``."""
    paths = {f: (os.path.join(directory, f"run.{f}"), os.path.join(directory, f"qrels.{f}")) for f in formats}
    if all(os.path.exists(p) for pair in paths.values() for p in pair):
        return paths
    import pyarrow as pa
    import pyarrow.csv as pcsv

    from benchmarks import datagen

    ds = datagen.generate(users)
    for f, (run_path, qrels_path) in paths.items():
        for frame, path in ((ds.run, run_path), (ds.qrels, qrels_path)):
            if f == "parquet":
                frame.to_parquet(path, index=False)
            elif f == "trec":
                write_trec(frame, path)
            else:
                pcsv.write_csv(pa.Table.from_pandas(frame, preserve_index=False), path)
    return paths


def write_trec(frame, path: str) -> None:
    """A run as ``qid Q0 docno rank score tag`` lines (rank: position within the user's rows), ground
    truth as ``qid 0 docno rel`` lines; single spaces, scores in Python's shortest round-trip form."""
    if "score" in frame.columns:
        rank = frame.groupby("user_id", sort=False).cumcount() + 1
        lines = (frame["user_id"] + " Q0 " + frame["item_id"] + " " + rank.astype(str) + " "
                 + frame["score"].map(repr) + " bench")
    else:
        lines = frame["user_id"] + " 0 " + frame["item_id"] + " " + frame["relevance"].map(repr)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


SCRIPT = os.path.join(ROOT, "benchmarks", "pyarrow_evaluate.py")


def commands(run_path: str, qrels_path: str) -> dict[str, list[str]]:
    return {
        "metrics-core evaluate (CLI)": [sys.executable, "-m", "metrics_core", "evaluate", "--run", run_path,
                                        "--qrels", qrels_path, "--metrics", ",".join(METRICS), "--json", "-q"],
        "pyarrow + mc.evaluate script": [sys.executable, SCRIPT, run_path, qrels_path],
    }


def timed(cmd: list[str], code: str) -> tuple[float, float, dict]:
    """Wall seconds of one process (fork to exit), its CPU seconds (user + system) and the means it printed;
    ``metrics_core`` is imported from the checkout ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=code, env={**os.environ, "PYTHONPATH": code})
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-500:]}")
    doc = json.loads(proc.stdout)
    means = doc["models"]["run"] if "models" in doc else doc
    return seconds, cpu, {m: float(means[m]) for m in METRICS}


def measure(paths: dict[str, tuple[str, str]], repeats: int, code: str = ROOT) -> tuple[list[dict], bool]:
    rows, agree = [], True
    for fmt, (run_path, qrels_path) in paths.items():
        cmds = commands(run_path, qrels_path)
        times: dict[str, list[float]] = {label: [] for label in cmds}
        cpu: dict[str, list[float]] = {label: [] for label in cmds}
        means = {label: timed(cmd, code)[2] for label, cmd in cmds.items()}  # untimed: warms the page and kernel caches
        for _ in range(repeats):
            for label, cmd in cmds.items():
                seconds, cpu_seconds, got = timed(cmd, code)
                times[label].append(seconds)
                cpu[label].append(cpu_seconds)
                agree &= got == means[label]
        cli, script = (statistics.median(v) for v in times.values())
        diff = max(abs(a - b) for a, b in zip(*(m.values() for m in means.values())))
        agree &= diff <= 1e-12
        cli_cpu, script_cpu = (statistics.median(v) for v in cpu.values())
        rows.append({"format": fmt, "times": times, "cpu": cpu, "ratio": cli / script, "cpu_ratio": cli_cpu / script_cpu,
                     "max_abs_diff": diff,
                     "bytes": os.path.getsize(run_path) + os.path.getsize(qrels_path)})
    return rows, agree


def table(rows: list[dict]) -> str:
    out = ["| format | files | process | wall min s | wall median s | CLI / script (wall medians) "
           "| CPU median s | CLI / script (CPU) |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        for i, (label, values) in enumerate(r["times"].items()):
            ratio, cpu_ratio = (f"{r['ratio']:.2f}x", f"{r['cpu_ratio']:.2f}x") if i == 0 else ("", "")
            out.append(f"| {r['format']} | {r['bytes'] / 2**20:.0f} MiB | {label} | {min(values):.2f} | "
                       f"{statistics.median(values):.2f} | {ratio} | {statistics.median(r['cpu'][label]):.2f} "
                       f"| {cpu_ratio} |")
    return "\n".join(out)


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dir", help="where the files are written (default: a temporary directory, removed after)")
    p.add_argument("--formats", default=",".join(FORMATS))
    p.add_argument("--code", default=ROOT, help="checkout whose metrics_core is timed (default: this one), "
                                                 "e.g. an exported earlier commit for a before/after table")
    args = p.parse_args(argv)
    formats = tuple(f for f in args.formats.split(",") if f)
    if set(formats) - set(FORMATS):
        p.error(f"--formats: choose from {', '.join(FORMATS)}")
    with tempfile.TemporaryDirectory(prefix="mc_files_") as tmp:
        directory = args.dir or tmp
        os.makedirs(directory, exist_ok=True)
        paths = write_pair(args.users, directory, formats)
        print(f"load average (1, 5, 15 min) at start: {load()}")
        rows, agree = measure(paths, args.repeats, os.path.abspath(args.code))
    print(f"\n{args.users:,} users x 100 candidates, string ids; {args.repeats} repeats, each a fresh process\n")
    print(table(rows))
    for r in rows:
        print(f"\n{r['format']}: max |CLI mean - script mean| = {r['max_abs_diff']:.1e}")
    print(f"load average (1, 5, 15 min) at the end: {load()}")
    if not agree:
        print("the CLI and the script disagree", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
