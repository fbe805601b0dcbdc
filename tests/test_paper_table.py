"""Tukey's HSD and ranx's report of a comparison, against statsmodels and ranx.

* ``stats.tukey_hsd`` against statsmodels' ``pairwise_tukeyhsd`` (its own studentized range code).
* ``mc.compare(..., test="tukey")`` and ``test="t"`` (no correction) against ``ranx.compare`` with
  ``stat_test="tukey"`` / ``"student"`` on generated TREC runs (graded qrels, tied scores, a query one
  run lacks): the p-values, the superscript letters and the values of ranx's report.
* ``to_latex()`` against ranx's ``Report.to_latex()``: the same rows cell by cell (value, bold, letters,
  invisible letters), and user strings escaped; ``to_markdown()`` and the command line's
  ``--format latex|markdown``.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import metrics_core as mc
from metrics_core.analysis import stats
from metrics_core.cli import main
from metrics_core.analysis.paper_table import Comparison, paper_table

TOL = 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_tukey_hsd_matches_statsmodels(seed):
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    rng = np.random.default_rng(seed)
    groups = [rng.normal(loc, 1.0, size=int(rng.integers(20, 60))) for loc in rng.uniform(0, 0.8, 4)]
    q, p = stats.tukey_hsd(groups)
    names = np.concatenate([[f"m{i}"] * len(g) for i, g in enumerate(groups)])
    result = pairwise_tukeyhsd(np.concatenate(groups), names)
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]  # statsmodels' order
    for (i, j), p_ref, diff, se in zip(pairs, result.pvalues, result.meandiffs, result.std_pairs):
        assert p[i, j] == pytest.approx(p_ref, abs=1e-6)
        assert p[j, i] == p[i, j]
        assert q[i, j] == pytest.approx(abs(diff) / se, rel=1e-9)
    assert (np.diag(p) == 1).all()


def make_runs(seed: int, n_queries: int = 60):
    """(qrels, {name: run}): graded qrels; four runs of rising quality with tied scores; run ``c`` lacks
    one query."""
    rng = np.random.default_rng(seed)
    qrels = pd.DataFrame([(f"q{u}", f"d{d}", int(rng.integers(0, 3))) for u in range(n_queries)
                          for d in rng.choice(40, 10, replace=False)], columns=["user_id", "item_id", "relevance"])
    rel = qrels.set_index(["user_id", "item_id"])["relevance"]
    runs = {}
    for name, signal in zip(["a_bm25", "b", "c", "d"], [0.0, 0.4, 0.5, 1.2]):
        rows = []
        for u in range(n_queries):
            if name == "c" and u == 3:
                continue
            for d in rng.choice(40, 15, replace=False):
                score = round(float(rng.normal() + signal * rel.get((f"q{u}", f"d{d}"), 0)), 1)
                rows.append((f"q{u}", f"d{d}", score))
        runs[name] = pd.DataFrame(rows, columns=["user_id", "item_id", "score"])
    return qrels, runs


def _ranx(qrels, runs, metrics, stat_test):
    from ranx import Qrels, Run, compare

    q, r = {}, {}
    for u, d, rel in qrels.itertuples(index=False):
        q.setdefault(u, {})[d] = int(rel)
    ranx_runs = []
    for name, run in runs.items():
        scores = {}
        for u, d, s in run.itertuples(index=False):
            scores.setdefault(u, {})[d] = float(s)
        ranx_runs.append(Run(scores, name=name))
    return compare(Qrels(q), ranx_runs, metrics=metrics, stat_test=stat_test, max_p=0.05, make_comparable=True,
                   rounding_digits=4)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("test, stat_test", [("tukey", "tukey"), ("t", "student")])
def test_compare_report_matches_ranx(seed, test, stat_test):
    qrels, runs = make_runs(seed)
    metrics = ["ndcg@10", "map@10", "precision@5"]
    report = _ranx(qrels, runs, metrics, stat_test)
    evaluations = {name: mc.evaluate(run, qrels, metrics=metrics, preset="ranx") for name, run in runs.items()}
    ours = mc.compare(evaluations, test=test, correction="none", alpha=0.05, n_resamples=0, n_permutations=10)
    assert isinstance(ours, Comparison)
    table = paper_table(ours)
    for row in ours.itertuples(index=False):
        assert row.p_value == pytest.approx(report.comparisons[row.baseline, row.model][row.metric]["p_value"],
                                            abs=1e-9)
    for model in runs:
        for metric in metrics:
            assert table.values[model][metric] == pytest.approx(report.results[model][metric], abs=TOL)
            assert table.beats.get((model, metric), "") == report.get_superscript_for_latex(model, metric)
    assert any(table.beats.values())  # the data has significant differences


def _cells(latex: str) -> list[str]:
    """The cells of the table's body (between \\midrule and \\bottomrule), without empty phantoms."""
    body = latex.split("\\midrule")[1].split("\\bottomrule")[0].replace("\\hphantom{}", "")
    return [c.strip() for c in re.split(r"&|\\\\", body) if c.strip()]


