"""``metrics-core ope``: the table, JSON, per-context file and one-line errors (values checked against
plain formulas in tests/test_ope.py; here the command's wiring)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from metrics_core.cli import main


def _files(tmp_path):
    rng = np.random.default_rng(0)
    users, items = [f"u{i}" for i in range(20)], ["12", "13.0", "x", "=HYPERLINK(1)"]
    u, a = rng.integers(0, 20, 600), rng.integers(0, 4, 600)
    log = pd.DataFrame({"user": [users[i] for i in u], "item": [items[j] for j in a],
                        "click": (rng.random(600) < 0.2).astype(int), "propensity": 0.25})
    log.to_csv(tmp_path / "log.csv", index=False)
    # the run writes "13" where the log writes "13.0": whole-number ids are one id, as everywhere
    run = pd.DataFrame([(us, it.replace("13.0", "13"), j) for us in users[1:] for j, it in enumerate(items)],
                       columns=["user", "item", "score"])
    run.to_csv(tmp_path / "run.csv", index=False)
    return log, run


def test_ope_table_json_and_per_context(tmp_path, capsys):
    log, run = _files(tmp_path)
    code = main(["ope", "--log", str(tmp_path / "log.csv"), "--run", str(tmp_path / "run.csv"), "--policy", "top1",
                 "--estimators", "ips,snips", "--bootstrap", "50", "--per-context", str(tmp_path / "ctx.csv"),
                 "--spreadsheet-safe"])
    out = capsys.readouterr().out
    assert code == 0
    assert "logging policy: " in out and "ips" in out and "snips" in out
    assert "1 of 20 logged contexts have no list in the run" in out
    ctx = pd.read_csv(tmp_path / "ctx.csv", dtype={"user_id": str})
    # top1 picks the last item ("=HYPERLINK(1)", score 3): IPS = mean(4 r 1[a = top]) over the covered users
    top = (log["item"] == "=HYPERLINK(1)") & (log["user"] != "u0")
    assert abs(ctx["ips"].sum() - 4 * (log["click"] * top).mean()) < 1e-12
    assert ctx["user_id"].nunique() == 20
    code = main(["ope", "--log", str(tmp_path / "log.csv"), "--run", str(tmp_path / "run.csv"), "--policy", "top1",
                 "--estimators", "ips", "--bootstrap", "0", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["estimates"][0]["estimator"] == "ips"
    assert abs(doc["estimates"][0]["value"] - ctx["ips"].sum()) < 1e-12
    assert doc["settings"]["policy"] == "top1" and doc["estimates"][0]["low"] is None  # no bootstrap: null


def test_ope_bad_inputs_are_one_line(tmp_path, capsys):
    log, _ = _files(tmp_path)
    log.assign(propensity=1.5).to_csv(tmp_path / "bad.csv", index=False)
    code = main(["ope", "--log", str(tmp_path / "bad.csv"), "--run", str(tmp_path / "run.csv")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "line 2: propensity 1.5 is outside (0, 1]" in err
    log.drop(columns="propensity").to_csv(tmp_path / "nop.csv", index=False)
    code = main(["ope", "--log", str(tmp_path / "nop.csv"), "--run", str(tmp_path / "run.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "required propensity column missing" in err and "--log-columns" in err
    code = main(["ope", "--log", str(tmp_path / "log.csv"), "--run", str(tmp_path / "run.csv"), "--policy", "topk"])
    assert code == 2 and "needs k >= 1" in capsys.readouterr().err
