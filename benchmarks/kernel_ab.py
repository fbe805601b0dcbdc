"""Side by side: the ranking kernels of this checkout against another one (``--code``), on the same data.

Each round starts one fresh process per checkout, in turn (A, B, A, B, ...), so that a change of load
on a shared machine reaches both sides alike. A process generates the data (:mod:`benchmarks.datagen`,
the same for both), prepares it once, then times ``--repeats`` calls of each case and keeps the
fastest wall time and the smallest CPU time (every thread of the process), the
kernels' variant chosen by input size or forced (``--variant serial``: one thread, the steadiest CPU figure):

* ``evaluate``: ``mc.evaluate`` of the five metrics of :data:`benchmarks.tools.METRICS` (ranking kernel
  at three cutoffs), continuous scores;
* ``evaluate, tied``: the same on scores rounded to one decimal (tie groups of about ten items, ``ties="average"``);
* ``curve``: ``mc.metric_curve`` of ndcg, map, mrr, precision and recall at k = 1..100 (the curve kernel).

The report gives each side's minimum over every round and the ratio this checkout / other (below 1:
this checkout is faster). Command (from the repository root)::

    python -m benchmarks.kernel_ab --users 100000 --code /path/to/other/checkout [--rounds 3] [--repeats 5] [--variant serial]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])   # the checkout whose metrics_core is timed
sys.path.insert(1, sys.argv[2])   # this checkout, for benchmarks.datagen
import metrics_core as mc
from benchmarks import datagen
from benchmarks.tools import METRICS

users, repeats, variant = int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
from metrics_core.kernels._jit import use_variant
ds = datagen.generate(users)
ranked = mc.prepare(ds.run, ds.qrels)
tied_run = ds.run.assign(score=np.round(ds.run["score"].to_numpy(), 1))
tied = mc.prepare(tied_run, ds.qrels)
cases = {
    "evaluate": lambda: mc.evaluate(ranked, metrics=METRICS),
    "evaluate, tied": lambda: mc.evaluate(tied, metrics=METRICS, ties="average"),
    "curve": lambda: mc.metric_curve(ranked, ["ndcg", "map", "mrr", "precision", "recall"], k_max=100),
}
out = {}
for name, call in cases.items():
    with use_variant(None if variant == "size" else variant):
        call()  # compile or load from the disk cache
        walls, cpus = [], []
        for _ in range(repeats):
            w0, c0 = time.perf_counter(), time.process_time()
            call()
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
    out[name] = (min(walls), min(cpus))
print(json.dumps(out))
"""


def run_side(code: str, users: int, repeats: int, variant: str) -> dict:
    """One fresh process timing every case on ``code``'s metrics_core: {case: (min wall s, min CPU s)}."""
    done = subprocess.run([sys.executable, "-c", WORKER, code, str(ROOT), str(users), str(repeats), variant],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": code})
    if done.returncode != 0:
        raise SystemExit(f"{code}: the worker failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=100_000, help="users x 100 rows (default 100000: 10M rows)")
    parser.add_argument("--code", required=True, help="the other checkout (its root folder)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--variant", choices=("size", "serial", "parallel"), default="size",
                        help="the kernels' variant: by input size (as in use), or forced; serial gives the steadiest "
                             "CPU seconds on a busy machine")
    args = parser.parse_args(argv)
    sides = {"this": str(ROOT), "other": str(Path(args.code).resolve())}
    best: dict[str, dict[str, tuple[float, float]]] = {side: {} for side in sides}
    for _ in range(args.rounds):
        for side, code in sides.items():
            for case, (wall, cpu) in run_side(code, args.users, args.repeats, args.variant).items():
                old = best[side].get(case, (wall, cpu))
                best[side][case] = (min(wall, old[0]), min(cpu, old[1]))
    print(f"{args.users * 100:,} rows, {args.variant} kernels, min of {args.rounds} rounds x {args.repeats} repeats; "
          f"load average at the end {os.getloadavg()[0]:.1f}")
    print("| case | this checkout s (CPU s) | other s (CPU s) | this / other (wall) | this / other (CPU) |")
    print("|---|---:|---:|---:|---:|")
    for case, (wall, cpu) in best["this"].items():
        o_wall, o_cpu = best["other"][case]
        print(f"| {case} | {wall:.3f} ({cpu:.3f}) | {o_wall:.3f} ({o_cpu:.3f}) | {wall / o_wall:.2f}x | {cpu / o_cpu:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
