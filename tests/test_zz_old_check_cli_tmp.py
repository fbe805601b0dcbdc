"""`metrics-core check` as a CI job runs it: exit codes of real processes, one line per condition,
JUnit XML read back by a JUnit library, JSON for machines."""

from __future__ import annotations

import _deadlines as deadlines
import json
import subprocess
import sys
from pathlib import Path

import pytest
from _gate_data import write_runs
from junitparser import Failure, JUnitXml

REPO = Path(__file__).resolve().parents[1]
CONDITIONS = ["ndcg@10 >= 0.30", "ndcg@10 not worse than baseline by more than 1%", "coverage@10 >= 0.5"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    return write_runs(tmp_path_factory.mktemp("check"))


def check(files: Path, run: str, *extra: str, conditions=CONDITIONS):
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "check", "--qrels", str(files / "qrels.parquet"),
                           "--run", str(files / f"{run}.parquet"), "--baseline", str(files / "baseline.parquet"),
                           "-q", *extra, *conditions], capture_output=True, text=True, cwd=REPO, timeout=deadlines.SUBPROCESS)
    return proc.returncode, proc.stdout, proc.stderr


def test_noise_passes_with_exit_0(files):
    code, out, err = check(files, "noise")
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == len(CONDITIONS) and all(line.startswith("PASS ") for line in lines)
    assert lines[0].startswith("PASS ndcg@10 >= 0.30: ")


def test_real_drop_fails_with_exit_1(files, tmp_path):
    junit = tmp_path / "check.xml"
    code, out, err = check(files, "drop", "--junit", str(junit))
    assert code == 1, err
    lines = out.splitlines()
    assert [line.split(" ")[0] for line in lines] == ["PASS", "FAIL", "PASS"]
    assert lines[1].startswith("FAIL ndcg@10 not worse than baseline by more than 1%: ")
    assert "one-sided paired t-test" in lines[1] and "holm-adjusted" in lines[1]

    xml = JUnitXml.fromfile(str(junit))
    suites = list(xml)
    assert len(suites) == 1 and suites[0].tests == 3 and suites[0].failures == 1
    cases = list(suites[0])
    assert [c.name for c in cases] == CONDITIONS
    assert all(c.classname == "metrics-core.check.drop" for c in cases)
    assert [c.is_passed for c in cases] == [True, False, True]
    failure = [r for r in cases[1].result if isinstance(r, Failure)][0]
    assert failure.message == lines[1]
    assert cases[0].system_out == lines[0]


def test_json_for_machines(files):
    code, out, _ = check(files, "drop", "--json", "--test", "wilcoxon", "--correction", "bh")
    assert code == 1
    doc = json.loads(out)
    assert doc["passed"] is False
    assert doc["settings"] | {"seed": 0} == {"test": "wilcoxon", "correction": "bh", "family": "analysis",
                                             "unit": "users", "alpha": 0.05,
                                             "baseline": None, "n_permutations": 10000, "seed": 0}
    rows = doc["conditions"]
    assert [r["condition"] for r in rows] == CONDITIONS and [r["passed"] for r in rows] == [True, False, True]
    base = rows[1]
    assert base["kind"] == "baseline" and base["model"] == "drop" and base["n"] > 300
    assert base["diff"] < 0 and base["p_adjusted"] < 0.05 and base["margin"] == pytest.approx(0.01 * base["baseline_value"])
    assert rows[0]["kind"] == "threshold" and rows[0]["threshold"] == 0.30 and rows[0]["p_value"] is None


def test_same_run_as_baseline_passes(files):
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "check", "--qrels", str(files / "qrels.parquet"),
                           "--run", str(files / "baseline.parquet"), "--baseline", str(files / "baseline.parquet"),
                           "-q", "ndcg@10 not worse than baseline"], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("PASS ndcg@10 not worse than baseline: ") and "(+0.00%, no margin)" in proc.stdout


@pytest.mark.parametrize("conditions, message", [
    (["ndcg@10 >> 0.3"], "error: condition 'ndcg@10 >> 0.3': cannot read it"),
    (["ndcg@10 >= 0.3", "auc not worse than baseline"], "error: condition 'auc not worse than baseline': auc has no"),
    (["frobnicate@3 >= 1"], "error: condition 'frobnicate@3 >= 1': unknown metric"),
])
def test_bad_conditions_exit_2_with_one_line(files, conditions, message):
    code, out, err = check(files, "noise", conditions=conditions)
    assert code == 2 and out == ""
    assert err.startswith(message) and err.count("\n") == 1


def test_baseline_condition_without_baseline_and_bad_files(files, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "check", "--qrels", str(files / "qrels.parquet"),
                           "--run", str(files / "noise.parquet"), "ndcg@10 not worse than baseline"],
                          capture_output=True, text=True, cwd=REPO, timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 2
    assert proc.stderr == "error: condition 'ndcg@10 not worse than baseline' needs --baseline FILE\n"
    code, _, err = check(files, "missing")
    assert code == 2 and err.startswith("error: ") and "missing.parquet: no such file" in err
    code, _, err = check(files, "noise", "--junit", str(tmp_path / "no" / "dir" / "x.xml"))
    assert code == 2 and err.startswith("error: ") and "cannot write the JUnit file" in err


