"""The Spark engine gives mc.evaluate's numbers, in one process and on separate executors.

Every test taking the ``spark`` fixture runs on ``local[2]`` (tasks in the driver's JVM,
Python workers beside the driver), and those that exercise the executors (every metric,
files, errors, the shipped package, one set of conventions) also on
``local-cluster[2,1,1024]`` (two executor JVMs with their own Python workers, which
import metrics_core from the zip :func:`metrics_core.spark.ship_package` sends them,
as on a real cluster); the others (library names, trec_eval's names, further
conventions, the registry's Spark metrics one by one, groups of users missing from the run) run the
same per-group code and are checked on ``local[2]``. Random data with tied scores, graded relevance, ground-truth
users missing from the run, users without relevant items and users only in the run;
every metric's summary must equal ``mc.evaluate`` on the same pandas frames to 1e-9,
per-user values must match user by user, and the diagnostics counts must agree.
"""

from __future__ import annotations

import _deadlines as deadlines
import contextlib
import math
import os
import subprocess
import sys
import uuid

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from _spark_cluster import CLUSTER, EXECUTORS, LOCAL

#: a test that the group code checks whatever the master: on local[2] only
local_only = pytest.mark.parametrize("spark", [LOCAL], indirect=True, scope="module")

pytestmark = pytest.mark.spark

ALL_METRICS = [
    "ndcg@5", "ndcg", "dcg@10", "cg@3", "map@10", "map", "mrr@10", "precision@5", "recall@10", "f1@5",
    "hit_rate@3", "r_precision", "hit_ratio@5", "auc", "pr_auc", "logloss", "rmse", "mse", "mae", "accuracy",
    "precision", "recall", "f1", "gauc", "pcopc", "ils@5", "coverage@5", "novelty@5", "personalization@5",
]


def make_data(seed: int = 7, n_users: int = 300, int_ids: bool = False):
    """Run, qrels and item features with the awkward cases of real data: ground-truth users missing
    from the run, run users without a ground truth, users judged without any relevant item, few
    score levels (many ties), items without features; string or integer (``int_ids``) ids."""
    rng = np.random.default_rng(seed)
    n_items = 120
    rows, qrows = [], []
    for u in range(n_users):
        uid = 1000 + u if int_ids else f"u{u:04d}"
        in_run = u % 17 != 3  # some ground-truth users are missing from the run
        in_truth = u % 23 != 5  # some run users have no ground truth at all
        n = int(rng.integers(1, 25))
        items = rng.choice(n_items, size=n, replace=False)
        levels = int(rng.integers(2, 6))  # few score levels: many ties
        scores = rng.integers(0, levels, size=n) / levels
        if in_run:
            for it, sc in zip(items, scores):
                rows.append((uid, 5000 + it if int_ids else f"i{it:03d}", float(sc)))
        if in_truth:
            judged = rng.choice(n_items, size=int(rng.integers(1, 15)), replace=False)
            no_relevant = u % 11 == 4  # judged, but nothing relevant
            for it in judged:
                rel = 0 if no_relevant else int(rng.choice([0, 0, 1, 2, 3]))
                qrows.append((uid, 5000 + it if int_ids else f"i{it:03d}", rel))
            if in_run and not no_relevant:  # make some retrieved items relevant
                for it in items[: int(rng.integers(0, 4))]:
                    key = 5000 + it if int_ids else f"i{it:03d}"
                    if key not in set(judged if int_ids else [f"i{j:03d}" for j in judged]):
                        qrows.append((uid, key, int(rng.integers(1, 4))))
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["user_id", "item_id", "relevance"]).drop_duplicates(["user_id", "item_id"])
    ids = [5000 + i if int_ids else f"i{i:03d}" for i in range(n_items) if i % 9 != 0]  # some lack features
    feats = pd.DataFrame({"item_id": ids, "f1": rng.random(len(ids)), "f2": rng.random(len(ids)),
                          "f3": rng.random(len(ids))})
    return run, qrels, feats


@pytest.fixture(scope="module")
def data():
    return make_data()


def to_spark(spark, df):
    return spark.createDataFrame(df)


