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

``--suite compare`` times the paired statistics instead, on per-user tables of ``--users`` users (three
models, two metrics, about 5% of the users missing from each challenger, an attribute of 60 values):

* ``compare, t``: ``mc.compare`` against a baseline, paired t-test, no bootstrap;
* ``compare, t + wilcoxon``: the same with the Wilcoxon test beside it;
* ``segments, 60 values``: ``compare_segments`` over the 60 values (t-test).

The report gives each side's minimum over every round and the ratio this checkout / other (below 1:
this checkout is faster). Command (from the repository root)::

    python -m benchmarks.kernel_ab --users 100000 --code /path/to/other/checkout [--rounds 3] [--repeats 5] [--variant serial]
    python -m benchmarks.kernel_ab --suite compare --users 1000000 --code /path/to/other/checkout
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
setting = lambda: use_variant(None if variant == "size" else variant)
"""

#: the end of every worker: ``cases`` timed (fastest wall and CPU seconds of ``repeats`` calls after one
#: untimed call, inside ``setting()``), printed as JSON
TIMING = r"""
out = {}
for name, call in cases.items():
    with setting():
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

COMPARE_WORKER = r"""
import contextlib, json, sys, time
import numpy as np
import pandas as pd
sys.path.insert(0, sys.argv[1])   # the checkout whose metrics_core is timed
import metrics_core as mc
from metrics_core.segment_compare import compare_segments

users, repeats = int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
ids = np.array([f"u{i}" for i in range(users)], dtype=object)
base = rng.random(users).round(2)
tables = {}
for k, name in enumerate(["base", "a", "b"]):
    keep = rng.random(users) > 0.05 * k
    values = {"ndcg@10": np.clip(base + rng.normal(0.01 * k, 0.1, users), 0, 1), "mse": rng.random(users) * 3}
    tables[name] = pd.DataFrame(values, index=pd.Index(ids)).loc[keep]
labels = pd.Series(rng.integers(1, 61, users).astype(str), index=pd.Index(ids))
cases = {
    "compare, t": lambda: mc.compare(tables, baseline="base", test="t", n_resamples=0),
    "compare, t + wilcoxon": lambda: mc.compare(tables, baseline="base", test="t", tests=["wilcoxon"], n_resamples=0),
    "segments, 60 values": lambda: compare_segments(tables, labels, baseline="base", test="t"),
}
setting = contextlib.nullcontext
"""
WORKERS = {"kernels": WORKER + TIMING, "compare": COMPARE_WORKER + TIMING}


def run_side(code: str, users: int, repeats: int, variant: str, suite: str = "kernels") -> dict:
    """One fresh process timing every case on ``code``'s metrics_core: {case: (min wall s, min CPU s)}."""
    done = subprocess.run([sys.executable, "-c", WORKERS[suite], code, str(ROOT), str(users), str(repeats), variant],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": code})
    if done.returncode != 0:
        raise SystemExit(f"{code}: the worker failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=tuple(WORKERS), default="kernels",
                        help="kernels: the ranking kernels (default); compare: the paired statistics")
    parser.add_argument("--users", type=int, default=100_000,
                        help="kernels: users x 100 rows (default 100000: 10M rows); compare: users per table")
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
            for case, (wall, cpu) in run_side(code, args.users, args.repeats, args.variant, args.suite).items():
                old = best[side].get(case, (wall, cpu))
                best[side][case] = (min(wall, old[0]), min(cpu, old[1]))
    size = f"{args.users * 100:,} rows, {args.variant} kernels" if args.suite == "kernels" else f"{args.users:,} users"
    print(f"{size}, min of {args.rounds} rounds x {args.repeats} repeats; "
          f"load average at the end {os.getloadavg()[0]:.1f}")
    print("| case | this checkout s (CPU s) | other s (CPU s) | this / other (wall) | this / other (CPU) |")
    print("|---|---:|---:|---:|---:|")
    for case, (wall, cpu) in best["this"].items():
        o_wall, o_cpu = best["other"][case]
        print(f"| {case} | {wall:.3f} ({cpu:.3f}) | {o_wall:.3f} ({o_cpu:.3f}) | {wall / o_wall:.2f}x | {cpu / o_cpu:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