@pytest.fixture(scope="module")
def locales(tmp_path_factory) -> Path:
    """2,000 users in four locales; ``de_drop`` ranks the relevant items of the ``de`` users lower
    (about 16% of their ndcg@10), ``noise<k>`` are the baseline with tiny score noise."""
    import numpy as np
    import pandas as pd

    folder = tmp_path_factory.mktemp("locales")
    rng = np.random.default_rng(0)
    rows = [(f"u{u}", f"i{i}", rng.random()) for u in range(2000) for i in rng.choice(60, 20, replace=False)]
    run = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    qrels = run.sample(frac=0.2, random_state=0)[["user_id", "item_id"]].assign(relevance=1)
    joined = run.merge(qrels, how="left", on=["user_id", "item_id"]).fillna({"relevance": 0})
    locale = np.array(["en", "de", "fr", "es"])[joined["user_id"].str[1:].astype(int) % 4]
    runs = {"baseline": joined.assign(score=joined["score"] + 0.8 * joined["relevance"]),
            "de_drop": joined.assign(score=joined["score"] + np.where(locale == "de", 0.47, 0.8) * joined["relevance"])}
    for k in range(10):
        runs[f"noise{k}"] = runs["baseline"].assign(score=runs["baseline"]["score"] + np.random.default_rng(k)
                                                    .normal(0, 1e-3, len(joined)))
    for name, frame in runs.items():
        frame[["user_id", "item_id", "score"]].to_parquet(folder / f"{name}.parquet", index=False)
    qrels.to_parquet(folder / "qrels.parquet", index=False)
    users = pd.DataFrame({"user_id": [f"u{u}" for u in range(2000)],
                          "locale": np.array(["en", "de", "fr", "es"])[np.arange(2000) % 4]})
    users.to_csv(folder / "users.csv", index=False)
    return folder


SEGMENT = "ndcg@10 not worse than baseline by more than 5% in every locale"


def _segment_check(folder: Path, run: str, *extra: str):
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "check", "--qrels", str(folder / "qrels.parquet"),
                           "--run", str(folder / f"{run}.parquet"), "--baseline", str(folder / "baseline.parquet"),
                           "--user-attributes", str(folder / "users.csv"), "-q", *extra, SEGMENT,
                           "ndcg@10 not worse than baseline by more than 5%"],
                          capture_output=True, text=True, cwd=REPO, timeout=deadlines.SUBPROCESS)
    return proc.returncode, proc.stdout, proc.stderr


def test_a_segment_condition_fails_a_sixteen_percent_loss_in_one_locale(locales, tmp_path):
    import metrics_core as mc
    import pandas as pd

    qrels = pd.read_parquet(locales / "qrels.parquet")
    per_user = {n: mc.evaluate(pd.read_parquet(locales / f"{n}.parquet"), qrels, ["ndcg@10"]).per_user["ndcg@10"]
                for n in ("baseline", "de_drop")}
    de = [u for u in per_user["baseline"].index if int(u[1:]) % 4 == 1]
    loss = 1 - per_user["de_drop"][de].mean() / per_user["baseline"][de].mean()
    overall = 1 - per_user["de_drop"].mean() / per_user["baseline"].mean()
    assert 0.14 < loss < 0.18 and overall < 0.05  # the data: a 16% loss in de, within the margin overall

    junit = tmp_path / "check.xml"
    code, out, err = _segment_check(locales, "de_drop", "--junit", str(junit))
    assert code == 1, err
    lines = out.splitlines()
    failed = [line for line in lines if line.startswith("FAIL")]
    assert len(lines) == 5 and len(failed) == 1 and failed[0].startswith(f"FAIL {SEGMENT} [locale=de]: ")
    assert f"({-loss * 100:+.2f}%" in failed[0]
    assert lines[-1].startswith("PASS ndcg@10 not worse than baseline by more than 5%: ")

    suite = list(JUnitXml.fromfile(str(junit)))[0]
    cases = list(suite)
    assert suite.tests == 5 and suite.failures == 1
    assert sorted(c.name for c in cases if not c.is_passed) == [f"{SEGMENT} [locale=de]"]
    assert all(c.time > 0 for c in cases) and suite.time >= sum(c.time for c in cases)


@pytest.mark.parametrize("k", range(10))
def test_a_segment_condition_passes_noise(locales, k):
    code, out, err = _segment_check(locales, f"noise{k}")
    assert code == 0, (out, err)
    assert len(out.splitlines()) == 5


def test_a_segment_condition_without_attributes_is_one_line(locales):
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "check", "--qrels", str(locales / "qrels.parquet"),
                           "--run", str(locales / "noise0.parquet"), "--baseline", str(locales / "baseline.parquet"),
                           "ndcg@10 >= 0.1 in every country"], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "needs --user-attributes FILE" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "metrics_core", "check", "--qrels", str(locales / "qrels.parquet"),
                           "--run", str(locales / "noise0.parquet"), "--user-attributes", str(locales / "users.csv"),
                           "ndcg@10 >= 0.1 in every country"], capture_output=True, text=True, cwd=REPO,
                          timeout=deadlines.SUBPROCESS)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "users.csv: no column 'country'" in proc.stderr and "locale" in proc.stderr
