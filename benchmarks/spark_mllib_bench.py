"""Spark: metrics_core's engine against MLlib's RankingEvaluator, same data, same SparkSession.

Data: ``benchmarks/datagen.py``, U users x 100 candidates, integer ids
(RankingEvaluator takes arrays of doubles; item ids up to 1,000,002 are exact
as doubles), no tied scores within a user (checked). Written once to Parquet;
both sides start from the same row-per-item DataFrames read from it
(run ``user_id, item_id, score``; ground truth ``user_id, item_id, relevance``).

MLlib: ``RankingEvaluator`` needs one row per user with the predicted ids in
rank order and the relevant ids. Built with Spark SQL (what a user must do):
``sort_array(collect_list(struct(score, item_id)), asc=False)`` per user (score
descending, then item id descending: deterministic), the ground truth's
relevant ids (relevance >= 1) collected per user, joined, cached, then one
``evaluate`` per metric: ndcgAtK, precisionAtK, meanAveragePrecisionAtK,
recallAtK (k = 10) and meanAveragePrecision. Its time includes building and
caching those arrays.

metrics_core: ``metrics_core.spark.evaluate(run, truth, [...], preset="spark_mllib")``:
binary gain, ideal DCG over min(k, R) items, AP@k divided by min(k, R),
precision divided by k, users without a relevant item scored 0, users missing
from the run left out: MLlib's RankingMetrics (``mc.presets()``). The preset's
tie rule takes rows in input order; with no tied scores every rule gives the same
order, and the default exact rule (``ties="average"``) is passed explicitly. The five means
must agree to 1e-9.

Route: both DataFrames are plain scans of local Parquet files whose rows are in
user order (datagen writes them so), so metrics_core takes its key-range path
(``metrics_core.spark._range_plan``): the driver reads the files' footers, cuts
the user ids into ranges, and each task reads its range's run and ground-truth
rows with pyarrow and evaluates them; nothing is shuffled and no row passes
through the JVM. MLlib has no such path: its per-user arrays need a shuffle.
``--shuffle`` times metrics_core's general path instead
(``read_parquet_ranges=False``: rows hashed by user and shuffled, as for any
DataFrame that is not such a scan). The route taken is printed.

Each side runs once untimed (Python workers start, kernels load, the JVM warms
up), then ``--repeats`` times alternating which goes first; medians are
reported with the load average. Run::

    python -m benchmarks.spark_mllib_bench --users 100000       # 10M rows
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import tempfile
import time

K = 10
#: RankingEvaluator metric name -> metrics_core metric (preset spark_mllib)
PAIRS = {
    "ndcgAtK": f"ndcg@{K}",
    "precisionAtK": f"precision@{K}",
    "meanAveragePrecisionAtK": f"map@{K}",
    "recallAtK": f"recall@{K}",
    "meanAveragePrecision": "map",
}


def mllib_input(run, truth):
    """One row per run user: ``prediction`` = item ids by score descending (item id descending on ties),
    ``label`` = the user's relevant item ids (empty when none), both arrays of doubles."""
    from pyspark.sql import functions as F

    ranked = run.groupBy("user_id").agg(
        F.sort_array(F.collect_list(F.struct("score", "item_id")), asc=False).alias("ranked"))
    predictions = ranked.select("user_id", F.transform("ranked", lambda x: x["item_id"].cast("double"))
                                .alias("prediction"))
    labels = truth.filter(F.col("relevance") >= 1).groupBy("user_id").agg(
        F.collect_list(F.col("item_id").cast("double")).alias("label"))
    joined = predictions.join(labels, "user_id", "left")
    return joined.select("prediction", F.coalesce("label", F.array().cast("array<double>")).alias("label"))


def run_mllib(run, truth) -> tuple[dict, float]:
    """(MLlib's five means, seconds) building the arrays from the row-per-item frames."""
    from pyspark.ml.evaluation import RankingEvaluator

    start = time.perf_counter()
    dataset = mllib_input(run, truth).cache()
    dataset.count()
    values = {}
    for name in PAIRS:
        evaluator = RankingEvaluator(predictionCol="prediction", labelCol="label", metricName=name, k=K)
        values[name] = evaluator.evaluate(dataset)
    elapsed = time.perf_counter() - start
    dataset.unpersist()
    return values, elapsed


def run_metrics_core(run, truth, read_ranges: bool = True) -> tuple[dict, float]:
    """(metrics_core's five means, seconds) on the Spark engine; ``read_ranges`` False forces the shuffle path."""
    from metrics_core import spark as mcs

    start = time.perf_counter()
    result = mcs.evaluate(run, truth, list(PAIRS.values()), preset="spark_mllib", ties="average",
                          read_parquet_ranges=read_ranges)
    elapsed = time.perf_counter() - start
    result.unpersist()
    values = {name: result.summary[metric] for name, metric in PAIRS.items()}
    values["route"] = result.route
    return values, elapsed


def largest_difference(a: dict, b: dict) -> float:
    return max(0.0 if (math.isnan(a[k]) and math.isnan(b[k])) else abs(a[k] - b[k]) for k in PAIRS)