def test_latex_rows_are_ranx_rows():
    qrels, runs = make_runs(5)
    metrics = ["ndcg@10", "map@10"]
    report = _ranx(qrels, runs, metrics, "student")
    evaluations = {name: mc.evaluate(run, qrels, metrics=metrics, preset="ranx") for name, run in runs.items()}
    ours = mc.compare(evaluations, test="t", correction="none", n_resamples=0)
    latex = ours.to_latex(digits=4)
    assert _cells(latex) == _cells(report.to_latex())
    assert latex.count("\\begin{tabular}{c|l|c|c}") == 1 and latex.rstrip().endswith("\\end{table*}")
    assert "paired t-test, no correction over 12 comparisons, $p < 0.05$" in latex


def test_user_strings_are_escaped():
    qrels, runs = make_runs(1, n_queries=30)
    hostile = {"a_b&c%": runs["a_bm25"], "$x^2$ {y}": runs["d"], "<b>|*z*": runs["b"]}
    evaluations = {name: mc.evaluate(run, qrels, metrics=["ndcg@10"]) for name, run in hostile.items()}
    ours = mc.compare(evaluations, n_resamples=0)
    latex = ours.to_latex()
    assert "a\\_b\\&c\\%" in latex and "\\$x\\textasciicircum{}2\\$ \\{y\\}" in latex
    markdown = ours.to_markdown()
    assert "\\<b\\>\\|\\*z\\*" in markdown and "a\\_b&c%" in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert all(line.count(" | ") == rows[0].count(" | ") for line in rows)  # no cell split by a name's pipe


def test_markdown_bold_and_letters():
    qrels, runs = make_runs(2)
    evaluations = {name: mc.evaluate(run, qrels, metrics=["ndcg@10"]) for name, run in runs.items()}
    ours = mc.compare(evaluations, baseline="a_bm25", n_resamples=0)
    table = paper_table(ours)
    markdown = ours.to_markdown()
    best = table.best["ndcg@10"]
    for i, model in enumerate(table.models):
        line = next(x for x in markdown.splitlines() if x.startswith(f"| {'abcd'[i]} |"))
        assert ("**" in line) == (model in best)
        marks = table.beats.get((model, "ndcg@10"), "")
        assert (f"<sup>{marks}</sup>" in line) == bool(marks)
    # with a baseline only the baseline's pairs are tested: a letter is the baseline's or is on it
    for (model, _), marks in table.beats.items():
        assert model == "a_bm25" or marks == "a"
    # a derived frame is a plain DataFrame with pandas' own to_markdown
    assert type(ours.head()) is pd.DataFrame


@pytest.mark.parametrize("fmt", ["latex", "markdown"])
def test_cli_compare_format(tmp_path, capsys, fmt):
    qrels, runs = make_runs(3, n_queries=30)
    qrels.to_csv(tmp_path / "qrels.csv", index=False)
    args = ["compare", "--qrels", str(tmp_path / "qrels.csv"), "--metrics", "ndcg@10,map@10", "--all-pairs",
            "--test", "tukey", "--format", fmt, "-q"]
    for name, run in runs.items():
        run.to_csv(tmp_path / f"{name}.csv", index=False)
        args += ["--run", str(tmp_path / f"{name}.csv")]
    assert main(args) == 0
    out = capsys.readouterr().out
    evaluations = {name: mc.evaluate(run, qrels, metrics=["ndcg@10", "map@10"]) for name, run in runs.items()}
    want = mc.compare(evaluations, test="tukey", n_resamples=0)
    assert out == (want.to_latex() if fmt == "latex" else want.to_markdown())
