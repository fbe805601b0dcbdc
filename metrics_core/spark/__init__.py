"""The Spark engine: the same evaluation on Apache Spark, with identical numbers.

Usage::

    from metrics_core import spark as mcs
    ev = mcs.evaluate(run_df, qrels_df, metrics=["ndcg@10", "map@100", "auc", "gauc"])
    ev.summary        # dict, as mc.evaluate (equal to 1e-9 on the same data)
    ev.per_user       # Spark DataFrame: user_id + one column per per-user metric
    ev.diagnostics    # mc.Diagnostics summed over the cluster

    results = mcs.evaluate_files(["runs/bm25.parquet"], "qrels.parquet", ["ndcg@10"])

    mcs.ship_package(spark)   # first, when executors lack this metrics_core: a zip via addPyFile

How: users are put into groups; each group (all rows of its users, run and
ground truth) is evaluated in one Spark task by the single-machine code
(``mc.prepare`` and the same compiled kernels), and Spark adds up the groups.
Inputs read from local Parquet files in user order are cut into ranges of user
ids that each task reads from the files (no shuffle); any other DataFrame is
hashed by user and shuffled.
Every metric of mc.evaluate that its registry entry lets Spark combine
(:attr:`metrics_core.metrics.registry.Metric.spark`) is exact (nothing is binned or
sampled); the others are refused with one line giving the entry's
``spark_refusal``:

- ranking metrics, ILS and novelty: per user, then the mean over evaluated
  users; ``hit_ratio@k``: pooled sums of hits and relevant items;
- ``gauc``: sum of w_u AUC_u and of w_u over all groups;
- ``logloss``, ``rmse``, ``mae``, ``pcopc``, ``accuracy``, ``precision``,
  ``recall``, ``f1``: sums over all scored rows;
- ``auc``, ``pr_auc``: exact rank statistics over per-score positive and
  negative counts, ties counting one half (see :mod:`._ranks`);
- ``coverage@k``: distinct items of all top-k lists over the catalogue;
  ``personalization@k``: from per-item counts of top-k lists, exact for any
  number of users; ``novelty@k``: item popularity counted over the whole
  interactions table by Spark.

pyspark is an optional extra (``pip install 'metrics-core[spark]'`` plus a
Java 17+ runtime); importing this module does not import pyspark, and calling
it without pyspark or Java raises a one-line :class:`~metrics_core.MetricsError`
saying what to install.
"""

from __future__ import annotations

from ._env import get_session, require_pyspark
from ._evaluate import SparkEvaluation, evaluate
from ._ship import package_zip, ship_package

__all__ = ["SparkEvaluation", "evaluate", "evaluate_files", "get_session", "package_zip", "require_pyspark",
           "ship_package"]


def evaluate_files(run_paths, qrels_path=None, metrics=("ndcg@10",), master: str = "local[*]", **conventions):
    """``{model name: SparkEvaluation}`` for run files on Spark; see :func:`._files.evaluate_files`."""
    require_pyspark()
    from ._files import evaluate_files as _evaluate_files

    return _evaluate_files(run_paths, qrels_path, metrics, master=master, **conventions)