def assert_same(spark_ev, local_ev, tol=1e-9):
    assert list(spark_ev.summary) == list(local_ev.summary)
    for label, expected in local_ev.summary.items():
        got = spark_ev.summary[label]
        if isinstance(expected, float) and math.isnan(expected):
            assert math.isnan(got), label
        else:
            assert got == pytest.approx(expected, rel=tol, abs=tol), label
    per_user = spark_ev.per_user.toPandas().set_index("user_id").sort_index()
    local = local_ev.per_user.sort_index()
    assert list(per_user.index) == list(local.index)
    assert list(per_user.columns) == list(local.columns)
    np.testing.assert_allclose(per_user.to_numpy(float), local.to_numpy(float), rtol=tol, atol=tol)


def test_python_workers_run_the_package_under_test(spark):
    """The Python workers import this metrics_core: on local[2] the driver's own files, under its
    JVM; on the local cluster the zip ship_package sent, under two executor JVMs that are not the
    driver's (so an installed copy elsewhere on the machine cannot stand in for it)."""
    from metrics_core import spark as mcs

    def fingerprint() -> str:
        """SHA-256 of the imported metrics_core package's files, read through its loader (a directory or a zip)."""
        import hashlib
        import importlib.resources

        def walk(node, prefix):
            for child in sorted(node.iterdir(), key=lambda c: c.name):
                if child.name == "__pycache__" or child.name.endswith(".pyc"):
                    continue
                if child.is_dir():
                    yield from walk(child, prefix + child.name + "/")
                else:
                    yield prefix + child.name, child.read_bytes()

        digest = hashlib.sha256()
        for name, content in walk(importlib.resources.files("metrics_core"), ""):
            digest.update(name.encode() + b"\0" + content)
        return digest.hexdigest()

    def probe(_):
        import os
        import time

        import metrics_core

        pid = os.getpid()
        for _level in range(6):  # worker -> pyspark daemon -> JVM
            with open(f"/proc/{pid}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{pid}/comm") as comm:
                if comm.read().strip() == "java":
                    break
        time.sleep(0.3)  # long enough for every executor to be offered tasks
        yield os.getpid(), pid, metrics_core.__file__, fingerprint()

    context = spark.sparkContext
    driver_jvm = context._jvm.java.lang.ProcessHandle.current().pid()
    rows = context.parallelize(range(8), 8).mapPartitions(probe).collect()
    worker_pids, jvm_pids, files, prints = (set(column) for column in zip(*rows))
    assert prints == {fingerprint()}
    assert os.getpid() not in worker_pids
    if context.master == CLUSTER:
        shipped = os.path.basename(mcs.package_zip())
        assert all(f.endswith(os.path.join(shipped, "metrics_core", "__init__.py")) for f in files), files
        assert len(jvm_pids) == EXECUTORS and driver_jvm not in jvm_pids
    else:
        assert files == {mc.__file__}
        assert jvm_pids == {driver_jvm}


def test_every_metric_matches_single_machine(spark, data):
    from metrics_core import spark as mcs

    run, qrels, feats = data
    local = mc.evaluate(run, qrels, ALL_METRICS, item_features=feats)
    run_df, qrels_df = to_spark(spark, run), to_spark(spark, qrels)
    with jobs_counted(spark) as jobs:
        ev = mcs.evaluate(run_df, qrels_df, ALL_METRICS, item_features=feats, score_ranges=3)
    # novelty's counts, the groups' output, AUC, AP and every per-item total (coverage, the catalogue,
    # personalization, items without features): one job each, whatever Spark's adaptive execution says
    assert len(jobs) <= 5, f"{len(jobs)} Spark jobs"
    assert spark.conf.get("spark.sql.adaptive.enabled") == "true"  # the session's setting is given back
    assert_same(ev, local)
    d, ld = ev.diagnostics.to_dict(), local.diagnostics.to_dict()
    for key in ld:
        if isinstance(ld[key], float):
            assert d[key] == pytest.approx(ld[key], rel=1e-9), key
        else:
            assert d[key] == ld[key], key
    assert ev.n_users == local.n_users
    # the data really has the awkward cases
    assert ld["users_only_in_truth"] > 0 and ld["users_only_in_run"] > 0 and ld["users_without_relevant"] > 0
    assert ld["share_users_ties_in_top_k"] > 0.3


