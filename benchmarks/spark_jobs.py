"""How many Spark jobs a small evaluation submits, and how long it takes.

A small evaluation spends its time in job round trips, not in computing: this counts the jobs
of ``metrics_core.spark.evaluate`` (SparkContext's status tracker, a job group per call) on
``--users`` users x 100 candidates of :mod:`benchmarks.datagen` (34 users: 3,400 rows) with the
metrics below (ranking, scored-row, AUC / AP, coverage, personalization and novelty: every
kind of pass), on a ``local[2]`` session, and prints the jobs and the wall seconds of each
repeat (the first one also starts the Python workers) with the load average::

    python -m benchmarks.spark_jobs [--users 34] [--repeats 3]

To compare two checkouts, run it with ``PYTHONPATH`` set to each. Times are printed, never
asserted; ``tests/test_spark.py`` asserts the job count.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100", "f1@10", "hit_rate@10", "r_precision",
           "hit_ratio@10", "dcg@10", "auc", "pr_auc", "gauc", "logloss", "accuracy", "rmse",
           "coverage@10", "personalization@10", "novelty@10"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=34, help="users (x 100 candidates)")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    sys.path.insert(0, str(ROOT / "tests"))
    import _spark_cluster

    from benchmarks.datagen import generate
    from metrics_core import spark as mcs

    _spark_cluster.use_test_jvm_options()
    spark = _spark_cluster.start_session("local[2]", "spark-jobs")
    context = spark.sparkContext
    ds = generate(args.users, id_type="str")
    run, qrels = spark.createDataFrame(ds.run), spark.createDataFrame(ds.qrels)
    print(f"{len(ds.run):,} run rows, {len(METRICS)} metrics; load average at start "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    seconds, jobs = [], []
    try:
        for repeat in range(args.repeats):
            group = f"spark-jobs-{uuid.uuid4().hex}"
            context.setJobGroup(group, "benchmarks.spark_jobs")
            start = time.perf_counter()
            ev = mcs.evaluate(run, qrels, METRICS)
            seconds.append(time.perf_counter() - start)
            jobs.append(len(context.statusTracker().getJobIdsForGroup(group)))
            ev.unpersist()
            print(f"  repeat {repeat + 1}: {jobs[-1]} jobs, {seconds[-1]:.2f} s "
                  f"(load {', '.join(f'{x:.2f}' for x in os.getloadavg())})", flush=True)
    finally:
        spark.stop()
    later = seconds[1:] or seconds
    print(f"jobs per evaluation: {sorted(set(jobs))}; seconds after the first: median {statistics.median(later):.2f}, "
          f"min {min(later):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
