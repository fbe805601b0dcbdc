"""`metrics-core compare` and `metrics-core report` on small TREC files."""

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sst

import metrics_core as mc
from metrics_core.cli import main

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    users, items = 40, 12
    rel = (rng.random((users, items)) < 0.3).astype(int)
    rel[:, 0] = 1  # every user has a relevant item
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{u} 0 d{i} {rel[u, i]}\n" for u in range(users) for i in range(items)))
    scores = {"random": rng.random((users, items)), "good": rel * 0.7 + rng.random((users, items)),
              "near": None}
    scores["near"] = scores["random"] + 1e-3 * rng.random((users, items))
    paths = {}
    for name, s in scores.items():
        p = tmp_path / f"{name}.trec"
        p.write_text("".join(f"q{u} Q0 d{i} 0 {s[u, i]:.6f} {name}\n" for u in range(users) for i in range(items)))
        paths[name] = p
    frames = {n: pd.DataFrame([(f"q{u}", f"d{i}", float(f"{s[u, i]:.6f}")) for u in range(users) for i in range(items)],
                              columns=["user_id", "item_id", "score"]) for n, s in scores.items()}
    qdf = pd.DataFrame([(f"q{u}", f"d{i}", rel[u, i]) for u in range(users) for i in range(items)],
                       columns=["user_id", "item_id", "relevance"])
    return tmp_path, qrels, paths, frames, qdf