@contextlib.contextmanager
def jobs_counted(spark):
    """The ids of the Spark jobs the block submits from this thread (a job group of its own, read from
    SparkContext's status tracker), filled in when the block ends."""
    context = spark.sparkContext
    group = f"jobs-counted-{uuid.uuid4().hex}"
    ids: list[int] = []
    context.setJobGroup(group, "jobs counted by a test")
    try:
        yield ids
    finally:
        ids.extend(context.statusTracker().getJobIdsForGroup(group))
        context.setLocalProperty("spark.jobGroup.id", None)
        context.setLocalProperty("spark.job.description", None)


def registry_spark_metrics() -> list[str]:
    """Every metric the registry says the Spark engine computes, at K = 5 where it takes a cutoff
    (the user-history ones need an interactions table and are left to their own test)."""
    from metrics_core.metrics import registry

    def label(m):
        if m.cutoff == registry.CUTOFF_LEVEL:
            return f"{m.name}@0.5"
        return m.name if m.cutoff == registry.CUTOFF_NONE else f"{m.name}@5"

    # the metrics read over one order of each list are refused under ties="average" on this tied data:
    # test_trec_eval_measures_match_single_machine computes them under trec_eval's order
    names = [label(m) for m in registry.METRICS if m.on_spark and "history" not in m.needs and not m.one_order]
    return list(dict.fromkeys(names))


@local_only
def test_every_metric_the_registry_puts_on_spark_matches_single_machine(spark, data):
    from metrics_core import spark as mcs

    run, qrels, feats = data
    metrics = registry_spark_metrics()
    assert "bpref" in metrics and "mcc@5" in metrics and "ece" in metrics  # the list really is the registry's
    local = mc.evaluate(run, qrels, metrics, item_features=feats)
    ev = mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), metrics, item_features=feats, score_ranges=3)
    assert_same(ev, local)


@local_only
def test_groups_holding_only_users_missing_from_the_run_match_single_machine(spark, data):
    """With many buckets, some hold only ground-truth users the run does not list (and run-only users):
    their per-user values are what mc.evaluate gives an empty list (num_rel = R, num_q = 1, gm_map at the
    floor's logarithm, rbp's residual 1, MCC over the catalogue), not zeros."""
    from pyspark.sql import functions as F

    from metrics_core import spark as mcs

    run, qrels, feats = data
    missing = set(run["user_id"].drop_duplicates().iloc[::3])  # a third of the users leave the run
    run = run[~run["user_id"].isin(missing)].reset_index(drop=True)
    buckets = 150
    users = pd.DataFrame({"user_id": pd.unique(pd.concat([run["user_id"], qrels["user_id"]]))})
    bucket_of = (to_spark(spark, users).select("user_id", F.pmod(F.xxhash64("user_id"), F.lit(buckets)).alias("b"))
                 .toPandas().set_index("user_id")["b"])
    in_both = set(run["user_id"]) & set(qrels["user_id"])
    without_common = set(bucket_of) - set(bucket_of[list(in_both)])
    assert without_common and any(u not in set(run["user_id"]) for u in bucket_of.index[bucket_of.isin(without_common)])
    metrics = ["num_rel", "num_q", "num_ret", "gm_map", "gm_bpref", "bpref", "utility", "mcc@5", "rbp@5",
               "rbp_residual@5", "judged@5", "err@5", "set_recall", "ndcg@5"]
    for conv in ({}, {"empty_users": "zero"}, {"missing_users": "exclude"}):
        local = mc.evaluate(run, qrels, metrics, item_features=feats, **conv)
        ev = mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), metrics, item_features=feats,
                          n_buckets=buckets, **conv)
        assert_same(ev, local)


@local_only
def test_trec_eval_measures_match_single_machine(spark, data):
    """trec_eval's whole set by trec_eval's own names (``11pt_avg``, ``iprec_at_recall_0.50``, read on the
    workers as on the driver): per-user means, num_* summed and gm_* geometric over the groups."""
    from metrics_core import spark as mcs

    run, qrels, _ = data
    local = mc.evaluate(run, qrels, ["all_trec"], preset="trec_eval")
    ev = mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), ["all_trec"], preset="trec_eval")
    assert "11pt_avg" in ev.summary and "iprec_at_recall_0.50" in ev.summary
    assert ev.summary["num_ret"] == local.summary["num_ret"] > 0
    assert_same(ev, local)


