"""Which users an analysis counts (``users="all"`` / ``"served"``): library and command line
against recall@5 and paired t-tests computed here with pandas and scipy."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

import metrics_core as mc
from metrics_core.cli import main
from metrics_core.analysis.compare import compare, summary_table
from metrics_core.errors import MetricsError
from metrics_core.analysis.population import population

USERS, ITEMS, K = 60, 10, 5
#: users each model leaves out of its run (the other models serve everyone)
DROPPED = {"base": [], "cand": [f"u{i}" for i in range(0, 12)], "third": [f"u{i}" for i in range(8, 15)]}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    rel = (rng.random((USERS, ITEMS)) < 0.35).astype(int)
    rel[:, 3] = 1  # every user has a relevant item
    qrels = pd.DataFrame([(f"u{u}", f"i{i}", rel[u, i]) for u in range(USERS) for i in range(ITEMS)],
                         columns=["user_id", "item_id", "relevance"])
    runs = {}
    for name, boost in (("base", 0.0), ("cand", 0.6), ("third", 0.3)):
        scores = rel * boost + rng.random((USERS, ITEMS))
        rows = [(f"u{u}", f"i{i}", float(scores[u, i])) for u in range(USERS) for i in range(ITEMS)
                if f"u{u}" not in DROPPED[name]]
        runs[name] = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    return qrels, runs


def recall_at_k(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.Series:
    """recall@K per user of the ground truth, 0 for a user without a list (written here)."""
    top = run.sort_values(["user_id", "score"], ascending=[True, False]).groupby("user_id").head(K)
    judged = top.merge(qrels, on=["user_id", "item_id"], how="left").fillna({"relevance": 0})
    hits = judged.groupby("user_id")["relevance"].apply(lambda r: int((r >= 1).sum()))
    relevant = qrels[qrels["relevance"] >= 1].groupby("user_id").size()
    return (hits.reindex(relevant.index).fillna(0) / relevant).rename("recall")


def test_compare_pairs_over_the_chosen_users(data):
    qrels, runs = data
    evals = {n: mc.evaluate(r, qrels, metrics=[f"recall@{K}"]) for n, r in runs.items()}
    ref = {n: recall_at_k(r, qrels) for n, r in runs.items()}
    everyone = ref["base"].index
    served_all = everyone.difference(DROPPED["cand"] + DROPPED["third"])
    for users, ids in (("all", everyone), ("served", served_all)):
        table = compare(evals, baseline="base", metrics=[f"recall@{K}"], users=users, n_resamples=0)
        row = table[table["model"] == "cand"].iloc[0]
        a, b = ref["base"].loc[ids], ref["cand"].loc[ids]
        assert row["n"] == len(ids)
        assert row["baseline_mean"] == pytest.approx(a.mean())
        assert row["model_mean"] == pytest.approx(b.mean())
        assert row["p_value"] == pytest.approx(sst.ttest_rel(b, a).pvalue)
        pop = table.attrs["population"]
        assert pop.n == len(ids) and pop.n_evaluated == USERS
        assert pop.served("cand") == USERS - 12 and pop.served("third") == USERS - 7
    assert len(served_all) == USERS - 15
    assert table.attrs["users"].startswith(f"{USERS - 15} users (only those every model served, of {USERS}")
    assert "cand served 48; third served 53" in table.attrs["users"]


def test_summary_table_means_over_the_chosen_users(data):
    qrels, runs = data
    evals = {n: mc.evaluate(r, qrels, metrics=[f"recall@{K}", "auc"]) for n, r in runs.items()}
    ref = {n: recall_at_k(r, qrels) for n, r in runs.items()}
    served_all = ref["base"].index.difference(DROPPED["cand"] + DROPPED["third"])
    every = summary_table(evals, n_resamples=20).set_index(["model", "metric"])
    served = summary_table(evals, n_resamples=20, users="served").set_index(["model", "metric"])
    for name in runs:
        assert every.loc[(name, f"recall@{K}"), "value"] == pytest.approx(ref[name].mean())
        assert served.loc[(name, f"recall@{K}"), "value"] == pytest.approx(ref[name].loc[served_all].mean())
        assert served.loc[(name, f"recall@{K}"), "n"] == len(served_all)
        # AUC is over scored rows: the same under both settings
        assert served.loc[(name, "auc"), "value"] == every.loc[(name, "auc"), "value"]


def test_coverage_names_every_model_with_its_segments(data):
    qrels, runs = data
    evals = {n: mc.evaluate(r, qrels, metrics=[f"recall@{K}"]) for n, r in runs.items()}
    segments = pd.Series(["cold" if int(u[1:]) < 10 else "warm" for u in evals["base"].per_user.index],
                         index=evals["base"].per_user.index, name="tenure")
    lines = population(evals, "all").coverage(segments)
    assert lines == [f"cand did not serve 12 of the {USERS} evaluated users (tenure: cold 10, warm 2); "
                     "they score 0 for it.",
                     f"third did not serve 7 of the {USERS} evaluated users (tenure: warm 5, cold 2); "
                     "they score 0 for it."]
    assert population({"base": evals["base"]}, "served").coverage() == []


def test_bad_setting_and_frames_without_served_users_are_messages(data):
    qrels, runs = data
    evals = {n: mc.evaluate(r, qrels, metrics=[f"recall@{K}"]) for n, r in list(runs.items())[:2]}
    with pytest.raises(MetricsError, match="users must be one of all, served"):
        compare(evals, users="both")
    frames = {n: e.per_user for n, e in evals.items()}
    with pytest.raises(MetricsError, match="served="):
        compare(frames, users="served")
    served = {n: r["user_id"].unique() for n, r in list(runs.items())[:2]}
    table = compare(frames, users="served", served=served, n_resamples=0)
    assert table["n"].iloc[0] == USERS - 12


def _write(tmp_path, qrels, runs):
    paths = {}
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    for name, run in runs.items():
        run.to_csv(tmp_path / f"{name}.csv", index=False)
        paths[name] = str(tmp_path / f"{name}.csv")
    return str(tmp_path / "qrels.csv"), paths


@pytest.mark.parametrize("users", ["all", "served"])
def test_cli_compare_and_report_use_the_setting(data, tmp_path, capsys, users):
    qrels, runs = data
    qpath, paths = _write(tmp_path, qrels, runs)
    ref = {n: recall_at_k(r, qrels) for n, r in runs.items()}
    ids = ref["base"].index if users == "all" else ref["base"].index.difference(DROPPED["cand"] + DROPPED["third"])
    args = ["--qrels", qpath, *[a for p in paths.values() for a in ("--run", p)], "--metrics", f"recall@{K}",
            "--users", users]
    assert main(["compare", *args, "--json", "-q"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["settings"]["users"] == users
    assert doc["population"]["users_counted"] == len(ids)
    assert doc["population"]["served"] == {"base": USERS, "cand": USERS - 12, "third": USERS - 7}
    assert doc["models"]["cand"][f"recall@{K}"] == pytest.approx(ref["cand"].loc[ids].mean())
    row = next(r for r in doc["comparisons"] if r["model"] == "cand")
    assert row["n"] == len(ids)
    assert row["diff"] == pytest.approx(ref["cand"].loc[ids].mean() - ref["base"].loc[ids].mean())
    assert main(["compare", *args, "-q"]) == 0
    text = capsys.readouterr().out
    assert f"Users: {len(ids)} users" in text and "cand did not serve 12 of the 60 evaluated users" in text
    out = tmp_path / "report.html"
    assert main(["report", *args, "--output", str(out), "-q", "--bootstrap", "10"]) == 0
    page = out.read_text(encoding="utf-8")
    assert f"{len(ids)} users (" in page and "cand did not serve 12 of the 60 evaluated users" in page
    cell = f"{ref['cand'].loc[ids].mean():.4f}"
    assert cell in page


def test_cli_rejects_an_unknown_setting(data, tmp_path, capsys):
    qrels, runs = data
    qpath, paths = _write(tmp_path, qrels, runs)
    assert main(["compare", "--qrels", qpath, "--run", paths["base"], "--run", paths["cand"],
                 "--users", "some"]) == 2
    assert "argument --users: invalid choice: 'some' (choose from 'all', 'served')" in capsys.readouterr().err