def write_data(users: int, work: str) -> tuple[str, str, int]:
    """Generate the data set (integer ids, no ties) and write the two Parquet files."""
    from benchmarks.datagen import generate

    ds = generate(users, id_type="int")
    if ds.run.duplicated(["user_id", "score"]).any():
        raise SystemExit("the generated run has tied scores within a user")
    run_path, truth_path = os.path.join(work, "run.parquet"), os.path.join(work, "qrels.parquet")
    ds.run.to_parquet(run_path, index=False)
    ds.qrels.to_parquet(truth_path, index=False)
    return run_path, truth_path, len(ds.run)


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def compare(spark, run_path: str, truth_path: str, repeats: int, read_ranges: bool = True) -> dict:
    """Untimed first call of each side, then ``repeats`` alternating timed calls; checks agreement each time."""
    run, truth = spark.read.parquet(run_path), spark.read.parquet(truth_path)

    def metrics_core_side(run_df, truth_df):
        return run_metrics_core(run_df, truth_df, read_ranges)

    first_mllib, t_first_mllib = run_mllib(run, truth)
    first_mc, t_first_mc = metrics_core_side(run, truth)
    worst = largest_difference(first_mllib, first_mc)
    times: dict[str, list[float]] = {"mllib": [], "metrics_core": []}
    loads = [load()]
    for i in range(repeats):
        order = (("mllib", run_mllib), ("metrics_core", metrics_core_side))
        values = {}
        for label, fn in (order if i % 2 == 0 else order[::-1]):
            values[label], elapsed = fn(run, truth)
            times[label].append(elapsed)
        worst = max(worst, largest_difference(values["mllib"], values["metrics_core"]))
        loads.append(load())
    return {"mllib": first_mllib, "metrics_core": first_mc, "worst": worst, "times": times, "loads": loads,
            "first": {"mllib": t_first_mllib, "metrics_core": t_first_mc}}


def report(result: dict, rows: int, master: str) -> bool:
    """Print the values and the timing table; True when every mean agrees to 1e-9."""
    for name, metric in PAIRS.items():
        print(f"  {name:>24} {result['mllib'][name]:.12f}   {metric:>13} {result['metrics_core'][name]:.12f}")
    ok = result["worst"] <= 1e-9
    print(f"largest difference {result['worst']:.2e}: {'agree' if ok else 'DISAGREE'} (tolerance 1e-09); "
          f"metrics_core route: {result['metrics_core']['route']}")
    if not result["times"]["mllib"]:  # --repeats 0: agreement only
        first = result["first"]
        print(f"first calls: MLlib {first['mllib']:.1f} s, metrics_core {first['metrics_core']:.1f} s")
        return ok
    med = {k: statistics.median(v) for k, v in result["times"].items()}
    print(f"\n| {rows:,} rows, {master} | first call s | median s ({len(result['times']['mllib'])} runs) | "
          "all runs s | vs metrics_core |")
    print("|---|---:|---:|---|---:|")
    for label, name in (("mllib", "MLlib RankingEvaluator (arrays built + 5 evaluate)"),
                        ("metrics_core", "metrics_core.spark.evaluate (5 metrics)")):
        runs = ", ".join(f"{t:.1f}" for t in result["times"][label])
        print(f"| {name} | {result['first'][label]:.1f} | {med[label]:.1f} | {runs} | "
              f"{med[label] / med['metrics_core']:.2f}x |")
    print(f"\nload average (1, 5, 15 min) before and after each repeat: {' | '.join(result['loads'])}")
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=100_000, help="users (x 100 rows each)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs of each side (0: check agreement only)")
    p.add_argument("--master", default="local[*]", help="e.g. local[2] or local-cluster[2,1,6144]")
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--executor-memory", default="5g", help="local-cluster executors (below the M of the master)")
    p.add_argument("--buckets", type=int, default=None, help="shuffle partitions (default: 4 per core)")
    p.add_argument("--dir", default=None, help="where to write the Parquet files (default: a temp dir)")
    p.add_argument("--shuffle", action="store_true", help="time metrics_core's shuffle path (no key ranges)")
    args = p.parse_args(argv)

    from metrics_core import spark as mcs
    from metrics_core.spark._local_cluster import is_local_cluster

    work = args.dir or tempfile.mkdtemp(prefix="mc_mllib_bench_")
    os.makedirs(work, exist_ok=True)
    t = time.perf_counter()
    run_path, truth_path, rows = write_data(args.users, work)
    print(f"data: {args.users:,} users, {rows:,} run rows, int ids (generated and written in "
          f"{time.perf_counter() - t:.1f} s) in {work}; load average {load()}")
    cores = os.cpu_count() or 1
    config = {"spark.driver.memory": args.driver_memory, "spark.ui.enabled": "false",
              "spark.sql.shuffle.partitions": str(args.buckets or 4 * cores)}
    if is_local_cluster(args.master):
        config["spark.executor.memory"] = args.executor_memory
    spark = mcs.get_session(args.master, app_name="metrics-core-mllib-bench", config=config)
    if is_local_cluster(args.master):
        mcs.ship_package(spark)  # executors import this metrics_core, not another installed copy
    print(f"spark {spark.version} on {args.master} ({cores} cores)")
    result = compare(spark, run_path, truth_path, args.repeats, read_ranges=not args.shuffle)
    ok = report(result, rows, args.master)
    spark.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
