"""trec_eval's whole measure set (``-m all_trec``): metrics_core against pytrec_eval.

Usage (from the repository root)::

    python benchmarks/all_trec_bench.py --users 100000 --repeats 3

On the deterministic data of :mod:`benchmarks.datagen` (``--users`` x 100
candidates, graded relevance, no tied scores), both tools start from the same
in-memory DataFrames and compute every measure of ``all_trec`` per query and
its summary: metrics_core with ``mc.prepare`` then ``mc.evaluate(...,
metrics=["all_trec"], preset="pytrec_eval")`` (pytrec_eval's
trec_eval counts recall levels as floor(x R + 0.9); the trec_eval preset rounds them as trec_eval 10),
pytrec_eval with its dict building
then ``RelevanceEvaluator(qrels, supported_measures).evaluate(run)``. The
summaries must agree to 1e-9 (exit status 1 otherwise). Times are the minimum
and median of ``--repeats``; the JIT compile or cache load of metrics_core is
timed apart on a tiny input and excluded.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import datagen  # noqa: E402
from benchmarks.tools import _pytrec_dicts  # noqa: E402


def _timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def _summary(measure: str, values: list[float]) -> float:
    import pytrec_eval

    if measure.startswith("gm_"):
        return math.exp(sum(values) / len(values))
    if measure.startswith("num_"):
        return float(sum(values))
    return pytrec_eval.compute_aggregated_measure(measure, values)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import pytrec_eval

    import metrics_core as mc
    from metrics_core.metrics.presets import ALL_TREC

    ds = datagen.generate(args.users)
    tiny = datagen.generate(50)
    jit, _ = _timed(lambda: mc.evaluate(mc.prepare(tiny.run, tiny.qrels), metrics=["all_trec"], preset="pytrec_eval"))
    times: dict[str, list[float]] = {}
    ours = None
    for _ in range(args.repeats):
        t_prep, ranked = _timed(lambda: mc.prepare(ds.run, ds.qrels))
        t_eval, ev = _timed(lambda: mc.evaluate(ranked, metrics=["all_trec"], preset="pytrec_eval"))
        for step, t in (("prepare", t_prep), ("evaluate all_trec", t_eval), ("end to end", t_prep + t_eval)):
            times.setdefault(("metrics_core", step), []).append(t)
        ours = ev.summary
        del ranked, ev
    measures = pytrec_eval.supported_measures - {"runid", "relstring"}
    theirs = None
    for _ in range(args.repeats):
        t_conv, (qrels, run) = _timed(lambda: _pytrec_dicts(ds))
        t_eval, res = _timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run))
        for step, t in (("dict building", t_conv), ("evaluate all_trec", t_eval), ("end to end", t_conv + t_eval)):
            times.setdefault(("pytrec_eval", step), []).append(t)
        values = list(res.values())
        theirs = {m: _summary(m, [v[m] for v in values]) for m in ALL_TREC}
        del qrels, run, res, values

    base = min(times[("metrics_core", "end to end")])
    print(f"command: python benchmarks/all_trec_bench.py --users {args.users} --repeats {args.repeats}")
    print(f"{ds.n_rows:,} run rows, {len(ds.qrels):,} ground-truth rows, {len(ALL_TREC)} measures; "
          f"metrics_core JIT compile or cache load (excluded) {jit:.3f} s; load average {os.getloadavg()}")
    print("| tool | step | min s | median s | vs metrics_core end to end |")
    print("|---|---|---:|---:|---:|")
    for (tool, step), ts in times.items():
        print(f"| {tool} | {step} | {min(ts):.3f} | {statistics.median(ts):.3f} | {min(ts) / base:.2f}x |")
    worst = max(abs(ours[m] - theirs[m]) for m in ALL_TREC)
    print(f"max |difference| of the {len(ALL_TREC)} summaries: {worst:.1e}")
    return 0 if worst <= 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
