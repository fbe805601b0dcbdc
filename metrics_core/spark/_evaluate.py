"""``metrics_core.spark.evaluate``: mc.evaluate for pyspark DataFrames, same numbers.

Plan of one evaluation (every step is Spark; no data is collected to the driver
except per-group sums, a few hundred numbers):

1. Form groups of whole users and evaluate each in one task with the
   single-machine code (:mod:`._bucket`): same validation, same sort, same
   kernels. When run and ground truth are plain scans of local Parquet files in
   user order, each group is a range of user ids that its task reads from the
   files itself (:mod:`._range_plan`, :mod:`._range_reads`): no shuffle.
   Otherwise each user id is hashed into one of ``n_buckets`` groups and run and
   ground-truth rows are co-grouped by group (``groupBy(...).cogroup(...).applyInArrow``,
   or ``applyInPandas`` on Spark 3.5).
2. The task output is persisted once; the driver combines the per-group
   partial sums of :mod:`metrics_core.metrics.reductions` (the code mc.evaluate runs
   on one partition) and calls the same finalize step: means over evaluated
   users, pooled hits, scored-row sums (logloss, rmse, mae, pcopc, confusion
   counts, GAUC), diagnostics counts.
3. ``auc`` / ``pr_auc``: exact rank statistics over per-score counts (:mod:`._ranks`).
   ``coverage@k`` and ``personalization@k``: the groups' per-item partials are
   added per item by a Spark group-by, then each partition of that table runs
   the reductions' per-item sum; exact for any number of users. Every such
   total of the asked metrics (and the catalogue's size) comes from one job.
   ``novelty@k``: item popularity counted by Spark over the whole interactions
   table (default: relevant ground-truth pairs), then mc.evaluate's per-user code.

Jobs: novelty's counts (one, when asked), the groups' output with their sums
(one), the exact AUC / AP (one each), the per-item totals (one): at most five,
with Spark's adaptive execution off for the evaluation (it would submit each
shuffle stage as a job of its own).
"""

from __future__ import annotations

import contextlib
import json
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..diagnostics import Diagnostics
from ..errors import MetricsError
from ..metrics.conventions import (BY_NAME, CONVENTIONS, Settings, defaults as convention_defaults, settings_of,
                                    takes_conventions)
from ..evaluation import check_needs
from ..metrics.presets import parse_metrics as preset_parse_metrics, settings_groups
from ..metrics import reductions
from . import _env
from ._bucket import USER, ITEM, SCORE, BucketPlan, evaluate_bucket, parts_to_arrow, parts_to_pandas
from ._range_plan import RangePlan, plan_ranges
from ._range_reads import range_task
from ._ranks import exact_auc_ap, merge_splits
from ._support import DEFAULT_ONLY, LOCAL_ONLY, missing_features_diagnosed, refuse_unsupported
from ._threads import limit_threads


@dataclass
class SparkEvaluation:
    """Result of :func:`evaluate`.

    ``summary``: metric label -> float (same keys and values as mc.evaluate);
    ``per_user``: Spark DataFrame ``user_id`` + one column per per-user metric
    (persisted; call :meth:`unpersist` when done); ``diagnostics``: mc.Diagnostics
    combined over all groups; ``n_users``: evaluated users; ``route``: how the
    groups were formed ("key ranges" read from Parquet files, or "shuffle").
    """

    summary: dict
    per_user: object
    diagnostics: Diagnostics
    n_users: int
    conventions: dict = field(default_factory=dict)
    route: str = "shuffle"  # "key ranges" (Parquet files read by user-id ranges) or "shuffle"
    _cached: object = None

    def unpersist(self) -> None:
        """Release the cached per-group output (per_user is recomputed if used afterwards)."""
        for cached in self._cached if isinstance(self._cached, tuple) else (self._cached,):
            if cached is not None:
                cached.unpersist()


def _is_spark_df(obj) -> bool:
    from pyspark.sql import DataFrame

    return isinstance(obj, DataFrame)


def _relevance_column(columns) -> str | None:
    for name in ("relevance", "label"):
        if name in columns:
            return name
    return None


