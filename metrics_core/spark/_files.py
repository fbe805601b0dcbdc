"""Read run and ground-truth files with Spark and evaluate each run (used by ``--engine spark``).

Parquet files or directories (a Spark/Hive table's folder, partitioned or
not) are read with ``spark.read.parquet``; ``.csv`` / ``.tsv`` (optionally
gzipped) with Spark's CSV reader, every column as text and numbers parsed by
the same checks as the single-machine path. Column names are recognised as
the single-machine readers recognise them (``uid``, ``qid``, ``docno``,
``label``, ``rating``, ... and an explicit ``columns`` mapping); a run with a
rank column but no score gets ``score = -rank``.
"""

from __future__ import annotations

import os

from ..errors import MetricsError
from ..io.columns import detect
from ..io.formats import extensions_of
from ..naming import model_names
from . import _env
from ._evaluate import SparkEvaluation, evaluate

_TEXT = {".csv": ",", ".tsv": "\t"}


def _kind_of(path: str) -> str:
    exts = [e.lower() for e in extensions_of(str(path).rstrip("/"))]
    exts = [e if e.startswith(".") else "." + e for e in exts]
    exts = [e for e in exts if e not in (".gz", ".gzip", ".bz2", ".snappy")]
    if os.path.isdir(path) or not exts or exts[-1] in (".parquet", ".pq"):
        return "parquet"
    if exts[-1] in _TEXT:
        return exts[-1]
    raise MetricsError(
        f"{path}: the Spark engine reads Parquet (files or directories) and CSV/TSV; "
        f"got {exts[-1]!r}: convert it, or use the default engine"
    )


def read_table(spark, path: str, kind: str, columns: dict | None = None):
    """A Spark DataFrame with the tidy column names (user_id, item_id, score / relevance)."""
    from pyspark.sql import functions as F

    if not str(path).startswith(("hdfs:", "s3:", "s3a:", "gs:", "abfs:", "abfss:", "dbfs:", "file:")):
        if not os.path.exists(path):
            raise MetricsError(f"{path}: no such file or directory")
    fmt = _kind_of(path)
    with _env.spark_errors(f"reading {path}"):
        if fmt == "parquet":
            df = spark.read.parquet(str(path))
        else:
            df = spark.read.csv(str(path), sep=_TEXT[fmt], header=True, inferSchema=False)
    roles = detect(list(df.columns), kind, str(path), columns)
    select = []
    for role in ("user_id", "item_id", "score", "relevance"):
        source = roles.get(role)
        if source is not None:
            select.append(F.col(f"`{source}`").alias(role))
    if kind == "run" and roles.get("score") is None:
        if roles.get("rank") is None:
            raise MetricsError(f"{path}: no score or rank column; columns found: {', '.join(df.columns)}")
        select.append((-F.col(f"`{roles['rank']}`").cast("double")).alias("score"))
    return df.select(*select)


def evaluate_files(run_paths, qrels_path=None, metrics=("ndcg@10",), master: str = "local[*]",
                   columns: dict | None = None, **conventions) -> dict[str, SparkEvaluation]:
    """Evaluate each run file against one ground-truth file on Spark.

    ``run_paths``: one path or a list (Parquet file/directory, CSV, TSV);
    ``qrels_path``: the ground truth, or None when each run carries a
    relevance/label column. ``master``: used only when no Spark session is
    running yet (``spark-submit`` provides one). ``conventions``: the keywords
    of :func:`metrics_core.spark.evaluate`. Returns ``{model name: result}``,
    model names as on the command line (:func:`metrics_core.naming.model_names`).
    """
    if isinstance(run_paths, (str, os.PathLike)):
        run_paths = [run_paths]
    if not run_paths:
        raise MetricsError("no run file given")
    names, _ = model_names([str(p) for p in run_paths])
    spark = _env.get_session(master)
    qrels = read_table(spark, str(qrels_path), "qrels", columns) if qrels_path is not None else None
    results = {}
    for name, path in zip(names, run_paths):
        run = read_table(spark, str(path), "run" if qrels is not None else "auto", columns)
        results[name] = evaluate(run, qrels, metrics, **conventions)
    return results