def test_compare_json_matches_scipy(files, capsys):
    _, qrels, paths, frames, qdf = files
    rc = main(["compare", "--qrels", str(qrels), "--run", str(paths["random"]), "--run", str(paths["good"]),
               "--run", str(paths["near"]), "--metrics", "ndcg@5,map", "--json", "-q"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"models", "comparisons", "settings", "population", "diagnostics"}
    ref = {n: mc.evaluate(frames[n], qdf, metrics=["ndcg@5", "map"]) for n in frames}
    assert doc["models"]["good"]["ndcg@5"] == pytest.approx(ref["good"].summary["ndcg@5"])
    rows = {(r["metric"], r["model"]): r for r in doc["comparisons"]}
    assert set(rows) == {("ndcg@5", "good"), ("ndcg@5", "near"), ("map", "good"), ("map", "near")}
    r = rows[("map", "good")]
    a = ref["random"].per_user["map"]
    b = ref["good"].per_user["map"].loc[a.index]
    assert r["baseline"] == "random" and r["n"] == len(a) == 40
    assert r["diff"] == pytest.approx(b.mean() - a.mean())
    pvals = [sst.ttest_rel(ref[m].per_user[k].loc[a.index], ref["random"].per_user[k]).pvalue
             for k, m in [("ndcg@5", "good"), ("ndcg@5", "near"), ("map", "good"), ("map", "near")]]
    assert r["p_value"] == pytest.approx(pvals[2])
    # Holm over the 4 rows by hand
    order = np.argsort(pvals)
    holm = np.maximum.accumulate(np.array(pvals)[order] * (4 - np.arange(4)))
    expected = dict(zip(order, np.minimum(holm, 1)))
    assert r["p_adjusted"] == pytest.approx(expected[2])
    assert r["significant"] is True
    assert rows[("map", "near")]["significant"] is False


def test_compare_table_marks_significance(files, capsys):
    _, qrels, paths, _, _ = files
    rc = main(["compare", "--qrels", str(qrels), "--run", str(paths["random"]), "--run", str(paths["good"]),
               "--metrics", "ndcg@5", "--test", "wilcoxon", "--correction", "bh", "-q"])
    out = capsys.readouterr().out
    assert rc == 0
    lines = out.splitlines()
    good = next(line for line in lines if line.startswith("b  good"))
    assert "ᵃ" in good or "^a" in good
    rnd = next(line for line in lines if line.startswith("a  random"))
    assert "ᵇ" not in rnd and "^b" not in rnd
    assert "Wilcoxon" in out and "Benjamini-Hochberg" in out
    assert any(line.startswith("ndcg@5") and line.rstrip().endswith("*") for line in lines)


def test_compare_csv_all_pairs(files, capsys):
    _, qrels, paths, _, _ = files
    rc = main(["compare", "--qrels", str(qrels), "--run", str(paths["random"]), "--run", str(paths["good"]),
               "--run", str(paths["near"]), "--metrics", "recall@3", "--all-pairs", "--csv", "-q",
               "--test", "randomization", "--permutations", "2000"])
    assert rc == 0
    from io import StringIO
    df = pd.read_csv(StringIO(capsys.readouterr().out))
    assert list(zip(df["baseline"], df["model"])) == [("random", "good"), ("random", "near"), ("good", "near")]
    assert (df["wins"] + df["ties"] + df["losses"] == df["n"]).all()


@pytest.mark.parametrize("argv, message", [
    (["--metrics", "ndcg@5"], "at least two runs"),
    (["--metrics", "auc", "TWO"], "per-user values"),
    (["--metrics", "ndcg@5", "TWO", "--baseline", "nope"], "--baseline 'nope'"),
    (["--metrics", "ndcg@5", "TWO", "--alpha", "2"], "--alpha"),
])
def test_compare_errors(files, capsys, argv, message):
    _, qrels, paths, _, _ = files
    extra = ["--run", str(paths["good"])] if "TWO" in argv else []
    argv = [a for a in argv if a != "TWO"]
    rc = main(["compare", "--qrels", str(qrels), "--run", str(paths["random"]), *extra, *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if line.startswith("error:")]) == 1


def test_report_command_escapes_names(files, capsys):
    tmp, qrels, paths, _, _ = files
    evil = tmp / f"{XSS}.trec"
    evil.write_bytes(paths["random"].read_bytes())
    out = tmp / "report.html"
    rc = main(["report", "--qrels", str(qrels), "--run", str(evil), "--run", str(paths["good"]),
               "--metrics", "ndcg@5,auc", "--output", str(out), "--title", "<b>t</b>", "-q"])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert XSS not in text and "<b>t</b>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "id='comparison'" in text


def test_report_bad_output(files, capsys):
    tmp, qrels, paths, _, _ = files
    rc = main(["report", "--qrels", str(qrels), "--run", str(paths["good"]), "--metrics", "ndcg@5",
               "--output", str(tmp)])
    assert rc == 2 and "is a directory" in capsys.readouterr().err


def test_report_without_metrics_uses_the_default_set(files, capsys):
    tmp, qrels, paths, frames, qdf = files
    out = tmp / "report.html"
    rc = main(["report", "--qrels", str(qrels), "--run", str(paths["random"]), "--run", str(paths["good"]),
               "--output", str(out), "-q"])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    from metrics_core.commands.report import DEFAULT_METRICS

    assert len(DEFAULT_METRICS) >= 8
    for label in DEFAULT_METRICS:
        assert label in text, label
    # the printed value of one metric is the library's value for the same file
    ndcg = mc.evaluate(frames["good"], qdf, metrics=["ndcg@10"]).summary["ndcg@10"]
    assert f"{ndcg:.4f}" in text


def test_report_names_inputs_by_file_name_only(files, capsys):
    tmp, qrels, paths, _, _ = files
    out = tmp / "report.html"
    rc = main(["report", "--qrels", str(qrels), "--run", str(paths["good"]), "--metrics", "ndcg@5",
               "--output", str(out), "-q"])
    assert rc == 0, capsys.readouterr().err
    text = out.read_text(encoding="utf-8")
    assert str(tmp) not in text
    assert "qrels.txt" in text and "good.trec" in text


def _attributes(tmp_path, users: int = 40):
    """country for the first users (one a formula-like text), nothing for the last three."""
    path = tmp_path / "users.csv"
    path.write_text("user_id,country,tier\n" + "".join(f"q{u},{['de', 'fr', '=1+1'][u % 3]},{u % 2}\n"
                                                        for u in range(users - 3)))
    return path


def test_compare_by_segment_json_matches_scipy_and_statsmodels(files, capsys):
    """Every segment row against scipy's t-test on the users selected by hand; Holm over all the
    segment rows by statsmodels."""
    from statsmodels.stats.multitest import multipletests

    tmp_path, qrels, paths, frames, qdf = files
    attrs = _attributes(tmp_path)
    rc = main(["compare", "--qrels", str(qrels), "--run", str(paths["random"]), "--run", str(paths["good"]),
               "--run", str(paths["near"]), "--metrics", "ndcg@5,map", "--user-attributes", str(attrs), "--json", "-q"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    rows = doc["segments"]
    ref = {n: mc.evaluate(frames[n], qdf, metrics=["ndcg@5", "map"]).per_user for n in frames}
    table = pd.read_csv(attrs, dtype=str).set_index("user_id")
    users = ref["random"].index
    want_p = []
    for r in rows:
        label = table[r["attribute"]].reindex(users).fillna("(missing)")
        ids = users[label.to_numpy() == r["segment"]]
        a, b = ref["random"].loc[ids, r["metric"]], ref[r["model"]].loc[ids, r["metric"]]
        assert r["baseline"] == "random" and r["n"] == len(ids)
        assert r["diff"] == pytest.approx(b.mean() - a.mean(), abs=1e-12)
        # no difference at all: p = 1 by the documented convention (scipy gives NaN there)
        want_p.append(1.0 if (b.to_numpy() == a.to_numpy()).all() else sst.ttest_rel(b, a).pvalue)
        assert r["p_value"] == pytest.approx(want_p[-1], rel=1e-9)
    assert {(r["attribute"], r["segment"]) for r in rows} == {
        ("country", "de"), ("country", "fr"), ("country", "=1+1"), ("country", "(missing)"),
        ("tier", "0"), ("tier", "1"), ("tier", "(missing)")}
    assert len(rows) == 7 * 2 * 2  # segments x metrics x challengers
    holm = multipletests(want_p, method="holm")[1]
    assert [r["p_adjusted"] for r in rows] == pytest.approx(list(holm), rel=1e-9)
    # the overall table is corrected apart: the same as without --user-attributes
    assert len(doc["comparisons"]) == 4


def test_compare_by_segment_csv_table_and_errors(files, capsys):
    tmp_path, qrels, paths, _, _ = files
    attrs = _attributes(tmp_path)
    base = ["compare", "--qrels", str(qrels), "--run", str(paths["random"]), "--run", str(paths["good"]),
            "--metrics", "ndcg@5", "-q"]
    assert main(base + ["--user-attributes", str(attrs), "--by", "tier", "--csv", "--spreadsheet-safe"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("attribute,segment,metric,baseline,model,n,")
    assert [line.split(",")[:2] for line in lines[1:]] == [["tier", "0"], ["tier", "1"], ["tier", "(missing)"]]
    assert main(base + ["--user-attributes", str(attrs), "--by", "country", "--csv", "--spreadsheet-safe"]) == 0
    assert "country,'=1+1," in capsys.readouterr().out  # a formula-like segment is neutralised
    assert main(base + ["--user-attributes", str(attrs)]) == 0
    out = capsys.readouterr().out
    assert "By segment (p-values adjusted over 7 tests: every segment of every user attribute" in out and "(missing)" in out
    assert main(base + ["--by", "tier"]) == 2
    err = capsys.readouterr().err
    assert err == "error: --by needs --user-attributes FILE (user_id and one column per attribute)\n"
    assert main(base + ["--user-attributes", str(attrs), "--by", "age"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {attrs}: no user attribute 'age'; the attributes are: country, tier\n"
    only_ids = tmp_path / "ids.csv"
    only_ids.write_text("user_id\nq1\n")
    assert main(base + ["--user-attributes", str(only_ids)]) == 2
    assert "no attribute column besides user_id" in capsys.readouterr().err
