"""Smoke test of the benchmark harness: data generator, compiled-loop floor,
metrics_core and the runner agree with a plain-Python reference at 200 users.

No timing is asserted anywhere (the benchmark is run by hand)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchmarks import datagen, floor, report, run_bench

METRICS = list(floor.METRICS)


def reference_means(run, qrels) -> dict[str, float]:
    """Five means from the DataFrames with dicts and sorted(): trec_eval/ranx conventions."""
    truth: dict = {}
    for u, i, r in zip(qrels["user_id"].tolist(), qrels["item_id"].tolist(), qrels["relevance"].tolist()):
        truth.setdefault(u, {})[i] = r
    lists: dict = {}
    for u, i, s in zip(run["user_id"].tolist(), run["item_id"].tolist(), run["score"].tolist()):
        lists.setdefault(u, []).append((s, i))
    sums = dict.fromkeys(METRICS, 0.0)
    for u, judged in truth.items():
        ranked = [judged.get(i, 0) for _, i in sorted(lists.get(u, []), key=lambda t: -t[0])]
        n_rel = sum(1 for r in judged.values() if r >= 1)
        ideal = sorted(judged.values(), reverse=True)
        dcg = sum(r / math.log2(k + 2) for k, r in enumerate(ranked[:10]))
        idcg = sum(r / math.log2(k + 2) for k, r in enumerate(ideal[:10]))
        hits, ap = 0, 0.0
        for k, r in enumerate(ranked[:100]):
            if r >= 1:
                hits += 1
                ap += hits / (k + 1)
        first = next((k for k, r in enumerate(ranked[:10]) if r >= 1), None)
        sums["ndcg@10"] += dcg / idcg
        sums["map@100"] += ap / n_rel
        sums["mrr@10"] += 0.0 if first is None else 1.0 / (first + 1)
        sums["precision@10"] += sum(1 for r in ranked[:10] if r >= 1) / 10
        sums["recall@100"] += sum(1 for r in ranked[:100] if r >= 1) / n_rel
    return {m: v / len(truth) for m, v in sums.items()}


@pytest.fixture(scope="module")
def ds():
    return datagen.generate(200, seed=3)


def test_generator_is_deterministic_and_has_the_documented_shape(ds):
    again = datagen.generate(200, seed=3)
    assert ds.run.equals(again.run) and ds.qrels.equals(again.qrels)
    assert not ds.run.equals(datagen.generate(200, seed=4).run)
    assert len(ds.run) == ds.n_rows == 200 * 100
    assert str(ds.run["user_id"].dtype) == "str" and str(ds.run["item_id"].dtype) == "str"
    per_user_items = ds.run.groupby("user_id")["item_id"].nunique()
    assert (per_user_items == 100).all()
    n_rel = ds.qrels.groupby("user_id").size()
    assert len(n_rel) == 200 and n_rel.min() >= 1 and n_rel.max() <= 20
    assert set(ds.qrels["relevance"].unique()) == {1, 2, 3}
    joined = ds.run.merge(ds.qrels, on=["user_id", "item_id"], how="left")["relevance"].fillna(0)
    np.testing.assert_array_equal(joined.to_numpy(), ds.row_relevance)
    retrieved = int((ds.row_relevance > 0).sum())
    assert 0 < retrieved < len(ds.qrels)  # some relevant items are not retrieved
    assert not ds.run.duplicated(["user_id", "score"]).any()  # continuous scores, no ties
    assert ((ds.run["score"] >= 0) & (ds.run["score"] < 1)).all()
    # exact in float32, so trec_eval (C float scores) sees the same order
    np.testing.assert_array_equal(ds.scores.astype(np.float32).astype(np.float64), ds.scores)
    np.testing.assert_array_equal(np.diff(ds.qrel_offsets), n_rel.to_numpy())


def test_ties_and_integer_ids():
    tied = datagen.generate(50, ties=True, id_type="int")
    assert tied.run["user_id"].dtype == np.int64 and tied.qrels["item_id"].dtype == np.int64
    assert tied.run.duplicated(["user_id", "score"]).mean() > 0.5
    assert tied.run["score"].nunique() <= datagen.TIE_LEVELS


def test_floor_matches_plain_python_reference(ds):
    expected = reference_means(ds.run, ds.qrels)
    got = floor.means(ds)
    for m in METRICS:
        assert got[m] == pytest.approx(expected[m], abs=1e-12), m
    one_thread = floor.per_user(ds.offsets, ds.scores, ds.row_relevance, ds.qrel_offsets, ds.qrel_relevance,
                                threads=1)
    np.testing.assert_array_equal(one_thread.mean(axis=1), [got[m] for m in METRICS])


@pytest.mark.parametrize("id_type", ["str", "int"])
def test_metrics_core_matches_reference(id_type):
    mc = pytest.importorskip("metrics_core")
    d = datagen.generate(200, seed=5, id_type=id_type)
    expected = reference_means(d.run, d.qrels)
    summary = mc.evaluate(mc.prepare(d.run, d.qrels), metrics=METRICS).summary
    for m in METRICS:
        assert summary[m] == pytest.approx(expected[m], abs=1e-9), m


def test_agreement_flags_a_difference():
    base = {"label": "a", "means": dict.fromkeys(METRICS, 0.5)}
    same = {"label": "b", "means": dict.fromkeys(METRICS, 0.5 + 1e-12)}
    off = {"label": "c", "means": {**dict.fromkeys(METRICS, 0.5), "mrr@10": 0.5 + 1e-6}}
    assert report.agreement([base, same], METRICS)[0]
    ok, text = report.agreement([base, same, off], METRICS)
    assert not ok and "DISAGREE" in text


@pytest.mark.long  # the whole harness: each tool in a worker process that loads the package and its kernels
def test_runner_at_200_users_metrics_core_and_floor_agree(capsys):
    pytest.importorskip("metrics_core")
    status = run_bench.main(["--users", "200", "--tools", "metrics_core,floor", "--repeats", "1"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "max |difference| vs metrics_core: floor" in out and "-> agree" in out
    assert "| metrics_core | end to end |" in out and "| floor | per-user loop |" in out


@pytest.mark.spark
def test_spark_mllib_bench_agrees_with_ranking_evaluator_at_200_users(capsys, tmp_path):
    """metrics_core's Spark engine (preset spark_mllib) against MLlib's RankingEvaluator on the same
    session: the five means agree to 1e-9 (the harness exits 1 otherwise); no time is asserted."""
    pytest.importorskip("pyspark", reason="pip install 'metrics-core[spark]'")
    from benchmarks import spark_mllib_bench

    status = spark_mllib_bench.main(["--users", "200", "--repeats", "0", "--master", "local[1]",
                                     "--buckets", "2", "--dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "largest difference" in out and ": agree (tolerance 1e-09)" in out
    assert "metrics_core route: key ranges" in out  # datagen's Parquet is in user order: no shuffle
    for name, metric in spark_mllib_bench.PAIRS.items():
        line = next(x for x in out.splitlines() if x.split()[:1] == [name])
        mllib_value, mc_value = float(line.split()[1]), float(line.split()[3])
        assert line.split()[2] == metric and abs(mllib_value - mc_value) <= 1e-9 and 0 < mc_value < 1, line
    assert "first calls: MLlib" in out


def test_spark_mllib_bench_flags_a_difference():
    from benchmarks import spark_mllib_bench

    same = dict.fromkeys(spark_mllib_bench.PAIRS, 0.5)
    off = {**same, "recallAtK": 0.5 + 1e-6}
    assert spark_mllib_bench.largest_difference(same, same) == 0.0
    assert spark_mllib_bench.largest_difference(same, off) == pytest.approx(1e-6)


@pytest.mark.long  # the CLI and a script on Parquet and CSV files, in subprocesses: 83 s in a full run
def test_file_path_benchmark_cli_and_script_agree(tmp_path, capsys):
    """The CLI on Parquet and CSV files gives the means the pyarrow + mc.evaluate script gives
    (exit status 0 only when they agree), and both agree with the plain-Python reference."""
    from benchmarks import file_path

    assert file_path.main(["--users", "200", "--repeats", "1", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| parquet |" in out and "| csv |" in out
    ds = datagen.generate(200)
    expected = reference_means(ds.run, ds.qrels)
    for fmt in file_path.FORMATS:
        cli = file_path.commands(str(tmp_path / f"run.{fmt}"), str(tmp_path / f"qrels.{fmt}"))
        means = file_path.timed(cli["metrics-core evaluate (CLI)"], file_path.ROOT)[2]
        for m in METRICS:
            assert math.isclose(means[m], expected[m], rel_tol=0, abs_tol=1e-12), (fmt, m)


@pytest.mark.long  # a process that uploads three runs through the dashboard's whole upload path
def test_upload_profile_times_each_step_of_a_small_upload(tmp_path):
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "benchmarks.profile_upload", "--users", "200", "--items", "20",
                          "--idle", "0"], cwd=root, capture_output=True, text=True, timeout=900,
                         env={**__import__("os").environ, "METRICS_CORE_STORE_DIR": str(tmp_path / "store")})
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [ln for ln in out.stdout.splitlines() if "CPU" in ln]
    steps = [ln.split(":")[0] for ln in lines[:3]]
    assert steps == ["3 run files", "ground truth", "open Overview"]
    assert all(re.search(r"script CPU \d+\.\d\d s, process CPU \d+\.\d\d s$", ln) for ln in lines[:3])
    assert lines[3].startswith("whole upload") and len(lines) == 4


def test_the_browser_benchmark_reads_a_process_cpu_seconds():
    import os
    import time

    from benchmarks.dashboard_browser import process_cpu

    before = process_cpu(os.getpid())
    end = time.process_time() + 0.2
    while time.process_time() < end:  # 0.2 s of this process's CPU
        pass
    assert process_cpu(os.getpid()) - before >= 0.15  # clock ticks: 10 ms
    assert process_cpu(None) != process_cpu(None)  # no process: NaN


def test_path_profile_names_each_server_thread_job_by_the_kind_of_its_key():
    """benchmarks/profile_path.py --jobs: a job is reported under its cache key's first field, the
    comparison rows under their test, resamples and sign flips (read from the key the dashboard builds)."""
    from benchmarks.profile_path import JobClock
    from dashboard import comparisons

    key = comparisons._rows_key(("k1", "k2"), "ndcg@10", "base", "randomization", 0, 10_000, ("all", (("k", 10),)))
    assert JobClock.kind(key) == "compare randomization (resamples 0, sign flips 10000)"
    assert JobClock.kind("segments-all|('k1',)|x") == "segments-all"
    clock = JobClock()
    clock.cpu, clock.count = {"overlap": 1.5, "segments": 0.5}, {"overlap": 3, "segments": 2}
    lines = clock.report().splitlines()
    assert lines[1].split() == ["overlap", "3", "1.50"] and lines[-1].split()[-2:] == ["5", "2.00"]
