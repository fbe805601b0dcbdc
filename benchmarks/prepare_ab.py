"""Side by side: ``mc.prepare`` of this checkout against other checkouts (``--code``), on the same data.

Each round starts one fresh process per checkout, in turn (this, A, B, this, A, B, ...), so that a change of
load on a shared machine reaches every side alike. A process generates the data (:mod:`benchmarks.datagen`,
``--users`` x 100 rows, text ids, the same for every side), prepares it once untimed (kernels compiled or
loaded from the cache), then times ``--repeats`` calls of ``mc.prepare(run, qrels)``, the kernels' variant chosen by input size or
forced (``--variant serial``: one thread, the steadiest CPU figure on a busy machine). The report gives each
side's minimum and median wall time and its minimum CPU time (every thread of the process) over every round,
and their ratios to this checkout's. Command
(from the repository root; another checkout is e.g. ``git worktree add /tmp/old COMMIT``)::

    python -m benchmarks.prepare_ab --users 100000 --code /tmp/old [--code /tmp/other] --rounds 2 --repeats 3 [--variant serial]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])   # the checkout whose metrics_core is timed
sys.path.insert(1, sys.argv[2])   # this checkout, for benchmarks.datagen
import metrics_core as mc
from benchmarks import datagen

from metrics_core.kernels._jit import use_variant

ds = datagen.generate(int(sys.argv[3]))
variant = None if sys.argv[5] == "size" else sys.argv[5]
times = []
with use_variant(variant):
    mc.prepare(ds.run, ds.qrels)
    for _ in range(int(sys.argv[4])):
        start, cpu = time.perf_counter(), time.process_time()
        mc.prepare(ds.run, ds.qrels)
        times.append((time.perf_counter() - start, time.process_time() - cpu))
print(json.dumps(times))
"""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=100_000, help="users x 100 rows (100,000: 10M rows)")
    p.add_argument("--code", action="append", required=True, help="another checkout (repeatable)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--variant", choices=["size", "serial", "parallel"], default="size")
    args = p.parse_args(argv)
    sides = [str(ROOT)] + [str(Path(c).resolve()) for c in args.code]
    times: dict[str, list[list[float]]] = {side: [] for side in sides}
    for r in range(args.rounds):
        for side in sides:
            done = subprocess.run([sys.executable, "-c", WORKER, side, str(ROOT), str(args.users), str(args.repeats),
                                   args.variant],
                                  capture_output=True, text=True, cwd=ROOT)
            if done.returncode:
                print(f"{side}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}", file=sys.stderr)
                return 1
            times[side] += json.loads(done.stdout.strip().splitlines()[-1])
            print(f"round {r + 1} {side}: wall, CPU " + ", ".join(f"{w:.3f} {c:.3f}" for w, c in
                                                                  times[side][-args.repeats:]), flush=True)
    wall0 = min(w for w, _ in times[sides[0]])
    cpu0 = min(c for _, c in times[sides[0]])
    print(f"mc.prepare, {args.users * 100:,} rows, variant {args.variant}, {args.rounds * args.repeats} calls a side: "
          f"wall min / median, CPU min (ratios to this checkout's minimum)")
    for side in sides:
        wall = [w for w, _ in times[side]]
        cpu = min(c for _, c in times[side])
        print(f"  {side}: {min(wall):.3f} s / {statistics.median(wall):.3f} s, CPU {cpu:.3f} s "
              f"({min(wall) / wall0:.3f}x wall, {cpu / cpu0:.3f}x CPU)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
