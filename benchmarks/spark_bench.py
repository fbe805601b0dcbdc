"""What the Spark engine costs on this machine, against the single-machine path.

Generates the benchmark data set (``benchmarks/datagen.py``: U users x 100
candidates, string ids, graded relevance), writes it as Parquet, then times:

1. starting a local SparkSession (``local[*]``);
2. ``metrics_core.spark.evaluate_files`` on the Parquet pair for the five
   ranking metrics of the other benchmarks plus ``auc`` and ``gauc``
   (read + group by user + per-user kernels + exact AUC), twice (cold: Python
   workers start and load the compiled kernels; warm);
3. ``metrics_core.evaluate`` on the same data in this process (read with
   pandas/pyarrow + prepare + evaluate),

and checks that every summary value agrees to 1e-9. Run::

    python -m benchmarks.spark_bench --users 100000       # 10M rows

Spark needs ``pip install 'metrics-core[spark]'`` and a Java 17+ runtime.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import tempfile
import time

import pandas as pd

METRICS = ["ndcg@10", "map@100", "mrr@10", "precision@10", "recall@100", "auc", "gauc"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=100_000, help="users (x 100 rows each)")
    p.add_argument("--master", default="local[*]")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--buckets", type=int, default=None, help="user groups (default: 4 per core)")
    p.add_argument("--dir", default=None, help="where to write the Parquet files (default: a temp dir)")
    args = p.parse_args(argv)

    from benchmarks.datagen import generate

    import metrics_core as mc
    from metrics_core import spark as mcs

    work = args.dir or tempfile.mkdtemp(prefix="mc_spark_bench_")
    os.makedirs(work, exist_ok=True)
    run_path, qrels_path = os.path.join(work, "run.parquet"), os.path.join(work, "qrels.parquet")
    t = time.perf_counter()
    ds = generate(args.users)
    ds.run.to_parquet(run_path, index=False)
    ds.qrels.to_parquet(qrels_path, index=False)
    n_rows, n_qrels = len(ds.run), len(ds.qrels)
    del ds
    print(f"data: {args.users:,} users, {n_rows:,} run rows, {n_qrels:,} ground-truth rows "
          f"(generated and written in {time.perf_counter() - t:.1f} s) in {work}")

    cores = os.cpu_count() or 1
    buckets = args.buckets or 4 * cores
    t = time.perf_counter()
    spark = mcs.get_session(args.master, config={
        "spark.driver.memory": args.driver_memory,
        "spark.sql.shuffle.partitions": str(buckets),
        "spark.ui.enabled": "false",
    })
    t_session = time.perf_counter() - t
    print(f"spark {spark.version} session on {args.master} ({cores} cores): {t_session:.1f} s")

    timings = []
    result = None
    for attempt in ("cold", "warm"):
        t = time.perf_counter()
        results = mcs.evaluate_files([run_path], qrels_path, METRICS)
        elapsed = time.perf_counter() - t
        result = results["run"]
        timings.append(elapsed)
        print(f"spark evaluate_files ({attempt}): {elapsed:.1f} s")
        result.unpersist()

    t = time.perf_counter()
    run = pd.read_parquet(run_path)
    qrels = pd.read_parquet(qrels_path)
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    local = mc.evaluate(run, qrels, METRICS)
    t_eval = time.perf_counter() - t
    print(f"single machine: read {t_read:.1f} s + prepare/evaluate {t_eval:.1f} s = {t_read + t_eval:.1f} s")

    worst = 0.0
    for label, expected in local.summary.items():
        got = result.summary[label]
        diff = 0.0 if (math.isnan(expected) and math.isnan(got)) else abs(got - expected)
        worst = max(worst, diff)
        print(f"  {label:>14}: spark {got:.12f}  single {expected:.12f}")
    status = "OK" if worst <= 1e-9 else "MISMATCH"
    print(f"largest difference {worst:.2e}: {status}")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"driver Python peak RSS {peak:.2f} GiB (the JVM and Python workers are separate processes)")
    print("\n| rows | Spark session start | Spark evaluate cold | Spark evaluate warm | single machine |")
    print("|---|---|---|---|---|")
    print(f"| {n_rows:,} | {t_session:.1f} s | {timings[0]:.1f} s | {timings[1]:.1f} s | {t_read + t_eval:.1f} s |")
    spark.stop()
    if status != "OK":
        raise SystemExit(1)


if __name__ == "__main__":
    main()