@local_only
def test_library_names_that_fix_conventions_match_single_machine(spark, data):
    """ir_measures' names with parameters of their own (``P(rel=2)@5`` reads relevance >= 2, ``RBP(p=0.5)``
    its persistence) beside plain ones: each group of names is evaluated under its conventions, as
    mc.evaluate does, and the per-user columns are joined by user (a user without a relevant item at
    rel=2 has a value only in the columns of the other names)."""
    from metrics_core import spark as mcs

    run, qrels, _ = data
    names = ["nDCG@10", "P(rel=2)@5", "AP", "RBP(p=0.5)", "nDCG(dcg='exp-log2')@10", "R(rel=2)@10", "NumRet"]
    local = mc.evaluate(run, qrels, names, preset="ir_measures", empty_users="exclude")
    ev = mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), names, preset="ir_measures",
                      empty_users="exclude", n_buckets=3)
    assert local.per_user["P(rel=2)@5"].isna().any()  # the groups evaluate different users
    assert local.summary["P(rel=2)@5"] != pytest.approx(mc.evaluate(run, qrels, ["P@5"], preset="ir_measures")
                                                        .summary["P@5"])
    assert_same(ev, local)


CONVENTIONS = [
    dict(gain="exponential", ideal="retrieved", ap_norm="min_k", ties="trec", relevance_threshold=2,
         empty_users="zero", threshold=0.4, gauc_weight="positives"),
    dict(ap_norm="retrieved", ties="input", gauc_weight="uniform"),
    dict(gain="binary", ideal="k", ap_norm="k", precision_norm="min_k", missing_users="exclude",
         unjudged_rows="exclude", short_lists="zero"),
    dict(preset="rectools", beyond_users="evaluated"),  # the preset's "listed" is local only
    dict(preset="trec_eval", ties="average"),
]


@pytest.mark.parametrize("spark,conv", [(LOCAL, conv) for conv in CONVENTIONS] + [(CLUSTER, CONVENTIONS[0])],
                         indirect=["spark"], scope="module")
def test_conventions_match_single_machine(spark, data, conv):
    from metrics_core import spark as mcs

    run, qrels, feats = data
    tags = pd.DataFrame({"item_id": feats["item_id"],
                         "tags": ["|".join(f"t{int(v * 7)}" for v in row) for row in feats[["f1", "f2"]].to_numpy()]})
    metrics = ["ndcg@5", "ndcg", "map@10", "mrr", "precision@3", "recall@10", "hit_ratio@10", "r_precision",
               "auc", "pr_auc", "gauc", "accuracy", "f1", "rmse", "coverage@3", "novelty@3", "personalization",
               "ils@3"]
    local = mc.evaluate(run, qrels, metrics, item_features=tags, **conv)
    ev = mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), metrics, item_features=to_spark(spark, tags),
                      n_buckets=5, **conv)
    assert_same(ev, local)


@local_only
def test_labels_in_the_run_integer_ids(spark):
    """CTR-style input: one table with a label column, integer ids, continuous scores."""
    from metrics_core import spark as mcs

    rng = np.random.default_rng(3)
    n = 4000
    run = pd.DataFrame({"user_id": rng.integers(0, 250, n), "item_id": rng.integers(0, 10**6, n)})
    run = run.drop_duplicates(["user_id", "item_id"]).reset_index(drop=True)
    run["score"] = np.round(rng.random(len(run)), 3)  # some exact ties across users
    run["label"] = (rng.random(len(run)) < run["score"] * 0.6).astype(int)
    metrics = ["auc", "pr_auc", "logloss", "gauc", "pcopc", "mae", "ndcg@10", "map"]
    local = mc.evaluate(run, None, metrics)
    ev = mcs.evaluate(to_spark(spark, run), None, metrics, score_ranges=7)
    assert_same(ev, local)
    # independent reference for the global ones
    from sklearn.metrics import average_precision_score, log_loss, roc_auc_score

    assert ev.summary["auc"] == pytest.approx(roc_auc_score(run["label"], run["score"]), abs=1e-12)
    assert ev.summary["pr_auc"] == pytest.approx(average_precision_score(run["label"], run["score"]), abs=1e-12)
    assert ev.summary["logloss"] == pytest.approx(log_loss(run["label"], run["score"]), abs=1e-12)