def _require(df, needed, what):
    if not _is_spark_df(df):
        raise MetricsError(f"{what} must be a pyspark DataFrame, got {type(df).__name__}")
    missing = [c for c in needed if c not in df.columns]
    if missing:
        raise MetricsError(
            f"{what} is missing column(s) {', '.join(missing)}; columns found: {', '.join(df.columns)}"
        )


def _common_type(left, right, column: str):
    """Cast ``column`` on both sides to one type: long when both are integers, else string."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    integral = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
    lt = left.schema[column].dataType
    rt = right.schema[column].dataType if right is not None else lt
    if isinstance(lt, integral) and isinstance(rt, integral):
        target = T.LongType()
    elif isinstance(lt, T.StringType) and isinstance(rt, T.StringType):
        target = T.StringType()
    else:
        target = T.StringType()
    left = left.withColumn(column, F.col(column).cast(target))
    if right is not None:
        right = right.withColumn(column, F.col(column).cast(target))
    return left, right, target


def _pandas_or_spark_to_pandas(df, what: str) -> pd.DataFrame:
    if isinstance(df, pd.DataFrame):
        return df
    if _is_spark_df(df):
        return df.toPandas()
    raise MetricsError(f"{what} must be a pandas or pyspark DataFrame, got {type(df).__name__}")


def _novelty_counts(truth, rel_col: str, thr: float, interactions):
    """Item -> number of distinct interacting users, and the number of users (as mc.evaluate); both
    from one Spark job (the per-item counts and a row holding the user count, told apart by a flag)."""
    from pyspark.sql import functions as F

    if interactions is None:
        pairs = truth.filter(F.col(rel_col).cast("double") >= thr).select(USER, ITEM).distinct()
    elif isinstance(interactions, pd.DataFrame):
        if not {USER, ITEM} <= set(interactions.columns):
            raise MetricsError("interactions must be a DataFrame with user_id and item_id columns")
        inter = interactions[[USER, ITEM]].drop_duplicates()
        counts = inter.groupby(ITEM, sort=False).size()
        return counts, int(inter[USER].nunique())
    else:
        _require(interactions, [USER, ITEM], "interactions")
        pairs = interactions.select(USER, ITEM).distinct()
    per_item = pairs.groupBy(ITEM).count().select(F.lit(False).alias("_users"), ITEM, "count")
    # the user count's row carries one real item id, not a null, so the item column keeps its type in
    # pandas (a null would turn integer ids into floats that no longer match the lists' ids)
    users = pairs.agg(F.countDistinct(USER).alias("count"), F.first(ITEM).alias(ITEM)).select(
        F.lit(True).alias("_users"), ITEM, "count")
    both = per_item.unionByName(users).toPandas()
    n_users = int(both.loc[both["_users"], "count"].sum())
    counts = both[~both["_users"]]
    return pd.Series(counts["count"].to_numpy(), index=pd.Index(counts[ITEM])), n_users


def _arrow_task(plan: BucketPlan, schema, two_sided: bool):
    """The function each task runs: Arrow tables in, Arrow table out (pandas inside)."""
    arrow_schema = _to_arrow_schema(schema)

    def run_task(run_tbl, truth_tbl=None):
        limit_threads()
        run = run_tbl.to_pandas()
        truth = truth_tbl.to_pandas() if truth_tbl is not None else None
        return parts_to_arrow(evaluate_bucket(run, truth, plan), arrow_schema)

    if two_sided:
        return lambda left, right: run_task(left, right)
    return lambda tbl: run_task(tbl)


def _pandas_task(plan: BucketPlan, two_sided: bool):
    def run_task(run, truth=None):
        limit_threads()
        return parts_to_pandas(evaluate_bucket(run, truth, plan), plan.output_columns())

    if two_sided:
        return lambda left, right: run_task(left, right)
    return lambda pdf: run_task(pdf)


def _to_arrow_schema(schema):
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(schema)


def _output_schema(plan: BucketPlan, user_type, item_type):
    from pyspark.sql import types as T

    fields = [
        T.StructField("kind", T.StringType()),
        T.StructField(USER, user_type),
        T.StructField(ITEM, item_type),
        T.StructField(SCORE, T.DoubleType()),
        T.StructField("a", T.LongType()),
        T.StructField("b", T.LongType()),
        T.StructField("x", T.DoubleType()),
        T.StructField("y", T.DoubleType()),
        T.StructField("spec", T.IntegerType()),
        T.StructField("stats", T.StringType()),
    ]
    fields += [T.StructField(f"m{i}", T.DoubleType()) for i in range(len(plan.per_user_specs))]
    return T.StructType(fields)


CONVENTION_DEFAULTS = convention_defaults()


def _refuse_local_only(conventions: dict, given: dict, specs) -> None:
    """One-line MetricsError naming the conventions set to other than their default that the Spark engine does
    not implement: those of :data:`._support.LOCAL_ONLY` (the ones a preset sets count only when a diversity
    metric is asked for) and of :data:`._support.DEFAULT_ONLY` (``run_only_users``: each group's users are
    chosen by the engine itself), as the declared conventions say."""
    diversity = any(s.kind == "diversity" for s in specs)
    local_only = [name for name in LOCAL_ONLY if conventions[name] != CONVENTION_DEFAULTS[name]
                  and (diversity or specs and given[name] is not None)]
    local_only += [name for name in DEFAULT_ONLY if conventions[name] != CONVENTION_DEFAULTS[name]]
    if local_only:
        reasons = "; ".join(dict.fromkeys(BY_NAME[name].spark_refusal() for name in local_only))
        raise MetricsError(f"{', '.join(local_only)} other than the default are not on the Spark engine yet "
                           f"({reasons}); use --engine local")


@takes_conventions
def evaluate(run_df, qrels_df=None, metrics=("ndcg@10",), *, preset=None, settings: Settings | None = None,
             item_features=None, interactions=None, n_buckets: int | None = None, score_ranges: int | None = None,
             read_parquet_ranges: bool = True, **conventions) -> SparkEvaluation:
    """Evaluate pyspark DataFrames exactly as :func:`metrics_core.evaluate` evaluates pandas ones.

    ``run_df``: ``user_id, item_id, score`` [, ``relevance`` or ``label``];
    ``qrels_df``: ``user_id, item_id, relevance`` (or ``label``), or None when
    the run carries relevance. Every convention keyword of
    :data:`metrics_core.metrics.conventions.CONVENTIONS` means what it means in mc.evaluate
    (a keyword left out takes the ``preset``'s value, else its default); ``preset``
    and ``settings`` (a :class:`metrics_core.Settings`) too. ``item_features`` / ``interactions`` may be
    pandas or Spark DataFrames
    (item features are broadcast to every task).
    ``n_buckets``: groups of users (default: ``spark.sql.shuffle.partitions``, or
    about 4M run rows per group on the key-range path); each group is evaluated
    in one task and must fit in its memory.
    ``read_parquet_ranges``: when the inputs are plain scans of local Parquet
    files clustered by user, each task reads one range of user ids from the files
    instead of receiving shuffled rows (:mod:`._range_plan` lists the conditions);
    False always shuffles.
    ``score_ranges``: score ranges for the exact AUC (default: one per ~1M
    scored distinct-score rows, at least the default parallelism).
    """
    _env.require_pyspark()
    from pyspark.sql import functions as F

    settings = settings_of(settings, preset, conventions)  # resolved and checked once, as mc.evaluate's
    preset, conventions = settings.preset, settings
    given = {c.name: settings[c.name] if c.name in settings.given else None for c in CONVENTIONS}  # None: not given
    specs = preset_parse_metrics(metrics, preset)  # results keep the names given (a library's under a preset)
    _refuse_local_only(conventions, given, specs)
    groups = settings_groups(specs, preset, given)
    if len(groups) > 1 or groups[0][0]:
        return _evaluate_groups(run_df, qrels_df, specs, groups, settings, item_features=item_features,
                                interactions=interactions, n_buckets=n_buckets, score_ranges=score_ranges,
                                read_parquet_ranges=read_parquet_ranges)
    thr, threshold, ties = conventions["relevance_threshold"], conventions["threshold"], conventions["ties"]
    check_needs(specs, item_features=item_features, interactions=interactions)
    refuse_unsupported(specs, item_features)

    _require(run_df, [USER, ITEM, SCORE], "run")
    truth_in_run = qrels_df is None
    if truth_in_run:
        rel_col = _relevance_column(run_df.columns)
        if rel_col is None:
            raise MetricsError("run has no 'relevance' or 'label' column and no ground truth was given; "
                               "pass qrels or add a relevance column")
        run = run_df.select(USER, ITEM, SCORE, rel_col)
        truth = None
    else:
        rel_col = _relevance_column(qrels_df.columns) if _is_spark_df(qrels_df) else None
        _require(qrels_df, [USER, ITEM, rel_col or "relevance"], "ground truth")
        run = run_df.select(USER, ITEM, SCORE)
        truth = qrels_df.select(USER, ITEM, rel_col)
    spark = run_df.sparkSession
    _env.use_driver_python(spark)
    run, truth, user_type = _common_type(run, truth, USER)
    run, truth, item_type = _common_type(run, truth, ITEM)
    if ties == "input":
        run = run.withColumn("_row", F.monotonically_increasing_id())

    ranges = None
    if read_parquet_ranges and ties != "input":
        ranges = plan_ranges(run_df, None if truth_in_run else qrels_df, rel_col, n_buckets,
                             spark.sparkContext.defaultParallelism)
    n_buckets = int(n_buckets or int(spark.conf.get("spark.sql.shuffle.partitions")))
    bucket = F.pmod(F.xxhash64(F.col(USER)), F.lit(n_buckets))
    diag_k = max([s.k for s in specs if s.k > 0], default=10)

    with _env.spark_errors("Spark evaluation"), _without_adaptive_execution(spark):
        features = None
        if item_features is not None:
            features = spark.sparkContext.broadcast(_pandas_or_spark_to_pandas(item_features, "item_features"))
        counts, n_inter_users = None, 0
        if any(s.entry.spark == "popularity" for s in specs):
            source = run if truth_in_run else truth
            counts, n_inter_users = _novelty_counts(source, rel_col, thr, interactions)
            counts = spark.sparkContext.broadcast(counts)
        plan = BucketPlan(specs=tuple(specs), conventions=conventions, diag_k=diag_k, truth_in_run=truth_in_run,
                          rel_column=rel_col, input_order=ties == "input", item_features=features,
                          novelty_counts=counts, novelty_users=n_inter_users, preset=preset)
        schema = _output_schema(plan, user_type, item_type)
        if ranges is not None:
            out = _key_range_output(spark, plan, schema, ranges).persist()
        else:
            out = _shuffled_output(run, truth, bucket, plan, schema).persist()
        stats = [json.loads(r["stats"]) for r in out.filter(F.col("kind") == "b").select("stats").collect()]
        # The cached output holds one row per user and one per group: the jobs that read it again (ranks,
        # per-item totals, coverage, per-user results) need no more tasks than cores, however many groups
        # (key ranges or buckets) computed it; a task per group costs a Python round trip each.
        out_read = out.coalesce(spark.sparkContext.defaultParallelism)
        summary, diagnostics, n_users = _combine(specs, plan.per_user_specs, stats, out_read, run, truth,
                                                 item_features, score_ranges, spark, thr, diag_k, truth_in_run)
        per_user = out_read.filter(F.col("kind") == "u").select(
            F.col(USER), *[F.col(f"m{i}").alias(s.label) for i, s in enumerate(plan.per_user_specs)])
    return SparkEvaluation(summary=summary, per_user=per_user, diagnostics=diagnostics, n_users=n_users,
                           conventions=dict(conventions), route="key ranges" if ranges is not None else "shuffle",
                           _cached=out)


def _evaluate_groups(run_df, qrels_df, specs, groups, settings: Settings, **options) -> SparkEvaluation:
    """Metrics whose library names fix conventions of their own (ir_measures' ``P(rel=2)@5``, Microsoft
    Recommenders' ``map``), as :func:`metrics_core.evaluate` computes them: one Spark evaluation per group of
    names fixing the same conventions, joined in the order the metrics were asked. The per-user table is the
    outer join of the groups' on ``user_id`` (a user evaluated in one group only has nulls in the others'
    columns, as mc.evaluate's NaN); diagnostics, users and conventions are the first group's (the one without
    name-specific settings when there is one)."""
    from pyspark.sql import functions as F

    parts = [evaluate(run_df, qrels_df, [s.label for s in group], settings=settings.replace(**fixed), **options)
             for fixed, group in groups]
    summary = {}
    for part in parts:
        summary.update(part.summary)
    per_user = parts[0].per_user
    for part in parts[1:]:
        per_user = per_user.join(part.per_user, on=USER, how="outer")
    labels = [F.col("`" + s.label.replace("`", "``") + "`") for s in specs if s.label in per_user.columns]
    first = parts[0]
    return SparkEvaluation(summary={s.label: summary[s.label] for s in specs}, per_user=per_user.select(USER, *labels),
                           diagnostics=first.diagnostics, n_users=first.n_users, conventions=first.conventions,
                           route=first.route, _cached=tuple(part._cached for part in parts))


@contextlib.contextmanager
def _without_adaptive_execution(spark):
    """Spark's adaptive query execution off while the evaluation plans its jobs (the session's value
    restored after). Adaptive execution submits every shuffle stage as a job of its own, so each
    exchange of the evaluation (the groups of users, the per-item sums, the score ranges) cost a job
    and a round trip more (a 29-metric evaluation of 3,400 rows ran 18-21 jobs); the evaluation sets
    its own partition counts, which adaptive execution would only coalesce. The setting is the
    session's: a query another thread plans meanwhile runs without it too."""
    key = "spark.sql.adaptive.enabled"
    before = spark.conf.get(key, None)
    spark.conf.set(key, "false")
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def _shuffled_output(run, truth, bucket, plan: BucketPlan, schema):
    """Group output of the shuffle path: rows hashed by user into buckets, one task per bucket."""
    grouped_run = run.withColumn("_bucket", bucket).groupBy("_bucket")
    use_arrow = hasattr(grouped_run, "applyInArrow")
    if truth is None:
        fn = _arrow_task(plan, schema, False) if use_arrow else _pandas_task(plan, False)
        apply = grouped_run.applyInArrow if use_arrow else grouped_run.applyInPandas
    else:
        co = grouped_run.cogroup(truth.withColumn("_bucket", bucket).groupBy("_bucket"))
        fn = _arrow_task(plan, schema, True) if use_arrow else _pandas_task(plan, True)
        apply = co.applyInArrow if use_arrow else co.applyInPandas
    return apply(fn, schema)


def _key_range_output(spark, plan: BucketPlan, schema, ranges: RangePlan):
    """Group output of the key-range path: one task per user-id range, reading its rows from the files."""
    task = range_task(plan, _to_arrow_schema(schema), ranges.run, ranges.truth, ranges.bounds)
    return spark.range(0, ranges.ranges, 1, ranges.ranges).mapInArrow(task, schema)


def _ratio(num: float, den: float, empty: float = float("nan")) -> float:
    return float(num / den) if den > 0 else empty


def _combine(specs, plan_specs, stats, out, run, truth, item_features, score_ranges, spark, thr, diag_k, truth_in_run):
    """Per-group sums -> the summary dict, combined diagnostics and the number of evaluated users."""
    if not any(s["common"] for s in stats):
        raise MetricsError("the run and the ground truth have no user in common; check the user id column")
    n_ev = sum(s["n_evaluated"] for s in stats)
    if any(not s.entry.on_scored_rows for s in specs) and n_ev == 0:
        raise MetricsError(
            f"no user has a relevant item (relevance >= {thr:g}); "
            "check the relevance column or lower the relevance threshold"
        )
    diagnostics = _combine_diagnostics(stats, diag_k, truth_in_run)
    scored = reductions.combine(s.get("scored", {}) for s in stats)
    col_sums = {}
    for i, spec in enumerate(plan_specs):
        col_sums[spec.label] = (math.fsum(s.get(f"sum_m{i}", 0.0) for s in stats),
                                sum(s.get(f"cnt_m{i}", 0) for s in stats))

    summary = {}
    auc_ap = None
    n_rel = sum(s["n_rel"] for s in stats)
    totals = _item_totals(_item_total_requests(specs, stats, out, run, truth, item_features))
    for spec in specs:
        name, label, combine = spec.name, spec.label, spec.entry.spark
        if combine in ("user_mean", "popularity"):
            total, count = col_sums[label]
            # a ranking metric has a value for every evaluated user; others (ILS, novelty) skip users without one
            summary[label] = (float(total / n_ev) if spec.kind == "ranking"
                              else reductions.finalize_mean({"sum": total, "count": count}))
            if spec.entry.aggregate == "sum":  # trec_eval's counts: the sum over users
                summary[label] = float(total)
            elif spec.entry.aggregate == "geometric":  # per-user logarithms: exp of their mean
                summary[label] = math.exp(total / n_ev)
        elif combine == "pooled_hits":
            hits = sum(s[f"hits@{spec.k}"] for s in stats)
            summary[label] = _ratio(hits, n_rel, 0.0)
        elif combine == "rank_counts":  # both come from one pass, in the order of reductions.RANK_STATISTICS
            if auc_ap is None:
                auc_ap = _auc_ap(out, score_ranges, spark, stats,
                                 any(reductions.of(x.entry) is reductions.RANK_STATISTICS[1] for x in specs
                                     if x.entry.on_scored_rows))
            summary[label] = auc_ap[reductions.RANK_STATISTICS.index(reductions.of(spec.entry))]
        elif combine == "row_sums":
            reductions.check_needs(label, spec.entry.needs, scored)
            summary[label] = reductions.of(spec.entry).finalize(scored)
        elif combine == "item_coverage":
            summary[label] = reductions.finalize_coverage(totals[f"covered{specs.index(spec)}"], totals["catalogue"])
        elif combine == "item_pairs":
            summary[label] = _personalization(totals, specs.index(spec), spec.k, stats)
    if any(missing_features_diagnosed(s) for s in specs):
        diagnostics.items_missing_features = int(totals["items_missing_features"])
    if any(s.kind == "scored_per_user" for s in specs):
        diagnostics.gauc_users_skipped = int(scored.get("gauc_skipped", 0))
    return summary, diagnostics, n_ev


def _auc_ap(out, score_ranges, spark, stats, want_ap: bool):
    from pyspark.sql import functions as F

    rows = out.filter(F.col("kind") == "s").select(SCORE, "a", "b")
    n_rows = sum(s.get("scored_rows", 0) for s in stats)
    total_pos = int(round(sum(s.get("scored_positives", 0.0) for s in stats)))
    total_neg = int(n_rows) - total_pos
    if score_ranges is None:
        score_ranges = max(spark.sparkContext.defaultParallelism, int(n_rows) // 1_000_000)
    have = [s for s in stats if s.get("score_points")]
    splits = merge_splits([s["score_points"] for s in have], [s["scored_rows"] for s in have], int(score_ranges))
    return exact_auc_ap(rows, total_pos, total_neg, splits, want_ap)


def _per_item_sums(per_item, tag: str, columns: tuple[str, ...], term):
    """A Spark DataFrame ``(tag, total)``: one row per partition of the per-item DataFrame ``per_item``,
    ``term(*columns)`` (a reductions function) over that partition's rows."""
    names = list(columns)

    def task(batches):
        total = 0.0
        for pdf in batches:
            total += term(*(pdf[c].to_numpy(dtype=np.float64) for c in names))
        yield pd.DataFrame({"tag": [tag], "total": [total]})

    return per_item.mapInPandas(task, "tag string, total double")


def _item_total_requests(specs, stats, out, run, truth, item_features) -> dict:
    """Tag -> ``(tag, total)`` Spark DataFrame of every per-item total the asked metrics need:
    ``covered<j>`` (coverage@k's expected number of covered items, reductions.coverage_expected_items over the
    groups' per-item partials added per item), ``catalogue`` (the items of run and truth, or of the
    item-features table), ``pairs<j>`` (personalization@k's shared-pairs expectation over per-item S1, S2) and
    ``items_missing_features`` (listed items without a feature row, for the diagnostics)."""
    from pyspark.sql import functions as F

    requests = {}
    for j, spec in enumerate(specs):
        if spec.entry.spark == "item_coverage":
            per_item = out.filter((F.col("kind") == "c") & (F.col("spec") == j)).groupBy(ITEM).agg(
                F.sum("a").alias("certain"), F.sum("x").alias("log_miss"))
            requests[f"covered{j}"] = _per_item_sums(per_item, f"covered{j}", ("certain", "log_miss"),
                                                     reductions.coverage_expected_items)
            if "catalogue" not in requests and not isinstance(item_features, pd.DataFrame):
                if item_features is not None:
                    items = item_features.select(ITEM)
                else:
                    items = run.select(ITEM)
                    if truth is not None:
                        items = items.union(truth.select(ITEM))
                requests["catalogue"] = _count_frame(items.distinct(), "catalogue")
        elif spec.entry.spark == "item_pairs" and sum(s.get(f"pers_users@{j}", 0) for s in stats) >= 2:
            per_item = out.filter((F.col("kind") == "p") & (F.col("spec") == j)).groupBy(ITEM).agg(
                F.sum("x").alias("s1"), F.sum("y").alias("s2"))
            requests[f"pairs{j}"] = _per_item_sums(per_item, f"pairs{j}", ("s1", "s2"),
                                                   reductions.personalization_shared_pairs)
    if any(missing_features_diagnosed(s) for s in specs):  # the items of the lists without a feature row
        requests["items_missing_features"] = _count_frame(out.filter(F.col("kind") == "f").select(ITEM).distinct(),
                                                          "items_missing_features")
    if isinstance(item_features, pd.DataFrame) and any(s.entry.spark == "item_coverage" for s in specs):
        requests["catalogue"] = float(len(pd.unique(item_features[ITEM])))
    return requests


def _count_frame(rows, tag: str):
    """A one-row Spark DataFrame ``(tag, total)``: the number of rows of ``rows``."""
    from pyspark.sql import functions as F

    return rows.agg(F.count(F.lit(1)).cast("double").alias("total")).select(F.lit(tag).alias("tag"), "total")


def _item_totals(requests: dict) -> dict[str, float]:
    """Tag -> total of every request of :func:`_item_total_requests`, all from one Spark job (their
    union collected once; each tag's partition totals added with ``math.fsum``)."""
    frames = [frame for frame in requests.values() if not isinstance(frame, float)]
    totals = {tag: value for tag, value in requests.items() if isinstance(value, float)}
    if not frames:
        return totals
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame)
    rows: dict[str, list[float]] = {tag: [] for tag in requests if tag not in totals}
    for r in union.collect():
        rows[r["tag"]].append(float(r["total"]))
    totals.update({tag: math.fsum(values) for tag, values in rows.items()})
    return totals


def _personalization(totals: dict[str, float], j: int, k: int, stats) -> float:
    """personalization@k: the shared-pairs expectation (:func:`_item_total_requests`) and the finalize
    step of metrics_core.metrics.reductions (users with a non-empty list, as mc.evaluate)."""
    n = sum(s.get(f"pers_users@{j}", 0) for s in stats)
    if n < 2:
        return float("nan")
    kk = k if k > 0 else max(s.get(f"pers_maxlen@{j}", 0) for s in stats)
    return reductions.finalize_personalization(totals[f"pairs{j}"], n, kk)


def _combine_diagnostics(stats, k: int, truth_in_run: bool) -> Diagnostics:
    diags = [s["diag"] for s in stats]

    def total(key):
        return int(sum(d[key] for d in diags))

    n_ev = total("n_users_evaluated")
    ties_share = (sum(d["share_users_ties_in_top_k"] * d["n_users_evaluated"] for d in diags) / n_ev) if n_ev else 0.0
    top_rows = sum(s["top_rows"] for s in stats)
    unjudged = None
    if not truth_in_run:
        unjudged_rows = sum((d["share_unjudged_in_top_k"] or 0.0) * s["top_rows"] for d, s in zip(diags, stats))
        unjudged = float(unjudged_rows / top_rows) if top_rows else 0.0
    return Diagnostics(
        k=int(k), n_users_evaluated=n_ev, n_users_run=total("n_users_run"), n_users_truth=total("n_users_truth"),
        users_only_in_run=total("users_only_in_run"), users_only_in_truth=total("users_only_in_truth"),
        users_without_relevant=total("users_without_relevant"), share_users_ties_in_top_k=float(ties_share),
        users_short_lists=total("users_short_lists"), share_unjudged_in_top_k=unjudged,
    )
