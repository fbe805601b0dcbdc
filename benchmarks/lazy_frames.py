"""Peak memory and time of ``mc.evaluate`` on a Parquet run read by pandas against the same file
as a polars LazyFrame (``pl.scan_parquet``, read batch by batch into one Arrow table): each path in
its own process, its peak resident memory (``VmHWM``) and its memory after the imports (``VmRSS``
before reading), and the evaluation's numbers, which must be equal.

Usage::

    python -m benchmarks.lazy_frames [--rows 5000000] [--folder /tmp/lazy_frames] [--repeats 1]

The data: ``rows / 20`` users with 20 scored items each (ids as text ``u123``/``i45``, scores
float64), and a ground truth of 5 items per user; generated once in ``--folder``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

METRICS = ["ndcg@10", "map@100", "recall@20", "mrr@10"]
PATHS = ("pandas", "lazyframe")


def write_data(folder: Path, rows: int, seed: int = 0) -> tuple[Path, Path]:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    run, qrels = folder / f"run_{rows}.parquet", folder / f"qrels_{rows}.parquet"
    if run.exists() and qrels.exists():
        return run, qrels
    rng = np.random.default_rng(seed)
    users = rows // 20
    user = np.repeat(np.arange(users), 20)
    item = (rng.integers(0, 50_000, size=(users, 1)) + np.arange(20)).ravel() % 50_000
    pq.write_table(pa.table({"user_id": pa.array([f"u{u}" for u in user], pa.string()),
                             "item_id": pa.array([f"i{i}" for i in item], pa.string()),
                             "score": rng.random(user.size)}), run, row_group_size=500_000)
    picked = rng.random(user.size) < 0.25
    pq.write_table(pa.table({"user_id": pa.array([f"u{u}" for u in user[picked]], pa.string()),
                             "item_id": pa.array([f"i{i}" for i in item[picked]], pa.string()),
                             "relevance": rng.integers(1, 4, int(picked.sum()))}), qrels)
    return run, qrels


def _status(field: str) -> int:
    """A field of /proc/self/status in bytes (``VmHWM``: the peak resident set; ``VmRSS``: now)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def one(path: str, run: str, qrels: str) -> dict:
    """Evaluate by ``path`` in this process: the numbers, the peak memory, the seconds."""
    import pandas as pd
    import polars as pl

    import metrics_core as mc

    mc.evaluate(pd.DataFrame({"user_id": ["a"], "item_id": ["x"], "score": [1.0]}),
                pd.DataFrame({"user_id": ["a"], "item_id": ["x"], "relevance": [1]}), METRICS)  # kernels loaded
    before = _status("VmRSS")
    start = time.perf_counter()
    if path == "pandas":
        ev = mc.evaluate(pd.read_parquet(run), pd.read_parquet(qrels), METRICS)
    else:
        ev = mc.evaluate(pl.scan_parquet(run), pl.scan_parquet(qrels), METRICS)
    seconds = time.perf_counter() - start
    return {"path": path, "summary": {m: float(ev.summary[m]) for m in METRICS}, "seconds": seconds,
            "rss_before": before, "peak": _status("VmHWM")}


def measure(rows: int, folder: Path, repeats: int = 1) -> list[dict]:
    run, qrels = write_data(folder, rows)
    results = []
    for _ in range(repeats):
        for path in PATHS:
            out = subprocess.run([sys.executable, "-m", "benchmarks.lazy_frames", "--one", path, str(run), str(qrels)],
                                 capture_output=True, text=True, check=True)
            results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=5_000_000)
    p.add_argument("--folder", type=Path, default=Path("/tmp/lazy_frames"))
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--one", nargs=3, metavar=("PATH", "RUN", "QRELS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(one(*args.one)))
        return 0
    results = measure(args.rows, args.folder, args.repeats)
    by_path = {path: [r for r in results if r["path"] == path] for path in PATHS}
    same = all(r["summary"] == results[0]["summary"] for r in results)
    print(f"{args.rows:,} rows, {args.repeats} repeat(s); numbers equal on both paths: {same}")
    for path, rs in by_path.items():
        peak = min(r["peak"] for r in rs) / 2**20
        grown = min(r["peak"] - r["rss_before"] for r in rs) / 2**20
        print(f"{path:>10}: peak {peak:,.0f} MiB (+{grown:,.0f} MiB over the process after its imports), "
              f"{min(r['seconds'] for r in rs):.2f} s")
    pandas, lazy = (min(r["peak"] - r["rss_before"] for r in by_path[p]) for p in PATHS)
    print(f"LazyFrame / pandas, memory grown while reading and evaluating: {lazy / pandas:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