def test_evaluate_files_parquet_and_csv(spark, data, tmp_path):
    from metrics_core import spark as mcs

    run, qrels, _ = data
    run_dir = tmp_path / "model_a.parquet"
    to_spark(spark, run).repartition(3).write.parquet(str(run_dir))  # a directory of parts
    csv = tmp_path / "model_b.csv"
    run.rename(columns={"user_id": "uid", "item_id": "docno", "score": "prediction"}).to_csv(csv, index=False)
    qrels_path = tmp_path / "qrels.parquet"
    qrels.to_parquet(qrels_path)
    metrics = ["ndcg@10", "map@100", "recall@20"]
    results = mcs.evaluate_files([str(run_dir), str(csv)], str(qrels_path), metrics)
    local = mc.evaluate(run, qrels, metrics)
    assert set(results) == {"model_a", "model_b"}
    for result in results.values():
        for label in metrics:
            assert result.summary[label] == pytest.approx(local.summary[label], rel=1e-9)


def test_bad_input_gives_one_line_errors(spark, data, tmp_path):
    from metrics_core import spark as mcs

    run, qrels, _ = data
    with pytest.raises(mc.MetricsError, match="missing column"):
        mcs.evaluate(to_spark(spark, run.drop(columns="score")), to_spark(spark, qrels), ["ndcg@10"])
    with pytest.raises(mc.MetricsError, match="unknown metric"):
        mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), ["ndgc@10"])
    dup = pd.concat([run, run.iloc[:1]], ignore_index=True)
    with pytest.raises(mc.MetricsError, match="more than once") as err:
        mcs.evaluate(to_spark(spark, dup), to_spark(spark, qrels), ["ndcg@10"])
    assert "\n" not in str(err.value)
    shifted = run.assign(user_id="x" + run["user_id"])
    with pytest.raises(mc.MetricsError, match="no user in common"):
        mcs.evaluate(to_spark(spark, shifted), to_spark(spark, qrels), ["ndcg@10"])
    with pytest.raises(mc.MetricsError, match="logloss needs probabilities"):
        mcs.evaluate(to_spark(spark, run.assign(score=run["score"] * 3)), to_spark(spark, qrels), ["logloss"])
    with pytest.raises(mc.MetricsError, match="no such file"):
        mcs.evaluate_files([str(tmp_path / "nope.parquet")], None, ["ndcg@10"])
    with pytest.raises(mc.MetricsError, match="pandas DataFrame|pyspark DataFrame"):
        mcs.evaluate(run, qrels, ["ndcg@10"])


def test_import_does_not_need_pyspark():
    """Importing metrics_core (and metrics_core.spark) never imports pyspark."""
    code = ("import sys, metrics_core, metrics_core.spark; "
            "assert 'pyspark' not in sys.modules, 'pyspark imported'; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_missing_pyspark_is_a_one_line_error():
    code = (
        "import sys; sys.modules['pyspark'] = None\n"
        "import importlib.util as u; real = u.find_spec\n"
        "u.find_spec = lambda name, *a: None if name == 'pyspark' else real(name, *a)\n"
        "import metrics_core as mc; from metrics_core import spark as mcs\n"
        "try:\n    mcs.evaluate_files(['x.parquet'], None, ['ndcg@10'])\n"
        "except mc.MetricsError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=deadlines.SUBPROCESS)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert "\n" not in line and "pip install 'metrics-core[spark]'" in line and "openjdk-17" in line


@local_only
def test_new_metrics_match_single_machine(spark, data):
    """Scored-row reductions (r2, explained_variance, ece) and per-user ranking metrics (fbeta, pauc, pap,
    mcc and accuracy@k over the item-features catalogue) give mc.evaluate's numbers on many groups."""
    from metrics_core import spark as mcs

    run, qrels, feats = data
    metrics = ["r2", "explained_variance", "ece", "fbeta@5", "pauc@5", "pap@3", "mcc@5", "accuracy@5"]
    local = mc.evaluate(run, qrels, metrics, item_features=feats, beta=2.0)
    ev = mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), metrics, item_features=feats, n_buckets=7,
                      beta=2.0)
    assert_same(ev, local)
    with pytest.raises(mc.MetricsError, match="gini@5 is not available in the Spark backend"):
        mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), ["gini@5"])
    with pytest.raises(mc.MetricsError, match="ild@5 is not available in the Spark backend"):
        mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), ["ild@5"], item_features=feats)
    with pytest.raises(mc.MetricsError, match="mcc@5 on Spark needs item_features"):
        mcs.evaluate(to_spark(spark, run), to_spark(spark, qrels), ["mcc@5"])
